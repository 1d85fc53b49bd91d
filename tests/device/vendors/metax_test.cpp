// MetaX (reference: hami-other-vendors.md B.10), from the reference's examples: whole GPUs
// (`Metax-GPU`: capacity devices, one card per pod, topology node score) and shared sGPUs
// (`Metax-SGPU`: own registration schema, app classes, QoS, MetaLink zones, ±10000 score).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/metax/metax_backend.h"
#include "device/metax/metax_gpu.h"
#include "device/metax/metax_sgpu.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace metax_test {

using device::ContainerDeviceRequest;
using device::metax::MetaxConfig;
using device::metax::MetaxGpuBackend;
using device::metax::MetaxSgpuBackend;

constexpr const char* kGpu = "metax-tech.com/gpu";
constexpr const char* kSgpu = "metax-tech.com/sgpu";
constexpr const char* kVcore = "metax-tech.com/vcore";
constexpr const char* kVmem = "metax-tech.com/vmemory";
constexpr const char* kSgpuRegister = "metax-tech.com/node-gpu-devices";
constexpr const char* kSgpuAllocated = "hami.io/metax-sgpu-devices-allocated";
constexpr const char* kQos = "metax-tech.com/sgpu-qos-policy";
constexpr const char* kClass = "metax-tech.com/sgpu-app-class";

// A fitted whole-pod view keeps its description alive (usages point into it).
struct Snapshot {
  DeviceDescription description;
  NodeUsage usage;
};

Snapshot snapshot(const device::DeviceBackend& b, const model::Node& node) {
  Snapshot s;
  device::NodeDevices nd = b.node_devices(node);
  EXPECT_EQ(nd.state, device::NodeDevices::State::kOk) << nd.message;
  s.description.devices = std::move(nd.devices);
  s.usage = fresh_usage(s.description);
  return s;
}

device::ContainerDevice chosen(std::string uuid, int32_t cores = 100, int32_t mem = 0,
                               std::string type = "Metax-SGPU") {
  device::ContainerDevice d;
  d.uuid = std::move(uuid);
  d.type = std::move(type);
  d.usedcores = cores;
  d.usedmem = mem;
  return d;
}

// One backend's Fit on the given devices (the last is the most preferred), outside the engine.
device::FitOutcome fit_direct(const device::DeviceBackend& b,
                              std::vector<device::DeviceUsage>& devs,
                              const ContainerDeviceRequest& request, const model::Pod& pod,
                              const device::PodDevices* allocated = nullptr,
                              size_t container_index = 0) {
  std::vector<device::DeviceUsage*> ptrs;
  for (auto& d : devs) ptrs.push_back(&d);
  auto prepared = b.prepare(pod);
  device::FitContext ctx;
  ctx.pod = &pod;
  ctx.prepared = prepared.get();
  ctx.gpu_policy = "spread";
  ctx.allocated = allocated;
  ctx.container_index = container_index;
  return b.fit(ptrs, request, ctx);
}

// --- Metax-GPU -----------------------------------------------------------------------------

model::Node gpu_node(std::string count = "2",
                     std::map<std::string, std::string, std::less<>> annotations = {}) {
  return vendor_node("node1", std::move(annotations), {{kGpu, count}});
}

TEST(MetaxGpu, RequestsAreWholeCards) {
  MetaxGpuBackend b;
  EXPECT_EQ(b.request_for(container("c", {{kGpu, "2"}})),
            (ContainerDeviceRequest{2, "Metax-GPU", 0, 100, 100}));
  // Limits, else requests.
  EXPECT_EQ(b.request_for(container("c", {}, {{kGpu, "1"}})).nums, 1);
  EXPECT_EQ(b.request_for(container("c", {{kGpu, "0"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{kGpu, "1.5"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{kGpu, "-1"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{"metax-tech.com/sgpu", "1"}})).nums, 0);
  // Go's int32(n) keeps the low 32 bits.
  EXPECT_EQ(b.request_for(container("c", {{kGpu, "4294967297"}})).nums, 1);
}

TEST(MetaxGpu, DevicesComeFromCapacity) {
  MetaxGpuBackend b;
  auto found = b.node_devices(vendor_node("test", {}, {{kGpu, "1"}}));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  const auto& d = found.devices[0];
  EXPECT_EQ(d.id, "test-metax-0");
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.count, 1);
  EXPECT_EQ(d.devmem, 65536);
  EXPECT_EQ(d.devcore, 100);
  EXPECT_EQ(d.type, "Metax-GPU");
  EXPECT_EQ(d.numa, 0);
  EXPECT_TRUE(d.health);
  EXPECT_EQ(d.device_vendor, "Metax-GPU");
  EXPECT_EQ(d.custom_info, "");

  found = b.node_devices(gpu_node("3", {{"metax-tech.com/gpu.topology.losses", R"({"1":0})"}}));
  ASSERT_EQ(found.devices.size(), 3u);
  EXPECT_EQ(found.devices[2].id, "node1-metax-2");
  EXPECT_EQ(found.devices[2].custom_info, R"({"topology.losses":"{\"1\":0}"})");

  for (const char* none : {"0", "-2", "1.5"}) {
    found = b.node_devices(gpu_node(none));
    EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent) << none;
    EXPECT_EQ(found.message, "device not found metax-tech.com/gpu");
  }
  EXPECT_EQ(b.node_devices(vendor_node("n", {})).state, device::NodeDevices::State::kAbsent);
  // A hostile capacity is refused rather than expanded into a billion devices.
  EXPECT_EQ(b.node_devices(gpu_node("1e9")).state, device::NodeDevices::State::kMalformed);
}

TEST(MetaxGpu, FitsTheLastIdleCardAndWritesBothKeys) {
  const auto registry = chart_registry();
  NodeFit fit = fit_on(pod_with({{kGpu, "1"}}), gpu_node(), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at("hami.io/metax-gpu-devices-to-allocate"),
            "node1-metax-1,Metax-GPU,65536,100:;");
  EXPECT_EQ(fit.annotations.at("hami.io/metax-gpu-devices-allocated"),
            "node1-metax-1,Metax-GPU,65536,100:;");
  // A running pod holds its card whole.
  std::vector<model::Pod> running = {running_pod(
      "r", "node1",
      {{"hami.io/metax-gpu-devices-allocated", "node1-metax-1,Metax-GPU,65536,100:;"}})};
  fit = fit_on(pod_with({{kGpu, "1"}}), gpu_node(), registry, running);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("Metax-GPU")[0][0].uuid, "node1-metax-0");
  fit = fit_on(pod_with({{kGpu, "2"}}), gpu_node(), registry, running);
  EXPECT_EQ(fit.reason, "1/2 AllocatedCardsInsufficientRequest, 1/2 CardTimeSlicingExhausted");
  fit = fit_on(pod_with({{kGpu, "3"}}), gpu_node(), registry);
  EXPECT_EQ(fit.reason, "NodeInsufficientDevice");
}

TEST(MetaxGpu, ContainersOfAPodShareOneCard) {
  const auto registry = chart_registry();
  // The second app container may only use the first one's card, which is taken.
  model::Pod pod =
      PodBuilder().app(container("a", {{kGpu, "1"}})).app(container("b", {{kGpu, "1"}})).build();
  NodeFit fit = fit_on(pod, gpu_node(), registry);
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.reason, "1/2 CardNotFoundCustomFilterRule, 1/2 CardTimeSlicingExhausted");
  EXPECT_EQ(fit.failed_container, 1);
  // Init containers are a phase of their own: the app container is not bound to their card.
  pod = PodBuilder().init(container("i", {{kGpu, "1"}})).app(container("a", {{kGpu, "2"}})).build();
  fit = fit_on(pod, gpu_node(), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("Metax-GPU")[0].size(), 1u);
  EXPECT_EQ(fit.devices.at("Metax-GPU")[1].size(), 2u);

  // The reference example: an earlier container on test-0000.
  MetaxGpuBackend b;
  device::DeviceUsage d;
  d.count = 1;
  d.totalmem = 65536;
  d.totalcore = 100;
  d.type = "Metax-GPU";
  device::PodDevices allocated{{"Metax-GPU", {{chosen("test-0000", 100, 65536, "Metax-GPU")}, {}}}};
  const ContainerDeviceRequest r{1, "Metax-GPU", 0, 100, 100};
  const model::Pod p = pod_with({{kGpu, "1"}});
  d.id = "test-0000";
  std::vector<device::DeviceUsage> devs{d};
  EXPECT_TRUE(fit_direct(b, devs, r, p, &allocated, 1).fits);
  devs[0].id = "test-1111";
  auto out = fit_direct(b, devs, r, p, &allocated, 1);
  EXPECT_FALSE(out.fits);
  EXPECT_EQ(out.reasons,
            (device::ReasonCounts{{device::Reason::kCardNotFoundCustomFilterRule, 1}}));
}

TEST(MetaxGpu, ScoreNodeReadsTopologyAnnotations) {
  MetaxGpuBackend b;
  const auto two = device::PodSingleDevice{{chosen("test-metax-0", 100, 65536, "Metax-GPU"),
                                            chosen("test-metax-1", 100, 65536, "Metax-GPU")}};
  const auto one = device::PodSingleDevice{{}, {chosen("test-metax-0", 100, 65536, "Metax-GPU")}};
  Snapshot s =
      snapshot(b, vendor_node("test",
                              {{"metax-tech.com/gpu.topology.losses", R"({"1":100,"2":200})"},
                               {"metax-tech.com/gpu.topology.scores", R"({"1":100,"2":200})"}},
                              {{kGpu, "2"}}));
  EXPECT_EQ(b.score_node(s.usage.devices, two, "binpack"), 1800);
  EXPECT_EQ(b.score_node(s.usage.devices, one, "spread"), 1900);
  EXPECT_EQ(b.score_node(s.usage.devices, one, "other"), 0);
  // No entry for the count (here 0: padding only) reads as 0.
  EXPECT_EQ(b.score_node(s.usage.devices, {{}}, "binpack"), 2000);

  // Only the annotation of the policy counts.
  s = snapshot(b, vendor_node("test", {{"metax-tech.com/gpu.topology.losses", R"({"1":5})"}},
                              {{kGpu, "2"}}));
  EXPECT_EQ(b.score_node(s.usage.devices, one, "binpack"), 1995);
  EXPECT_EQ(b.score_node(s.usage.devices, one, "spread"), 0);
  s = snapshot(
      b, vendor_node("test", {{"metax-tech.com/gpu.topology.losses", "not json"}}, {{kGpu, "2"}}));
  EXPECT_EQ(b.score_node(s.usage.devices, one, "binpack"), 2000);
  s = snapshot(b, gpu_node());
  EXPECT_EQ(b.score_node(s.usage.devices, one, "binpack"), 0);

  // Through the engine: the node score adds it (the idle node's own score is 0).
  const auto registry = chart_registry();
  NodeFit fit =
      fit_on(pod_with({{kGpu, "1"}}),
             gpu_node("2", {{"metax-tech.com/gpu.topology.losses", R"({"1":7})"}}), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.node_score, 1993);
}

TEST(MetaxGpu, TopologyValueDecodesLikeGosMapOfInts) {
  using device::metax::topology_value;
  const std::string losses = R"({"1":0,"2":110,"3":270,"4":540,"5":580,"6":730,"7":930,"8":1240})";
  const int want[] = {0, 110, 270, 540, 580, 730, 930, 1240};
  for (int n = 1; n <= 8; ++n) EXPECT_EQ(topology_value(losses, n), want[n - 1]) << n;
  EXPECT_EQ(topology_value(losses, 9), 0);
  EXPECT_EQ(topology_value(R"({"1":5,"1":6})", 1), 6);    // the last repeated key
  EXPECT_EQ(topology_value(R"({"01":4,"+2":3})", 1), 4);  // strconv.ParseInt keys
  EXPECT_EQ(topology_value(R"({"01":4,"+2":3})", 2), 3);
  EXPECT_EQ(topology_value(R"({"1":null,"2":3})", 2), 3);
  for (const char* bad : {R"({"x":1,"1":5})", R"({"1":1.5})", R"({"1":"5"})", R"({"1":5} x)",
                          R"({"1":9223372036854775808})", "[1]", "null", ""}) {
    EXPECT_EQ(topology_value(bad, 1), 0) << bad;
  }
}

TEST(MetaxGpu, RegistrationBehaviour) {
  MetaxGpuBackend b;
  EXPECT_EQ(b.vendor(), "Metax-GPU");
  EXPECT_EQ(b.health_check(), device::HealthCheck::kCapacity);
  EXPECT_EQ(b.handshake_annotation(), "");
  EXPECT_EQ(b.cleanup_annotation(), "");
  EXPECT_FALSE(b.locks_node());
  EXPECT_THAT(b.managed_resources(), ::testing::ElementsAre("metax-tech.com/gpu"));
}

// --- Metax-SGPU ----------------------------------------------------------------------------

// One element of metax-tech.com/node-gpu-devices.
struct Sdev {
  Sdev(std::string uuid, int count = 16, int compute = 100, int vram = 32768, bool healthy = true,
       std::string qos = "", int zone = 0)
      : uuid(std::move(uuid)),
        count(count),
        compute(compute),
        vram(vram),
        healthy(healthy),
        qos(std::move(qos)),
        zone(zone) {}
  std::string uuid;
  int count;
  int compute;
  int vram;
  bool healthy;
  std::string qos;
  int zone;
};

model::Node sgpu_node(const std::vector<Sdev>& devs) {
  std::string reg = "[";
  for (const Sdev& d : devs) {
    if (reg.size() > 1) reg += ",";
    reg += R"({"uuid":")" + d.uuid + R"(","model":"sgpu","totalDevCount":)" +
           std::to_string(d.count) + R"(,"totalCompute":)" + std::to_string(d.compute) +
           R"(,"totalVRam":)" + std::to_string(d.vram) + R"(,"healthy":)" +
           (d.healthy ? "true" : "false") + R"(,"qosPolicy":")" + d.qos + R"(","linkZone":)" +
           std::to_string(d.zone) + "}";
  }
  return vendor_node("sgpu-node", {{kSgpuRegister, reg + "]"}});
}

model::Pod sgpu_pod(Resources limits, std::map<std::string, std::string> annotations = {}) {
  PodBuilder b;
  b.app(container("c", limits));
  for (auto& [k, v] : annotations) b.annotate(k, v);
  return b.build();
}

// A running sGPU pod; `qos` is its metax-tech.com/sgpu-qos-policy (the webhook gives every
// sGPU pod one), empty for none.
model::Pod sgpu_running(std::string devices, std::string qos = "") {
  std::map<std::string, std::string> a{{std::string(kSgpuAllocated), std::move(devices)}};
  if (!qos.empty()) a[std::string(kQos)] = std::move(qos);
  return running_pod("r", "sgpu-node", std::move(a));
}

TEST(MetaxSgpu, RequestsFollowTheReferenceExamples) {
  MetaxSgpuBackend b;
  auto req = [&](Resources limits) { return b.request_for(container("c", limits)); };
  EXPECT_EQ(req({{kSgpu, "1"}}), (ContainerDeviceRequest{1, "Metax-SGPU", 0, 100, 100}));
  EXPECT_EQ(req({{kSgpu, "1"}, {kVmem, "16"}}),
            (ContainerDeviceRequest{1, "Metax-SGPU", 16384, 0, 100}));
  EXPECT_EQ(req({{kSgpu, "1"}, {kVmem, "1024Mi"}}).memreq, 1024);
  EXPECT_EQ(req({{kSgpu, "1"}, {kVmem, "16Gi"}}).memreq, 16384);
  EXPECT_EQ(req({{kSgpu, "1"}, {kVmem, "500M"}}).memreq, 476);  // bytes, truncated
  EXPECT_EQ(req({{kSgpu, "1"}, {kVmem, "2100001"}}).nums, 0);   // GiB beyond int32 MiB
  EXPECT_EQ(req({{kSgpu, "1"}, {kVcore, "2200000000"}}).nums, 0);
  EXPECT_EQ(req({{kSgpu, "2"}, {kVcore, "50"}}),
            (ContainerDeviceRequest{2, "Metax-SGPU", 0, 100, 50}));
  EXPECT_EQ(req({{kSgpu, "1"}, {kVcore, "120"}}).coresreq, 120);
  // Quirk: Kubernetes prints a bare 1000 as "1k", which HAMi then reads as bytes.
  EXPECT_EQ(req({{kSgpu, "1"}, {kVmem, "1000"}}),
            (ContainerDeviceRequest{1, "Metax-SGPU", 0, 100, 100}));
  EXPECT_EQ(req({{kSgpu, "1"}, {kVmem, "1500"}}).memreq, 1536000);
  EXPECT_EQ(req({{kSgpu, "1"}, {kVmem, "2097151"}}).memreq, 2147482624);
}

TEST(MetaxSgpu, RequestsReadLimitsOnlyAndRefuseOutOfRange) {
  MetaxSgpuBackend b;
  auto req = [&](Resources limits) { return b.request_for(container("c", limits)); };
  EXPECT_EQ(b.request_for(container("c", {}, {{kSgpu, "1"}})).nums, 0);
  // A core or memory in requests only is not read either.
  auto r = b.request_for(container("c", {{kSgpu, "1"}}, {{kVcore, "10"}, {kVmem, "2"}}));
  EXPECT_EQ(r.coresreq, 100);
  EXPECT_EQ(r.memreq, 0);
  for (const char* count : {"0", "-1", "1.5", "2147483648"}) {
    EXPECT_EQ(req({{kSgpu, count}}).nums, 0) << count;
  }
  EXPECT_EQ(req({{kSgpu, "1"}, {kVcore, "-1"}}).nums, 0);
  EXPECT_EQ(req({{kSgpu, "1"}, {kVmem, "-1"}}).nums, 0);
  EXPECT_EQ(req({{kSgpu, "1"}, {kVmem, "-2Gi"}}).nums, 0);
  // Non-integers are ignored: default cores, whole memory.
  r = req({{kSgpu, "1"}, {kVcore, "1.5"}, {kVmem, "0.5"}});
  EXPECT_EQ(r, (ContainerDeviceRequest{1, "Metax-SGPU", 0, 100, 100}));
  EXPECT_EQ(req({{kSgpu, "1"}, {kVcore, "0"}}).coresreq, 0);
}

TEST(MetaxSgpu, RegistrationIsItsOwnJsonSchema) {
  MetaxSgpuBackend b;
  auto found = b.node_devices(vendor_node(
      "n",
      {{kSgpuRegister,
        R"([{"uuid": "GPU-123", "model": "sgpu", "totalDevCount": 16, "totalCompute": 100, "bdf": "0000:44:00.0", "totalVRam" : 32768, "numa": 1, "healthy": true, "qosPolicy": "fixed-share"}])"}}));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  const auto& d = found.devices[0];
  EXPECT_EQ(d.id, "GPU-123");
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.count, 16);
  EXPECT_EQ(d.devmem, 32768);
  EXPECT_EQ(d.devcore, 100);
  EXPECT_EQ(d.numa, 1);
  EXPECT_TRUE(d.health);
  EXPECT_EQ(d.type, "Metax-SGPU");
  EXPECT_EQ(d.device_vendor, "Metax-SGPU");
  EXPECT_EQ(d.custom_info, R"({"LinkZone":0,"Model":"sgpu","QosPolicy":"fixed-share"})");

  // Keys match case-insensitively, unknown keys and nulls are ignored, health defaults to
  // false, the index is the array position.
  found = b.node_devices(vendor_node(
      "n",
      {{kSgpuRegister,
        R"([{"uuid":"a"},{"UUID":"b","TOTALVRAM":8,"LinkZone":3,"numa":null,"x":{"y":[1.5]}}])"}}));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 2u);
  EXPECT_FALSE(found.devices[0].health);
  EXPECT_EQ(found.devices[1].id, "b");
  EXPECT_EQ(found.devices[1].index, 1u);
  EXPECT_EQ(found.devices[1].devmem, 8);
  EXPECT_EQ(found.devices[1].custom_info, R"({"LinkZone":3,"Model":"","QosPolicy":""})");

  // Issue #26: keys fold as Go folds them; U+0130 (dotted capital I) matches the i of "uuid"
  // and "linkZone", which the MetaX reader's own matcher missed.
  found = b.node_devices(vendor_node("n", {{kSgpuRegister,
                                            "[{\"uu\xC4\xB0"
                                            "d\":\"c\",\"l\xC4\xB0nkZone\":2}]"}}));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0].id, "c");
  EXPECT_EQ(found.devices[0].custom_info, R"({"LinkZone":2,"Model":"","QosPolicy":""})");
}

TEST(MetaxSgpu, MalformedAndEmptyRegistrations) {
  MetaxSgpuBackend b;
  auto decode = [&](std::string reg) {
    return b.node_devices(vendor_node("n", {{kSgpuRegister, std::move(reg)}}));
  };
  auto found = b.node_devices(vendor_node("n", {}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "annos not found metax-tech.com/node-gpu-devices");
  for (const char* empty : {"[]", "null"}) {
    found = decode(empty);
    EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent) << empty;
    EXPECT_EQ(found.message, "no sdevice found on node");
  }
  for (const char* bad :
       {"not json", "{}", "[1]", "[null]", R"([{"uuid":1}])", R"([{"totalVRam":1.5}])",
        R"([{"totalVRam":1e3}])", R"([{"totalVRam":2147483648}])", R"([{"healthy":"true"}])",
        R"([{"availableVRam":"x"}])", R"([{"uuid":"a"}] [])"}) {
    found = decode(bad);
    EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed) << bad;
  }
  found = decode(R"([{"uuid":"a","totalVRam":1.5}])");
  EXPECT_EQ(found.message, "metax-tech.com/node-gpu-devices: [0].totalVRam: 1.5 is not an int32");
}

// The registration is read as Go's json.Unmarshal reads it (the Go-JSON reader): struct keys
// fold case, and invalid UTF-8 inside a string becomes U+FFFD instead of failing the text (the
// DOM parse this replaced called such a registration malformed).
TEST(MetaxSgpu, RegistrationsDecodeAsGoDecodesThem) {
  MetaxSgpuBackend b;
  auto found = b.node_devices(
      vendor_node("n", {{kSgpuRegister,
                         "[{\"UUID\":\"GPU-\xff\",\"TOTALVRAM\":1024,\"Healthy\":true,"
                         "\"totalDevCount\":4,\"totalCompute\":100}]"}}));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0].id, "GPU-\xef\xbf\xbd");
  EXPECT_EQ(found.devices[0].devmem, 1024);
}

TEST(MetaxSgpu, FitFollowsTheReferenceExamples) {
  const auto registry = chart_registry();
  const model::Node two = sgpu_node({{"dev-0", 16, 100, 128}, {"dev-1", 16, 100, 128}});
  NodeFit fit = fit_on(sgpu_pod({{kSgpu, "1"}, {kVmem, "64Mi"}, {kVcore, "50"}}), two, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kSgpuAllocated), "dev-1,Metax-SGPU,64,50:;");
  EXPECT_EQ(fit.annotations.at("hami.io/metax-sgpu-devices-to-allocate"),
            "dev-1,Metax-SGPU,64,50:;");

  fit = fit_on(sgpu_pod({{kSgpu, "1"}}), sgpu_node({{"dev-0", 16, 100, 128, false}}), registry);
  EXPECT_EQ(fit.reason, "1/1 CardUnhealthy");
  // No clamp of cores to 100.
  fit = fit_on(sgpu_pod({{kSgpu, "1"}, {kVcore, "120"}}), sgpu_node({{"dev-0"}}), registry);
  EXPECT_EQ(fit.reason, "1/1 CardInsufficientCore");
  // An online pod does not join a device used by an unclassed pod.
  fit = fit_on(sgpu_pod({{kSgpu, "1"}, {kVcore, "10"}}, {{kClass, "online"}}),
               sgpu_node({{"dev-0"}}), registry, {sgpu_running("dev-0,Metax-SGPU,1024,10:;")});
  EXPECT_EQ(fit.reason, "1/1 CardAppClassMismatch");
  EXPECT_EQ(fit.fit_class, FitClass::kConstraintMismatch);
}

TEST(MetaxSgpu, TypeIsCheckedBeforeHealth) {
  MetaxSgpuBackend b;
  device::DeviceUsage d;
  d.id = "dev-0";
  d.count = 16;
  d.totalmem = 128;
  d.totalcore = 100;
  d.type = "Metax-SGPU";
  d.health = false;
  std::vector<device::DeviceUsage> devs{d};
  const model::Pod pod = sgpu_pod({{kSgpu, "1"}});
  auto out = fit_direct(b, devs, {1, "Metax-GPU", 0, 100, 100}, pod);
  EXPECT_EQ(out.reasons, (device::ReasonCounts{{device::Reason::kCardTypeMismatch, 1}}));
  out = fit_direct(b, devs, {1, "Metax-SGPU", 0, 100, 100}, pod);
  EXPECT_EQ(out.reasons, (device::ReasonCounts{{device::Reason::kCardUnhealthy, 1}}));
}

TEST(MetaxSgpu, SharedDevicesMustRunThePodsQosPolicy) {
  const auto registry = chart_registry();
  const model::Node node = sgpu_node({{"GPU-1", 16, 100, 32768, true, "fixed-share"}});
  // A running fixed-share pod without cores: the device is shared, its compute free.
  const std::vector<model::Pod> running = {
      sgpu_running("GPU-1,Metax-SGPU,1024,0:;", "fixed-share")};
  auto fit = [&](std::map<std::string, std::string> annotations, const char* cores = "50") {
    return fit_on(sgpu_pod({{kSgpu, "1"}, {kVcore, cores}, {kVmem, "1"}}, std::move(annotations)),
                  node, registry, running);
  };
  EXPECT_EQ(fit({{kQos, "best-effort"}}).reason, "1/1 CardQosPolicyMismatch");
  EXPECT_EQ(fit({}).reason, "1/1 CardQosPolicyMismatch");
  EXPECT_TRUE(fit({{kQos, "fixed-share"}}).fits);
  // A whole-device request skips the QoS check and then finds the device shared.
  EXPECT_EQ(fit({{kQos, "best-effort"}}, "100").reason, "1/1 ExclusiveDeviceAllocateConflict");
  // An idle device switches to any QoS.
  const model::Pod best_effort =
      sgpu_pod({{kSgpu, "1"}, {kVcore, "50"}, {kVmem, "1"}}, {{kQos, "best-effort"}});
  EXPECT_TRUE(fit_on(best_effort, node, registry).fits);
  // A device reporting an empty QoS runs what its pods asked for (HAMi's cache after it placed
  // them; deviation 25): here fixed-share.
  EXPECT_EQ(fit_on(best_effort, sgpu_node({{"GPU-1"}}), registry, running).reason,
            "1/1 CardQosPolicyMismatch");
}

TEST(MetaxSgpu, EarlierAppContainersRewriteTheDeviceQos) {
  const auto registry = chart_registry();
  // totalCompute 200: a 100-core container does not take the device exclusively.
  const model::Node node = sgpu_node({{"GPU-1", 16, 200, 32768, true, "fixed-share"}});
  const std::vector<model::Pod> running = {
      sgpu_running("GPU-1,Metax-SGPU,1024,30:;", "fixed-share")};
  // The 100-core container skips the QoS check and leaves the device with no QoS, which
  // lets the second app container (checked) in...
  model::Pod pod = PodBuilder()
                       .app(container("a", {{kSgpu, "1"}, {kVcore, "100"}, {kVmem, "1"}}))
                       .app(container("b", {{kSgpu, "1"}, {kVcore, "10"}, {kVmem, "1"}}))
                       .annotate(kQos, "best-effort")
                       .build();
  NodeFit fit = fit_on(pod, node, registry, running);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kSgpuAllocated),
            "GPU-1,Metax-SGPU,1024,100:;GPU-1,Metax-SGPU,1024,10:;");
  // ...but init containers are fitted on fresh copies each: the second one sees fixed-share.
  pod = PodBuilder()
            .init(container("a", {{kSgpu, "1"}, {kVcore, "100"}, {kVmem, "1"}}))
            .init(container("b", {{kSgpu, "1"}, {kVcore, "10"}, {kVmem, "1"}}))
            .app(plain_container("main"))
            .annotate(kQos, "best-effort")
            .build();
  fit = fit_on(pod, node, registry, running);
  EXPECT_EQ(fit.reason, "1/1 CardQosPolicyMismatch");
  EXPECT_EQ(fit.failed_container, 1);
  // An idle device: the first container's QoS becomes the device's for the second.
  pod = PodBuilder()
            .app(container("a", {{kSgpu, "1"}, {kVcore, "10"}, {kVmem, "1"}}))
            .app(container("b", {{kSgpu, "1"}, {kVcore, "10"}, {kVmem, "1"}}))
            .annotate(kQos, "best-effort")
            .build();
  fit = fit_on(pod, node, registry);
  EXPECT_TRUE(fit.fits) << fit.reason;
}

TEST(MetaxSgpu, OnlinePodsSkipCoreChecksAndReserveNone) {
  const auto registry = chart_registry();
  NodeFit fit = fit_on(sgpu_pod({{kSgpu, "1"}, {kVcore, "120"}}, {{kClass, "online"}}),
                       sgpu_node({{"GPU-1"}}), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kSgpuAllocated), "GPU-1,Metax-SGPU,32768,0:;");
  EXPECT_EQ(fit.annotations.at("metax-tech.com/gpu-devices-allocated"),
            R"([[{"uuid":"GPU-1","vRam":32768}]])");
}

TEST(MetaxSgpu, CapacityChecks) {
  const auto registry = chart_registry();
  auto one = [](Sdev d) { return sgpu_node({std::move(d)}); };
  const auto pod = sgpu_pod({{kSgpu, "1"}, {kVcore, "10"}, {kVmem, "64Mi"}});
  const std::vector<model::Pod> running = {sgpu_running("GPU-1,Metax-SGPU,1000,100:;")};
  EXPECT_EQ(fit_on(pod, one({"GPU-1", 1}), registry, running).reason,
            "1/1 CardTimeSlicingExhausted");
  EXPECT_EQ(fit_on(pod, one({"GPU-1", 4, 200, 1024}), registry, running).reason,
            "1/1 CardInsufficientMemory");
  EXPECT_EQ(fit_on(sgpu_pod({{kSgpu, "1"}, {kVcore, "0"}, {kVmem, "1"}}), one({"GPU-1"}), registry,
                   running)
                .reason,
            "1/1 CardComputeUnitsExhausted");
  model::Pod mutex =
      sgpu_pod({{kSgpu, "1"}, {kVcore, "10"}}, {{"hami.io/gpu-scheduler-policy", "mutex"}});
  EXPECT_EQ(fit_on(mutex, one({"GPU-1", 4, 200}), registry, running).reason,
            "1/1 ExclusiveDeviceAllocateConflict");

  const model::Node two = sgpu_node({{"GPU-1"}, {"GPU-2", 16, 100, 32768, false}});
  EXPECT_EQ(fit_on(sgpu_pod({{kSgpu, "2"}}), two, registry).reason,
            "1/2 AllocatedCardsInsufficientRequest, 1/2 CardUnhealthy");
  const model::Node idle = sgpu_node({{"GPU-1"}, {"GPU-2"}});
  NodeFit fit =
      fit_on(sgpu_pod({{kSgpu, "1"}}, {{"metax-tech.com/use-gpuuuid", "GPU-1"}}), idle, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("Metax-SGPU")[0][0].uuid, "GPU-1");
  EXPECT_EQ(fit_on(sgpu_pod({{kSgpu, "1"}}, {{"metax-tech.com/nouse-gpuuuid", "GPU-1, GPU-2"}}),
                   idle, registry)
                .reason,
            "2/2 CardUuidMismatch");
}

TEST(MetaxSgpu, WholeDevicesPreferOneMetaLinkZone) {
  const auto registry = chart_registry();
  // Scan order (from the last device): GPU-2, GPU-1, GPU-5.
  const model::Node node = sgpu_node({{"GPU-5", 16, 100, 32768, true, "", 2},
                                      {"GPU-1", 16, 100, 32768, true, "", 1},
                                      {"GPU-2", 16, 100, 32768, true, "", 1}});
  auto first = [&](const model::Pod& pod) {
    NodeFit fit = fit_on(pod, node, registry);
    EXPECT_TRUE(fit.fits) << fit.reason;
    return fit.fits ? fit.devices.at("Metax-SGPU")[0][0].uuid : std::string();
  };
  EXPECT_EQ(first(sgpu_pod({{kSgpu, "1"}})), "GPU-5");  // the smallest zone holding one
  EXPECT_EQ(first(sgpu_pod({{kSgpu, "1"}, {kVcore, "50"}})), "GPU-2");
  EXPECT_EQ(first(sgpu_pod({{kSgpu, "1"}}, {{kClass, "offline"}})), "GPU-2");
  NodeFit fit = fit_on(sgpu_pod({{kSgpu, "2"}}), node, registry);
  ASSERT_TRUE(fit.fits);
  EXPECT_EQ(fit.annotations.at(kSgpuAllocated),
            "GPU-2,Metax-SGPU,32768,100:GPU-1,Metax-SGPU,32768,100:;");
}

TEST(MetaxSgpu, PrioritizeExclusiveDevices) {
  using device::metax::prioritize_exclusive;
  using device::metax::SgpuCandidate;
  std::vector<SgpuCandidate> c = {{"GPU-1", 1}, {"GPU-2", 1}, {"GPU-5", 2}};
  EXPECT_THAT(prioritize_exclusive(c, 1), ::testing::ElementsAre(2));
  c = {{"GPU-1", 1}, {"GPU-2", 1}, {"GPU-3", 2}, {"GPU-4", 2}, {"GPU-5", 2}};
  EXPECT_THAT(prioritize_exclusive(c, 2), ::testing::ElementsAre(0, 1));
  EXPECT_THAT(prioritize_exclusive(c, 3), ::testing::ElementsAre(2, 3, 4));
  // Across zones (smallest first), then devices without a zone, per zone value.
  c = {{"A", 1}, {"B", 0}, {"C", 2}, {"D", -1}, {"E", 0}};
  EXPECT_THAT(prioritize_exclusive(c, 4), ::testing::ElementsAre(0, 2, 1, 4));
  EXPECT_THAT(prioritize_exclusive(c, 5), ::testing::ElementsAre(0, 1, 2, 3, 4));
}

TEST(MetaxSgpu, PrioritizeOnlineDevices) {
  using device::metax::prioritize_online;
  using device::metax::SgpuCandidate;
  const std::vector<SgpuCandidate> c = {
      {"X", 0, 0, 2}, {"Y", 0, 1, 0}, {"Z", 0, 0, 0}, {"W", 0, 0, 1}, {"V", 0, 1, 3}};
  // Fewer online first (then fewer offline), devices holding only offline pods last.
  EXPECT_THAT(prioritize_online(c, 5), ::testing::ElementsAre(2, 1, 4, 3, 0));
  EXPECT_THAT(prioritize_online(c, 1), ::testing::ElementsAre(2));
}

TEST(MetaxSgpu, AppClassRules) {
  using device::metax::app_class_allows;
  using device::metax::PodOnDevice;
  const std::vector<PodOnDevice> none;
  const std::vector<PodOnDevice> online = {{"online", "", 0}};
  const std::vector<PodOnDevice> offline = {{"offline", "best-effort", 10}};
  const std::vector<PodOnDevice> plain = {{"", "best-effort", 10}};
  for (const char* c : {"", "online", "offline"}) EXPECT_TRUE(app_class_allows(c, 0, online));
  EXPECT_TRUE(app_class_allows("", 1, plain));
  EXPECT_TRUE(app_class_allows("", 1, none));
  EXPECT_FALSE(app_class_allows("online", 1, plain));
  EXPECT_FALSE(app_class_allows("", 1, online));  // unclassed pod on an online pod's device
  EXPECT_TRUE(app_class_allows("online", 1, online));
  EXPECT_FALSE(app_class_allows("offline", 1, online));
  EXPECT_TRUE(app_class_allows("online", 1, offline));
  EXPECT_TRUE(app_class_allows("offline", 1, offline));
  EXPECT_TRUE(app_class_allows("other", 1, plain));  // an unknown class is unclassed
}

TEST(MetaxSgpu, QosRulesAndTheStatelessCache) {
  using device::metax::device_qos;
  using device::metax::PodOnDevice;
  using device::metax::qos_allows;
  EXPECT_TRUE(qos_allows("best-effort", 50, 0, "fixed-share"));
  EXPECT_TRUE(qos_allows("best-effort", 100, 1, "fixed-share"));
  EXPECT_TRUE(qos_allows("best-effort", 50, 1, ""));
  EXPECT_TRUE(qos_allows("best-effort", 50, 1, "best-effort"));
  EXPECT_FALSE(qos_allows("best-effort", 50, 1, "fixed-share"));
  // The reference's cache example (a best-effort pod on three devices): GPU-456 and GPU-789
  // (a whole device) are expected to change, GPU-123 already runs best-effort.
  const std::vector<PodOnDevice> half = {{"", "best-effort", 50}};
  const std::vector<PodOnDevice> whole = {{"", "best-effort", 100}};
  EXPECT_EQ(device_qos("best-effort", half, std::nullopt), "best-effort");
  EXPECT_EQ(device_qos("burst-share", half, std::nullopt), "best-effort");
  EXPECT_EQ(device_qos("best-effort", whole, std::nullopt), "");
  // Online pods record nothing; the cache outranks this pod's own rewrite.
  const std::vector<PodOnDevice> online = {{"online", "best-effort", 0}};
  EXPECT_EQ(device_qos("fixed-share", online, std::nullopt), "fixed-share");
  EXPECT_EQ(device_qos("fixed-share", {}, std::string("best-effort")), "best-effort");
  EXPECT_EQ(device_qos("fixed-share", half, std::string("burst-share")), "best-effort");
  EXPECT_EQ(device_qos("fixed-share", {}, std::nullopt), "fixed-share");
}

TEST(MetaxSgpu, AnnotationsIncludeTheMetaxJson) {
  MetaxSgpuBackend b;
  std::map<std::string, std::string> annotations;
  b.allocation_annotations(
      {{chosen("GPU-a0", 50, 10), chosen("GPU-a1", 30, 1024)}, {chosen("GPU-a3", 20, 10240)}},
      annotations);
  EXPECT_EQ(
      annotations.at("metax-tech.com/gpu-devices-allocated"),
      R"([[{"uuid":"GPU-a0","compute":50,"vRam":10},{"uuid":"GPU-a1","compute":30,"vRam":1024}],[{"uuid":"GPU-a3","compute":20,"vRam":10240}]])");
  EXPECT_EQ(annotations.at(kSgpuAllocated),
            "GPU-a0,Metax-SGPU,10,50:GPU-a1,Metax-SGPU,1024,30:;GPU-a3,Metax-SGPU,10240,20:;");
  EXPECT_EQ(annotations.at("hami.io/metax-sgpu-devices-to-allocate"),
            annotations.at(kSgpuAllocated));
  // predicate-time is the scheduling time in Unix nanoseconds, given by the live path only.
  EXPECT_FALSE(annotations.contains("metax-tech.com/predicate-time"));
  annotations.clear();
  b.annotate_allocation({{chosen("GPU-a0", 50, 10)}}, {.unix_nanos = 1700000000123456789},
                        annotations);
  EXPECT_EQ(annotations.at("metax-tech.com/predicate-time"), "1700000000123456789");

  annotations.clear();
  b.allocation_annotations({{}, {chosen("GPU-1", 0, 0)}}, annotations);
  EXPECT_EQ(annotations.at("metax-tech.com/gpu-devices-allocated"), R"([[],[{"uuid":"GPU-1"}]])");
  annotations.clear();
  b.allocation_annotations({}, annotations);
  EXPECT_TRUE(annotations.empty());
}

TEST(MetaxSgpu, ScoreHelpers) {
  using device::metax::link_score;
  using device::metax::LinkDevice;
  using device::metax::score_exclusive;
  using device::metax::score_online_device;
  const std::vector<LinkDevice> zone1 = {{"GPU-1", 1}, {"GPU-2", 1}, {"GPU-3", 1}, {"GPU-4", 1}};
  const std::vector<LinkDevice> gpu4 = {{"GPU-4", 1}};
  const std::vector<LinkDevice> gpu34 = {{"GPU-4", 1}, {"GPU-3", 1}};
  EXPECT_EQ(link_score(zone1), 60);
  EXPECT_EQ(score_exclusive(gpu4, zone1), -30);  // 10x0 - (60 - 0 - 30)
  EXPECT_EQ(score_exclusive(gpu4, gpu4), 0);
  EXPECT_EQ(score_exclusive(gpu34, zone1), 60);  // 10x10 - (60 - 10 - 10)
  // The same UUID twice makes no link; zone 0 links nothing, negative zones do.
  const std::vector<LinkDevice> twice = {{"a", 1}, {"a", 1}, {"b", 1}};
  const std::vector<LinkDevice> zero = {{"a", 0}, {"b", 0}};
  const std::vector<LinkDevice> negative = {{"a", -1}, {"b", -1}};
  EXPECT_EQ(link_score(twice), 20);
  EXPECT_EQ(link_score(zero), 0);
  EXPECT_EQ(link_score(negative), 10);
  EXPECT_EQ(score_online_device(0, 2), -200);
  EXPECT_EQ(score_online_device(1, 2), -24);
  EXPECT_EQ(score_online_device(0, 0), 0);
}

TEST(MetaxSgpu, ScoreIsPolicyNeutralTimesTenThousand) {
  MetaxConfig config;
  config.sgpu_topology_aware = true;
  MetaxSgpuBackend b(config);
  Snapshot s = snapshot(b, sgpu_node({{"GPU-1", 16, 100, 32768, true, "", 1},
                                      {"GPU-2", 16, 100, 32768, true, "", 1},
                                      {"GPU-3", 16, 100, 32768, true, "", 1},
                                      {"GPU-4", 16, 100, 32768, true, "", 1}}));
  const device::PodSingleDevice whole = {{chosen("GPU-4")}};
  EXPECT_EQ(b.score_node(s.usage.devices, whole, "binpack"), -300000);
  EXPECT_EQ(b.score_node(s.usage.devices, whole, "spread"), 300000);
  EXPECT_EQ(b.score_node(s.usage.devices, {{chosen("GPU-4", 50)}}, "binpack"), 0);
  EXPECT_EQ(MetaxSgpuBackend().score_node(s.usage.devices, whole, "binpack"), 0);
  for (int i = 0; i < 3; ++i) s.usage.devices[i].used = 1;
  EXPECT_EQ(b.score_node(s.usage.devices, whole, "binpack"), 0);

  // Through the engine, with the setting from the device config.
  const auto registry = registry_from_yaml(
      "metax:\n  resourceVCountName: metax-tech.com/sgpu\n"
      "  sgpuTopologyAware: true\n");
  NodeFit fit = fit_on(sgpu_pod({{kSgpu, "2"}}),
                       sgpu_node({{"GPU-1", 16, 100, 32768, true, "", 1},
                                  {"GPU-2", 16, 100, 32768, true, "", 1},
                                  {"GPU-3", 16, 100, 32768, true, "", 1},
                                  {"GPU-4", 16, 100, 32768, true, "", 1}}),
                       registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.node_score, 600000);
}

// HAMi reads the pod's class and topology setting from the annotations its Fit stored in the
// chosen devices; score_node() gets them as the pod prepare() read.
TEST(MetaxSgpu, AnOnlinePodIsScoredByTheClassedPodsOnItsDevices) {
  MetaxSgpuBackend b;
  Snapshot s = snapshot(
      b,
      sgpu_node({{"GPU-1", 16, 100, 32768}, {"GPU-2", 16, 100, 32768}, {"GPU-3", 16, 100, 32768}}));
  auto on_device = [](std::string cls) {
    auto a = std::make_shared<std::map<std::string, std::string, std::less<>>>();
    if (!cls.empty()) (*a)[kClass] = std::move(cls);
    return device::DevicePod{std::move(a), 10};
  };
  s.usage.devices[0].pods = {on_device("offline"), on_device("offline")};  // -100 x 2
  s.usage.devices[1].pods = {on_device("online"), on_device("offline")};   // -20 - 2
  s.usage.devices[2].pods = {on_device("online"), on_device("online"), on_device("")};
  for (auto& d : s.usage.devices) d.used = static_cast<int64_t>(d.pods.size());
  const auto online = b.prepare(sgpu_pod({{kSgpu, "1"}}, {{kClass, "online"}}));
  const device::PodSingleDevice two = {{chosen("GPU-1", 0)}, {chosen("GPU-2", 0)}};
  EXPECT_EQ(b.score_node(s.usage.devices, two, "binpack", online.get()), -2220000);
  EXPECT_EQ(b.score_node(s.usage.devices, two, "spread", online.get()), 2220000);
  // A device taken by two containers counts once; devices not taken do not count.
  const device::PodSingleDevice twice = {{chosen("GPU-3", 0)}, {chosen("GPU-3", 0)}};
  EXPECT_EQ(b.score_node(s.usage.devices, twice, "binpack", online.get()), -400000);
  // No device of this vendor (the pod is scored for another vendor's devices): nothing.
  EXPECT_EQ(b.score_node(s.usage.devices, {{}}, "binpack", online.get()), 0);
  // An offline or unclassed pod is not scored by classes.
  const auto offline = b.prepare(sgpu_pod({{kSgpu, "1"}}, {{kClass, "offline"}}));
  EXPECT_EQ(b.score_node(s.usage.devices, two, "binpack", offline.get()), 0);
  EXPECT_EQ(b.score_node(s.usage.devices, two, "binpack"), 0);
}

TEST(MetaxSgpu, ThePodsTopologyAnnotationOverridesTheSetting) {
  constexpr const char* kTopology = "metax-tech.com/sgpu-topology-aware";
  MetaxConfig aware;
  aware.sgpu_topology_aware = true;
  const MetaxSgpuBackend on(aware);
  const MetaxSgpuBackend off;
  Snapshot s = snapshot(off, sgpu_node({{"GPU-1", 16, 100, 32768, true, "", 1},
                                        {"GPU-2", 16, 100, 32768, true, "", 1},
                                        {"GPU-3", 16, 100, 32768, true, "", 1},
                                        {"GPU-4", 16, 100, 32768, true, "", 1}}));
  const device::PodSingleDevice whole = {{chosen("GPU-4")}};
  auto with = [&](const MetaxSgpuBackend& b, std::string value) {
    const auto pod = b.prepare(sgpu_pod({{kSgpu, "1"}}, {{kTopology, std::move(value)}}));
    return b.score_node(s.usage.devices, whole, "binpack", pod.get());
  };
  // strconv.ParseBool's spellings turn it on or off; anything else leaves the setting.
  for (const char* yes : {"true", "1", "t", "T", "TRUE", "True"})
    EXPECT_EQ(with(off, yes), -300000);
  for (const char* no : {"false", "0", "f", "F", "FALSE", "False"}) EXPECT_EQ(with(on, no), 0);
  EXPECT_EQ(with(off, "yes"), 0);
  EXPECT_EQ(with(on, "yes"), -300000);
  // Only whole devices are scored by topology.
  const auto pod = off.prepare(sgpu_pod({{kSgpu, "1"}}, {{kTopology, "true"}}));
  EXPECT_EQ(off.score_node(s.usage.devices, {{chosen("GPU-4", 50)}}, "binpack", pod.get()), 0);

  // Through the engine: the setting on, the pod's annotation off.
  const auto registry = registry_from_yaml(
      "metax:\n  resourceVCountName: metax-tech.com/sgpu\n"
      "  sgpuTopologyAware: true\n");
  const model::Node node = sgpu_node({{"GPU-1", 16, 100, 32768, true, "", 1},
                                      {"GPU-2", 16, 100, 32768, true, "", 1},
                                      {"GPU-3", 16, 100, 32768, true, "", 1},
                                      {"GPU-4", 16, 100, 32768, true, "", 1}});
  NodeFit fit = fit_on(sgpu_pod({{kSgpu, "2"}}, {{kTopology, "false"}}), node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.node_score, 0);
}

TEST(MetaxSgpu, RunningPodsUseSlotsMemoryAndCores) {
  const auto registry = chart_registry();
  const model::Node node = sgpu_node({{"GPU-1", 2, 100, 4096}});
  std::vector<model::Pod> running = {sgpu_running("GPU-1,Metax-SGPU,3000,60:;")};
  EXPECT_EQ(
      fit_on(sgpu_pod({{kSgpu, "1"}, {kVcore, "50"}, {kVmem, "1Gi"}}), node, registry, running)
          .reason,
      "1/1 CardInsufficientCore");
  EXPECT_TRUE(
      fit_on(sgpu_pod({{kSgpu, "1"}, {kVcore, "40"}, {kVmem, "1000Mi"}}), node, registry, running)
          .fits);
  EXPECT_EQ(
      fit_on(sgpu_pod({{kSgpu, "1"}, {kVcore, "40"}, {kVmem, "2Gi"}}), node, registry, running)
          .reason,
      "1/1 CardInsufficientMemory");
}

TEST(MetaxSgpu, Admission) {
  using device::metax::sgpu_admission;
  const model::Quantity one = model::Quantity::from_int(1);
  const model::Quantity two = model::Quantity::from_int(2);
  auto admit = [](model::StringMap a, const model::Quantity& q) { return sgpu_admission(a, q); };
  auto r = admit({}, one);
  ASSERT_TRUE(r);
  EXPECT_TRUE(*r);  // best-effort is added
  r = admit({{kQos, "fixed-share"}}, two);
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
  r = admit({{kQos, "best-effortx"}}, one);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "metax-tech.com/sgpu-qos-policy must be set one of [best-effort, fixed-share, "
            "burst-share]");
  r = admit({{kClass, "oNLine"}}, one);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "metax-tech.com/sgpu-app-class must be set one of [online, offline]");
  r = admit({{kClass, "online"}}, two);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "app-class pod must request single device");
  r = admit({{kClass, "online"}, {kQos, "bad"}}, one);  // QoS is not checked for online
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
  r = admit({{kClass, "offline"}}, one);
  ASSERT_TRUE(r);
  EXPECT_TRUE(*r);
}

TEST(MetaxSgpu, RegistrationBehaviour) {
  MetaxSgpuBackend b;
  EXPECT_EQ(b.vendor(), "Metax-SGPU");
  EXPECT_EQ(b.health_check(), device::HealthCheck::kRegistered);
  EXPECT_EQ(b.handshake_annotation(), "");
  EXPECT_EQ(b.cleanup_annotation(), "");
  EXPECT_TRUE(b.locks_node());
  EXPECT_EQ(b.resource_names().memory_factor, 1024);
  EXPECT_THAT(b.managed_resources(),
              ::testing::UnorderedElementsAre("metax-tech.com/sgpu", "metax-tech.com/vmemory",
                                              "metax-tech.com/vcore"));
}

TEST(Metax, DeviceConfigSection) {
  const auto registry = registry_from_yaml(R"(metax:
  resourceCountName: example.com/gpu
  resourceVCountName: example.com/sgpu
  resourceVMemoryName: example.com/vmem
  resourceVCoreName: example.com/vcore
  sgpuTopologyAware: true
)");
  const auto* gpu = registry.find("Metax-GPU");
  const auto* sgpu = registry.find("Metax-SGPU");
  ASSERT_NE(gpu, nullptr);
  ASSERT_NE(sgpu, nullptr);
  EXPECT_EQ(gpu->resource_names().count, "example.com/gpu");
  EXPECT_EQ(gpu->request_for(container("c", {{"example.com/gpu", "1"}})).nums, 1);
  EXPECT_EQ(
      sgpu->request_for(container(
          "c", {{"example.com/sgpu", "1"}, {"example.com/vmem", "2"}, {"example.com/vcore", "5"}})),
      (ContainerDeviceRequest{1, "Metax-SGPU", 2048, 0, 5}));
  // The chart defaults name both.
  const auto chart = chart_registry();
  ASSERT_NE(chart.find("Metax-GPU"), nullptr);
  EXPECT_EQ(chart.find("Metax-SGPU")->resource_names().count, "metax-tech.com/sgpu");
  // A file without a metax section leaves the names empty, as HAMi does.
  const auto other = registry_from_yaml("nvidia: {}\n");
  ASSERT_NE(other.find("Metax-GPU"), nullptr);
  EXPECT_EQ(other.find("Metax-GPU")->request_for(container("c", {{kGpu, "1"}})).nums, 0);
  EXPECT_EQ(other.find("Metax-SGPU")->request_for(container("c", {{kSgpu, "1"}})).nums, 0);
  EXPECT_EQ(other.find("Metax-GPU")->node_devices(gpu_node()).state,
            device::NodeDevices::State::kAbsent);
  auto bad = device::parse_device_config("metax:\n  sgpuTopologyAware: maybe\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              ::testing::HasSubstr("metax.sgpuTopologyAware: expected a boolean at line 2"));
}

}  // namespace metax_test
}  // namespace hamisim::fit::testing
