#pragma once

// A local HTTP/1.1 server for unit tests of the client's exchange: plain TCP
// on 127.0.0.1, a coroutine per connection. For each request it reads, the
// test's handler writes whatever bytes it likes, as slowly as it likes, or
// nothing at all (a stalled server), and says whether to keep the connection.
// Only for unit tests of the wire behaviour: integration tests use the real
// cluster.

#include <kube/rest/client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kube_test {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

class raw_http_server {
public:
  /// `n` counts requests from 0 across connections. Return false to close
  /// the connection after the handler.
  using handler =
      std::function<asio::awaitable<bool>(tcp::socket& s, const http::request<http::string_body>& req, int n)>;

  raw_http_server(asio::any_io_executor ex, handler h)
      : acceptor_(ex, {asio::ip::make_address("127.0.0.1"), 0}),
        handler_(std::move(h)) {
    asio::co_spawn(ex, accept_loop(), asio::detached);
  }

  [[nodiscard]] std::string url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }
  /// The method and target of every request read, in order.
  [[nodiscard]] const std::vector<std::string>& requests() const noexcept { return seen_; }
  void stop() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  }

  static asio::awaitable<void> write(tcp::socket& s, const std::string& bytes) {
    co_await asio::async_write(s, asio::buffer(bytes), asio::as_tuple(asio::use_awaitable));
  }
  static asio::awaitable<void> sleep(std::chrono::milliseconds d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  /// One chunk of a chunked body.
  static std::string chunk(const std::string& data) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    return size + data + "\r\n";
  }
  /// The head of a 200 answer with a chunked JSON body (a watch).
  static std::string chunked_head() {
    return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  }

private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, sock] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      asio::co_spawn(acceptor_.get_executor(), serve(std::move(sock)), asio::detached);
    }
  }

  asio::awaitable<void> serve(tcp::socket sock) {
    boost::beast::flat_buffer buf;
    for (;;) {
      http::request<http::string_body> req;
      auto [ec, n] = co_await http::async_read(sock, buf, req, asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      seen_.push_back(std::string(req.method_string()) + " " + std::string(req.target()));
      // Counted before the co_await: clang 16 reports a `count_++` inside
      // it as an unsequenced modification (-Wunsequenced).
      const int index = count_++;
      if (!co_await handler_(sock, req, index)) {
        boost::system::error_code ignored;
        sock.close(ignored);
        co_return;
      }
    }
  }

  tcp::acceptor acceptor_;
  handler handler_;
  std::vector<std::string> seen_;
  int count_ = 0;
};

/// A client of `server` with no rate limit and the given read timeout (the
/// transport's default unless a test needs a short one).
inline kube::client client_of(asio::any_io_executor ex, const raw_http_server& server,
                              std::chrono::milliseconds read_timeout = std::chrono::seconds(60)) {
  kube::detail::transport_params s;
  s.server = server.url();
  s.qps = 0;
  s.read_timeout = read_timeout;
  return kube::detail::client_access::make(std::move(ex), s);
}

}  // namespace kube_test
