// Streamed responses (watches, logs): a dedicated connection per stream,
// its headers read by open_stream, its body by the reader piece by piece.
#include "transport/body_stream.hpp"
#include "transport/retry_policy.hpp"
#include "transport/status.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http.hpp>

namespace kube::detail {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

void body_stream::begin_read() {
  parser.get().body().data = buf.data();
  parser.get().body().size = buf.size();
  if (idle_timeout.count() > 0) {
    read_since = std::chrono::steady_clock::now();
    reading = true;
    if (!armed) arm_watchdog(read_since + idle_timeout);
  }
}

error_code body_stream::end_read(error_code ec, std::size_t& n) {
  reading = false;
  n = buf.size() - parser.get().body().size;
  if (ec == http::error::need_buffer) ec = {};
  // A failure recorded while this read waited can only be the watchdog's
  // (timed_out: the informer reopens its watch at the last version); it,
  // not the aborted read, is what the caller learns.
  if (ec && failure) ec = failure;
  return ec;
}

bool body_stream::parse_buffered(error_code& ec) {
  if (conn->buffer.size() == 0) return false;
  ec = {};
  const std::size_t used = parser.put(conn->buffer.data(), ec);
  conn->buffer.consume(used);
  if (ec == http::error::need_more || (!ec && used == 0)) {
    ec = {};
    return false;
  }
  return true;
}

asio::awaitable<error_code> body_stream::read_some(std::size_t& n) {
  n = 0;
  begin_read();
  error_code ec;
  if (!parse_buffered(ec)) {
    auto [rec, used] = co_await async_read(use_tuple);
    (void)used;
    ec = rec;
  }
  co_return end_read(ec, n);
}

void body_stream::arm_watchdog(std::chrono::steady_clock::time_point at) {
  if (!watchdog) watchdog.emplace(impl->strand);
  watchdog->expires_at(at);
  armed = true;
  // Weak: a stream dropped by its owner goes away at once, its timer with it.
  watchdog->async_wait([weak = weak_from_this()](error_code ec) {
    auto self = weak.lock();
    if (!self) return;
    self->armed = false;
    if (ec || self->done || !self->reading) return;  // closed, or nobody reading: the next read arms it
    if (std::chrono::steady_clock::now() - self->read_since >= self->idle_timeout) {
      self->fail(asio::error::timed_out);  // closes: the read in flight fails, read_some reports timed_out
      return;
    }
    self->arm_watchdog(self->read_since + self->idle_timeout);  // when this read could first be overdue
  });
}

void body_stream::close() {
  done = true;
  if (watchdog) watchdog->cancel();
  if (conn) {
    boost::system::error_code ignored;
    conn->tcp().socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    conn->tcp().close();
  }
}

bool body_stream::connection_closed(error_code ec) {
  return ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::error::eof ||
         ec == asio::ssl::error::stream_truncated;
}

void body_stream::fail(error_code ec, std::string why) {
  failure = ec;
  if (why.empty() && ec == asio::error::timed_out && idle_timeout.count() > 0) {
    why = "no data for " + std::to_string(idle_timeout.count()) + " ms (idle_timeout): the connection is presumed dead";
  } else if (why.empty()) {
    why = ec.message();
  }
  failure_diag.set_client_message(req.describe() + ": " + why);
  close();
}

std::string_view body_stream::content_type() const {
  const auto v = parser.get()[boost::beast::http::field::content_type];
  return {v.data(), v.size()};
}

asio::awaitable<result<std::shared_ptr<body_stream>>> client_impl::open_stream(request req, stream_params sp) {
  // The request's time is the time to its headers (the stream's own life
  // is the reflector's to report).
  request_meter meter(*this, req);
  if (sp.throttled) {
    if (auto ec = co_await throttle(meter)) co_return result<std::shared_ptr<body_stream>>{ec, {}, {}};
  }
  // Streams are opened once: no connection retries, no Retry-After; a 401
  // still refreshes rotating credentials once, as for unary requests.
  retry_policy policy(req.method(), 0);
  for (;;) {
    result<std::shared_ptr<body_stream>> r;
    auto conn = co_await connect(r.ec, r.diag);
    if (!conn) co_return r;
    auto m = to_http(req);
    if ((r.ec = co_await add_headers(m, r.diag))) co_return r;
    auto st = std::make_shared<body_stream>();
    st->impl = shared_from_this();
    st->req = req;
    st->idle_timeout = sp.idle_timeout;
    st->parser.body_limit(boost::none);
    // The headers come within read_timeout, or the server is presumed hung.
    if (settings.read_timeout.count() > 0) conn->tcp().expires_after(settings.read_timeout);
    auto ec = co_await conn->visit([&](auto& s) -> asio::awaitable<error_code> {
      auto [wec, wn] = co_await http::async_write(s, m, use_tuple);
      (void)wn;
      if (wec) co_return wec;
      auto [rec, rn] = co_await http::async_read_header(s, conn->buffer, st->parser, use_tuple);
      (void)rn;
      co_return rec;
    });
    conn->tcp().expires_never();
    meter.attempt(ec ? 0 : static_cast<int>(st->parser.get().result_int()), 0);
    if (ec == beast::error::timeout) {
      r.ec = client_errc::timeout;
      r.diag.set_client_message(req.describe() + ": no response headers from the server within " +
                                std::to_string(settings.read_timeout.count()) + " ms (read_timeout)");
      co_return r;
    }
    if (ec) {
      r.ec = ec;
      r.diag.set_client_message(req.describe() + ": " + ec.message());
      co_return r;
    }
    st->conn = std::move(conn);
    const unsigned status = st->parser.get().result_int();
    surface_warnings(parse_warnings(st->parser.get()));
    if (status >= 200 && status < 300) {
      if (settings.log.enabled(log_level::trace)) {
        settings.log.log(log_level::trace, req.describe() + ": HTTP " + std::to_string(status) + ", " +
                                               std::string(st->content_type()) + ", streaming");
      }
      r.value = std::move(st);
      co_return r;
    }
    // Refused: read the (small) Status body, all of it within read_timeout
    // (a server that stops in the middle of it must not hold the caller).
    std::string body;
    if (settings.read_timeout.count() > 0) st->conn->tcp().expires_after(settings.read_timeout);
    bool body_timed_out = false;
    while (!st->parser.is_done() && body.size() < (1u << 20)) {
      std::size_t n = 0;
      const auto rec = co_await st->read_some(n);
      body.append(st->buf.data(), n);
      body_timed_out = rec == beast::error::timeout;
      if (rec) break;
    }
    st->close();
    if (policy.next({.http_status = status}).what == retry_action::kind::refresh_and_retry && auth &&
        auth->invalidate()) {
      meter.retry(static_cast<int>(status));
      continue;
    }
    r.ec = refusal(status, body, req, r.diag);
    if (body_timed_out) {
      r.diag.set_client_message(r.diag.client_message() + " (the rest of its body did not come within " +
                                std::to_string(settings.read_timeout.count()) + " ms, read_timeout)");
    }
    co_return r;
  }
}

}  // namespace kube::detail
