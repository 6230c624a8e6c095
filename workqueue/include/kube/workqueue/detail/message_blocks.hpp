#pragma once

// Storage for the messages that carry add() / add_after() from a thread
// outside the queue's executor to it (queue_impl::push_remote). A message
// lives from the call until the executor's next drain of the remote stack.
//
// Each adding thread carves its messages from a block it owns (one
// thread-local block per message type, shared by all queues of that item
// type), by bumping an index: no malloc, and a burst of adds writes
// consecutive memory. The executor destroys a message after applying it
// and counts it off its block with one atomic subtraction; the adding
// thread never touches that counter per message, so the two sides do not
// bounce a cache line per add.
//
// A block's counter starts at `bias`. Destroying a message subtracts 1. When
// its owner is done with a block (it is full, or the thread exits) the owner
// subtracts bias - used, so the counter reaches 0 exactly once, after the
// last message and the owner's release, whichever comes last; that side
// frees the block. A full block whose messages are all gone is reused by
// its owner from the start instead (no new memory, and it is hot in cache).
//
// Blocks double from 32 messages up to 2 MiB (which big_alloc places on a
// huge page: a burst of a million adds from another thread would otherwise
// fault in ~80 MiB of 4 KiB pages). Memory: each thread that has added from
// outside keeps one block (up to 2 MiB after a burst) until it exits, plus
// the blocks of messages not yet drained.
//
// Msg must have a `void* block` member (set here).

#include <kube/workqueue/detail/big_alloc.hpp>
#include <kube/workqueue/detail/poison.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

namespace kube::workqueue::detail {

template <class Msg>
class message_blocks {
public:
  /// A new message, built on the calling thread. Throws what Msg's
  /// constructor throws, or std::bad_alloc.
  template <class... Args>
  static Msg* make(Args&&... args) {
    holder& h = current_;
    if (h.used == h.cap) next_block(h);
    void* mem = cell(h.b, h.used);
    unpoison(mem, sizeof(Msg));
    Msg* m;
    try {
      m = ::new (mem) Msg(std::forward<Args>(args)...);
    } catch (...) {
      poison(mem, sizeof(Msg));
      throw;
    }
    ++h.used;
    m->block = h.b;
    return m;
  }

  /// Destroys a message made by make(), on any thread.
  static void destroy(Msg* m) noexcept {
    auto* b = static_cast<block*>(m->block);
    m->~Msg();
    poison(m, sizeof(Msg));
    release(b, 1);
  }

private:
  // The adding thread reads nothing here per message (it keeps its own
  // copy of cap), so only the executor's subtractions touch this line.
  struct block {
    std::atomic<std::size_t> refs{bias};
    std::size_t cap = 0;
  };
  static constexpr std::size_t bias = std::size_t{1} << 62;
  static constexpr std::size_t header = (sizeof(block) + 63) / 64 * 64;
  static constexpr std::size_t min_cells = 32;
  static_assert(header % alignof(Msg) == 0);

  // The calling thread's current block; released when the thread exits.
  struct holder {
    block* b = nullptr;
    std::size_t used = 0;  // messages carved from b so far
    std::size_t cap = 0;   // b->cap
    std::size_t next_cells = min_cells;
    holder() = default;
    holder(const holder&) = delete;
    holder& operator=(const holder&) = delete;
    ~holder() {
      if (b != nullptr) release(b, bias - used);
    }
  };
  static thread_local holder current_;

  static void* cell(block* b, std::size_t i) noexcept {
    return reinterpret_cast<unsigned char*>(b) + header + i * sizeof(Msg);
  }

  static void next_block(holder& h) {
    if (h.b != nullptr) {
      // Every message of the full block is gone: start it over.
      if (h.b->refs.load(std::memory_order_acquire) == bias - h.used) {
        h.b->refs.store(bias, std::memory_order_relaxed);
        h.used = 0;
        return;
      }
    }
    std::size_t bytes = header + h.next_cells * sizeof(Msg);
    if (bytes > huge_page_bytes) bytes = huge_page_bytes;
    void* mem = big_alloc(bytes);
    auto* nb = ::new (mem) block{};
    nb->cap = (bytes - header) / sizeof(Msg);
    poison(cell(nb, 0), nb->cap * sizeof(Msg));
    if (h.b != nullptr) release(h.b, bias - h.used);
    h.b = nb;
    h.used = 0;
    h.cap = nb->cap;
    h.next_cells = std::min(h.next_cells * 2, (huge_page_bytes - header) / sizeof(Msg));
  }

  // Subtracts `count`; the side that brings the counter to 0 frees the block.
  static void release(block* b, std::size_t count) noexcept {
    if (b->refs.fetch_sub(count, std::memory_order_acq_rel) == count) {
      unpoison(cell(b, 0), b->cap * sizeof(Msg));
      b->~block();
      std::free(b);
    }
  }
};

template <class Msg>
thread_local typename message_blocks<Msg>::holder message_blocks<Msg>::current_;

}  // namespace kube::workqueue::detail
