#pragma once

// Internal: where the client connects, derived once from the settings: the
// server URL and the proxy rules (proxy-url, else HTTPS_PROXY/HTTP_PROXY
// with NO_PROXY, loopback never proxied).

#include <kube/detail/transport_params.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace kube::detail {

struct endpoint {
  bool tls = true;
  std::string host, port, base_path;  // base_path: a server URL's path prefix, no trailing '/'
  std::string verify_name;            // name the certificate must carry (tls-server-name or host)
  bool host_is_ip = false;
  std::optional<std::string> proxy_host, proxy_port, proxy_authorization;  // CONNECT proxy
};

/// Parses the server URL and decides the proxy. Throws kube::error
/// (invalid_config) naming the URL that cannot work.
endpoint make_endpoint(const transport_params& s);

/// Whether a NO_PROXY list exempts host:port, by Go's rules
/// (golang.org/x/net/http/httpproxy, which client-go uses): comma-separated
/// entries, case-insensitive; "*"; CIDR blocks ("10.96.0.0/12", "fd00::/8");
/// IPs ("2001:db8::1", "[2001:db8::1]:443", "10.0.0.1:6443"); names:
/// "example.com" matches it and its subdomains, ".example.com" and
/// "*.example.com" only its subdomains, each with an optional ":port". Names
/// never match a host that is an IP; non-ASCII names are compared as
/// written (Go converts them to punycode first).
bool no_proxy_matches(std::string_view no_proxy, const std::string& host, const std::string& port);

}  // namespace kube::detail
