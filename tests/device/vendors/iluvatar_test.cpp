// Iluvatar (reference: hami-other-vendors.md B.8), from the reference's examples: one backend
// per `iluvatars:` entry, requests, the colon registration, the standard Fit, annotations,
// usage of running pods, the admission mutation, the config list and the flag gate.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/allocation.h"
#include "device/iluvatar/iluvatar_backend.h"
#include "fit/quota.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace iluvatar_test {

using device::ContainerDeviceRequest;
using device::iluvatar::IluvatarBackend;
using device::iluvatar::IluvatarConfig;

constexpr std::string_view kCount = "iluvatar.ai/MR-V100-vgpu";
constexpr std::string_view kMem = "iluvatar.ai/MR-V100.vMem";
constexpr std::string_view kCores = "iluvatar.ai/MR-V100.vCore";
constexpr const char* kRegister = "hami.io/node-MR-V100-register";

IluvatarBackend mr_v100() {
  return IluvatarBackend(device::iluvatar::chart_configs()[0]);
}

model::Node ilu_node(std::string reg =
                         "ilu-0,10,8192,100,MR-V100,0,true,0,hami-core:"
                         "ilu-1,10,8192,100,MR-V100,0,true,1,hami-core:") {
  return vendor_node("ilu-node", {{kRegister, std::move(reg)}});
}

device::DeviceUsage gpu(std::string id, int32_t totalmem, int64_t used = 0, int64_t usedcores = 0) {
  device::DeviceUsage d;
  d.id = std::move(id);
  d.count = 10;
  d.totalmem = totalmem;
  d.totalcore = 100;
  d.used = used;
  d.usedcores = usedcores;
  d.type = "MR-V100";
  d.vendor = "MR-V100";
  return d;
}

// HAMi's Fit called directly, as its unit tests do.
std::string fit_reason(std::vector<device::DeviceUsage> devices, ContainerDeviceRequest request,
                       const model::Pod& pod = PodBuilder().build(), std::string policy = "",
                       device::FitOutcome* outcome = nullptr) {
  IluvatarBackend b = mr_v100();
  auto prepared = b.prepare(pod);
  std::vector<device::DeviceUsage*> ptrs;
  for (auto& d : devices) ptrs.push_back(&d);
  device::FitContext ctx;
  ctx.pod = &pod;
  ctx.prepared = prepared.get();
  ctx.gpu_policy = policy;
  device::FitOutcome out = b.fit(ptrs, request, ctx);
  std::string reason = out.fits ? "" : device::format_reasons(out.reasons, ptrs.size());
  if (outcome) *outcome = std::move(out);
  return reason;
}

ContainerDeviceRequest req(int32_t nums, int32_t memreq, int32_t cores,
                           std::string type = "MR-V100") {
  return ContainerDeviceRequest{nums, std::move(type), memreq, memreq == 0 ? 100 : 0, cores};
}

TEST(Iluvatar, ChartEntriesAreTheFourChips) {
  const auto configs = device::iluvatar::chart_configs();
  ASSERT_EQ(configs.size(), 4u);
  const char* words[] = {"MR-V100", "MR-V50", "BI-V150", "BI-V100"};
  for (size_t i = 0; i < 4; ++i) {
    const std::string w = words[i];
    EXPECT_EQ(configs[i].common_word, w);
    EXPECT_EQ(configs[i].chip_name, w);
    EXPECT_EQ(configs[i].resource_count_name, "iluvatar.ai/" + w + "-vgpu");
    EXPECT_EQ(configs[i].resource_memory_name, "iluvatar.ai/" + w + ".vMem");
    EXPECT_EQ(configs[i].resource_core_name, "iluvatar.ai/" + w + ".vCore");
  }
}

TEST(Iluvatar, RequestsFollowTheReference) {
  IluvatarBackend b = mr_v100();
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kMem, "2"}, {kCores, "50"}})),
            (ContainerDeviceRequest{1, "MR-V100", 512, 0, 50}));
  // Cores default to 0, not to the whole device.
  EXPECT_EQ(b.request_for(container("c", {{kCount, "2"}})),
            (ContainerDeviceRequest{2, "MR-V100", 0, 100, 0}));
  // Limits, else requests, per resource.
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}}, {{kMem, "4"}, {kCores, "20"}})),
            (ContainerDeviceRequest{1, "MR-V100", 1024, 0, 20}));
  EXPECT_EQ(b.request_for(container("c", {}, {{kCount, "1"}})).nums, 1);
  for (std::string_view bad : {"16Gi", "16.0Gi", "1.5", "-1", "8388608"}) {
    EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kMem, bad}})).nums, 0) << bad;
  }
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kMem, "8388607"}})).memreq, 2147483392);
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1.5"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{kMem, "2"}})).nums, 0);
  // HAMi's int32 conversions, without range checks.
  EXPECT_EQ(b.request_for(container("c", {{kCount, "4294967298"}})).nums, 2);
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kCores, "1.5"}})).coresreq, 0);
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kCores, "4294967306"}})).coresreq, 10);
  // Another chip's resources are not this backend's.
  EXPECT_EQ(b.request_for(container("c", {{"iluvatar.ai/BI-V150-vgpu", "1"}})).nums, 0);
}

TEST(Iluvatar, RegistrationIsTheLegacyColonFormat) {
  IluvatarBackend b = mr_v100();
  EXPECT_EQ(b.register_annotation(), "hami.io/node-MR-V100-register");
  auto found = b.node_devices(
      ilu_node("GPU-bad51c5a-ed4c-591d-91bf-c04a12e19eae,10,8192,100,MR-V100,0,true:"));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  const auto& d = found.devices[0];
  EXPECT_EQ(d.id, "GPU-bad51c5a-ed4c-591d-91bf-c04a12e19eae");
  EXPECT_EQ(d.count, 10);
  EXPECT_EQ(d.devmem, 8192);
  EXPECT_EQ(d.devcore, 100);
  EXPECT_EQ(d.type, "MR-V100");
  EXPECT_EQ(d.numa, 0);
  EXPECT_TRUE(d.health);
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.device_vendor, "MR-V100");

  EXPECT_EQ(b.node_devices(ilu_node("[]")).state, device::NodeDevices::State::kMalformed);
  EXPECT_EQ(b.node_devices(ilu_node("a,1,1024,100,MR-V100:")).state,
            device::NodeDevices::State::kMalformed);
  found = b.node_devices(ilu_node(":"));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "no gpu found on node");
  found = b.node_devices(vendor_node("n", {}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "annos not found hami.io/node-MR-V100-register");
  // Another chip's registration is not read.
  EXPECT_EQ(b.node_devices(vendor_node("n", {{"hami.io/node-BI-V150-register",
                                              "x,10,8192,100,BI-V150,0,true:"}}))
                .state,
            device::NodeDevices::State::kAbsent);
}

TEST(Iluvatar, FitFollowsTheReferenceExamples) {
  // Memory is checked before cores.
  EXPECT_EQ(fit_reason({gpu("dev-0", 128, 0, 100)}, req(1, 512, 50)), "1/1 CardInsufficientMemory");
  EXPECT_EQ(fit_reason({gpu("dev-0", 1024, 1)}, req(1, 64, 10), PodBuilder().build(), "mutex"),
            "1/1 ExclusiveDeviceAllocateConflict");
  EXPECT_EQ(fit_reason({gpu("dev-0", 1024)}, req(1, 64, 10, "OtherType")), "1/1 CardTypeMismatch");
  EXPECT_EQ(fit_reason({gpu("dev-0", 1024, 0, 60)}, req(1, 64, 50)), "1/1 CardInsufficientCore");
  EXPECT_EQ(fit_reason({gpu("dev-0", 1024, 10)}, req(1, 64, 10)), "1/1 CardTimeSlicingExhausted");
  EXPECT_EQ(fit_reason({gpu("dev-0", 1024, 1)}, req(1, 64, 100)),
            "1/1 ExclusiveDeviceAllocateConflict");
  // The default 0 cores cannot go on a device whose cores are all taken...
  EXPECT_EQ(fit_reason({gpu("dev-0", 1024, 1, 100)}, req(1, 64, 0)),
            "1/1 CardComputeUnitsExhausted");
  // ...but shares one that still has some.
  device::FitOutcome out;
  EXPECT_EQ(fit_reason({gpu("dev-0", 1024, 1, 90)}, req(1, 64, 0), PodBuilder().build(), "", &out),
            "");
  ASSERT_EQ(out.devices.size(), 1u);
  EXPECT_EQ(out.devices[0].usedcores, 0);
  EXPECT_EQ(out.devices[0].type, "MR-V100");
  // Clamped at 100.
  EXPECT_EQ(fit_reason({gpu("dev-0", 1024)}, req(1, 64, 150), PodBuilder().build(), "", &out), "");
  EXPECT_EQ(out.devices[0].usedcores, 100);
  EXPECT_EQ(fit_reason({gpu("dev-0", 1024), gpu("dev-1", 1024)}, req(3, 64, 10)),
            "2/2 AllocatedCardsInsufficientRequest");
  device::DeviceUsage sick = gpu("dev-0", 1024);
  sick.health = false;
  EXPECT_EQ(fit_reason({sick}, req(1, 64, 10)), "1/1 CardNotHealth");
}

TEST(Iluvatar, UuidAnnotationsCarryTheCommonWord) {
  auto pod = [](std::string key, std::string value) {
    return PodBuilder().annotate(std::move(key), std::move(value)).build();
  };
  EXPECT_EQ(fit_reason({gpu("dev-0", 1024)}, req(1, 64, 10), pod("hami.io/use-MR-V100-uuid", "x")),
            "1/1 CardUuidMismatch");
  EXPECT_EQ(
      fit_reason({gpu("dev-0", 1024)}, req(1, 64, 10), pod("hami.io/no-use-MR-V100-uuid", "dev-0")),
      "1/1 CardUuidMismatch");
  device::FitOutcome out;
  EXPECT_EQ(fit_reason({gpu("dev-0", 1024), gpu("dev-1", 1024)}, req(1, 64, 10),
                       pod("hami.io/use-MR-V100-uuid", "dev-0"), "", &out),
            "");
  EXPECT_EQ(out.devices[0].uuid, "dev-0");
  // Another vendor's keys do not apply.
  EXPECT_EQ(fit_reason({gpu("dev-0", 1024)}, req(1, 64, 10), pod("hami.io/use-BI-V150-uuid", "x")),
            "");
}

TEST(Iluvatar, AnnotationsUseTheCommonWord) {
  IluvatarBackend b = mr_v100();
  device::ContainerDevice d;
  d.uuid = "k8s-gpu-iluvatar-0";
  d.type = "MR-V100";
  std::map<std::string, std::string> a;
  b.allocation_annotations({{d}}, a);
  EXPECT_EQ(a, (std::map<std::string, std::string>{
                   {"hami.io/MR-V100-devices-to-allocate", "k8s-gpu-iluvatar-0,MR-V100,0,0:;"},
                   {"hami.io/MR-V100-devices-allocated", "k8s-gpu-iluvatar-0,MR-V100,0,0:;"}}));
  EXPECT_EQ(b.to_allocate_annotation(), "hami.io/MR-V100-devices-to-allocate");
  EXPECT_EQ(b.allocated_annotation(), "hami.io/MR-V100-devices-allocated");
}

TEST(Iluvatar, WholePodFitAndRunningPods) {
  const auto registry = chart_registry();
  model::Pod pod = PodBuilder()
                       .app(plain_container("sidecar"))
                       .app(container("main", {{kCount, "1"}, {kMem, "8"}, {kCores, "30"}}))
                       .build();
  NodeFit fit = fit_on(pod, ilu_node(), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  // Devices typed with the commonWord: the list is positional.
  EXPECT_EQ(fit.annotations.at("hami.io/MR-V100-devices-to-allocate"), ";ilu-1,MR-V100,2048,30:;");
  EXPECT_EQ(fit.annotations.at("hami.io/MR-V100-devices-allocated"), ";ilu-1,MR-V100,2048,30:;");
  // Without memory: all of each device's memory, 0 cores.
  fit = fit_on(pod_with({{kCount, "1"}}), ilu_node(), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at("hami.io/MR-V100-devices-allocated"), "ilu-1,MR-V100,8192,0:;");

  std::vector<model::Pod> running = {
      running_pod("a", "ilu-node",
                  {{"hami.io/MR-V100-devices-allocated", "ilu-0,MR-V100,7000,10:;"}}),
      running_pod("b", "ilu-node",
                  {{"hami.io/MR-V100-devices-allocated", "ilu-1,MR-V100,7000,10:;"}}),
  };
  fit = fit_on(pod_with({{kCount, "1"}, {kMem, "8"}}), ilu_node(), registry, running);
  EXPECT_EQ(fit.reason, "2/2 CardInsufficientMemory");
  EXPECT_EQ(fit_on(pod_with({{kCount, "3"}}), ilu_node(), registry).reason,
            "NodeInsufficientDevice");
}

TEST(Iluvatar, ChipsOnOneNodeStayApart) {
  const auto registry = chart_registry();
  const model::Node node = vendor_node(
      "mixed", {{kRegister, "mr-0,10,8192,100,MR-V100,0,true:"},
                {"hami.io/node-BI-V150-register", "bi-0,10,32768,100,BI-V150,0,true:"}});
  NodeFit fit =
      fit_on(pod_with({{"iluvatar.ai/BI-V150-vgpu", "1"}, {"iluvatar.ai/BI-V150.vMem", "64"}}),
             node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at("hami.io/BI-V150-devices-allocated"), "bi-0,BI-V150,16384,0:;");
  // The MR-V100 on the node is not the pod's: as in HAMi, it writes only its all-empty list
  // (issue #22; this test used to assert no MR-V100 key at all, the former deviation 23).
  EXPECT_EQ(fit.annotations.at("hami.io/MR-V100-devices-allocated"), ";");
  EXPECT_EQ(fit.annotations.at("hami.io/MR-V100-devices-to-allocate"), ";");
  // Too much for the BI-V150; the MR-V100 is not a candidate.
  fit = fit_on(pod_with({{"iluvatar.ai/BI-V150-vgpu", "1"}, {"iluvatar.ai/BI-V150.vMem", "200"}}),
               node, registry);
  EXPECT_EQ(fit.reason, "1/1 CardInsufficientMemory");
}

TEST(Iluvatar, QuotaIsNotCheckedInsideFit) {
  const auto registry = chart_registry();
  DeviceQuota quota(registry);
  model::ResourceQuota q;
  q.metadata.namespace_ = "default";
  q.spec.hard.emplace("limits." + std::string(kMem), qty("1"));
  quota.add_quota(q);
  const model::Pod pod = pod_with({{kCount, "1"}, {kMem, "8"}});
  const model::Node node = ilu_node();
  DescriptionResult inv = read_registered_description(node, registry);
  auto prepared = prepare_pod(pod, registry, FitPolicy{});
  ASSERT_TRUE(prepared);
  EXPECT_TRUE(
      fit_pod(*prepared, fresh_usage(inv.description), inv.description, registry, &quota).fits);
  // The webhook's check does see it: 8 × 256 MiB > 1 × 256 MiB.
  EXPECT_TRUE(quota.admission_check(pod).has_value());
}

TEST(Iluvatar, AdmissionRewritesCoresAndNamesTheContainer) {
  IluvatarBackend b = mr_v100();
  // The reference example: no env because the container has no name.
  auto a = b.admission(container("", {{kCount, "2"}, {kCores, "1"}}));
  EXPECT_TRUE(a.found);
  EXPECT_EQ(a.cores_limit, 200);
  EXPECT_FALSE(a.container_name_env.has_value());
  a = b.admission(container("c1", {{kCount, "1"}}));
  EXPECT_TRUE(a.found);
  EXPECT_FALSE(a.cores_limit.has_value());
  EXPECT_EQ(a.container_name_env, "c1");
  // Value() rounds up.
  EXPECT_EQ(b.admission(container("c1", {{kCount, "1.5"}})).cores_limit, 200);
  // Only limits count.
  a = b.admission(container("c1", {}, {{kCount, "2"}}));
  EXPECT_FALSE(a.found);
  EXPECT_FALSE(a.cores_limit.has_value());
  EXPECT_FALSE(a.container_name_env.has_value());
  // The largest count a quantity holds still fits in int64 once multiplied.
  EXPECT_EQ(b.admission(container("c1", {{kCount, "9000000000000000"}})).cores_limit,
            900000000000000000);
  EXPECT_EQ(device::iluvatar::kContainerNameEnv, "SOL_CONTINER_NAME");
}

TEST(Iluvatar, OnlyWithTheFlag) {
  device::DeviceConfig config;  // chart defaults, --enable-iluvatar off
  const auto off = device::build_registry(config);
  EXPECT_EQ(off.find("MR-V100"), nullptr);
  config.enable_iluvatar = true;
  const auto on = device::build_registry(config);
  for (const char* w : {"MR-V100", "MR-V50", "BI-V150", "BI-V100"}) {
    EXPECT_NE(on.find(w), nullptr) << w;
  }
}

TEST(Iluvatar, DeviceConfigListMakesOneBackendPerEntry) {
  const auto registry = registry_from_yaml(R"(iluvatars:
  - chipName: MR-V100
    commonWord: MR-V100
    resourceCountName: example.com/mr
    resourceMemoryName: example.com/mr-mem
    resourceCoreName: example.com/mr-core
  - commonWord: Custom
    resourceCountName: example.com/custom
  - chipName: no-common-word
    resourceCountName: example.com/none
)");
  const auto* b = registry.find("MR-V100");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->resource_names().count, "example.com/mr");
  EXPECT_EQ(b->resource_names().memory_factor, 256);
  EXPECT_EQ(dynamic_cast<const IluvatarBackend&>(*b).config().chip_name, "MR-V100");
  EXPECT_EQ(
      b->request_for(container("c", {{"example.com/mr", "1"}, {"example.com/mr-mem", "2"}})).memreq,
      512);
  const auto* custom = registry.find("Custom");
  ASSERT_NE(custom, nullptr);
  EXPECT_EQ(custom->handshake_annotation(), "hami.io/node-handshake-Custom");
  EXPECT_EQ(custom->request_for(container("c", {{"example.com/custom", "1"}})).type, "Custom");
  // Only the listed chips; the entry without a commonWord makes no backend.
  EXPECT_EQ(registry.find("BI-V150"), nullptr);
  EXPECT_EQ(registry.find(""), nullptr);
  // A file without the list configures none.
  const auto other = registry_from_yaml("nvidia: {}\n");
  EXPECT_EQ(other.find("MR-V100"), nullptr);

  auto bad = device::parse_device_config("iluvatars:\n  - commonWord: [a]\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              ::testing::HasSubstr("iluvatars[0].commonWord: expected a string at line 2"));
  bad = device::parse_device_config("iluvatars:\n  commonWord: MR-V100\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("iluvatars: expected a list at line 2"));
}

TEST(Iluvatar, RegistrationBehaviour) {
  IluvatarBackend b = mr_v100();
  EXPECT_EQ(b.vendor(), "MR-V100");
  EXPECT_EQ(b.health_check(), device::HealthCheck::kHandshake);
  EXPECT_EQ(b.handshake_annotation(), "hami.io/node-handshake-MR-V100");
  // NodeCleanUp is a no-op for Iluvatar.
  EXPECT_EQ(b.cleanup_annotation(), "");
  EXPECT_TRUE(b.locks_node());
  EXPECT_EQ(b.managed_resources(),
            (std::vector<std::string>{"iluvatar.ai/MR-V100-vgpu", "iluvatar.ai/MR-V100.vMem",
                                      "iluvatar.ai/MR-V100.vCore"}));
  EXPECT_EQ(b.score_node({}, {}, "binpack"), 0);
}

}  // namespace iluvatar_test
}  // namespace hamisim::fit::testing
