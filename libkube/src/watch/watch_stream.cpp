// Watches: a dedicated connection per watch; the chunked body goes through
// the sans-io watch_decoder, so read sizes and chunk boundaries never matter.
#include "transport/client_impl.hpp"
#include "transport/retry_policy.hpp"

#include <kube/rest/client.hpp>
#include <kube/watch/watch_stream.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http.hpp>

namespace kube {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace detail {

void watch_state::begin_read() {
  parser.get().body().data = buf.data();
  parser.get().body().size = buf.size();
  if (idle_timeout.count() > 0) {
    read_since = std::chrono::steady_clock::now();
    reading = true;
    if (!armed) arm_watchdog(read_since + idle_timeout);
  }
}

error_code watch_state::end_read(error_code ec, std::size_t& n) {
  reading = false;
  n = buf.size() - parser.get().body().size;
  if (ec == http::error::need_buffer) ec = {};
  // A failure recorded while this read waited can only be the watchdog's
  // (timed_out: the informer reopens its watch at the last version); it,
  // not the aborted read, is what the caller learns.
  if (ec && failure) ec = failure;
  return ec;
}

bool watch_state::parse_buffered(error_code& ec) {
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

asio::awaitable<error_code> watch_state::read_some(std::size_t& n) {
  n = 0;
  begin_read();
  error_code ec;
  if (!parse_buffered(ec)) {
    auto [rec, used] =
        co_await conn->visit([&](auto& s) { return http::async_read_some(s, conn->buffer, parser, use_tuple); });
    (void)used;
    ec = rec;
  }
  co_return end_read(ec, n);
}

void watch_state::arm_watchdog(std::chrono::steady_clock::time_point at) {
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

// Closes the socket only: a read may still be pending on the connection's
// stream and buffer, so they live until the watch_state goes away.
void watch_state::close() {
  done = true;
  if (watchdog) watchdog->cancel();
  if (conn) {
    boost::system::error_code ignored;
    conn->tcp().socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    conn->tcp().close();
  }
}

std::optional<result<watch_event>> watch_state::ready() {
  for (;;) {
    // Events decoded before a failure are still delivered, then the failure.
    if (auto ev = decoder.next()) {
      // Move-construct, never move-assign: the object lives in its own arena
      // and assigning it into a default-storage object would copy it deeply.
      return result<watch_event>{{}, {}, std::move(*ev)};
    }
    if (failure) return result<watch_event>{failure, failure_diag, {}};
    if (done) return result<watch_event>{asio::error::eof, {}, {}};
    if (!parser.is_done()) return std::nullopt;
    end_of_body();
  }
}

bool watch_state::connection_closed(error_code ec) {
  return ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::error::eof ||
         ec == asio::ssl::error::stream_truncated;
}

void watch_state::took(error_code ec, std::size_t n) {
  if (n > 0 && decoder.write(buf.data(), n)) {
    fail(decoder.error());
    return;
  }
  if (!ec) return;
  const bool ended = connection_closed(ec);
  if (ended && !parser.is_done()) {
    // The connection closed before the body's last chunk: the server (or a
    // proxy) went away, inside an event or between two. Go reads this as
    // io.ErrUnexpectedEOF. A network failure, not a malformed stream (which
    // costs a relist): the reflector reopens the watch where it was and its
    // hook hears of it.
    fail(http::error::partial_message,
         decoder.in_event() ? "the connection closed inside a watch event, before the end of the body"
                            : "the connection closed between two watch events, before the end of the body "
                              "(no last chunk): the server or a proxy went away");
  } else if (ended) {
    end_of_body();  // the body was complete: eof
  } else {
    fail(ec);  // closes: cancelled or closed (operation_aborted), reset, timed out
  }
}

void watch_state::async_next(std::unique_ptr<watch_waiter> w) {
  asio::dispatch(impl->strand, [self = shared_from_this(), w = std::move(w)]() mutable { self->want(std::move(w)); });
}

void watch_state::want(std::unique_ptr<watch_waiter> w) {
  if (waiting) {
    // Two reads at once would share one parser and buffer: refused, and
    // the waiting call is left alone.
    result<watch_event> r;
    r.ec = asio::error::in_progress;
    r.diag.set_client_message(req.describe() + ": async_next while another async_next on this stream waits");
    w->complete(std::move(r));
    return;
  }
  if (auto r = ready()) {
    w->complete(std::move(*r));
    return;
  }
  if (w->slot.is_connected()) {
    w->slot.assign([weak = weak_from_this(), strand = impl->strand](asio::cancellation_type type) {
      if ((type & asio::cancellation_type::terminal) == asio::cancellation_type::none) return;
      asio::dispatch(strand, [weak] {
        if (auto self = weak.lock()) self->close();
      });
    });
  }
  waiting = true;
  read_for(std::move(w));
}

bool watch_state::after_read(watch_waiter& w, error_code ec) {
  std::size_t n = 0;
  ec = end_read(ec, n);
  try {
    took(ec, n);
  } catch (const std::exception& e) {  // allocation, in the decoder: the stream cannot go on
    fail(client_errc::protocol_error);
    failure_diag.set_client_message(req.describe() + ": internal error: " + e.what());
  }
  auto r = ready();
  if (!r) return false;
  waiting = false;
  w.complete(std::move(*r));
  return true;
}

void watch_state::read_for(std::unique_ptr<watch_waiter> w) {
  // What the connection's buffer already holds is parsed here, without a
  // trip through the scheduler; the socket is read only when it is used up.
  for (;;) {
    begin_read();
    error_code ec;
    if (!parse_buffered(ec)) break;
    if (after_read(*w, ec)) return;
  }
  // The waiter travels with the read, so that an io_context destroyed
  // with the read pending destroys both (the state never owns it).
  auto done_reading = asio::bind_executor(
      impl->strand, [self = shared_from_this(), w = std::move(w)](error_code ec, std::size_t) mutable {
        if (!self->after_read(*w, ec)) self->read_for(std::move(w));
      });
  conn->visit([&](auto& s) { http::async_read_some(s, conn->buffer, parser, std::move(done_reading)); });
}

void watch_state::end_of_body() {
  if (decoder.finish()) fail(decoder.error());
  close();
}

void watch_state::fail(error_code ec, std::string why) {
  failure = ec;
  if (why.empty() && ec == asio::error::timed_out && idle_timeout.count() > 0) {
    why = "no data for " + std::to_string(idle_timeout.count()) + " ms (idle_timeout): the connection is presumed dead";
  } else if (why.empty()) {
    why = ec.category() == client_category() ? decoder.error_message() : ec.message();
  }
  failure_diag.set_client_message(req.describe() + ": " + why);
  close();
}

asio::awaitable<result<std::shared_ptr<watch_state>>> client_impl::open_stream(request req, stream_params sp) {
  // The request's time is the time to its headers (the stream's own life
  // is the reflector's to report).
  request_meter meter(*this, req);
  if (sp.throttled) {
    if (auto ec = co_await throttle(meter)) co_return result<std::shared_ptr<watch_state>>{ec, {}, {}};
  }
  // Streams are opened once: no connection retries, no Retry-After; a 401
  // still refreshes rotating credentials once, as for unary requests.
  retry_policy policy(req.method(), 0);
  for (;;) {
    result<std::shared_ptr<watch_state>> r;
    auto conn = co_await connect(r.ec, r.diag);
    if (!conn) co_return r;
    auto m = to_http(req);
    if ((r.ec = co_await add_headers(m, r.diag))) co_return r;
    auto st = std::make_shared<watch_state>();
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
      // The decoder for what came back: JSON, or protobuf when the request
      // asked for it and the server could send it.
      const auto content_type = st->parser.get()[http::field::content_type];
      detail::watch_decoder_params dp;
      dp.protobuf = content_type.starts_with(codec::protobuf_media_type);
      if (settings.log.enabled(log_level::trace)) {
        settings.log.log(log_level::trace, req.describe() + ": HTTP " + std::to_string(status) + ", " +
                                               std::string(content_type) + ", streaming");
      }
      dp.raw_objects = sp.raw_objects;
      if (sp.raw_objects && sp.objects.make && sp.objects.read && sp.objects.type) dp.objects = sp.objects;
      st->decoder = detail::watch_decoder(dp);
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

asio::awaitable<result<watch_stream>> client_impl::open_watch(request req, stream_params p) {
  p.throttled = false;
  auto r = co_await open_stream(std::move(req), p);
  co_return result<watch_stream>{r.ec, std::move(r.diag), r.value ? watch_stream(std::move(r.value)) : watch_stream()};
}

void start_watch(const std::shared_ptr<client_impl>& impl, request req, std::chrono::milliseconds idle_timeout,
                 completion<watch_stream> handler) {
  spawn_operation(
      impl->strand,
      [impl, req = std::move(req), idle_timeout]() mutable {
        return impl->open_watch(std::move(req), {.idle_timeout = idle_timeout});
      },
      std::move(handler), finish_result{});
}

void start_watch_next(const std::shared_ptr<watch_state>& state, completion<watch_event> handler) {
  if (!state) {
    auto ex = asio::get_associated_executor(handler);
    ex.execute([h = std::move(handler)]() mutable {
      diagnostics d;
      d.set_client_message("async_next on an empty watch_stream");
      std::move(h)(error_code(client_errc::watch_stream_error), std::move(d), watch_event{});
    });
    return;
  }
  state->async_next(make_watch_waiter(
      std::move(handler), [](result<watch_event> r) { return finish_result{}(nullptr, std::move(r)); },
      state->impl->strand));
}

}  // namespace detail

void watch_stream::close() {
  if (!state_) return;
  asio::dispatch(state_->impl->strand, [s = state_] { s->close(); });
}

bool watch_stream::is_open() const noexcept { return state_ && !state_->done.load(std::memory_order_acquire); }

}  // namespace kube
