// HAMi's own AMD test cases (pkg/device/amd/device_test.go, device_alloctype_test.go), their
// inputs and expected outputs ported to hamisim. Cases that amd_test.cpp already checks are
// not repeated.

#include <gtest/gtest.h>

#include "device/amd/amd_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace hami_amd {

using device::amd::AmdBackend;

device::DeviceUsage gpu(std::string type, int32_t cus, const std::string* info = nullptr) {
  device::DeviceUsage d;
  d.id = "dev-0";
  d.count = 10;
  d.totalmem = 1000;
  d.totalcore = cus;
  d.type = std::move(type);
  d.vendor = "AMD";
  d.health = true;
  d.custom_info = info;
  return d;
}

// TestDevices_Fit "rounds cores up to whole WGPs on RDNA", entry "cdna keeps single cus": 5 % of
// 64 CUs is 3 CUs. The entries with a custominfo cuPerWGP (RDNA rounding to whole WGPs, e.g.
// 5 % -> 4 CUs with 2 CUs per WGP) belong to a HAMi newer than v2.10, whose CU conversion is
// Totalcore x Coresreq / 100, at least 1 (hami-other-vendors.md B.1 §4 step 7); hamisim keeps
// v2.10's 3 CUs there too.
TEST(HamiAmd, PercentOfComputeUnitsIsNotRoundedToWgps) {
  std::vector<device::DeviceUsage> d = {gpu("AMD", 64)};
  auto f = direct_fit(AmdBackend{}, d, {1, "AMD", 100, 0, 5});
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.outcome.devices[0].usedcores, 3);
  const std::string rdna = R"({"cuPerWGP":2})";
  d = {gpu("AMD", 64, &rdna)};
  f = direct_fit(AmdBackend{}, d, {1, "AMD", 100, 0, 5});
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.outcome.devices[0].usedcores, 3);
}

// Test_GenerateResourceRequests "uses core percentage from requests when limits omitted": the
// stored HAMi test (newer than v2.10) reads 42 % from the requests; v2.10 reads limits only
// (B.1 §3: "limits only, requests are ignored"), so the cores default to 100. hamisim keeps
// v2.10's.
TEST(HamiAmd, CorePercentageInRequestsIsIgnoredAsInV210) {
  const AmdBackend b;
  EXPECT_EQ(
      b.request_for(container("c", {{"amd.com/gpu", "1"}}, {{"amd.com/gpucores", "42"}})).coresreq,
      100);
}

// Test_GenerateResourceRequests "cores 1, 50, 100 accepted and out-of-range rejected" (the
// values amd_test.cpp does not list: 1, 50, 150, 200, -1, 99.1).
TEST(HamiAmd, CorePercentageRange) {
  const AmdBackend b;
  for (const char* ok : {"1", "50", "100"}) {
    EXPECT_EQ(
        b.request_for(container("c", {{"amd.com/gpu", "1"}, {"amd.com/gpucores", ok}})).coresreq,
        std::stoi(ok));
  }
  for (const char* bad : {"150", "200", "-1", "99.1", "50m"}) {
    EXPECT_EQ(b.request_for(container("c", {{"amd.com/gpu", "1"}, {"amd.com/gpucores", bad}})).nums,
              0)
        << bad;
  }
}

// Test_Fit_EmptyRegisteredTypeStaysDecodable: a device registered with an empty type. The
// stored HAMi test (newer than v2.10) writes "AMD" into the allocation; v2.10 writes the
// device's type as registered (B.1 §4 step 8). Through the engine such a device never reaches
// AMD's Fit (the list handed to Fit holds the devices whose type contains "amd", A.3 step 3),
// and a direct Fit keeps v2.10's empty type. Test_Fit_RegisteredProductTypePreserved: the product
// name is kept.
TEST(HamiAmd, AllocationTypeIsTheRegisteredType) {
  std::vector<device::DeviceUsage> d = {gpu("", 100)};
  d[0].totalmem = 8192;
  auto f = direct_fit(AmdBackend{}, d, {1, "AMD", 4096, 0, 100});
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.outcome.devices[0].type, "");
  d = {gpu("AMD Instinct MI300X", 100)};
  d[0].totalmem = 8192;
  f = direct_fit(AmdBackend{}, d, {1, "AMD", 4096, 0, 100});
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.outcome.devices[0].type, "AMD Instinct MI300X");
  // Through the engine the device never reaches AMD's Fit: its type does not contain "amd"
  // (A.3 step 3), so the node has too few AMD devices.
  const model::Node node = vendor_node(
      "n",
      {{"hami.io/node-amd-register",
        R"([{"id":"GPU-amd-0","count":10,"devmem":8192,"devcore":100,"type":"","health":true}])"}},
      {{"amd.com/gpu", "1"}});
  const auto registry = chart_registry();
  NodeFit nf = fit_on(pod_with({{"amd.com/gpu", "1"}, {"amd.com/gpumem", "4096"}}), node, registry);
  EXPECT_FALSE(nf.fits);
  EXPECT_EQ(nf.reason, "NodeInsufficientDevice");
}

// Test_GetNodeDevices: type "amd" is AMD's, and the devices carry the vendor AMD.
TEST(HamiAmd, RegistrationOfALowerCaseType) {
  const auto found = AmdBackend{}.node_devices(vendor_node(
      "node-1",
      {{"hami.io/node-amd-register",
        R"([{"id":"GPU-0","index":0,"count":1,"devmem":8192,"devcore":100,"type":"amd","numa":0,"health":true}])"}},
      {{"amd.com/gpu", "1"}}));
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0].id, "GPU-0");
  EXPECT_EQ(found.devices[0].type, "amd");
  EXPECT_EQ(found.devices[0].device_vendor, "AMD");
}

}  // namespace hami_amd
}  // namespace hamisim::fit::testing
