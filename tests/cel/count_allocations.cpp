#include "count_allocations.h"

#include <atomic>
#include <cstdlib>
#include <new>

// Sanitizer runtimes bring their own operator new; the count is taken in plain builds only.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HAMISIM_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define HAMISIM_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef HAMISIM_COUNT_ALLOCATIONS
#define HAMISIM_COUNT_ALLOCATIONS 1
#endif

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

#if HAMISIM_COUNT_ALLOCATIONS
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
#endif

namespace hamisim::cel {

bool allocations_are_counted() {
  return HAMISIM_COUNT_ALLOCATIONS != 0;
}

long allocations_so_far() {
  return g_allocations.load(std::memory_order_relaxed);
}

}  // namespace hamisim::cel
