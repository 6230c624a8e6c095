#pragma once

// A scripted lister_watcher for tests (client-go's FakeControllerSource in
// spirit): the test queues list answers and watches (events, errors, how the
// stream ends), the Reflector consumes them in order, and every request's
// parameters are recorded so tests can check the resourceVersion, limit,
// continue token, timeoutSeconds ... of each call.

#include <kube/informer/lister_watcher.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kube::informer {

namespace detail {

/// One parked coroutine, woken by `notify` or cancelled (terminal):
/// single-threaded, for fakes.
class parked {
public:
  parked() = default;
  parked(const parked&) = delete;
  parked& operator=(const parked&) = delete;
  ~parked() {
    if (slot_.is_connected()) {
      slot_.clear();
    }
  }

  /// Suspends until notify(); throws system_error(operation_aborted) when
  /// cancelled. One waiter at a time.
  boost::asio::awaitable<void> wait() {
    co_await boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(error_code)>(
        [this](auto handler) {
          ex_ = boost::asio::get_associated_executor(handler);
          boost::asio::any_completion_handler<void(error_code)> h(std::move(handler));
          h.swap(h_);  // not move-assignment: it recurses in Boost 1.81
          // The type-erased handler forwards cancellation through its own
          // slot (it took over the original one).
          slot_ = h_.get_cancellation_slot();
          if (slot_.is_connected()) {
            slot_.assign(
                [this](boost::asio::cancellation_type) { finish(boost::asio::error::operation_aborted, true); });
          }
        },
        boost::asio::use_awaitable);
  }

  void notify() { finish({}, false); }
  [[nodiscard]] bool waiting() const noexcept { return static_cast<bool>(h_); }

private:
  void finish(error_code ec, bool from_slot) {
    if (!h_) {
      return;
    }
    if (!from_slot && slot_.is_connected()) {
      slot_.clear();
    }
    slot_ = {};
    auto h = std::move(h_);
    boost::asio::post(ex_, [h = std::move(h), ec]() mutable { std::move(h)(ec); });
  }

  boost::asio::any_completion_handler<void(error_code)> h_;
  boost::asio::any_io_executor ex_;
  boost::asio::cancellation_slot slot_;
};

}  // namespace detail

/// The scripted lister_watcher. Lists and watches are answered from two
/// queues, in order; a call finding its queue empty waits until the test
/// queues an answer (or the caller is cancelled), so a test can run the
/// io_context until idle and then inspect what the Reflector asked for.
///
/// A queued watch either fails to open (`open_ec`) or opens a stream that
/// delivers `events` and then ends as `end` says: cleanly (eof), or not at
/// all (hang: waits for `push` / `finish` on the stream, see `stream(i)`).
///
/// Thread safety: none; single-threaded tests.
template <class T>
class fake_lister_watcher final : public lister_watcher<T> {
public:
  using object_ptr = std::shared_ptr<const T>;

  enum class stream_end { eof, hang };

  struct watch_script {
    error_code open_ec = {};
    diagnostics open_diag = {};
    std::vector<event<T>> events = {};
    stream_end end = stream_end::hang;
  };

  /// The state of one opened stream; tests push more events into it.
  class stream_state {
  public:
    void push(event<T> ev) {
      events_.push_back(std::move(ev));
      wake_.notify();
    }
    /// Ends the stream cleanly once the queued events are read.
    void finish() {
      ended_ = true;
      wake_.notify();
    }
    [[nodiscard]] bool closed_by_client() const noexcept { return closed_; }
    [[nodiscard]] std::size_t delivered() const noexcept { return delivered_; }

  private:
    friend class fake_lister_watcher;
    std::deque<event<T>> events_;
    bool ended_ = false;
    bool closed_ = false;
    bool errored_ = false;
    std::size_t delivered_ = 0;
    detail::parked wake_;
  };

  // ---- scripting ---------------------------------------------------------
  void push_list(list_result<T> page) {
    lists_.push_back(list_outcome<T>{{}, {}, std::move(page)});
    list_wake_.notify();
  }
  void push_list(std::vector<object_ptr> items, std::string rv, std::string continue_token = {}) {
    push_list(list_result<T>{std::move(items), std::move(rv), std::move(continue_token)});
  }
  void push_list_error(error_code ec, std::string message = {}) {
    list_outcome<T> o;
    o.ec = ec;
    o.diag.set_client_message(std::move(message));
    lists_.push_back(std::move(o));
    list_wake_.notify();
  }
  void push_list_error(error_code ec, diagnostics diag) {
    list_outcome<T> o;
    o.ec = ec;
    o.diag = std::move(diag);
    lists_.push_back(std::move(o));
    list_wake_.notify();
  }
  void push_watch(watch_script w) {
    watches_.push_back(std::move(w));
    watch_wake_.notify();
  }
  void push_watch(std::vector<event<T>> events, stream_end end = stream_end::hang) {
    push_watch(watch_script{{}, {}, std::move(events), end});
  }
  void push_watch_error(error_code ec, std::string message = {}) {
    watch_script w;
    w.open_ec = ec;
    w.open_diag.set_client_message(std::move(message));
    push_watch(std::move(w));
  }

  // ---- event builders ----------------------------------------------------
  static event<T> added(object_ptr o) { return with_object(event_type::added, std::move(o)); }
  static event<T> modified(object_ptr o) { return with_object(event_type::modified, std::move(o)); }
  static event<T> deleted(object_ptr o) { return with_object(event_type::deleted, std::move(o)); }
  static event<T> bookmark(std::string rv, bool initial_events_end = false) {
    event<T> e;
    e.type = event_type::bookmark;
    e.resource_version = std::move(rv);
    e.initial_events_end = initial_events_end;
    return e;
  }
  static event<T> error(error_code ec, std::string message = {}) {
    event<T> e;
    e.type = event_type::error;
    e.ec = ec;
    e.diag.set_client_message(std::move(message));
    return e;
  }

  // ---- what was asked ----------------------------------------------------
  [[nodiscard]] const std::vector<list_params>& list_calls() const noexcept { return list_calls_; }
  [[nodiscard]] const std::vector<watch_params>& watch_calls() const noexcept { return watch_calls_; }
  /// The i-th stream opened (0-based).
  [[nodiscard]] const std::shared_ptr<stream_state>& stream(std::size_t i) const { return streams_.at(i); }
  [[nodiscard]] std::size_t streams_opened() const noexcept { return streams_.size(); }
  [[nodiscard]] bool list_waiting() const noexcept { return list_wake_.waiting(); }
  [[nodiscard]] bool watch_waiting() const noexcept { return watch_wake_.waiting(); }

  // ---- lister_watcher ----------------------------------------------------
  boost::asio::awaitable<list_outcome<T>> list(const list_params& params) override {
    list_calls_.push_back(params);
    while (lists_.empty()) {
      co_await list_wake_.wait();
    }
    auto o = std::move(lists_.front());
    lists_.pop_front();
    co_return o;
  }

  boost::asio::awaitable<watch_outcome<T>> watch(const watch_params& params) override {
    watch_calls_.push_back(params);
    while (watches_.empty()) {
      co_await watch_wake_.wait();
    }
    auto w = std::move(watches_.front());
    watches_.pop_front();
    watch_outcome<T> out;
    if (w.open_ec) {
      out.ec = w.open_ec;
      out.diag = std::move(w.open_diag);
      co_return out;
    }
    auto st = std::make_shared<stream_state>();
    for (auto& e : w.events) {
      st->events_.push_back(std::move(e));
    }
    st->ended_ = w.end == stream_end::eof;
    streams_.push_back(st);
    out.stream = std::make_unique<fake_stream>(st);
    co_return out;
  }

private:
  class fake_stream final : public event_stream<T> {
  public:
    explicit fake_stream(std::shared_ptr<stream_state> s)
        : s_(std::move(s)) {}
    ~fake_stream() override { s_->closed_ = true; }
    boost::asio::awaitable<std::optional<event<T>>> next() override {
      for (;;) {
        if (s_->closed_ || s_->errored_) {
          co_return std::nullopt;
        }
        if (!s_->events_.empty()) {
          auto e = std::move(s_->events_.front());
          s_->events_.pop_front();
          ++s_->delivered_;
          if (e.type == event_type::error) {
            s_->errored_ = true;
          }
          co_return e;
        }
        if (s_->ended_) {
          co_return std::nullopt;
        }
        co_await s_->wake_.wait();
      }
    }
    void close() override {
      s_->closed_ = true;
      s_->wake_.notify();
    }

  private:
    std::shared_ptr<stream_state> s_;
  };

  static event<T> with_object(event_type t, object_ptr o) {
    event<T> e;
    e.type = t;
    if (o) {
      e.resource_version = std::string(o->resource_version());
    }
    e.object = std::move(o);
    return e;
  }

  std::deque<list_outcome<T>> lists_;
  std::deque<watch_script> watches_;
  std::vector<list_params> list_calls_;
  std::vector<watch_params> watch_calls_;
  std::vector<std::shared_ptr<stream_state>> streams_;
  detail::parked list_wake_;
  detail::parked watch_wake_;
};

}  // namespace kube::informer
