#pragma once

// The queue's index: item -> node, an open-addressing table with linear
// probing whose slots are (low 32 bits of the hash, node id) pairs, 8
// bytes, eight to a cache line. Compared with a general-purpose flat set
// (metadata array and element array apart) a lookup or an insert touches
// one cache line, not two; a rejected probe compares cached hash bits and
// never loads a node; erasing compares ids only and shifts the following run
// back (no tombstones, so probes stay short); and the home slot of a hash is
// known, so a batch of erases can prefetch its slots first.
//
// A node id is 32 bits (node_pool.hpp), half a pointer: the table of a
// million queued items is 16 MiB, not 32, which is half the memory to fault
// in and rehash while a burst of adds grows it, and more of it stays in
// cache. The pool turns an id back into the node.
//
// The slot's hash bits are the item's hash (its low bits pick the home
// slot, so a table has at most 2^32 slots). The table never owns nodes.
// Single-threaded.

#include <kube/workqueue/detail/big_alloc.hpp>
#include <kube/workqueue/detail/node_pool.hpp>

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
  using pool_type = node_pool<Node>;
  using id_type = typename pool_type::id_type;

  explicit flat_index(const pool_type& pool) noexcept
      : pool_(&pool) {}
  flat_index(const flat_index&) = delete;
  flat_index& operator=(const flat_index&) = delete;

  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  /// The node with this hash for which `eq(node)` holds, or nullptr.
  template <class Eq>
  [[nodiscard]] Node* find(std::size_t hash, Eq&& eq) const {
    if (size_ == 0) return nullptr;
    return probe(hash, eq).found;
  }

  /// The node with this hash for which `eq(node)` holds; if there is none,
  /// `n` is added (at the empty slot that ended the probe, so a new item is
  /// probed for once, unless the table must grow first) and nullptr
  /// returned. Finding a node never allocates.
  template <class Eq>
  Node* find_or_insert(const Node* n, std::size_t hash, Eq&& eq) {
    if (slots_) {
      const probe_result r = probe(hash, eq);
      if (r.found != nullptr) return r.found;
      if (!full()) {
        slots_[r.empty] = slot{static_cast<std::uint32_t>(hash), n->id};
        ++size_;
        return nullptr;
      }
    }
    insert(n, hash);
    return nullptr;
  }

  /// Adds `n` (precondition: no equal node is indexed).
  void insert(const Node* n, std::size_t hash) {
    make_room();
    place(n->id, static_cast<std::uint32_t>(hash));
    ++size_;
  }

  /// Removes `n` (indexed with `hash`; its low 32 bits are enough, since
  /// only the home slot is computed from it and a table never has more
  /// than 2^32 slots).
  void erase(const Node* n, std::size_t hash) noexcept {
    std::size_t i = hash & mask_;
    while (slots_[i].id != n->id) i = (i + 1) & mask_;
    // Backward shift: move later members of the run into the hole when
    // their home slot is not cyclically within (hole, their slot].
    for (std::size_t j = (i + 1) & mask_; slots_[j].id != 0; j = (j + 1) & mask_) {
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
  /// the low 32 bits are enough), and the next line when the home slot is
  /// one of the last three of its line: a probe often runs a few slots on.
  void prefetch(std::size_t hash) const noexcept {
    if (!slots_) return;
    const std::size_t i = hash & mask_;
    __builtin_prefetch(&slots_[i]);
    __builtin_prefetch(&slots_[(i + 3) & mask_]);
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
      if (slots_[i].id != 0) f(pool_->node(slots_[i].id));
    }
  }

private:
  struct slot {
    std::uint32_t hash = 0;
    id_type id = 0;  // 0: empty
  };
  static_assert(sizeof(slot) == 8);
  static constexpr std::size_t min_capacity = 16;
  static constexpr std::size_t max_capacity = std::size_t{1} << 32;  // home slots fit 32 bits of hash

  [[nodiscard]] std::size_t capacity() const noexcept { return slots_ ? mask_ + 1 : 0; }

  // A probe's end: the node found, or (found null) the empty slot that
  // ended the run.
  struct probe_result {
    Node* found;
    std::size_t empty;
  };

  // Linear probe from the home slot (precondition: a table exists).
  template <class Eq>
  probe_result probe(std::size_t hash, Eq& eq) const {
    const auto h = static_cast<std::uint32_t>(hash);
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const slot& s = slots_[i];
      if (s.id == 0) return {nullptr, i};
      if (s.hash == h) {
        Node* n = pool_->node(s.id);
        if (eq(*n)) return {n, i};
      }
    }
  }

  // Whether one more node would pass the load limit (5/8).
  [[nodiscard]] bool full() const noexcept { return (size_ + 1) * 8 > capacity() * 5; }

  // Room for one more node: the table doubles before it is 5/8 full.
  void make_room() {
    if (full()) grow(capacity() == 0 ? min_capacity : capacity() * 2);
  }

  void place(id_type id, std::uint32_t hash) noexcept {
    std::size_t i = hash & mask_;
    while (slots_[i].id != 0) i = (i + 1) & mask_;
    slots_[i] = slot{hash, id};
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
    // Eight old slots (one cache line) at a time: which are used is
    // gathered into a bit mask without branches, then only those are
    // placed. A test per slot mispredicts about every other slot at these
    // loads (the rehashes of a million adds: 11.4 -> 9.6 ms).
    static_assert(min_capacity % 8 == 0);  // (capacities are powers of two from there)
    for (std::size_t i = 0; i < old_cap; i += 8) {
      unsigned used = 0;
      for (unsigned k = 0; k < 8; ++k) used |= static_cast<unsigned>(old[i + k].id != 0) << k;
      while (used != 0) {
        const auto k = static_cast<unsigned>(__builtin_ctz(used));
        used &= used - 1;
        place(old[i + k].id, old[i + k].hash);
      }
    }
  }

  const pool_type* pool_;
  slots_ptr slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace kube::workqueue::detail
