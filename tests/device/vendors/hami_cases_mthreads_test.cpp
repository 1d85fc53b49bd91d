// HAMi's own Moore Threads test cases (pkg/device/mthreads/device_test.go), their inputs and
// expected outputs ported to hamisim. Cases that mthreads_test.cpp already checks are not
// repeated.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/mthreads/mthreads_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace hami_mthreads {

using device::mthreads::MthreadsBackend;

constexpr const char* kCount = "mthreads.com/vgpu";
constexpr const char* kMemory = "mthreads.com/sgpu-memory";
constexpr const char* kCores = "mthreads.com/sgpu-core";

// TestDevices_Fit's device: Count 100, 128 MiB, Totalcore 100, healthy, Mthreads.
device::DeviceUsage gpu(std::string id) {
  device::DeviceUsage d;
  d.id = std::move(id);
  d.count = 100;
  d.totalmem = 128;
  d.totalcore = 100;
  d.type = d.vendor = "Mthreads";
  d.health = true;
  return d;
}

// TestDevices_Fit "fit success" and "fit fail: memory not enough".
TEST(HamiMthreads, FitTable) {
  std::vector<device::DeviceUsage> d = {gpu("dev-0"), gpu("dev-1")};
  auto f = direct_fit(MthreadsBackend{}, d, {1, "Mthreads", 64, 0, 50});
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-1"));
  d = {gpu("dev-0")};
  f = direct_fit(MthreadsBackend{}, d, {1, "Mthreads", 512, 0, 50});
  EXPECT_EQ(f.reason, "1/1 CardInsufficientMemory");
}

// Test_checkUUID: the five table entries (mthreads.ai keys), through Fit.
TEST(HamiMthreads, UuidFilters) {
  auto fits = [](std::string id, std::string key, std::string value) {
    std::vector<device::DeviceUsage> d = {gpu(std::move(id))};
    PodBuilder pb;
    if (!key.empty()) pb.annotate(std::move(key), std::move(value));
    return direct_fit(MthreadsBackend{}, d, {1, "Mthreads", 64, 0, 10}, pb.build()).outcome.fits;
  };
  EXPECT_TRUE(fits("test1", "", ""));
  EXPECT_TRUE(fits("test1", "mthreads.ai/use-gpuuuid", "test1"));
  EXPECT_FALSE(fits("test2", "mthreads.ai/use-gpuuuid", "test1"));
  EXPECT_FALSE(fits("test1", "mthreads.ai/nouse-gpuuuid", "test1"));
  EXPECT_TRUE(fits("test2", "mthreads.ai/nouse-gpuuuid", "test1"));
}

// Test_checkType: a request of type Mthreads matches, "test111" does not.
TEST(HamiMthreads, CheckType) {
  std::vector<device::DeviceUsage> d = {gpu("dev-0")};
  EXPECT_TRUE(direct_fit(MthreadsBackend{}, d, {1, "Mthreads", 64, 0, 10}).outcome.fits);
  EXPECT_FALSE(direct_fit(MthreadsBackend{}, d, {1, "test111", 64, 0, 10}).outcome.fits);
}

// Test_GenerateResourceRequests "all resources set" ({1, Mthreads, 512000, 0, 1}) and
// "count don't set to request" (memory and cores without a count: no request).
TEST(HamiMthreads, Requests) {
  const MthreadsBackend b;
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kMemory, "1000"}, {kCores, "1"}})),
            (device::ContainerDeviceRequest{1, "Mthreads", 512000, 0, 1}));
  EXPECT_EQ(b.request_for(container("c", {}, {{kMemory, "1000"}, {kCores, "1"}})).nums, 0);
}

// Test_MutateAdmission: {vgpu 2, memory 2, core 1} uses Moore Threads (whole GPUs: cores 32,
// memory 192, request-gpu-num 2); memory and core without a count do not; {vgpu 1, core 1}
// does (a whole GPU); {vgpu 1, memory 3} is rejected (HAMi returns "uses" together with the
// error; hamisim's admission returns the error, which rejects the pod all the same).
TEST(HamiMthreads, Admission) {
  const device::mthreads::MthreadsConfig config;
  using device::mthreads::admit_container;
  auto a = admit_container(config, container("c", {{kCount, "2"}, {kMemory, "2"}, {kCores, "1"}}));
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->found);
  EXPECT_EQ(a->set_cores, 32);
  EXPECT_EQ(a->set_memory, 192);
  EXPECT_EQ(a->request_gpu_num, "2");
  a = admit_container(config, container("c", {{kMemory, "2"}, {kCores, "1"}}));
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->found);
  a = admit_container(config, container("c", {{kCount, "1"}, {kCores, "1"}}));
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->found);
  a = admit_container(config, container("c", {{kCount, "1"}, {kMemory, "2"}, {kCores, "1"}}));
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->found);
  EXPECT_FALSE(admit_container(config, container("c", {{kCount, "1"}, {kMemory, "3"}})));
}

// Test_PatchAnnotations "exist device": test1 (Idx 0, 1000 MiB, 1 core) -> the allocated
// string and gpu-index 0.
TEST(HamiMthreads, Annotations) {
  const MthreadsBackend b;
  device::ContainerDevice d;
  d.uuid = "test1";
  d.type = "Mthreads";
  d.usedmem = 1000;
  d.usedcores = 1;
  std::map<std::string, std::string> a;
  b.allocation_annotations({{d}}, a);
  EXPECT_EQ(a.at("hami.io/mthreads-vgpu-devices-allocated"), "test1,Mthreads,1000,1:;");
  EXPECT_EQ(a.at("mthreads.com/gpu-index"), "0");
}

}  // namespace hami_mthreads
}  // namespace hamisim::fit::testing
