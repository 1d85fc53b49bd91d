// HAMi's own Enflame test cases (pkg/device/enflame/gcu_test.go, device_test.go,
// device_corebudget_test.go, drs_reconstruction_test.go), their inputs and expected outputs
// ported to hamisim. Cases that enflame_test.cpp already checks are not repeated.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/enflame/enflame_backends.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace hami_enflame {

using device::enflame::DrsBackend;
using device::enflame::EnflameConfig;
using device::enflame::GcuBackend;

// TestGCUDevices_GenerateResourceRequests "GCU resource set to requests" and "not set".
TEST(HamiEnflameGcu, RequestsFallBackToRequests) {
  const GcuBackend b("enflame.com/gcu");
  EXPECT_EQ(b.request_for(container("c", {}, {{"enflame.com/gcu", "2"}})),
            (device::ContainerDeviceRequest{2, "GCU", 100, 100, 100}));
  EXPECT_EQ(b.request_for(container("c", {})).nums, 0);
}

// TestGCUDevices_Fit "fit success": two idle cards (Count 1), the last one.
TEST(HamiEnflameGcu, FitTakesTheLastIdleCard) {
  const GcuBackend b("enflame.com/gcu");
  std::vector<device::DeviceUsage> d(2);
  for (int i = 0; i < 2; ++i) {
    d[i].id = "dev-" + std::to_string(i);
    d[i].index = i;
    d[i].count = 1;
    d[i].totalmem = 100;
    d[i].totalcore = 100;
    d[i].type = d[i].vendor = "GCU";
    d[i].health = true;
  }
  auto f = direct_fit(b, d, {1, "GCU", 100, 100, 100});
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-1"));
}

// TestGCUDevices_AddResourceUsage: an idle card plus (50 cores, 100 MiB).
TEST(HamiEnflameGcu, AddResourceUsage) {
  const GcuBackend b("enflame.com/gcu");
  device::DeviceUsage u;
  device::ContainerDevice c;
  c.uuid = "dev-0";
  c.usedcores = 50;
  c.usedmem = 100;
  ASSERT_TRUE(b.add_usage(u, c));
  EXPECT_EQ(u.used, 1);
  EXPECT_EQ(u.usedcores, 50);
  EXPECT_EQ(u.usedmem, 100);
}

// TestGCUDevices_PatchAnnotations "No devices": nothing is written.
TEST(HamiEnflameGcu, NoDevicesNoAnnotations) {
  const GcuBackend b("enflame.com/gcu");
  std::map<std::string, std::string> a;
  b.allocation_annotations({}, a);
  EXPECT_TRUE(a.empty());
}

// drsBudgetDevice / drsCard of the DRS tests: 6 slices, 40960 MiB, profiles 1g.6gb/0,
// 3g.20gb/1, 6g.40gb/2, as the node annotation registers it.
struct DrsCard {
  std::vector<device::DeviceInfo> infos;
  std::vector<device::DeviceUsage> usage;
  explicit DrsCard(int32_t totalmem = 40960, int32_t totalcore = 100) {
    const model::Node node = vendor_node(
        "node-a",
        {{"enflame.com/gcu-drs-capacity",
          R"({"devices":[{"index":"0","minor":"0","capacity":6}],"profiles":{"1g.6gb":"0","3g.20gb":"1","6g.40gb":"2"}})"}});
    auto found = DrsBackend(EnflameConfig{}).node_devices(node);
    EXPECT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
    infos = found.devices;
    for (const device::DeviceInfo& i : infos) {
      device::DeviceUsage d;
      d.id = i.id;
      d.index = i.index;
      d.count = i.count;
      d.totalmem = totalmem;
      d.totalcore = totalcore;
      d.type = i.type;
      d.vendor = i.device_vendor;
      d.health = true;
      d.custom_info = &i.custom_info;
      usage.push_back(d);
    }
  }
  DrsCard(const DrsCard&) = delete;
};

// Fits `slices` on the card and books it as HAMi's AddResourceUsage does.
bool fit_and_book(const DrsBackend& b, DrsCard& card, int32_t slices, std::string* reason) {
  auto f = direct_fit(b, card.usage, {1, "Enflame", slices, 0, 0});
  if (reason) *reason = f.reason;
  if (!f.outcome.fits) return false;
  device::ContainerDevice c = f.outcome.devices[0];
  EXPECT_TRUE(b.add_usage(card.usage[0], c));
  return true;
}

// TestFit_AllAdvertisedSlicesSchedulable: the stored HAMi test (newer than v2.10) prices a
// 1g.6gb slice so that six fit. v2.10 prices it at ceil(1 x 100 / 6) = 17 % of the cores
// (hami-other-vendors.md B.6.b §4 step 1), so the sixth finds 15 % left and fails with
// CardInsufficientCore. hamisim keeps v2.10's price.
TEST(HamiEnflameDrs, SixOneSliceProfilesHitTheCoreBudgetAsInV210) {
  const DrsBackend b{EnflameConfig{}};
  DrsCard card;
  std::string reason;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(fit_and_book(b, card, 1, &reason)) << i << reason;
  EXPECT_EQ(card.usage[0].used, 5);
  EXPECT_EQ(card.usage[0].usedcores, 85);
  EXPECT_FALSE(fit_and_book(b, card, 1, &reason));
  EXPECT_EQ(reason, "1/1 CardInsufficientCore");
}

// TestFit_MixedProfilesFillDevice: 3g.20gb (50 %) then three 1g.6gb (17 % each). HAMi's newer
// test expects all four; under v2.10's prices the fourth needs 17 % with 16 % left.
TEST(HamiEnflameDrs, MixedProfilesHitTheCoreBudgetAsInV210) {
  const DrsBackend b{EnflameConfig{}};
  DrsCard card;
  std::string reason;
  ASSERT_TRUE(fit_and_book(b, card, 3, &reason)) << reason;
  ASSERT_TRUE(fit_and_book(b, card, 1, &reason)) << reason;
  ASSERT_TRUE(fit_and_book(b, card, 1, &reason)) << reason;
  EXPECT_EQ(card.usage[0].used, 5);
  EXPECT_FALSE(fit_and_book(b, card, 1, &reason));
  EXPECT_EQ(reason, "1/1 CardInsufficientCore");
}

// TestDRSSlice_SlotCountSurvivesReconstruction (live half): a 3g.20gb partition takes three
// slices in the pass. (The rebuild half records the slice count in the annotation, a field
// v2.10's allocation string does not have: hamisim keeps v2.10's one slot per container, see
// enflame_test.cpp UsedGrowsBySlicesInPassButByOnePerContainerOnRebuild.)
TEST(HamiEnflameDrs, ALivePartitionTakesItsSlices) {
  const DrsBackend b{EnflameConfig{}};
  DrsCard card;
  std::string reason;
  ASSERT_TRUE(fit_and_book(b, card, 3, &reason)) << reason;
  EXPECT_EQ(card.usage[0].used, 3);
}

// TestDRSSlice_PartialCapacityRejectsFullProfile: 4 of 6 slices used, no core budget, ample
// memory. HAMi's newer test rejects a 3-slice profile (CardTimeSlicingExhausted); v2.10 has no
// "slices left >= size" check (B.6.b §4 step 4: "Note there is no 'slices left >= size'
// check"), so it fits there, and hamisim keeps that. The 1-slice profile fits in both.
TEST(HamiEnflameDrs, PartialCapacityTakesAFullProfileAsInV210) {
  const DrsBackend b{EnflameConfig{}};
  DrsCard card(400000, 0);
  card.usage[0].used = 4;
  auto f = direct_fit(b, card.usage, {1, "Enflame", 3, 0, 0});
  EXPECT_TRUE(f.outcome.fits) << f.reason;
  f = direct_fit(b, card.usage, {1, "Enflame", 1, 0, 0});
  EXPECT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.reason, "");
}

}  // namespace hami_enflame
}  // namespace hamisim::fit::testing
