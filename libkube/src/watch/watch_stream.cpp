// Watches: a streamed body per watch (transport/body_stream.hpp) through the
// sans-io watch_decoder, so read sizes and chunk boundaries never matter.
#include "watch/watch_state.hpp"

#include <kube/watch/watch_stream.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>

namespace kube {
namespace asio = boost::asio;

namespace detail {

std::optional<result<watch_event>> watch_state::ready() {
  for (;;) {
    // Events decoded before a failure are still delivered, then the failure.
    if (auto ev = decoder.next()) {
      // Move-construct, never move-assign: the object lives in its own arena
      // and assigning it into a default-storage object would copy it deeply.
      return result<watch_event>{{}, {}, std::move(*ev)};
    }
    if (io->failure) return result<watch_event>{io->failure, io->failure_diag, {}};
    if (io->done) return result<watch_event>{asio::error::eof, {}, {}};
    if (!io->parser.is_done()) return std::nullopt;
    end_of_body();
  }
}

void watch_state::took(error_code ec, std::size_t n) {
  if (n > 0 && decoder.write(io->buf.data(), n)) {
    fail(decoder.error());
    return;
  }
  if (!ec) return;
  const bool ended = body_stream::connection_closed(ec);
  if (ended && !io->parser.is_done()) {
    // The connection closed before the body's last chunk: the server (or a
    // proxy) went away, inside an event or between two. Go reads this as
    // io.ErrUnexpectedEOF. A network failure, not a malformed stream (which
    // costs a relist): the reflector reopens the watch where it was and its
    // hook hears of it.
    fail(boost::beast::http::error::partial_message,
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
  asio::dispatch(strand(), [self = shared_from_this(), w = std::move(w)]() mutable { self->want(std::move(w)); });
}

void watch_state::want(std::unique_ptr<watch_waiter> w) {
  if (waiting) {
    // Two reads at once would share one parser and buffer: refused, and
    // the waiting call is left alone.
    result<watch_event> r;
    r.ec = asio::error::in_progress;
    r.diag.set_client_message(io->req.describe() + ": async_next while another async_next on this stream waits");
    w->complete(std::move(r));
    return;
  }
  if (auto r = ready()) {
    w->complete(std::move(*r));
    return;
  }
  if (w->slot.is_connected()) {
    w->slot.assign([weak = std::weak_ptr<body_stream>(io), strand = strand()](asio::cancellation_type type) {
      if ((type & asio::cancellation_type::terminal) == asio::cancellation_type::none) return;
      asio::dispatch(strand, [weak] {
        if (auto s = weak.lock()) s->close();
      });
    });
  }
  waiting = true;
  read_for(std::move(w));
}

bool watch_state::after_read(watch_waiter& w, error_code ec) {
  std::size_t n = 0;
  ec = io->end_read(ec, n);
  try {
    took(ec, n);
  } catch (const std::exception& e) {  // allocation, in the decoder: the stream cannot go on
    fail(client_errc::protocol_error, std::string("internal error: ") + e.what());
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
    io->begin_read();
    error_code ec;
    if (!io->parse_buffered(ec)) break;
    if (after_read(*w, ec)) return;
  }
  // The waiter travels with the read, so that an io_context destroyed
  // with the read pending destroys both (the state never owns it).
  io->async_read(
      asio::bind_executor(strand(), [self = shared_from_this(), w = std::move(w)](error_code ec, std::size_t) mutable {
        if (!self->after_read(*w, ec)) self->read_for(std::move(w));
      }));
}

void watch_state::end_of_body() {
  if (decoder.finish()) fail(decoder.error());
  io->close();
}

void watch_state::fail(error_code ec, std::string why) {
  if (why.empty() && ec.category() == client_category()) why = decoder.error_message();
  io->fail(ec, std::move(why));
}

asio::awaitable<result<watch_stream>> open_watch(std::shared_ptr<client_impl> impl, request req, watch_open_params p) {
  auto r = co_await impl->open_stream(std::move(req), {.throttled = false, .idle_timeout = p.idle_timeout});
  result<watch_stream> out{r.ec, std::move(r.diag), {}};
  if (r.ec) co_return out;
  auto st = std::make_shared<watch_state>();
  st->io = std::move(r.value);
  // The decoder for what came back: JSON, or protobuf when the request
  // asked for it and the server could send it.
  watch_decoder_params dp;
  dp.protobuf = st->io->content_type().starts_with(codec::protobuf_media_type);
  dp.raw_objects = p.raw_objects;
  if (p.raw_objects && p.objects.make && p.objects.read && p.objects.type) dp.objects = p.objects;
  st->decoder = watch_decoder(dp);
  out.value = watch_stream(std::move(st));
  co_return out;
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
      state->strand()));
}

}  // namespace detail

void watch_stream::close() {
  if (!state_) return;
  asio::dispatch(state_->strand(), [s = state_] { s->io->close(); });
}

bool watch_stream::is_open() const noexcept { return state_ && !state_->io->done.load(std::memory_order_acquire); }

}  // namespace kube
