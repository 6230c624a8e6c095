#pragma once

// A clock that moves only when told to: for tests, so delays, backoffs and
// token buckets are checked exactly and without sleeping.

#include <kube/workqueue/clock.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace kube::workqueue {

/// Thread safety: now(), advance(), set() and on_advance() may be called from
/// any thread. Queues that use this clock are woken through on_advance: after
/// advance(), run their executor (e.g. io_context::poll()) to let them act.
class manual_clock final : public clock {
 public:
  /// Starts at an arbitrary but fixed point (one hour after the steady epoch),
  /// so `now() - 1h` is still a valid time.
  manual_clock() noexcept;
  explicit manual_clock(time_point start) noexcept;

  [[nodiscard]] time_point now() const noexcept override;
  [[nodiscard]] bool is_manual() const noexcept override { return true; }
  void on_advance(std::function<bool()> listener) const override;

  /// Moves time forward by `d` (>= 0) and notifies listeners.
  void advance(duration d);
  /// Sets the time (never earlier than now()) and notifies listeners.
  void set(time_point t);

 private:
  void notify();

  std::atomic<std::int64_t> now_ns_;
  mutable std::mutex mutex_;  // guards listeners_ only; a test utility, not a hot path
  mutable std::vector<std::function<bool()>> listeners_;
};

}  // namespace kube::workqueue
