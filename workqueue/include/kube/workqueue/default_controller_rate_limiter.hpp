#pragma once

// client-go's DefaultControllerRateLimiter: the longer of per-item exponential
// backoff (5 ms doubling, capped at 1000 s) and an overall token bucket
// (10 qps, burst 100). The bucket only bites when many items fail at once.

#include <kube/workqueue/bucket_rate_limiter.hpp>
#include <kube/workqueue/exponential_rate_limiter.hpp>
#include <kube/workqueue/max_of_rate_limiter.hpp>

#include <memory>
#include <vector>

namespace kube::workqueue {

template <class T, class Hash = std::hash<T>, class KeyEqual = std::equal_to<T>>
[[nodiscard]] std::unique_ptr<rate_limiter<T>> default_controller_rate_limiter() {
  std::vector<std::unique_ptr<rate_limiter<T>>> limiters;
  limiters.push_back(std::make_unique<exponential_rate_limiter<T, Hash, KeyEqual>>());
  limiters.push_back(std::make_unique<bucket_rate_limiter<T>>());
  return std::make_unique<max_of_rate_limiter<T>>(std::move(limiters));
}

}  // namespace kube::workqueue
