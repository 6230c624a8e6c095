#pragma once

// Internal to libkube's sources: the shared state behind kube::client.

#include "auth.hpp"
#include "token_bucket.hpp"

#include <kube/detail/transport_settings.hpp>
#include <kube/diagnostics.hpp>
#include <kube/error.hpp>
#include <kube/request.hpp>
#include <kube/response.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kube::detail {

/// One HTTP/1.1 connection to the apiserver, plain or TLS.
struct connection {
  using tls_stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;
  std::variant<std::unique_ptr<boost::beast::tcp_stream>, std::unique_ptr<tls_stream>> stream;
  boost::beast::flat_buffer buffer;
  bool reused = false;

  boost::beast::tcp_stream& tcp();
};

/// Where and how to connect, derived once from the settings.
struct endpoint {
  bool tls = true;
  std::string host, port, base_path;  // base_path: a server URL's path prefix, no trailing '/'
  std::string verify_name;            // name the certificate must carry (tls-server-name or host)
  bool host_is_ip = false;
  std::optional<std::string> proxy_host, proxy_port, proxy_authorization;  // CONNECT proxy
};

/// Parses the server URL and decides the proxy (proxy-url, else
/// HTTPS_PROXY/HTTP_PROXY with NO_PROXY, loopback never proxied).
endpoint make_endpoint(const transport_settings& s);

/// Builds the TLS context: verification on unless insecure, CA from PEM or
/// system roots, client certificate and key. Errors name the file, never
/// the key material.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const transport_settings& s);

/// The outcome of one operation as the coroutines pass it around.
template <class T>
struct result {
  error_code ec;
  diagnostics diag;
  T value{};
};

class client_impl : public std::enable_shared_from_this<client_impl> {
public:
  client_impl(boost::asio::any_io_executor ex, transport_settings s);

  boost::asio::any_io_executor executor;
  boost::asio::strand<boost::asio::any_io_executor> strand;
  transport_settings settings;
  endpoint ep;
  std::shared_ptr<boost::asio::ssl::context> tls;
  std::unique_ptr<authenticator> auth;
  token_bucket limiter;

  /// Runs a unary request with throttling, retries and auth refresh.
  boost::asio::awaitable<result<response>> run(request req);

  /// Opens a new connection (TCP, proxy CONNECT, TLS handshake).
  boost::asio::awaitable<std::unique_ptr<connection>> connect(error_code& ec, diagnostics& diag);

  /// The HTTP headers every request carries (auth, impersonation, UA).
  boost::asio::awaitable<error_code> add_headers(
      boost::beast::http::request<boost::beast::http::string_body>& req, diagnostics& diag);

  boost::beast::http::request<boost::beast::http::string_body> to_http(const request& r) const;

  /// Reports server Warning headers to the hook or the logger.
  void surface_warnings(const std::vector<std::string>& warnings) const;

private:
  std::vector<std::unique_ptr<connection>> idle_;  // touched on the strand only

  boost::asio::awaitable<result<response>> attempt(const request& req, bool& retryable_failure, int& retry_after);
};

/// Parses `299 - "text" "date"` Warning header values into their text.
std::vector<std::string> parse_warnings(const std::vector<std::string>& header_values);

/// Turns a non-2xx answer into (api error code, diagnostics with Status).
error_code status_error(unsigned http_status, const std::string& body, const request& req, diagnostics& diag);

} // namespace kube::detail
