#pragma once

#include <kube/detail/initiate.hpp>
#include <kube/watch/watch_event.hpp>

#include <memory>

namespace kube {

namespace detail {
struct watch_state;
struct watch_stream_access;
void start_watch_next(const std::shared_ptr<watch_state>& state, completion<watch_event> handler);
}  // namespace detail

/// An open watch: one dedicated HTTP connection streaming events
/// (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) until the server ends it
/// (timeoutSeconds, an ERROR event) or it is closed. Obtained from
/// kube::client::async_watch.
///
/// async_next() completes with the next event, or with
/// `boost::asio::error::eof` once the server has ended the stream cleanly.
/// A malformed event completes with client_errc::watch_stream_error (the
/// diagnostics name the request and the byte offset) and the stream is then
/// done; a broken connection completes with its Asio/system code. Events
/// decoded before a failure are delivered first. An ended stream keeps
/// answering with the same code (eof after a clean end).
/// async_next on a default-constructed stream gives watch_stream_error.
/// ERROR events are delivered as events: watch_event_error() maps them to
/// an error code (e.g. api_errc::expired for a too old resourceVersion).
///
/// Thread safety: copies share one stream. One async_next at a time per
/// stream (the reads share one parser): a second one while the first waits
/// completes with `boost::asio::error::in_progress` and leaves the first
/// alone. Its work runs on the client's strand. close() and is_open() may
/// be called from any thread.
///
/// Cancellation: per operation, through the token's cancellation slot,
/// terminal only (as kube::client). Cancelling async_next ends the stream:
/// it and every later async_next complete with operation_aborted. close()
/// does the same to a pending async_next; with none pending, later calls
/// complete with eof.
class watch_stream {
public:
  watch_stream() = default;
  explicit watch_stream(std::shared_ptr<detail::watch_state> s)
      : state_(std::move(s)) {}

  /// Completion: void(error_code, watch_event).
  template <class CompletionToken = use_awaitable_t>
  auto async_next(CompletionToken&& token = {}) {
    return detail::initiate<watch_event>(
        [state = state_](detail::completion<watch_event> h) { detail::start_watch_next(state, std::move(h)); },
        std::forward<CompletionToken>(token));
  }

  /// Closes the connection; a pending async_next completes with operation_aborted.
  void close();

  [[nodiscard]] bool is_open() const noexcept;

private:
  friend struct detail::watch_stream_access;
  std::shared_ptr<detail::watch_state> state_;
};

}  // namespace kube
