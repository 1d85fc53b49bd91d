// Moore Threads (reference: hami-other-vendors.md B.11), from the reference's examples:
// capacity discovery with 16 core groups per GPU, requests whose totals are split over the
// GPUs, the standard Fit with its two-fold type check and the "one GPU per pod" custom rule,
// the mthreads.ai UUID filters, annotations, usage and the webhook's decisions.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/mthreads/mthreads_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace mthreads_test {

using device::mthreads::MthreadsBackend;

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

constexpr const char* kCount = "mthreads.com/vgpu";
constexpr const char* kMemory = "mthreads.com/sgpu-memory";
constexpr const char* kCores = "mthreads.com/sgpu-core";
constexpr const char* kAllocated = "hami.io/mthreads-vgpu-devices-allocated";
constexpr const char* kGpuIndex = "mthreads.com/gpu-index";

// `gpus` GPUs of 48 GiB (96 units of 512 MiB each).
model::Node mthreads_node(int gpus, std::string name = "mt") {
  const std::string cores = std::to_string(16 * gpus);
  const std::string memory = std::to_string(96 * gpus);
  return vendor_node(std::move(name), {}, {{kCores, cores}, {kMemory, memory}});
}

model::Pod policy_pod(PodBuilder b, std::string policy) {
  return b.annotate("hami.io/gpu-scheduler-policy", std::move(policy)).build();
}

TEST(Mthreads, RequestsSplitTotalsOverTheGpus) {
  MthreadsBackend b;
  auto r = b.request_for(container("c", {{kCount, "1"}, {kMemory, "1000"}, {kCores, "1"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{1, "Mthreads", 512000, 0, 1}));
  // Requests only; no memory means "all of each GPU's memory", cores default to 0.
  r = b.request_for(container("c", {}, {{kCount, "1"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{1, "Mthreads", 0, 100, 0}));
  // Totals are divided evenly (integer division) over the GPUs.
  r = b.request_for(container("c", {{kCount, "2"}, {kMemory, "9"}, {kCores, "33"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{2, "Mthreads", 2304, 0, 16}));
  r = b.request_for(container("c", {{kCount, "3"}, {kMemory, "1"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{3, "Mthreads", 170, 0, 0}));
  // Limits, else requests, per resource.
  r = b.request_for(container("c", {{kCount, "1"}}, {{kMemory, "2"}, {kCores, "4"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{1, "Mthreads", 1024, 0, 4}));
  // The largest memory whose MiB fit in int32.
  r = b.request_for(container("c", {{kCount, "1"}, {kMemory, "4194303"}}));
  EXPECT_EQ(r.memreq, 2147483136);
  // A core value that is not an integer is ignored.
  r = b.request_for(container("c", {{kCount, "1"}, {kCores, "1.5"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{1, "Mthreads", 0, 100, 0}));
}

TEST(Mthreads, InvalidCountsAndMemoriesAreNoRequest) {
  MthreadsBackend b;
  for (const char* count : {"0", "-1", "4294967296", "1.5"}) {
    EXPECT_EQ(b.request_for(container("c", {{kCount, count}})).nums, 0) << count;
  }
  for (const char* memory : {"16Gi", "16.0Gi", "4194304", "-2", "0.5"}) {
    EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kMemory, memory}})).nums, 0) << memory;
  }
  EXPECT_EQ(b.request_for(container("c", {{"nvidia.com/gpu", "1"}})).nums, 0);
}

TEST(Mthreads, DiscoverySplitsTheCapacityIntoGpus) {
  MthreadsBackend b;
  auto found = b.node_devices(vendor_node("test", {}, {{kCores, "1"}, {kMemory, "1"}}));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  const auto& d = found.devices[0];
  EXPECT_EQ(d.id, "test-mthreads-0");
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.count, 100);
  EXPECT_EQ(d.devmem, 8192);
  EXPECT_EQ(d.devcore, 16);
  EXPECT_EQ(d.type, "Mthreads");
  EXPECT_EQ(d.device_vendor, "Mthreads");
  EXPECT_EQ(d.numa, 0);
  EXPECT_TRUE(d.health);

  // 8 GPUs with core capacity 128 and memory 768 -> 8 devices of 49152 MiB.
  found = b.node_devices(vendor_node("n", {}, {{kCores, "128"}, {kMemory, "768"}}));
  ASSERT_EQ(found.devices.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(found.devices[i].id, "n-mthreads-" + std::to_string(i));
    EXPECT_EQ(found.devices[i].index, i);
    EXPECT_EQ(found.devices[i].devmem, 49152);
  }
  // A partial GPU still counts as one; memory is shared by the cores, not the GPUs.
  found = b.node_devices(vendor_node("n", {}, {{kCores, "17"}, {kMemory, "17"}}));
  ASSERT_EQ(found.devices.size(), 2u);
  EXPECT_EQ(found.devices[1].devmem, 8192);
  // No memory capacity: GPUs with 0 MiB.
  found = b.node_devices(vendor_node("n", {}, {{kCores, "16"}}));
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0].devmem, 0);
}

TEST(Mthreads, DiscoveryRejectsMissingOrHostileCapacity) {
  MthreadsBackend b;
  auto found = b.node_devices(vendor_node("n", {}, {{kMemory, "96"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "device not found mthreads.com/sgpu-core");
  for (const char* cores : {"0", "1.5"}) {
    found = b.node_devices(vendor_node("n", {}, {{kCores, cores}}));
    EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent) << cores;
    EXPECT_EQ(found.message, "device not found mthreads.com/sgpu-core");
  }
  found = b.node_devices(vendor_node("n", {}, {{kCores, "-16"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_TRUE(found.devices.empty());
  // 10^12 core groups would be 6 * 10^10 GPUs: refused instead of allocated.
  found = b.node_devices(vendor_node("n", {}, {{kCores, "1000000000000"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
  EXPECT_THAT(found.message, ::testing::HasSubstr("is more than the 16384 cores hamisim accepts"));
  found = b.node_devices(vendor_node("n", {}, {{kCores, "16384"}}));
  EXPECT_EQ(found.devices.size(), 1024u);
  // A memory capacity whose MiB overflow wraps as in Go instead of trapping.
  found = b.node_devices(vendor_node("n", {}, {{kCores, "16"}, {kMemory, "9000000000000000"}}));
  ASSERT_EQ(found.devices.size(), 1u);
}

TEST(Mthreads, FitsTheLastGpuAndWritesItsAnnotations) {
  const auto registry = chart_registry();
  NodeFit fit =
      fit_on(pod_with({{kCount, "1"}, {kMemory, "8"}, {kCores, "4"}}), mthreads_node(2), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  // Spread on two idle GPUs keeps their order; the standard Fit takes the last one first.
  EXPECT_EQ(fit.annotations.at(kAllocated), "mt-mthreads-1,Mthreads,4096,4:;");
  EXPECT_EQ(fit.annotations.at(kGpuIndex), "1");
  // The to-allocate key is registered by HAMi but never written.
  EXPECT_FALSE(fit.annotations.contains("hami.io/mthreads-vgpu-devices-to-allocate"));
  // No memory: all of the GPU's memory.
  fit = fit_on(pod_with({{kCount, "1"}}), mthreads_node(1), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kAllocated), "mt-mthreads-0,Mthreads,49152,0:;");
  // Two GPUs for one container: the index list names both.
  fit = fit_on(pod_with({{kCount, "2"}, {kMemory, "192"}, {kCores, "32"}}), mthreads_node(2),
               registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kAllocated),
            "mt-mthreads-1,Mthreads,49152,16:mt-mthreads-0,Mthreads,49152,16:;");
  EXPECT_EQ(fit.annotations.at(kGpuIndex), "1,0");
  EXPECT_EQ(fit_on(pod_with({{kCount, "3"}}), mthreads_node(2), registry).reason,
            "NodeInsufficientDevice");
}

TEST(Mthreads, AnnotationsArePositionalAndTheLastContainerNamesTheIndex) {
  MthreadsBackend b;
  std::map<std::string, std::string> annotations;
  const device::ContainerDevice test1 = cdev(0, "test1", "Mthreads", 1000, 1);
  b.allocation_annotations({{test1}}, annotations);
  EXPECT_EQ(annotations.at(kAllocated), "test1,Mthreads,1000,1:;");
  EXPECT_EQ(annotations.at(kGpuIndex), "0");

  annotations.clear();
  const device::ContainerDevice other = cdev(3, "test3", "Mthreads", 512, 2);
  b.allocation_annotations({{}, {test1}, {other}, {}}, annotations);
  EXPECT_EQ(annotations.at(kAllocated), ";test1,Mthreads,1000,1:;test3,Mthreads,512,2:;;");
  EXPECT_EQ(annotations.at(kGpuIndex), "3");

  annotations.clear();
  b.allocation_annotations({}, annotations);
  EXPECT_TRUE(annotations.empty());

  // The node and the scheduling time (Unix nanoseconds) with a context; the node alone (empty
  // as in HAMi's test) without one.
  annotations.clear();
  b.annotate_allocation({{test1}}, {.node = "node-a", .unix_nanos = 1700000000123456789},
                        annotations);
  EXPECT_EQ(annotations.at("mthreads.com/predicate-node"), "node-a");
  EXPECT_EQ(annotations.at("mthreads.com/predicate-time"), "1700000000123456789");
  annotations.clear();
  b.allocation_annotations({{test1}}, annotations);
  EXPECT_EQ(annotations.at("mthreads.com/predicate-node"), "");
  EXPECT_FALSE(annotations.contains("mthreads.com/predicate-time"));
}

TEST(Mthreads, CustomRuleKeepsAPodOnOneGpu) {
  const auto registry = chart_registry();
  // Two containers that fit anywhere share the first one's GPU.
  model::Pod pod = PodBuilder()
                       .app(container("a", {{kCount, "1"}, {kMemory, "8"}}))
                       .app(container("b", {{kCount, "1"}, {kMemory, "8"}}))
                       .build();
  NodeFit fit = fit_on(pod, mthreads_node(2), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kAllocated),
            "mt-mthreads-1,Mthreads,4096,0:;mt-mthreads-1,Mthreads,4096,0:;");
  // When that GPU has no room for the second container, the other GPU is refused by the rule.
  pod = PodBuilder()
            .app(container("a", {{kCount, "1"}, {kMemory, "64"}}))
            .app(container("b", {{kCount, "1"}, {kMemory, "64"}}))
            .build();
  fit = fit_on(pod, mthreads_node(2), registry);
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.reason, "1/2 CardInsufficientMemory, 1/2 CardNotFoundCustomFilterRule");
  EXPECT_EQ(fit.failed_container, 1);
}

TEST(Mthreads, CustomRuleLooksAtTheSamePhaseOnly) {
  const auto registry = chart_registry();
  const model::Node node = mthreads_node(2);
  // mt-mthreads-1 already holds 1 GiB; binpack prefers it.
  const std::vector<model::Pod> running = {
      running_pod("r", "mt", {{kAllocated, "mt-mthreads-1,Mthreads,1024,0:;"}})};
  // The init container takes mt-mthreads-1; the app container needs a whole GPU, which only
  // mt-mthreads-0 still has: the init container's GPU does not bind the app container.
  model::Pod pod = policy_pod(PodBuilder()
                                  .init(container("init", {{kCount, "1"}, {kMemory, "2"}}))
                                  .app(container("app", {{kCount, "1"}, {kMemory, "96"}})),
                              "binpack");
  NodeFit fit = fit_on(pod, node, registry, running);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kAllocated),
            "mt-mthreads-1,Mthreads,1024,0:;mt-mthreads-0,Mthreads,49152,0:;");
  EXPECT_EQ(fit.annotations.at(kGpuIndex), "0");
  // Two init containers are one phase: the second may only use the first one's GPU.
  pod = policy_pod(PodBuilder()
                       .init(container("i1", {{kCount, "1"}, {kMemory, "2"}}))
                       .init(container("i2", {{kCount, "1"}, {kMemory, "96"}}))
                       .app(plain_container("app")),
                   "binpack");
  fit = fit_on(pod, node, registry, running);
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.reason, "1/2 CardInsufficientMemory, 1/2 CardNotFoundCustomFilterRule");
  EXPECT_EQ(fit.failed_container, 1);
}

TEST(Mthreads, UuidFiltersUseTheAiDomain) {
  const auto registry = chart_registry();
  auto with = [](std::string key, std::string value) {
    return PodBuilder().app(container("c", {{kCount, "1"}})).annotate(key, value).build();
  };
  NodeFit fit =
      fit_on(with("mthreads.ai/use-gpuuuid", "mt-mthreads-0"), mthreads_node(2), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("Mthreads")[0][0].uuid, "mt-mthreads-0");
  fit = fit_on(with("mthreads.ai/nouse-gpuuuid", "mt-mthreads-0, mt-mthreads-1"), mthreads_node(2),
               registry);
  EXPECT_EQ(fit.reason, "2/2 CardUuidMismatch");
  // The .com spelling is not read.
  fit = fit_on(with("mthreads.com/use-gpuuuid", "mt-mthreads-0"), mthreads_node(2), registry);
  ASSERT_TRUE(fit.fits);
  EXPECT_EQ(fit.devices.at("Mthreads")[0][0].uuid, "mt-mthreads-1");
}

TEST(Mthreads, CoreGroupsDecideExclusivity) {
  const auto registry = chart_registry();
  const model::Node node = mthreads_node(1);
  // A task using all 16 core groups and half the memory.
  const std::vector<model::Pod> full = {
      running_pod("r", "mt", {{kAllocated, "mt-mthreads-0,Mthreads,24576,16:;"}})};
  EXPECT_EQ(fit_on(pod_with({{kCount, "1"}, {kMemory, "2"}}), node, registry, full).reason,
            "1/1 CardComputeUnitsExhausted");
  EXPECT_EQ(
      fit_on(pod_with({{kCount, "1"}, {kMemory, "2"}, {kCores, "1"}}), node, registry, full).reason,
      "1/1 CardInsufficientCore");
  // With Totalcore 16, a 16-group request on a shared GPU is not an "exclusive" conflict:
  // only the core arithmetic decides.
  const std::vector<model::Pod> light = {
      running_pod("r", "mt", {{kAllocated, "mt-mthreads-0,Mthreads,1024,0:;"}})};
  NodeFit fit =
      fit_on(pod_with({{kCount, "1"}, {kMemory, "2"}, {kCores, "16"}}), node, registry, light);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kAllocated), "mt-mthreads-0,Mthreads,1024,16:;");
  // Cores above 100 per GPU are clamped to 100, still more than 16 groups.
  EXPECT_EQ(fit_on(pod_with({{kCount, "1"}, {kCores, "200"}}), node, registry).reason,
            "1/1 CardInsufficientCore");
  // The mutex policy needs an idle GPU.
  model::Pod mutex =
      policy_pod(PodBuilder().app(container("c", {{kCount, "1"}, {kMemory, "2"}})), "mutex");
  EXPECT_EQ(fit_on(mutex, node, registry, light).reason, "1/1 ExclusiveDeviceAllocateConflict");
  // 100 slots per GPU.
  std::vector<model::Pod> many;
  for (int i = 0; i < 100; ++i) {
    many.push_back(
        running_pod("r" + std::to_string(i), "mt", {{kAllocated, "mt-mthreads-0,Mthreads,0,0:;"}}));
  }
  EXPECT_EQ(fit_on(pod_with({{kCount, "1"}, {kMemory, "2"}}), node, registry, many).reason,
            "1/1 CardTimeSlicingExhausted");
}

TEST(Mthreads, DeviceTypeMustContainTheVendorKey) {
  // Devices typed otherwise (here through a hand-built usage) fail the two-fold type check.
  MthreadsBackend b;
  device::DeviceUsage d;
  d.id = "x";
  d.type = "mthreads";  // case matters
  d.count = 100;
  d.totalmem = 1024;
  d.totalcore = 16;
  device::DeviceUsage* list[] = {&d};
  model::Pod pod = pod_with({{kCount, "1"}});
  auto prepared = b.prepare(pod);
  device::FitContext ctx;
  ctx.pod = &pod;
  ctx.prepared = prepared.get();
  ctx.gpu_policy = "spread";
  auto out = b.fit(list, b.request_for(pod.spec.containers[0]), ctx);
  EXPECT_FALSE(out.fits);
  EXPECT_EQ(out.reasons.count_of(device::Reason::kCardTypeMismatch), 1);
  d.type = "Mthreads-S4000";
  out = b.fit(list, b.request_for(pod.spec.containers[0]), ctx);
  EXPECT_TRUE(out.fits);
  // A request of another type is refused on every device.
  device::ContainerDeviceRequest other{1, "NVIDIA", 0, 100, 0};
  out = b.fit(list, other, ctx);
  EXPECT_EQ(out.reasons.count_of(device::Reason::kCardTypeMismatch), 1);
}

TEST(Mthreads, DeviceConfigSectionRenamesResources) {
  const auto registry = registry_from_yaml(R"(mthreads:
  resourceCountName: example.com/gpu
  resourceMemoryName: example.com/mem
  resourceCoreName: example.com/core
)");
  const auto* b = registry.find("Mthreads");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->resource_names().count, "example.com/gpu");
  EXPECT_EQ(b->resource_names().memory, "example.com/mem");
  EXPECT_EQ(b->resource_names().cores, "example.com/core");
  auto r = b->request_for(container("c", {{"example.com/gpu", "1"}, {"example.com/mem", "2"}}));
  EXPECT_EQ(r.memreq, 1024);
  auto found = b->node_devices(vendor_node("n", {}, {{"example.com/core", "32"}}));
  EXPECT_EQ(found.devices.size(), 2u);
  // A file without a mthreads section leaves the names empty, as HAMi does.
  const auto other = registry_from_yaml("nvidia: {}\n");
  ASSERT_NE(other.find("Mthreads"), nullptr);
  EXPECT_EQ(other.find("Mthreads")->request_for(container("c", {{kCount, "1"}})).nums, 0);
  EXPECT_EQ(other.find("Mthreads")->node_devices(mthreads_node(1)).state,
            device::NodeDevices::State::kAbsent);
  auto bad = device::parse_device_config("mthreads:\n  resourceCoreName: [a, b]\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              ::testing::HasSubstr("mthreads.resourceCoreName: expected a string at line 2"));
}

TEST(Mthreads, RegistrationBehaviour) {
  MthreadsBackend b;
  EXPECT_EQ(b.vendor(), "Mthreads");
  EXPECT_EQ(b.health_check(), device::HealthCheck::kAlways);
  EXPECT_EQ(b.handshake_annotation(), "");
  EXPECT_EQ(b.cleanup_annotation(), "");
  EXPECT_FALSE(b.locks_node());
  EXPECT_EQ(b.allocated_annotation(), kAllocated);
  EXPECT_EQ(b.to_allocate_annotation(), "hami.io/mthreads-vgpu-devices-to-allocate");
  EXPECT_EQ(b.resource_names().memory_factor, 512);
  EXPECT_EQ(b.managed_resources(), (std::vector<std::string>{kCount, kMemory, kCores}));
  EXPECT_EQ(b.score_node({}, {}, "binpack"), 0);
}

TEST(Mthreads, AdmissionFollowsHamisWebhook) {
  const device::mthreads::MthreadsConfig config;
  using device::mthreads::admit_container;
  auto a = admit_container(config, container("c", {{kCount, "1"}, {kMemory, "3"}}));
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().message,
            "sGPU memory request value is invalid, valid values are [2, 4, 8, 16, 32, 64, 96]");
  a = admit_container(config, container("c", {{kCount, "2"}}));
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->found);
  EXPECT_EQ(a->set_cores, 32);
  EXPECT_EQ(a->set_memory, 192);
  EXPECT_EQ(a->request_gpu_num, "2");
  a = admit_container(config, container("c", {{kCount, "0"}}));
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().message, "mthreads.com/vgpu must be greater than 0");
  // One GPU without memory: the whole GPU.
  a = admit_container(config, container("c", {}, {{kCount, "1"}}));
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->found);
  EXPECT_EQ(a->set_cores, 16);
  EXPECT_EQ(a->set_memory, 96);
  EXPECT_FALSE(a->request_gpu_num);
  // One GPU with a legal memory: unchanged.
  for (const char* m : {"2", "4", "8", "16", "32", "64", "96"}) {
    a = admit_container(config, container("c", {{kCount, "1"}, {kMemory, m}}));
    ASSERT_TRUE(a) << m;
    EXPECT_FALSE(a->set_memory);
    EXPECT_FALSE(a->set_cores);
  }
  // Only the memory limit is checked; a fractional count rounds up to 2 GPUs.
  a = admit_container(config, container("c", {{kCount, "1"}}, {{kMemory, "3"}}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->set_memory, 96);
  a = admit_container(config, container("c", {{kCount, "1.5"}}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->request_gpu_num, "2");
  a = admit_container(config, container("c", {{"cpu", "1"}}));
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->found);
}

}  // namespace mthreads_test
}  // namespace hamisim::fit::testing
