#pragma once

// The waiting items of a delaying queue: a min-heap on ready time plus a map
// item -> (ready time, sequence). Adding an item that already waits keeps the
// earlier ready time (client-go's insert()). Moving an item earlier pushes a
// new heap entry; the old one becomes stale and is skipped when it surfaces,
// which is cheaper than a heap with positions kept in the map.
// Items with equal ready times come out in insertion order.
// A plain class: `now` comes from the caller; it never touches a timer.

#include <kube/workqueue/clock.hpp>

#include <boost/unordered/unordered_flat_map.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace kube::workqueue::detail {

template <class T, class Hash = std::hash<T>, class KeyEqual = std::equal_to<T>>
class delay_heap {
 public:
  using time_point = clock::time_point;

  /// Schedules `item` at `ready_at`; returns true if that is earlier than the
  /// time it was already scheduled at (or it was not waiting).
  bool push(const T& item, time_point ready_at) {
    auto [it, inserted] = waiting_.try_emplace(item, slot{ready_at, seq_});
    if (!inserted) {
      if (ready_at >= it->second.ready_at) return false;
      it->second = slot{ready_at, seq_};
    }
    heap_.push_back(entry{ready_at, seq_, item});
    std::push_heap(heap_.begin(), heap_.end(), later{});
    ++seq_;
    return true;
  }

  [[nodiscard]] bool empty() const noexcept { return waiting_.empty(); }
  /// Number of distinct waiting items.
  [[nodiscard]] std::size_t size() const noexcept { return waiting_.size(); }
  [[nodiscard]] bool contains(const T& item) const { return waiting_.contains(item); }

  /// The earliest ready time. Precondition: !empty().
  [[nodiscard]] time_point next_ready_at() {
    drop_stale();
    return heap_.front().ready_at;
  }

  /// Removes every item with ready time <= now, calling f(T&&) for each in
  /// ready-time order.
  template <class F>
  void pop_ready(time_point now, F&& f) {
    for (;;) {
      drop_stale();
      if (heap_.empty() || heap_.front().ready_at > now) return;
      std::pop_heap(heap_.begin(), heap_.end(), later{});
      entry e = std::move(heap_.back());
      heap_.pop_back();
      waiting_.erase(e.item);
      f(std::move(e.item));
    }
  }

  void clear() noexcept {
    heap_.clear();
    waiting_.clear();
  }

 private:
  struct slot {
    time_point ready_at;
    std::uint64_t seq;
  };
  struct entry {
    time_point ready_at;
    std::uint64_t seq;
    T item;
  };
  struct later {
    bool operator()(const entry& a, const entry& b) const noexcept {
      return a.ready_at != b.ready_at ? a.ready_at > b.ready_at : a.seq > b.seq;
    }
  };

  void drop_stale() {
    while (!heap_.empty()) {
      auto it = waiting_.find(heap_.front().item);
      if (it != waiting_.end() && it->second.seq == heap_.front().seq) return;
      std::pop_heap(heap_.begin(), heap_.end(), later{});
      heap_.pop_back();
    }
  }

  std::vector<entry> heap_;
  boost::unordered_flat_map<T, slot, Hash, KeyEqual> waiting_;
  std::uint64_t seq_ = 0;
};

}  // namespace kube::workqueue::detail
