// GET /metrics over HTTP/1.1 with Beast, on a strand of the program's
// executor: one coroutine accepts, one per connection reads requests and
// writes answers. The only translation unit of kube::prometheus that
// includes Beast.
#include <kube/prometheus/metrics_server.hpp>

#include <kube/base/listen.hpp>
#include <kube/base/strand.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/system/system_error.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace kube::prometheus::detail {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

// What one client may make the server hold: a request's header and body
// (a GET has none; this only lets a small one be answered with 405), and
// the read buffer they go through.
constexpr std::uint32_t header_limit = 8 * 1024;
constexpr std::uint64_t body_limit = 8 * 1024;
constexpr std::size_t buffer_limit = 2 * (header_limit + body_limit);
// A connection idle (or slow to send a request) this long is closed, and
// one that does not read its answer this long.
constexpr auto read_timeout = std::chrono::minutes(2);
constexpr auto write_timeout = std::chrono::minutes(1);
// After a failed accept (out of descriptors), before the next one.
constexpr auto accept_pause = std::chrono::milliseconds(100);

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

constexpr std::string_view text_format = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::string_view plain_text = "text/plain; charset=utf-8";

// The error an exception ending the accept loop means.
error_code error_of(const std::exception_ptr& e) {
  if (!e) return {};
  try {
    std::rethrow_exception(e);
  } catch (const boost::system::system_error& se) {
    return se.code();
  } catch (...) {
    return make_error_code(boost::system::errc::state_not_recoverable);
  }
}

std::string host_port(const std::string& address, unsigned short port) {
  const bool v6 = address.find(':') != std::string::npos;
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

}  // namespace

class metrics_server_impl : public std::enable_shared_from_this<metrics_server_impl> {
public:
  metrics_server_impl(const asio::any_io_executor& ex, std::shared_ptr<metrics> m, const metrics_server_params& p)
      : strand_(kube::make_strand_executor(ex)),
        metrics_(std::move(m)),
        acceptor_(strand_) {
    if (!metrics_) throw std::invalid_argument("kube::prometheus::metrics_server: the metrics are null");
    error_code ec;
    const auto address = asio::ip::make_address(p.address, ec);
    if (ec) throw boost::system::system_error(ec, "metrics_server: \"" + p.address + "\" is not an IP address");
    ec = kube::listen_cloexec(acceptor_, tcp::endpoint(address, p.port));
    if (!ec) port_ = acceptor_.local_endpoint(ec).port();
    if (ec) throw boost::system::system_error(ec, "metrics_server: cannot listen on " + host_port(p.address, p.port));
  }

  [[nodiscard]] unsigned short port() const noexcept { return port_; }

  void start(asio::any_completion_handler<void(error_code)> handler) {
    if (running_.exchange(true)) {
      // Not inline (the caller is still initiating): through the strand,
      // then to the handler's executor.
      auto work =
          asio::prefer(asio::get_associated_executor(handler, strand_), asio::execution::outstanding_work.tracked);
      asio::post(strand_, [h = std::move(handler), work = std::move(work)]() mutable {
        asio::dispatch(work, [h = std::move(h)]() mutable { std::move(h)(asio::error::already_started); });
      });
      return;
    }
    // The handler's cancellation slot reaches the coroutine (co_spawn lets
    // terminal cancellation through); its executor is kept busy until the
    // completion, which is delivered there.
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto work =
        asio::prefer(asio::get_associated_executor(handler, strand_), asio::execution::outstanding_work.tracked);
    asio::co_spawn(strand_, accept_loop(),
                   asio::bind_cancellation_slot(slot, [self = shared_from_this(), h = std::move(handler),
                                                       work = std::move(work)](std::exception_ptr e) mutable {
                     // On the strand: the loop has ended, nothing else is accepted.
                     self->close_all();
                     self->running_ = false;
                     const auto ec = error_of(e);
                     asio::dispatch(work, [h = std::move(h), ec]() mutable { std::move(h)(ec); });
                   }));
  }

private:
  using connections = std::list<beast::tcp_stream>;

  asio::any_io_executor strand_;
  std::shared_ptr<metrics> metrics_;
  tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::atomic<bool> running_{false};
  connections conns_;  // on the strand: every open connection, closed when the run ends

  void close_all() {
    error_code ignored;
    acceptor_.close(ignored);
    for (auto& c : conns_) c.close();  // each connection's coroutine ends when its read or write fails
  }

  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, s] = co_await acceptor_.async_accept(use_tuple);
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) {  // cancelled, or a run after the end
        throw boost::system::system_error(ec ? ec : error_code(asio::error::operation_aborted));
      }
      if (ec) {  // out of descriptors and the like: go on after a pause, as a server does
        asio::steady_timer pause(strand_, accept_pause);
        co_await pause.async_wait(asio::use_awaitable);
        continue;
      }
      kube::set_cloexec(s);  // a process the program starts must not inherit a connection
      // In the list before its coroutine starts, so that the end of the run
      // closes it whatever that coroutine has done yet.
      auto it = conns_.emplace(conns_.end(), std::move(s));
      asio::co_spawn(strand_, serve(shared_from_this(), it), asio::detached);
    }
  }

  // One connection: requests answered in order until the client closes,
  // asks to close, breaks a limit or times out, or the run ends.
  static asio::awaitable<void> serve(std::shared_ptr<metrics_server_impl> self, connections::iterator it) {
    struct forget {
      metrics_server_impl& server;
      connections::iterator it;
      ~forget() { server.conns_.erase(it); }
    } const on_end{*self, it};
    auto& stream = *it;
    beast::flat_buffer buffer(buffer_limit);
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(header_limit);
      parser.body_limit(body_limit);
      stream.expires_after(read_timeout);
      auto [rec, rn] = co_await http::async_read(stream, buffer, parser, use_tuple);
      // Closed by the client, a timeout, a request too large or not HTTP,
      // or the run ended: no answer, the connection closes.
      if (rec) break;
      auto res = self->answer(parser.get());
      stream.expires_after(write_timeout);
      auto [wec, wn] = co_await http::async_write(stream, res, use_tuple);
      if (wec) break;
      if (!res.keep_alive()) {
        error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        break;
      }
    }
    stream.close();
  }

  [[nodiscard]] http::response<http::string_body> answer(const http::request<http::string_body>& req) const {
    http::response<http::string_body> res;
    res.version(req.version());
    res.keep_alive(req.keep_alive());
    const std::string_view target(req.target().data(), req.target().size());
    const auto path = target.substr(0, target.find('?'));
    const bool head = req.method() == http::verb::head;
    if (req.method() != http::verb::get && !head) {
      res.result(http::status::method_not_allowed);
      res.set(http::field::allow, "GET, HEAD");
      res.set(http::field::content_type, plain_text);
      res.body() = "405 method not allowed\n";
    } else if (path != "/metrics") {
      res.result(http::status::not_found);
      res.set(http::field::content_type, plain_text);
      res.body() = "404 page not found\n";
    } else {
      res.result(http::status::ok);
      res.set(http::field::content_type, text_format);
      res.body() = metrics_->render();
    }
    res.prepare_payload();
    if (head) res.body().clear();  // Content-Length stays what GET would send
    return res;
  }
};

void metrics_server_start(std::shared_ptr<metrics_server_impl> impl,
                          asio::any_completion_handler<void(error_code)> handler) {
  impl->start(std::move(handler));
}

}  // namespace kube::prometheus::detail

namespace kube::prometheus {

metrics_server::metrics_server(boost::asio::any_io_executor ex, std::shared_ptr<metrics> m, metrics_server_params p)
    : impl_(std::make_shared<detail::metrics_server_impl>(ex, std::move(m), p)) {}

unsigned short metrics_server::port() const noexcept { return impl_->port(); }

}  // namespace kube::prometheus
