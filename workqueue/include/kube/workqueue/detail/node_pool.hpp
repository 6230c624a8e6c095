#pragma once

// Fixed-size node storage for the queue: nodes are carved from slabs, so a
// burst of adds takes consecutive memory (a FIFO walk over them is
// sequential) and no node costs a malloc/free. Slabs grow with the pool
// (each new one holds as many nodes as all before it, from 256 up to what
// fits in one 2 MiB huge page, 32,767 nodes of 64 bytes; see big_alloc.hpp),
// so a small queue stays small and a burst of a million adds makes a few
// dozen slabs, not thousands. A slab whose nodes are all free is returned to
// the system unless it is the only one with free room, so a queue that once
// held a million items does not keep their memory.
//
// Every node has a 32-bit id, which the index stores instead of a pointer
// (an index slot is 8 bytes, not 16: half the memory to fault in, grow and
// miss in cache). The id is the slab's number (high 16 bits) and the cell's
// place in the slab plus one (low 16 bits), so 0 is never an id, and
// node(id) is one load from a small table of slab bases plus a multiply.
// Slab numbers are reused when slabs are released.
//
// Single-threaded: used only on the queue's executor. Node must have a
// `std::uint32_t id` member (the pool sets it).

#include <kube/workqueue/detail/big_alloc.hpp>
#include <kube/workqueue/detail/poison.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kube::workqueue::detail {

/// A node id's low bits: its cell in the slab, counted from 1; the high bits
/// are the slab's number.
inline constexpr unsigned node_id_cell_bits = 16;

template <class Node>
class node_pool {
public:
  using id_type = std::uint32_t;

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
    std::size_t i;
    if (s->free != nullptr) {
      void* mem = s->free;
      unpoison(mem, sizeof(Node));
      s->free = s->free->next;
      i = static_cast<std::size_t>(static_cast<unsigned char*>(mem) - cell(s, 0)) / sizeof(Node);
    } else {
      i = s->used++;
      unpoison(cell(s, i), sizeof(Node));
    }
    ++s->live;
    if (s->free == nullptr && s->used == s->capacity) unlink(s);  // full
    Node* n;
    try {
      n = ::new (cell(s, i)) Node(std::forward<Args>(args)...);
    } catch (...) {
      give_back(s, cell(s, i));
      throw;
    }
    n->id = (s->number << cell_bits) | static_cast<id_type>(i + 1);
    return n;
  }

  void destroy(Node* n) noexcept {
    slab* s = slab_of(n->id);
    n->~Node();
    give_back(s, n);
  }

  /// The node with this id (it must be live).
  [[nodiscard]] Node* node(id_type id) const noexcept {
    return reinterpret_cast<Node*>(bases_[id >> cell_bits] + (id & cell_mask) * sizeof(Node));
  }

private:
  struct free_cell {
    free_cell* next;
  };
  static_assert(sizeof(Node) >= sizeof(free_cell));

  static constexpr unsigned cell_bits = node_id_cell_bits;
  static constexpr id_type cell_mask = (id_type{1} << cell_bits) - 1;
  static constexpr std::size_t max_slabs = std::size_t{1} << (32 - cell_bits);

  struct slab {
    slab* prev = nullptr;  // in avail_ (slabs with free room)
    slab* next = nullptr;
    free_cell* free = nullptr;
    std::size_t capacity = 0;
    std::size_t used = 0;  // cells ever handed out (the rest is untouched)
    std::size_t live = 0;
    id_type number = 0;  // index in bases_
    bool listed = false;
  };
  // The cells start after the header, on a cache line.
  static constexpr std::size_t header = (sizeof(slab) + 63) / 64 * 64;
  static_assert(header % alignof(Node) == 0);
  // The largest slab fills one huge page (or has the most cells an id can
  // name).
  static constexpr std::size_t max_slab = std::min((huge_page_bytes - header) / sizeof(Node), std::size_t{cell_mask});
  static constexpr std::size_t min_slab = std::min<std::size_t>(256, max_slab);
  static_assert(max_slab >= 1, "a queue item too large for one 2 MiB slab");

  static unsigned char* cell(slab* s, std::size_t i) noexcept {
    return reinterpret_cast<unsigned char*>(s) + header + i * sizeof(Node);
  }

  slab* slab_of(id_type id) const noexcept {
    // bases_[k] is cell 0's address minus one cell: ids count cells from 1.
    return reinterpret_cast<slab*>(bases_[id >> cell_bits] + sizeof(Node) - header);
  }

  void add_slab() {
    // A number for the slab first (if taking the memory then fails, the
    // number just stays free).
    if (free_numbers_.empty()) {
      if (bases_.size() == max_slabs) throw std::length_error("workqueue: more nodes than 32-bit ids can name");
      if (bases_.size() == bases_.capacity()) bases_.reserve(std::max<std::size_t>(8, bases_.size() * 2));
      free_numbers_.reserve(bases_.capacity());  // release() never allocates
      bases_.push_back(0);
      free_numbers_.push_back(static_cast<id_type>(bases_.size() - 1));
    }
    const id_type number = free_numbers_.back();
    const std::size_t want = std::clamp(total_, min_slab, max_slab);
    // The largest slab asks for the whole huge page (when its cells leave
    // a few bytes of it over, as 72-byte nodes do, big_alloc would
    // otherwise not treat it as one).
    std::size_t bytes = want == max_slab ? huge_page_bytes : header + want * sizeof(Node);
    void* mem = big_alloc(bytes);
    free_numbers_.pop_back();
    auto* s = ::new (mem) slab{};
    const std::size_t cap = std::min((bytes - header) / sizeof(Node), max_slab);
    s->capacity = cap;
    s->number = number;
    bases_[number] = reinterpret_cast<std::uintptr_t>(cell(s, 0)) - sizeof(Node);
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
    bases_[s->number] = 0;
    free_numbers_.push_back(s->number);  // (capacity reserved in add_slab)
    unpoison(cell(s, 0), s->capacity * sizeof(Node));
    s->~slab();
    std::free(s);
  }

  slab* avail_ = nullptr;
  std::size_t total_ = 0;              // capacity of all slabs
  std::vector<std::uintptr_t> bases_;  // by slab number: cell 0's address minus one cell (0: number free)
  std::vector<id_type> free_numbers_;  // slab numbers not in use
};

}  // namespace kube::workqueue::detail
