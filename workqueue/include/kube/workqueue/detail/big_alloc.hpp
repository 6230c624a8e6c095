#pragma once

// Memory for the queue's arrays that may grow large (the index, the node
// slabs, the blocks of cross-thread messages, the ring of ready items, the
// delay heap). A block of 2 MiB or more is placed on a 2 MiB boundary, its
// size rounded up to whole 2 MiB pages, and offered to the kernel for
// transparent huge pages. Two reasons, both measured in
// test/bench/workqueue (docs/performance.md):
//   - a burst of a million adds touches ~100 MiB of fresh memory; faulting
//     it in 4 KiB pages costs more than the queue's own work (one fault per
//     4 KiB, a microsecond or two each under a hypervisor);
//   - a lookup in a table of tens of MiB is a random access, and with 4 KiB
//     pages nearly every one also misses the TLB.
// Smaller blocks start on a cache line (node slabs rely on it: a node is
// one line). Free with std::free.

#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kube::workqueue::detail {

inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

/// Allocates at least `bytes` (updated to what was allocated, which the
/// caller may use). Throws std::bad_alloc.
inline void* big_alloc(std::size_t& bytes) {
  void* p;
  if (bytes >= huge_page_bytes) {
    bytes = (bytes + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
    p = std::aligned_alloc(huge_page_bytes, bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p != nullptr) ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  } else {
    bytes = (bytes + 63) / 64 * 64;  // (aligned_alloc wants a multiple of the alignment)
    p = std::aligned_alloc(64, bytes);
  }
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

/// Frees big_alloc's memory, for std::unique_ptr.
struct big_free {
  void operator()(void* p) const noexcept { std::free(p); }
};

/// A std::allocator replacement that takes its memory from big_alloc, for a
/// std::vector that may grow to many MiB (the delay heap).
template <class T>
struct big_allocator {
  using value_type = T;
  big_allocator() = default;
  template <class U>
  explicit big_allocator(const big_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    std::size_t bytes = n * sizeof(T);
    return static_cast<T*>(big_alloc(bytes));
  }
  void deallocate(T* p, std::size_t) noexcept { std::free(p); }
  friend bool operator==(const big_allocator&, const big_allocator&) noexcept { return true; }
};

}  // namespace kube::workqueue::detail
