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
