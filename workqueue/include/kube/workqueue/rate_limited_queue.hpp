#pragma once

// rate_limited_queue<T>: a delaying_queue<T> that asks a rate_limiter how long
// an item should wait (client-go RateLimitingInterface).
//
//   - add_rate_limited(item): add_after(item, limiter.when(item, now));
//   - forget(item): the item succeeded, its backoff starts over (it does not
//     remove the item from the queue);
//   - num_requeues(item): failures counted by the limiter.
// The default limiter is default_controller_rate_limiter(): max of per-item
// exponential (5 ms doubling, 1000 s cap) and a 10 qps / burst 100 bucket.
//
// Threads: add_rate_limited(), forget() and num_requeues() on the executor
// only (workers call them; the limiter is not synchronised). add() and
// add_after() from any thread.

#include <kube/workqueue/default_controller_rate_limiter.hpp>
#include <kube/workqueue/delaying_queue.hpp>
#include <kube/workqueue/rate_limiter.hpp>

#include <memory>
#include <stdexcept>
#include <utility>

namespace kube::workqueue {

template <class T, class Hash = std::hash<T>, class KeyEqual = std::equal_to<T>>
  requires queue_item<T, Hash, KeyEqual>
class rate_limited_queue : public delaying_queue<T, Hash, KeyEqual> {
public:
  using executor_type = typename queue<T, Hash, KeyEqual>::executor_type;

  explicit rate_limited_queue(
      executor_type ex, std::unique_ptr<rate_limiter<T>> limiter = default_controller_rate_limiter<T, Hash, KeyEqual>(),
      queue_params params = {})
      : delaying_queue<T, Hash, KeyEqual>(std::move(ex), std::move(params)),
        limiter_(std::move(limiter)) {
    if (!limiter_) throw std::invalid_argument("rate_limited_queue: rate limiter is null");
  }

  /// Adds `item` when the limiter allows it. Executor only.
  void add_rate_limited(const T& item) {
    const auto now = this->time_source().now();
    const auto wait = limiter_->when(item, now);
    this->impl_->add_after_local(item, wait, now);
  }
  void add_rate_limited(T&& item) {
    const auto now = this->time_source().now();
    const auto wait = limiter_->when(item, now);
    this->impl_->add_after_local(std::move(item), wait, now);
  }

  /// Resets the item's backoff. Executor only.
  void forget(const T& item) { limiter_->forget(item); }

  /// How often the item was rate limited since the last forget. Executor only.
  [[nodiscard]] int num_requeues(const T& item) const { return limiter_->num_requeues(item); }

private:
  std::unique_ptr<rate_limiter<T>> limiter_;
};

}  // namespace kube::workqueue
