// HAMi's device ResourceQuota accounting (hami-scheduler-core.md §4.4, §10 step 7).

#include "fit/quota.h"

#include <gtest/gtest.h>

#include "fit_test_support.h"

namespace hamisim::fit::testing {
namespace {

model::ResourceQuota quota(std::string ns, Resources hard) {
  model::ResourceQuota q;
  q.metadata.name = "q";
  q.metadata.namespace_ = std::move(ns);
  q.spec.hard = resource_list(std::move(hard));
  return q;
}

PodAllocation charge(int64_t mem, int64_t cores) {
  PodAllocation a;
  a.charges["NVIDIA"].push_back({"GPU-a", mem, cores, 1});
  return a;
}

TEST(DeviceQuota, NoEntryOrUnknownVendorFits) {
  auto registry = nvidia_registry();
  DeviceQuota q(*registry);
  EXPECT_TRUE(q.fits("team", "NVIDIA", 1 << 30, 1000));
  q.add_quota(quota("team", {{"limits.nvidia.com/gpumem", "100"}}));
  EXPECT_TRUE(q.fits("team", "Unknown", 1000, 0));
  EXPECT_TRUE(q.fits("other", "NVIDIA", 1000, 0));
}

TEST(DeviceQuota, LimitsOnlyFromLimitsPrefixedExactIntegers) {
  auto registry = nvidia_registry();
  DeviceQuota q(*registry);
  q.add_quota(quota("team", {{"requests.nvidia.com/gpumem", "10"},
                             {"nvidia.com/gpucores", "10"},
                             {"limits.nvidia.com/gpucores", "1500m"}}));
  EXPECT_TRUE(q.fits("team", "NVIDIA", 1000, 1000));  // none of them is a usable limit
  q.add_quota(quota("team", {{"limits.nvidia.com/gpumem", "24000"}}));
  EXPECT_TRUE(q.fits("team", "NVIDIA", 24000, 0));
  EXPECT_FALSE(q.fits("team", "NVIDIA", 24001, 0));
}

TEST(DeviceQuota, UsageCountsAndClampsAtZero) {
  auto registry = nvidia_registry();
  DeviceQuota q(*registry);
  q.add_quota(quota("team", {{"limits.nvidia.com/gpumem", "24000"},
                             {"limits.nvidia.com/gpucores", "100"}}));
  q.add_usage("team", charge(20000, 60));
  EXPECT_TRUE(q.fits("team", "NVIDIA", 4000, 40));
  EXPECT_FALSE(q.fits("team", "NVIDIA", 4001, 0));
  EXPECT_FALSE(q.fits("team", "NVIDIA", 0, 41));
  q.add_usage("team", charge(50000, 500), -1);
  EXPECT_TRUE(q.fits("team", "NVIDIA", 24000, 100));
}

TEST(DeviceQuota, ExplicitZeroLimitBlocks) {
  auto registry = nvidia_registry();
  DeviceQuota q(*registry);
  q.add_quota(quota("team", {{"limits.nvidia.com/gpucores", "0"}}));
  EXPECT_FALSE(q.fits("team", "NVIDIA", 0, 1));
  EXPECT_TRUE(q.fits("team", "NVIDIA", 1000, 0));
}

TEST(DeviceQuota, AdmissionTakesAppSumOrInitMax) {
  auto registry = nvidia_registry();
  DeviceQuota q(*registry);
  q.add_quota(quota("team", {{"limits.nvidia.com/gpumem", "10000"}}));
  q.add_usage("team", charge(2000, 0));
  // App containers: 2 × 3000 = 6000 (+2000 used) fits; the init container's 9000 does not.
  model::Pod ok = PodBuilder("ok", "team")
                      .app(gpu_container("a", 1, 3000))
                      .app(gpu_container("b", 1, 3000))
                      .build();
  EXPECT_EQ(q.admission_check(ok), std::nullopt);
  model::Pod big = PodBuilder("big", "team")
                       .init(gpu_container("init", 1, 9000))
                       .app(gpu_container("a", 1, 1000))
                       .build();
  auto over = q.admission_check(big);
  ASSERT_TRUE(over);
  EXPECT_EQ(*over, "nvidia.com/gpumem: used 2000 + requested 9000 > limit 10000 in namespace team");
  // Two GPUs of 4500 each count 9000.
  model::Pod two = PodBuilder("two", "team").app(gpu_container("a", 2, 4500)).build();
  EXPECT_TRUE(q.admission_check(two));
  // Pods without devices always pass.
  EXPECT_EQ(q.admission_check(PodBuilder("cpu", "team").app(plain_container("c")).build()),
            std::nullopt);
}

}  // namespace
}  // namespace hamisim::fit::testing
