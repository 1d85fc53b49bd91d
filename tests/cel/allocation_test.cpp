// The common selectors evaluate without touching the heap: strings are compared as views
// into the expression and the device. Counted by replacing the global operator new in this
// test executable.
#include <gtest/gtest.h>

#include <string>

#include "cel/selector.h"
#include "fake_device.h"

#include "count_allocations.h"

namespace hamisim::cel {
namespace {

long allocations_during_match(const Selector& s, const Device& d, bool* result) {
  const long before = allocations_so_far();
  auto r = s.matches(d);
  const long after = allocations_so_far();
  *result = r.ok() && *r;
  return after - before;
}

TEST(Allocation, CommonSelectorsAllocateNothing) {
  if (!allocations_are_counted()) GTEST_SKIP() << "allocations are not counted under sanitizers";
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
      ("has(device.attributes['gpu.nvidia.com'].type) && "
       "device.attributes['gpu.nvidia.com'].type.startsWith('g')"),
  };
  for (const char* e : exprs) {
    const long before_compile = allocations_so_far();
    auto s = Selector::compile(e);
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_GT(allocations_so_far(), before_compile) << "the counter counts nothing";
    bool result = false;
    EXPECT_EQ(allocations_during_match(*s, gpu, &result), 0) << e;
    EXPECT_TRUE(result) << e;
  }
}

}  // namespace
}  // namespace hamisim::cel
