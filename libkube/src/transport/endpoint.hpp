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

/// Whether a NO_PROXY list exempts host:port: comma-separated hosts, domain
/// suffixes (".example.com" or "example.com" also match subdomains), IPs,
/// host:port, or "*". Case-insensitive.
bool no_proxy_matches(std::string_view no_proxy, const std::string& host, const std::string& port);

}  // namespace kube::detail
