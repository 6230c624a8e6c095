#pragma once

// How add() and add_after() from threads outside the queue's executor reach
// it, without a mutex: a lock-free stack of messages (one compare-and-swap
// per push) and one "drain" handler on the executor that takes the whole
// stack with one exchange.
//
// Only a push that finds the stack empty may schedule a drain, and only if
// none is scheduled (an atomic flag), so producers post (and wake the
// executor) once per burst. A drain that took something schedules itself
// again (it runs after the handlers queued meanwhile, e.g. the workers
// taking what it added); one that took nothing unschedules itself, then
// looks once more: a producer that pushed while it was still scheduled did
// not post. Both sides use seq_cst: either that look sees the push, or the
// producer's exchange sees the flag cleared and posts.
//
// Msg needs a `Msg* next` member. The inbox does not own the messages: the
// owner makes them, and destroys what take() hands it (and, at the end,
// what is left).

#include <atomic>

namespace kube::workqueue::detail {

template <class Msg>
class remote_inbox {
public:
  /// Any thread. Returns true if the caller must post a drain.
  [[nodiscard]] bool push(Msg* m) noexcept {
    Msg* head = stack_.load(std::memory_order_relaxed);
    do {
      m->next = head;
    } while (!stack_.compare_exchange_weak(head, m, std::memory_order_seq_cst, std::memory_order_relaxed));
    return head == nullptr && !scheduled_.exchange(true, std::memory_order_seq_cst);
  }

  /// The drain: everything pushed so far, newest first (linked by `next`),
  /// or nullptr.
  [[nodiscard]] Msg* take() noexcept { return stack_.exchange(nullptr, std::memory_order_acquire); }

  /// The drain took nothing (or gives up): it is no longer scheduled.
  /// Returns true if the caller must post it again (a push came meanwhile).
  [[nodiscard]] bool unschedule() noexcept {
    scheduled_.store(false, std::memory_order_seq_cst);
    return stack_.load(std::memory_order_seq_cst) != nullptr && !scheduled_.exchange(true, std::memory_order_seq_cst);
  }

private:
  std::atomic<Msg*> stack_{nullptr};
  std::atomic<bool> scheduled_{false};  // a drain is posted or running
};

}  // namespace kube::workqueue::detail
