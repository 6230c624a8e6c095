// Pod logs: GET pods/<name>/log on a dedicated connection, the body read
// piecewise (a streamed body, transport/body_stream.hpp, as a watch's) into
// one buffer that both readers take from: lines
// (async_read_line) and bytes (async_read_some).
#include "tools/complete_now.hpp"
#include "transport/body_stream.hpp"

#include <kube/streams/pod_streams.hpp>
#include <kube/streams/log_stream.hpp>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <cstring>

namespace kube::detail {
namespace asio = boost::asio;
namespace http = boost::beast::http;

// The bytes received and not yet returned are in `pending` from `pos`; both
// reads take from there, so lines and raw reads can be mixed.
struct log_state {
  std::shared_ptr<body_stream> io;  // connection, body parser, read_some, close
  std::string pending;              // bytes received, not yet returned
  std::size_t pos = 0;              // start of the next unread byte in pending
  std::size_t scanned = 0;          // pending[pos, scanned) holds no '\n'
  std::size_t max_line = 1 << 20;
  bool ended = false;  // no more bytes will come
  error_code failure;
  diagnostics failure_diag;

  [[nodiscard]] std::size_t available() const { return pending.size() - pos; }

  void consume(std::size_t n) {
    pos += n;
    scanned = std::max(scanned, pos);
    if (pos > 0 && pos * 2 >= pending.size()) {
      pending.erase(0, pos);
      scanned -= pos;
      pos = 0;
    }
  }

  template <class T>
  result<T> end_result() const {
    result<T> r;
    r.ec = failure ? failure : error_code(asio::error::eof);
    r.diag = failure_diag;
    return r;
  }

  // Receives the next piece of the body into `pending`, or sets `ended`.
  // A cancelled read drops what was buffered: the stream ends there.
  asio::awaitable<void> fill() {
    if (ended) co_return;
    if (io->done || io->parser.is_done()) {
      ended = true;
      io->close();
      co_return;
    }
    std::size_t n = 0;
    const auto ec = co_await io->read_some(n);
    pending.append(io->buf.data(), n);
    if (!ec) co_return;
    ended = true;
    io->close();
    const bool closed = body_stream::connection_closed(ec);
    if (closed && io->parser.is_done()) {
      co_return;
    }
    failure = closed ? error_code(http::error::partial_message) : ec;
    // A connection closed before the body's last chunk is not the log's end
    // (Go reads it as io.ErrUnexpectedEOF): the server or a proxy went away.
    failure_diag.set_client_message(io->req.describe() + ": " +
                                    (closed ? "the connection closed before the end of the log (no last chunk): "
                                              "the server or a proxy went away"
                                            : ec.message()));
    if (ec == asio::error::operation_aborted) pending.clear(), pos = scanned = 0;
  }

  asio::awaitable<result<std::string>> next_line() {
    for (;;) {
      result<std::string> r;
      if (const auto nl = pending.find('\n', scanned); nl != std::string::npos) {
        r.value.assign(pending, pos, nl - pos);
        consume(nl + 1 - pos);
        co_return r;
      }
      scanned = pending.size();
      if (available() >= max_line || (ended && available() > 0)) {
        const std::size_t n = std::min(available(), max_line);
        r.value.assign(pending, pos, n);
        consume(n);
        co_return r;
      }
      if (ended) co_return end_result<std::string>();
      co_await fill();
    }
  }

  asio::awaitable<result<std::size_t>> read_some(asio::mutable_buffer b) {
    result<std::size_t> r;
    if (b.size() == 0) co_return r;
    while (available() == 0 && !ended) co_await fill();
    if (available() == 0) co_return end_result<std::size_t>();
    r.value = std::min(b.size(), available());
    std::memcpy(b.data(), pending.data() + pos, r.value);
    consume(r.value);
    co_return r;
  }
};

void start_pod_logs(client c, std::string ns, std::string name, log_params p, completion<log_stream> h) {
  const auto& impl = detail::client_access::impl(c);
  std::string what = "logs of pods";
  if (!ns.empty()) what += " in namespace " + ns;
  what += " \"" + name + "\"";
  std::string refusal;
  if (name.empty() || ns.empty()) {
    refusal = what + ": needs a pod name and an api bound to a namespace";
  } else if (p.since_seconds && !p.since_time.empty()) {
    // The server's own words (ValidatePodLogOptions) for sinceSeconds with sinceTime.
    refusal = what + ": log_params: at most one of since_seconds and since_time may be set";
  }
  if (!refusal.empty()) {
    spawn_operation(
        impl->strand,
        [refusal]() -> asio::awaitable<result<log_stream>> {
          result<log_stream> r;
          r.ec = client_errc::invalid_config;
          r.diag.set_client_message(refusal);
          co_return r;
        },
        std::move(h), finish_result{});
    return;
  }
  request req;
  req.version("v1").resource("pods").namespace_(ns).name(name).subresource("log");
  req.accept("*/*");
  if (!p.container.empty()) req.param("container", p.container);
  if (p.follow) req.param("follow", "true");
  if (p.previous) req.param("previous", "true");
  if (p.timestamps) req.param("timestamps", "true");
  if (p.tail_lines) req.param("tailLines", std::to_string(*p.tail_lines));
  if (p.since_seconds) req.param("sinceSeconds", std::to_string(*p.since_seconds));
  if (!p.since_time.empty()) req.param("sinceTime", p.since_time);
  if (p.limit_bytes) req.param("limitBytes", std::to_string(*p.limit_bytes));
  const std::size_t max_line = p.max_line ? p.max_line : 1;
  spawn_operation(
      impl->strand,
      [impl, req = std::move(req), max_line]() mutable -> asio::awaitable<result<log_stream>> {
        auto r = co_await impl->open_stream(std::move(req), {.throttled = true});  // throttled like client-go
        result<log_stream> out{r.ec, std::move(r.diag), {}};
        if (!r.ec) {
          auto st = std::make_shared<log_state>();
          st->io = std::move(r.value);
          st->max_line = max_line;
          out.value = log_stream(std::move(st));
        }
        co_return out;
      },
      std::move(h), finish_result{});
}

void start_log_read_line(const std::shared_ptr<log_state>& state, completion<std::string> handler) {
  if (!state) return complete_empty(std::move(handler), "async_read_line on an empty log_stream");
  spawn_operation(
      state->io->impl->strand,
      [state]() -> asio::awaitable<result<std::string>> {
        auto r = co_await state->next_line();
        co_return r;
      },
      std::move(handler), finish_result{});
}

void start_log_read_some(const std::shared_ptr<log_state>& state, asio::mutable_buffer b,
                         completion<std::size_t> handler) {
  if (!state) return complete_empty(std::move(handler), "async_read_some on an empty log_stream");
  spawn_operation(
      state->io->impl->strand,
      [state, b]() -> asio::awaitable<result<std::size_t>> {
        auto r = co_await state->read_some(b);
        co_return r;
      },
      std::move(handler), finish_result{});
}

asio::any_io_executor log_executor(const std::shared_ptr<log_state>& state) {
  return state ? state->io->impl->strand : asio::any_io_executor();
}

void close_log(const std::shared_ptr<log_state>& state) {
  if (!state) return;
  asio::dispatch(state->io->impl->strand, [s = state] { s->io->close(); });
}

bool log_is_open(const std::shared_ptr<log_state>& state) noexcept {
  return state && !state->io->done.load(std::memory_order_acquire);
}

}  // namespace kube::detail
