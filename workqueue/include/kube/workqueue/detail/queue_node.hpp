#pragma once

// One node per item that is queued, held by a worker and/or waiting for a
// delay: the item is stored here only, and the queue's one index finds it
// whatever its state. Nodes come from a node_pool, on the executor only.
//
// With a std::string item a node is 64 bytes, one cache line (slab cells
// are line-aligned): it keeps only the hash's low 32 bits (the index's home
// slot, for unindexing; the index slot keeps the same 32 bits) and the delay
// heap's sequence truncated to 32 bits (see delay_heap's stale()). The item
// (node_item: a std::string key of up to 32 bytes is kept inline) comes
// first; the byte fields are declared first so they fill the end of its
// storage.

#include <kube/base/clock.hpp>
#include <kube/workqueue/detail/node_item.hpp>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace kube::workqueue::detail {

// client-go's sets as bits. st_dirty: to be handed out (queued, or requeued
// at done()); st_processing: held by a worker; st_waiting: waits in the
// delay heap (independent of the other two, as client-go's waiting set is
// separate from its queue). A node is queued exactly when it is dirty and
// not processing. State 0 with no heap entry pointing at it: idle, retired
// lazily (see queue_impl::maybe_retire).
enum : std::uint8_t { st_dirty = 1, st_processing = 2, st_waiting = 4 };
inline constexpr std::uint8_t st_active = st_dirty | st_processing;

template <class T, class Hash, class KeyEqual>
struct queue_node : node_item<T, Hash, KeyEqual> {
  template <class U>
  queue_node(U&& i, std::size_t h)
      : node_item<T, Hash, KeyEqual>(std::forward<U>(i)),
        hash_lo(static_cast<std::uint32_t>(h)) {}
  std::uint8_t state = 0;
  bool idle_listed = false;      // on the queue's list of idle nodes
  std::uint32_t hash_lo;         // low bits of the item's hash
  std::uint32_t seq = 0;         // delay heap: sequence of the current entry (low 32 bits)
  std::uint32_t heap_refs = 0;   // delay heap entries pointing here (current or stale)
  clock::time_point ready_at{};  // delay heap: current ready time
  std::uint32_t id = 0;          // set by the pool (node_pool.hpp); the index and the ready ring store it
};

}  // namespace kube::workqueue::detail
