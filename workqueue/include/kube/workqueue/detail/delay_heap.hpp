#pragma once

// The waiting items of a delaying queue: a min-heap on ready time plus an
// index item -> node. Adding an item that already waits keeps the earlier
// ready time (client-go's insert()). Moving an item earlier pushes a new heap
// entry; the old one becomes stale and is skipped when it surfaces, which is
// cheaper than a heap with positions kept in the nodes.
// Items with equal ready times come out in insertion order.
// Each item is stored once, in a node with its cached hash; heap entries keep
// (ready time, sequence) inline so sifting never dereferences a node, and
// count references to their node so a stale entry never points at freed
// memory.
// A plain class: `now` comes from the caller; it never touches a timer.

#include <kube/workqueue/clock.hpp>
#include <kube/workqueue/detail/hashed_key.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

namespace kube::workqueue::detail {

template <class T, class Hash = std::hash<T>, class KeyEqual = std::equal_to<T>>
class delay_heap {
 public:
  using time_point = clock::time_point;

  delay_heap() = default;
  delay_heap(const delay_heap&) = delete;
  delay_heap& operator=(const delay_heap&) = delete;
  ~delay_heap() { clear(); }

  /// Schedules `item` at `ready_at`; returns true if that is earlier than the
  /// time it was already scheduled at (or it was not waiting).
  bool push(const T& item, time_point ready_at) { return push(item, ready_at, traits::hash(item)); }
  bool push(T&& item, time_point ready_at) {
    const std::size_t h = traits::hash(item);
    return push(std::move(item), ready_at, h);
  }

  /// As push(), with the item's hash (traits::hash) already computed.
  template <class U>
  bool push(U&& item, time_point ready_at, std::size_t hash) {
    auto it = waiting_.find(key_ref<T>{&item, hash});
    node* n;
    if (it != waiting_.end()) {
      n = it->n;
      if (ready_at >= n->ready_at) return false;
      n->ready_at = ready_at;
      n->seq = seq_;
      ++n->entries;
    } else {
      n = new node{T(std::forward<U>(item)), hash, ready_at, seq_};
      waiting_.insert(traits::of(n));
    }
    latest_ = std::max(latest_, ready_at);
    heap_.push_back(entry{ready_at, seq_, n});
    std::push_heap(heap_.begin(), heap_.end(), later{});
    ++seq_;
    return true;
  }

  [[nodiscard]] bool empty() const noexcept { return waiting_.empty(); }
  /// Number of distinct waiting items.
  [[nodiscard]] std::size_t size() const noexcept { return waiting_.size(); }
  [[nodiscard]] bool contains(const T& item) const {
    return waiting_.find(key_ref<T>{&item, traits::hash(item)}) != waiting_.end();
  }

  /// The earliest ready time. Precondition: !empty().
  [[nodiscard]] time_point next_ready_at() {
    drop_stale();
    return heap_.front().ready_at;
  }

  /// Removes every item with ready time <= now, calling f(T&&) (or
  /// f(T&&, hash) if f takes it) for each in ready-time order.
  ///
  /// Items are popped one by one (log n each). When many are ready (the
  /// executor was busy past many ready times), the rest are taken in bulk:
  /// one pass splits ready from waiting entries, the ready ones are sorted,
  /// the rest re-heapified: sequential work instead of a cache-missing sift
  /// per item. The bulk pass costs O(heap size), so it is used only after
  /// a sixteenth of the heap has been popped singly: its cost is then
  /// bounded by the pops already made, and a heap with only a few ready
  /// entries is never scanned whole.
  template <class F>
  void pop_ready(time_point now, F&& f) {
    pop_ready(now, std::forward<F>(f), [](std::size_t) {});
  }

  /// As above; `about_to_hand_out(k)` is called before k items (an upper
  /// bound: stale entries are among them) are handed out in bulk, so the
  /// receiver can make room for them at once.
  template <class F, class Reserve>
  void pop_ready(time_point now, F&& f, Reserve&& about_to_hand_out) {
    // Everything ready (a producer that outran the timer): straight to bulk.
    const std::size_t singly =
        latest_ <= now ? 0 : std::max<std::size_t>(bulk_after, heap_.size() / 16);
    for (std::size_t i = 0; i < singly; ++i) {
      drop_stale();
      if (heap_.empty() || heap_.front().ready_at > now) return;
      std::pop_heap(heap_.begin(), heap_.end(), later{});
      node* n = heap_.back().n;
      heap_.pop_back();
      waiting_.erase(traits::of(n));
      hand_out(n, f);
    }
    drop_stale();
    if (heap_.empty() || heap_.front().ready_at > now) return;
    // Ready entries to the back; the heap is made whole again (the waiting
    // front re-heapified) before any item is handed out. When everything is
    // ready (a producer that outran the timer), the vector is taken as is.
    auto split = std::partition(heap_.begin(), heap_.end(), [now](const entry& e) { return e.ready_at > now; });
    std::vector<entry> ready;
    const bool all = split == heap_.begin();  // no entry left waiting
    if (all) {
      ready.swap(heap_);
      typename traits::set().swap(waiting_);  // its memory is free for the receiver
    } else {
      ready.assign(split, heap_.end());
      heap_.erase(split, heap_.end());
      std::make_heap(heap_.begin(), heap_.end(), later{});
    }
    std::sort(ready.begin(), ready.end(), [](const entry& a, const entry& b) { return later{}(b, a); });
    about_to_hand_out(ready.size());
    // In time order the nodes are scattered in memory: fetch a few ahead.
    constexpr std::size_t ahead = 8;
    for (std::size_t i = 0; i < ready.size(); ++i) {
      if (i + ahead < ready.size()) __builtin_prefetch(ready[i + ahead].n);
      const entry& e = ready[i];
      if (e.n->popped || e.n->seq != e.seq) {
        release(e.n);  // stale
        continue;
      }
      if (!all) waiting_.erase(traits::of(e.n));
      hand_out(e.n, f);
    }
  }

  void clear() noexcept {
    for (const entry& e : heap_) release(e.n);
    heap_.clear();
    waiting_.clear();
  }

 private:
  struct node {
    T item;
    std::size_t hash;
    time_point ready_at;
    std::uint64_t seq;              // of the entry that is current
    std::uint32_t entries = 1;      // heap entries pointing here
    bool popped = false;            // handed out; remaining entries are stale
  };
  using traits = node_traits<T, Hash, KeyEqual, node>;
  struct entry {
    time_point ready_at;
    std::uint64_t seq;
    node* n;
  };
  struct later {
    bool operator()(const entry& a, const entry& b) const noexcept {
      return a.ready_at != b.ready_at ? a.ready_at > b.ready_at : a.seq > b.seq;
    }
  };

  static constexpr std::size_t bulk_after = 64;

  // `n`'s current entry has left the heap and `n` has left the index.
  template <class F>
  static void hand_out(node* n, F& f) {
    n->popped = true;
    T item = std::move(n->item);
    const std::size_t h = n->hash;
    release(n);
    if constexpr (std::is_invocable_v<F&, T&&, std::size_t>) {
      f(std::move(item), h);
    } else {
      f(std::move(item));
    }
  }

  static void release(node* n) noexcept {
    if (--n->entries == 0) delete n;
  }

  void drop_stale() {
    while (!heap_.empty()) {
      const entry& e = heap_.front();
      if (!e.n->popped && e.n->seq == e.seq) return;
      std::pop_heap(heap_.begin(), heap_.end(), later{});
      node* n = heap_.back().n;
      heap_.pop_back();
      release(n);
    }
  }

  std::vector<entry> heap_;
  time_point latest_ = time_point::min();  // latest ready time ever pushed: all are ready at or after it
  typename traits::set waiting_;
  std::uint64_t seq_ = 0;
};

}  // namespace kube::workqueue::detail
