#pragma once

// The rate limiter interface: how long an item should wait before it is
// re-added, given the current time.
//
// Limiters are plain classes: they decide, they never sleep or arm timers. The
// time comes in as `now` so tests drive them with a manual clock.
//
// Thread safety: none of the limiters synchronise. rate_limited_queue calls
// them only on its executor (where worker coroutines call add_rate_limited,
// forget and num_requeues). Used on their own, guard them yourself.

#include <kube/base/clock.hpp>

namespace kube::workqueue {

template <class T>
class rate_limiter {
public:
  using duration = clock::duration;
  using time_point = clock::time_point;

  rate_limiter() = default;
  rate_limiter(const rate_limiter&) = delete;
  rate_limiter& operator=(const rate_limiter&) = delete;
  virtual ~rate_limiter() = default;

  /// How long `item` should wait now; counts as one more failure of `item`.
  [[nodiscard]] virtual duration when(const T& item, time_point now) = 0;
  /// Stops tracking `item` (it succeeded): its backoff starts over.
  virtual void forget(const T& item) = 0;
  /// How many times `item` has been through when() since the last forget().
  [[nodiscard]] virtual int num_requeues(const T& item) const = 0;
};

}  // namespace kube::workqueue
