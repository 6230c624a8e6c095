#pragma once

// The queue's index: item -> node, an open-addressing table with linear
// probing whose slots are (hash, node*) pairs, 16 bytes, four to a cache
// line. Compared with a general-purpose flat set (metadata array and element
// array apart) a lookup or an insert touches one cache line, not two; a
// rejected probe compares cached hashes and never dereferences a node;
// erasing compares node pointers only and shifts the following run back
// (no tombstones, so probes stay short); and the home slot of a hash is
// known, so a batch of erases can prefetch its slots first.
//
// Keys are the nodes' cached hashes (already mixed: the low bits pick the
// slot). The table never owns nodes. Single-threaded.

#include <kube/workqueue/detail/big_alloc.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>

namespace kube::workqueue::detail {

template <class Node>
class flat_index {
 public:
  flat_index() = default;
  flat_index(const flat_index&) = delete;
  flat_index& operator=(const flat_index&) = delete;

  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  /// The node with this hash for which `eq(node)` holds, or nullptr.
  template <class Eq>
  [[nodiscard]] Node* find(std::size_t hash, Eq&& eq) const {
    if (size_ == 0) return nullptr;
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const slot& s = slots_[i];
      if (s.n == nullptr) return nullptr;
      if (s.hash == hash && eq(*s.n)) return s.n;
    }
  }

  /// Adds `n` (precondition: no equal node is indexed).
  void insert(Node* n, std::size_t hash) {
    if ((size_ + 1) * 8 > capacity() * 5) grow(capacity() == 0 ? min_capacity : capacity() * 2);
    place(n, hash);
    ++size_;
  }

  /// Removes `n` (indexed with `hash`; its low 32 bits are enough, since
  /// only the home slot is computed from it and a table never has more
  /// than 2^32 slots).
  void erase(Node* n, std::size_t hash) noexcept {
    std::size_t i = hash & mask_;
    while (slots_[i].n != n) i = (i + 1) & mask_;
    // Backward shift: move later members of the run into the hole when
    // their home slot is not cyclically within (hole, their slot].
    for (std::size_t j = (i + 1) & mask_; slots_[j].n != nullptr; j = (j + 1) & mask_) {
      const std::size_t home = slots_[j].hash & mask_;
      const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = slot{};
    --size_;
  }

  /// Starts loading the home slot of `hash` (for a lookup or erase soon;
  /// the low 32 bits are enough).
  void prefetch(std::size_t hash) const noexcept {
    if (slots_) __builtin_prefetch(&slots_[hash & mask_]);
  }

  /// Gives memory back after a burst: when at most 1/16 of a large table
  /// is used, it shrinks to a quarter.
  void maybe_shrink() {
    if (capacity() > 4096 && size_ * 16 < capacity()) grow(capacity() / 4);
  }

  /// Calls f(node*) for every indexed node.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < capacity(); ++i) {
      if (slots_[i].n != nullptr) f(slots_[i].n);
    }
  }

 private:
  struct slot {
    std::size_t hash = 0;
    Node* n = nullptr;
  };
  static constexpr std::size_t min_capacity = 16;
  static constexpr std::size_t max_capacity = std::size_t{1} << 32;  // home slots fit 32 bits of hash

  [[nodiscard]] std::size_t capacity() const noexcept { return slots_ ? mask_ + 1 : 0; }

  void place(Node* n, std::size_t hash) noexcept {
    std::size_t i = hash & mask_;
    while (slots_[i].n != nullptr) i = (i + 1) & mask_;
    slots_[i] = slot{hash, n};
  }

  using slots_ptr = std::unique_ptr<slot[], big_free>;

  // A large table goes on huge pages (big_alloc): a lookup in a table of
  // tens of MiB is a random access, and with 4 KiB pages nearly every one
  // also misses the TLB.
  static slots_ptr allocate(std::size_t cap) {
    std::size_t bytes = cap * sizeof(slot);
    auto* slots = static_cast<slot*>(big_alloc(bytes));
    for (std::size_t i = 0; i < cap; ++i) ::new (&slots[i]) slot{};
    return slots_ptr(slots);
  }

  void grow(std::size_t cap) {
    if (cap > max_capacity) throw std::length_error("workqueue index: more than 2^32 slots");
    const std::size_t old_cap = capacity();
    slots_ptr old = std::exchange(slots_, allocate(cap));
    mask_ = cap - 1;
    for (std::size_t i = 0; i < old_cap; ++i) {
      if (old[i].n != nullptr) place(old[i].n, old[i].hash);
    }
  }

  slots_ptr slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace kube::workqueue::detail
