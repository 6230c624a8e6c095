#pragma once

// Caps another limiter's wait (client-go WithMaxWaitRateLimiter).

#include <kube/workqueue/rate_limiter.hpp>

#include <algorithm>
#include <memory>
#include <utility>

namespace kube::workqueue {

/// Thread safety: not synchronised (see rate_limiter.hpp).
template <class T>
class max_wait_rate_limiter final : public rate_limiter<T> {
public:
  using duration = clock::duration;
  using time_point = clock::time_point;

  max_wait_rate_limiter(std::unique_ptr<rate_limiter<T>> inner, duration max_delay)
      : inner_(std::move(inner)),
        max_delay_(max_delay) {}

  duration when(const T& item, time_point now) override { return std::min(inner_->when(item, now), max_delay_); }
  void forget(const T& item) override { inner_->forget(item); }
  int num_requeues(const T& item) const override { return inner_->num_requeues(item); }

private:
  std::unique_ptr<rate_limiter<T>> inner_;
  duration max_delay_;
};

}  // namespace kube::workqueue
