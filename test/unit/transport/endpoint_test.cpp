// How the client decides where to connect: server URL parsing, proxy-url,
// HTTPS_PROXY/NO_PROXY (libkube/src/transport/endpoint.hpp).
#include "transport/endpoint.hpp"

#include <kube/exception.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>

using kube::detail::make_endpoint;
using kube::detail::transport_params;

namespace {
transport_params server(const std::string& url) {
  transport_params s;
  s.server = url;
  return s;
}
struct clean_proxy_env {
  clean_proxy_env() {
    for (const char* v : {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"})
      unsetenv(v);
  }
};
}  // namespace

TEST_CASE("server URLs give host, port, TLS and a path prefix", "[endpoint]") {
  clean_proxy_env env;
  auto e = make_endpoint(server("https://api.example.com:6443/prefix/"));
  CHECK(e.tls);
  CHECK(e.host == "api.example.com");
  CHECK(e.port == "6443");
  CHECK(e.base_path == "/prefix");
  CHECK(e.verify_name == "api.example.com");
  CHECK_FALSE(e.proxy_host);
  auto p = make_endpoint(server("http://10.1.2.3"));
  CHECK_FALSE(p.tls);
  CHECK(p.port == "80");
  CHECK(p.host_is_ip);
  auto v6 = make_endpoint(server("https://[::1]:8443"));
  CHECK(v6.host == "::1");
  CHECK(v6.host_is_ip);
}

TEST_CASE("a server that is not an http(s) URL is refused naming it", "[endpoint]") {
  clean_proxy_env env;
  try {
    (void)make_endpoint(server("ftp://x"));
    FAIL("expected kube::error");
  } catch (const kube::error& e) {
    CHECK(e.code() == kube::client_errc::invalid_config);
    CHECK(std::string(e.what()).find("ftp://x") != std::string::npos);
  }
}

TEST_CASE("proxy-url from the kubeconfig is used for CONNECT, credentials kept out of messages", "[endpoint][proxy]") {
  clean_proxy_env env;
  auto s = server("https://api.example.com");
  s.proxy_url = "http://user:s3cret@proxy.local:3128";
  auto e = make_endpoint(s);
  REQUIRE(e.proxy_host);
  CHECK(*e.proxy_host == "proxy.local");
  CHECK(*e.proxy_port == "3128");
  REQUIRE(e.proxy_authorization);
  CHECK(*e.proxy_authorization == "Basic dXNlcjpzM2NyZXQ=");
  s.proxy_url = "socks5://proxy.local:1080";
  CHECK_THROWS_AS(make_endpoint(s), kube::error);
}

TEST_CASE("HTTPS_PROXY applies unless NO_PROXY matches or the host is loopback", "[endpoint][proxy]") {
  clean_proxy_env env;
  setenv("HTTPS_PROXY", "http://corp-proxy:8080", 1);
  auto e = make_endpoint(server("https://api.example.com"));
  REQUIRE(e.proxy_host);
  CHECK(*e.proxy_host == "corp-proxy");
  CHECK_FALSE(make_endpoint(server("https://127.0.0.1:6443")).proxy_host);
  CHECK_FALSE(make_endpoint(server("https://localhost:6443")).proxy_host);
  CHECK_FALSE(make_endpoint(server("http://api.example.com")).proxy_host);  // HTTP_PROXY is for http://
  setenv("NO_PROXY", "other.org, .example.com", 1);
  CHECK_FALSE(make_endpoint(server("https://api.example.com")).proxy_host);
  CHECK(make_endpoint(server("https://notexample.com")).proxy_host);  // a suffix matches at a dot only
  setenv("NO_PROXY", "api.example.com:443", 1);
  CHECK_FALSE(make_endpoint(server("https://api.example.com")).proxy_host);
  CHECK(make_endpoint(server("https://api.example.com:6443")).proxy_host);
  setenv("NO_PROXY", "*", 1);
  CHECK_FALSE(make_endpoint(server("https://api.example.com")).proxy_host);
}

TEST_CASE("NO_PROXY entries: names, domain suffixes, host:port, star", "[endpoint][proxy]") {
  using kube::detail::no_proxy_matches;
  CHECK(no_proxy_matches("api.example.com", "api.example.com", "443"));
  CHECK(no_proxy_matches("example.com", "api.example.com", "443"));
  CHECK(no_proxy_matches(".example.com", "API.Example.com", "443"));
  CHECK_FALSE(no_proxy_matches("example.com", "badexample.com", "443"));
  CHECK(no_proxy_matches(" other.org , api.example.com:443", "api.example.com", "443"));
  CHECK_FALSE(no_proxy_matches("api.example.com:6443", "api.example.com", "443"));
  CHECK(no_proxy_matches("*", "anything", "1"));
  CHECK_FALSE(no_proxy_matches(",,", "api.example.com", "443"));
}

// Go's own cases (golang.org/x/net/http/httpproxy, TestUseProxy with its
// NO_PROXY list, and the NoProxy cases of TestProxyForURL), port 80 as
// there. Loopback and localhost are never proxied, which make_endpoint
// decides before NO_PROXY is read (tested above).
TEST_CASE("NO_PROXY follows Go's rules: CIDRs, IPv6 literals, ports, leading dots, wildcards", "[endpoint][proxy]") {
  using kube::detail::no_proxy_matches;
  const std::string go_list = "foobar.com, .barbaz.net, *.wildcard.io, 192.168.1.1, 192.168.1.2:81, 192.168.1.3:80, "
                              "10.0.0.0/30, 2001:db8::52:0:1, [2001:db8::52:0:2]:443, [2001:db8::52:0:3]:80, "
                              "2002:db8:a::45/64";
  struct row {
    const char* host;
    bool proxied;
  };
  const row rows[] = {
      {"::2", true},                        // not a loopback address
      {"192.168.1.1", false},               // matches exact IPv4
      {"192.168.1.2", true},                // ports do not match
      {"192.168.1.3", false},               // matches exact IPv4:port
      {"192.168.1.4", true},                // no match
      {"10.0.0.2", false},                  // matches IPv4/CIDR
      {"2001:db8::52:0:1", false},          // matches exact IPv6
      {"2001:db8::52:0:2", true},           // no match (port 443 only)
      {"2001:db8::52:0:3", false},          // matches exact [IPv6]:port
      {"2002:db8:a::123", false},           // matches IPv6/CIDR
      {"fe80::424b:c8be:1643:a1b6", true},  // no match
      {"barbaz.net", true},                 // does not match as .barbaz.net
      {"www.barbaz.net", false},            // does match as .barbaz.net
      {"foobar.com", false},                // does match as foobar.com
      {"www.foobar.com", false},            // match because NO_PROXY includes "foobar.com"
      {"foofoobar.com", true},              // not match as a part of foobar.com
      {"baz.com", true},                    // not match as a part of barbaz.com
      {"localhost.net", true},              // not match as suffix of address
      {"local.localhost", true},            // not match as prefix as address
      {"barbarbaz.net", true},              // not match, wrong domain
      {"wildcard.io", true},                // does not match as *.wildcard.io
      {"nested.wildcard.io", false},        // match as *.wildcard.io
      {"awildcard.io", true},               // not a match because of '*'
  };
  for (const auto& r : rows) {
    INFO(r.host);
    CHECK(no_proxy_matches(go_list, r.host, "80") == !r.proxied);
    CHECK(no_proxy_matches("*", r.host, "80"));  // TestAllNoProxy
  }
  // TestProxyForURL's NO_PROXY cases.
  CHECK(no_proxy_matches("example.com", "example.com", "80"));
  CHECK_FALSE(no_proxy_matches(".example.com", "example.com", "80"));
  CHECK_FALSE(no_proxy_matches("ample.com", "example.com", "80"));
  CHECK(no_proxy_matches("example.com", "foo.example.com", "80"));
  CHECK_FALSE(no_proxy_matches(".foo.com", "example.com", "80"));
  CHECK_FALSE(no_proxy_matches("example.com", "1000::%.example.com", "123"));  // a zone is not a name
  CHECK_FALSE(no_proxy_matches(":1", "example.com", "80"));                    // TestInvalidNoProxy
  // The case of the issue: a pod's usual NO_PROXY and the apiserver's service IP.
  CHECK(no_proxy_matches("localhost,127.0.0.1,10.96.0.0/12,.svc,.cluster.local", "10.96.0.1", "443"));
  CHECK(no_proxy_matches("10.0.0.0/8", "::ffff:10.1.2.3", "443"));  // an IPv4-mapped address is its IPv4
  CHECK_FALSE(no_proxy_matches("10.96.0.0/12", "10.112.0.1", "443"));
  CHECK_FALSE(no_proxy_matches("10.96.0.0/33, 10.96.0.0/x, 10.96.0.1/", "10.96.0.1", "443"));  // malformed: names
}

TEST_CASE("loopback and localhost are never proxied, whatever NO_PROXY says", "[endpoint][proxy]") {
  clean_proxy_env env;
  setenv("HTTPS_PROXY", "http://proxy.example:3128", 1);
  for (const char* url :
       {"https://localhost:6443", "https://127.0.0.1:6443", "https://127.0.0.2:6443", "https://[::1]:6443"}) {
    INFO(url);
    CHECK_FALSE(make_endpoint(server(url)).proxy_host);
  }
  CHECK(make_endpoint(server("https://[::2]:6443")).proxy_host);
  setenv("NO_PROXY", "10.96.0.0/12", 1);
  CHECK_FALSE(make_endpoint(server("https://10.96.0.1")).proxy_host);
  CHECK(make_endpoint(server("https://10.112.0.1")).proxy_host);
}
