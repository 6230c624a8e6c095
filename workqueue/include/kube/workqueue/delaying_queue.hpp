#pragma once

// delaying_queue<T>: a queue<T> whose items can be added after a delay
// (client-go DelayingInterface).
//
//   - add_after(item, d) adds `item` once `d` has passed (d <= 0: now);
//   - an item that is already waiting keeps the earlier of its two ready
//     times; items become ready in ready-time order (ties: call order);
//   - after shutdown, waiting items are dropped and add_after is ignored.
//
// One timer serves the whole queue: it is armed for the earliest ready time
// only. Which items are ready is decided from the queue's clock (a
// manual_clock in tests; the timer is then not used at all).
//
// Threads: add_after() from any thread, like add(); the ready time is taken
// from the clock at the call. Everything else as queue<T>.

#include <kube/workqueue/queue.hpp>

namespace kube::workqueue {

template <class T, class Hash = std::hash<T>, class KeyEqual = std::equal_to<T>>
  requires queue_item<T, Hash, KeyEqual>
class delaying_queue : public queue<T, Hash, KeyEqual> {
public:
  using queue<T, Hash, KeyEqual>::queue;
  using duration = clock::duration;

  /// Adds `item` after `delay`. Any thread. Counts as a retry in metrics.
  void add_after(const T& item, duration delay) { this->impl_->add_after(item, delay); }
  void add_after(T&& item, duration delay) { this->impl_->add_after(std::move(item), delay); }

  /// Items waiting for their delay (distinct). Executor only.
  [[nodiscard]] std::size_t waiting_for_delay() const noexcept { return this->impl_->waiting_for_delay(); }
};

}  // namespace kube::workqueue
