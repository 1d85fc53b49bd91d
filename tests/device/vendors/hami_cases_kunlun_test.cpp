// HAMi's own Kunlunxin test cases (pkg/device/kunlun/device_test.go, vdevice_test.go,
// topo_test.go, topo_order_test.go), their inputs and expected outputs ported to hamisim.
// Cases that kunlun_test.cpp already checks are not repeated.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/kunlun/kunlun_backend.h"
#include "device/kunlun/topology.h"
#include "device/kunlun/xpu_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace hami_kunlun {

using device::kunlun::graph_select;
using device::kunlun::KunlunBackend;
using device::kunlun::XpuBackend;
using Indexes = std::vector<uint64_t>;

// topo_test.go newDevices: 8 healthy devices (index = position), Count 1, the listed ones used.
std::vector<device::DeviceUsage> devices(std::initializer_list<int> used, size_t n = 8) {
  std::vector<device::DeviceUsage> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i].id = "xpu-" + std::to_string(i);
    out[i].index = i;
    out[i].count = 1;
    out[i].health = true;
    out[i].type = out[i].vendor = "kunlun";
  }
  for (int u : used) out[u].used = 1;
  return out;
}

// graghSelect with topo_test.go's fitAvailable predicate (Used < Count), in list order.
Indexes select_available(std::vector<device::DeviceUsage*> list, int32_t nums) {
  std::vector<bool> fits;
  for (auto* d : list) fits.push_back(d->used < d->count);
  return graph_select(list, fits, nums);
}
Indexes select_available(std::vector<device::DeviceUsage>& devs, int32_t nums) {
  std::vector<device::DeviceUsage*> list;
  for (auto& d : devs) list.push_back(&d);
  return select_available(list, nums);
}

// TestGraghSelect_FourFromLeftWing: 4-7 used, 4 asked: the left wing.
TEST(HamiKunlunTopology, FourFromTheFreeLeftWing) {
  auto d = devices({4, 5, 6, 7});
  EXPECT_EQ(select_available(d, 4), (Indexes{0, 1, 2, 3}));
}

// TestInterconnect_FourDevices: only the first 4-device group (0-1-4-5) free, 4 asked.
TEST(HamiKunlunTopology, FourFromTheOnlyFreeGroup) {
  auto d = devices({2, 3, 6, 7});
  EXPECT_EQ(select_available(d, 4), (Indexes{0, 1, 4, 5}));
}

// TestDevicepick_FewerThanEightDevices: a node of 4 XPUs, all busy, 2 asked: nothing (and no
// read past the list).
TEST(HamiKunlunTopology, FewerThanEightDevicesAllBusy) {
  auto d = devices({0, 1, 2, 3}, 4);
  EXPECT_EQ(select_available(d, 2), Indexes{});
}

// TestCountbubble and TestCalcscore (the cases kunlun_test.cpp does not have).
TEST(HamiKunlunTopology, BubbleAndScore) {
  using device::kunlun::bubble;
  using device::kunlun::fragmentation_score;
  EXPECT_EQ(bubble({4}), 3);
  EXPECT_EQ(bubble({0, 1}), 2);
  EXPECT_EQ(fragmentation_score({0}, {0, 1}), 3000);
  EXPECT_EQ(fragmentation_score({0}, {4}), 2000);
  EXPECT_EQ(fragmentation_score({0, 1}, {0}), 1000);
  EXPECT_EQ(fragmentation_score({0, 1, 2, 3}, {0}), 0);
}

// TestGraghSelect_ScoreSortedInputMatchesIndexOrder: XPU 7 used, the list rotated to
// [7,0,1,...,6], 4 asked. The stored HAMi test (newer than v2.10) forms wings from indexes and
// expects {0,1,2,3}; v2.10 forms them from positions (hami-other-vendors.md B.9.0
// "Positional consequence (important for byte compatibility)"): positions 4-7 hold 3,4,5,6,
// all free, so v2.10 answers {3,4,5,6}. hamisim keeps v2.10's answer; in index order both
// agree on {0,1,2,3}.
TEST(HamiKunlunTopology, RotatedListUsesPositionsAsV210) {
  auto d = devices({7});
  EXPECT_EQ(select_available(d, 4), (Indexes{0, 1, 2, 3}));
  std::vector<device::DeviceUsage*> rotated = {&d[7], &d[0], &d[1], &d[2],
                                               &d[3], &d[4], &d[5], &d[6]};
  EXPECT_EQ(select_available(rotated, 4), (Indexes{3, 4, 5, 6}));
}

// Test_graphSelectVXPU: devices of 98304 MiB, healthy, in index order; FitVXPU as predicate.
std::vector<device::DeviceUsage> vxpus(std::vector<std::pair<int, int>> used_mem) {
  std::vector<device::DeviceUsage> out(8);
  for (size_t i = 0; i < 8; ++i) {
    out[i].id = "xpu-" + std::to_string(i);
    out[i].index = i;
    out[i].totalmem = 98304;
    out[i].health = true;
    out[i].type = out[i].vendor = "XPU";
    out[i].used = used_mem[i].first;
    out[i].usedmem = used_mem[i].second;
  }
  return out;
}

std::vector<std::string> xpu_fit(std::vector<device::DeviceUsage>& devs, int32_t nums,
                                 int32_t memreq, bool* fits = nullptr) {
  const XpuBackend b;
  const model::Pod pod = PodBuilder().build();
  auto prepared = b.prepare(pod);
  device::FitContext ctx;
  ctx.pod = &pod;
  ctx.prepared = prepared.get();
  ctx.gpu_policy = "spread";
  std::vector<device::DeviceUsage*> list;
  for (auto& d : devs) list.push_back(&d);
  auto out = b.fit(list, {nums, "XPU", memreq, 0, memreq * 100 / 98304}, ctx);
  if (fits) *fits = out.fits;
  std::vector<std::string> ids;
  for (const auto& c : out.devices) ids.push_back(c.uuid);
  return ids;
}

// Test_graphSelectVXPU "full allocate with unused devices": 8 idle, 8 quarters.
TEST(HamiXpu, EightIdleQuarterCards) {
  auto d = vxpus({{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}});
  bool fits = false;
  EXPECT_THAT(xpu_fit(d, 8, 24576, &fits),
              ::testing::ElementsAre("xpu-0", "xpu-1", "xpu-2", "xpu-3", "xpu-4", "xpu-5", "xpu-6",
                                     "xpu-7"));
  EXPECT_TRUE(fits);
}

// Test_graphSelectVXPU "allocate 1 card with matching memory": 0, 1, 5 hold one quarter, 2 a
// half; a quarter goes to 0.
TEST(HamiXpu, OneQuarterCardNextToQuarters) {
  auto d = vxpus({{1, 24576}, {1, 24576}, {1, 49152}, {0, 0}, {0, 0}, {1, 24576}, {0, 0}, {0, 0}});
  EXPECT_THAT(xpu_fit(d, 1, 24576), ::testing::ElementsAre("xpu-0"));
}

// Test_graphSelectVXPU "allocate 2 cards with different memory requirements": 1 (two
// quarters), 2 and 6 (one quarter), 3 (a half); two quarters go to 0 and 1.
TEST(HamiXpu, TwoQuarterCardsAmongMixedSizes) {
  auto d = vxpus({{0, 0}, {2, 49152}, {1, 24576}, {1, 49152}, {0, 0}, {0, 0}, {1, 24576}, {0, 0}});
  EXPECT_THAT(xpu_fit(d, 2, 24576), ::testing::ElementsAre("xpu-0", "xpu-1"));
}

// Test_FitVXPU_direct, through a one-device Fit: 90000 MiB used (no task counted) + 20000
// exceeds 98304; an idle device fits a quarter; two quarters on a card (average 24576) take a
// third; one half card (average 49152) does not.
TEST(HamiXpu, FitVxpuPredicate) {
  auto one = [](int used, int usedmem) {
    std::vector<std::pair<int, int>> v(8, {0, 0});
    v[0] = {used, usedmem};
    auto d = vxpus(v);
    d.resize(1);
    return d;
  };
  bool fits = true;
  auto d = one(0, 90000);
  xpu_fit(d, 1, 20000, &fits);
  EXPECT_FALSE(fits);
  d = one(0, 0);
  xpu_fit(d, 1, 24576, &fits);
  EXPECT_TRUE(fits);
  d = one(2, 49152);
  xpu_fit(d, 1, 24576, &fits);
  EXPECT_TRUE(fits);
  d = one(1, 49152);
  xpu_fit(d, 1, 24576, &fits);
  EXPECT_FALSE(fits);
}

// Test_KunlunVDevices_GenerateResourceRequests "vcount with memory from requests fallback" and
// "no vcount requested".
TEST(HamiXpu, RequestsFallBackToRequests) {
  const XpuBackend b;
  EXPECT_EQ(b.request_for(container(
                "c", {}, {{"kunlunxin.com/vxpu", "2"}, {"kunlunxin.com/vxpu-memory", "24576"}})),
            (device::ContainerDeviceRequest{2, "XPU", 24576, 0, 25}));
  EXPECT_EQ(b.request_for(container("c", {})).nums, 0);
}

// Test_KunlunVDevices_AddResourceUsage: {1, 10 cores, 1000 MiB} + {20, 2000} = {2, 30, 3000}.
TEST(HamiXpu, AddResourceUsage) {
  const XpuBackend b;
  device::DeviceUsage u;
  u.used = 1;
  u.usedcores = 10;
  u.usedmem = 1000;
  device::ContainerDevice c;
  c.usedcores = 20;
  c.usedmem = 2000;
  ASSERT_TRUE(b.add_usage(u, c));
  EXPECT_EQ(u.used, 2);
  EXPECT_EQ(u.usedcores, 30);
  EXPECT_EQ(u.usedmem, 3000);
}

// Test_GetNodeDevices "invalid json" and "valid devices get vendor tagged".
TEST(HamiXpu, RegistrationNotJsonAndVendorTag) {
  const XpuBackend b;
  auto found = b.node_devices(vendor_node("n", {{"hami.io/node-register-xpu", "not-json"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
  EXPECT_TRUE(found.devices.empty());
  found = b.node_devices(vendor_node(
      "n",
      {{"hami.io/node-register-xpu",
        R"([{"id":"xpu-0","index":0,"count":1,"devmem":98304,"devcore":100,"type":"XPU","health":true}])"}}));
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0].device_vendor, "XPU");
}

// Test_KunlunVDevices_PatchAnnotations "with devices" and "no devices for this type".
TEST(HamiXpu, AllocationAnnotations) {
  const XpuBackend b;
  device::ContainerDevice c;
  c.idx = 0;
  c.uuid = "xpu-0";
  c.type = "XPU";
  c.usedmem = 24576;
  c.usedcores = 100;
  std::map<std::string, std::string> a;
  b.allocation_annotations({{c}}, a);
  EXPECT_NE(a["hami.io/xpu-devices-to-allocate"], "");
  EXPECT_NE(a["hami.io/xpu-devices-allocated"], "");
  a.clear();
  b.allocation_annotations({}, a);
  EXPECT_TRUE(a.empty());
}

// TestKunlunDevices_PatchAnnotations: three containers with cards 0, 1 and none. The stored
// HAMi test (newer than v2.10) expects BAIDU_COM_DEVICE_IDX "0;1;" (one segment per
// container); v2.10 writes the indexes of the last container that has devices
// (hami-other-vendors.md B.9.a §5: "each container overwrites it"), so "1". hamisim keeps
// v2.10's value.
TEST(HamiKunlun, DeviceIdxIsTheLastContainersAsInV210) {
  const KunlunBackend b;
  device::ContainerDevice c0, c1;
  c0.idx = 0;
  c1.idx = 1;
  c0.type = c1.type = "kunlun";
  std::map<std::string, std::string> a;
  b.allocation_annotations({{c0}, {c1}, {}}, a);
  EXPECT_EQ(a.at("BAIDU_COM_DEVICE_IDX"), "1");
}

}  // namespace hami_kunlun
}  // namespace hamisim::fit::testing
