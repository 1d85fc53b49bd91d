// Container resources -> NVIDIA device request (hami-device-model.md §2.3, §2.4;
// hami-scheduler-core.md §5.1).

#include <gtest/gtest.h>

#include "fit_test_support.h"

namespace hamisim::fit::testing {
namespace nvidia_request_test {

using device::ContainerDeviceRequest;
using device::kNoMemPercentage;
using device::nvidia::NvidiaBackend;
using device::nvidia::NvidiaConfig;

ContainerDeviceRequest request(const model::Container& c, NvidiaConfig config = {}) {
  return NvidiaBackend(std::move(config)).request_for(c);
}

ContainerDeviceRequest expected(int32_t nums, int32_t mem, int32_t pct, int32_t cores) {
  return ContainerDeviceRequest{nums, "NVIDIA", mem, pct, cores};
}

// hami-device-model.md §2.3 step 6: Type is always "NVIDIA".
TEST(NvidiaRequest, MemoryAndCoresFromLimits) {
  EXPECT_EQ(request(container("c", {{kGpu, "2"}, {kGpuMem, "3000"}, {kGpuCores, "30"}})),
            expected(2, 3000, kNoMemPercentage, 30));
}

// §2.3: each resource is read from limits, falling back to requests.
TEST(NvidiaRequest, RequestsUsedWhenLimitsAbsent) {
  EXPECT_EQ(request(container("c", {}, {{kGpu, "1"}, {kGpuMem, "2000"}, {kGpuCores, "20"}})),
            expected(1, 2000, kNoMemPercentage, 20));
}

// §2.3: limits win over requests, per resource.
TEST(NvidiaRequest, LimitsWinOverRequestsPerResource) {
  EXPECT_EQ(request(container("c", {{kGpu, "2"}, {kGpuMem, "4000"}},
                              {{kGpu, "1"}, {kGpuMem, "1000"}, {kGpuCores, "10"}})),
            expected(2, 4000, kNoMemPercentage, 10));
}

// §2.3 step 1: count absent -> empty request.
TEST(NvidiaRequest, NoCountMeansNoRequest) {
  EXPECT_EQ(request(container("c", {{kGpuMem, "3000"}, {kGpuCores, "30"}})).nums, 0);
  EXPECT_EQ(request(plain_container("c")).nums, 0);
}

// §2.3 step 1: a count that is not an integer (1.5, 100m) -> empty request.
TEST(NvidiaRequest, NonIntegerCountMeansNoRequest) {
  EXPECT_EQ(request(container("c", {{kGpu, "1.5"}})).nums, 0);
  EXPECT_EQ(request(container("c", {{kGpu, "100m"}})).nums, 0);
}

// §2.3 step 2 / Appendix B.4: gpumem above MaxInt32 drops the whole request (16Gi).
TEST(NvidiaRequest, OversizedGpumemDropsWholeRequest) {
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "16Gi"}, {kGpuCores, "30"}})).nums, 0);
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "2147483648"}})).nums, 0);
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "2147483647"}})),
            expected(1, 2147483647, kNoMemPercentage, 0));
}

// §2.3 step 2: negative gpumem drops the whole request.
TEST(NvidiaRequest, NegativeGpumemDropsWholeRequest) {
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "-1"}})).nums, 0);
}

// §2.3 step 2: non-integer gpumem drops the whole request.
TEST(NvidiaRequest, NonIntegerGpumemDropsWholeRequest) {
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "1.5"}})).nums, 0);
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "500m"}})).nums, 0);
}

// §2.3 step 2: mem = value x memoryFactor, and the bound is MaxInt32 / factor.
TEST(NvidiaRequest, MemoryFactorMultipliesAndTightensBound) {
  NvidiaConfig cfg;
  cfg.memory_factor = 2;
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "1000"}}), cfg),
            expected(1, 2000, kNoMemPercentage, 0));
  // 2147483647 / 2 = 1073741823.
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "1073741823"}}), cfg),
            expected(1, 2147483646, kNoMemPercentage, 0));
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "1073741824"}}), cfg).nums, 0);
}

// §2.3 step 3: percentages above 100 are clamped to 100.
TEST(NvidiaRequest, PercentageAbove100Clamped) {
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMemPct, "150"}})), expected(1, 0, 100, 0));
}

// §2.3 step 3: a percentage in 1..100 is carried as is.
TEST(NvidiaRequest, PercentageCarried) {
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMemPct, "50"}})), expected(1, 0, 50, 0));
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMemPct, "1"}})), expected(1, 0, 1, 0));
}

// §2.3 step 3: a percentage <= 0 is ignored (101 again), then step 4 makes it 100 %.
TEST(NvidiaRequest, PercentageZeroOrNegativeIgnored) {
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMemPct, "0"}})), expected(1, 0, 100, 0));
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMemPct, "-5"}})), expected(1, 0, 100, 0));
  NvidiaConfig cfg;
  cfg.default_memory = 4096;
  // Ignored percentage -> defaultMemory applies, pct stays 101.
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMemPct, "0"}}), cfg),
            expected(1, 4096, kNoMemPercentage, 0));
}

// §2.3 step 3: a non-integer percentage is ignored (not an error, request kept).
TEST(NvidiaRequest, NonIntegerPercentageIgnored) {
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "3000"}, {kGpuMemPct, "50.5"}})),
            expected(1, 3000, kNoMemPercentage, 0));
}

// §2.3 step 4: no memory resource -> 100 % of each GPU (pct 100).
TEST(NvidiaRequest, OnlyCountMeansWholeGpuMemory) {
  EXPECT_EQ(request(container("c", {{kGpu, "1"}})), expected(1, 0, 100, 0));
}

// §2.3 step 4: defaultMemory replaces the 100 % default; pct stays 101.
TEST(NvidiaRequest, DefaultMemoryUsedWhenNoMemoryGiven) {
  NvidiaConfig cfg;
  cfg.default_memory = 4096;
  EXPECT_EQ(request(container("c", {{kGpu, "1"}}), cfg), expected(1, 4096, kNoMemPercentage, 0));
  // A percentage wins over defaultMemory.
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMemPct, "30"}}), cfg), expected(1, 0, 30, 0));
  // Explicit gpumem wins over defaultMemory.
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "100"}}), cfg),
            expected(1, 100, kNoMemPercentage, 0));
}

// §2.3 steps 2 and 4: an explicit gpumem of 0 is "no memory": 100 % (or defaultMemory).
TEST(NvidiaRequest, ZeroGpumemMeansNoMemory) {
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "0"}})), expected(1, 0, 100, 0));
}

// §2.3 step 4: defaultMemory is not multiplied by memoryFactor.
TEST(NvidiaRequest, DefaultMemoryNotScaledByMemoryFactor) {
  NvidiaConfig cfg;
  cfg.memory_factor = 4;
  cfg.default_memory = 100;
  EXPECT_EQ(request(container("c", {{kGpu, "1"}}), cfg), expected(1, 100, kNoMemPercentage, 0));
}

// §2.3 step 1: limits win even when they say 0 GPUs.
TEST(NvidiaRequest, ZeroCountInLimitsWins) {
  EXPECT_EQ(request(container("c", {{kGpu, "0"}}, {{kGpu, "1"}})).nums, 0);
}

// §2.3 step 5: cores = defaultCores unless gpucores given; no clamping here.
TEST(NvidiaRequest, DefaultCoresAndNoClampAtRequestTime) {
  NvidiaConfig cfg;
  cfg.default_cores = 20;
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "1000"}}), cfg).coresreq, 20);
  EXPECT_EQ(
      request(container("c", {{kGpu, "1"}, {kGpuMem, "1000"}, {kGpuCores, "50"}}), cfg).coresreq,
      50);
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuCores, "150"}})).coresreq, 150);
}

// §2.3 last paragraph: both gpumem (>0) and a percentage are carried.
TEST(NvidiaRequest, BothMemoryAndPercentageCarried) {
  EXPECT_EQ(request(container("c", {{kGpu, "1"}, {kGpuMem, "3000"}, {kGpuMemPct, "50"}})),
            expected(1, 3000, 50, 0));
}

// §2.1: resource names come from the configuration.
TEST(NvidiaRequest, ConfiguredResourceNames) {
  NvidiaConfig cfg;
  cfg.resource_count_name = "hami.io/gpu";
  cfg.resource_memory_name = "hami.io/gpumem";
  cfg.resource_core_name = "hami.io/gpucores";
  EXPECT_EQ(request(container("c", {{"hami.io/gpu", "1"},
                                    {"hami.io/gpumem", "1000"},
                                    {"hami.io/gpucores", "10"}}),
                    cfg),
            expected(1, 1000, kNoMemPercentage, 10));
  EXPECT_EQ(request(container("c", {{kGpu, "1"}}), cfg).nums, 0);
}

// §2.4: one entry per container, init containers first, empty map for non-GPU containers.
TEST(PodRequests, InitContainersFirstAndEmptyEntriesKept) {
  auto registry = nvidia_registry();
  model::Pod pod = PodBuilder()
                       .init(gpu_container("init", 1, 1000, 10))
                       .app(plain_container("sidecar"))
                       .app(gpu_container("main", 2, 2000, 20))
                       .build();
  device::PodRequests reqs = registry->requests_for(pod);
  ASSERT_EQ(reqs.size(), 3u);
  ASSERT_EQ(reqs[0].count("NVIDIA"), 1u);
  EXPECT_EQ(reqs[0].at("NVIDIA"), expected(1, 1000, kNoMemPercentage, 10));
  EXPECT_TRUE(reqs[1].empty());
  EXPECT_EQ(reqs[2].at("NVIDIA"), expected(2, 2000, kNoMemPercentage, 20));
  EXPECT_TRUE(device::has_device_requests(reqs));
}

// hami-scheduler-core.md §5.1: a pod without HAMi resources has no device requests.
TEST(PodRequests, PodWithoutDevicesHasNoRequests) {
  auto registry = nvidia_registry();
  model::Pod pod = PodBuilder()
                       .app(plain_container("a"))
                       .app(container("b", {{kGpu, "1"}, {kGpuMem, "16Gi"}}))
                       .build();
  EXPECT_FALSE(device::has_device_requests(registry->requests_for(pod)));
}

}  // namespace nvidia_request_test
}  // namespace hamisim::fit::testing
