// Cambricon MLU (reference: hami-other-vendors.md B.5), from the reference's examples:
// requests, capacity discovery, the standard Fit with its quota step, the DSMLU annotations,
// usage of running pods, the config section and the lock identity.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/allocation.h"
#include "device/cambricon/cambricon_backend.h"
#include "fit/quota.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace cambricon_test {

using device::ContainerDeviceRequest;
using device::cambricon::CambriconBackend;

constexpr std::string_view kCount = "cambricon.com/vmlu";
constexpr std::string_view kMem = "cambricon.com/mlu.smlu.vmemory";
constexpr std::string_view kCores = "cambricon.com/mlu.smlu.vcore";

model::Node mlu_node(std::string vcore, std::string vmemory, std::string name = "mlu-node") {
  return vendor_node(std::move(name), {}, {{kCores, vcore}, {kMem, vmemory}});
}

device::DeviceUsage mlu(std::string id, int32_t totalmem, int64_t used = 0, int64_t usedcores = 0,
                        int64_t usedmem = 0) {
  device::DeviceUsage d;
  d.id = std::move(id);
  d.count = 100;
  d.totalmem = totalmem;
  d.totalcore = 100;
  d.used = used;
  d.usedcores = usedcores;
  d.usedmem = usedmem;
  d.type = "MLU";
  d.vendor = "MLU";
  return d;
}

// The reason is GenReason over the devices given, empty on success.
DirectFit fit_direct(std::vector<device::DeviceUsage> devices, ContainerDeviceRequest request,
                     const model::Pod& pod = PodBuilder().build(), std::string_view policy = "") {
  DirectFit out = direct_fit(CambriconBackend{}, devices, request, pod, policy);
  if (out.outcome.fits) out.reason.clear();
  return out;
}

ContainerDeviceRequest req(int32_t nums, int32_t memreq, int32_t cores, int32_t pct = 0,
                           std::string type = "MLU") {
  return ContainerDeviceRequest{nums, std::move(type), memreq, pct, cores};
}

TEST(Cambricon, RequestsFollowTheReferenceExamples) {
  CambriconBackend b;
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kMem, "1000"}, {kCores, "2"}})),
            (ContainerDeviceRequest{1, "MLU", 256000, 0, 2}));
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kMem, "1000"}})),
            (ContainerDeviceRequest{1, "MLU", 256000, 0, 100}));
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kCores, "2"}})),
            (ContainerDeviceRequest{1, "MLU", 0, 100, 2}));
  // Limits, else requests, per resource.
  EXPECT_EQ(b.request_for(container("c", {{kCount, "2"}}, {{kMem, "4"}, {kCores, "30"}})),
            (ContainerDeviceRequest{2, "MLU", 1024, 0, 30}));
  EXPECT_EQ(b.request_for(container("c", {}, {{kCount, "1"}})).nums, 1);
  EXPECT_EQ(b.request_for(container("c", {{kMem, "4"}})).nums, 0);
}

TEST(Cambricon, MemoryOutsideItsRangeOrNotAnIntegerIsNoRequest) {
  CambriconBackend b;
  for (std::string_view bad : {"16Gi", "16.0Gi", "1.5", "-1", "8388608"}) {
    EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kMem, bad}})).nums, 0) << bad;
  }
  // 8388607 × 256 is the largest MiB value int32 holds.
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kMem, "8388607"}})).memreq, 2147483392);
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kMem, "0"}})).mem_percentagereq, 100);
}

TEST(Cambricon, CountAndCoresAreTruncatedToInt32LikeHami) {
  CambriconBackend b;
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1.5"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{kCount, "0"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{kCount, "-1"}})).nums, -1);
  // No range check: int32(2^32 + 1) is 1.
  EXPECT_EQ(b.request_for(container("c", {{kCount, "4294967297"}})).nums, 1);
  // A non-integer core count keeps the default; an integer one is truncated, not clamped.
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kCores, "1.5"}})).coresreq, 100);
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kCores, "4294967346"}})).coresreq, 50);
  EXPECT_EQ(b.request_for(container("c", {{kCount, "1"}, {kCores, "250"}})).coresreq, 250);
}

TEST(Cambricon, DevicesComeFromTheNodeCapacity) {
  CambriconBackend b;
  auto found = b.node_devices(mlu_node("1", "1", "test"));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  const auto& d = found.devices[0];
  EXPECT_EQ(d.id, "test-cambricon-mlu-0");
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.count, 100);
  EXPECT_EQ(d.devmem, 25600);  // 1 × 256 × 100 / 1
  EXPECT_EQ(d.devcore, 100);
  EXPECT_EQ(d.type, "MLU");
  EXPECT_EQ(d.numa, 0);
  EXPECT_TRUE(d.health);
  EXPECT_EQ(d.device_vendor, "MLU");

  found = b.node_devices(mlu_node("800", "768"));
  ASSERT_EQ(found.devices.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(found.devices[i].id, "mlu-node-cambricon-mlu-" + std::to_string(i));
    EXPECT_EQ(found.devices[i].index, i);
    EXPECT_EQ(found.devices[i].devmem, 24576);
  }
  // ceil(vcore / 100) devices, each with the per-vcore memory × 100.
  found = b.node_devices(mlu_node("150", "300"));
  ASSERT_EQ(found.devices.size(), 2u);
  EXPECT_EQ(found.devices[1].devmem, 51200);
  // The memory capacity is optional (0 MiB devices).
  found = b.node_devices(vendor_node("n", {}, {{kCores, "200"}}));
  ASSERT_EQ(found.devices.size(), 2u);
  EXPECT_EQ(found.devices[0].devmem, 0);
  // Capacity, not allocatable.
  model::Node node = mlu_node("100", "16");
  node.status.allocatable.clear();
  EXPECT_EQ(b.node_devices(node).devices.size(), 1u);
}

TEST(Cambricon, DiscoveryOfMissingOrHostileCapacity) {
  CambriconBackend b;
  for (const model::Node& n :
       {vendor_node("n", {}), mlu_node("0", "16"), mlu_node("1.5", "16"), mlu_node("-100", "16")}) {
    auto found = b.node_devices(n);
    EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
    EXPECT_TRUE(found.devices.empty());
  }
  EXPECT_EQ(b.node_devices(vendor_node("n", {})).message,
            "device not found cambricon.com/mlu.smlu.vcore");
  // Go's int64 product wraps and the result keeps its low 32 bits; no overflow here.
  auto found = b.node_devices(mlu_node("100", "1000000000000000"));
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0].devmem, -792891229);
  // A capacity claiming millions of MLUs is refused instead of allocating them.
  found = b.node_devices(mlu_node("1000000000000", "16"));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
  EXPECT_THAT(found.message, ::testing::HasSubstr("more than the 1024"));
  EXPECT_EQ(b.node_devices(mlu_node("102400", "16")).devices.size(), 1024u);
}

TEST(Cambricon, FitFollowsTheReferenceExamples) {
  // Two idle devices: the scan starts at the end.
  DirectFit r = fit_direct({mlu("dev-0", 128), mlu("dev-1", 128)}, req(1, 64, 50));
  ASSERT_TRUE(r.outcome.fits) << r.reason;
  ASSERT_EQ(r.outcome.devices.size(), 1u);
  EXPECT_EQ(r.outcome.devices[0].uuid, "dev-1");
  EXPECT_EQ(r.outcome.devices[0].type, "MLU");
  EXPECT_EQ(r.outcome.devices[0].usedmem, 64);
  EXPECT_EQ(r.outcome.devices[0].usedcores, 50);
  // A percentage of each device's memory.
  r = fit_direct({mlu("dev-0", 1280, 20, 10)}, req(1, 0, 20, 10));
  ASSERT_TRUE(r.outcome.fits) << r.reason;
  EXPECT_EQ(r.outcome.devices[0].usedmem, 128);
  // More than the devices: the partial selection is counted, assignment not increment.
  r = fit_direct({mlu("dev-0", 1280), mlu("dev-1", 1280)}, req(3, 64, 10));
  EXPECT_FALSE(r.outcome.fits);
  EXPECT_EQ(r.reason, "2/2 AllocatedCardsInsufficientRequest");
  // Cores above 100 are clamped, and the clamp is what gets recorded.
  r = fit_direct({mlu("dev-0", 1280)}, req(1, 512, 120));
  ASSERT_TRUE(r.outcome.fits) << r.reason;
  EXPECT_EQ(r.outcome.devices[0].usedcores, 100);
}

TEST(Cambricon, FitReasonsInCheckOrder) {
  EXPECT_EQ(fit_direct({mlu("dev-0", 128)}, req(1, 512, 50)).reason, "1/1 CardInsufficientMemory");
  EXPECT_EQ(fit_direct({mlu("dev-0", 1024, 0, 100)}, req(1, 512, 50)).reason,
            "1/1 CardInsufficientCore");
  // Memory is checked before cores.
  EXPECT_EQ(fit_direct({mlu("dev-0", 128, 0, 100)}, req(1, 512, 50)).reason,
            "1/1 CardInsufficientMemory");
  EXPECT_EQ(fit_direct({mlu("dev-0", 128)}, req(1, 512, 50, 0, "OtherType")).reason,
            "1/1 CardTypeMismatch");
  EXPECT_EQ(fit_direct({mlu("dev-0", 1280, 100)}, req(1, 512, 50)).reason,
            "1/1 CardTimeSlicingExhausted");
  EXPECT_EQ(fit_direct({mlu("dev-0", 1280, 20)}, req(1, 512, 100)).reason,
            "1/1 ExclusiveDeviceAllocateConflict");
  EXPECT_EQ(fit_direct({mlu("dev-0", 1280, 20, 100)}, req(1, 512, 0)).reason,
            "1/1 CardComputeUnitsExhausted");
  EXPECT_EQ(fit_direct({mlu("dev-0", 1280, 20, 10)}, req(2, 512, 20)).reason,
            "1/1 AllocatedCardsInsufficientRequest");
  EXPECT_EQ(
      fit_direct({mlu("dev-0", 1280, 1)}, req(1, 64, 10), PodBuilder().build(), "mutex").reason,
      "1/1 ExclusiveDeviceAllocateConflict");
  device::DeviceUsage sick = mlu("dev-0", 1280);
  sick.health = false;
  EXPECT_EQ(fit_direct({sick, mlu("dev-1", 16)}, req(1, 64, 10)).reason,
            "1/2 CardInsufficientMemory, 1/2 CardNotHealth");
}

TEST(Cambricon, UuidFilters) {
  auto pod = [](std::string key, std::string value) {
    return PodBuilder().annotate(std::move(key), std::move(value)).build();
  };
  EXPECT_EQ(
      fit_direct({mlu("dev-1", 1280)}, req(2, 512, 50), pod("cambricon.com/use-gpuuuid", "dev-0"))
          .reason,
      "1/1 CardUuidMismatch");
  EXPECT_EQ(
      fit_direct({mlu("dev-0", 1280)}, req(2, 512, 50), pod("cambricon.com/nouse-gpuuuid", "dev-0"))
          .reason,
      "1/1 CardUuidMismatch");
  DirectFit r = fit_direct({mlu("dev-0", 1280), mlu("dev-1", 1280)}, req(1, 512, 50),
                           pod("cambricon.com/use-gpuuuid", "dev-2, dev-0"));
  ASSERT_TRUE(r.outcome.fits) << r.reason;
  EXPECT_EQ(r.outcome.devices[0].uuid, "dev-0");
  // The model filter annotations exist in HAMi but are not read.
  r = fit_direct({mlu("dev-0", 1280)}, req(1, 512, 50), pod("cambricon.com/use-mlutype", "x"));
  EXPECT_TRUE(r.outcome.fits) << r.reason;
}

device::ContainerDevice chosen(int32_t idx, std::string uuid, int32_t mem, int32_t cores) {
  device::ContainerDevice d;
  d.idx = idx;
  d.uuid = std::move(uuid);
  d.type = "MLU";
  d.usedmem = mem;
  d.usedcores = cores;
  return d;
}

TEST(Cambricon, AnnotationsCarryTheDsmluProfile) {
  CambriconBackend b;
  std::map<std::string, std::string> a;
  const device::ContainerDevice dev = chosen(0, "device-0", 256000, 1);
  b.allocation_annotations({{dev}}, a);
  EXPECT_EQ(a, (std::map<std::string, std::string>{
                   {"CAMBRICON_DSMLU_ASSIGNED", "false"},
                   {"CAMBRICON_DSMLU_PROFILE", "0_1_1000"},
                   {"hami.io/cambricon-mlu-devices-to-allocate", "device-0,MLU,256000,1:;"},
                   {"hami.io/cambricon-mlu-devices-allocated", "device-0,MLU,256000,1:;"}}));
  // The profile is the first device of the first container that has one.
  a.clear();
  const device::ContainerDevice second = chosen(3, "device-3", 1000, 40);
  b.allocation_annotations({{}, {dev, second}}, a);
  EXPECT_EQ(a.at("CAMBRICON_DSMLU_PROFILE"), "0_1_1000");
  EXPECT_EQ(a.at("hami.io/cambricon-mlu-devices-allocated"),
            ";device-0,MLU,256000,1:device-3,MLU,1000,40:;");
  a.clear();
  b.allocation_annotations({{}, {second}}, a);
  EXPECT_EQ(a.at("CAMBRICON_DSMLU_PROFILE"), "3_40_3");  // 1000 / 256, truncated
  // A list without devices still says "not assigned", without a profile.
  a.clear();
  b.allocation_annotations({{}}, a);
  EXPECT_EQ(a,
            (std::map<std::string, std::string>{{"CAMBRICON_DSMLU_ASSIGNED", "false"},
                                                {"hami.io/cambricon-mlu-devices-to-allocate", ";"},
                                                {"hami.io/cambricon-mlu-devices-allocated", ";"}}));
  a.clear();
  b.allocation_annotations({}, a);
  EXPECT_TRUE(a.empty());
}

TEST(Cambricon, WholePodFitIsPositional) {
  const auto registry = chart_registry();
  // 2 MLUs of 4096 MiB.
  const model::Node node = mlu_node("200", "32");
  model::Pod pod = PodBuilder()
                       .app(plain_container("sidecar"))
                       .app(container("main", {{kCount, "1"}, {kMem, "4"}, {kCores, "25"}}))
                       .build();
  NodeFit fit = fit_on(pod, node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at("hami.io/cambricon-mlu-devices-to-allocate"),
            ";mlu-node-cambricon-mlu-1,MLU,1024,25:;");
  EXPECT_EQ(fit.annotations.at("hami.io/cambricon-mlu-devices-allocated"),
            ";mlu-node-cambricon-mlu-1,MLU,1024,25:;");
  EXPECT_EQ(fit.annotations.at("CAMBRICON_DSMLU_ASSIGNED"), "false");
  EXPECT_EQ(fit.annotations.at("CAMBRICON_DSMLU_PROFILE"), "1_25_4");
  // Without memory the container takes all of each device's memory.
  fit = fit_on(pod_with({{kCount, "2"}}), node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at("hami.io/cambricon-mlu-devices-allocated"),
            "mlu-node-cambricon-mlu-1,MLU,4096,100:mlu-node-cambricon-mlu-0,MLU,4096,100:;");
  EXPECT_EQ(fit.annotations.at("CAMBRICON_DSMLU_PROFILE"), "1_100_16");
  EXPECT_EQ(fit_on(pod_with({{kCount, "3"}}), node, registry).reason, "NodeInsufficientDevice");
}

TEST(Cambricon, RunningPodsUseTheDevices) {
  const auto registry = chart_registry();
  const model::Node node = mlu_node("100", "16");  // one MLU of 4096 MiB
  std::vector<model::Pod> running = {running_pod(
      "a", "mlu-node",
      {{"hami.io/cambricon-mlu-devices-allocated", "mlu-node-cambricon-mlu-0,MLU,3072,50:;"}})};
  NodeFit fit =
      fit_on(pod_with({{kCount, "1"}, {kMem, "8"}, {kCores, "10"}}), node, registry, running);
  EXPECT_EQ(fit.reason, "1/1 CardInsufficientMemory");
  EXPECT_EQ(fit.fit_class, FitClass::kInsufficientCapacity);
  fit = fit_on(pod_with({{kCount, "1"}, {kMem, "4"}, {kCores, "60"}}), node, registry, running);
  EXPECT_EQ(fit.reason, "1/1 CardInsufficientCore");
  fit = fit_on(pod_with({{kCount, "1"}, {kMem, "4"}, {kCores, "50"}}), node, registry, running);
  EXPECT_TRUE(fit.fits) << fit.reason;
}

NodeFit fit_with_quota(const model::Pod& pod, const model::Node& node,
                       const device::DeviceRegistry& registry, Resources limits) {
  DeviceQuota quota(registry);
  model::ResourceQuota q;
  q.metadata.name = "q";
  q.metadata.namespace_ = "default";
  for (const auto& [name, value] : limits)
    q.spec.hard.emplace("limits." + std::string(name), qty(value));
  quota.add_quota(q);
  DescriptionResult inv = read_registered_description(node, registry);
  EXPECT_EQ(inv.state, DescriptionResult::State::kOk) << inv.message;
  auto prepared = prepare_pod(pod, registry, FitPolicy{});
  EXPECT_TRUE(prepared);
  return fit_pod(*prepared, fresh_usage(inv.description), inv.description, registry, &quota);
}

TEST(Cambricon, NamespaceQuotaIsCheckedInsideFit) {
  const auto registry = chart_registry();
  const model::Node node = mlu_node("100", "160");  // one MLU of 40960 MiB
  // The reference example: 50 units = 12800 MiB; the whole device is 40960 MiB.
  const model::Pod whole = pod_with({{kCount, "1"}, {kCores, "10"}});
  EXPECT_EQ(fit_with_quota(whole, node, registry, {{kMem, "50"}}).reason,
            "1/1 ResourceQuotaNotFit");
  EXPECT_TRUE(fit_with_quota(whole, node, registry, {{kMem, "160"}}).fits);
  EXPECT_TRUE(fit_with_quota(pod_with({{kCount, "1"}, {kMem, "40"}, {kCores, "10"}}), node,
                             registry, {{kMem, "50"}})
                  .fits);
  EXPECT_EQ(fit_with_quota(whole, node, registry, {{kCores, "5"}}).reason,
            "1/1 ResourceQuotaNotFit");
  // Quota comes before the memory check: a request too big for the device still reports it.
  EXPECT_EQ(fit_with_quota(pod_with({{kCount, "1"}, {kMem, "200"}}), node, registry, {{kMem, "50"}})
                .reason,
            "1/1 ResourceQuotaNotFit");
  // The devices of earlier containers count: 2 × 10240 MiB > 12800 MiB.
  const model::Node two = mlu_node("200", "320");
  model::Pod pair = PodBuilder()
                        .app(container("a", {{kCount, "1"}, {kMem, "40"}, {kCores, "10"}}))
                        .app(container("b", {{kCount, "1"}, {kMem, "40"}, {kCores, "10"}}))
                        .build();
  NodeFit fit = fit_with_quota(pair, two, registry, {{kMem, "50"}});
  EXPECT_EQ(fit.reason, "2/2 ResourceQuotaNotFit");
  EXPECT_EQ(fit.failed_container, 1);
  // Init containers run before the app containers: their peak, not their sum, counts.
  model::Pod staged = PodBuilder()
                          .init(container("i", {{kCount, "1"}, {kMem, "40"}, {kCores, "10"}}))
                          .app(container("a", {{kCount, "1"}, {kMem, "40"}, {kCores, "10"}}))
                          .build();
  EXPECT_TRUE(fit_with_quota(staged, two, registry, {{kMem, "50"}}).fits);
}

TEST(Cambricon, DeviceConfigSectionRenamesResources) {
  const auto registry = registry_from_yaml(R"(cambricon:
  resourceCountName: example.com/mlu
  resourceMemoryName: example.com/mlumem
  resourceCoreName: example.com/mlucores
)");
  const auto* b = registry.find("MLU");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->resource_names().count, "example.com/mlu");
  EXPECT_EQ(b->resource_names().memory, "example.com/mlumem");
  EXPECT_EQ(b->resource_names().cores, "example.com/mlucores");
  EXPECT_EQ(b->resource_names().memory_factor, 256);
  EXPECT_EQ(b->request_for(container("c", {{"example.com/mlu", "1"}, {"example.com/mlumem", "2"}}))
                .memreq,
            512);
  EXPECT_EQ(b->node_devices(vendor_node("n", {}, {{"example.com/mlucores", "100"}})).devices.size(),
            1u);
  // Chart defaults without a file; a file without the section leaves the names empty.
  const auto chart = chart_registry();
  ASSERT_NE(chart.find("MLU"), nullptr);
  EXPECT_EQ(chart.find("MLU")->resource_names().count, "cambricon.com/vmlu");
  EXPECT_EQ(chart.find("MLU")->resource_names().memory, "cambricon.com/mlu.smlu.vmemory");
  EXPECT_EQ(chart.find("MLU")->resource_names().cores, "cambricon.com/mlu.smlu.vcore");
  const auto other = registry_from_yaml("nvidia: {}\n");
  ASSERT_NE(other.find("MLU"), nullptr);
  EXPECT_EQ(other.find("MLU")->request_for(container("c", {{kCount, "1"}})).nums, 0);
  EXPECT_EQ(other.find("MLU")->node_devices(mlu_node("100", "16")).state,
            device::NodeDevices::State::kAbsent);
  auto bad = device::parse_device_config("cambricon:\n  resourceCoreName: [a, b]\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              ::testing::HasSubstr("cambricon.resourceCoreName: expected a string at line 2"));
}

TEST(Cambricon, RegistrationAndLockIdentity) {
  CambriconBackend b;
  EXPECT_EQ(b.vendor(), "MLU");
  EXPECT_EQ(b.health_check(), device::HealthCheck::kAlways);
  EXPECT_EQ(b.handshake_annotation(), "");
  EXPECT_EQ(b.cleanup_annotation(), "");
  // Its own lock, not hami.io/mutex.lock.
  EXPECT_FALSE(b.locks_node());
  EXPECT_EQ(device::cambricon::kLockAnnotation, "cambricon.com/dsmlu.lock");
  EXPECT_EQ(device::cambricon::kLockExpiry, std::chrono::minutes(2));
  const auto own = b.own_node_lock();
  ASSERT_TRUE(own);
  EXPECT_EQ(own->annotation, "cambricon.com/dsmlu.lock");
  EXPECT_EQ(own->expiry, std::chrono::minutes(2));
  EXPECT_EQ(own->held, "has been locked within 2 minutes");
  EXPECT_EQ(b.score_node({}, {}, "binpack"), 0);
  // The extender manages only the count; vmemory and vcore are plain node resources.
  EXPECT_EQ(b.managed_resources(), std::vector<std::string>{"cambricon.com/vmlu"});
}

}  // namespace cambricon_test
}  // namespace hamisim::fit::testing
