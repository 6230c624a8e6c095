#pragma once

// Fixed-size node storage for the queue: nodes are carved from slabs, so a
// burst of adds takes consecutive memory (a FIFO walk over them is
// sequential) and no node costs a malloc/free. Slabs grow with the pool
// (each new one holds as many nodes as all before it, from 256 up to 32Ki
// nodes; a slab of 2 MiB or more is rounded up to whole huge pages and
// filled, see big_alloc.hpp), so a small queue stays small and a burst of a
// million adds makes a few dozen slabs, not thousands. Each node records its slab
// (`home`); a slab whose nodes are all free is returned to the system unless
// it is the only one with free room, so a queue that once held a million
// items does not keep their memory.
//
// Single-threaded: used only on the queue's executor. Node must have a
// `void* home` member (the pool sets it; nullptr means "not from a pool").

#include <kube/workqueue/detail/big_alloc.hpp>
#include <kube/workqueue/detail/poison.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

namespace kube::workqueue::detail {

template <class Node>
class node_pool {
 public:
  node_pool() = default;
  node_pool(const node_pool&) = delete;
  node_pool& operator=(const node_pool&) = delete;

  /// Precondition: every node was destroyed.
  ~node_pool() {
    while (avail_ != nullptr) release(avail_);
  }

  template <class... Args>
  Node* create(Args&&... args) {
    if (avail_ == nullptr) add_slab();
    slab* s = avail_;
    void* mem;
    if (s->free != nullptr) {
      mem = s->free;
      unpoison(mem, sizeof(Node));
      s->free = s->free->next;
    } else {
      mem = cell(s, s->used++);
      unpoison(mem, sizeof(Node));
    }
    ++s->live;
    if (s->free == nullptr && s->used == s->capacity) unlink(s);  // full
    Node* n;
    try {
      n = ::new (mem) Node(std::forward<Args>(args)...);
    } catch (...) {
      give_back(s, mem);
      throw;
    }
    n->home = s;
    return n;
  }

  static void destroy(Node* n) noexcept {
    auto* s = static_cast<slab*>(n->home);
    n->~Node();
    s->owner->give_back(s, n);
  }

 private:
  struct free_cell {
    free_cell* next;
  };
  static_assert(sizeof(Node) >= sizeof(free_cell));

  static constexpr std::size_t min_slab = 256;
  static constexpr std::size_t max_slab = 32 * 1024;

  struct slab {
    node_pool* owner;
    slab* prev = nullptr;  // in avail_ (slabs with free room)
    slab* next = nullptr;
    free_cell* free = nullptr;
    std::size_t capacity = 0;
    std::size_t used = 0;  // cells ever handed out (the rest is untouched)
    std::size_t live = 0;
    bool listed = false;
  };
  // The cells start after the header, on a cache line.
  static constexpr std::size_t header = (sizeof(slab) + 63) / 64 * 64;
  static_assert(header % alignof(Node) == 0);
  static void* cell(slab* s, std::size_t i) noexcept {
    return reinterpret_cast<unsigned char*>(s) + header + i * sizeof(Node);
  }

  void add_slab() {
    std::size_t bytes = header + std::clamp(total_, min_slab, max_slab) * sizeof(Node);
    void* mem = big_alloc(bytes);  // (a large slab is rounded up to whole huge pages)
    auto* s = ::new (mem) slab{this};
    const std::size_t cap = (bytes - header) / sizeof(Node);
    s->capacity = cap;
    poison(cell(s, 0), cap * sizeof(Node));
    total_ += cap;
    link(s);
  }

  void give_back(slab* s, void* mem) noexcept {
    auto* c = static_cast<free_cell*>(mem);
    c->next = s->free;
    s->free = c;
    poison(c, sizeof(Node));
    --s->live;
    if (!s->listed) link(s);
    // An empty slab goes back to the system unless it is the only one with
    // room (keeps a steady queue from allocating a slab per add/done pair).
    if (s->live == 0 && (s->prev != nullptr || s->next != nullptr)) release(s);
  }

  void link(slab* s) noexcept {
    s->prev = nullptr;
    s->next = avail_;
    if (avail_ != nullptr) avail_->prev = s;
    avail_ = s;
    s->listed = true;
  }

  void unlink(slab* s) noexcept {
    (s->prev != nullptr ? s->prev->next : avail_) = s->next;
    if (s->next != nullptr) s->next->prev = s->prev;
    s->prev = s->next = nullptr;
    s->listed = false;
  }

  void release(slab* s) noexcept {
    unlink(s);
    total_ -= s->capacity;
    unpoison(cell(s, 0), s->capacity * sizeof(Node));
    s->~slab();
    std::free(s);
  }

  slab* avail_ = nullptr;
  std::size_t total_ = 0;  // capacity of all slabs
};

}  // namespace kube::workqueue::detail
