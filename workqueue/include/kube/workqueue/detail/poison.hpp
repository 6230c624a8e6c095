#pragma once

// Under AddressSanitizer the queue's own allocators (node slabs, message
// blocks) poison their free cells, so a use of a freed node or message is
// reported as it would be for a freed heap block. Without ASan these do
// nothing.

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define KUBE_WQ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KUBE_WQ_ASAN 1
#endif
#endif
#if defined(KUBE_WQ_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace kube::workqueue::detail {

inline void poison(void* p, std::size_t n) noexcept {
#if defined(KUBE_WQ_ASAN)
  ASAN_POISON_MEMORY_REGION(p, n);
#else
  (void)p;
  (void)n;
#endif
}

inline void unpoison(void* p, std::size_t n) noexcept {
#if defined(KUBE_WQ_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
  (void)p;
  (void)n;
#endif
}

}  // namespace kube::workqueue::detail

#undef KUBE_WQ_ASAN
