// HAMi's own Cambricon test cases (pkg/device/cambricon/device_test.go), their inputs and
// expected outputs ported to hamisim. Cases that cambricon_test.cpp already checks are not
// repeated.

#include <gtest/gtest.h>

#include "device/cambricon/cambricon_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace hami_cambricon {

using device::cambricon::CambriconBackend;

// An idle MLU of 1280 MiB with the given ID.
std::vector<device::DeviceUsage> one_mlu(std::string id) {
  std::vector<device::DeviceUsage> d(1);
  d[0].id = std::move(id);
  d[0].count = 100;
  d[0].totalmem = 1280;
  d[0].totalcore = 100;
  d[0].type = d[0].vendor = "MLU";
  d[0].health = true;
  return d;
}

bool fits_with(std::string id, std::string key, std::string value) {
  auto d = one_mlu(std::move(id));
  PodBuilder pb;
  if (!key.empty()) pb.annotate(std::move(key), std::move(value));
  return direct_fit(CambriconBackend{}, d, {1, "MLU", 512, 0, 50}, pb.build(), "spread")
      .outcome.fits;
}

// Test_CheckUUID: the five table entries, through Fit.
TEST(HamiCambricon, CheckUuid) {
  EXPECT_TRUE(fits_with("test123", "", ""));
  EXPECT_TRUE(fits_with("test123", "cambricon.com/use-gpuuuid", "test123,111"));
  EXPECT_FALSE(fits_with("test123", "cambricon.com/nouse-gpuuuid", "test123,111"));
  EXPECT_TRUE(fits_with("test456", "cambricon.com/nouse-gpuuuid", "test123,111"));
  EXPECT_FALSE(fits_with("test456", "cambricon.com/use-gpuuuid", "test123,111"));
}

// Test_CheckType: a request of type MLU matches, "TEST" does not.
TEST(HamiCambricon, CheckType) {
  auto d = one_mlu("dev-0");
  EXPECT_TRUE(direct_fit(CambriconBackend{}, d, {1, "MLU", 512, 0, 50}).outcome.fits);
  EXPECT_EQ(direct_fit(CambriconBackend{}, d, {1, "TEST", 512, 0, 50}).reason,
            "1/1 CardTypeMismatch");
}

// Test_GenerateResourceRequests with the count resource renamed to cambricon.com/mlu
// ("resourcecoresname don't set": {1, MLU, 0, 100, 2}; "don't set to limits": no request).
TEST(HamiCambricon, RequestsWithARenamedCountResource) {
  const auto registry = registry_from_yaml(R"(cambricon:
  resourceCountName: cambricon.com/mlu
  resourceMemoryName: cambricon.com/mlu.smlu.vmemory
  resourceCoreName: cambricon.com/mlu.smlu.vcore
)");
  const auto* b = registry.find("MLU");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->request_for(container(
                "c", {{"cambricon.com/mlu", "1"}, {"cambricon.com/mlu.smlu.vcore", "2"}})),
            (device::ContainerDeviceRequest{1, "MLU", 0, 100, 2}));
  EXPECT_EQ(b->request_for(container("c", {})).nums, 0);
}

// Test_PatchAnnotations "exist device": the stored (older) HAMi test spells the key
// CAMBRICON_DSMLU_ASSIGHED; v2.10 writes CAMBRICON_DSMLU_ASSIGNED (hami-other-vendors.md B.5
// §5), which hamisim keeps. The other keys and values agree.
TEST(HamiCambricon, AssignedKeyIsV210s) {
  CambriconBackend b;
  device::ContainerDevice d;
  d.uuid = "device-0";
  d.type = "MLU";
  d.usedcores = 1;
  d.usedmem = 256000;
  std::map<std::string, std::string> a;
  b.allocation_annotations({{d}}, a);
  EXPECT_EQ(a.at("CAMBRICON_DSMLU_ASSIGNED"), "false");
  EXPECT_FALSE(a.contains("CAMBRICON_DSMLU_ASSIGHED"));
  EXPECT_EQ(a.at("CAMBRICON_DSMLU_PROFILE"), "0_1_1000");
}

}  // namespace hami_cambricon
}  // namespace hamisim::fit::testing
