// HAMi's own Biren test cases (pkg/device/biren/device_test.go), their inputs and expected
// outputs ported to hamisim. Cases that biren_test.cpp already checks are not repeated.

#include <gtest/gtest.h>

#include "device/biren/biren_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace hami_biren {

using device::biren::BirenBackend;

// TestDevices_Fit's device: Count 1, no memory or cores, healthy, Biren.
device::DeviceUsage card(std::string id) {
  device::DeviceUsage d;
  d.id = std::move(id);
  d.count = 1;
  d.type = d.vendor = "Biren";
  d.health = true;
  return d;
}

// TestDevices_Fit "fit fail: type mismatch", "user assign use uuid mismatch" and "user assign
// no use uuid match".
TEST(HamiBiren, FitTable) {
  std::vector<device::DeviceUsage> d = {card("dev-0")};
  EXPECT_EQ(direct_fit(BirenBackend{}, d, {1, "OtherType", 512, 0, 50}).reason,
            "1/1 CardTypeMismatch");
  d = {card("dev-1")};
  EXPECT_EQ(direct_fit(BirenBackend{}, d, {1, "Biren", 0, 0, 0},
                       PodBuilder().annotate("birentech.com/use-gpuuuid", "dev-0").build())
                .reason,
            "1/1 CardUuidMismatch");
  d = {card("dev-0")};
  EXPECT_EQ(direct_fit(BirenBackend{}, d, {1, "Biren", 0, 0, 0},
                       PodBuilder().annotate("birentech.com/nouse-gpuuuid", "dev-0").build())
                .reason,
            "1/1 CardUuidMismatch");
}

// Test_GenerateResourceRequests "only set to limits" and "don't set to limits and request".
TEST(HamiBiren, Requests) {
  const BirenBackend b;
  EXPECT_EQ(b.request_for(container("c", {{"birentech.com/gpu", "1"}})),
            (device::ContainerDeviceRequest{1, "Biren", 0, 100, 0}));
  EXPECT_EQ(b.request_for(container("c", {})).nums, 0);
}

// Test_GetNodeDevices "no biren device" (":") and "node annotations not decode successfully"
// (""): no devices.
TEST(HamiBiren, UnreadableRegistrations) {
  const BirenBackend b;
  for (const char* value : {":", ""}) {
    auto found = b.node_devices(vendor_node("n", {{"hami.io/node-biren-register", value}}));
    EXPECT_NE(found.state, device::NodeDevices::State::kOk) << value;
    EXPECT_TRUE(found.devices.empty()) << value;
  }
}

// Test_PatchAnnotations "exist device" (test1, Idx 1, 2048 MiB, 1 core) and "no device".
TEST(HamiBiren, Annotations) {
  const BirenBackend b;
  device::ContainerDevice d;
  d.idx = 1;
  d.uuid = "test1";
  d.type = "Biren";
  d.usedmem = 2048;
  d.usedcores = 1;
  std::map<std::string, std::string> a;
  b.allocation_annotations({{d}}, a);
  EXPECT_EQ(a, (std::map<std::string, std::string>{
                   {"hami.io/Biren-devices-to-allocate", "test1,Biren,2048,1:;"},
                   {"hami.io/Biren-devices-allocated", "test1,Biren,2048,1:;"}}));
  a.clear();
  b.allocation_annotations({}, a);
  EXPECT_TRUE(a.empty());
}

}  // namespace hami_biren
}  // namespace hamisim::fit::testing
