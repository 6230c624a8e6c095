#pragma once

// Internal to libkube's sources: the shared state behind kube::client.

#include "config/auth.hpp"
#include "transport/endpoint.hpp"
#include "transport/retry_policy.hpp"
#include "transport/tls_context.hpp"
#include "transport/status.hpp"

#include <kube/base/token_bucket.hpp>
#include <kube/detail/initiate.hpp>
#include <kube/detail/spawn.hpp>
#include <kube/base/strand.hpp>
#include <kube/detail/transport_params.hpp>
#include <kube/diagnostics.hpp>
#include <kube/error.hpp>
#include <kube/transport/request.hpp>
#include <kube/transport/response.hpp>

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
#include <boost/beast/http/message.hpp>
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

namespace kube {
// The rest part's write observers (kube/rest/write_observer.hpp): the
// client keeps them, the typed and dynamic clients tell them of writes.
struct written_object;
class write_observer;
}  // namespace kube

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

struct body_stream;  // transport/body_stream.hpp

/// How open_stream opens and reads a stream.
struct stream_params {
  bool throttled = false;  ///< wait for the rate limiter first
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
  boost::asio::awaitable<result<std::shared_ptr<body_stream>>> open_stream(request req, stream_params p);

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

}  // namespace kube::detail
