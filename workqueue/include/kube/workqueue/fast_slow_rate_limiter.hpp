#pragma once

// Per-item fast-then-slow retries (client-go ItemFastSlowRateLimiter): the first
// `max_fast_attempts` failures of an item wait `fast_delay`, later ones
// `slow_delay`.

#include <kube/workqueue/detail/item_counter.hpp>
#include <kube/workqueue/rate_limiter.hpp>

#include <chrono>

namespace kube::workqueue {

struct fast_slow_rate_limiter_params {
  clock::duration fast_delay = std::chrono::milliseconds(5);  // wait for the first attempts
  clock::duration slow_delay = std::chrono::seconds(10);      // wait after that
  int max_fast_attempts = 3;                                  // attempts that use fast_delay (count)
};

/// Thread safety: not synchronised (see rate_limiter.hpp).
template <class T, class Hash = std::hash<T>, class KeyEqual = std::equal_to<T>>
class fast_slow_rate_limiter final : public rate_limiter<T> {
public:
  using duration = clock::duration;
  using time_point = clock::time_point;

  explicit fast_slow_rate_limiter(fast_slow_rate_limiter_params params = {})
      : params_(params) {}

  duration when(const T& item, time_point /*now*/) override {
    const int attempt = failures_.increment(item) + 1;
    return attempt <= params_.max_fast_attempts ? params_.fast_delay : params_.slow_delay;
  }
  void forget(const T& item) override { failures_.erase(item); }
  int num_requeues(const T& item) const override { return failures_.get(item); }

private:
  fast_slow_rate_limiter_params params_;
  detail::item_counter<T, Hash, KeyEqual> failures_;
};

}  // namespace kube::workqueue
