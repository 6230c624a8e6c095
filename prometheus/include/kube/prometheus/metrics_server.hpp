#pragma once

// kube::prometheus::metrics_server: GET /metrics over HTTP/1.1, on the
// program's own executor (no thread of its own, unlike prometheus-cpp's
// civetweb Exposer).
//
//   auto m = std::make_shared<kube::prometheus::metrics>();
//   kube::prometheus::metrics_server srv(co_await asio::this_coro::executor, m, {.address = "0.0.0.0"});
//   co_await srv.async_run();  // until cancelled
//
// The constructor binds and listens at once (close-on-exec), so a port in
// use fails there: it throws boost::system::system_error naming the
// address and port ("metrics_server: cannot listen on 127.0.0.1:8080:
// Address already in use"). params.address is an IP address ("0.0.0.0",
// "::", "127.0.0.1"), not a host name; port 0 takes a free port, which
// port() tells.
//
// async_run accepts connections until it is cancelled (terminal
// cancellation through the completion handler's cancellation slot), then
// closes the listener and every open connection and completes with
// asio::error::operation_aborted. A server runs once: a second async_run
// while one runs completes with asio::error::already_started, one after
// the run ended with the error of accepting on a closed listener.
// Destroying the metrics_server does not stop a running async_run (the run
// keeps what it needs); cancel it.
//
// What it answers: GET and HEAD of /metrics (any query string) with the
// text format 0.0.4 (Content-Type: text/plain; version=0.0.4;
// charset=utf-8), rendered on each request; other paths 404; other
// methods 405. Connections are kept alive as the client asks (HTTP/1.1 by
// default), pipelined requests are answered in order. Each connection is
// its own coroutine, so a slow client delays nobody else. Limits: request
// headers 8 KiB, a request body 8 KiB (a larger request closes the
// connection unanswered); a connection idle or sending a request for 2
// minutes, or not reading a response for 1 minute, is closed. No TLS, no
// authentication, no compression: bind it where only the scraper reaches.
//
// Thread safety: port() from any thread. The server's work runs on a
// strand of the executor given, so that executor may be multi-threaded.

#include <kube/prometheus/metrics.hpp>
#include <kube/use_awaitable.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/system/error_code.hpp>

#include <memory>
#include <string>
#include <utility>

namespace kube::prometheus {

struct metrics_server_params {
  std::string address = "127.0.0.1";  ///< the IP address to listen on
  unsigned short port = 8080;         ///< 0: any free port (see metrics_server::port())
};

namespace detail {
class metrics_server_impl;
void metrics_server_start(std::shared_ptr<metrics_server_impl> impl,
                          boost::asio::any_completion_handler<void(boost::system::error_code)> handler);
}  // namespace detail

/// Serves a metrics provider's registry at GET /metrics. Copies share one
/// server.
class metrics_server {
public:
  /// Binds and listens. Throws std::invalid_argument for a null `m`,
  /// boost::system::system_error when it cannot listen.
  metrics_server(boost::asio::any_io_executor ex, std::shared_ptr<metrics> m, metrics_server_params p = {});

  /// The port it listens on (params.port, or the one the system chose).
  [[nodiscard]] unsigned short port() const noexcept;

  /// Serves until cancelled. Completion: void(error_code).
  template <boost::asio::completion_token_for<void(boost::system::error_code)> Token = kube::use_awaitable_t>
  auto async_run(Token&& token = {}) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code)>(
        [](auto handler, std::shared_ptr<detail::metrics_server_impl> impl) {
          detail::metrics_server_start(std::move(impl), std::move(handler));
        },
        token, impl_);
  }

private:
  std::shared_ptr<detail::metrics_server_impl> impl_;
};

}  // namespace kube::prometheus
