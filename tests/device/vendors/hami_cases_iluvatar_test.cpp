// HAMi's own Iluvatar test cases (pkg/device/iluvatar/device_test.go), their inputs and
// expected outputs ported to hamisim. Cases that iluvatar_test.cpp already checks are not
// repeated.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/iluvatar/iluvatar_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace hami_iluvatar {

using device::iluvatar::IluvatarBackend;

IluvatarBackend mr_v100() {
  return IluvatarBackend(device::iluvatar::chart_configs()[0]);
}

// Test_Fit's device: Count 100, 128 MiB, Totalcore 100, healthy, MR-V100.
device::DeviceUsage gpu(std::string id) {
  device::DeviceUsage d;
  d.id = std::move(id);
  d.count = 100;
  d.totalmem = 128;
  d.totalcore = 100;
  d.type = d.vendor = "MR-V100";
  d.health = true;
  return d;
}

// Test_Fit "fit success" (two idle devices: the last) and "fit fail: memory not enough".
TEST(HamiIluvatar, FitTable) {
  std::vector<device::DeviceUsage> d = {gpu("dev-0"), gpu("dev-1")};
  auto f = direct_fit(mr_v100(), d, {1, "MR-V100", 64, 0, 50});
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-1"));
  d = {gpu("dev-0")};
  f = direct_fit(mr_v100(), d, {1, "MR-V100", 512, 0, 50});
  EXPECT_FALSE(f.outcome.fits);
  EXPECT_EQ(f.reason, "1/1 CardInsufficientMemory");
}

// TestFit_MutexRejectsUsedDevice: Count 100, used once, mutex.
TEST(HamiIluvatar, MutexRejectsAUsedDevice) {
  std::vector<device::DeviceUsage> d = {gpu("dev-0")};
  d[0].used = 1;
  auto f = direct_fit(mr_v100(), d, {1, "MR-V100", 64, 0, 50}, PodBuilder().build(), "mutex");
  EXPECT_EQ(f.reason, "1/1 ExclusiveDeviceAllocateConflict");
}

// Test_GenerateResourceRequests "all resources set to limits and requests" (vMem 1000 = 256000
// MiB, vCore 100) and "all resources don't set".
TEST(HamiIluvatar, Requests) {
  const IluvatarBackend b = mr_v100();
  EXPECT_EQ(b.request_for(container("c", {{"iluvatar.ai/MR-V100-vgpu", "1"},
                                          {"iluvatar.ai/MR-V100.vMem", "1000"},
                                          {"iluvatar.ai/MR-V100.vCore", "100"}})),
            (device::ContainerDeviceRequest{1, "MR-V100", 256000, 0, 100}));
  EXPECT_EQ(b.request_for(container("c", {})).nums, 0);
}

// TestGetNodeDevices "failed to unmarshal node devices": an empty registration.
TEST(HamiIluvatar, EmptyRegistrationDoesNotDecode) {
  const IluvatarBackend b = mr_v100();
  auto found = b.node_devices(vendor_node("node-04", {{"hami.io/node-MR-V100-register", ""}}));
  EXPECT_NE(found.state, device::NodeDevices::State::kOk);
  EXPECT_TRUE(found.devices.empty());
}

// TestPatchAnnotations "No devices" and "With devices" (k8s-gpu-iluvatar-0, no usage).
TEST(HamiIluvatar, Annotations) {
  const IluvatarBackend b = mr_v100();
  device::ContainerDevice d;
  d.uuid = "k8s-gpu-iluvatar-0";
  d.type = "MR-V100";
  std::map<std::string, std::string> a;
  b.allocation_annotations({{d}}, a);
  EXPECT_EQ(a, (std::map<std::string, std::string>{
                   {"hami.io/MR-V100-devices-to-allocate", "k8s-gpu-iluvatar-0,MR-V100,0,0:;"},
                   {"hami.io/MR-V100-devices-allocated", "k8s-gpu-iluvatar-0,MR-V100,0,0:;"}}));
  a.clear();
  b.allocation_annotations({}, a);
  EXPECT_TRUE(a.empty());
}

}  // namespace hami_iluvatar
}  // namespace hamisim::fit::testing
