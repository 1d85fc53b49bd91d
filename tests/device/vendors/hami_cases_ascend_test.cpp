// HAMi's own Ascend test cases (pkg/device/ascend/device_test.go), their inputs and expected
// outputs ported to hamisim. Cases that ascend_test.cpp already checks are not repeated.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/ascend/ascend_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace hami_ascend {

using device::ascend::AscendBackend;
using device::ascend::VnpuConfig;
using ::testing::ElementsAre;

VnpuConfig chip(std::string_view cw) {
  for (VnpuConfig& c : device::ascend::chart_chips()) {
    if (c.common_word == cw) return c;
  }
  ADD_FAILURE() << "no chart chip " << cw;
  return {};
}

// TestDevices_Fit's device: Count 100, Totalcore 100, index 0, healthy, of the chip's type.
device::DeviceUsage dev(std::string id, std::string_view cw, int32_t totalmem = 128) {
  device::DeviceUsage d;
  d.id = std::move(id);
  d.count = 100;
  d.totalmem = totalmem;
  d.totalcore = 100;
  d.type = d.vendor = std::string(cw);
  d.health = true;
  return d;
}

struct Result {
  bool fits = false;
  std::vector<std::string> uuids;
  std::string reason;
};

Result fit(const AscendBackend& b, std::vector<device::DeviceUsage>& devices,
           device::ContainerDeviceRequest r, const model::Pod& pod = pod_with({})) {
  std::vector<device::DeviceUsage*> ptrs;
  for (auto& d : devices) ptrs.push_back(&d);
  auto prepared = b.prepare(pod);
  device::FitContext ctx;
  ctx.pod = &pod;
  ctx.prepared = prepared.get();
  ctx.gpu_policy = "spread";
  auto detailed = b.fit_detailed(ptrs, r, ctx);
  Result out;
  out.fits = detailed.outcome.fits;
  for (const auto& d : detailed.outcome.devices) out.uuids.push_back(d.uuid);
  out.reason = device::format_reasons(detailed.outcome.reasons, detailed.reason_cards);
  return out;
}

device::ContainerDeviceRequest req(int32_t nums, std::string type, int32_t mem, int32_t cores,
                                   int32_t mem_percent = 0) {
  return {nums, std::move(type), mem, mem_percent, cores};
}

model::Pod annotated(std::string key, std::string value) {
  return PodBuilder().app(container("c", {})).annotate(std::move(key), std::move(value)).build();
}

// TestDevices_Fit runs its table for every chip of its configuration.
class HamiAscendFit : public ::testing::TestWithParam<std::string> {
 protected:
  std::string cw = GetParam();
  AscendBackend b{chip(cw), false};
};

INSTANTIATE_TEST_SUITE_P(Chips, HamiAscendFit,
                         ::testing::Values("Ascend910A", "Ascend910B2", "Ascend910B3",
                                           "Ascend910B4", "Ascend310P"));

// TestDevices_Fit "fit fail: memory not enough".
TEST_P(HamiAscendFit, MemoryNotEnough) {
  std::vector<device::DeviceUsage> d = {dev("dev-0", cw)};
  Result r = fit(b, d, req(1, cw, 512, 50));
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.reason, "1/1 CardInsufficientMemory");
}

// TestDevices_Fit "fit fail: core not enough".
TEST_P(HamiAscendFit, CoreNotEnough) {
  std::vector<device::DeviceUsage> d = {dev("dev-0", cw, 1024)};
  d[0].usedcores = 100;
  Result r = fit(b, d, req(1, cw, 512, 50));
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.reason, "1/1 CardInsufficientCore");
}

// TestDevices_Fit "fit fail: type mismatch".
TEST_P(HamiAscendFit, TypeMismatch) {
  std::vector<device::DeviceUsage> d = {dev("dev-0", cw)};
  Result r = fit(b, d, req(1, "OtherType", 512, 50));
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.reason, "1/1 CardTypeMismatch");
}

// TestDevices_Fit "fit fail: user assign use uuid mismatch" and "... no use uuid match".
TEST_P(HamiAscendFit, UuidAnnotations) {
  std::vector<device::DeviceUsage> d = {dev("dev-1", cw, 1280)};
  Result r = fit(b, d, req(2, cw, 512, 50), annotated("hami.io/use-" + cw + "-uuid", "dev-0"));
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.reason, "1/1 CardUuidMismatch");
  d = {dev("dev-0", cw, 1280)};
  r = fit(b, d, req(2, cw, 512, 50), annotated("hami.io/no-use-" + cw + "-uuid", "dev-0"));
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.reason, "1/1 CardUuidMismatch");
}

// TestDevices_Fit "fit fail: card overused".
TEST_P(HamiAscendFit, CardOverused) {
  std::vector<device::DeviceUsage> d = {dev("dev-0", cw, 1280)};
  d[0].used = 100;
  Result r = fit(b, d, req(1, cw, 512, 50));
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.reason, "1/1 CardTimeSlicingExhausted");
}

// TestDevices_Fit "fit success: but core limit can't exceed 100" (1280 MiB device).
TEST_P(HamiAscendFit, CoresAboveOneHundredFit) {
  std::vector<device::DeviceUsage> d = {dev("dev-0", cw, 1280)};
  Result r = fit(b, d, req(1, cw, 512, 120));
  EXPECT_TRUE(r.fits) << r.reason;
  EXPECT_THAT(r.uuids, ElementsAre("dev-0"));
  EXPECT_EQ(r.reason, "");
}

// TestDevices_Fit "fit fail: card exclusively" and "fit fail: CardComputeUnitsExhausted".
TEST_P(HamiAscendFit, ExclusiveAndExhausted) {
  std::vector<device::DeviceUsage> d = {dev("dev-0", cw, 1280)};
  d[0].used = 20;
  EXPECT_EQ(fit(b, d, req(1, cw, 512, 100)).reason, "1/1 ExclusiveDeviceAllocateConflict");
  d[0].usedcores = 100;
  EXPECT_EQ(fit(b, d, req(1, cw, 512, 0)).reason, "1/1 CardComputeUnitsExhausted");
}

// TestDevices_Fit "fit fail: AllocatedCardsInsufficientRequest".
TEST_P(HamiAscendFit, TwoAskedOneThere) {
  std::vector<device::DeviceUsage> d = {dev("dev-0", cw, 1280)};
  d[0].used = 20;
  d[0].usedcores = 10;
  Result r = fit(b, d, req(2, cw, 512, 20));
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.reason, "1/1 AllocatedCardsInsufficientRequest");
}

// TestDevices_Fit "fit success: memory percentage".
TEST_P(HamiAscendFit, MemoryPercentage) {
  std::vector<device::DeviceUsage> d = {dev("dev-0", cw, 1280)};
  d[0].used = 20;
  d[0].usedcores = 10;
  Result r = fit(b, d, req(1, cw, 0, 20, 10));
  EXPECT_TRUE(r.fits) << r.reason;
  EXPECT_THAT(r.uuids, ElementsAre("dev-0"));
}

// TestDevices_Fit "fit success" (two idle devices: the last one) and "fit success. schedule
// by NetworkID" (dev-0 on network 0, dev-1 and dev-2 on 1: [dev-2, dev-1], for 910 chips by
// grouping and for 310P by the scan order).
TEST_P(HamiAscendFit, IdleDevicesAndNetworkId) {
  std::vector<device::DeviceUsage> d = {dev("dev-0", cw), dev("dev-1", cw)};
  Result r = fit(b, d, req(1, cw, 64, 50));
  EXPECT_TRUE(r.fits);
  EXPECT_THAT(r.uuids, ElementsAre("dev-1"));
  const std::string n0 = R"({"NetworkID":0})", n1 = R"({"NetworkID":1})";
  d = {dev("dev-0", cw), dev("dev-1", cw), dev("dev-2", cw)};
  d[0].custom_info = &n0;
  d[1].custom_info = &n1;
  d[2].custom_info = &n1;
  r = fit(b, d, req(2, cw, 64, 50));
  EXPECT_TRUE(r.fits) << r.reason;
  EXPECT_THAT(r.uuids, ElementsAre("dev-2", "dev-1"));
}

// TestDevices_Fit "fit fail: hami-core pod on legacy node (ModeNotFit)".
TEST_P(HamiAscendFit, SoftSplitPodOnHardSplitNode) {
  std::vector<device::DeviceUsage> d = {dev("dev-0", cw, 32768)};
  Result r = fit(b, d, req(1, cw, 15360, 20), annotated("huawei.com/vnpu-mode", "hami-core"));
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.reason, "1/1 ModeNotFit");
}

// TestDevices_Fit "fit fail: legacy pod on hami-core reserved node (ModeNotFit)": the stored
// HAMi test is newer than v2.10, where a hard-split pod may use a soft-split node
// (hami-other-vendors.md B.2 §4 step 0: "A non-hami-core pod may use a hami-core node.").
// hamisim keeps v2.10's behaviour.
TEST_P(HamiAscendFit, HardSplitPodOnSoftSplitNodeFitsInV210) {
  std::vector<device::DeviceUsage> d = {dev("dev-0", cw, 32768)};
  d[0].mode = "hami-core";
  Result r = fit(b, d, req(1, cw, 8738, 0));
  EXPECT_TRUE(r.fits) << r.reason;
}

// TestDevices_AddResourceUsage: used 0 / cores 15 / 2000 MiB plus (50 cores, 1024 MiB).
TEST(HamiAscend, AddResourceUsage) {
  AscendBackend b(chip("Ascend910A"), false);
  device::DeviceUsage u;
  u.id = "dev-0";
  u.usedcores = 15;
  u.usedmem = 2000;
  device::ContainerDevice c;
  c.uuid = "dev-0";
  c.usedcores = 50;
  c.usedmem = 1024;
  ASSERT_TRUE(b.add_usage(u, c));
  EXPECT_EQ(u.used, 1);
  EXPECT_EQ(u.usedcores, 65);
  EXPECT_EQ(u.usedmem, 3024);
}

// Test_GetNodeDevices "failed to unmarshal node devices": an empty registration value.
TEST(HamiAscend, EmptyRegistrationDoesNotDecode) {
  AscendBackend b(chip("Ascend910A"), false);
  auto found = b.node_devices(vendor_node("node-04", {{"hami.io/node-register-Ascend910A", ""}}));
  EXPECT_NE(found.state, device::NodeDevices::State::kOk);
  EXPECT_TRUE(found.devices.empty());
}

// Test_checkType: a request of the CommonWord matches, another type does not.
TEST(HamiAscend, CheckType) {
  AscendBackend b(chip("Ascend910A"), false);
  std::vector<device::DeviceUsage> d = {dev("dev-0", "Ascend910A")};
  EXPECT_TRUE(fit(b, d, req(1, "Ascend910A", 1, 0)).fits);
  EXPECT_EQ(fit(b, d, req(1, "Ascend910B", 1, 0)).reason, "1/1 CardTypeMismatch");
}

// Test_GenerateResourceRequests "don't set to limits and request": no request at all.
TEST(HamiAscend, NoResourcesNoRequest) {
  AscendBackend b(chip("Ascend910A"), false);
  EXPECT_EQ(b.request_for(container("c", {})).nums, 0);
}

// Test_GenerateResourceRequests_VNPUCoreMode: count 1, core 10, memory 15360 on a chip with a
// core resource.
TEST(HamiAscend, SoftSplitRequestReadsCoresAndMemory) {
  AscendBackend b(chip("Ascend910B3"), false);
  auto r = b.request_for(container("c", {{"huawei.com/Ascend910B3", "1"},
                                         {"huawei.com/Ascend910B3-core", "10"},
                                         {"huawei.com/Ascend910B3-memory", "15360"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{1, "Ascend910B3", 15360, 0, 10}));
}

// Test_MutateAdmission_HardSplitCoreRejected on 910B3 (templates vir08 8738 and vir16 17476,
// 32768 MiB): a -core of 10 or 25 is rejected in hard split, 0 or none is accepted, and 10 is
// accepted with huawei.com/vnpu-mode: hami-core.
TEST(HamiAscend, HardSplitRejectsCores) {
  VnpuConfig c = chip("Ascend910B3");
  c.memory_allocatable = c.memory_capacity = 32768;
  c.templates = {{"vir08", 8738, 8, 0}, {"vir16", 17476, 16, 0}};
  auto admit = [&](std::optional<std::string> core, bool hami_core) {
    device::ascend::AdmissionInput in;
    in.count_limit = qty("1");
    in.count_in_requests = true;
    in.memory_limit = qty("8738");
    if (core) in.core = qty(*core);
    in.hami_core = hami_core;
    return device::ascend::admit_container(c, in);
  };
  EXPECT_THAT(admit("10", false).error, ::testing::HasSubstr("hami-core"));
  EXPECT_THAT(admit("25", false).error, ::testing::HasSubstr("hami-core"));
  EXPECT_EQ(admit("0", false).error, "");
  EXPECT_EQ(admit(std::nullopt, false).error, "");
  EXPECT_EQ(admit("10", true).error, "");
}

// device_910c_pairing_test.go: Count 1, 32000 MiB, no cores; a request of {Nums, Ascend910C}
// with no memory and no percentage. (FitPartialAllocationBug, indexes 0,1,2,4,6 with 4 NPUs, and
// FitExactCountBypassBug, 0 and 2 with NetworkIDs, are in ascend_test.cpp.)
std::vector<device::DeviceUsage> npus_910c(std::initializer_list<uint64_t> indexes,
                                           const std::string* info) {
  std::vector<device::DeviceUsage> out;
  for (uint64_t i : indexes) {
    device::DeviceUsage d;
    d.id = "dev-" + std::to_string(i);
    d.index = i;
    d.count = 1;
    d.totalmem = 32000;
    d.type = d.vendor = "Ascend910C";
    d.health = true;
    d.custom_info = info;
    out.push_back(d);
  }
  return out;
}

// TestAscend910C_FitFullPairSucceeds: indexes 0 and 1 with NetworkID 0 form one module.
TEST(HamiAscend, Ascend910CFullPairSucceeds) {
  AscendBackend b(chip("Ascend910C"), false);
  const std::string n0 = R"({"NetworkID":0})";
  auto d = npus_910c({0, 1}, &n0);
  Result r = fit(b, d, req(2, "Ascend910C", 0, 0));
  EXPECT_TRUE(r.fits) << r.reason;
  EXPECT_EQ(r.uuids.size(), 2u);
}

// TestAscend910C_FitWithoutNetworkID_ValidatesPairing: with empty CustomInfo, 0 and 2 fail
// and 0 and 1 fit.
TEST(HamiAscend, Ascend910CPairsWithoutNetworkId) {
  AscendBackend b(chip("Ascend910C"), false);
  const std::string empty = "{}";
  auto d = npus_910c({0, 2}, &empty);
  EXPECT_FALSE(fit(b, d, req(2, "Ascend910C", 0, 0)).fits);
  d = npus_910c({0, 1}, &empty);
  Result r = fit(b, d, req(2, "Ascend910C", 0, 0));
  EXPECT_TRUE(r.fits) << r.reason;
  EXPECT_EQ(r.uuids.size(), 2u);
}

// TestComputeBestCombination910C_NoFullPairsReturnsEmpty: four lone NPUs (0, 2, 4, 6), no
// NetworkID, four asked: no module is whole, so no fit.
TEST(HamiAscend, Ascend910CNoFullPairs) {
  AscendBackend b(chip("Ascend910C"), false);
  const std::string empty = "{}";
  auto d = npus_910c({0, 2, 4, 6}, &empty);
  Result r = fit(b, d, req(4, "Ascend910C", 0, 0));
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.reason, "0/4 AllocatedCardsInsufficientRequest");
}

// TestAscend910C_FitSplitModeOddRequestSchedulable (device_910c_superpod_test.go): eight idle
// 910C NPUs on a soft-split node, a hami-core pod asking 3 NPUs (16384 MiB, 20 cores). The
// stored HAMi test (newer than v2.10, its vnpuMode setting) skips module pairing outside
// SuperPod and fits 3; v2.10 pairs whole modules for every Ascend910C request above 1
// (hami-other-vendors.md B.2 §4 step 4), takes 4 and fails. hamisim keeps v2.10's answer.
TEST(HamiAscend, Ascend910COddRequestPairsModulesAsInV210) {
  AscendBackend b(chip("Ascend910C"), false);
  std::vector<device::DeviceUsage> d;
  for (uint64_t i = 0; i < 8; ++i) {
    device::DeviceUsage u = dev("npu-" + std::to_string(i), "Ascend910C", 65536);
    u.index = i;
    u.mode = "hami-core";
    d.push_back(u);
  }
  Result r =
      fit(b, d, req(3, "Ascend910C", 16384, 20), annotated("huawei.com/vnpu-mode", "hami-core"));
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.reason, "4/3 AllocatedCardsInsufficientRequest");
}

// device_cordon_test.go TestFit_DeviceCordon (as in every vendor's device_cordon_test.go): the
// stored HAMi test (newer than v2.10) skips NPUs listed in hami.io/device-cordon. In v2.10 the
// cordon annotation is read by the NVIDIA backend only (hami-device-model.md §1.4); the vendor
// Fit template has no cordon step (hami-other-vendors.md A.4, B.2 §4). hamisim keeps v2.10's
// behaviour: a cordoned NPU is still taken.
TEST(HamiAscend, CordonIsNotReadForNpusAsInV210) {
  const auto registry = chart_registry();
  const model::Node node = vendor_node(
      "npu-node",
      {{"hami.io/node-register-Ascend910B2",
        R"([{"id":"dev-0","index":0,"count":100,"devmem":65536,"devcore":20,"type":"Ascend910B2","health":true},)"
        R"({"id":"dev-1","index":1,"count":100,"devmem":65536,"devcore":20,"type":"Ascend910B2","health":true}])"},
       {"hami.io/device-cordon", "dev-0,dev-1"}});
  NodeFit f = fit_on(pod_with({{"huawei.com/Ascend910B2", "1"}}), node, registry);
  EXPECT_TRUE(f.fits) << f.reason;
}

}  // namespace hami_ascend
}  // namespace hamisim::fit::testing
