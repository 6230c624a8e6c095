#pragma once

// Internal to libkube's sources: the shared state behind kube::client.

#include "config/auth.hpp"
#include "transport/endpoint.hpp"
#include "transport/retry_policy.hpp"
#include "transport/tls_context.hpp"
#include "rest/status.hpp"

#include <kube/base/token_bucket.hpp>
#include <kube/detail/initiate.hpp>
#include <kube/detail/spawn.hpp>
#include <kube/base/strand.hpp>
#include <kube/detail/transport_params.hpp>
#include <kube/detail/watch_decoder.hpp>
#include <kube/rest/write_observer.hpp>
#include <kube/watch/watch_stream.hpp>
#include <kube/diagnostics.hpp>
#include <kube/error.hpp>
#include <kube/rest/request.hpp>
#include <kube/rest/response.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/system/system_error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

namespace kube::detail {

/// The completion token of the SDK's own coroutines: results as a tuple
/// with the error code, never an exception.
inline constexpr auto use_tuple = boost::asio::as_tuple(boost::asio::use_awaitable);

/// One HTTP/1.1 connection to the apiserver, plain or TLS.
struct connection {
  using tls_stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;
  // The TLS context the stream was made with (declared first: it outlives
  // the stream), and its tls_source generation.
  std::shared_ptr<boost::asio::ssl::context> tls_context;
  std::uint64_t tls_generation = 0;
  std::variant<std::unique_ptr<boost::beast::tcp_stream>, std::unique_ptr<tls_stream>> stream;
  boost::beast::flat_buffer buffer;
  bool reused = false;

  /// Beast reads at most the buffer's free capacity per call (512 bytes at
  /// least), and the buffer otherwise stays near that size. Asio's TLS
  /// stream completes a read it can serve from an already decrypted record
  /// by posting, so a 16 KB record read 512 bytes at a time cost ~30 trips
  /// through the io_context (14 per watch event of a 7 KB Pod). With room
  /// for a whole record one read takes it.
  static constexpr std::size_t read_capacity = 32 * 1024;
  connection() { buffer.reserve(read_capacity); }

  boost::beast::tcp_stream& tcp();

  /// Calls f(stream) with the concrete stream type; f returns the same type for both.
  template <class F>
  auto visit(F&& f) {
    if (auto* p = std::get_if<std::unique_ptr<boost::beast::tcp_stream>>(&stream)) return f(**p);
    return f(*std::get<std::unique_ptr<tls_stream>>(stream));
  }
};

/// The outcome of one operation as the coroutines pass it around.
template <class T>
struct result {
  error_code ec;
  diagnostics diag;
  T value{};
};

/// The client's rate limiter for `qps` and `burst` (client_config's), as
/// client-go's rest.RESTClientFor builds it: none when qps <= 0; a burst
/// below 1 is taken as 1 so that requests can pass at all.
std::optional<token_bucket> make_rate_limiter(double qps, int burst);

/// Takes a successful (2xx) answer's body piece by piece as it arrives,
/// after gzip decoding, instead of the whole body in response::body (lists
/// decoded as they arrive). start() begins each attempt's body (again after
/// a retry). start(), write() and finish() throw decode_error to stop: the
/// request then fails with client_errc::decode_error, the error's text as
/// the client message (the caller adds what the request was).
struct body_consumer {
  virtual ~body_consumer() = default;
  virtual void start(std::string_view content_type) = 0;
  virtual void write(std::string_view bytes) = 0;
  virtual void finish() = 0;
};

class client_impl;

/// What one request tells the client's metrics (kube/base/metrics.hpp):
/// each attempt, each retry, the rate limiter's wait, and on destruction
/// the time since construction. Does nothing when the client has none.
class request_meter {
public:
  request_meter(const client_impl& c, const request& req);
  request_meter(const request_meter&) = delete;
  request_meter& operator=(const request_meter&) = delete;
  ~request_meter();

  /// An attempt ended: `code` the HTTP status (0: no answer).
  void attempt(int code, std::size_t response_bytes);
  /// The attempt that just ended is tried again.
  void retry(int code);
  void throttled(std::chrono::steady_clock::duration waited);

private:
  [[nodiscard]] metrics::request_attempt record(int code, std::size_t response_bytes) const;

  metrics::client_metrics* m_;
  std::string_view host_;
  std::string_view method_;
  std::string resource_;
  std::size_t request_bytes_ = 0;
  std::chrono::steady_clock::time_point start_;
};

/// How open_stream opens and reads a stream.
struct stream_params {
  bool throttled = false;  ///< wait for the rate limiter first
  /// The decoder keeps ADDED/MODIFIED/DELETED objects as text (typed
  /// watches read them straight into T), or, with `objects` set, reads them
  /// into the type as it frames each event.
  bool raw_objects = false;
  watch_decoder_params::object_reader objects = {};
  /// No byte for this long after the headers: the stream fails with
  /// asio::error::timed_out (0 = never).
  std::chrono::milliseconds idle_timeout{0};
};

class client_impl : public std::enable_shared_from_this<client_impl> {
public:
  client_impl(boost::asio::any_io_executor ex, transport_params s);

  boost::asio::any_io_executor executor;
  boost::asio::any_io_executor strand;  // make_strand_executor(executor)
  transport_params settings;
  endpoint ep;
  /// "the server HOST:PORT": how messages name the apiserver.
  std::string server_text() const { return "the server " + ep.host + ":" + ep.port; }
  std::shared_ptr<metrics::client_metrics> metrics;  // from settings.metrics; null: none
  std::string metrics_host;                          // the host label: host:port
  std::unique_ptr<tls_source> tls;                   // null: plain HTTP
  std::unique_ptr<authenticator> auth;
  std::optional<token_bucket> limiter;  // empty: not throttled

  std::atomic<std::size_t> connections_opened{0};

  /// Tells the write observers (kube/rest/write_observer.hpp) of a successful
  /// write; drops the ones that are gone. Thread-safe.
  void note_written(const written_object& w);
  void add_write_observer(std::weak_ptr<write_observer> o);

  /// Waits for the rate limiter's token (told to `meter`); fails only when
  /// cancelled.
  boost::asio::awaitable<error_code> throttle(request_meter& meter);

  /// Runs a unary request with throttling, retries and auth refresh
  /// (transport/retry_policy.hpp decides).
  /// With `consumer`, a 2xx answer's body goes to it as it arrives and
  /// response::body stays empty.
  boost::asio::awaitable<result<response>> run(request req, body_consumer* consumer = nullptr);

  /// Opens a streamed response (watch, logs) on a new connection and reads
  /// its headers (bounded by read_timeout); a refusal is read as a Status.
  boost::asio::awaitable<result<std::shared_ptr<watch_state>>> open_stream(request req, stream_params p);

  /// Opens a watch (open_stream, not throttled: client-go throttles log
  /// streams, not watches).
  boost::asio::awaitable<result<watch_stream>> open_watch(request req, stream_params p);

  /// Opens a new connection (TCP, proxy CONNECT, TLS handshake).
  boost::asio::awaitable<std::unique_ptr<connection>> connect(error_code& ec, diagnostics& diag);

  /// The HTTP headers every request carries (auth, impersonation, UA).
  boost::asio::awaitable<error_code> add_headers(boost::beast::http::request<boost::beast::http::string_body>& req,
                                                 diagnostics& diag);

  boost::beast::http::request<boost::beast::http::string_body> to_http(const request& r) const;

  /// Reports server Warning headers to the hook or the logger.
  void surface_warnings(const std::vector<std::string>& warnings) const;

  /// status_error for this server: a 401 also names the server and which
  /// credentials it refused.
  error_code refusal(unsigned http_status, const std::string& body, const request& req, diagnostics& diag) const;
  /// "<what>: the server H:P refused <which credentials> (HTTP 401 ...)".
  std::string unauthorized(std::string_view what) const;

private:
  std::vector<std::unique_ptr<connection>> idle_;  // touched on the strand only
  std::mutex observers_mutex_;
  std::vector<std::weak_ptr<write_observer>> observers_;  // guarded by observers_mutex_
  std::atomic<bool> any_observer_{false};

  boost::asio::awaitable<result<response>> attempt(const request& req, attempt_outcome& facts, body_consumer* consumer);

  friend class request_meter;
};

/// Where a watch's next event goes (watch_state::async_next): completed
/// once, on the client's strand, with the event or the stream's failure.
struct watch_waiter {
  virtual ~watch_waiter() = default;
  virtual void complete(result<watch_event> r) = 0;
  /// The consumer's cancellation slot (unconnected when it has none).
  boost::asio::cancellation_slot slot;
};

/// An open watch: its connection, the chunked-body parser and the decoder.
/// Touched only on the client's strand.
struct watch_state : std::enable_shared_from_this<watch_state> {
  std::shared_ptr<client_impl> impl;
  request req;
  std::unique_ptr<connection> conn;
  boost::beast::http::response_parser<boost::beast::http::buffer_body> parser;
  watch_decoder decoder;
  std::vector<char> buf = std::vector<char>(64 * 1024);
  std::atomic<bool> done{false};  // written on the strand; is_open() reads it anywhere
  error_code failure;             // reported once the events before it are consumed
  diagnostics failure_diag;
  std::chrono::milliseconds idle_timeout{0};  ///< see stream_params

  // The idle_timeout watchdog: one timer per stream that fires at most once
  // per idle_timeout, instead of a timer wait armed and cancelled around
  // every read (two timer operations and a timerfd update per event).
  std::optional<boost::asio::steady_timer> watchdog;
  std::chrono::steady_clock::time_point read_since{};  ///< when the read in flight started
  bool reading = false;                                ///< a read is in flight
  bool armed = false;                                  ///< the watchdog's wait is pending

  /// Reads the next piece of body into buf; n is how many bytes arrived.
  boost::asio::awaitable<error_code> read_some(std::size_t& n);
  /// Waits until `at`, then closes the stream if a read has been in flight
  /// for idle_timeout, waits again if a younger one is, else stops (the
  /// next read arms it: a stream nobody reads keeps no work pending).
  void arm_watchdog(std::chrono::steady_clock::time_point at);

  /// From any thread: completes `w` on the strand with the next event, the
  /// failure or eof. One waiter at a time (one async_next per stream): a
  /// second while one waits gets asio::error::in_progress. Each
  /// event is read by plain handlers on the strand, no coroutine: the
  /// per-event path of every watch and informer. The waiter's cancellation
  /// (terminal) closes the stream; the read in flight then fails with
  /// operation_aborted, which is what the waiter and later calls get.
  void async_next(std::unique_ptr<watch_waiter> w);

  void end_of_body();
  /// A read ended because the connection closed (a FIN, TLS without
  /// close_notify, Beast's end_of_stream or partial_message): the body's end
  /// if the parser is done, else the body was cut short.
  static bool connection_closed(error_code ec);
  /// Ends the stream with `ec`; `why` (default: from `ec` or the decoder)
  /// follows the request's description in the message.
  void fail(error_code ec, std::string why = {});
  void close();

private:
  bool waiting = false;  ///< a waiter's read is in flight
  void want(std::unique_ptr<watch_waiter> w);
  /// Reads for `w` until an event, failure or end is known.
  void read_for(std::unique_ptr<watch_waiter> w);
  /// The next event, failure or eof when known without reading more.
  std::optional<result<watch_event>> ready();
  /// Takes in what one read brought: n bytes of body and its error.
  void took(error_code ec, std::size_t n);
  /// Before and after each read: the body buffer and the watchdog's state;
  /// end_read returns the read's error as the caller should see it.
  void begin_read();
  error_code end_read(error_code ec, std::size_t& n);
  /// Parses the bytes already in the connection's buffer, as Beast's
  /// http::async_read_some does before it reads, but without the post it
  /// then makes to complete (a scheduler trip, and an epoll_wait, for every
  /// chunk header and chunk of every event). True when that ends the read
  /// (`ec` says how); false when the parser needs bytes from the socket.
  bool parse_buffered(error_code& ec);
  /// After a read (from the socket or the buffer) ended with `ec`: takes
  /// in its body bytes and completes `w` with what is ready (see ready()),
  /// if anything; true when it did.
  bool after_read(watch_waiter& w, error_code ec);
};

/// The library's own way into a watch_stream's state.
struct watch_stream_access {
  static const std::shared_ptr<watch_state>& state(const watch_stream& w) noexcept { return w.state_; }
};

/// spawn_operation's `finish` for the client's coroutines: an exception
/// becomes a code (operation_aborted when Asio throws it at the next
/// co_await after a cancellation), and a failure carries no partial value.
struct finish_result {
  template <class T>
  std::tuple<error_code, diagnostics, T> operator()(std::exception_ptr e, result<T> r) const {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const boost::system::system_error& x) {
        r.ec = x.code();
        r.diag.set_client_message(x.what());
      } catch (const std::exception& x) {
        r.ec = client_errc::protocol_error;
        r.diag.set_client_message(std::string("internal error: ") + x.what());
      }
    }
    if constexpr (std::is_same_v<T, response>) {
      if (r.ec) r.value.diag = r.diag;  // a failed answer still carries status and body
    } else {
      if (r.ec) r.value = T{};  // no partial results on failure
    }
    return {r.ec, std::move(r.diag), std::move(r.value)};
  }
};

/// The watch_waiter of `handler`, an any_completion_handler of
/// void(error_code, diagnostics, R): `deliver(result<watch_event>)` turns
/// the event into the handler's arguments on the strand (an exception
/// there becomes finish_result's code); the handler then runs on its own
/// executor, which is kept busy while the waiter waits.
template <class Handler, class Deliver>
class watch_waiter_for final : public watch_waiter {
public:
  watch_waiter_for(Handler h, Deliver deliver, const boost::asio::any_io_executor& strand)
      : work_(boost::asio::prefer(boost::asio::get_associated_executor(h, strand),
                                  boost::asio::execution::outstanding_work.tracked)),
        handler_(std::move(h)),
        deliver_(std::move(deliver)) {
    slot = boost::asio::get_associated_cancellation_slot(handler_);
  }

  void complete(result<watch_event> r) override {
    if (slot.is_connected()) slot.clear();
    using args_t = std::invoke_result_t<Deliver&, result<watch_event>>;
    args_t args;
    try {
      args = deliver_(std::move(r));
    } catch (...) {
      args = finish_result{}(std::current_exception(), result<std::tuple_element_t<2, args_t>>{});
    }
    boost::asio::dispatch(work_, [h = std::move(handler_), args = std::move(args)]() mutable {
      std::apply(std::move(h), std::move(args));
    });
  }

private:
  using work_t = decltype(boost::asio::prefer(
      std::declval<boost::asio::associated_executor_t<Handler, boost::asio::any_io_executor>>(),
      boost::asio::execution::outstanding_work.tracked));
  work_t work_;
  Handler handler_;
  Deliver deliver_;
};

template <class Handler, class Deliver>
std::unique_ptr<watch_waiter> make_watch_waiter(Handler h, Deliver deliver,
                                                const boost::asio::any_io_executor& strand) {
  return std::make_unique<watch_waiter_for<Handler, Deliver>>(std::move(h), std::move(deliver), strand);
}

}  // namespace kube::detail
