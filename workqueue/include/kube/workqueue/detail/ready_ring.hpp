#pragma once

// The queue's ready items in order: a ring of 32-bit node ids (half the
// size of pointers), a power of two long, doubled when full and given back
// when a burst has drained. Executor only.

#include <kube/workqueue/detail/big_alloc.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace kube::workqueue::detail {

class ready_ring {
public:
  using id_type = std::uint32_t;

  [[nodiscard]] std::size_t size() const noexcept { return len_; }
  [[nodiscard]] bool empty() const noexcept { return len_ == 0; }
  [[nodiscard]] bool full() const noexcept { return len_ == cap_; }

  /// Room for one more id, so the next push cannot fail. Throws
  /// std::bad_alloc.
  void reserve_one() {
    if (full()) grow();
  }

  void push(id_type id) {
    reserve_one();
    ring_[(head_ + len_) & (cap_ - 1)] = id;
    ++len_;
  }

  /// The id `i` places behind the front. Precondition: i < size().
  [[nodiscard]] id_type at(std::size_t i) const noexcept { return ring_[(head_ + i) & (cap_ - 1)]; }

  /// Removes the front id. Precondition: !empty().
  id_type pop() noexcept {
    const id_type id = ring_[head_];
    head_ = (head_ + 1) & (cap_ - 1);
    if (--len_ == 0 && cap_ > 4096) {  // after a burst: give the ring back
      ring_.reset();
      cap_ = 0;
      head_ = 0;
    }
    return id;
  }

private:
  // Doubles the ring (or makes the first one), keeping the order.
  void grow() {
    const std::size_t cap = cap_ == 0 ? 16 : cap_ * 2;
    std::size_t bytes = cap * sizeof(id_type);
    ring_ptr ring(static_cast<id_type*>(big_alloc(bytes)));
    for (std::size_t i = 0; i < len_; ++i) ring[i] = at(i);
    ring_ = std::move(ring);
    cap_ = cap;
    head_ = 0;
  }

  using ring_ptr = std::unique_ptr<id_type[], big_free>;
  ring_ptr ring_;
  std::size_t cap_ = 0;
  std::size_t head_ = 0;
  std::size_t len_ = 0;
};

}  // namespace kube::workqueue::detail
