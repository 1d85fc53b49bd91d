// HAMi's own Vastai test cases (pkg/device/vastai/device_test.go), their inputs and expected
// outputs ported to hamisim. Cases that vastai_test.cpp already checks are not repeated.

#include <gtest/gtest.h>

#include "device/vastai/vastai_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace hami_vastai {

using device::vastai::VastaiBackend;

// TestDevices_Fit's device: Count 1, no memory or cores, healthy, Vastai.
device::DeviceUsage card(std::string id) {
  device::DeviceUsage d;
  d.id = std::move(id);
  d.count = 1;
  d.type = d.vendor = "Vastai";
  d.health = true;
  return d;
}

// TestDevices_Fit "fit fail: type mismatch", "user assign use uuid mismatch" and "user assign
// no use uuid match".
TEST(HamiVastai, FitTable) {
  std::vector<device::DeviceUsage> d = {card("dev-0")};
  EXPECT_EQ(direct_fit(VastaiBackend{}, d, {1, "OtherType", 512, 0, 50}).reason,
            "1/1 CardTypeMismatch");
  d = {card("dev-1")};
  EXPECT_EQ(direct_fit(VastaiBackend{}, d, {1, "Vastai", 0, 0, 0},
                       PodBuilder().annotate("vastaitech.com/use-gpuuuid", "dev-0").build())
                .reason,
            "1/1 CardUuidMismatch");
  d = {card("dev-0")};
  EXPECT_EQ(direct_fit(VastaiBackend{}, d, {1, "Vastai", 0, 0, 0},
                       PodBuilder().annotate("vastaitech.com/nouse-gpuuuid", "dev-0").build())
                .reason,
            "1/1 CardUuidMismatch");
}

// Test_GenerateResourceRequests "only set to limits" and "don't set to limits and request".
TEST(HamiVastai, Requests) {
  const VastaiBackend b;
  EXPECT_EQ(b.request_for(container("c", {{"vastaitech.com/va", "1"}})),
            (device::ContainerDeviceRequest{1, "Vastai", 0, 100, 0}));
  EXPECT_EQ(b.request_for(container("c", {})).nums, 0);
}

// Test_GetNodeDevices "no vastai device" (":") and "node annotations not decode successfully"
// (""): no devices.
TEST(HamiVastai, UnreadableRegistrations) {
  const VastaiBackend b;
  for (const char* value : {":", ""}) {
    auto found = b.node_devices(vendor_node("n", {{"hami.io/node-va-register", value}}));
    EXPECT_NE(found.state, device::NodeDevices::State::kOk) << value;
    EXPECT_TRUE(found.devices.empty()) << value;
  }
}

// Test_PatchAnnotations "exist device" (test1, Idx 1, 2048 MiB, 1 core) and "no device".
TEST(HamiVastai, Annotations) {
  const VastaiBackend b;
  device::ContainerDevice d;
  d.idx = 1;
  d.uuid = "test1";
  d.type = "Vastai";
  d.usedmem = 2048;
  d.usedcores = 1;
  std::map<std::string, std::string> a;
  b.allocation_annotations({{d}}, a);
  EXPECT_EQ(a, (std::map<std::string, std::string>{
                   {"hami.io/Vastai-devices-to-allocate", "test1,Vastai,2048,1:;"},
                   {"hami.io/Vastai-devices-allocated", "test1,Vastai,2048,1:;"}}));
  a.clear();
  b.allocation_annotations({}, a);
  EXPECT_TRUE(a.empty());
}

}  // namespace hami_vastai
}  // namespace hamisim::fit::testing
