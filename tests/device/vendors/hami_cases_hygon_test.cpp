// HAMi's own Hygon DCU test cases (pkg/device/hygon/device_test.go), their inputs and expected
// outputs ported to hamisim. Cases that hygon_test.cpp already checks are not repeated.

#include <gtest/gtest.h>

#include "device/hygon/hygon_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace hami_hygon {

using device::hygon::HygonBackend;

// One idle DCU of the given model type and ID.
std::vector<device::DeviceUsage> one_dcu(std::string type, std::string id = "dev-0") {
  std::vector<device::DeviceUsage> d(1);
  d[0].id = std::move(id);
  d[0].count = 10;
  d[0].totalmem = 1024;
  d[0].totalcore = 100;
  d[0].type = std::move(type);
  d[0].vendor = "DCU";
  d[0].health = true;
  return d;
}

bool fits(std::vector<device::DeviceUsage> d, std::map<std::string, std::string> annotations,
          std::string request_type = "DCU") {
  PodBuilder pb;
  for (auto& [k, v] : annotations) pb.annotate(k, v);
  return direct_fit(HygonBackend{}, d, {1, request_type, 10, 0, 10}, pb.build()).outcome.fits;
}

// Test_checkDCUtype: the model filters, table entry by entry.
TEST(HamiHygon, ModelFilters) {
  EXPECT_TRUE(fits(one_dcu("dcu"), {{"hygon.com/use-dcutype", "dcu"}}));
  EXPECT_FALSE(fits(one_dcu("test"), {{"hygon.com/use-dcutype", "dcu"}}));
  EXPECT_TRUE(fits(one_dcu("dcu"), {}));
  EXPECT_TRUE(fits(one_dcu("dcu"), {{"hygon.com/use-dcutype", "dcu,test"}}));
  EXPECT_FALSE(fits(one_dcu("dcu"), {{"hygon.com/nouse-dcutype", "dcu"}}));
  EXPECT_FALSE(fits(one_dcu("test"), {{"hygon.com/nouse-dcutype", "test,dcu"}}));
  EXPECT_TRUE(fits(one_dcu("test"), {{"hygon.com/nouse-dcutype", "dcu"}}));
}

// Test_checkType: request DCU on a DCU device with use-dcutype DCU fits; request "test" does
// not.
TEST(HamiHygon, CheckType) {
  EXPECT_TRUE(fits(one_dcu("DCU"), {{"hygon.com/use-dcutype", "DCU"}}));
  EXPECT_FALSE(fits(one_dcu("DCU"), {{"hygon.com/use-dcutype", "DCU"}}, "test"));
}

// Test_checkUUID: the five table entries.
TEST(HamiHygon, UuidFilters) {
  EXPECT_TRUE(fits(one_dcu("DCU", "123"), {{"hygon.com/use-gpuuuid", "123"}}));
  EXPECT_FALSE(fits(one_dcu("DCU", "456"), {{"hygon.com/use-gpuuuid", "123"}}));
  EXPECT_TRUE(fits(one_dcu("DCU", "456"), {}));
  EXPECT_FALSE(fits(one_dcu("DCU", "123"), {{"hygon.com/nouse-gpuuuid", "123"}}));
  EXPECT_TRUE(fits(one_dcu("DCU", "456"), {{"hygon.com/nouse-gpuuuid", "123"}}));
}

// Test_GenerateResourceRequests: a count in limits, memory and cores only in requests, are
// read from the requests; without memory, 100 % of it.
TEST(HamiHygon, RequestsReadEachResourceFromLimitsElseRequests) {
  const HygonBackend b;
  EXPECT_EQ(
      b.request_for(container(
          "c", {{"hygon.com/dcunum", "1"}},
          {{"hygon.com/dcunum", "1"}, {"hygon.com/dcucores", "1"}, {"hygon.com/dcumem", "1024"}})),
      (device::ContainerDeviceRequest{1, "DCU", 1024, 0, 1}));
  EXPECT_EQ(b.request_for(container("c", {{"hygon.com/dcunum", "1"}},
                                    {{"hygon.com/dcunum", "1"}, {"hygon.com/dcucores", "1"}})),
            (device::ContainerDeviceRequest{1, "DCU", 0, 100, 1}));
  EXPECT_EQ(b.request_for(container("c", {})).nums, 0);
}

// Test_GetNodeDevices "no dcu device" (":"), "node annotations not decode successfully" ("")
// and "dcu device length less than 7".
TEST(HamiHygon, RegistrationFailures) {
  const HygonBackend b;
  auto reg = [&](std::string value) {
    return b.node_devices(vendor_node("n", {{"hami.io/node-dcu-register", std::move(value)}}));
  };
  auto found = reg(":");
  EXPECT_NE(found.state, device::NodeDevices::State::kOk);
  EXPECT_EQ(found.message, "no gpu found on node");
  EXPECT_NE(reg("").state, device::NodeDevices::State::kOk);
  EXPECT_EQ(reg("test-0,1,1024,100,DCU:").state, device::NodeDevices::State::kMalformed);
}

// Test_PatchAnnotations "exist device" (Idx 1, test1, 2048 MiB, 1 core) and "no device".
TEST(HamiHygon, Annotations) {
  const HygonBackend b;
  device::ContainerDevice d;
  d.idx = 1;
  d.uuid = "test1";
  d.type = "DCU";
  d.usedmem = 2048;
  d.usedcores = 1;
  std::map<std::string, std::string> a;
  b.allocation_annotations({{d}}, a);
  EXPECT_EQ(a, (std::map<std::string, std::string>{
                   {"hami.io/dcu-devices-to-allocate", "test1,DCU,2048,1:;"},
                   {"hami.io/dcu-devices-allocated", "test1,DCU,2048,1:;"}}));
  a.clear();
  b.allocation_annotations({}, a);
  EXPECT_TRUE(a.empty());
}

}  // namespace hami_hygon
}  // namespace hamisim::fit::testing
