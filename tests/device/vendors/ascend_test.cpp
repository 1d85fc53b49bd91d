// Huawei Ascend (reference: hami-other-vendors.md B.2), from the reference's examples: the
// vnpus section and chart chips, requests, the JSON registration with NetworkID and the node's
// soft-split flag, Fit (hard and soft split, NetworkID grouping, 910C modules), the allocation
// annotations, the node score, usage of running pods and the admission helper.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/allocation.h"
#include "device/ascend/ascend_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace ascend_test {

using device::ascend::AdmissionInput;
using device::ascend::AscendBackend;
using device::ascend::VnpuConfig;
using ::testing::HasSubstr;

VnpuConfig chart_chip(std::string_view cw) {
  for (VnpuConfig& c : device::ascend::chart_chips()) {
    if (c.common_word == cw) return c;
  }
  ADD_FAILURE() << "no chart chip " << cw;
  return {};
}

device::ContainerDevice cdev(int32_t idx, std::string uuid, std::string type, int32_t mem = 0,
                             int32_t cores = 0) {
  device::ContainerDevice d;
  d.idx = idx;
  d.uuid = std::move(uuid);
  d.type = std::move(type);
  d.usedmem = mem;
  d.usedcores = cores;
  return d;
}

// A registration device of the JSON array.
std::string npu(std::string id, int index, std::string type, std::string custominfo = "",
                int count = 4, int devmem = 65536, int devcore = 20, bool health = true) {
  std::string s = "{\"id\":\"" + id + "\",\"index\":" + std::to_string(index) +
                  ",\"count\":" + std::to_string(count) + ",\"devmem\":" + std::to_string(devmem) +
                  ",\"devcore\":" + std::to_string(devcore) + ",\"type\":\"" + type +
                  "\",\"health\":" + (health ? "true" : "false");
  if (!custominfo.empty()) s += ",\"custominfo\":" + custominfo;
  return s + "}";
}

std::string array(std::initializer_list<std::string> items) {
  std::string s = "[";
  for (const std::string& i : items) s += (s.size() > 1 ? "," : "") + i;
  return s + "]";
}

model::Node npu_node(std::string_view cw, std::string reg,
                     std::map<std::string, std::string, std::less<>> extra = {}) {
  extra["hami.io/node-register-" + std::string(cw)] = std::move(reg);
  return vendor_node("npu-node", std::move(extra));
}

// A device as the Fit engine hands it over (fresh usage of a registration).
device::DeviceUsage usage(std::string id, uint64_t index, std::string vendor = "Ascend910A",
                          int32_t totalmem = 128, int32_t totalcore = 100) {
  device::DeviceUsage d;
  d.id = std::move(id);
  d.index = index;
  d.count = 100;
  d.totalmem = totalmem;
  d.totalcore = totalcore;
  d.type = vendor;
  d.vendor = std::move(vendor);
  d.health = true;
  return d;
}

// Calls the backend's Fit directly (no NodeInsufficientDevice pre-check), as HAMi's unit
// tests do.
struct AscendFit {
  AscendBackend::DetailedFit result;
  std::string reason() const {
    return device::format_reasons(result.outcome.reasons, result.reason_cards);
  }
  std::vector<std::string> uuids() const {
    std::vector<std::string> out;
    for (const auto& d : result.outcome.devices) out.push_back(d.uuid);
    return out;
  }
};

AscendFit fit_direct(const AscendBackend& b, std::vector<device::DeviceUsage>& devices,
                     const device::ContainerDeviceRequest& request,
                     const model::Pod& pod = pod_with({}), std::string policy = "spread") {
  std::vector<device::DeviceUsage*> ptrs;
  for (auto& d : devices) ptrs.push_back(&d);
  auto prepared = b.prepare(pod);
  device::FitContext ctx;
  ctx.pod = &pod;
  ctx.prepared = prepared.get();
  ctx.gpu_policy = policy;
  ctx.explain = true;
  return AscendFit{b.fit_detailed(ptrs, request, ctx)};
}

device::ContainerDeviceRequest req(int32_t nums, std::string type, int32_t mem = 0,
                                   int32_t cores = 0) {
  return {nums, std::move(type), mem, mem == 0 ? 100 : 0, cores};
}

model::Pod hami_core_pod(Resources limits) {
  return PodBuilder()
      .app(container("main", limits))
      .annotate("huawei.com/vnpu-mode", "hami-core")
      .build();
}

// --- Configuration ----------------------------------------------------------------------------

TEST(Ascend, ChartDefaultsAreTheChartChipsBehindTheFlag) {
  const auto registry = chart_registry();
  for (const char* cw : {"Ascend910A", "Ascend910B2", "Ascend910B3", "Ascend910B4-1", "Ascend910B4",
                         "Ascend310P", "Ascend910C"}) {
    const auto* b = registry.find(cw);
    ASSERT_NE(b, nullptr) << cw;
    EXPECT_EQ(b->resource_names().count, "huawei.com/" + std::string(cw));
    EXPECT_EQ(b->resource_names().memory, "huawei.com/" + std::string(cw) + "-memory");
    EXPECT_EQ(b->resource_names().cores, "huawei.com/" + std::string(cw) + "-core");
    EXPECT_EQ(b->to_allocate_annotation(), "hami.io/" + std::string(cw) + "-devices-to-allocate");
    EXPECT_EQ(b->allocated_annotation(), "hami.io/" + std::string(cw) + "-devices-allocated");
  }
  const auto& c310 = dynamic_cast<const AscendBackend&>(*registry.find("Ascend310P")).config();
  EXPECT_EQ(c310.chip_name, "310P3");
  EXPECT_EQ(c310.memory_allocatable, 21527);
  EXPECT_EQ(c310.memory_capacity, 24576);
  ASSERT_EQ(c310.templates.size(), 3u);
  EXPECT_EQ(c310.templates[2], (device::ascend::VnpuTemplate{"vir04", 12288, 4, 4}));
  const auto& c910c = dynamic_cast<const AscendBackend&>(*registry.find("Ascend910C")).config();
  EXPECT_TRUE(c910c.super_pod);
  EXPECT_EQ(c910c.memory_factor, 0);
  EXPECT_EQ(c910c.chip_name, "Ascend910");
  EXPECT_FALSE(dynamic_cast<const AscendBackend&>(*registry.find("Ascend910C")).hami_vnpu_core());

  // --enable-ascend is off by default: no Ascend backend at all.
  const auto off = device::build_registry(device::DeviceConfig{});
  EXPECT_EQ(off.find("Ascend910B3"), nullptr);
  EXPECT_NE(off.find("DCU"), nullptr);
}

TEST(Ascend, VnpusSectionBuildsOneBackendPerChip) {
  const auto registry = registry_from_yaml(R"(vnpus:
  hamiVnpuCore: true
  configs:
  - commonWord: Ascend910B3
    chipName: 910B3
    resourceName: example.com/npu
    resourceMemoryName: example.com/npu-mem
    memoryAllocatable: 4294967296
    memoryCapacity: 65536
    memoryFactor: 2
    aiCore: 20
    aiCPU: 7
    runtimeClassName: ascend
    overwriteEnv: true
    superPod: false
    templates:
    - name: big
      memory: 32768
      aiCore: 10
    - name: small
      memory: 16384
      aiCore: 5
      aiCPU: 1
  - commonWord: MyChip
    resourceName: example.com/chip
)");
  const auto* b = dynamic_cast<const AscendBackend*>(registry.find("Ascend910B3"));
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->hami_vnpu_core());
  const VnpuConfig& c = b->config();
  EXPECT_EQ(c.resource_name, "example.com/npu");
  EXPECT_EQ(c.resource_core_name, "");
  EXPECT_EQ(c.memory_allocatable, 4294967296);
  EXPECT_EQ(c.memory_factor, 2);
  EXPECT_EQ(c.runtime_class_name, "ascend");
  EXPECT_TRUE(c.overwrite_env);
  // Templates are sorted by memory at init.
  ASSERT_EQ(c.templates.size(), 2u);
  EXPECT_EQ(c.templates[0], (device::ascend::VnpuTemplate{"small", 16384, 5, 1}));
  EXPECT_EQ(c.templates[1].name, "big");
  EXPECT_NE(registry.find("MyChip"), nullptr);
  // No chart chips once a file is given.
  EXPECT_EQ(registry.find("Ascend910A"), nullptr);
  auto r = b->request_for(container("c", {{"example.com/npu", "1"}, {"example.com/npu-mem", "8"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{1, "Ascend910B3", 16, 0, 0}));

  // A file without a vnpus section has no Ascend backend.
  const auto none = registry_from_yaml("nvidia: {}\n");
  EXPECT_EQ(none.find("Ascend910B3"), nullptr);
}

TEST(Ascend, VnpusSectionErrorsNameTheKeyAndLine) {
  auto bad = device::parse_device_config(
      "vnpus:\n  configs:\n  - commonWord: X\n    memoryFactor: many\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              HasSubstr("vnpus.configs[0].memoryFactor: expected an integer at line 4"));
  bad = device::parse_device_config(
      "vnpus:\n  configs:\n  - commonWord: X\n    memoryAllocatable: lots\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              HasSubstr("vnpus.configs[0].memoryAllocatable: expected an integer at line 4"));
  bad = device::parse_device_config(
      "vnpus:\n  configs:\n  - commonWord: X\n    templates:\n    - name: t\n      memory: [1]\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              HasSubstr("vnpus.configs[0].templates[0].memory: expected an integer at line 6"));
  bad = device::parse_device_config("vnpus:\n  hamiVnpuCore: maybe\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("vnpus.hamiVnpuCore: expected a boolean at line 2"));
  // The HAMi <= v2.8 layout (a list of chips) is refused as HAMi v2.10 refuses it.
  bad = device::parse_device_config("vnpus:\n- commonWord: Ascend910B3\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("vnpus: expected a mapping at line 2"));
}

TEST(Ascend, TrimMemoryRoundsUpToTemplatesThenTheWholeCard) {
  const VnpuConfig c = chart_chip("Ascend910A");
  EXPECT_EQ(device::ascend::trim_memory(c, 1).memory, 2184);
  EXPECT_EQ(device::ascend::trim_memory(c, 1).template_name, "vir02");
  EXPECT_EQ(device::ascend::trim_memory(c, 8738).template_name, "vir08");
  EXPECT_EQ(device::ascend::trim_memory(c, 8739).memory, 17476);
  EXPECT_EQ(device::ascend::trim_memory(c, 20000).memory, 32768);
  EXPECT_EQ(device::ascend::trim_memory(c, 20000).template_name, "");
  EXPECT_EQ(device::ascend::trim_memory(c, 40000).memory, 0);
  const VnpuConfig p = chart_chip("Ascend310P");
  // Between allocatable and capacity: still the whole card, which gives allocatable.
  EXPECT_EQ(device::ascend::trim_memory(p, 24000).memory, 21527);
  EXPECT_EQ(device::ascend::trim_memory(p, 24577).memory, 0);
}

// --- Requests ---------------------------------------------------------------------------------

TEST(Ascend, RequestsFollowTheReferenceExamples) {
  AscendBackend b(chart_chip("Ascend910A"), false);
  auto r = b.request_for(
      container("c", {{"huawei.com/Ascend910A", "2"}, {"huawei.com/Ascend910A-memory", "8738"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{2, "Ascend910A", 8738, 0, 0}));
  r = b.request_for(container("c", {{"huawei.com/Ascend910A", "2"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{2, "Ascend910A", 0, 100, 0}));
  // Limits, else requests, per resource; memory is not rounded here (the webhook did it).
  r = b.request_for(
      container("c", {{"huawei.com/Ascend910A", "1"}},
                {{"huawei.com/Ascend910A-memory", "3000"}, {"huawei.com/Ascend910A-core", "30"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{1, "Ascend910A", 3000, 0, 30}));
  r = b.request_for(container("c", {}, {{"huawei.com/Ascend910A", "1"}}));
  EXPECT_EQ(r.nums, 1);
  // Cores are Value(): a fraction rounds up; 0 is fine.
  r = b.request_for(
      container("c", {{"huawei.com/Ascend910A", "1"}, {"huawei.com/Ascend910A-core", "500m"}}));
  EXPECT_EQ(r.coresreq, 1);
  // A positive non-integer memory is ignored.
  r = b.request_for(
      container("c", {{"huawei.com/Ascend910A", "1"}, {"huawei.com/Ascend910A-memory", "1.5"}}));
  EXPECT_EQ(r.memreq, 0);
  EXPECT_EQ(r.mem_percentagereq, 100);

  auto none = [&](Resources limits) { return b.request_for(container("c", limits)).nums == 0; };
  EXPECT_TRUE(none({{"huawei.com/Ascend910A", "1"}, {"huawei.com/Ascend910A-memory", "16Gi"}}));
  EXPECT_TRUE(none({{"huawei.com/Ascend910A", "1"}, {"huawei.com/Ascend910A-memory", "-1m"}}));
  EXPECT_TRUE(none({{"huawei.com/Ascend910A", "1"}, {"huawei.com/Ascend910A-memory", "-100"}}));
  EXPECT_TRUE(none({{"huawei.com/Ascend910A", "2200000000"}}));
  EXPECT_TRUE(none({{"huawei.com/Ascend910A", "0"}}));
  EXPECT_TRUE(none({{"huawei.com/Ascend910A", "1.5"}}));
  EXPECT_TRUE(none({{"huawei.com/Ascend910A", "1"}, {"huawei.com/Ascend910A-core", "-1"}}));
  EXPECT_TRUE(none({{"huawei.com/Ascend910A", "1"}, {"huawei.com/Ascend910A-core", "2147483648"}}));
  EXPECT_TRUE(none({{"huawei.com/Ascend910B3", "1"}}));
}

TEST(Ascend, MemoryFactorAboveOneMultiplies) {
  auto with_factor = [](int32_t factor) {
    VnpuConfig c = chart_chip("Ascend910A");
    c.memory_factor = factor;
    return AscendBackend(std::move(c), false)
        .request_for(container(
            "c", {{"huawei.com/Ascend910A", "1"}, {"huawei.com/Ascend910A-memory", "128"}}));
  };
  EXPECT_EQ(with_factor(10).memreq, 1280);
  EXPECT_EQ(with_factor(100).memreq, 12800);
  EXPECT_EQ(with_factor(0).memreq, 128);
  EXPECT_EQ(with_factor(1).memreq, 128);
  EXPECT_EQ(with_factor(20000000).nums, 0);  // 2.56e9 overflows int32: no request
}

TEST(Ascend, WithoutACoreNameCoresAreNotRead) {
  VnpuConfig c = chart_chip("Ascend910A");
  c.resource_core_name.clear();
  AscendBackend b(std::move(c), false);
  auto r = b.request_for(
      container("c", {{"huawei.com/Ascend910A", "1"}, {"huawei.com/Ascend910A-core", "-1"}}));
  EXPECT_EQ(r.nums, 1);
  EXPECT_EQ(r.coresreq, 0);
}

// --- Registration -----------------------------------------------------------------------------

TEST(Ascend, RegistrationIsTheJsonArrayWithCustomInfo) {
  AscendBackend b(chart_chip("Ascend910B3"), false);
  auto found = b.node_devices(npu_node(
      "Ascend910B3",
      R"([{"id":"npu-uuid-0","count":4,"devmem":65536,"devcore":20,"type":"Ascend910B3","health":true,"custominfo":{"NetworkID":0}},{"id":"npu-uuid-4","index":4,"count":4,"devmem":65536,"devcore":20,"type":"Ascend910B3","health":true,"custominfo":{"NetworkID":1}}])"));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 2u);
  EXPECT_EQ(found.devices[1].id, "npu-uuid-4");
  EXPECT_EQ(found.devices[1].index, 4u);
  EXPECT_EQ(found.devices[1].count, 4);
  EXPECT_EQ(found.devices[1].devmem, 65536);
  EXPECT_EQ(found.devices[1].devcore, 20);
  EXPECT_EQ(found.devices[1].type, "Ascend910B3");
  EXPECT_EQ(found.devices[1].custom_info, R"({"NetworkID":1})");
  EXPECT_EQ(found.devices[1].device_vendor, "Ascend910B3");
  EXPECT_EQ(found.devices[1].mode, "");

  // HAMi's fixture: keys match case-insensitively.
  AscendBackend a(chart_chip("Ascend910A"), false);
  found = a.node_devices(npu_node(
      "Ascend910A",
      R"([{"ID":"GPU-0","Count":4,"Devmem":8738,"Devcore":8,"Type":"huawei.com/Ascend910","Numa":0,"Health":true}])"));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  EXPECT_EQ(found.devices[0].id, "GPU-0");
  EXPECT_EQ(found.devices[0].type, "huawei.com/Ascend910");
  EXPECT_TRUE(found.devices[0].health);
  EXPECT_EQ(found.devices[0].custom_info, "");

  found = b.node_devices(vendor_node("n", {}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "annos not found hami.io/node-register-Ascend910B3");
  found = b.node_devices(npu_node("Ascend910B3", "[]"));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "no device found on node");
  found = b.node_devices(npu_node("Ascend910B3", "[{\"id\":"));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
  EXPECT_THAT(found.message, HasSubstr("hami.io/node-register-Ascend910B3"));
  found = b.node_devices(npu_node("Ascend910B3", R"([{"id":"a","custominfo":[1]}])"));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
  // health absent = unhealthy.
  found = b.node_devices(npu_node("Ascend910B3", R"([{"id":"a","count":1}])"));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk);
  EXPECT_FALSE(found.devices[0].health);
}

TEST(Ascend, TheNodeSoftSplitFlagOverridesTheGlobalDefault) {
  const std::string reg = array({npu("a", 0, "Ascend910B3")});
  auto mode = [&](bool global, std::map<std::string, std::string, std::less<>> extra) {
    AscendBackend b(chart_chip("Ascend910B3"), global);
    auto found = b.node_devices(npu_node("Ascend910B3", reg, std::move(extra)));
    EXPECT_EQ(found.state, device::NodeDevices::State::kOk);
    return found.devices.empty() ? std::string("?") : found.devices[0].mode;
  };
  EXPECT_EQ(mode(false, {}), "");
  EXPECT_EQ(mode(true, {}), "hami-core");
  EXPECT_EQ(mode(false, {{"hami-vnpu-core", "true"}}), "hami-core");
  EXPECT_EQ(mode(true, {{"hami-vnpu-core", "false"}}), "");
  EXPECT_EQ(mode(true, {{"hami-vnpu-core", "True"}}), "");
  // Whatever mode the plugin wrote is replaced.
  AscendBackend b(chart_chip("Ascend910B3"), false);
  auto found =
      b.node_devices(npu_node("Ascend910B3", R"([{"id":"a","mode":"mig","health":true}])"));
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0].mode, "");
}

TEST(Ascend, RegistrationBehaviour) {
  AscendBackend b(chart_chip("Ascend910B3"), false);
  EXPECT_EQ(b.vendor(), "Ascend910B3");
  EXPECT_EQ(b.health_check(), device::HealthCheck::kHandshake);
  EXPECT_EQ(b.handshake_annotation(), "hami.io/node-handshake-Ascend910B3");
  EXPECT_EQ(b.cleanup_annotation(), "hami.io/node-handshake-Ascend910B3");
  EXPECT_TRUE(b.locks_node());
  EXPECT_THAT(b.managed_resources(),
              ::testing::ElementsAre("huawei.com/Ascend910B3", "huawei.com/Ascend910B3-memory",
                                     "huawei.com/Ascend910B3-core"));
}

// --- Fit (direct calls, as HAMi's unit tests) -------------------------------------------------

TEST(Ascend, FitExamplesOfTheReference) {
  AscendBackend b(chart_chip("Ascend910A"), false);
  std::vector<device::DeviceUsage> two = {usage("dev-0", 0), usage("dev-1", 1)};
  AscendFit f = fit_direct(b, two, req(1, "Ascend910A", 64, 50));
  ASSERT_TRUE(f.result.outcome.fits) << f.reason();
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-1"));
  EXPECT_EQ(f.result.outcome.devices[0].usedmem, 64);
  EXPECT_EQ(f.result.outcome.devices[0].usedcores, 50);
  EXPECT_EQ(f.result.outcome.devices[0].type, "Ascend910A");
  // Cores above 100 are clamped.
  f = fit_direct(b, two, req(1, "Ascend910A", 64, 120));
  ASSERT_TRUE(f.result.outcome.fits);
  EXPECT_EQ(f.result.outcome.devices[0].usedcores, 100);

  std::vector<device::DeviceUsage> used = {usage("dev-0", 0)};
  used[0].used = 20;
  f = fit_direct(b, used, req(1, "Ascend910A", 64, 100));
  EXPECT_EQ(f.reason(), "1/1 ExclusiveDeviceAllocateConflict");
  used[0].used = 1;
  used[0].usedcores = 100;
  f = fit_direct(b, used, req(1, "Ascend910A", 64, 0));
  EXPECT_EQ(f.reason(), "1/1 CardComputeUnitsExhausted");
  // More than there are (only reachable in a direct call).
  f = fit_direct(b, two, req(3, "Ascend910A", 64, 0));
  EXPECT_FALSE(f.result.outcome.fits);
  EXPECT_EQ(f.reason(), "2/2 AllocatedCardsInsufficientRequest");
}

TEST(Ascend, FitChecksInHamisOrder) {
  AscendBackend b(chart_chip("Ascend910A"), false);
  std::vector<device::DeviceUsage> d = {usage("dev-0", 0)};
  d[0].health = false;
  d[0].used = 100;  // also exhausted: health comes first
  EXPECT_EQ(fit_direct(b, d, req(1, "Ascend910A", 1)).reason(), "1/1 CardNotHealth");
  d = {usage("dev-0", 0)};
  EXPECT_EQ(fit_direct(b, d, req(1, "Ascend910B3", 1)).reason(), "1/1 CardTypeMismatch");
  // The device type is not compared: only the request's.
  d[0].type = "anything";
  EXPECT_TRUE(fit_direct(b, d, req(1, "Ascend910A", 1)).result.outcome.fits);
  d = {usage("dev-0", 0), usage("dev-1", 1)};
  auto with = [](std::string key, std::string value) {
    return PodBuilder().app(container("c", {})).annotate(std::move(key), std::move(value)).build();
  };
  AscendFit f =
      fit_direct(b, d, req(1, "Ascend910A", 1), with("hami.io/use-Ascend910A-uuid", "dev-0"));
  ASSERT_TRUE(f.result.outcome.fits);
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-0"));
  f = fit_direct(b, d, req(1, "Ascend910A", 1),
                 with("hami.io/no-use-Ascend910A-uuid", "dev-0, dev-1"));
  EXPECT_EQ(f.reason(), "2/2 CardUuidMismatch");
  // A blank list is no constraint.
  f = fit_direct(b, d, req(1, "Ascend910A", 1), with("hami.io/use-Ascend910A-uuid", " "));
  EXPECT_TRUE(f.result.outcome.fits);
  d[0].used = 100;
  d[1].used = 1;
  f = fit_direct(b, d, req(1, "Ascend910A", 1), pod_with({}), "mutex");
  EXPECT_EQ(f.reason(), "1/2 CardTimeSlicingExhausted, 1/2 ExclusiveDeviceAllocateConflict");
  d = {usage("dev-0", 0)};
  d[0].usedmem = 100;
  f = fit_direct(b, d, req(1, "Ascend910A", 29));
  EXPECT_EQ(f.reason(), "1/1 CardInsufficientMemory");
  ASSERT_EQ(f.result.outcome.verdicts.size(), 1u);
  EXPECT_EQ(f.result.outcome.verdicts[0].detail, "needs 29 MiB, 28 of 128 MiB free");
  // No memory asked: 100 % of the device, which must be entirely free.
  f = fit_direct(b, d, req(1, "Ascend910A"));
  EXPECT_EQ(f.reason(), "1/1 CardInsufficientMemory");
}

TEST(Ascend, HardSplitCountsTheDevicesCoresSoftSplitCountsPercent) {
  AscendBackend b(chart_chip("Ascend910B3"), false);
  std::vector<device::DeviceUsage> d = {usage("dev-0", 0, "Ascend910B3", 65536, 20)};
  d[0].mode = "hami-core";
  EXPECT_EQ(fit_direct(b, d, req(1, "Ascend910B3", 1024, 50)).reason(), "1/1 CardInsufficientCore");
  const model::Pod soft = hami_core_pod({});
  AscendFit f = fit_direct(b, d, req(1, "Ascend910B3", 1024, 50), soft);
  ASSERT_TRUE(f.result.outcome.fits) << f.reason();
  // Soft split: 100 % of a card is exclusive, and a card whose 100 % is used takes no 0-core
  // task.
  d[0].used = 1;
  d[0].usedcores = 100;
  EXPECT_EQ(fit_direct(b, d, req(1, "Ascend910B3", 1024, 0), soft).reason(),
            "1/1 CardComputeUnitsExhausted");
  d[0].usedcores = 0;
  EXPECT_EQ(fit_direct(b, d, req(1, "Ascend910B3", 1024, 100), soft).reason(),
            "1/1 ExclusiveDeviceAllocateConflict");
}

TEST(Ascend, SoftSplitPodsNeedASoftSplitNode) {
  AscendBackend b(chart_chip("Ascend910B3"), false);
  std::vector<device::DeviceUsage> d = {usage("dev-0", 0, "Ascend910B3", 65536, 20)};
  AscendFit f = fit_direct(b, d, req(1, "Ascend910B3", 1024, 5), hami_core_pod({}));
  EXPECT_EQ(f.reason(), "1/1 ModeNotFit");
  ASSERT_EQ(f.result.outcome.verdicts.size(), 1u);
  EXPECT_EQ(f.result.outcome.verdicts[0].reason, "ModeNotFit");
  d[0].mode = "hami-core";
  EXPECT_TRUE(
      fit_direct(b, d, req(1, "Ascend910B3", 1024, 5), hami_core_pod({})).result.outcome.fits);
  // A hard-split pod may use a soft-split node.
  EXPECT_TRUE(fit_direct(b, d, req(1, "Ascend910B3", 1024)).result.outcome.fits);
}

TEST(Ascend, PercentOfMemoryWrapsInThirtyTwoBitsAsInGo) {
  AscendBackend b(chart_chip("Ascend910A"), false);
  // 2^30 MiB × 100 wraps to 0 in int32: the device is taken with 0 MiB recorded.
  std::vector<device::DeviceUsage> d = {usage("dev-0", 0, "Ascend910A", 1 << 30)};
  AscendFit f = fit_direct(b, d, req(1, "Ascend910A"));
  ASSERT_TRUE(f.result.outcome.fits);
  EXPECT_EQ(f.result.outcome.devices[0].usedmem, 0);
}

TEST(Ascend, NetworkIdGroupsMultiNpuRequests) {
  AscendBackend b(chart_chip("Ascend910B3"), false);
  const std::string n0 = R"({"NetworkID":0})";
  const std::string n1 = R"({"NetworkID":1})";
  auto dev = [](std::string id, uint64_t index, const std::string& info) {
    auto d = usage(std::move(id), index, "Ascend910B3", 65536, 20);
    d.custom_info = &info;
    return d;
  };
  std::vector<device::DeviceUsage> d = {dev("dev-0", 0, n0), dev("dev-1", 1, n1),
                                        dev("dev-2", 2, n1)};
  AscendFit f = fit_direct(b, d, req(2, "Ascend910B3", 1024));
  ASSERT_TRUE(f.result.outcome.fits) << f.reason();
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-2", "dev-1"));
  // The group that is larger wins even when it is less preferred.
  const std::string n2 = R"({"NetworkID":2.9})";  // int(2.9) = 2
  d = {dev("dev-0", 0, n2), dev("dev-1", 1, n2), dev("dev-2", 2, n1)};
  f = fit_direct(b, d, req(2, "Ascend910B3", 1024));
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-1", "dev-0"));
  // One NPU: the first collected.
  f = fit_direct(b, d, req(1, "Ascend910B3", 1024));
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-2"));
  // Exactly as many as asked: all of them.
  f = fit_direct(b, d, req(3, "Ascend910B3", 1024));
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-2", "dev-1", "dev-0"));
  // Fewer: the standard failure over the candidates.
  d[0].health = false;
  f = fit_direct(b, d, req(3, "Ascend910B3", 1024));
  EXPECT_EQ(f.reason(), "1/3 CardNotHealth, 2/3 AllocatedCardsInsufficientRequest");

  // Quirk: a non-numeric NetworkID drops the device, and the shorter list is a success.
  const std::string text = R"({"NetworkID":"x"})";
  d = {dev("dev-0", 0, text), dev("dev-1", 1, text), dev("dev-2", 2, n1)};
  f = fit_direct(b, d, req(2, "Ascend910B3", 1024));
  EXPECT_TRUE(f.result.outcome.fits);
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-2"));

  // Without a NetworkID on every candidate there is no grouping: the first passing ones.
  const std::string other = R"({"NetworkId":1})";  // keys are case-sensitive in a map
  d = {dev("dev-0", 0, n0), dev("dev-1", 1, other), dev("dev-2", 2, n0)};
  f = fit_direct(b, d, req(2, "Ascend910B3", 1024));
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-2", "dev-1"));
  // Non-910 chips never group.
  AscendBackend p(chart_chip("Ascend310P"), false);
  d = {dev("dev-0", 0, n1), dev("dev-1", 1, n0), dev("dev-2", 2, n1)};
  for (auto& x : d) x.vendor = x.type = "Ascend310P";
  f = fit_direct(p, d, req(2, "Ascend310P", 1024));
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-2", "dev-1"));
}

TEST(Ascend, NetworkIdLastRepeatedKeyWinsAndHugeValuesAreGoInts) {
  AscendBackend b(chart_chip("Ascend910B3"), false);
  const std::string a = R"({"NetworkID":"x","NetworkID":5})";
  const std::string c = R"({"Network\u0049D":5.5})";
  const std::string big = R"({"NetworkID":1e300})";
  const std::string big2 = R"({"NetworkID":-18446744073709551616})";
  auto dev = [](std::string id, uint64_t index, const std::string& info) {
    auto d = usage(std::move(id), index, "Ascend910B3", 65536, 20);
    d.custom_info = &info;
    return d;
  };
  std::vector<device::DeviceUsage> d = {dev("dev-0", 0, a), dev("dev-1", 1, big),
                                        dev("dev-2", 2, c), dev("dev-3", 3, big2)};
  AscendFit f = fit_direct(b, d, req(2, "Ascend910B3", 1024));
  ASSERT_TRUE(f.result.outcome.fits);
  // Groups: 5 = {dev-2, dev-0}, INT64_MIN = {dev-3, dev-1}; equal sizes, first seen wins.
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-3", "dev-1"));
  d.pop_back();
  f = fit_direct(b, d, req(2, "Ascend910B3", 1024));
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-2", "dev-0"));
}

TEST(Ascend, Ascend910CTakesWholeModules) {
  AscendBackend b(chart_chip("Ascend910C"), false);
  const std::string n0 = R"({"NetworkID":0})";
  auto at = [&](std::initializer_list<uint64_t> indexes) {
    std::vector<device::DeviceUsage> out;
    for (uint64_t i : indexes) {
      out.push_back(usage("dev-" + std::to_string(i), i, "Ascend910C", 65536, 20));
      out.back().custom_info = &n0;
    }
    return out;
  };
  auto d = at({0, 1, 2});
  AscendFit f = fit_direct(b, d, req(2, "Ascend910C", 1024));
  ASSERT_TRUE(f.result.outcome.fits) << f.reason();
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-1", "dev-0"));
  // Not enough whole modules: the denominator is the request.
  d = at({0, 1, 2, 4, 6});
  f = fit_direct(b, d, req(4, "Ascend910C", 1024));
  EXPECT_FALSE(f.result.outcome.fits);
  EXPECT_EQ(f.reason(), "2/4 AllocatedCardsInsufficientRequest");
  d = at({0, 2});
  f = fit_direct(b, d, req(2, "Ascend910C", 1024));
  EXPECT_EQ(f.reason(), "0/2 AllocatedCardsInsufficientRequest");
  // Other reasons share that denominator.
  d = at({0, 1, 2});
  d[1].health = false;
  f = fit_direct(b, d, req(2, "Ascend910C", 1024));
  EXPECT_EQ(f.reason(), "0/2 AllocatedCardsInsufficientRequest, 1/2 CardNotHealth");
  // Modules are taken whole until the request is covered: an odd request overshoots.
  d = at({0, 1, 2, 3});
  f = fit_direct(b, d, req(3, "Ascend910C", 1024));
  EXPECT_EQ(f.reason(), "4/3 AllocatedCardsInsufficientRequest");
  // Whole modules in the order of their most preferred NPU.
  d = at({0, 1, 2, 3, 4, 5});
  f = fit_direct(b, d, req(4, "Ascend910C", 1024));
  ASSERT_TRUE(f.result.outcome.fits);
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-5", "dev-4", "dev-3", "dev-2"));
  // Without NetworkIDs the pairing still applies.
  for (auto& x : d) x.custom_info = nullptr;
  f = fit_direct(b, d, req(2, "Ascend910C", 1024));
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-5", "dev-4"));
  // One NPU is an ordinary request.
  f = fit_direct(b, d, req(1, "Ascend910C", 1024));
  EXPECT_THAT(f.uuids(), ::testing::ElementsAre("dev-5"));
}

// --- Fit through the engine -------------------------------------------------------------------

TEST(Ascend, EngineGroupsByNetworkAndScoresTheNode) {
  const auto registry = chart_registry();
  const model::Node node =
      npu_node("Ascend910B3", array({npu("dev-0", 0, "Ascend910B3", R"({"NetworkID":0})"),
                                     npu("dev-1", 1, "Ascend910B3", R"({"NetworkID":1})"),
                                     npu("dev-2", 2, "Ascend910B3", R"({"NetworkID":1})")}));
  NodeFit fit = fit_on(pod_with({{"huawei.com/Ascend910B3", "2"}}), node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  const std::string value = "dev-2,Ascend910B3,65536,0:dev-1,Ascend910B3,65536,0:;";
  EXPECT_EQ(fit.annotations.at("hami.io/Ascend910B3-devices-to-allocate"), value);
  EXPECT_EQ(fit.annotations.at("hami.io/Ascend910B3-devices-allocated"), value);
  EXPECT_EQ(fit.annotations.at("huawei.com/Ascend910B3"),
            R"([{"UUID":"dev-2","memory":65536},{"UUID":"dev-1","memory":65536}])");
  // Without a scheduling time (simulation) there is no predicate-time.
  EXPECT_FALSE(fit.annotations.contains("predicate-time"));
  // Both NPUs share a network: 10 × 1 on an idle node.
  EXPECT_FLOAT_EQ(fit.node_score, 10);

  // The node's usage from a running pod (its allocated annotation).
  std::vector<model::Pod> running = {
      running_pod("r", "npu-node",
                  {{"hami.io/Ascend910B3-devices-allocated",
                    "dev-1,Ascend910B3,65536,0:dev-2,Ascend910B3,60000,0:;"}})};
  fit = fit_on(
      pod_with({{"huawei.com/Ascend910B3", "1"}, {"huawei.com/Ascend910B3-memory", "16384"}}), node,
      registry, running);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("Ascend910B3")[0][0].uuid, "dev-0");
  EXPECT_EQ(fit.annotations.at("huawei.com/Ascend910B3"),
            R"([{"UUID":"dev-0","temp":"vir05_1c_16g","memory":16384}])");
  fit = fit_on(
      pod_with({{"huawei.com/Ascend910B3", "2"}, {"huawei.com/Ascend910B3-memory", "16384"}}), node,
      registry, running);
  EXPECT_EQ(fit.reason, "1/3 AllocatedCardsInsufficientRequest, 2/3 CardInsufficientMemory");
  EXPECT_EQ(fit.fit_class, FitClass::kInsufficientCapacity);
  fit = fit_on(pod_with({{"huawei.com/Ascend910B3", "4"}}), node, registry);
  EXPECT_EQ(fit.reason, "NodeInsufficientDevice");
}

TEST(Ascend, EngineSoftSplitNeedsTheNodeAnnotation) {
  const auto registry = chart_registry();
  const std::string reg = array({npu("npu-0", 0, "Ascend910B4", R"({"NetworkID":0})", 4, 32768)});
  const model::Pod pod = hami_core_pod({{"huawei.com/Ascend910B4", "1"},
                                        {"huawei.com/Ascend910B4-memory", "8000"},
                                        {"huawei.com/Ascend910B4-core", "5"}});
  NodeFit fit = fit_on(pod, npu_node("Ascend910B4", reg), registry);
  EXPECT_EQ(fit.reason, "1/1 ModeNotFit");
  EXPECT_EQ(fit.fit_class, FitClass::kConstraintMismatch);
  fit = fit_on(pod, npu_node("Ascend910B4", reg, {{"hami-vnpu-core", "true"}}), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at("hami.io/Ascend910B4-devices-allocated"),
            "npu-0,Ascend910B4,8000,5:;");
}

TEST(Ascend, EngineGlobalSoftSplitDefaultComesFromTheSection) {
  const auto registry = registry_from_yaml(R"(vnpus:
  hamiVnpuCore: true
  configs:
  - commonWord: Ascend910B4
    resourceName: huawei.com/Ascend910B4
    resourceMemoryName: huawei.com/Ascend910B4-memory
    resourceCoreName: huawei.com/Ascend910B4-core
    memoryAllocatable: 32768
    memoryCapacity: 32768
)");
  const std::string reg = array({npu("npu-0", 0, "Ascend910B4", "", 4, 32768)});
  const model::Pod pod =
      hami_core_pod({{"huawei.com/Ascend910B4", "1"}, {"huawei.com/Ascend910B4-memory", "8000"}});
  EXPECT_TRUE(fit_on(pod, npu_node("Ascend910B4", reg), registry).fits);
  EXPECT_EQ(
      fit_on(pod, npu_node("Ascend910B4", reg, {{"hami-vnpu-core", "false"}}), registry).reason,
      "1/1 ModeNotFit");
}

TEST(Ascend, Engine910CPairsModules) {
  const auto registry = chart_registry();
  const std::string n0 = R"({"NetworkID":0})";
  const model::Node node = npu_node(
      "Ascend910C", array({npu("dev-0", 0, "Ascend910C", n0), npu("dev-1", 1, "Ascend910C", n0),
                           npu("dev-2", 2, "Ascend910C", n0)}));
  NodeFit fit = fit_on(pod_with({{"huawei.com/Ascend910C", "2"}}), node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at("hami.io/Ascend910C-devices-allocated"),
            "dev-1,Ascend910C,65536,0:dev-0,Ascend910C,65536,0:;");
  // The module-pairing failure's denominator (the request) needs FitOutcome support; the
  // engine prints the candidate count meanwhile.
  const model::Node half = npu_node(
      "Ascend910C", array({npu("dev-0", 0, "Ascend910C", n0), npu("dev-2", 2, "Ascend910C", n0)}));
  fit = fit_on(pod_with({{"huawei.com/Ascend910C", "2"}}), half, registry);
  EXPECT_FALSE(fit.fits);
  EXPECT_THAT(fit.reason, HasSubstr("0/2 AllocatedCardsInsufficientRequest"));
}

TEST(Ascend, EngineSubstringTypeMatchingMixesChips) {
  // Quirk: a request for Ascend910B4 also receives the devices typed Ascend910B4-1.
  const auto registry = chart_registry();
  model::Node node =
      npu_node("Ascend910B4", array({npu("b4", 0, "Ascend910B4", "", 4, 32768)}),
               {{"hami.io/node-register-Ascend910B4-1", array({npu("b4-1", 0, "Ascend910B4-1")})}});
  NodeFit fit = fit_on(pod_with({{"huawei.com/Ascend910B4", "2"}}), node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  ASSERT_EQ(fit.devices.at("Ascend910B4")[0].size(), 2u);
  EXPECT_THAT(fit.annotations.at("hami.io/Ascend910B4-devices-allocated"), HasSubstr("b4-1,"));
  // The other chip's backend is given nothing, although its NPU went to this request: it
  // writes only HAMi's all-empty padding (issue #22; this test used to assert no key at all,
  // the former deviation 23).
  EXPECT_EQ(fit.annotations.at("hami.io/Ascend910B4-1-devices-allocated"), ";");
  EXPECT_EQ(fit.annotations.at("huawei.com/Ascend910B4-1"), "null");
  EXPECT_FALSE(fit.devices.contains("Ascend910B4-1"));

  // NetworkID grouping reads the requested chip's own registration: the other chip's NPU has
  // no group there and is dropped, although it would make the largest group.
  node = npu_node("Ascend910B4",
                  array({npu("b4-0", 0, "Ascend910B4", R"({"NetworkID":0})", 4, 32768),
                         npu("b4-1", 1, "Ascend910B4", R"({"NetworkID":1})", 4, 32768)}),
                  {{"hami.io/node-register-Ascend910B4-1",
                    array({npu("x", 0, "Ascend910B4-1", R"({"NetworkID":0})")})}});
  fit = fit_on(pod_with({{"huawei.com/Ascend910B4", "2"}}), node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  std::vector<std::string> chosen;
  for (const auto& d : fit.devices.at("Ascend910B4")[0]) chosen.push_back(d.uuid);
  EXPECT_THAT(chosen, ::testing::UnorderedElementsAre("b4-0", "b4-1"));
}

// --- Annotations and score --------------------------------------------------------------------

TEST(Ascend, AllocationAnnotationsAreHamis) {
  AscendBackend b(chart_chip("Ascend910A"), false);
  device::PodSingleDevice list = {{cdev(0, "device-0", "Ascend", 8738, 1)}};
  std::map<std::string, std::string> a;
  // predicate-time is the scheduling time in Unix seconds.
  b.annotate_allocation(list, {.unix_nanos = 1764748800'123456789}, a);
  EXPECT_EQ(a.at("hami.io/Ascend910A-devices-to-allocate"), "device-0,Ascend,8738,1:;");
  EXPECT_EQ(a.at("hami.io/Ascend910A-devices-allocated"), "device-0,Ascend,8738,1:;");
  EXPECT_EQ(a.at("predicate-time"), "1764748800");
  EXPECT_EQ(a.at("huawei.com/Ascend910A"),
            R"([{"UUID":"device-0","temp":"vir08","memory":8738,"core":1}])");
  EXPECT_EQ(a.size(), 4u);

  // Zero cores are omitted; a whole card has no template.
  list = {
      {},
      {cdev(0, "device-0", "Ascend910A", 8738, 0), cdev(1, "device-1", "Ascend910A", 32768, 0)}};
  a.clear();
  b.allocation_annotations(list, a);
  EXPECT_EQ(a.at("hami.io/Ascend910A-devices-allocated"),
            ";device-0,Ascend910A,8738,0:device-1,Ascend910A,32768,0:;");
  EXPECT_EQ(
      a.at("huawei.com/Ascend910A"),
      R"([{"UUID":"device-0","temp":"vir08","memory":8738},{"UUID":"device-1","memory":32768}])");

  // Soft split: no template.
  const model::Pod soft = hami_core_pod({});
  list = {{cdev(0, "ascend-uuid-1", "Ascend910A", 8192, 5)}};
  a.clear();
  b.annotate_allocation(list, {.pod = &soft}, a);
  EXPECT_EQ(a.at("huawei.com/Ascend910A"), R"([{"UUID":"ascend-uuid-1","memory":8192,"core":5}])");

  // A list without devices marshals as null; no list at all writes nothing.
  a.clear();
  b.allocation_annotations({{}, {}}, a);
  EXPECT_EQ(a.at("huawei.com/Ascend910A"), "null");
  EXPECT_EQ(a.at("hami.io/Ascend910A-devices-allocated"), ";;");
  a.clear();
  b.allocation_annotations({}, a);
  EXPECT_TRUE(a.empty());

  // UUIDs are Go-escaped.
  // (0 MiB still rounds to the smallest template.)
  list = {{cdev(0, "a<\"b", "Ascend910A", 0, 0)}};
  a.clear();
  b.allocation_annotations(list, a);
  EXPECT_EQ(a.at("huawei.com/Ascend910A"), R"([{"UUID":"a\u003c\"b","temp":"vir02"}])");
}

TEST(Ascend, ScoreNodeRewardsNpusSharingANetwork) {
  AscendBackend b(chart_chip("Ascend910B3"), false);
  const std::string n0 = R"({"NetworkID":0})";
  const std::string n1 = R"({"NetworkID":1})";
  const std::string text = R"({"NetworkID":"x"})";
  const std::string none = R"({"other":1})";
  std::vector<device::DeviceUsage> node = {usage("a", 0), usage("b", 1), usage("c", 2),
                                           usage("d", 3), usage("e", 4), usage("f", 5)};
  node[0].custom_info = &n0;
  node[1].custom_info = &n1;
  node[2].custom_info = &n1;
  node[3].custom_info = &text;
  node[4].custom_info = &none;
  auto dev = [](std::string id) { return cdev(0, std::move(id), "Ascend910B3"); };
  // Two containers: {a, b} half on one network, {c} whole.
  EXPECT_FLOAT_EQ(b.score_node(node, {{dev("a"), dev("b")}, {}, {dev("c")}}, "binpack"), 15);
  // A non-numeric NetworkID is not counted; a container with none counted adds nothing.
  EXPECT_FLOAT_EQ(b.score_node(node, {{dev("b"), dev("c"), dev("d")}}, "binpack"), 10);
  EXPECT_FLOAT_EQ(b.score_node(node, {{dev("d")}, {dev("a")}}, "spread"), 10);
  // A device without custominfo or without the key zeroes the node.
  EXPECT_FLOAT_EQ(b.score_node(node, {{dev("a")}, {dev("e")}}, "binpack"), 0);
  EXPECT_FLOAT_EQ(b.score_node(node, {{dev("a")}, {dev("f")}}, "binpack"), 0);
  EXPECT_FLOAT_EQ(b.score_node(node, {{dev("a")}, {dev("zz")}}, "binpack"), 0);
  // Only 910 chips score.
  AscendBackend p(chart_chip("Ascend310P"), false);
  EXPECT_FLOAT_EQ(p.score_node(node, {{dev("a"), dev("b")}}, "binpack"), 0);
}

// --- Admission --------------------------------------------------------------------------------

AdmissionInput admit(std::optional<std::string> count, std::optional<std::string> memory = {},
                     std::optional<std::string> core = {}, bool hami_core = false) {
  AdmissionInput in;
  if (count) in.count_limit = qty(*count);
  if (memory) in.memory_limit = qty(*memory);
  if (core) in.core = qty(*core);
  in.hami_core = hami_core;
  return in;
}

TEST(Ascend, AdmissionRoundsMemoryAndRejectsWhatHamiRejects) {
  const VnpuConfig a = chart_chip("Ascend910A");
  auto r = device::ascend::admit_container(a, admit("2", "8738"));
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.error, "vNPU not supported for multiple devices");
  r = device::ascend::admit_container(a, admit("2", "40000"));
  EXPECT_FALSE(r.found);
  EXPECT_EQ(r.error, "huawei.com/Ascend910A-memory 40000 is invalid");
  r = device::ascend::admit_container(a, admit("1", "20000"));
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.memory, 32768);
  r = device::ascend::admit_container(a, admit("1", "3000"));
  EXPECT_EQ(r.memory, 4369);
  r = device::ascend::admit_container(a, admit("1"));
  EXPECT_EQ(r.memory, 32768);
  EXPECT_FALSE(r.count.has_value());
  r = device::ascend::admit_container(a, admit("2"));
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.memory, 32768);

  // Cores belong to soft split.
  r = device::ascend::admit_container(a, admit("1", "4369", "10"));
  EXPECT_EQ(r.error, "huawei.com/Ascend910A-core is only supported in hami-core (soft split) mode");
  r = device::ascend::admit_container(a, admit("1", "4369", "0"));
  EXPECT_EQ(r.error, "");
  r = device::ascend::admit_container(a, admit("1", "15360", "20", true));
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.memory, 15360);
  // Soft split takes any memory and several NPUs.
  r = device::ascend::admit_container(a, admit("2", "1000", {}, true));
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.memory, 1000);

  // Not an Ascend container: only the env, when configured.
  r = device::ascend::admit_container(a, admit({}));
  EXPECT_FALSE(r.found);
  EXPECT_FALSE(r.clear_visible_devices);
  VnpuConfig env = a;
  env.overwrite_env = true;
  env.runtime_class_name = "ascend";
  EXPECT_TRUE(device::ascend::admit_container(env, admit({})).clear_visible_devices);
  r = device::ascend::admit_container(env, admit("1"));
  EXPECT_EQ(r.runtime_class_name, "ascend");
  AdmissionInput has_class = admit("1");
  has_class.pod_has_runtime_class = true;
  EXPECT_EQ(device::ascend::admit_container(env, has_class).runtime_class_name, "");
}

TEST(Ascend, Admission910CSuperPodRoundsOneToAModule) {
  const VnpuConfig c = chart_chip("Ascend910C");
  auto r = device::ascend::admit_container(c, admit("1"));
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.count, 2);
  r = device::ascend::admit_container(c, admit("3"));
  EXPECT_EQ(r.error, "Ascend910C device request must be 1 or 2*n, got 3");
  r = device::ascend::admit_container(c, admit("4"));
  EXPECT_EQ(r.error, "");
  EXPECT_FALSE(r.count.has_value());
  // Quirk: the template check reads the count as written, so "1" keeps a template.
  r = device::ascend::admit_container(c, admit("1", "16384"));
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.count, 2);
  EXPECT_EQ(r.memory, 16384);
  // Without superPod the count is left alone.
  VnpuConfig plain = c;
  plain.super_pod = false;
  r = device::ascend::admit_container(plain, admit("1", "16384"));
  EXPECT_FALSE(r.count.has_value());
  EXPECT_EQ(r.memory, 16384);
  EXPECT_EQ(device::ascend::admit_container(plain, admit("3")).error, "");
}

}  // namespace ascend_test
}  // namespace hamisim::fit::testing
