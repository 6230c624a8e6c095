#pragma once

// The strictest of several limiters (client-go MaxOfRateLimiter): when() asks
// every limiter (each counts the failure) and returns the longest wait;
// num_requeues() is the largest count; forget() forgets in all.

#include <kube/workqueue/rate_limiter.hpp>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

namespace kube::workqueue {

/// Thread safety: not synchronised (see rate_limiter.hpp).
template <class T>
class max_of_rate_limiter final : public rate_limiter<T> {
public:
  using duration = clock::duration;
  using time_point = clock::time_point;

  explicit max_of_rate_limiter(std::vector<std::unique_ptr<rate_limiter<T>>> limiters)
      : limiters_(std::move(limiters)) {}

  duration when(const T& item, time_point now) override {
    duration longest = duration::zero();
    for (auto& l : limiters_) longest = std::max(longest, l->when(item, now));
    return longest;
  }
  void forget(const T& item) override {
    for (auto& l : limiters_) l->forget(item);
  }
  int num_requeues(const T& item) const override {
    int most = 0;
    for (const auto& l : limiters_) most = std::max(most, l->num_requeues(item));
    return most;
  }

private:
  std::vector<std::unique_ptr<rate_limiter<T>>> limiters_;
};

}  // namespace kube::workqueue
