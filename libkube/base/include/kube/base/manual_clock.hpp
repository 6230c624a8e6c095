#pragma once

// A clock that moves only when told to: for tests, so delays, backoffs,
// resyncs and token buckets are checked exactly and without sleeping.

#include <kube/base/clock.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace kube {

/// Thread safety: now(), advance(), set(), on_advance() and the test
/// accessors may be called from any thread. Waiters (queues, sleeps) are
/// woken through on_advance: after advance(), run their executor (e.g.
/// io_context::poll()) to let them act.
class manual_clock final : public clock {
public:
  /// Starts at an arbitrary but fixed point (one hour after the steady epoch),
  /// so `now() - 1h` is still a valid time.
  manual_clock() noexcept;
  explicit manual_clock(time_point start) noexcept;

  [[nodiscard]] time_point now() const noexcept override;
  [[nodiscard]] bool is_manual() const noexcept override { return true; }
  void on_advance(std::function<bool()> listener, time_point due) const override;

  /// Moves time forward by `d` (>= 0) and notifies listeners.
  void advance(duration d);
  /// Sets the time (never earlier than now()) and notifies listeners.
  void set(time_point t);

  // For tests that pin waits exactly (backoff sequences, resync periods).
  // A "wait" is a listener registered with a due time (not time_point::max()).

  /// Every wait's length (due - now() when it was registered), in call order.
  [[nodiscard]] std::vector<duration> sleeps() const;
  /// Waits registered and not yet dropped (a cancelled wait is dropped at the
  /// next advance).
  [[nodiscard]] std::size_t pending() const;
  /// The time left until the earliest pending wait is due (zero if none).
  [[nodiscard]] duration next_wake_in() const;

private:
  struct waiter {
    time_point due;
    std::function<bool()> fn;
  };
  void notify();

  std::atomic<std::int64_t> now_ns_;
  mutable std::mutex mutex_;  // guards listeners_ and sleeps_; a test utility, not a hot path
  mutable std::vector<waiter> listeners_;
  mutable std::vector<duration> sleeps_;
};

}  // namespace kube
