// Vastai (reference: hami-other-vendors.md B.12), from the reference's examples: requests,
// the JSON registration with custominfo, the slot-only Fit with die mode grouped by AIC, the
// AIC node score, annotations, usage and lock.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/allocation.h"
#include "device/vastai/vastai_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace vastai_test {

using device::vastai::VastaiBackend;

constexpr const char* kRegister = "hami.io/node-va-register";
constexpr const char* kAllocated = "hami.io/Vastai-devices-allocated";
constexpr const char* kToAllocate = "hami.io/Vastai-devices-to-allocate";

// One registration entry; `aic` empty = no custominfo.
std::string entry(std::string id, std::string aic = "", int count = 1) {
  std::string e = R"({"id":")" + id + R"(","count":)" + std::to_string(count) +
                  R"(,"devmem":16384,"type":"Vastai","health":true)";
  if (!aic.empty()) e += R"(,"custominfo":{"AIC":")" + aic + R"(","DeviceStrategy":"die"})";
  return e + "}";
}

model::Node va_node(std::vector<std::string> entries) {
  std::string reg = "[";
  for (size_t i = 0; i < entries.size(); ++i) reg += (i ? "," : "") + entries[i];
  return vendor_node("va-node", {{kRegister, reg + "]"}});
}

// Owns the custominfo texts the usages point to.
struct Devices {
  std::vector<std::string> infos;
  std::vector<device::DeviceUsage> usages;

  Devices(std::initializer_list<std::tuple<std::string, std::string, int64_t>> items) {
    infos.reserve(items.size());
    for (const auto& [id, info, used] : items) {
      infos.push_back(info);
      device::DeviceUsage d;
      d.id = id;
      d.count = 4;
      d.used = used;
      d.totalmem = 16384;
      d.totalcore = 100;
      d.type = "Vastai";
      d.vendor = "Vastai";
      usages.push_back(std::move(d));
    }
    for (size_t i = 0; i < usages.size(); ++i) {
      if (!infos[i].empty()) usages[i].custom_info = &infos[i];
    }
  }
};

std::string die(std::string aic) {
  return R"({"AIC":")" + aic + R"(","DeviceStrategy":"die"})";
}

DirectFit direct_fit(Devices& devices, int32_t nums, std::string_view policy = "spread") {
  return fit::testing::direct_fit(VastaiBackend{}, devices.usages, {nums, "Vastai", 0, 100, 0},
                                  PodBuilder().build(), policy);
}

using ::testing::ElementsAre;

TEST(Vastai, RequestsFollowTheReferenceExamples) {
  VastaiBackend b;
  const device::ContainerDeviceRequest one{1, "Vastai", 0, 100, 0};
  EXPECT_EQ(b.request_for(container("c", {{"vastaitech.com/va", "1"}})), one);
  EXPECT_EQ(b.request_for(container("c", {}, {{"vastaitech.com/va", "1"}})), one);
  EXPECT_EQ(
      b.request_for(container("c", {{"vastaitech.com/va", "2"}}, {{"vastaitech.com/va", "1"}}))
          .nums,
      2);
  EXPECT_EQ(b.request_for(container("c", {{"vastaitech.com/va", "0"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{"vastaitech.com/va", "500m"}})).nums, 0);
  // int32(n) without a range check.
  EXPECT_EQ(b.request_for(container("c", {{"vastaitech.com/va", "2147483648"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{"vastaitech.com/va", "4294967298"}})).nums, 2);
}

TEST(Vastai, RegistrationKeepsCustomInfoAndForcesCores) {
  VastaiBackend b;
  auto found = b.node_devices(vendor_node(
      "n",
      {{kRegister,
        R"([{"id":"7-0","count":1,"devmem":32768,"type":"Vastai","health":true,"devicepairscore":{}}])"}}));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0].id, "7-0");
  EXPECT_EQ(found.devices[0].devmem, 32768);
  EXPECT_EQ(found.devices[0].devcore, 100);
  EXPECT_EQ(found.devices[0].device_vendor, "Vastai");
  EXPECT_TRUE(found.devices[0].custom_info.empty());

  found = b.node_devices(vendor_node(
      "n",
      {{kRegister,
        R"([{"id":"die-0","count":1,"devmem":16384,"devcore":50,"type":"Vastai","health":true,"custominfo":{"AIC":"0","DeviceStrategy":"die"}}])"}}));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  EXPECT_EQ(found.devices[0].devcore, 100);
  EXPECT_EQ(found.devices[0].custom_info, R"({"AIC":"0","DeviceStrategy":"die"})");

  found = b.node_devices(vendor_node("n", {}));
  EXPECT_EQ(found.message, "annos not found hami.io/node-va-register");
  found = b.node_devices(vendor_node("n", {{kRegister, "null"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "no gpu found on node");
  found = b.node_devices(vendor_node("n", {{kRegister, R"([{"id":"a","custominfo":[1]}])"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
}

TEST(Vastai, WholeDevicesThroughTheEngine) {
  const auto registry = chart_registry();
  const model::Node node = va_node({entry("dev-0"), entry("dev-1")});
  NodeFit fit = fit_on(pod_with({{"vastaitech.com/va", "1"}}), node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kToAllocate), "dev-1,Vastai,0,0:;");
  EXPECT_EQ(fit.annotations.at(kAllocated), "dev-1,Vastai,0,0:;");

  const model::Node single = va_node({entry("dev-0")});
  std::vector<model::Pod> running = {
      running_pod("r", "va-node", {{kAllocated, "dev-0,Vastai,0,0:;"}})};
  EXPECT_EQ(fit_on(pod_with({{"vastaitech.com/va", "1"}}), single, registry, running).reason,
            "1/1 CardTimeSlicingExhausted");
  auto with = [](std::string key, std::string value) {
    return PodBuilder()
        .app(container("c", {{"vastaitech.com/va", "1"}}))
        .annotate(key, value)
        .build();
  };
  fit = fit_on(with("vastaitech.com/use-gpuuuid", "dev-0"), node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("Vastai")[0][0].uuid, "dev-0");
  EXPECT_EQ(fit_on(with("vastaitech.com/nouse-gpuuuid", "dev-1,dev-0"), node, registry).reason,
            "2/2 CardUuidMismatch");
  EXPECT_TRUE(fit_on(with("vastaitech.com/use-va", "nothing"), node, registry).fits);
  EXPECT_EQ(fit_on(pod_with({{"vastaitech.com/va", "3"}}), node, registry).reason,
            "NodeInsufficientDevice");
}

TEST(Vastai, DieModeMutexAvoidsBusyCards) {
  const auto registry = chart_registry();
  std::vector<model::Pod> running = {
      running_pod("r", "va-node", {{kAllocated, "dev-0,Vastai,0,0:;"}})};
  auto mutex_pod = [](std::string n) {
    return PodBuilder()
        .app(container("c", {{"vastaitech.com/va", n}}))
        .annotate("hami.io/gpu-scheduler-policy", "mutex")
        .build();
  };
  NodeFit fit =
      fit_on(mutex_pod("1"),
             va_node({entry("dev-0", "1", 2), entry("dev-1", "1", 2), entry("dev-2", "2", 2)}),
             registry, running);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kAllocated), "dev-2,Vastai,0,0:;");
  EXPECT_EQ(fit_on(mutex_pod("1"), va_node({entry("dev-0", "1", 2), entry("dev-1", "1", 2)}),
                   registry, running)
                .reason,
            "2/2 ExclusiveDeviceAllocateConflict");
  // Without mutex the idle die next to the busy one is fine.
  EXPECT_TRUE(fit_on(pod_with({{"vastaitech.com/va", "1"}}),
                     va_node({entry("dev-0", "1", 2), entry("dev-1", "1", 2)}), registry, running)
                  .fits);

  // The same through a direct call, with the verdict of the blocked die.
  Devices devices{{"dev-0", die("1"), 1}, {"dev-1", die("1"), 0}};
  DirectFit r = direct_fit(devices, 1, "mutex");
  EXPECT_EQ(r.reason, "2/2 ExclusiveDeviceAllocateConflict");
  EXPECT_TRUE(r.outcome.devices.empty());
}

TEST(Vastai, DieModeIsDecidedByTheFirstDevice) {
  // The first device is not a die: no AIC exclusion although the others are dies.
  Devices plain_first{{"card", "", 0}, {"dev-0", die("1"), 1}, {"dev-1", die("1"), 0}};
  DirectFit r = direct_fit(plain_first, 1, "mutex");
  ASSERT_TRUE(r.outcome.fits) << r.reason;
  EXPECT_THAT(r.uuids(), ElementsAre("dev-1"));
  // A die first: dev-1's card is busy.
  Devices die_first{{"dev-1", die("1"), 0}, {"dev-0", die("1"), 1}, {"card", "", 0}};
  r = direct_fit(die_first, 1, "mutex");
  ASSERT_TRUE(r.outcome.fits) << r.reason;
  EXPECT_THAT(r.uuids(), ElementsAre("card"));
  // Another strategy, or a non-string one, is not die mode.
  Devices card_mode{{"dev-1", R"({"AIC":"1","DeviceStrategy":"card"})", 0},
                    {"dev-0", R"({"AIC":"1","DeviceStrategy":"card"})", 1}};
  EXPECT_THAT(direct_fit(card_mode, 1, "mutex").uuids(), ElementsAre("dev-1"));
  Devices numeric{{"dev-1", R"({"AIC":"1","DeviceStrategy":1})", 0},
                  {"dev-0", R"({"AIC":"1","DeviceStrategy":"die"})", 1}};
  EXPECT_THAT(direct_fit(numeric, 1, "mutex").uuids(), ElementsAre("dev-1"));
  // Repeated keys: the last one counts, as in Go's map decoding.
  Devices repeated{{"dev-1", R"({"DeviceStrategy":"die","AIC":"2","AIC":"1"})", 0},
                   {"dev-0", die("1"), 1}};
  EXPECT_EQ(direct_fit(repeated, 1, "mutex").reason, "2/2 ExclusiveDeviceAllocateConflict");
}

TEST(Vastai, DieModePrefersDiesOfOneCard) {
  // Scanned from the end: dev1..dev6 is the collection order.
  Devices devices{{"dev6", die("3"), 0}, {"dev5", die("2"), 0}, {"dev4", die("2"), 0},
                  {"dev3", die("1"), 0}, {"dev2", die("1"), 0}, {"dev1", die("1"), 0}};
  EXPECT_THAT(direct_fit(devices, 3).uuids(), ElementsAre("dev1", "dev2", "dev3"));
  EXPECT_THAT(direct_fit(devices, 4).uuids(), ElementsAre("dev1", "dev2", "dev3", "dev4"));
  EXPECT_THAT(direct_fit(devices, 6).uuids(),
              ElementsAre("dev1", "dev2", "dev3", "dev4", "dev5", "dev6"));
  // One die: the most preferred passing one, whatever its card.
  EXPECT_THAT(direct_fit(devices, 1).uuids(), ElementsAre("dev1"));
  // Ties keep the order of each card's first die.
  Devices tie{{"b2", die("B"), 0}, {"a2", die("A"), 0}, {"b1", die("B"), 0}, {"a1", die("A"), 0}};
  EXPECT_THAT(direct_fit(tie, 2).uuids(), ElementsAre("a1", "a2"));
  // Dies without an AIC share the group "".
  Devices loose{{"x2", R"({"DeviceStrategy":"die"})", 0},
                {"y", die("Y"), 0},
                {"x1", R"({"DeviceStrategy":"die"})", 0},
                {"first", die("Z"), 0}};
  EXPECT_THAT(direct_fit(loose, 2).uuids(), ElementsAre("x1", "x2"));
  // One die is the first passing one even when its card has the fewest.
  EXPECT_THAT(direct_fit(loose, 1).uuids(), ElementsAre("first"));

  // Fewer passing dies than asked: the partial collection and HAMi's reasons.
  Devices three{{"d0", die("1"), 0}, {"d1", die("1"), 4}, {"d2", die("2"), 0}};
  DirectFit r = direct_fit(three, 5);
  EXPECT_FALSE(r.outcome.fits);
  EXPECT_EQ(r.reason, "1/3 CardTimeSlicingExhausted, 2/3 AllocatedCardsInsufficientRequest");
  EXPECT_THAT(r.uuids(), ElementsAre("d2", "d0"));
}

TEST(Vastai, DieModeThroughTheEngineScoresSharedCards) {
  const auto registry = chart_registry();
  const model::Node node = va_node(
      {entry("d0", "A"), entry("d1", "A"), entry("d2", "B"), entry("d3", "B"), entry("d4", "B")});
  NodeFit fit = fit_on(pod_with({{"vastaitech.com/va", "3"}}), node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kAllocated), "d4,Vastai,0,0:d3,Vastai,0,0:d2,Vastai,0,0:;");
  // An idle node scores 0 by usage; all three dies on card B add 3/3.
  EXPECT_FLOAT_EQ(fit.node_score, 1.0f);
  fit = fit_on(pod_with({{"vastaitech.com/va", "4"}}), node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_FLOAT_EQ(fit.node_score, 0.75f);
}

TEST(Vastai, ScoreNodeNeedsDiesWithCards) {
  VastaiBackend b;
  Devices devices{{"a0", die("A"), 0},
                  {"a1", die("A"), 0},
                  {"b0", die("B"), 0},
                  {"noinfo", "", 0},
                  {"nostrategy", R"({"AIC":"C"})", 0},
                  {"card", R"({"AIC":"C","DeviceStrategy":"card"})", 0},
                  {"noaic", R"({"DeviceStrategy":"die"})", 0},
                  {"numaic", R"({"DeviceStrategy":"die","AIC":3})", 0}};
  auto dev = [](std::string uuid) {
    device::ContainerDevice d;
    d.uuid = std::move(uuid);
    d.type = "Vastai";
    return d;
  };
  // Per container with devices: most dies on one card / dies; empty entries are skipped.
  device::PodSingleDevice chosen = {{}, {dev("a0"), dev("a1"), dev("b0")}, {dev("b0")}, {}};
  EXPECT_FLOAT_EQ(b.score_node(devices.usages, chosen, "binpack"), 2.0f / 3.0f + 1.0f);
  // An absent DeviceStrategy is tolerated.
  EXPECT_FLOAT_EQ(b.score_node(devices.usages, {{dev("nostrategy"), dev("a0")}}, "binpack"), 0.5f);
  // Anything else not a die with a string AIC zeroes the whole node.
  for (const char* other : {"noinfo", "card", "noaic", "numaic", "unknown"}) {
    EXPECT_EQ(b.score_node(devices.usages, {{dev("a0")}, {dev(other)}}, "binpack"), 0) << other;
  }
  EXPECT_EQ(b.score_node(devices.usages, {}, "spread"), 0);
}

TEST(Vastai, UsageAndAnnotations) {
  VastaiBackend b;
  Devices devices{{"d", die("A"), 0}};
  device::ContainerDevice chosen;
  chosen.uuid = "d";
  ASSERT_TRUE(b.add_usage(devices.usages[0], chosen));
  EXPECT_EQ(devices.usages[0].used, 1);
  EXPECT_EQ(devices.usages[0].usedmem, 0);
  EXPECT_EQ(devices.usages[0].usedcores, 0);
  std::map<std::string, std::string> annotations;
  chosen.type = "Vastai";
  chosen.uuid = "7-0";
  b.allocation_annotations({{}, {chosen}}, annotations);
  EXPECT_EQ(annotations.at(kToAllocate), ";7-0,Vastai,0,0:;");
  EXPECT_EQ(annotations.at(kAllocated), ";7-0,Vastai,0,0:;");
}

TEST(Vastai, DeviceConfigSection) {
  const auto registry = registry_from_yaml("vastai:\n  resourceCountName: example.com/va\n");
  const auto* b = registry.find("Vastai");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->request_for(container("c", {{"example.com/va", "1"}})).nums, 1);
  EXPECT_EQ(b->managed_resources(), std::vector<std::string>{"example.com/va"});
  EXPECT_EQ(chart_registry().find("Vastai")->resource_names().count, "vastaitech.com/va");
  const auto other = registry_from_yaml("nvidia: {}\n");
  EXPECT_EQ(other.find("Vastai")->request_for(container("c", {{"vastaitech.com/va", "1"}})).nums,
            0);
  auto bad = device::parse_device_config("vastai:\n  resourceCountName: {a: b}\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              ::testing::HasSubstr("vastai.resourceCountName: expected a string at line 2"));
}

TEST(Vastai, RegistrationBehaviour) {
  VastaiBackend b;
  EXPECT_EQ(b.vendor(), "Vastai");
  EXPECT_EQ(b.health_check(), device::HealthCheck::kHandshake);
  EXPECT_EQ(b.handshake_annotation(), "hami.io/node-handshake-va");
  EXPECT_EQ(b.cleanup_annotation(), "hami.io/node-handshake-va");
  EXPECT_TRUE(b.locks_node());
  EXPECT_EQ(b.to_allocate_annotation(), kToAllocate);
  EXPECT_EQ(b.allocated_annotation(), kAllocated);
}

}  // namespace vastai_test
}  // namespace hamisim::fit::testing
