#pragma once

// Time for the informer: "now" and "wait d". The Reflector's backoff, watch
// timeouts and the informer's resync take both from a clock object, so unit
// tests drive them with manual_clock (time moves only when the test says so)
// and never sleep.

#include <kube/error.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <utility>
#include <vector>

namespace kube::informer {

/// The informer's clock: `now()` and an awaitable `sleep(d)`.
///
/// `sleep` completes after `d` (by this clock), or throws
/// boost::system::system_error(operation_aborted) when the awaiting
/// coroutine is cancelled (terminal cancellation).
class clock {
public:
  using duration = std::chrono::steady_clock::duration;
  using time_point = std::chrono::steady_clock::time_point;

  clock() = default;
  clock(const clock&) = delete;
  clock& operator=(const clock&) = delete;
  virtual ~clock() = default;

  [[nodiscard]] virtual time_point now() const = 0;
  virtual boost::asio::awaitable<void> sleep(duration d) = 0;
};

/// std::chrono::steady_clock and an Asio steady_timer on the coroutine's
/// executor. Stateless: one instance may serve any number of informers on
/// any threads.
class steady_clock final : public clock {
public:
  [[nodiscard]] time_point now() const override { return std::chrono::steady_clock::now(); }
  boost::asio::awaitable<void> sleep(duration d) override {
    boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
    t.expires_after(d);
    co_await t.async_wait(boost::asio::use_awaitable);
  }
};

/// The process-wide steady_clock.
inline const std::shared_ptr<clock>& default_clock() {
  static const std::shared_ptr<clock> c = std::make_shared<steady_clock>();
  return c;
}

/// A clock for tests: time moves only through `advance`. Sleepers whose
/// deadline is reached are resumed (posted to their executor) in deadline
/// order. `sleeps()` records every requested duration, so tests can check
/// backoff sequences exactly.
///
/// Thread safety: none; use it from the thread that runs the io_context
/// (the usual single-threaded unit test).
class manual_clock final : public clock {
public:
  explicit manual_clock(time_point start = time_point{} + std::chrono::hours(1)) : now_(start) {}

  [[nodiscard]] time_point now() const override { return now_; }

  boost::asio::awaitable<void> sleep(duration d) override {
    sleeps_.push_back(d);
    co_await boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(error_code)>(
        [this, d](auto handler) {
          boost::asio::any_io_executor ex = boost::asio::get_associated_executor(handler);
          auto it = waiters_.insert(waiters_.end(), waiter{now_ + d, {}, {}, ex});
          // Boost 1.81's any_completion_handler move-assignment recurses
          // forever (it copies through its converting constructor): swap.
          boost::asio::any_completion_handler<void(error_code)> h(std::move(handler));
          h.swap(it->handler);
          // The type-erased handler forwards cancellation through its own slot.
          it->slot = it->handler.get_cancellation_slot();
          if (it->slot.is_connected()) {
            it->slot.assign(
                [this, it](boost::asio::cancellation_type) { complete(it, boost::asio::error::operation_aborted, true); });
          }
        },
        boost::asio::use_awaitable);
  }

  /// Moves time forward and wakes the sleepers that are due.
  void advance(duration d) {
    now_ += d;
    for (;;) {
      auto due = std::min_element(waiters_.begin(), waiters_.end(),
                                  [](const waiter& a, const waiter& b) { return a.deadline < b.deadline; });
      if (due == waiters_.end() || due->deadline > now_) {
        break;
      }
      complete(due, {}, false);
    }
  }

  /// Every duration passed to sleep, in call order.
  [[nodiscard]] const std::vector<duration>& sleeps() const noexcept { return sleeps_; }
  /// Sleepers not yet woken.
  [[nodiscard]] std::size_t pending() const noexcept { return waiters_.size(); }
  /// The time left for the earliest sleeper (zero if none).
  [[nodiscard]] duration next_wake_in() const {
    duration best = duration::max();
    for (const auto& w : waiters_) {
      best = std::min(best, w.deadline - now_);
    }
    return waiters_.empty() ? duration::zero() : best;
  }

private:
  struct waiter {
    time_point deadline;
    boost::asio::any_completion_handler<void(error_code)> handler;
    boost::asio::cancellation_slot slot;
    boost::asio::any_io_executor ex;
  };

  void complete(std::list<waiter>::iterator it, error_code ec, bool from_slot) {
    if (!from_slot && it->slot.is_connected()) {
      it->slot.clear();
    }
    auto h = std::move(it->handler);
    auto ex = it->ex;
    waiters_.erase(it);
    boost::asio::post(ex, [h = std::move(h), ec]() mutable { std::move(h)(ec); });
  }

  time_point now_;
  std::list<waiter> waiters_;
  std::vector<duration> sleeps_;
};

} // namespace kube::informer
