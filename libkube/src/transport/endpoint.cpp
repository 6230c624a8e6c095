#include "transport/endpoint.hpp"

#include "config/auth.hpp"

#include <kube/error.hpp>
#include <kube/exception.hpp>

#include <boost/asio/ip/address.hpp>
#include <boost/url/parse.hpp>

#include <cctype>
#include <cstdlib>
#include <optional>
#include <vector>

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

// An address with an IPv4-mapped IPv6 one read as the IPv4 it maps (Go's
// net.IP compares them equal).
std::optional<boost::asio::ip::address> ip_of(std::string_view text, bool allow_zone) {
  if (text.empty() || (!allow_zone && text.find('%') != std::string_view::npos)) return std::nullopt;
  boost::system::error_code ec;
  auto a = boost::asio::ip::make_address(std::string(text), ec);
  if (ec) return std::nullopt;
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    a = boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, a.to_v6());
  return a;
}

std::vector<unsigned char> bytes_of(const boost::asio::ip::address& a) {
  if (a.is_v4()) {
    const auto b = a.to_v4().to_bytes();
    return {b.begin(), b.end()};
  }
  const auto b = a.to_v6().to_bytes();
  return {b.begin(), b.end()};
}

// "10.96.0.0/12", "fd00::/8": whether `host` is inside.
bool cidr_contains(const boost::asio::ip::address& net, int bits, const boost::asio::ip::address& host) {
  if (net.is_v4() != host.is_v4()) return false;
  const auto n = bytes_of(net);
  const auto h = bytes_of(host);
  for (std::size_t i = 0; bits > 0; ++i, bits -= 8) {
    const unsigned mask = bits >= 8 ? 0xffU : (0xffU << (8 - bits)) & 0xffU;
    if ((n[i] & mask) != (h[i] & mask)) return false;
  }
  return true;
}

// Go's net.ParseCIDR: an address without a zone, '/', a prefix length of at
// most 32 or 128 in decimal.
bool parse_cidr(std::string_view entry, boost::asio::ip::address& net, int& bits) {
  const auto slash = entry.find('/');
  if (slash == std::string_view::npos) return false;
  const auto a = ip_of(entry.substr(0, slash), false);
  const auto len = entry.substr(slash + 1);
  if (!a || len.empty() || len.size() > 3) return false;
  bits = 0;
  for (char c : len) {
    if (c < '0' || c > '9') return false;
    bits = bits * 10 + (c - '0');
  }
  // An IPv4-mapped network (written with colons) keeps its IPv6 length: Go
  // reads it as IPv4 with 96 fewer bits.
  const bool written_v6 = entry.substr(0, slash).find(':') != std::string_view::npos;
  if (written_v6 && a->is_v4()) bits -= 96;
  if (bits < 0 || bits > (a->is_v4() ? 32 : 128)) return false;
  net = *a;
  return true;
}

// Go's net.SplitHostPort: "host:port" or "[v6]:port"; false when there is
// no port or the host has a colon outside brackets.
bool split_host_port(std::string_view s, std::string_view& host, std::string_view& port) {
  if (!s.empty() && s.front() == '[') {
    const auto close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':') return false;
    host = s.substr(1, close - 1);
    port = s.substr(close + 2);
    return port.find(':') == std::string_view::npos;
  }
  const auto colon = s.rfind(':');
  if (colon == std::string_view::npos || s.substr(0, colon).find(':') != std::string_view::npos) return false;
  host = s.substr(0, colon);
  port = s.substr(colon + 1);
  return true;
}

}  // namespace

bool no_proxy_matches(std::string_view no_proxy, const std::string& host, const std::string& port) {
  const std::string h = lower(host);
  const auto host_ip = ip_of(h, true);  // a zone makes it no less an address: names never match it
  std::size_t start = 0;
  while (start <= no_proxy.size()) {
    auto end = no_proxy.find(',', start);
    if (end == std::string_view::npos) end = no_proxy.size();
    std::string entry = lower(std::string(no_proxy.substr(start, end - start)));
    start = end + 1;
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (entry.empty()) continue;
    if (entry == "*") return true;
    boost::asio::ip::address net;
    int bits = 0;
    if (parse_cidr(entry, net, bits)) {
      if (host_ip && cidr_contains(net, bits, *host_ip)) return true;
      continue;
    }
    std::string_view ehost = entry;
    std::string_view eport;
    if (!split_host_port(entry, ehost, eport)) {
      ehost = entry;
      eport = {};
    } else if (ehost.empty()) {
      continue;  // ":1": no host, ignored as Go does
    }
    const bool port_ok = eport.empty() || eport == port;
    if (const auto ip = ip_of(ehost, false)) {
      if (host_ip && *ip == *host_ip && port_ok) return true;
      continue;
    }
    if (host_ip || !port_ok) continue;
    // "example.com" matches it and its subdomains; ".example.com" and
    // "*.example.com" only the subdomains.
    if (ehost.size() > 1 && ehost.substr(0, 2) == "*.") ehost.remove_prefix(1);
    const bool match_host = ehost.front() != '.';
    const std::string suffix = match_host ? "." + std::string(ehost) : std::string(ehost);
    if (h.size() >= suffix.size() && h.compare(h.size() - suffix.size(), suffix.size(), suffix) == 0) return true;
    if (match_host && h == ehost) return true;
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
