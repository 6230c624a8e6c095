#pragma once

// Overall rate limit shared by all items (client-go BucketRateLimiter): every
// when() reserves a token of one token_bucket. Defaults: 10 qps, burst 100.
// It keeps no per-item state: forget() does nothing, num_requeues() is 0.

#include <kube/workqueue/rate_limiter.hpp>
#include <kube/base/token_bucket.hpp>

namespace kube::workqueue {

/// Thread safety: not synchronised (see rate_limiter.hpp).
template <class T>
class bucket_rate_limiter final : public rate_limiter<T> {
public:
  using duration = clock::duration;
  using time_point = clock::time_point;

  explicit bucket_rate_limiter(token_bucket_params params = {})
      : bucket_(params) {}

  duration when(const T& /*item*/, time_point now) override { return bucket_.reserve(now); }
  void forget(const T& /*item*/) override {}
  int num_requeues(const T& /*item*/) const override { return 0; }

private:
  token_bucket bucket_;
};

}  // namespace kube::workqueue
