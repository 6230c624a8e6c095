#pragma once

// Per-item exponential backoff (client-go ItemExponentialFailureRateLimiter):
// the n-th failure of an item (n from 0) waits base * 2^n, capped at max.
// Defaults are the controller defaults: 5 ms base, 1000 s cap.

#include <kube/workqueue/detail/item_counter.hpp>
#include <kube/workqueue/rate_limiter.hpp>

#include <chrono>

namespace kube::workqueue {

namespace detail {
/// base * 2^failures, computed in floating point as client-go does, capped at
/// `max` (also when the product overflows).
[[nodiscard]] clock::duration exponential_backoff(clock::duration base, clock::duration max, int failures) noexcept;
}  // namespace detail

struct exponential_rate_limiter_params {
  clock::duration base_delay = std::chrono::milliseconds(5);  // first retry wait, ns resolution
  clock::duration max_delay = std::chrono::seconds(1000);     // cap on any wait
};

/// Thread safety: not synchronised (see rate_limiter.hpp).
template <class T, class Hash = std::hash<T>, class KeyEqual = std::equal_to<T>>
class exponential_rate_limiter final : public rate_limiter<T> {
public:
  using duration = clock::duration;
  using time_point = clock::time_point;

  explicit exponential_rate_limiter(exponential_rate_limiter_params params = {})
      : params_(params) {}

  duration when(const T& item, time_point /*now*/) override {
    return detail::exponential_backoff(params_.base_delay, params_.max_delay, failures_.increment(item));
  }
  void forget(const T& item) override { failures_.erase(item); }
  int num_requeues(const T& item) const override { return failures_.get(item); }

private:
  exponential_rate_limiter_params params_;
  detail::item_counter<T, Hash, KeyEqual> failures_;
};

}  // namespace kube::workqueue
