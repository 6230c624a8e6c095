#pragma once

// Where the workqueue reads the time.
//
// Decisions (which delayed item is ready, how long a rate limiter makes an item
// wait) take `now` from a clock; the Asio timer only carries out "wake me at t".
// Production uses real_clock() (std::chrono::steady_clock); tests use
// manual_clock, which moves only when told to, so no test sleeps.

#include <chrono>
#include <functional>

namespace kube::workqueue {

class clock {
 public:
  using duration = std::chrono::steady_clock::duration;      // nanoseconds
  using time_point = std::chrono::steady_clock::time_point;  // steady, never jumps back

  clock() = default;
  clock(const clock&) = delete;
  clock& operator=(const clock&) = delete;
  virtual ~clock() = default;

  /// The current time. Thread-safe.
  [[nodiscard]] virtual time_point now() const noexcept = 0;

  /// True when time moves only on request (manual_clock): queues then wait
  /// for on_advance notifications instead of arming a real timer.
  [[nodiscard]] virtual bool is_manual() const noexcept { return false; }

  /// Registers `listener`, called after every manual advance; it is dropped
  /// once it returns false. A real clock never calls it. Thread-safe.
  virtual void on_advance(std::function<bool()> listener) const { (void)listener; }
};

/// The process-wide steady clock. Thread-safe; lives for the whole program.
[[nodiscard]] const clock& real_clock() noexcept;

}  // namespace kube::workqueue
