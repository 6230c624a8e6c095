#include "transport/endpoint.hpp"

#include "config/auth.hpp"

#include <kube/error.hpp>
#include <kube/exception.hpp>

#include <boost/asio/ip/address.hpp>
#include <boost/url/parse.hpp>

#include <cctype>
#include <cstdlib>

namespace kube::detail {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const char* env(const char* upper, const char* lower_name) {
  if (const char* v = std::getenv(upper); v && *v) return v;
  if (const char* v = std::getenv(lower_name); v && *v) return v;
  return nullptr;
}

bool is_loopback(const std::string& host) {
  boost::system::error_code ec;
  const auto addr = boost::asio::ip::make_address(host, ec);
  return host == "localhost" || (!ec && addr.is_loopback());
}

}  // namespace

bool no_proxy_matches(std::string_view no_proxy, const std::string& host, const std::string& port) {
  const std::string list(no_proxy);
  const std::string h = lower(host);
  std::size_t start = 0;
  while (start <= list.size()) {
    auto end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string entry = lower(list.substr(start, end - start));
    start = end + 1;
    entry.erase(0, entry.find_first_not_of(' '));
    entry.erase(entry.find_last_not_of(' ') + 1);
    if (entry.empty()) continue;
    if (entry == "*") return true;
    if (auto colon = entry.rfind(':'); colon != std::string::npos && entry.find(':') == colon) {
      if (entry.substr(colon + 1) != port) continue;
      entry.resize(colon);
    }
    if (entry.front() == '.') entry.erase(0, 1);
    if (h == entry) return true;
    if (h.size() > entry.size() && h.compare(h.size() - entry.size(), entry.size(), entry) == 0 &&
        h[h.size() - entry.size() - 1] == '.')
      return true;
  }
  return false;
}

endpoint make_endpoint(const transport_params& s) {
  auto url = boost::urls::parse_uri(s.server);
  if (!url || (url->scheme() != "https" && url->scheme() != "http") || url->host().empty())
    throw kube::error(client_errc::invalid_config, "server \"" + s.server + "\" is not an http(s):// URL");
  endpoint ep;
  ep.tls = url->scheme() == "https";
  ep.host = url->host_address();
  if (url->host_type() == boost::urls::host_type::ipv6) ep.host = std::string(url->host_address());
  ep.port = url->has_port() ? std::string(url->port()) : (ep.tls ? "443" : "80");
  ep.base_path = url->path();
  while (!ep.base_path.empty() && ep.base_path.back() == '/') ep.base_path.pop_back();
  ep.verify_name = s.tls_server_name.empty() ? ep.host : s.tls_server_name;
  boost::system::error_code ec;
  boost::asio::ip::make_address(ep.host, ec);
  ep.host_is_ip = !ec;

  std::string proxy = s.proxy_url;
  const char* no_proxy = env("NO_PROXY", "no_proxy");
  if (proxy.empty() && !is_loopback(ep.host) && !(no_proxy && no_proxy_matches(no_proxy, ep.host, ep.port))) {
    if (const char* p = ep.tls ? env("HTTPS_PROXY", "https_proxy") : env("HTTP_PROXY", "http_proxy")) proxy = p;
  }
  if (!proxy.empty()) {
    auto purl = boost::urls::parse_uri(proxy);
    if (!purl || purl->scheme() != "http" || purl->host().empty())
      throw kube::error(client_errc::invalid_config,
                        "proxy-url: only http:// CONNECT proxies are supported (got scheme \"" +
                            (purl ? std::string(purl->scheme()) : std::string("?")) + "\")");
    ep.proxy_host = std::string(purl->host_address());
    ep.proxy_port = purl->has_port() ? std::string(purl->port()) : "80";
    if (purl->has_userinfo()) ep.proxy_authorization = basic_authorization(purl->user(), purl->password());
  }
  return ep;
}

}  // namespace kube::detail
