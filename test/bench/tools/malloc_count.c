/* Counts malloc calls of a process (LD_PRELOAD shim; not part of the build).
 * Prints "MALLOCS <calls> big <calls of 1 KiB or more>" to stderr at exit.
 *
 *   gcc -O2 -shared -fPIC test/bench/tools/malloc_count.c -o /tmp/malloc_count.so
 *   LD_PRELOAD=/tmp/malloc_count.so kube-bench-informer ... --updates 500
 *   LD_PRELOAD=/tmp/malloc_count.so kube-bench-informer ... --updates 2500
 *
 * The difference of two runs divided by the difference in updates is the
 * number of allocations per watch event (docs/performance.md). */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

extern void* __libc_malloc(size_t size);

static atomic_long calls;
static atomic_long big_calls;

void* malloc(size_t size) {
  atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
  if (size >= 1024) atomic_fetch_add_explicit(&big_calls, 1, memory_order_relaxed);
  return __libc_malloc(size);
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "MALLOCS %ld big %ld\n", (long)atomic_load(&calls), (long)atomic_load(&big_calls));
}
