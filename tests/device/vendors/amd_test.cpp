// AMD (reference: hami-other-vendors.md B.1), from the reference's examples: limits-only
// requests, the JSON registration typed with the product name, the Fit with percent -> CU
// conversion, annotations carrying the product name, usage, health and lock.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/allocation.h"
#include "device/amd/amd_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace amd_test {

using device::amd::AmdAdmission;
using device::amd::AmdBackend;

constexpr const char* kRegister = "hami.io/node-amd-register";
constexpr const char* kAllocated = "hami.io/amd-devices-allocated";
constexpr const char* kToAllocate = "hami.io/amd-devices-to-allocate";
constexpr const char* kMi300x =
    R"([{"id":"GPU-0","count":1,"devmem":196608,"devcore":304,"type":"AMD Instinct MI300X VF","mode":"hami-core","health":true}])";

model::Node amd_node(std::string reg = kMi300x) {
  return vendor_node("amd-node", {{kRegister, std::move(reg)}}, {{"amd.com/gpu", "1"}});
}

device::DeviceUsage gpu(std::string id, int32_t count, int32_t mem, int32_t cus) {
  device::DeviceUsage d;
  d.id = std::move(id);
  d.count = count;
  d.totalmem = mem;
  d.totalcore = cus;
  d.type = "AMD Instinct MI300X";
  d.vendor = "AMD";
  return d;
}

DirectFit direct_fit(std::vector<device::DeviceUsage>& devices, device::ContainerDeviceRequest r,
                     const model::Pod& pod = PodBuilder().build(),
                     std::string_view policy = "spread") {
  return fit::testing::direct_fit(AmdBackend{}, devices, r, pod, policy);
}

device::ContainerDeviceRequest want(int32_t nums, int32_t mem, int32_t cores) {
  return {nums, "AMD", mem, 0, cores};
}

TEST(Amd, RequestsComeFromLimitsOnly) {
  AmdBackend b;
  EXPECT_EQ(b.request_for(container(
                "c", {{"amd.com/gpu", "2"}, {"amd.com/gpumem", "4096"}, {"amd.com/gpucores", "33"}},
                {{"amd.com/gpu", "1"}, {"amd.com/gpumem", "1024"}, {"amd.com/gpucores", "10"}})),
            want(2, 4096, 33));
  // Cores default to the whole GPU; memory to 0 (= the whole GPU's memory in Fit).
  EXPECT_EQ(b.request_for(container("c", {{"amd.com/gpu", "1"}, {"amd.com/gpumem", "4096"}})),
            want(1, 4096, 100));
  EXPECT_EQ(b.request_for(container("c", {{"amd.com/gpu", "1"}})), want(1, 0, 100));
  // Requests are ignored, for the count as for the others.
  EXPECT_EQ(b.request_for(container("c", {}, {{"amd.com/gpu", "1"}})).nums, 0);
  EXPECT_EQ(
      b.request_for(container("c", {{"amd.com/gpu", "1"}}, {{"amd.com/gpucores", "10"}})).coresreq,
      100);
  for (Resources bad : {Resources{{"amd.com/gpu", "0"}}, Resources{{"amd.com/gpu", "-1"}},
                        Resources{{"amd.com/gpu", "2147483648"}}, Resources{{"amd.com/gpu", "1.5"}},
                        Resources{{"amd.com/gpu", "1"}, {"amd.com/gpumem", "-1"}},
                        Resources{{"amd.com/gpu", "1"}, {"amd.com/gpumem", "16Gi"}},
                        Resources{{"amd.com/gpu", "1"}, {"amd.com/gpumem", "1.5"}},
                        Resources{{"amd.com/gpu", "1"}, {"amd.com/gpucores", "0"}},
                        Resources{{"amd.com/gpu", "1"}, {"amd.com/gpucores", "101"}},
                        Resources{{"amd.com/gpu", "1"}, {"amd.com/gpucores", "500m"}}}) {
    EXPECT_EQ(b.request_for(container("c", bad)).nums, 0) << bad.begin()->first;
  }
  EXPECT_EQ(b.request_for(container("c", {{"amd.com/gpu", "2147483647"}})).nums, 2147483647);
}

TEST(Amd, AdmissionFindsAmdUsersAndChecksThePercentage) {
  AmdBackend b;
  auto admit = [&](Resources limits, Resources requests = {}) {
    return b.admission(container("c", limits, requests));
  };
  EXPECT_TRUE(admit({{"amd.com/gpu", "1"}}).found);
  EXPECT_TRUE(admit({{"amd.com/gpumem", "1024"}}).found);
  EXPECT_TRUE(admit({{"amd.com/gpucores", "20"}}).found);
  EXPECT_FALSE(admit({}, {{"amd.com/gpu", "1"}}).found);
  EXPECT_FALSE(admit({{"nvidia.com/gpu", "1"}}).found);
  EXPECT_EQ(admit({{"amd.com/gpu", "1"}, {"amd.com/gpucores", "100"}}).error, "");
  for (const char* bad : {"0", "101", "1.5"}) {
    const AmdAdmission a = admit({{"amd.com/gpu", "1"}, {"amd.com/gpucores", bad}});
    EXPECT_TRUE(a.found);
    EXPECT_EQ(a.error, "amd.com/gpucores must be an integer percentage between 1 and 100") << bad;
  }
  // Without the count in limits the percentage is not checked.
  EXPECT_EQ(admit({{"amd.com/gpucores", "500"}}).error, "");
}

TEST(Amd, RegistrationIsJsonWithTheProductName) {
  AmdBackend b;
  auto found = b.node_devices(amd_node());
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  const auto& d = found.devices[0];
  EXPECT_EQ(d.id, "GPU-0");
  EXPECT_EQ(d.count, 1);
  EXPECT_EQ(d.devmem, 196608);
  EXPECT_EQ(d.devcore, 304);  // compute units, kept as registered
  EXPECT_EQ(d.type, "AMD Instinct MI300X VF");
  EXPECT_EQ(d.mode, "hami-core");
  EXPECT_TRUE(d.health);
  EXPECT_EQ(d.device_vendor, "AMD");

  found = b.node_devices(vendor_node("n", {}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "annos not found hami.io/node-amd-register");
  found = b.node_devices(vendor_node("n", {{kRegister, "[]"}}));
  EXPECT_EQ(found.message, "no gpu found on node");
  found = b.node_devices(vendor_node("n", {{kRegister, R"({"id":"GPU-0"})"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
  // A product name that would break the pod's device string is refused (deviation).
  found = b.node_devices(
      vendor_node("n", {{kRegister, R"([{"id":"GPU-0","count":1,"type":"AMD MI300X, VF"}])"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
  EXPECT_THAT(found.message, ::testing::HasSubstr("GPU-0"));
}

TEST(Amd, FitExamplesFromTheReference) {
  std::vector<device::DeviceUsage> two = {gpu("dev-0", 2, 1000, 100), gpu("dev-1", 12, 1000, 100)};
  DirectFit r = direct_fit(two, want(2, 0, 0));
  ASSERT_TRUE(r.outcome.fits) << r.reason;
  ASSERT_EQ(r.outcome.devices.size(), 2u);
  EXPECT_EQ(r.outcome.devices[0].uuid, "dev-1");
  EXPECT_EQ(r.outcome.devices[1].uuid, "dev-0");
  for (const auto& d : r.outcome.devices) {
    EXPECT_EQ(d.usedmem, 1000);
    EXPECT_EQ(d.usedcores, 100);  // whole memory without a percentage: every CU
    EXPECT_EQ(d.type, "AMD Instinct MI300X");
  }

  std::vector<device::DeviceUsage> mixed = {gpu("dev-0", 1, 1000, 10), gpu("dev-1", 1, 1000, 100)};
  r = direct_fit(mixed, want(1, 500, 50));
  ASSERT_TRUE(r.outcome.fits);
  EXPECT_EQ(r.outcome.devices[0].uuid, "dev-1");
  EXPECT_EQ(r.outcome.devices[0].usedmem, 500);
  EXPECT_EQ(r.outcome.devices[0].usedcores, 50);

  std::vector<device::DeviceUsage> cu64 = {gpu("g", 1, 1000, 64)};
  EXPECT_EQ(direct_fit(cu64, want(1, 100, 1)).outcome.devices.at(0).usedcores, 1);  // 0 -> 1
  EXPECT_EQ(direct_fit(cu64, want(1, 100, 50)).outcome.devices.at(0).usedcores, 32);
  EXPECT_EQ(direct_fit(cu64, want(1, 100, 3)).outcome.devices.at(0).usedcores, 1);  // 1.92
  EXPECT_EQ(direct_fit(cu64, want(1, 100, 101)).outcome.devices.at(0).usedcores, 64);
  // Memory below the whole GPU without a percentage: no CUs at all.
  EXPECT_EQ(direct_fit(cu64, want(1, 100, 0)).outcome.devices.at(0).usedcores, 0);
}

TEST(Amd, FailureReasons) {
  std::vector<device::DeviceUsage> full = {gpu("d", 4, 1000, 100)};
  full[0].usedmem = 900;
  EXPECT_EQ(direct_fit(full, want(1, 500, 10)).reason, "1/1 CardInsufficientMemory");
  // No memory asked: the whole memory, which is partly used.
  EXPECT_EQ(direct_fit(full, want(1, 0, 10)).reason, "1/1 CardInsufficientMemory");

  std::vector<device::DeviceUsage> cus = {gpu("d", 4, 1000, 10)};
  cus[0].usedcores = 9;
  EXPECT_EQ(direct_fit(cus, want(1, 10, 100)).reason, "1/1 CardInsufficientCore");
  EXPECT_TRUE(direct_fit(cus, want(1, 10, 10)).outcome.fits);  // 1 CU left, 1 asked
  std::vector<device::DeviceUsage> no_cus = {gpu("d", 4, 1000, 0)};
  EXPECT_EQ(direct_fit(no_cus, want(1, 10, 10)).reason, "1/1 CardInsufficientCore");

  std::vector<device::DeviceUsage> one = {gpu("dev-1", 4, 1000, 100)};
  EXPECT_EQ(direct_fit(one, want(1, 10, 10),
                       PodBuilder().annotate("amd.com/use-gpu-uuid", "dev-0").build())
                .reason,
            "1/1 CardUuidMismatch");
  EXPECT_EQ(direct_fit(one, want(1, 10, 10),
                       PodBuilder().annotate("amd.com/nouse-gpu-uuid", "dev-1").build())
                .reason,
            "1/1 CardUuidMismatch");

  std::vector<device::DeviceUsage> slots = {gpu("d", 2, 1000, 100)};
  slots[0].used = 2;
  EXPECT_EQ(direct_fit(slots, want(1, 10, 10)).reason, "1/1 CardTimeSlicingExhausted");
  slots[0].used = 1;
  EXPECT_EQ(direct_fit(slots, want(1, 10, 10), PodBuilder().build(), "mutex").reason,
            "1/1 ExclusiveDeviceAllocateConflict");
  // No "exclusive" rule: a whole-CU request shares a GPU while memory and CUs last.
  EXPECT_TRUE(direct_fit(slots, want(1, 10, 100)).outcome.fits);

  slots[0].health = false;
  EXPECT_EQ(direct_fit(slots, want(1, 10, 10)).reason, "1/1 CardNotHealth");
  // The request type is compared ignoring case.
  std::vector<device::DeviceUsage> idle = {gpu("d", 2, 1000, 100)};
  EXPECT_TRUE(direct_fit(idle, {1, "amd", 10, 0, 10}).outcome.fits);
  EXPECT_EQ(direct_fit(idle, {1, "AMDX", 10, 0, 10}).reason, "1/1 CardTypeMismatch");

  std::vector<device::DeviceUsage> two = {gpu("a", 1, 1000, 100), gpu("b", 1, 1000, 100)};
  DirectFit r = direct_fit(two, want(3, 10, 10));
  EXPECT_EQ(r.reason, "2/2 AllocatedCardsInsufficientRequest");
}

TEST(Amd, ModelFilters) {
  std::vector<device::DeviceUsage> idle = {gpu("d", 2, 1000, 100)};  // "AMD Instinct MI300X"
  auto with = [](std::string key, std::string value) {
    return PodBuilder().annotate(std::move(key), std::move(value)).build();
  };
  auto fits = [&](const model::Pod& pod) { return direct_fit(idle, want(1, 10, 10), pod).reason; };
  EXPECT_EQ(fits(with("amd.com/use-gputype", "mi300")), "");
  EXPECT_EQ(fits(with("amd.com/use-gputype", "MI250, MI300")), "");
  EXPECT_EQ(fits(with("amd.com/use-gputype", "MI250")), "1/1 CardTypeMismatch");
  EXPECT_EQ(fits(with("amd.com/nouse-gputype", "MI250,")), "");
  EXPECT_EQ(fits(with("amd.com/nouse-gputype", "mi300x")), "1/1 CardTypeMismatch");
  // Not blank but every item blank: nothing is selected.
  EXPECT_EQ(fits(with("amd.com/use-gputype", ", ")), "1/1 CardTypeMismatch");
  // Blank: no constraint.
  EXPECT_EQ(fits(with("amd.com/use-gputype", " ")), "");
  EXPECT_EQ(fits(with("amd.com/nouse-gputype", ", ")), "");
}

TEST(Amd, ThroughTheEngineTheTypeFieldIsTheProductName) {
  const auto registry = chart_registry();
  NodeFit fit = fit_on(
      pod_with({{"amd.com/gpu", "1"}, {"amd.com/gpumem", "16384"}, {"amd.com/gpucores", "25"}}),
      amd_node(), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  // 25 % of 304 CUs = 76.
  EXPECT_EQ(fit.annotations.at(kToAllocate), "GPU-0,AMD Instinct MI300X VF,16384,76:;");
  EXPECT_EQ(fit.annotations.at(kAllocated), "GPU-0,AMD Instinct MI300X VF,16384,76:;");
  ASSERT_TRUE(fit.devices.contains("AMD"));

  const model::Node underscored = amd_node(
      R"([{"id":"g","count":4,"devmem":1000,"devcore":100,"type":"AMD_Instinct_MI300X_VF","health":true}])");
  fit = fit_on(pod_with({{"amd.com/gpu", "1"}}), underscored, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("AMD")[0][0].type, "AMD_Instinct_MI300X_VF");
  EXPECT_EQ(fit.annotations.at(kAllocated), "g,AMD_Instinct_MI300X_VF,1000,100:;");

  // Running pods are read back with their product-named Type fields.
  std::vector<model::Pod> running = {
      running_pod("r", "amd-node", {{kAllocated, "g,AMD_Instinct_MI300X_VF,600,30:;"}})};
  fit = fit_on(pod_with({{"amd.com/gpu", "1"}, {"amd.com/gpumem", "500"}}), underscored, registry,
               running);
  EXPECT_EQ(fit.reason, "1/1 CardInsufficientMemory");
  fit = fit_on(
      pod_with({{"amd.com/gpu", "1"}, {"amd.com/gpumem", "400"}, {"amd.com/gpucores", "71"}}),
      underscored, registry, running);
  EXPECT_EQ(fit.reason, "1/1 CardInsufficientCore");
  fit = fit_on(
      pod_with({{"amd.com/gpu", "1"}, {"amd.com/gpumem", "400"}, {"amd.com/gpucores", "70"}}),
      underscored, registry, running);
  EXPECT_TRUE(fit.fits) << fit.reason;
  // A product name without "amd" is never a candidate.
  fit = fit_on(
      pod_with({{"amd.com/gpu", "1"}}),
      amd_node(R"([{"id":"g","count":1,"devmem":1,"devcore":1,"type":"Instinct","health":true}])"),
      registry);
  EXPECT_EQ(fit.reason, "NodeInsufficientDevice");
}

TEST(Amd, DeviceConfigSection) {
  const auto registry = registry_from_yaml(R"(amd:
  resourceCountName: example.com/gpu
  resourceMemoryName: example.com/mem
  resourceCoreName: example.com/cores
)");
  const auto* b = registry.find("AMD");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(
      b->request_for(container(
          "c", {{"example.com/gpu", "1"}, {"example.com/mem", "8"}, {"example.com/cores", "5"}})),
      want(1, 8, 5));
  EXPECT_THAT(b->managed_resources(),
              ::testing::ElementsAre("example.com/gpu", "example.com/mem", "example.com/cores"));
  const auto chart_reg = chart_registry();
  const auto& chart = chart_reg.find("AMD")->resource_names();
  EXPECT_EQ(chart.count, "amd.com/gpu");
  EXPECT_EQ(chart.memory, "amd.com/gpumem");
  EXPECT_EQ(chart.cores, "amd.com/gpucores");
  // A file without the section: no names, no request, and (as in HAMi) always healthy.
  const auto other = registry_from_yaml("nvidia: {}\n");
  ASSERT_NE(other.find("AMD"), nullptr);
  EXPECT_EQ(other.find("AMD")->request_for(container("c", {{"amd.com/gpu", "1"}})).nums, 0);
  EXPECT_EQ(other.find("AMD")->health_check(), device::HealthCheck::kAlways);
  auto bad = device::parse_device_config("amd:\n  resourceCoreName: [x]\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              ::testing::HasSubstr("amd.resourceCoreName: expected a string at line 2"));
}

TEST(Amd, RegistrationBehaviour) {
  AmdBackend b;
  EXPECT_EQ(b.vendor(), "AMD");
  EXPECT_EQ(b.health_check(), device::HealthCheck::kCapacity);
  EXPECT_EQ(b.handshake_annotation(), "");
  // Unhealthy (no amd.com/gpu capacity) deletes the registration itself.
  EXPECT_EQ(b.cleanup_annotation(), "hami.io/node-amd-register");
  EXPECT_TRUE(b.locks_node());
  EXPECT_EQ(b.to_allocate_annotation(), kToAllocate);
  EXPECT_EQ(b.allocated_annotation(), kAllocated);
  EXPECT_EQ(b.score_node({}, {}, "binpack"), 0);

  device::DeviceUsage u = gpu("d", 4, 1000, 304);
  device::ContainerDevice chosen;
  chosen.uuid = "d";
  chosen.usedmem = 256;
  chosen.usedcores = 76;
  ASSERT_TRUE(b.add_usage(u, chosen));
  EXPECT_EQ(u.used, 1);
  EXPECT_EQ(u.usedmem, 256);
  EXPECT_EQ(u.usedcores, 76);
}

}  // namespace amd_test
}  // namespace hamisim::fit::testing
