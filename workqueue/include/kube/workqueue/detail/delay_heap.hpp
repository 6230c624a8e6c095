#pragma once

// The waiting part of a delaying queue: a min-heap of ready times over nodes
// the queue owns. The queue keeps one node per item, found through its one
// index, whether the item waits for a delay, is queued, is being processed,
// or several of these at once; this heap only orders the waiting ones. So an
// item that waits and then becomes ready is neither copied nor re-indexed:
// its node just changes state.
//
// Scheduling an item that already waits keeps the earlier ready time
// (client-go's insert()). Moving an item earlier pushes a new heap entry; the
// old one becomes stale and is skipped when it surfaces, which is cheaper
// than a heap with positions kept in the nodes. Items with equal ready times
// come out in insertion order. Heap entries keep (ready time, sequence)
// inline so sifting never dereferences a node, and count references to their
// node (`heap_refs`), so the owner keeps a node alive while an entry (stale
// or not) points at it: `unref(node*)` is called when an entry leaves the
// heap, after the node's count was decremented (by clear() only at a node's
// last entry), and the owner may free the node then if the count is 0.
//
// Node requirements: `time_point ready_at; std::uint32_t (or uint64_t) seq;
// std::uint32_t heap_refs; std::uint8_t state;` with `waiting_bit` in state
// meaning "waits in this heap".
// A plain class: `now` comes from the caller; it never touches a timer.

#include <kube/base/clock.hpp>
#include <kube/workqueue/detail/big_alloc.hpp>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <utility>
#include <vector>

namespace kube::workqueue::detail {

template <class Node, std::uint8_t waiting_bit, template <class> class Alloc = big_allocator>
class delay_heap {
public:
  using time_point = clock::time_point;

  delay_heap() = default;
  delay_heap(const delay_heap&) = delete;
  delay_heap& operator=(const delay_heap&) = delete;

  /// Schedules `n` at `ready_at`; returns true if that is earlier than the
  /// time it was already scheduled at (or it was not waiting).
  /// Strong guarantee: if storing the entry throws (out of memory), neither
  /// `n` nor the heap has changed.
  bool push(Node* n, time_point ready_at) {
    const bool was_waiting = waiting(n);
    if (was_waiting && ready_at >= n->ready_at) return false;
    heap_.push_back(entry{ready_at, seq_, n});
    if (!was_waiting) {
      n->state |= waiting_bit;
      ++waiting_count_;
    }
    n->ready_at = ready_at;
    n->seq = static_cast<decltype(n->seq)>(seq_);
    ++n->heap_refs;
    latest_ = std::max(latest_, ready_at);
    std::push_heap(heap_.begin(), heap_.end(), later{});
    ++seq_;
    return true;
  }

  [[nodiscard]] bool empty() const noexcept { return waiting_count_ == 0; }
  /// Number of distinct waiting items.
  [[nodiscard]] std::size_t size() const noexcept { return waiting_count_; }

  /// The earliest ready time. Precondition: !empty().
  template <class Unref>
  [[nodiscard]] time_point next_ready_at(Unref&& unref) {
    drop_stale(unref);
    return heap_.front().ready_at;
  }

  /// Removes every node with ready time <= now from the waiting set (its
  /// waiting bit cleared), calling f(node*) for each in ready-time order.
  ///
  /// Nodes are popped one by one (log n each). When many are ready (the
  /// executor was busy past many ready times), the rest are taken in bulk:
  /// one pass splits ready from waiting entries, the ready ones are sorted,
  /// the rest re-heapified: sequential work instead of a cache-missing sift
  /// per item. The bulk pass costs O(heap size), so it is used only after
  /// a sixteenth of the heap has been popped singly: its cost is then
  /// bounded by the pops already made, and a heap with only a few ready
  /// entries is never scanned whole. It goes to bulk at once when the
  /// latest ready time ever pushed has passed, and after bulk_after single
  /// pops when a sample of a large heap says that a sixteenth or more is
  /// ready (a producer that outran the timer: single pops of a heap of a
  /// million entries cost a microsecond each in cache misses). The sample
  /// is taken only then, so a timer that finds a few items ready never
  /// pays for its cache misses.
  /// If f throws for an item (out of memory, or a metrics hook), that
  /// item's wait ends without it; the pop still hands out every other
  /// ready item, then rethrows the first exception.
  template <class F, class Unref>
  void pop_ready(time_point now, F&& f, Unref&& unref) {
    std::exception_ptr failed;
    pop_ready_catching(now, f, unref, failed);
    if (failed) std::rethrow_exception(failed);
  }

  /// Drops every entry; no node waits afterwards.
  template <class Unref>
  void clear(Unref&& unref) {
    entries all;
    all.swap(heap_);
    waiting_count_ = 0;
    for (const entry& e : all) e.n->state &= static_cast<std::uint8_t>(~waiting_bit);
    // unref only at a node's last entry: the owner may free a node then, and
    // no later entry points at it.
    for (const entry& e : all) {
      if (--e.n->heap_refs == 0) unref(e.n);
    }
  }

private:
  template <class F, class Unref>
  void pop_ready_catching(time_point now, F& f, Unref& unref, std::exception_ptr& failed) {
    const std::size_t singly = latest_ <= now ? 0 : std::max<std::size_t>(bulk_after, heap_.size() / 16);
    for (std::size_t i = 0; i < singly; ++i) {
      if (i == bulk_after && mostly_ready(now)) break;
      drop_stale(unref);
      if (heap_.empty() || heap_.front().ready_at > now) return;
      std::pop_heap(heap_.begin(), heap_.end(), later{});
      Node* n = heap_.back().n;
      heap_.pop_back();
      hand_out(n, f, unref, failed);
    }
    drop_stale(unref);
    if (heap_.empty() || heap_.front().ready_at > now) return;
    // Ready entries to the back; the heap is made whole again (the waiting
    // front re-heapified) before any item is handed out. When everything is
    // ready, the vector is taken as is.
    auto split = std::partition(heap_.begin(), heap_.end(), [now](const entry& e) { return e.ready_at > now; });
    // The smaller part is copied out: when most entries are ready, the
    // waiting ones become the new heap and the ready ones are used in place,
    // from `first` on.
    const auto waiting_count = static_cast<std::size_t>(split - heap_.begin());
    entries ready;
    std::size_t first = 0;
    try {
      if (waiting_count == 0) {
        ready.swap(heap_);
      } else if (waiting_count < heap_.size() - waiting_count) {
        entries rest(heap_.begin(), split);
        std::make_heap(rest.begin(), rest.end(), later{});
        ready.swap(heap_);
        heap_.swap(rest);
        first = waiting_count;
      } else {
        ready.assign(split, heap_.end());
        heap_.erase(split, heap_.end());
        std::make_heap(heap_.begin(), heap_.end(), later{});
      }
    } catch (...) {  // out of memory copying a part: the heap stays whole, nothing was handed out
      std::make_heap(heap_.begin(), heap_.end(), later{});
      throw;
    }
    const auto from = ready.begin() + static_cast<std::ptrdiff_t>(first);
    std::sort(from, ready.end(), [](const entry& a, const entry& b) { return later{}(b, a); });
    // In time order the nodes are scattered in memory: fetch a few ahead.
    constexpr std::size_t ahead = 8;
    for (std::size_t i = first; i < ready.size(); ++i) {
      if (i + ahead < ready.size()) __builtin_prefetch(ready[i + ahead].n);
      const entry& e = ready[i];
      if (stale(e)) {
        --e.n->heap_refs;
        unref(e.n);
        continue;
      }
      hand_out(e.n, f, unref, failed);
    }
  }

  struct entry {
    time_point ready_at;
    std::uint64_t seq;
    Node* n;
  };
  struct later {
    bool operator()(const entry& a, const entry& b) const noexcept {
      return a.ready_at != b.ready_at ? a.ready_at > b.ready_at : a.seq > b.seq;
    }
  };

  static constexpr std::size_t bulk_after = 64;
  static constexpr std::size_t sample_from = 4096;  // heap size from which mostly_ready samples

  // Whether a sixteenth or more of a large heap looks ready: 32 leaves at a
  // fixed stride (half of a heap's entries are leaves, in no time order
  // among themselves), at least 2 of them ready. A guess that only picks
  // the faster way; both hand out the same items in the same order.
  [[nodiscard]] bool mostly_ready(time_point now) const noexcept {
    constexpr std::size_t samples = 32;
    const std::size_t size = heap_.size();
    if (size < sample_from) return false;
    const std::size_t first_leaf = size / 2;
    const std::size_t stride = (size - first_leaf) / samples;
    std::size_t ready = 0;
    for (std::size_t i = 0; i < samples; ++i) {
      if (heap_[first_leaf + i * stride].ready_at <= now) ++ready;
    }
    return ready * 16 >= samples;
  }

  static bool waiting(const Node* n) noexcept { return (n->state & waiting_bit) != 0; }
  // An entry is its node's current one when the node waits, for the
  // entry's ready time, under the entry's sequence. The node may keep the
  // sequence truncated (the queue keeps 32 bits): an older entry whose
  // sequence matched after 2^32 pushes would also need the same ready
  // time, and then it is as good as the current entry (it comes out at the
  // same time; the current one is then stale).
  static bool stale(const entry& e) noexcept {
    return !waiting(e.n) || e.n->ready_at != e.ready_at || e.n->seq != static_cast<decltype(e.n->seq)>(e.seq);
  }

  // `n`'s current entry has left the heap.
  template <class F, class Unref>
  void hand_out(Node* n, F& f, Unref& unref, std::exception_ptr& failed) {
    n->state &= static_cast<std::uint8_t>(~waiting_bit);
    --waiting_count_;
    --n->heap_refs;
    try {
      f(n);
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
    unref(n);
  }

  template <class Unref>
  void drop_stale(Unref& unref) {
    while (!heap_.empty()) {
      const entry& e = heap_.front();
      if (!stale(e)) return;
      std::pop_heap(heap_.begin(), heap_.end(), later{});
      Node* n = heap_.back().n;
      heap_.pop_back();
      --n->heap_refs;
      unref(n);
    }
  }

  using entries = std::vector<entry, Alloc<entry>>;
  entries heap_;
  std::size_t waiting_count_ = 0;
  time_point latest_ = time_point::min();  // latest ready time ever pushed: all are ready at or after it
  std::uint64_t seq_ = 0;
};

}  // namespace kube::workqueue::detail
