// The common selectors evaluate without touching the heap: strings are compared as views
// into the expression and the device. Counted by replacing the global operator new in this
// test executable.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "cel/selector.h"
#include "fake_device.h"

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
namespace {

long allocations_during_match(const Selector& s, const Device& d, bool* result) {
  const long before = g_allocations.load();
  auto r = s.matches(d);
  const long after = g_allocations.load();
  *result = r.ok() && *r;
  return after - before;
}

TEST(Allocation, CommonSelectorsAllocateNothing) {
  if (!HAMISIM_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocations are not counted under sanitizers";
  testing::FakeDevice gpu("gpu.nvidia.com");
  gpu.attr("gpu.nvidia.com", "type", std::string("gpu"))
      .attr("gpu.nvidia.com", "uuid", std::string("GPU-0123456789abcdef"))
      .attr("gpu.nvidia.com", "index", int64_t{2})
      .cap("gpu.nvidia.com", "memory", "80Gi");
  const char* exprs[] = {
      "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
      "device.attributes[\"gpu.nvidia.com\"].uuid in [\"GPU-0123456789abcdef\", \"GPU-x\"]",
      "!(device.attributes[\"gpu.nvidia.com\"].uuid in [\"GPU-y\"])",
      "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
      "cel.bind(g, device.attributes['gpu.nvidia.com'], g.type == 'gpu' && g.index == 2)",
      "has(device.attributes['gpu.nvidia.com'].type) && "
      "device.attributes['gpu.nvidia.com'].type.startsWith('g')",
  };
  for (const char* e : exprs) {
    const long before_compile = g_allocations.load();
    auto s = Selector::compile(e);
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_GT(g_allocations.load(), before_compile) << "the counter counts nothing";
    bool result = false;
    EXPECT_EQ(allocations_during_match(*s, gpu, &result), 0) << e;
    EXPECT_TRUE(result) << e;
  }
}

}  // namespace
}  // namespace hamisim::cel
