#pragma once

#include <kube/detail/initiate.hpp>

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
  std::optional<long long> limit_bytes = {};    ///< stop after about N bytes
  std::size_t max_line = 1 << 20;               ///< a longer line is delivered in pieces of this size
};

namespace detail {
struct log_state;
void start_log_read_line(const std::shared_ptr<log_state>& state, completion<std::string> handler);
void close_log(const std::shared_ptr<log_state>& state);
bool log_is_open(const std::shared_ptr<log_state>& state) noexcept;
}  // namespace detail

/// A pod's log as a stream of lines, read from one HTTP response on a
/// dedicated connection (like a watch: not pooled, no request timeout, so
/// `follow` can run for as long as the container does). Obtained from
/// kube::api<Pod>::async_logs.
///
/// async_read_line() completes with the next line, without its `'\n'` (a carriage
/// return before it is kept: it is part of the log); a line longer than
/// log_params::max_line comes in pieces. After the last line it completes
/// with `boost::asio::error::eof` (a final line without '\n' is delivered
/// first), and keeps doing so. A broken connection completes with its
/// Asio/system code after the lines received before it.
/// async_read_line on a default-constructed stream gives client_errc::protocol_error.
///
/// Errors of the request itself (no such pod or container, a pod without a
/// node, forbidden) are reported by async_logs, with the server's Status.
///
/// Thread safety: copies share one stream; one async_read_line at a time;
/// its work runs on the client's strand. close() and is_open() may be
/// called from any thread.
/// Cancellation: per operation, terminal only; cancelling async_read_line
/// ends the stream (it and later reads complete with operation_aborted).
/// close() does the same to a pending read.
class log_stream {
public:
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

  void close() { detail::close_log(state_); }
  [[nodiscard]] bool is_open() const noexcept { return detail::log_is_open(state_); }

private:
  std::shared_ptr<detail::log_state> state_;
};

}  // namespace kube
