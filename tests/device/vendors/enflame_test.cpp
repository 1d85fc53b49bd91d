// Enflame (reference: hami-other-vendors.md B.6): the `GCU` whole-card backend and the
// `Enflame` DRS partition backend, from the reference's examples: requests, discovery, Fit,
// usage in-pass and rebuilt, annotations and the `enflame:` section.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "device/enflame/enflame_backends.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace enflame_test {

using device::ContainerDeviceRequest;
using device::NodeDevices;
using device::enflame::DrsBackend;
using device::enflame::EnflameConfig;
using device::enflame::GcuBackend;
using ::testing::HasSubstr;

constexpr const char* kGcu = "enflame.com/gcu";
constexpr const char* kDrs = "enflame.com/drs-gcu";
constexpr const char* kGcuMem = "enflame.com/gcu-memory";
constexpr const char* kGcuCore = "enflame.com/gcu-core";
constexpr const char* kCapacity = "enflame.com/gcu-drs-capacity";
constexpr const char* kDrsAllocated = "hami.io/enflame-vgpu-devices-allocated";
constexpr const char* kExample = R"({"devices":[{"index":"0","minor":"0","capacity":6}],)"
                                 R"("profiles":{"1g.6gb":"0","3g.20gb":"1","6g.40gb":"2"}})";

// Usage rows over decoded devices (custom_info points into `infos`, which must outlive it).
std::vector<device::DeviceUsage> usage_of(const std::vector<device::DeviceInfo>& infos) {
  std::vector<device::DeviceUsage> out;
  for (const device::DeviceInfo& info : infos) {
    device::DeviceUsage d;
    d.id = info.id;
    d.index = info.index;
    d.count = info.count;
    d.totalmem = info.devmem;
    d.totalcore = info.devcore;
    d.type = info.type;
    d.vendor = info.device_vendor;
    d.health = info.health;
    if (!info.custom_info.empty()) d.custom_info = &info.custom_info;
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<device::DeviceUsage*> pointers(std::vector<device::DeviceUsage>& usage) {
  std::vector<device::DeviceUsage*> out;
  for (auto& d : usage) out.push_back(&d);
  return out;
}

model::Node gcu_node(std::string cards = "2") {
  return vendor_node("testnode", {}, {{kGcu, cards}});
}

model::Node drs_node(std::string capacity = kExample, std::string name = "drs-node") {
  return vendor_node(std::move(name), {{kCapacity, std::move(capacity)}});
}

std::vector<device::DeviceInfo> drs_devices(const std::string& capacity) {
  auto found = DrsBackend(EnflameConfig{}).node_devices(drs_node(capacity));
  EXPECT_EQ(found.state, NodeDevices::State::kOk) << found.message;
  return found.devices;
}

// ---------------------------------------------------------------------------------------------
// GCU

TEST(EnflameGcu, RequestsTakeWholeCards) {
  GcuBackend b("enflame.com/gcu");
  EXPECT_EQ(b.request_for(container("c", {{kGcu, "2"}})),
            (ContainerDeviceRequest{2, "GCU", 100, 100, 100}));
  // Limits, else requests.
  EXPECT_EQ(b.request_for(container("c", {}, {{kGcu, "1"}})).nums, 1);
  EXPECT_EQ(b.request_for(container("c", {{kGcu, "1.5"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{kGcu, "0"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{"cpu", "1"}})).nums, 0);
  // Go's int32(n) keeps the low 32 bits: 2^32 + 1 asks for one card.
  EXPECT_EQ(b.request_for(container("c", {{kGcu, "4294967297"}})).nums, 1);
}

TEST(EnflameGcu, CardsComeFromTheCapacity) {
  GcuBackend b("enflame.com/gcu");
  auto found = b.node_devices(gcu_node());
  ASSERT_EQ(found.state, NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const auto& d = found.devices[i];
    EXPECT_EQ(d.id, "testnode-GCU-" + std::to_string(i));
    EXPECT_EQ(d.index, i);
    EXPECT_EQ(d.count, 1);
    EXPECT_EQ(d.devmem, 100);
    EXPECT_EQ(d.devcore, 100);
    EXPECT_EQ(d.type, "GCU");
    EXPECT_EQ(d.numa, 0);
    EXPECT_TRUE(d.health);
    EXPECT_EQ(d.device_vendor, "GCU");
  }
  found = b.node_devices(vendor_node("n", {}));
  EXPECT_EQ(found.state, NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "device not found enflame.com/gcu");
  EXPECT_EQ(b.node_devices(gcu_node("0")).state, NodeDevices::State::kAbsent);
  EXPECT_EQ(b.node_devices(gcu_node("1.5")).state, NodeDevices::State::kAbsent);
  EXPECT_EQ(b.node_devices(gcu_node("-2")).message, "no gpu found on node");
  found = b.node_devices(gcu_node("1000000000000"));
  EXPECT_EQ(found.state, NodeDevices::State::kMalformed);
  EXPECT_THAT(found.message, HasSubstr("more than the 1024 cards"));
  // Without a resource name (no enflame section) nothing is found.
  EXPECT_EQ(GcuBackend("").node_devices(gcu_node()).state, NodeDevices::State::kAbsent);
}

TEST(EnflameGcu, FitTakesIdleCardsFromTheEnd) {
  const auto registry = chart_registry();
  NodeFit fit = fit_on(pod_with({{kGcu, "1"}}), gcu_node(), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at("hami.io/enflame-gcu-devices-to-allocate"),
            "testnode-GCU-1,GCU,100,100:;");
  EXPECT_EQ(fit.annotations.at("hami.io/enflame-gcu-devices-allocated"),
            "testnode-GCU-1,GCU,100,100:;");

  std::vector<model::Pod> running = {
      running_pod("a", "testnode",
                  {{"hami.io/enflame-gcu-devices-allocated", "testnode-GCU-1,GCU,100,100:;"}})};
  fit = fit_on(pod_with({{kGcu, "1"}}), gcu_node(), registry, running);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("GCU")[0][0].uuid, "testnode-GCU-0");

  running.push_back(
      running_pod("b", "testnode",
                  {{"hami.io/enflame-gcu-devices-allocated", "testnode-GCU-0,GCU,100,100:;"}}));
  fit = fit_on(pod_with({{kGcu, "1"}}), gcu_node(), registry, running);
  EXPECT_EQ(fit.reason, "2/2 ExclusiveDeviceAllocateConflict");
  EXPECT_EQ(fit_on(pod_with({{kGcu, "3"}}), gcu_node(), registry).reason, "NodeInsufficientDevice");

  // Two cards chosen, the third taken: the partial selection is counted.
  running.pop_back();
  running[0] = running_pod(
      "a", "testnode", {{"hami.io/enflame-gcu-devices-allocated", "testnode-GCU-0,GCU,100,100:;"}});
  fit = fit_on(pod_with({{kGcu, "3"}}), gcu_node("3"), registry, running);
  EXPECT_EQ(fit.reason,
            "1/3 ExclusiveDeviceAllocateConflict, 2/3 AllocatedCardsInsufficientRequest");
}

TEST(EnflameGcu, DirectFitReasons) {
  GcuBackend b("enflame.com/gcu");
  std::vector<device::DeviceInfo> infos = b.node_devices(gcu_node("1")).devices;
  auto usage = usage_of(infos);
  usage[0].used = 1;
  EXPECT_EQ(direct_fit(b, usage, {1, "GCU", 100, 100, 100}).reason,
            "1/1 ExclusiveDeviceAllocateConflict");
  usage[0].used = 0;
  auto two = direct_fit(b, usage, {2, "GCU", 100, 100, 100});
  EXPECT_FALSE(two.outcome.fits);
  EXPECT_EQ(two.reason, "1/1 AllocatedCardsInsufficientRequest");
  EXPECT_EQ(direct_fit(b, usage, {1, "NVIDIA", 100, 100, 100}).reason, "1/1 CardTypeMismatch");
  usage[0].health = false;
  EXPECT_EQ(direct_fit(b, usage, {1, "GCU", 100, 100, 100}).reason, "1/1 CardNotHealth");
}

TEST(EnflameGcu, AnnotationsAndRegistration) {
  GcuBackend b("enflame.com/gcu");
  std::map<std::string, std::string> annotations;
  device::ContainerDevice d;
  d.uuid = "testnode-GCU-0";
  d.type = "GCU";
  b.allocation_annotations({{d}}, annotations);
  EXPECT_EQ(annotations.at("hami.io/enflame-gcu-devices-allocated"), "testnode-GCU-0,GCU,0,0:;");
  EXPECT_EQ(annotations.at("hami.io/enflame-gcu-devices-to-allocate"), "testnode-GCU-0,GCU,0,0:;");
  EXPECT_EQ(annotations.size(), 2u);
  EXPECT_EQ(b.health_check(), device::HealthCheck::kCapacity);
  EXPECT_EQ(b.handshake_annotation(), "");
  EXPECT_EQ(b.cleanup_annotation(), "");
  EXPECT_FALSE(b.locks_node());
  EXPECT_EQ(b.managed_resources(), std::vector<std::string>{"enflame.com/gcu"});
}

// ---------------------------------------------------------------------------------------------
// DRS

TEST(EnflameDrs, RequestsAreSlicesOrMemoryAndCores) {
  DrsBackend b{EnflameConfig{}};
  EXPECT_EQ(b.request_for(container("c", {{kDrs, "3"}})),
            (ContainerDeviceRequest{1, "Enflame", 3, 0, 0}));
  EXPECT_EQ(b.request_for(container("c", {{kGcuMem, "20480"}, {kGcuCore, "40"}})),
            (ContainerDeviceRequest{1, "Enflame", 20480, -1, 40}));
  EXPECT_EQ(b.request_for(container("c", {}, {{kGcuCore, "40"}})),
            (ContainerDeviceRequest{1, "Enflame", 0, -1, 40}));
  // Value() rounds a fraction up.
  EXPECT_EQ(b.request_for(container("c", {{kGcuMem, "1.5"}})).memreq, 2);
  // A non-integer or non-positive slice count falls through to memory/cores...
  EXPECT_EQ(b.request_for(container("c", {{kDrs, "0"}, {kGcuMem, "10"}})),
            (ContainerDeviceRequest{1, "Enflame", 10, -1, 0}));
  EXPECT_EQ(b.request_for(container("c", {{kDrs, "1.5"}})).nums, 0);
  // ...but one beyond int32 is no request at all.
  EXPECT_EQ(b.request_for(container("c", {{kDrs, "3000000000"}, {kGcuMem, "10"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{kGcuMem, "3000000000"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{kGcuCore, "3000000000"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{kGcu, "1"}})).nums, 0);
  // Limits, else requests.
  EXPECT_EQ(b.request_for(container("c", {{kDrs, "2"}}, {{kDrs, "6"}})).memreq, 2);
}

TEST(EnflameDrs, ResourceNamesFallBack) {
  EnflameConfig c{"", "", "", "", "example.com/vgcu", ""};
  DrsBackend legacy(c);
  EXPECT_EQ(legacy.resource_names().count, "example.com/vgcu");
  EXPECT_EQ(legacy.resource_names().memory, "enflame.com/gcu-memory");
  EXPECT_EQ(legacy.resource_names().cores, "enflame.com/gcu-core");
  c.resource_name_vgcu = "";
  EXPECT_EQ(DrsBackend(c).resource_names().count, "enflame.com/drs-gcu");
  EXPECT_EQ(DrsBackend(c).managed_resources(),
            (std::vector<std::string>{"enflame.com/drs-gcu", "enflame.com/gcu-memory",
                                      "enflame.com/gcu-core"}));
}

TEST(EnflameDrs, DiscoveryFollowsTheReferenceExample) {
  DrsBackend b{EnflameConfig{}};
  auto found = b.node_devices(drs_node());
  ASSERT_EQ(found.state, NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  const auto& d = found.devices[0];
  EXPECT_EQ(d.id, "drs-node-enflame-drs-0");
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.count, 6);
  EXPECT_EQ(d.devmem, 40960);
  EXPECT_EQ(d.devcore, 100);
  EXPECT_EQ(d.type, "Enflame");
  EXPECT_TRUE(d.health);
  EXPECT_EQ(d.device_vendor, "Enflame");
  const auto facts = device::enflame::read_card_facts(&d.custom_info);
  EXPECT_EQ(facts.index, "0");
  EXPECT_EQ(facts.minor, "0");
  EXPECT_EQ(facts.max_slice, 6);
  EXPECT_EQ(facts.profiles, (std::vector<std::pair<std::string, std::string>>{
                                {"1g.6gb", "0"}, {"3g.20gb", "1"}, {"6g.40gb", "2"}}));
}

TEST(EnflameDrs, DiscoveryOfIndexesMinorsAndCapacities) {
  DrsBackend b{EnflameConfig{}};
  // Keys match case-insensitively; a non-numeric index falls back to the position; a blank
  // minor to the index; capacities may be numeric strings (clamped) or numbers (truncated).
  auto found = b.node_devices(drs_node(
      R"({"Devices":[{"index":"x","minor":" ","capacity":" 4 "},)"
      R"({"INDEX":"7","minor":" 3 ","capacity":2.9},{"index":"-1","capacity":"99999999999"}],)"
      R"("profiles":{"2G.X":"a"}})"));
  ASSERT_EQ(found.state, NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 3u);
  EXPECT_EQ(found.devices[0].id, "drs-node-enflame-drs-0");
  EXPECT_EQ(found.devices[0].count, 4);
  EXPECT_EQ(device::enflame::read_card_facts(&found.devices[0].custom_info).minor, "0");
  EXPECT_EQ(found.devices[1].id, "drs-node-enflame-drs-7");
  EXPECT_EQ(found.devices[1].index, 7u);
  EXPECT_EQ(found.devices[1].count, 2);
  EXPECT_EQ(device::enflame::read_card_facts(&found.devices[1].custom_info).minor, "3");
  // A negative index wraps in Go's uint(); the ID keeps the sign.
  EXPECT_EQ(found.devices[2].id, "drs-node-enflame-drs--1");
  EXPECT_EQ(found.devices[2].index, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(found.devices[2].count, std::numeric_limits<int32_t>::max());
  // No memory in any profile name: the largest slice count stands in for GiB.
  EXPECT_EQ(found.devices[0].devmem, 2048);
  // Repeated "profiles" keys merge like Go's map decoding.
  found = b.node_devices(drs_node(
      R"({"devices":[{"capacity":1}],"profiles":{"1g.6gb":"0"},"profiles":{"2g.12gb":"1"}})"));
  ASSERT_EQ(found.state, NodeDevices::State::kOk) << found.message;
  EXPECT_EQ(device::enflame::read_card_facts(&found.devices[0].custom_info).profiles.size(), 2u);
  EXPECT_EQ(found.devices[0].devmem, 12 * 1024);
}

TEST(EnflameDrs, DiscoveryFailures) {
  DrsBackend b{EnflameConfig{}};
  auto expect = [&](std::string capacity, NodeDevices::State state, std::string message) {
    auto found = b.node_devices(drs_node(std::move(capacity), "n1"));
    EXPECT_EQ(found.state, state) << message;
    EXPECT_THAT(found.message, HasSubstr(message));
  };
  const std::string profiles = R"("profiles":{"1g.6gb":"0"})";
  using State = NodeDevices::State;
  auto found = b.node_devices(vendor_node("n1", {}));
  EXPECT_EQ(found.state, State::kAbsent);
  EXPECT_EQ(found.message, "annotation not found enflame.com/gcu-drs-capacity");
  expect("{", State::kMalformed, "failed to parse enflame.com/gcu-drs-capacity");
  expect("[]", State::kMalformed, "failed to parse");
  // index and minor must be JSON strings.
  expect(R"({"devices":[{"index":0,"capacity":1}],)" + profiles + "}", State::kMalformed,
         "failed to parse");
  expect(R"({"devices":[{"capacity":1}],"profiles":{"1g.6gb":0}})", State::kMalformed,
         "failed to parse");
  expect("null", State::kMalformed, "no valid drs profiles found on node n1");
  expect(R"({"devices":[{"capacity":1}],"profiles":{"x":"0"}})", State::kMalformed,
         "no valid drs profiles found on node n1");
  for (const char* capacity : {"0", "-1", "\"x\"", "true", "null", "3e9", "0.5", "{}"}) {
    expect(R"({"devices":[{"capacity":)" + std::string(capacity) + "}]," + profiles + "}",
           State::kMalformed, "invalid drs capacity on node n1");
  }
  expect(R"({"devices":[{}],)" + profiles + "}", State::kMalformed,
         "invalid drs capacity on node n1");
  expect(R"({"devices":[],)" + profiles + "}", State::kAbsent, "no drs devices found on node n1");
  std::string many = R"({"devices":[)";
  for (int i = 0; i < 1025; ++i) many += std::string(i ? "," : "") + R"({"capacity":1})";
  expect(many + "]," + profiles + "}", State::kMalformed, "1025 cards, more than the 1024");
}

TEST(EnflameDrs, ProfileNames) {
  using device::enflame::parse_profile;
  using P = std::pair<int64_t, int64_t>;
  EXPECT_EQ(parse_profile("3g.20gb"), P(3, 20));
  EXPECT_EQ(parse_profile(" 3G.20GB "), P(3, 20));
  EXPECT_EQ(parse_profile("3 . 20"), P(3, 20));
  EXPECT_EQ(parse_profile("+2g.4gb"), P(2, 4));
  EXPECT_EQ(parse_profile("1g.6gb.extra"), P(1, 6));
  EXPECT_EQ(parse_profile("3g.xgb"), P(3, 0));
  EXPECT_EQ(parse_profile("xg.20gb"), P(0, 0));
  EXPECT_EQ(parse_profile("3g"), P(0, 0));
  EXPECT_EQ(parse_profile("99999999999999999999g.1gb"), P(0, 0));
  EXPECT_EQ(parse_profile("4294967299g.20gb"), P(4294967299, 20));
}

TEST(EnflameDrs, ProfileSelection) {
  auto infos = drs_devices(kExample);
  auto usage = usage_of(infos);
  auto ptrs = pointers(usage);
  const auto candidates = DrsBackend::collect_profiles(ptrs);
  ASSERT_EQ(candidates.size(), 3u);
  // maxSlice 6: cores ceil(size * 100 / 6).
  EXPECT_EQ(candidates[0].core_percent, 17);
  EXPECT_EQ(candidates[1].core_percent, 50);
  EXPECT_EQ(candidates[2].core_percent, 100);
  auto pick = [&](ContainerDeviceRequest r) {
    auto p = DrsBackend::select_profile(candidates, r);
    return p ? p->name : std::string("none");
  };
  EXPECT_EQ(pick({1, "Enflame", 3, 0, 0}), "3g.20gb");
  EXPECT_EQ(pick({1, "Enflame", 2, 0, 0}), "none");
  // Spec mode: 20480 > 2 x 40 GiB is taken as MiB (20 GiB); 40 % of cores.
  EXPECT_EQ(pick({1, "Enflame", 20480, -1, 40}), "3g.20gb");
  // Small values are GiB.
  EXPECT_EQ(pick({1, "Enflame", 6, -1, 0}), "1g.6gb");
  EXPECT_EQ(pick({1, "Enflame", 6, -1, 20}), "3g.20gb");
  EXPECT_EQ(pick({1, "Enflame", 0, -1, 0}), "1g.6gb");
  // Up to twice the largest profile (2 x 40) the value is GiB; above, MiB rounded up to GiB.
  EXPECT_EQ(pick({1, "Enflame", 80, -1, 0}), "none");
  EXPECT_EQ(pick({1, "Enflame", 81, -1, 0}), "1g.6gb");
  EXPECT_EQ(pick({1, "Enflame", 6145, -1, 0}), "3g.20gb");
  EXPECT_EQ(pick({1, "Enflame", 41, -1, 0}), "none");
  EXPECT_EQ(pick({1, "Enflame", 0, -1, 101}), "none");
}

TEST(EnflameDrs, FitPlacesTheProfile) {
  DrsBackend b{EnflameConfig{}};
  auto infos = drs_devices(kExample);
  auto usage = usage_of(infos);
  auto fit = direct_fit(b, usage, {1, "Enflame", 3, 0, 0});
  ASSERT_TRUE(fit.outcome.fits) << fit.reason;
  ASSERT_EQ(fit.outcome.devices.size(), 1u);
  const auto& d = fit.outcome.devices[0];
  EXPECT_EQ(d.uuid, "drs-node-enflame-drs-0");
  EXPECT_EQ(d.type, "Enflame");
  EXPECT_EQ(d.usedmem, 20480);
  EXPECT_EQ(d.usedcores, 50);
  EXPECT_EQ(d.mig_profile, "3g.20gb");
  fit = direct_fit(b, usage, {1, "Enflame", 20480, -1, 40});
  ASSERT_TRUE(fit.outcome.fits) << fit.reason;
  EXPECT_EQ(fit.outcome.devices[0].mig_profile, "3g.20gb");

  auto small = drs_devices(R"({"devices":[{"capacity":6}],"profiles":{"1g.6gb":"0"}})");
  auto small_usage = usage_of(small);
  EXPECT_EQ(direct_fit(b, small_usage, {1, "Enflame", 3, 0, 0}).reason, "1/1 ModeNotFit");
  // A profile beyond int32 slices is refused after selection.
  auto huge = drs_devices(R"({"devices":[{"capacity":6}],"profiles":{"4294967299g.20gb":"0"}})");
  auto huge_usage = usage_of(huge);
  EXPECT_EQ(direct_fit(b, huge_usage, {1, "Enflame", 20, -1, 0}).reason, "1/1 ModeNotFit");
}

TEST(EnflameDrs, DirectFitReasons) {
  DrsBackend b{EnflameConfig{}};
  auto infos = drs_devices(kExample);
  auto usage = usage_of(infos);
  const ContainerDeviceRequest three{1, "Enflame", 3, 0, 0};
  usage[0].used = 1;
  EXPECT_EQ(direct_fit(b, usage, three, PodBuilder().build(), "mutex").reason,
            "1/1 ExclusiveDeviceAllocateConflict");
  usage[0].used = 6;
  EXPECT_EQ(direct_fit(b, usage, three).reason, "1/1 CardTimeSlicingExhausted");
  usage[0].used = 1;
  usage[0].usedmem = 20481;
  EXPECT_EQ(direct_fit(b, usage, three).reason, "1/1 CardInsufficientMemory");
  usage[0].usedmem = 0;
  usage[0].usedcores = 51;
  EXPECT_EQ(direct_fit(b, usage, three).reason, "1/1 CardInsufficientCore");
  usage[0].usedcores = 0;
  EXPECT_EQ(direct_fit(b, usage, {1, "GCU", 3, 0, 0}).reason, "1/1 CardTypeMismatch");
  EXPECT_EQ(direct_fit(b, usage, three,
                       PodBuilder().annotate("enflame.com/nouse-gpuuuid", usage[0].id).build())
                .reason,
            "1/1 CardUuidMismatch");
  usage[0].health = false;
  EXPECT_THAT(direct_fit(b, usage, three).reason, HasSubstr("CardNotHealth"));
}

TEST(EnflameDrs, FitsThroughTheEngineAndWritesItsKeys) {
  const auto registry = chart_registry();
  NodeFit fit = fit_on(pod_with({{kDrs, "3"}}), drs_node(), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kDrsAllocated), "drs-node-enflame-drs-0,Enflame,20480,50:;");
  EXPECT_EQ(fit.annotations.at("enflame.com/gcu-assigned"), "false");
  EXPECT_EQ(fit.annotations.at("enflame.com/gcu-request-size"), "3");
  // The engine gives the pod and the node's cards; only the clock is the live path's.
  EXPECT_TRUE(fit.annotations.contains("assigned-containers"));
  EXPECT_TRUE(fit.annotations.contains("enflame.com/gcu-assigned-index"));
  EXPECT_FALSE(fit.annotations.contains("enflame.com/gcu-assigned-time"));

  // Two running 3g.20gb partitions use all 40 GiB.
  std::vector<model::Pod> running = {
      running_pod("a", "drs-node", {{kDrsAllocated, "drs-node-enflame-drs-0,Enflame,20480,50:;"}}),
      running_pod("b", "drs-node", {{kDrsAllocated, "drs-node-enflame-drs-0,Enflame,20480,50:;"}}),
  };
  EXPECT_EQ(fit_on(pod_with({{kDrs, "1"}}), drs_node(), registry, running).reason,
            "1/1 CardInsufficientMemory");
  fit = fit_on(PodBuilder()
                   .app(container("c", {{kDrs, "1"}}))
                   .annotate("enflame.com/use-gpuuuid", "other")
                   .build(),
               drs_node(), registry);
  EXPECT_EQ(fit.reason, "1/1 CardUuidMismatch");
}

// Quirk B.6.b §4.5 / Appendix B 10: in one pass a partition takes its slices; rebuilt from
// annotations it takes one slot per container.
TEST(EnflameDrs, UsedGrowsBySlicesInPassButByOnePerContainerOnRebuild) {
  const auto registry = chart_registry();
  const model::Node node = drs_node(
      R"({"devices":[{"index":"0","capacity":6}],"profiles":{"2g.1gb":"1","12g.40gb":"2"}})");
  // In one pass: slices 2, 4, 6, then the fourth finds no slot left.
  PodBuilder four;
  for (int i = 0; i < 4; ++i) four.app(container("c" + std::to_string(i), {{kDrs, "2"}}));
  EXPECT_EQ(fit_on(four.build(), node, registry).reason, "1/1 CardTimeSlicingExhausted");
  // The same three partitions as a running pod count 3 slots, so a fourth still fits.
  PodBuilder three_running("r");
  for (int i = 0; i < 3; ++i) three_running.app(container("c" + std::to_string(i), {{kDrs, "2"}}));
  three_running.node("drs-node")
      .phase("Running")
      .annotate(kDrsAllocated,
                "drs-node-enflame-drs-0,Enflame,1024,17:;drs-node-enflame-drs-0,Enflame,1024,17:;"
                "drs-node-enflame-drs-0,Enflame,1024,17:;");
  NodeFit fit = fit_on(pod_with({{kDrs, "2"}}), node, registry, {three_running.build()});
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kDrsAllocated), "drs-node-enflame-drs-0,Enflame,1024,17:;");
}

TEST(EnflameDrs, AddUsageCountsSlices) {
  DrsBackend b{EnflameConfig{}};
  device::DeviceUsage u;
  device::ContainerDevice c;
  c.usedmem = 20480;
  c.usedcores = 50;
  c.mig_profile = "3g.20gb";
  ASSERT_TRUE(b.add_usage(u, c));
  EXPECT_EQ(u.used, 3);
  EXPECT_EQ(u.usedmem, 20480);
  EXPECT_EQ(u.usedcores, 50);
  c.mig_profile.reset();  // no profile: one slot
  ASSERT_TRUE(b.add_usage(u, c));
  EXPECT_EQ(u.used, 4);
  c.mig_profile = "4294967299g.1gb";  // clamped to int32, and so is the sum
  ASSERT_TRUE(b.add_usage(u, c));
  EXPECT_EQ(u.used, std::numeric_limits<int32_t>::max());
}

TEST(EnflameDrs, AnnotationsWithTheFullContext) {
  DrsBackend b{EnflameConfig{}};
  const auto infos = drs_devices(
      R"({"devices":[{"index":"0","minor":"5","capacity":6},{"index":"1","minor":"6","capacity":6}],)"
      R"("profiles":{"1g.6gb":"0","3g.20gb":"1","6g.40gb":"2"}})");
  auto chosen = [](std::string uuid, int32_t mem, int32_t cores, std::string profile) {
    device::ContainerDevice d;
    d.uuid = std::move(uuid);
    d.type = "Enflame";
    d.usedmem = mem;
    d.usedcores = cores;
    d.mig_profile = std::move(profile);
    return d;
  };
  // The reference's example: one container.
  const model::Pod one = PodBuilder().app(container("pod-gcu-example1", {{kDrs, "3"}})).build();
  device::AnnotationContext ctx{
      .pod = &one, .node_devices = infos, .unix_nanos = 1700000000123456789};
  std::map<std::string, std::string> a;
  b.annotate_allocation({{chosen("drs-node-enflame-drs-0", 20480, 50, "3g.20gb")}}, ctx, a);
  EXPECT_EQ(a.at(kDrsAllocated), "drs-node-enflame-drs-0,Enflame,20480,50:;");
  EXPECT_EQ(a.at("enflame.com/gcu-assigned"), "false");
  EXPECT_EQ(a.at("enflame.com/gcu-assigned-time"), "1700000000123456789");
  EXPECT_EQ(a.at("enflame.com/gcu-assigned-index"), "0");
  EXPECT_EQ(a.at("enflame.com/gcu-assigned-id"), "0");
  EXPECT_EQ(a.at("enflame.com/gcu-assigned-minor"), "5");
  EXPECT_EQ(a.at("enflame.com/gcu-request-size"), "3");
  EXPECT_EQ(a.at("assigned-containers"),
            R"({"pod-gcu-example1":{"allocated":false,"request":3,"profileID":"1",)"
            R"("profileName":"3g.20gb"}})");
  EXPECT_EQ(a.size(), 8u);

  // Init container first; the first container with a device decides the card keys; names
  // sorted; a container without a device is left out.
  const model::Pod pod = PodBuilder()
                             .init(container("zinit", {{kDrs, "1"}}))
                             .app(plain_container("sidecar"))
                             .app(container("alpha", {{kDrs, "6"}}))
                             .build();
  ctx.pod = &pod;
  a.clear();
  b.annotate_allocation({{chosen("drs-node-enflame-drs-1", 6144, 17, "1g.6gb")},
                         {},
                         {chosen("drs-node-enflame-drs-0", 40960, 100, "6g.40gb")}},
                        ctx, a);
  EXPECT_EQ(a.at(kDrsAllocated),
            "drs-node-enflame-drs-1,Enflame,6144,17:;;drs-node-enflame-drs-0,Enflame,40960,100:;");
  EXPECT_EQ(a.at("enflame.com/gcu-assigned-index"), "1");
  EXPECT_EQ(a.at("enflame.com/gcu-assigned-minor"), "6");
  EXPECT_EQ(a.at("enflame.com/gcu-request-size"), "1");
  EXPECT_EQ(a.at("assigned-containers"),
            R"({"alpha":{"allocated":false,"request":6,"profileID":"2","profileName":"6g.40gb"},)"
            R"("zinit":{"allocated":false,"request":1,"profileID":"0","profileName":"1g.6gb"}})");

  // Nothing for the vendor: nothing written.
  a.clear();
  b.annotate_allocation({}, ctx, a);
  EXPECT_TRUE(a.empty());
}

TEST(EnflameDrs, Registration) {
  DrsBackend b{EnflameConfig{}};
  EXPECT_EQ(b.vendor(), "Enflame");
  EXPECT_EQ(b.health_check(), device::HealthCheck::kAlways);
  EXPECT_EQ(b.handshake_annotation(), "");
  EXPECT_EQ(b.cleanup_annotation(), "");
  EXPECT_FALSE(b.locks_node());
  EXPECT_EQ(b.to_allocate_annotation(), "");
  EXPECT_EQ(b.allocated_annotation(), kDrsAllocated);
}

// ---------------------------------------------------------------------------------------------
// The `enflame:` section

TEST(Enflame, DeviceConfigSection) {
  const auto registry = registry_from_yaml(R"(enflame:
  resourceNameGCU: example.com/gcu
  resourceNameDRSGCU: example.com/drs
  resourceNameGCUMemory: example.com/mem
  resourceNameGCUCore: example.com/core
  resourceNameVGCU: example.com/vgcu
  resourceNameVGCUPercentage: example.com/vgcu-percentage
)");
  const auto* gcu = registry.find("GCU");
  const auto* drs = registry.find("Enflame");
  ASSERT_NE(gcu, nullptr);
  ASSERT_NE(drs, nullptr);
  EXPECT_EQ(gcu->request_for(container("c", {{"example.com/gcu", "1"}})).nums, 1);
  EXPECT_EQ(drs->resource_names().count, "example.com/drs");
  EXPECT_EQ(drs->request_for(container("c", {{"example.com/mem", "8"}})).memreq, 8);
  EXPECT_EQ(drs->request_for(container("c", {{"example.com/core", "8"}})).coresreq, 8);

  // Without the section the GCU name is empty, while DRS keeps its built-in names.
  const auto other = registry_from_yaml("nvidia: {}\n");
  ASSERT_NE(other.find("GCU"), nullptr);
  EXPECT_EQ(other.find("GCU")->request_for(container("c", {{kGcu, "1"}})).nums, 0);
  EXPECT_EQ(other.find("Enflame")->request_for(container("c", {{kDrs, "1"}})).nums, 1);

  auto bad = device::parse_device_config("enflame:\n  resourceNameGCU: [a]\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              HasSubstr("enflame.resourceNameGCU: expected a string at line 2"));
}

}  // namespace enflame_test
}  // namespace hamisim::fit::testing
