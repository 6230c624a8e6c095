// Opening a connection: resolve, TCP connect (bounded by connect_timeout),
// an HTTP CONNECT through a proxy, the TLS handshake with SNI and host-name
// verification.
#include "transport/client_impl.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/http.hpp>

#include <cerrno>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <tuple>

namespace kube::detail {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {
template <class Stream, class Message>
asio::awaitable<std::tuple<boost::system::error_code, std::size_t>> write_on(Stream& s, Message& m) {
  co_return co_await http::async_write(s, m, use_tuple);
}

// Keepalive probes after `idle` without traffic, then every `idle` (Go's
// net.Dialer KeepAlive sets both); the kernel drops the connection after 9
// unanswered probes. Failing to set them is not worth failing the request.
void set_keepalive(asio::ip::tcp::socket& s, std::chrono::seconds idle) {
  const int secs = static_cast<int>(idle.count());
  error_code ignored;
  s.set_option(asio::socket_base::keep_alive(true), ignored);
  s.set_option(asio::detail::socket_option::integer<IPPROTO_TCP, TCP_KEEPIDLE>(secs), ignored);
  s.set_option(asio::detail::socket_option::integer<IPPROTO_TCP, TCP_KEEPINTVL>(secs), ignored);
}
}  // namespace

beast::tcp_stream& connection::tcp() {
  if (auto* p = std::get_if<std::unique_ptr<beast::tcp_stream>>(&stream)) return **p;
  return beast::get_lowest_layer(*std::get<std::unique_ptr<tls_stream>>(stream));
}

asio::awaitable<std::unique_ptr<connection>> client_impl::connect(error_code& ec, diagnostics& diag) {
  auto ex = co_await asio::this_coro::executor;
  asio::ip::tcp::resolver resolver(ex);
  const std::string& host = ep.proxy_host ? *ep.proxy_host : ep.host;
  const std::string& port = ep.proxy_port ? *ep.proxy_port : ep.port;
  const std::string where = ep.proxy_host ? "proxy " + host + ":" + port : host + ":" + port;

  auto [rec, results] = co_await resolver.async_resolve(host, port, use_tuple);
  if (rec) {
    ec = rec;
    diag.set_client_message("cannot resolve " + where + ": " + rec.message());
    co_return nullptr;
  }
  auto tcp = std::make_unique<beast::tcp_stream>(ex);
  tcp->expires_after(settings.connect_timeout);
  // Each address in turn, on a socket opened close-on-exec (Asio's own
  // open does not set it), so a process started by any thread of the
  // program (an exec plugin, the user's own children) never holds our
  // connections.
  error_code cec = asio::error::host_not_found;
  for (const auto& entry : results) {
    const auto protocol = entry.endpoint().protocol();
    const int fd = ::socket(protocol.family(), SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0) {
      cec = error_code(errno, boost::system::system_category());
      continue;
    }
    error_code aec;
    tcp->socket().assign(protocol, fd, aec);
    if (aec) {
      ::close(fd);
      cec = aec;
      continue;
    }
    std::tie(cec) = co_await tcp->async_connect(entry.endpoint(), use_tuple);
    if (!cec || cec == beast::error::timeout) break;
    error_code ignored;
    tcp->socket().close(ignored);
  }
  if (cec) {
    ec = cec == beast::error::timeout ? error_code(client_errc::timeout) : cec;
    diag.set_client_message("cannot connect to " + where + ": " + cec.message());
    co_return nullptr;
  }
  tcp->socket().set_option(asio::ip::tcp::no_delay(true));
  if (settings.tcp_keepalive.count() > 0) set_keepalive(tcp->socket(), settings.tcp_keepalive);
  connections_opened.fetch_add(1, std::memory_order_relaxed);

  if (ep.proxy_host) {
    http::request<http::empty_body> creq{http::verb::connect, ep.host + ":" + ep.port, 11};
    creq.set(http::field::host, ep.host + ":" + ep.port);
    if (ep.proxy_authorization) creq.set(http::field::proxy_authorization, *ep.proxy_authorization);
    auto [wec, wn] = co_await write_on(*tcp, creq);
    (void)wn;
    beast::flat_buffer buf;
    http::response_parser<http::empty_body> parser;
    parser.skip(true);  // a CONNECT answer has no body
    error_code pec = wec;
    if (!pec) std::tie(pec, std::ignore) = co_await http::async_read_header(*tcp, buf, parser, use_tuple);
    if (pec || parser.get().result() != http::status::ok) {
      ec = pec ? pec : error_code(client_errc::connection_failed);
      diag.set_client_message(where + ": CONNECT " + ep.host + ":" + ep.port + " failed: " +
                              (pec ? pec.message() : "HTTP " + std::to_string(parser.get().result_int())));
      co_return nullptr;
    }
  }

  auto conn = std::make_unique<connection>();
  if (!ep.tls) {
    tcp->expires_never();
    conn->stream = std::move(tcp);
    co_return conn;
  }
  auto [context, generation] = tls->current();
  conn->tls_context = context;
  conn->tls_generation = generation;
  auto tls_stream = std::make_unique<connection::tls_stream>(std::move(*tcp), *context);
  if (!ep.host_is_ip || !settings.tls_server_name.empty()) {
    // SNI carries names only (RFC 6066), never IP literals.
    SSL_set_tlsext_host_name(tls_stream->native_handle(), ep.verify_name.c_str());
  }
  if (!settings.insecure_skip_tls_verify)
    tls_stream->set_verify_callback(asio::ssl::host_name_verification(ep.verify_name));
  auto [hec] = co_await tls_stream->async_handshake(asio::ssl::stream_base::client, use_tuple);
  if (hec) {
    std::string detail = hec.message();
    const long verify = SSL_get_verify_result(tls_stream->native_handle());
    if (verify != X509_V_OK) detail += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
    // A connection reset or closed during the handshake is a network error
    // (as in Go's TLS client): callers treat it like any broken connection,
    // e.g. an informer reopens its watch without a relist. What TLS itself
    // refused (verification, protocol version) is client_errc::tls_error.
    const bool broken = hec.category() == boost::system::system_category() || hec == asio::error::eof ||
                        hec == asio::ssl::error::stream_truncated;
    ec = hec == beast::error::timeout            ? error_code(client_errc::timeout)
         : hec == asio::error::operation_aborted ? hec
         : broken                                ? hec
                                                 : error_code(client_errc::tls_error);
    diag.set_client_message("TLS handshake with " + ep.host + ":" + ep.port + " failed: " + detail);
    co_return nullptr;
  }
  beast::get_lowest_layer(*tls_stream).expires_never();
  conn->stream = std::move(tls_stream);
  co_return conn;
}

}  // namespace kube::detail
