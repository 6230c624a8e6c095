#pragma once

// Where the SDK reads the time.
//
// Decisions (which delayed item is ready, how long a rate limiter or a backoff
// makes someone wait, when a resync is due) take `now` from a clock; Asio
// timers only carry out "wake me at t". Production uses real_clock()
// (std::chrono::steady_clock); tests use manual_clock, which moves only when
// told to, so no test sleeps. The workqueue, the informer and the client's
// users share this one interface (target kube::base).

#include <chrono>
#include <functional>

namespace kube {

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

  /// True when time moves only on request (manual_clock): waiters then
  /// register with on_advance instead of arming a real timer.
  [[nodiscard]] virtual bool is_manual() const noexcept { return false; }

  /// Registers `listener`, called after every manual advance; it is dropped
  /// once it returns false. `due` is the time the listener waits for, when it
  /// waits for one (a sleep): manual_clock calls due listeners in `due` order
  /// and reports them to tests; time_point::max() means "any advance". A real
  /// clock never calls it. Thread-safe.
  virtual void on_advance(std::function<bool()> listener, time_point due) const {
    (void)listener;
    (void)due;
  }
};

/// The process-wide steady clock. Thread-safe; lives for the whole program.
[[nodiscard]] const clock& real_clock() noexcept;

}  // namespace kube
