#pragma once

#include <kube/detail/initiate.hpp>
#include <kube/detail/buffers.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace kube {

/// Options of a pod log request (`GET pods/<name>/log`). Unset fields are
/// not sent (the server's defaults).
struct log_params {
  std::string container = {};                   ///< required when the pod has several containers
  bool follow = false;                          ///< keep streaming new lines until the container ends
  bool previous = false;                        ///< the previous (crashed) instance of the container
  bool timestamps = false;                      ///< prefix every line with an RFC 3339 timestamp
  std::optional<long long> tail_lines = {};     ///< only the last N lines
  std::optional<long long> since_seconds = {};  ///< only lines newer than N seconds
  /// Only lines at or after this time, RFC 3339 (`2024-05-01T10:00:00Z`), sent
  /// as `sinceTime`. At most one of since_seconds and since_time: with both,
  /// async_logs fails with client_errc::invalid_config (the server refuses
  /// them too).
  std::string since_time = {};
  std::optional<long long> limit_bytes = {};  ///< stop after about N bytes
  std::size_t max_line = 1 << 20;             ///< a longer line is delivered in pieces of this size
};

namespace detail {
struct log_state;
void start_log_read_line(const std::shared_ptr<log_state>& state, completion<std::string> handler);
void start_log_read_some(const std::shared_ptr<log_state>& state, boost::asio::mutable_buffer b,
                         completion<std::size_t> handler);
[[nodiscard]] boost::asio::any_io_executor log_executor(const std::shared_ptr<log_state>& state);
void close_log(const std::shared_ptr<log_state>& state);
bool log_is_open(const std::shared_ptr<log_state>& state) noexcept;
}  // namespace detail

/// A pod's log, read from one HTTP response on a dedicated connection (like
/// a watch: not pooled, no request timeout, so `follow` can run for as long
/// as the container does). Obtained from kube::async_logs (kube/streams/pod_streams.hpp). Two ways
/// to read it, over one buffer:
///
/// - async_read_line() completes with the next line, without its `'\n'` (a
///   carriage return before it is kept: it is part of the log); a line
///   longer than log_params::max_line comes in pieces.
/// - async_read_some() makes the stream an Asio AsyncReadStream: it
///   completes with the bytes that arrived, as they came (`asio::async_read`,
///   `async_read_until` and the rest work on it).
///
/// Both take from the same buffer of received bytes, in order, each byte
/// once, so they can be mixed: a line read after async_read_some stopped in
/// the middle of one is the rest of that line. (Bytes an Asio algorithm
/// has read into its own dynamic buffer, past the delimiter of
/// async_read_until for example, are no longer in the stream's.)
///
/// At the end of the log both complete with `boost::asio::error::eof` (a
/// final line without '\n' is delivered first), and keep doing so. A broken
/// connection completes with its Asio/system code after the bytes received
/// before it. Either read on a default-constructed stream gives
/// client_errc::protocol_error.
///
/// Errors of the request itself (no such pod or container, a pod without a
/// node, forbidden) are reported by async_logs, with the server's Status.
///
/// Thread safety: copies share one stream; one read (line or some) at a
/// time; its work runs on the client's strand (get_executor()). close() and
/// is_open() may be called from any thread.
/// Cancellation: per operation, terminal only; cancelling a read ends the
/// stream (it and later reads complete with operation_aborted, what was
/// buffered is dropped). close() does the same to a pending read; without
/// one, later reads give what was buffered, then eof.
class log_stream {
public:
  using executor_type = boost::asio::any_io_executor;

  log_stream() = default;
  explicit log_stream(std::shared_ptr<detail::log_state> s)
      : state_(std::move(s)) {}

  /// Completion: void(error_code, std::string).
  template <class Token = use_awaitable_t>
  auto async_read_line(Token&& token = {}) {
    return detail::initiate<std::string>(
        [state = state_](detail::completion<std::string> h) { detail::start_log_read_line(state, std::move(h)); },
        std::forward<Token>(token));
  }

  /// Completion: void(error_code, std::size_t). Reads into the first
  /// non-empty buffer of `buffers`; an empty one completes at once with 0.
  template <class MutableBuffers, class Token = use_awaitable_t>
  auto async_read_some(const MutableBuffers& buffers, Token&& token = {}) {
    return detail::initiate<std::size_t>(
        [state = state_, b = detail::first_mutable(buffers)](detail::completion<std::size_t> h) {
          detail::start_log_read_some(state, b, std::move(h));
        },
        std::forward<Token>(token));
  }

  /// The client's strand, where reads run (an empty executor for a
  /// default-constructed stream).
  [[nodiscard]] executor_type get_executor() const { return detail::log_executor(state_); }

  void close() { detail::close_log(state_); }
  [[nodiscard]] bool is_open() const noexcept { return detail::log_is_open(state_); }

private:
  std::shared_ptr<detail::log_state> state_;
};

}  // namespace kube
