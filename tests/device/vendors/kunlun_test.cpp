// Kunlunxin (reference: hami-other-vendors.md B.9), from the reference's examples: the 8-XPU
// topology selector on list positions (B.9.0), whole cards (`kunlun`: capacity discovery,
// exclusive cards, the fragmentation ScoreNode, BAIDU_COM_DEVICE_IDX, the scheduler-level
// example) and shared vXPUs (`XPU`: JSON registration, 1/4, 1/2 and whole-card slices).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/kunlun/kunlun_backend.h"
#include "device/kunlun/topology.h"
#include "device/kunlun/xpu_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace kunlun_test {

using device::kunlun::graph_select;
using device::kunlun::KunlunBackend;
using device::kunlun::XpuBackend;
using Indexes = std::vector<uint64_t>;

// A chosen device (the MIG members stay empty).
device::ContainerDevice cdev(int32_t idx, std::string uuid, std::string type, int32_t mem,
                             int32_t cores) {
  device::ContainerDevice d;
  d.idx = idx;
  d.uuid = std::move(uuid);
  d.type = std::move(type);
  d.usedmem = mem;
  d.usedcores = cores;
  return d;
}

constexpr const char* kXpu = "kunlunxin.com/xpu";
constexpr const char* kVxpu = "kunlunxin.com/vxpu";
constexpr const char* kVxpuMemory = "kunlunxin.com/vxpu-memory";
constexpr const char* kKunlunAllocated = "hami.io/kunlun-allocated";
constexpr const char* kDeviceIdx = "BAIDU_COM_DEVICE_IDX";
constexpr const char* kXpuRegister = "hami.io/node-register-xpu";
constexpr const char* kXpuAllocated = "hami.io/xpu-devices-allocated";
constexpr const char* kXpuToAllocate = "hami.io/xpu-devices-to-allocate";

// Devices in index order (the reference's unit-test setting), all healthy XPUs of 98304 MiB.
std::vector<device::DeviceUsage> cards(size_t n = 8, std::string type = "kunlun") {
  std::vector<device::DeviceUsage> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i].id = "xpu-" + std::to_string(i);
    out[i].index = i;
    out[i].count = 100;
    out[i].totalmem = 98304;
    out[i].totalcore = 100;
    out[i].type = type;
    out[i].vendor = type;
    out[i].health = true;
  }
  return out;
}

std::vector<device::DeviceUsage*> pointers(std::vector<device::DeviceUsage>& devices) {
  std::vector<device::DeviceUsage*> out;
  for (auto& d : devices) out.push_back(&d);
  return out;
}

// graph_select with "idle" as the predicate, over devices listed in `order` (indexes).
Indexes select_idle(const std::vector<int>& busy, int32_t nums,
                    std::vector<int> order = {0, 1, 2, 3, 4, 5, 6, 7}) {
  auto devices = cards();
  for (int b : busy) devices[b].used = 1;
  std::vector<device::DeviceUsage*> list;
  for (int i : order) list.push_back(&devices[i]);
  std::vector<bool> fits;
  for (auto* d : list) fits.push_back(d->used == 0);
  return graph_select(list, fits, nums);
}

// Direct Fit of `backend` on `devices` (in list order) for a pod with `annotations`.
device::FitOutcome fit_direct(const device::DeviceBackend& backend,
                              std::vector<device::DeviceUsage>& devices,
                              const device::ContainerDeviceRequest& request,
                              std::map<std::string, std::string> annotations = {},
                              std::string policy = "spread") {
  PodBuilder b;
  for (auto& [k, v] : annotations) b.annotate(k, v);
  const model::Pod pod = b.build();
  auto prepared = backend.prepare(pod);
  device::FitContext ctx;
  ctx.pod = &pod;
  ctx.prepared = prepared.get();
  ctx.gpu_policy = policy;
  ctx.explain = true;
  auto list = pointers(devices);
  return backend.fit(list, request, ctx);
}

std::vector<std::string> uuids(const device::ContainerDevices& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) out.push_back(d.uuid);
  return out;
}

model::Node kunlun_node(int n = 8, std::string name = "kl") {
  return vendor_node(std::move(name), {}, {{kXpu, std::to_string(n)}});
}

model::Pod card_on(std::string node, int index, std::string name) {
  return running_pod(
      std::move(name), node,
      {{kKunlunAllocated, node + "-kunlun-" + std::to_string(index) + ",kunlun,98304,100:;"}});
}

// --- B.9.0 topology selector ---------------------------------------------------------------

TEST(KunlunTopology, WholeMachine) {
  EXPECT_EQ(select_idle({}, 8), (Indexes{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(select_idle({5}, 8), Indexes{});
  // The literal 0..7, whatever the order of the list.
  EXPECT_EQ(select_idle({}, 8, {7, 6, 5, 4, 3, 2, 1, 0}), (Indexes{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(KunlunTopology, BestFitWing) {
  // The right wing has exactly 3 free: the pair and the single card both come from it.
  EXPECT_EQ(select_idle({5}, 2), (Indexes{4, 6}));
  EXPECT_EQ(select_idle({5}, 1), (Indexes{4}));
  EXPECT_EQ(select_idle({6, 7}, 1), (Indexes{4}));
  // Single cards prefer a wing with 1 free, then 3, then 2, then 4.
  EXPECT_EQ(select_idle({}, 1), (Indexes{0}));
  EXPECT_EQ(select_idle({0, 1, 2, 4}, 1), (Indexes{3}));
  EXPECT_EQ(select_idle({4, 5}, 1), (Indexes{6}));
  EXPECT_EQ(select_idle({0, 4, 5}, 1), (Indexes{1}));  // 3 free on the left come before 2
  EXPECT_EQ(select_idle({0, 1, 4}, 1), (Indexes{5}));
  // Even requests take the smallest wing that holds them, left before right.
  EXPECT_EQ(select_idle({0, 1, 4}, 2), (Indexes{2, 3}));
  EXPECT_EQ(select_idle({4}, 4), (Indexes{0, 1, 2, 3}));
  EXPECT_EQ(select_idle({0}, 4), (Indexes{4, 5, 6, 7}));
}

TEST(KunlunTopology, InterconnectFallback) {
  // Only 3 and 7 free: a cross-wing pair.
  EXPECT_EQ(select_idle({0, 1, 2, 4, 5, 6}, 2), (Indexes{3, 7}));
  // The first fitting device in list order names the pair: 6 (listed first), then 2.
  EXPECT_EQ(select_idle({0, 1, 3, 4, 5, 7}, 2, {6, 0, 1, 3, 2, 4, 5, 7}), (Indexes{6, 2}));
  // 0 and 5 are not linked.
  EXPECT_EQ(select_idle({1, 2, 3, 4, 6, 7}, 2), Indexes{});
  // Free {0,1,4,5,6}: the first contained group.
  EXPECT_EQ(select_idle({2, 3, 7}, 4), (Indexes{0, 1, 4, 5}));
  // Free {0,1,2,4,5,7}: no group leaves a linked pair; the last contained group is returned.
  EXPECT_EQ(select_idle({3, 6}, 4), (Indexes{0, 1, 4, 5}));
  // Free {0,1,3,4,5,7}: the rest {3,7} is a cross-wing pair.
  EXPECT_EQ(select_idle({2, 6}, 4), (Indexes{0, 1, 4, 5}));
  // Free {0,1,3,4,6,7}: only {0,3,4,7} is contained.
  EXPECT_EQ(select_idle({2, 5}, 4), (Indexes{0, 3, 4, 7}));
  // Free {0,2,3,4,6,7}: {2,3,6,7} leaves the cross pair 0-4.
  EXPECT_EQ(select_idle({1, 5}, 4), (Indexes{2, 3, 6, 7}));
  // Three free cards hold no group.
  EXPECT_EQ(select_idle({0, 1, 2, 3, 4}, 4), Indexes{});
}

TEST(KunlunTopology, OnlySomeCountsAreServed) {
  EXPECT_EQ(select_idle({}, 3), Indexes{});
  EXPECT_EQ(select_idle({}, 5), Indexes{});
  EXPECT_EQ(select_idle({}, 0), Indexes{});
  EXPECT_EQ(select_idle({}, -1), Indexes{});
}

TEST(KunlunTopology, WingsArePositionsNotIndexes) {
  // The scheduler example: 3-7 busy sort first under spread, so 0, 1, 2 sit at positions 5-7
  // (right wing, 3 free) and a single card is the first of them.
  EXPECT_EQ(select_idle({3, 4, 5, 6, 7}, 1, {3, 4, 5, 6, 7, 0, 1, 2}), (Indexes{0}));
  EXPECT_EQ(select_idle({3, 4, 5, 6, 7}, 2, {3, 4, 5, 6, 7, 0, 1, 2}), (Indexes{0, 1}));
  // 0 and 5 busy: in index order both wings have 3 free (-> {1, 2}); listed from 5, the first
  // four positions hold 5, 6, 7, 0 with exactly 2 free.
  EXPECT_EQ(select_idle({0, 5}, 2), (Indexes{1, 2}));
  EXPECT_EQ(select_idle({0, 5}, 2, {5, 6, 7, 0, 1, 2, 3, 4}), (Indexes{6, 7}));
}

TEST(KunlunTopology, PositionsBeyondEightAreNeverPicked) {
  auto devices = cards(10);
  for (size_t i = 0; i < 8; ++i) devices[i].used = 1;
  auto list = pointers(devices);
  std::vector<bool> fits;
  for (auto* d : list) fits.push_back(d->used == 0);
  // Positions 8 and 9 count for the right wing, but picking stops at position 7.
  EXPECT_EQ(graph_select(list, fits, 1), Indexes{});
  // Fewer than four devices: no wing is read past the end of the list.
  auto few = cards(2);
  auto few_list = pointers(few);
  EXPECT_EQ(graph_select(few_list, {true, true}, 1), (Indexes{0}));
  EXPECT_EQ(graph_select(few_list, {true, true}, 2), (Indexes{0, 1}));
  EXPECT_EQ(graph_select(few_list, {false, true}, 1), (Indexes{1}));
  // A predicate list of the wrong size selects nothing rather than reading out of bounds.
  EXPECT_EQ(graph_select(few_list, {true}, 1), Indexes{});
}

TEST(KunlunTopology, FragmentationScore) {
  using device::kunlun::bubble;
  using device::kunlun::fragmentation_score;
  EXPECT_EQ(bubble({}), 1);
  EXPECT_EQ(bubble({0}), 3);
  EXPECT_EQ(bubble({0, 1, 2, 3}), 1);
  EXPECT_EQ(bubble({0, 1, 2, 3, 4, 5, 6, 7}), 0);
  EXPECT_EQ(bubble({3, 4, 5, 6, 7}), 2);
  EXPECT_EQ(fragmentation_score({0, 1, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7}), 3000);
  EXPECT_EQ(fragmentation_score({}, {0}), 0);
  EXPECT_EQ(fragmentation_score({3, 4, 5, 6, 7}, {0}), 1000);
  EXPECT_EQ(fragmentation_score({}, {0, 1}), 1000);
  EXPECT_EQ(fragmentation_score({3, 4, 5, 6, 7}, {0, 1}), 2000);
  // bubble({0}) - bubble({0,1,2,3,4,5,6,7}) = 3: "anything else" scores 1000.
  EXPECT_EQ(fragmentation_score({0, 1, 2, 3, 4, 5, 6, 7}, {0}), 1000);
}

// --- B.9.a whole cards ---------------------------------------------------------------------

TEST(Kunlun, Requests) {
  KunlunBackend b;
  EXPECT_EQ(b.request_for(container("c", {{kXpu, "2"}})),
            (device::ContainerDeviceRequest{2, "kunlun", 0, 100, 0}));
  EXPECT_EQ(b.request_for(container("c", {}, {{kXpu, "1"}})),
            (device::ContainerDeviceRequest{1, "kunlun", 0, 100, 0}));
  EXPECT_EQ(b.request_for(container("c", {{kXpu, "1.5"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{kXpu, "0"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{kVxpu, "1"}})).nums, 0);
  // HAMi's int32(n) without a range check keeps the low 32 bits.
  EXPECT_EQ(b.request_for(container("c", {{kXpu, "4294967297"}})).nums, 1);
}

TEST(Kunlun, DiscoveryFromCapacity) {
  KunlunBackend b;
  auto found = b.node_devices(kunlun_node(8, "node1"));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const auto& d = found.devices[i];
    EXPECT_EQ(d.id, "node1-kunlun-" + std::to_string(i));
    EXPECT_EQ(d.index, i);
    EXPECT_EQ(d.count, 100);
    EXPECT_EQ(d.devmem, 98304);
    EXPECT_EQ(d.devcore, 100);
    EXPECT_EQ(d.type, "kunlun");
    EXPECT_EQ(d.device_vendor, "kunlun");
    EXPECT_TRUE(d.health);
    EXPECT_EQ(d.numa, i < 4 ? 0 : 1);
  }
  // NUMA 0 for i < cards / 2 (integer division).
  found = b.node_devices(kunlun_node(3));
  ASSERT_EQ(found.devices.size(), 3u);
  EXPECT_EQ(found.devices[0].numa, 0);
  EXPECT_EQ(found.devices[1].numa, 1);
  EXPECT_EQ(found.devices[2].numa, 1);

  found = b.node_devices(vendor_node("n", {}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "device not found kunlunxin.com/xpu");
  found = b.node_devices(kunlun_node(0));
  EXPECT_EQ(found.message, "device not found kunlunxin.com/xpu");
  found = b.node_devices(vendor_node("n", {}, {{kXpu, "-2"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  found = b.node_devices(vendor_node("n", {}, {{kXpu, "1000000000000"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
  EXPECT_THAT(found.message, ::testing::HasSubstr("is more than the 1024 cards hamisim accepts"));
}

TEST(Kunlun, FitsAnIdleNodeAndWritesItsAnnotations) {
  const auto registry = chart_registry();
  NodeFit fit = fit_on(pod_with({{kXpu, "1"}}), kunlun_node(8, "node1"), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kKunlunAllocated), "node1-kunlun-0,kunlun,98304,100:;");
  EXPECT_EQ(fit.annotations.at(kDeviceIdx), "0");
  EXPECT_EQ(fit.annotations.size(), 2u);  // no to-allocate key
  EXPECT_EQ(fit.node_score, 0);           // idle node, and 1 -> 3 bubbles scores 0
  fit = fit_on(pod_with({{kXpu, "4"}}), kunlun_node(8, "node1"), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kDeviceIdx), "0,1,2,3");
  EXPECT_EQ(fit.node_score, 2000);  // a full wing: 1 -> 1 bubble
  fit = fit_on(pod_with({{kXpu, "8"}}), kunlun_node(8, "node1"), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kDeviceIdx), "0,1,2,3,4,5,6,7");
  EXPECT_EQ(fit.node_score, 3000);  // 1 -> 0 bubbles
}

TEST(Kunlun, SchedulerExampleThroughRunningPods) {
  // node2 with cards 3-7 busy: sorted [3,4,5,6,7,0,1,2], the pod gets index 0 and the
  // fragmentation moves from 2 to 3 bubbles (+1000). The rebuild from the annotations also
  // counts each busy card's memory and cores.
  const auto registry = chart_registry();
  std::vector<model::Pod> running;
  for (int i = 3; i < 8; ++i) running.push_back(card_on("node2", i, "r" + std::to_string(i)));
  NodeFit fit = fit_on(pod_with({{kXpu, "1"}}), kunlun_node(8, "node2"), registry, running);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kKunlunAllocated), "node2-kunlun-0,kunlun,98304,100:;");
  EXPECT_FLOAT_EQ(fit.node_score, 10.0f * (5.0f / 800 + 500.0f / 800 + 5.0f / 8) + 1000);
  // All eight busy: no topology-valid card.
  for (int i = 0; i < 3; ++i) running.push_back(card_on("node2", i, "s" + std::to_string(i)));
  fit = fit_on(pod_with({{kXpu, "1"}}), kunlun_node(8, "node2"), registry, running);
  EXPECT_EQ(fit.reason, "1/8 NumaNotFit");
  EXPECT_EQ(fit_on(pod_with({{kXpu, "9"}}), kunlun_node(8), registry).reason,
            "NodeInsufficientDevice");
  EXPECT_EQ(fit_on(pod_with({{kXpu, "3"}}), kunlun_node(8), registry).reason, "1/8 NumaNotFit");
}

// HAMi's Test_calcScore Kunlun cases, on the usage HAMi's test builds (Count 1, busy cards
// with Used 1 only).
struct ScoredNode {
  NodeFit fit;
  std::string node;
};
std::vector<ScoredNode> calc_score(const model::Pod& pod) {
  const auto registry = chart_registry();
  auto prepared = prepare_pod(pod, registry, FitPolicy{});
  EXPECT_TRUE(prepared);
  std::vector<ScoredNode> out;
  for (const auto& [name, busy_from] : {std::pair<std::string, int>{"node1", 8}, {"node2", 3}}) {
    NodeUsage usage;
    for (int i = 0; i < 8; ++i) {
      device::DeviceUsage d;
      d.id = "uuid" + std::to_string(i + 1);
      d.index = static_cast<uint64_t>(i);
      d.used = i >= busy_from ? 1 : 0;
      d.count = 1;
      d.totalmem = 98304;
      d.totalcore = 100;
      d.type = "kunlun";
      d.vendor = "kunlun";
      d.health = true;
      usage.devices.push_back(d);
    }
    out.push_back({fit_pod(*prepared, usage, DeviceDescription{}, registry), name});
  }
  return out;
}

TEST(Kunlun, SchedulerExampleOneContainer) {
  auto nodes = calc_score(pod_with({{kXpu, "1"}}));
  for (const auto& n : nodes) {
    ASSERT_TRUE(n.fit.fits) << n.node << ": " << n.fit.reason;
    const auto& list = n.fit.devices.at("kunlun");
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0], (device::ContainerDevices{cdev(0, "uuid1", "kunlun", 98304, 100)}))
        << n.node;
  }
  EXPECT_EQ(nodes[0].fit.node_score, 0);
  EXPECT_EQ(nodes[1].fit.node_score, 1006.25f);
  // Binpack (the default node policy) picks node2.
  EXPECT_EQ(choose_node({nodes[0].fit.node_score, nodes[1].fit.node_score}, "binpack"), 1u);
}

TEST(Kunlun, SchedulerExampleTwoContainers) {
  model::Pod pod = PodBuilder()
                       .app(container("xpu", {{kXpu, "1"}}))
                       .app(container("xpu", {{kXpu, "1"}}))
                       .build();
  auto nodes = calc_score(pod);
  for (const auto& n : nodes) {
    ASSERT_TRUE(n.fit.fits) << n.node << ": " << n.fit.reason;
    const auto& list = n.fit.devices.at("kunlun");
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[0], (device::ContainerDevices{cdev(0, "uuid1", "kunlun", 98304, 100)}))
        << n.node;
    EXPECT_EQ(list[1], (device::ContainerDevices{cdev(1, "uuid2", "kunlun", 98304, 100)}))
        << n.node;
    // The last container's cards.
    EXPECT_EQ(n.fit.annotations.at(kDeviceIdx), "1");
    EXPECT_EQ(n.fit.annotations.at(kKunlunAllocated),
              "uuid1,kunlun,98304,100:;uuid2,kunlun,98304,100:;");
  }
  EXPECT_EQ(nodes[0].fit.node_score, 1000);
  EXPECT_EQ(nodes[1].fit.node_score, 2006.25f);
}

TEST(Kunlun, UuidFiltersBothPairs) {
  auto devices = cards();
  const KunlunBackend b;
  const device::ContainerDeviceRequest one{1, "kunlun", 0, 100, 0};
  auto out = fit_direct(b, devices, one, {{"baidu.com/use-gpuuuid", "xpu-5"}});
  ASSERT_TRUE(out.fits);
  EXPECT_EQ(uuids(out.devices), (std::vector<std::string>{"xpu-5"}));
  out = fit_direct(b, devices, one, {{"hami.io/use-xpu-uuid", "xpu-2"}});
  ASSERT_TRUE(out.fits);
  EXPECT_EQ(uuids(out.devices), (std::vector<std::string>{"xpu-2"}));
  out = fit_direct(b, devices, one, {{"hami.io/use-xpu-uuid", "xpu-99"}});
  EXPECT_FALSE(out.fits);
  EXPECT_EQ(out.reasons, (device::ReasonCounts{{device::Reason::kCardUuidMismatch, 8}}));
  // A device must pass both pairs.
  out = fit_direct(b, devices, one,
                   {{"hami.io/use-xpu-uuid", "xpu-5"}, {"baidu.com/nouse-gpuuuid", "xpu-5"}});
  EXPECT_EQ(out.reasons, (device::ReasonCounts{{device::Reason::kCardUuidMismatch, 8}}));
  out = fit_direct(b, devices, one, {{"hami.io/no-use-xpu-uuid", "xpu-0"}});
  ASSERT_TRUE(out.fits);
  EXPECT_EQ(uuids(out.devices), (std::vector<std::string>{"xpu-1"}));  // left wing: 3 free
  // Busy cards and excluded cards: only the UUID failures are reported.
  devices[4].used = 1;
  out = fit_direct(b, devices, {4, "kunlun", 0, 100, 0},
                   {{"baidu.com/nouse-gpuuuid", "xpu-0,xpu-1,xpu-2"}});
  EXPECT_EQ(out.reasons, (device::ReasonCounts{{device::Reason::kCardUuidMismatch, 3}}));
  ASSERT_EQ(out.verdicts.size(), 8u);
  EXPECT_EQ(out.verdicts[0].reason, "CardUuidMismatch");
  EXPECT_EQ(out.verdicts[4].reason, "NumaNotFit");
}

TEST(Kunlun, UnhealthyAndBusyCardsAreNotTaken) {
  // Eight busy devices that are not marked healthy.
  auto devices = cards();
  for (auto& d : devices) {
    d.used = 1;
    d.health = false;
  }
  const KunlunBackend b;
  auto out = fit_direct(b, devices, {1, "kunlun", 0, 100, 0});
  EXPECT_FALSE(out.fits);
  EXPECT_EQ(device::format_reasons(out.reasons, devices.size()), "1/8 NumaNotFit");
  // Idle but unhealthy.
  for (auto& d : devices) d.used = 0;
  out = fit_direct(b, devices, {1, "kunlun", 0, 100, 0});
  EXPECT_EQ(device::format_reasons(out.reasons, devices.size()), "1/8 NumaNotFit");
  EXPECT_EQ(out.verdicts[0].reason, "CardNotHealth");
}

TEST(Kunlun, ChosenIndexesMapToTheFirstListedDevice) {
  // 10 devices all idle, 8 requested: HAMi answers the literal indexes 0..7.
  auto devices = cards(10);
  devices[3].used = 1;
  devices[0].used = 1;
  const KunlunBackend b;
  auto out = fit_direct(b, devices, {8, "kunlun", 0, 100, 0});
  ASSERT_TRUE(out.fits);
  // Cards 0 and 3 are busy, yet they are named: HAMi's literal answer, mapped by index.
  ASSERT_EQ(out.devices.size(), 8u);
  EXPECT_EQ(out.devices[0].uuid, "xpu-0");
  EXPECT_EQ(out.devices[3].uuid, "xpu-3");
  // Indexes no listed device has are skipped.
  auto shifted = cards(8);
  for (auto& d : shifted) d.index += 10;
  out = fit_direct(b, shifted, {8, "kunlun", 0, 100, 0});
  EXPECT_TRUE(out.fits);
  EXPECT_TRUE(out.devices.empty());
}

TEST(Kunlun, UsageAnnotationsAndScore) {
  const KunlunBackend b;
  device::DeviceUsage d = cards(1)[0];
  device::ContainerDevice chosen = cdev(0, "xpu-0", "kunlun", 98304, 100);
  ASSERT_TRUE(b.add_usage(d, chosen));
  EXPECT_EQ(d.used, 1);
  EXPECT_EQ(d.usedmem, 0);  // in-pass, only Used grows
  EXPECT_EQ(d.usedcores, 0);

  std::map<std::string, std::string> annotations;
  const device::ContainerDevice a = cdev(2, "n-kunlun-2", "kunlun", 98304, 100);
  const device::ContainerDevice c = cdev(6, "n-kunlun-6", "kunlun", 98304, 100);
  b.allocation_annotations({{}, {a, c}, {}}, annotations);
  EXPECT_EQ(annotations.at(kKunlunAllocated),
            ";n-kunlun-2,kunlun,98304,100:n-kunlun-6,kunlun,98304,100:;;");
  EXPECT_EQ(annotations.at(kDeviceIdx), "2,6");
  b.allocation_annotations({{c}, {a}}, annotations);
  EXPECT_EQ(annotations.at(kDeviceIdx), "2");
  annotations.clear();
  b.allocation_annotations({}, annotations);
  EXPECT_TRUE(annotations.empty());

  auto previous = cards();
  for (int i = 0; i < 4; ++i) previous[i].used = 1;
  device::PodSingleDevice all(1);
  for (int i = 0; i < 8; ++i) all[0].push_back(cdev(i, "xpu", "kunlun", 98304, 100));
  EXPECT_EQ(b.score_node(previous, all, "binpack"), 3000);
  EXPECT_EQ(b.score_node(cards(), {{cdev(0, "xpu-0", "kunlun", 98304, 100)}}, "spread"), 0);
  // A node with other vendors' devices scores 0.
  auto mixed = cards();
  mixed[7].type = "XPU";
  EXPECT_EQ(b.score_node(mixed, all, "binpack"), 0);
  // Substring match: "kunlun-p800" is a Kunlun type.
  mixed[7].type = "kunlun-p800";
  mixed[0].used = 1;
  EXPECT_EQ(b.score_node(mixed, {{cdev(1, "xpu-1", "kunlun", 98304, 100)}}, "binpack"), 2000);
}

TEST(Kunlun, RunningPodsRebuildFullCards) {
  // The rebuild counts Used, memory and cores of a busy card (unlike the in-pass usage).
  const auto registry = chart_registry();
  const model::Pod pod = card_on("kl", 5, "r");
  auto allocation = decode_pod_allocation(pod, registry);
  ASSERT_TRUE(allocation);
  DescriptionResult inv = read_registered_description(kunlun_node(), registry);
  ASSERT_EQ(inv.state, DescriptionResult::State::kOk);
  NodeUsage usage = fresh_usage(inv.description);
  add_pod_usage(usage, *allocation);
  EXPECT_EQ(usage.devices[5].used, 1);
  EXPECT_EQ(usage.devices[5].usedmem, 98304);
  EXPECT_EQ(usage.devices[5].usedcores, 100);
}

// --- B.9.b vXPU --------------------------------------------------------------------------

std::string xpu_registration(int n = 8, int devmem = 98304, bool healthy = true, int count = 4) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) {
    if (i) out += ",";
    out += R"({"id":"xpu-)" + std::to_string(i) + R"(","index":)" + std::to_string(i) +
           R"(,"count":)" + std::to_string(count) + R"(,"devmem":)" + std::to_string(devmem) +
           R"(,"devcore":100,"type":"XPU","health":)" + (healthy ? "true" : "false") + "}";
  }
  return out + "]";
}

model::Node xpu_node(std::string reg = xpu_registration()) {
  return vendor_node("xn", {{kXpuRegister, std::move(reg)}});
}

model::Pod slice_on(int index, int mem, std::string name) {
  const std::string cores = std::to_string(mem * 100 / 98304);
  return running_pod(std::move(name), "xn",
                     {{kXpuAllocated, "xpu-" + std::to_string(index) + ",XPU," +
                                          std::to_string(mem) + "," + cores + ":;"}});
}

TEST(Xpu, TrimMemory) {
  using device::kunlun::trim_memory;
  EXPECT_EQ(trim_memory(0), 24576);
  EXPECT_EQ(trim_memory(-5), 24576);
  EXPECT_EQ(trim_memory(24576), 24576);
  EXPECT_EQ(trim_memory(24577), 49152);
  EXPECT_EQ(trim_memory(49152), 49152);
  EXPECT_EQ(trim_memory(49153), 98304);
  EXPECT_EQ(trim_memory(1'000'000'000'000), 98304);
}

TEST(Xpu, Requests) {
  XpuBackend b;
  EXPECT_EQ(b.request_for(container("c", {{kVxpu, "1"}})),
            (device::ContainerDeviceRequest{1, "XPU", 98304, 100, 100}));
  EXPECT_EQ(b.request_for(container("c", {{kVxpu, "2"}, {kVxpuMemory, "24576"}})),
            (device::ContainerDeviceRequest{2, "XPU", 24576, 0, 25}));
  // An explicit 0 is a quarter card.
  EXPECT_EQ(b.request_for(container("c", {{kVxpu, "1"}, {kVxpuMemory, "0"}})),
            (device::ContainerDeviceRequest{1, "XPU", 24576, 0, 25}));
  EXPECT_EQ(b.request_for(container("c", {{kVxpu, "1"}}, {{kVxpuMemory, "30000"}})),
            (device::ContainerDeviceRequest{1, "XPU", 49152, 0, 50}));
  EXPECT_EQ(b.request_for(container("c", {{kVxpu, "1"}, {kVxpuMemory, "16Gi"}})),
            (device::ContainerDeviceRequest{1, "XPU", 98304, 0, 100}));
  // A memory that is not an integer is ignored: a whole card.
  EXPECT_EQ(b.request_for(container("c", {{kVxpu, "1"}, {kVxpuMemory, "1.5"}})),
            (device::ContainerDeviceRequest{1, "XPU", 98304, 100, 100}));
  EXPECT_EQ(b.request_for(container("c", {{kVxpu, "1.5"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{kXpu, "1"}})).nums, 0);
}

TEST(Xpu, Admission) {
  const device::kunlun::KunlunConfig config;
  auto a = device::kunlun::admit_xpu_container(
      config, container("c", {{kVxpu, "1"}, {kVxpuMemory, "30000"}}));
  EXPECT_TRUE(a.found);
  EXPECT_EQ(a.set_memory, 49152);
  a = device::kunlun::admit_xpu_container(config, container("c", {{kVxpu, "1"}}));
  EXPECT_TRUE(a.found);
  EXPECT_FALSE(a.set_memory);
  // Only limits count; a fractional memory rounds up first (Value()).
  a = device::kunlun::admit_xpu_container(config, container("c", {}, {{kVxpu, "1"}}));
  EXPECT_FALSE(a.found);
  a = device::kunlun::admit_xpu_container(config,
                                          container("c", {{kVxpu, "1"}, {kVxpuMemory, "24576.5"}}));
  EXPECT_EQ(a.set_memory, 49152);
}

TEST(Xpu, Registration) {
  XpuBackend b;
  auto found = b.node_devices(vendor_node(
      "n", {{kXpuRegister, R"([{"id":"0000:3b:00.0","count":4,"devmem":98304,"devcore":100,)"
                           R"("type":"XPU","health":true}])"}}));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0].id, "0000:3b:00.0");
  EXPECT_EQ(found.devices[0].count, 4);
  EXPECT_EQ(found.devices[0].devmem, 98304);
  EXPECT_EQ(found.devices[0].device_vendor, "XPU");
  EXPECT_TRUE(found.devices[0].health);
  // health absent = unhealthy.
  found = b.node_devices(vendor_node("n", {{kXpuRegister, R"([{"id":"a","type":"XPU"}])"}}));
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_FALSE(found.devices[0].health);

  found = b.node_devices(vendor_node("n", {}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "annos not found hami.io/node-register-xpu");
  found = b.node_devices(vendor_node("n", {{kXpuRegister, "[]"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "no device found on node");
  found = b.node_devices(vendor_node("n", {{kXpuRegister, "[{"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
  found = b.node_devices(vendor_node("n", {{kXpuRegister, R"({"id":"a"})"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
}

TEST(Xpu, SelectorWithSliceSizes) {
  const XpuBackend b;
  const device::ContainerDeviceRequest quarter4{4, "XPU", 24576, 0, 25};
  // 1 (one 24576 task), 3 (two tasks, 49152), 5 (one 49152 task) busy.
  auto devices = cards(8, "XPU");
  devices[1].used = 1, devices[1].usedmem = 24576;
  devices[3].used = 2, devices[3].usedmem = 49152;
  devices[5].used = 1, devices[5].usedmem = 49152;
  auto out = fit_direct(b, devices, quarter4);
  ASSERT_TRUE(out.fits);
  EXPECT_EQ(uuids(out.devices), (std::vector<std::string>{"xpu-0", "xpu-1", "xpu-2", "xpu-3"}));
  EXPECT_EQ(out.devices[0], cdev(0, "xpu-0", "XPU", 24576, 25));
  // 1 (two tasks, 49152), 3 (one 49152 task), 5 (one 24576 task).
  devices = cards(8, "XPU");
  devices[1].used = 2, devices[1].usedmem = 49152;
  devices[3].used = 1, devices[3].usedmem = 49152;
  devices[5].used = 1, devices[5].usedmem = 24576;
  out = fit_direct(b, devices, quarter4);
  ASSERT_TRUE(out.fits);
  EXPECT_EQ(uuids(out.devices), (std::vector<std::string>{"xpu-4", "xpu-5", "xpu-6", "xpu-7"}));
  // Every card holds one half-card task: a quarter card fits nowhere.
  devices = cards(8, "XPU");
  for (auto& d : devices) d.used = 1, d.usedmem = 49152;
  out = fit_direct(b, devices, {2, "XPU", 24576, 0, 25});
  EXPECT_FALSE(out.fits);
  EXPECT_EQ(device::format_reasons(out.reasons, 8), "1/8 NumaNotFit");
  // ... but another half card fits next to it.
  out = fit_direct(b, devices, {2, "XPU", 49152, 0, 50});
  EXPECT_TRUE(out.fits);
}

TEST(Xpu, MutexPolicyAndFailures) {
  const XpuBackend b;
  auto devices = cards(8, "XPU");
  for (auto& d : devices) d.used = 1, d.usedmem = 24576;
  const device::ContainerDeviceRequest quarter{1, "XPU", 24576, 0, 25};
  EXPECT_TRUE(fit_direct(b, devices, quarter).fits);
  auto out = fit_direct(b, devices, quarter, {}, "mutex");
  EXPECT_FALSE(out.fits);
  EXPECT_EQ(device::format_reasons(out.reasons, 8), "8/8 ExclusiveDeviceAllocateConflict");
  // A token in a policy list counts too; cards of another slice size are no conflict.
  devices[0].usedmem = 49152;
  out = fit_direct(b, devices, quarter, {}, "binpack, mutex");
  EXPECT_EQ(device::format_reasons(out.reasons, 8), "7/8 ExclusiveDeviceAllocateConflict");
  // Conflicts hide UUID failures.
  out = fit_direct(b, devices, quarter, {{"hami.io/no-use-xpu-uuid", "xpu-1"}}, "mutex");
  EXPECT_EQ(device::format_reasons(out.reasons, 8), "7/8 ExclusiveDeviceAllocateConflict");
  // Idle cards of 1024 MiB that are not marked healthy, 2048 MiB requested.
  devices = cards(8, "XPU");
  for (auto& d : devices) d.totalmem = 1024, d.health = false;
  out = fit_direct(b, devices, {1, "XPU", 2048, 0, 2});
  EXPECT_EQ(device::format_reasons(out.reasons, 8), "1/8 NumaNotFit");
  // UUID failures are reported when nothing else is.
  devices = cards(8, "XPU");
  out = fit_direct(b, devices, quarter, {{"baidu.com/use-gpuuuid", "xpu-9"}});
  EXPECT_EQ(device::format_reasons(out.reasons, 8), "8/8 CardUuidMismatch");
  out = fit_direct(b, devices, quarter, {{"baidu.com/use-gpuuuid", "xpu-6"}});
  ASSERT_TRUE(out.fits);
  EXPECT_EQ(uuids(out.devices), (std::vector<std::string>{"xpu-6"}));
}

TEST(Xpu, FitsThroughTheEngine) {
  const auto registry = chart_registry();
  NodeFit fit = fit_on(pod_with({{kVxpu, "1"}, {kVxpuMemory, "20000"}}), xpu_node(), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kXpuAllocated), "xpu-0,XPU,24576,25:;");
  EXPECT_EQ(fit.annotations.at(kXpuToAllocate), "xpu-0,XPU,24576,25:;");
  EXPECT_EQ(fit.annotations.size(), 2u);
  EXPECT_EQ(fit.node_score, 0);
  // Running slices: xpu-3 holds a half card, so a half card is not shared with other sizes.
  std::vector<model::Pod> running;
  for (int i = 0; i < 8; ++i)
    running.push_back(slice_on(i, i == 3 ? 49152 : 24576, "r" + std::to_string(i)));
  fit = fit_on(pod_with({{kVxpu, "1"}, {kVxpuMemory, "49152"}}), xpu_node(), registry, running);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kXpuAllocated), "xpu-3,XPU,49152,50:;");
  // No Count check: a card registered with one slot still takes more tasks.
  const model::Node one = xpu_node(xpu_registration(1, 98304, true, 1));
  running = {slice_on(0, 24576, "a"), slice_on(0, 24576, "b")};
  fit = fit_on(pod_with({{kVxpu, "1"}, {kVxpuMemory, "1"}}), one, registry, running);
  ASSERT_TRUE(fit.fits) << fit.reason;
  // Memory runs out after four quarters.
  running.push_back(slice_on(0, 24576, "c"));
  running.push_back(slice_on(0, 24576, "d"));
  fit = fit_on(pod_with({{kVxpu, "1"}, {kVxpuMemory, "1"}}), one, registry, running);
  EXPECT_EQ(fit.reason, "1/1 NumaNotFit");
  // A whole card needs an idle card.
  fit = fit_on(pod_with({{kVxpu, "1"}}), one, registry, {slice_on(0, 24576, "a")});
  EXPECT_EQ(fit.reason, "1/1 NumaNotFit");
}

TEST(Xpu, UsageIsStandard) {
  const XpuBackend b;
  device::DeviceUsage d = cards(1, "XPU")[0];
  device::ContainerDevice chosen = cdev(0, "xpu-0", "XPU", 24576, 25);
  ASSERT_TRUE(b.add_usage(d, chosen));
  EXPECT_EQ(d.used, 1);
  EXPECT_EQ(d.usedmem, 24576);
  EXPECT_EQ(d.usedcores, 25);
}

// --- the `kunlun:` section and registration behaviour ----------------------------------------

TEST(Kunlun, DeviceConfigSectionNamesBothBackends) {
  const auto registry = registry_from_yaml(R"(kunlun:
  resourceCountName: example.com/xpu
  resourceVCountName: example.com/vxpu
  resourceVMemoryName: example.com/vxpu-memory
)");
  const auto* whole = registry.find("kunlun");
  const auto* shared = registry.find("XPU");
  ASSERT_NE(whole, nullptr);
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(whole->managed_resources(), std::vector<std::string>{"example.com/xpu"});
  EXPECT_EQ(shared->managed_resources(),
            (std::vector<std::string>{"example.com/vxpu", "example.com/vxpu-memory"}));
  EXPECT_EQ(whole->request_for(container("c", {{"example.com/xpu", "2"}})).nums, 2);
  EXPECT_EQ(shared
                ->request_for(
                    container("c", {{"example.com/vxpu", "1"}, {"example.com/vxpu-memory", "1"}}))
                .memreq,
            24576);
  EXPECT_EQ(whole->node_devices(vendor_node("n", {}, {{"example.com/xpu", "2"}})).devices.size(),
            2u);
  // Without a kunlun section the names are empty, as in HAMi; the vXPU registration is still
  // decoded.
  const auto other = registry_from_yaml("nvidia: {}\n");
  ASSERT_NE(other.find("kunlun"), nullptr);
  EXPECT_EQ(other.find("kunlun")->request_for(container("c", {{kXpu, "1"}})).nums, 0);
  EXPECT_EQ(other.find("kunlun")->node_devices(kunlun_node()).state,
            device::NodeDevices::State::kAbsent);
  EXPECT_EQ(other.find("XPU")->request_for(container("c", {{kVxpu, "1"}})).nums, 0);
  EXPECT_EQ(other.find("XPU")->node_devices(xpu_node()).state, device::NodeDevices::State::kOk);
  auto bad = device::parse_device_config("kunlun:\n  resourceVMemoryName: {a: 1}\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              ::testing::HasSubstr("kunlun.resourceVMemoryName: expected a string at line 2"));
}

TEST(Kunlun, RegistrationBehaviour) {
  const KunlunBackend whole;
  EXPECT_EQ(whole.vendor(), "kunlun");
  EXPECT_EQ(whole.health_check(), device::HealthCheck::kAlways);
  EXPECT_EQ(whole.handshake_annotation(), "");
  EXPECT_EQ(whole.cleanup_annotation(), "");
  EXPECT_FALSE(whole.locks_node());
  EXPECT_EQ(whole.allocated_annotation(), kKunlunAllocated);
  EXPECT_EQ(whole.to_allocate_annotation(), "");
  EXPECT_EQ(whole.managed_resources(), std::vector<std::string>{kXpu});

  const XpuBackend shared;
  EXPECT_EQ(shared.vendor(), "XPU");
  EXPECT_EQ(shared.health_check(), device::HealthCheck::kHandshake);
  EXPECT_EQ(shared.handshake_annotation(), "hami.io/node-handshake-xpu");
  EXPECT_EQ(shared.cleanup_annotation(), "hami.io/node-handshake-xpu");
  EXPECT_TRUE(shared.locks_node());
  EXPECT_EQ(shared.allocated_annotation(), kXpuAllocated);
  EXPECT_EQ(shared.to_allocate_annotation(), kXpuToAllocate);
  EXPECT_EQ(shared.managed_resources(), (std::vector<std::string>{kVxpu, kVxpuMemory}));
  EXPECT_EQ(shared.score_node(cards(), {{cdev(0, "xpu-0", "XPU", 24576, 25)}}, "binpack"), 0);

  // The chart registry has both, whole cards first (HAMi's instantiation order).
  const auto registry = chart_registry();
  EXPECT_NE(registry.find("kunlun"), nullptr);
  EXPECT_NE(registry.find("XPU"), nullptr);
}

}  // namespace kunlun_test
}  // namespace hamisim::fit::testing
