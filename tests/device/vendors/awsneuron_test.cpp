// AWS Neuron (reference: hami-other-vendors.md B.3), from the reference's examples: requests,
// capacity discovery with the instance type, topology windows, the single-device core masks,
// annotations and the `awsneuron:` section.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/awsneuron/awsneuron_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace awsneuron_test {

using device::ContainerDeviceRequest;
using device::NodeDevices;
using device::awsneuron::AwsNeuronBackend;
using ::testing::HasSubstr;

constexpr const char* kNeuron = "aws.amazon.com/neuron";
constexpr const char* kCore = "aws.amazon.com/neuroncore";
constexpr const char* kAllocated = "hami.io/aws-neuron-devices-allocated";

model::Node neuron_node(std::string name, std::string type, std::string devices,
                        std::string cores) {
  model::Node n = vendor_node(std::move(name), {}, {{kNeuron, devices}, {kCore, cores}});
  if (!type.empty()) n.metadata.labels["node.kubernetes.io/instance-type"] = std::move(type);
  return n;
}

// Usage rows as HAMi's tests build them: positions = indexes, the instance type in custominfo.
struct Devices {
  std::vector<std::string> custom;  // owns the custominfo texts
  std::vector<device::DeviceUsage> usage;
  std::vector<device::DeviceUsage*> ptrs;
};
Devices devices_of(size_t n, std::string node_type, int32_t cores = 2) {
  Devices out;
  out.custom.push_back(R"({"AWSNodeType":")" + node_type + R"("})");
  out.usage.resize(n);
  for (size_t i = 0; i < n; ++i) {
    device::DeviceUsage& d = out.usage[i];
    d.id = "dev-" + std::to_string(i);
    d.index = i;
    d.count = cores;
    d.totalcore = (1 << cores) - 1;
    d.type = "AWSNeuron";
    d.vendor = "AWSNeuron";
    d.custom_info = &out.custom[0];
  }
  for (auto& d : out.usage) out.ptrs.push_back(&d);
  return out;
}

DirectFit direct_fit(const AwsNeuronBackend& b, Devices& devs, const ContainerDeviceRequest& r,
                     const model::Pod& pod = PodBuilder().app(plain_container("c")).build(),
                     std::string_view policy = "spread") {
  return fit::testing::direct_fit(b, devs.usage, r, pod, policy);
}

TEST(AwsNeuron, RequestsFollowTheReferenceExamples) {
  AwsNeuronBackend b;
  EXPECT_EQ(b.request_for(container("c", {{kNeuron, "1"}})),
            (ContainerDeviceRequest{1, "AWSNeuron", 0, 0, 2}));
  EXPECT_EQ(b.request_for(container("c", {{kCore, "1"}})),
            (ContainerDeviceRequest{1, "AWSNeuron", 0, 0, 1}));
  EXPECT_EQ(b.request_for(container("c", {{kCore, "2"}})),
            (ContainerDeviceRequest{1, "AWSNeuron", 0, 0, 2}));
  // More than one device's cores: a multiple of 2, spread over whole devices.
  EXPECT_EQ(b.request_for(container("c", {{kCore, "3"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{kCore, "6"}})),
            (ContainerDeviceRequest{3, "AWSNeuron", 0, 0, 2}));
  EXPECT_EQ(b.request_for(container("c", {{kCore, "4"}})),
            (ContainerDeviceRequest{2, "AWSNeuron", 0, 0, 2}));
  EXPECT_EQ(b.request_for(container("c", {{kCore, "4294967294"}})).nums, 2147483647);
  EXPECT_EQ(b.request_for(container("c", {{kCore, "4294967296"}})).nums, 0);
  // Invalid counts: no request, even when a valid core count is also given.
  for (const char* bad : {"0", "-1", "1.5", "2147483648"}) {
    EXPECT_EQ(b.request_for(container("c", {{kNeuron, bad}, {kCore, "1"}})).nums, 0) << bad;
  }
  EXPECT_EQ(b.request_for(container("c", {{kNeuron, "2147483647"}})).nums, 2147483647);
  // Limits, else requests.
  EXPECT_EQ(b.request_for(container("c", {}, {{kCore, "1"}})).coresreq, 1);
  EXPECT_EQ(b.request_for(container("c", {{"cpu", "1"}})).nums, 0);
}

TEST(AwsNeuron, DiscoveryFromCapacityAndInstanceType) {
  AwsNeuronBackend b;
  auto found = b.node_devices(neuron_node("test", "inf2", "1", "2"));
  ASSERT_EQ(found.state, NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  const auto& d = found.devices[0];
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.id, "test-AWSNeuron-0");
  EXPECT_EQ(d.count, 2);
  EXPECT_EQ(d.devmem, 0);
  EXPECT_EQ(d.devcore, 3);
  EXPECT_EQ(d.type, "AWSNeuron");
  EXPECT_EQ(d.numa, 0);
  EXPECT_TRUE(d.health);
  EXPECT_EQ(d.device_vendor, "AWSNeuron");
  EXPECT_EQ(d.custom_info, R"({"AWSNodeType":"inf2"})");

  // Each node keeps its own cores per device (HAMi: the first node's, for every node).
  found = b.node_devices(neuron_node("trn", "trn2.48xlarge", "2", "16"));
  ASSERT_EQ(found.devices.size(), 2u);
  EXPECT_EQ(found.devices[1].id, "trn-AWSNeuron-1");
  EXPECT_EQ(found.devices[1].count, 8);
  EXPECT_EQ(found.devices[1].devcore, 255);
  // No label: an empty instance type. No core capacity: no cores.
  found = b.node_devices(neuron_node("n", "", "1", "0"));
  EXPECT_EQ(found.devices[0].custom_info, R"({"AWSNodeType":""})");
  EXPECT_EQ(found.devices[0].count, 0);
  EXPECT_EQ(found.devices[0].devcore, 0);
  // Floor division; from 32 cores on, the 32-bit mask is all ones.
  EXPECT_EQ(b.node_devices(neuron_node("n", "x", "2", "5")).devices[0].count, 2);
  EXPECT_EQ(b.node_devices(neuron_node("n", "x", "1", "31")).devices[0].devcore, 2147483647);
  EXPECT_EQ(b.node_devices(neuron_node("n", "x", "1", "64")).devices[0].devcore, -1);

  found = b.node_devices(vendor_node("n", {}));
  EXPECT_EQ(found.state, NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "device not found aws.amazon.com/neuron");
  EXPECT_EQ(b.node_devices(neuron_node("n", "x", "0", "2")).state, NodeDevices::State::kAbsent);
  EXPECT_EQ(b.node_devices(neuron_node("n", "x", "-1", "2")).message, "no gpu found on node");
  found = b.node_devices(neuron_node("n", "x", "5000", "2"));
  EXPECT_EQ(found.state, NodeDevices::State::kMalformed);
  EXPECT_THAT(found.message, HasSubstr("more than the 1024 devices"));
}

// The instance type is read from a label, so a cached description must not be shared by
// nodes that differ only in that label.
TEST(AwsNeuron, CachedDescriptionsFollowTheInstanceTypeLabel) {
  const auto registry = chart_registry();
  RegisteredDescriber provider(registry);
  auto inf = provider.describe(neuron_node("n", "inf2", "1", "2"));
  auto trn = provider.describe(neuron_node("n", "trn1", "1", "2"));
  ASSERT_EQ(inf->state, DescriptionResult::State::kOk) << inf->message;
  ASSERT_EQ(trn->state, DescriptionResult::State::kOk) << trn->message;
  EXPECT_EQ(inf->description.devices[0].custom_info, R"({"AWSNodeType":"inf2"})");
  EXPECT_EQ(trn->description.devices[0].custom_info, R"({"AWSNodeType":"trn1"})");
}

TEST(AwsNeuron, TopologyWindows) {
  auto positions = [](std::vector<size_t> v) { return v; };
  Devices inf = devices_of(16, "inf2");
  EXPECT_EQ(AwsNeuronBackend::select_window(inf.ptrs, 16).size(), 16u);
  // Trainium: aligned blocks of 1, 4, 8 or 16.
  Devices trn = devices_of(16, "trn1");
  trn.usage[7].used = 1;
  EXPECT_EQ(AwsNeuronBackend::select_window(trn.ptrs, 8),
            positions({8, 9, 10, 11, 12, 13, 14, 15}));
  trn.usage[13].used = 1;
  EXPECT_TRUE(AwsNeuronBackend::select_window(trn.ptrs, 8).empty());
  EXPECT_TRUE(AwsNeuronBackend::select_window(devices_of(4, "trn1").ptrs, 2).empty());
  EXPECT_EQ(AwsNeuronBackend::select_window(devices_of(4, "trn1").ptrs, 4).size(), 4u);
  // Inferentia: any consecutive run.
  inf.usage[5].used = 1;
  inf.usage[14].used = 1;
  EXPECT_EQ(AwsNeuronBackend::select_window(inf.ptrs, 8), positions({6, 7, 8, 9, 10, 11, 12, 13}));
  Devices big_inf = devices_of(4, "Inf1");
  big_inf.usage[1].health = false;
  EXPECT_EQ(AwsNeuronBackend::select_window(big_inf.ptrs, 2), positions({2, 3}));
  // The first device decides the node type; without one there is no window.
  Devices none = devices_of(4, "inf2");
  none.usage[0].custom_info = nullptr;
  EXPECT_TRUE(AwsNeuronBackend::select_window(none.ptrs, 2).empty());
  none.custom[0] = R"({"AWSNodeType":null})";
  none.usage[0].custom_info = &none.custom[0];
  EXPECT_TRUE(AwsNeuronBackend::select_window(none.ptrs, 2).empty());
  // A non-string type is "" (Trainium rules).
  none.custom[0] = R"({"AWSNodeType":5})";
  EXPECT_EQ(AwsNeuronBackend::select_window(none.ptrs, 4).size(), 4u);
  EXPECT_TRUE(AwsNeuronBackend::select_window(none.ptrs, 3).empty());
}

// custominfo is HAMi's map[string]any, read through the Go-JSON reader with Go's map rules: a
// key given twice keeps its last value (the DOM lookup this replaced kept the first), and map
// keys match exactly (only struct fields fold case).
TEST(AwsNeuron, CustomInfoReadsAsGoDecodesAMap) {
  Devices twice = devices_of(4, "trn1");
  twice.custom[0] = R"({"AWSNodeType":"trn1","AWSNodeType":"inf2"})";
  // Inferentia: any consecutive run of 3; Trainium would need an aligned block.
  EXPECT_EQ(AwsNeuronBackend::select_window(twice.ptrs, 3).size(), 3u);
  twice.custom[0] = R"({"AWSNodeType":"inf2","AWSNodeType":"trn1"})";
  EXPECT_TRUE(AwsNeuronBackend::select_window(twice.ptrs, 3).empty());
  twice.custom[0] = R"({"AWSNodeType":"inf2","AWSNodeType":null})";
  EXPECT_TRUE(AwsNeuronBackend::select_window(twice.ptrs, 2).empty());  // no type, no window

  Devices folded = devices_of(4, "inf2");
  folded.custom[0] = R"({"awsnodetype":"inf2"})";
  EXPECT_TRUE(AwsNeuronBackend::select_window(folded.ptrs, 2).empty());
}

TEST(AwsNeuron, SingleDeviceFit) {
  AwsNeuronBackend b;
  Devices trn = devices_of(2, "trn1");
  auto fit = direct_fit(b, trn, {1, "AWSNeuron", 0, 0, 2});
  ASSERT_TRUE(fit.outcome.fits) << fit.reason;
  ASSERT_EQ(fit.outcome.devices.size(), 1u);
  EXPECT_EQ(fit.outcome.devices[0].uuid, "dev-1");
  EXPECT_EQ(fit.outcome.devices[0].usedcores, 3);
  EXPECT_EQ(fit.outcome.devices[0].usedmem, 0);
  EXPECT_EQ(direct_fit(b, trn, {1, "AWSNeuron", 0, 0, 1}).outcome.devices[0].usedcores, 1);

  Devices one = devices_of(1, "trn1");
  one.usage[0].used = 1;
  one.usage[0].usedcores = 1;
  EXPECT_EQ(direct_fit(b, one, {1, "AWSNeuron", 0, 0, 2}).reason, "1/1 CardInsufficientCore");
  // The other core of a half-used device.
  fit = direct_fit(b, one, {1, "AWSNeuron", 0, 0, 1});
  ASSERT_TRUE(fit.outcome.fits) << fit.reason;
  EXPECT_EQ(fit.outcome.devices[0].usedcores, 2);
  EXPECT_EQ(direct_fit(b, one, {1, "AWSNeuron", 0, 0, 1}, PodBuilder().build(), "mutex").reason,
            "1/1 ExclusiveDeviceAllocateConflict");
  one.usage[0].used = 2;
  EXPECT_EQ(direct_fit(b, one, {1, "AWSNeuron", 0, 0, 1}).reason, "1/1 CardTimeSlicingExhausted");
  one.usage[0].used = 0;
  one.usage[0].usedcores = 0;
  EXPECT_EQ(direct_fit(b, one, {1, "AWSNeuronX", 0, 0, 1}).reason, "1/1 CardTypeMismatch");
  EXPECT_EQ(direct_fit(b, one, {1, "AWSNeuron", 0, 0, 1},
                       PodBuilder().annotate("aws.amazon.com/use-neuron-uuid", "dev-9").build())
                .reason,
            "1/1 CardUuidMismatch");
  one.usage[0].type = "awsneuron";  // the type check is case-sensitive
  EXPECT_EQ(direct_fit(b, one, {1, "AWSNeuron", 0, 0, 1}).reason, "1/1 CardTypeMismatch");
  one.usage[0].health = false;
  EXPECT_EQ(direct_fit(b, one, {1, "AWSNeuron", 0, 0, 1}).reason, "1/1 CardNotHealth");

  // Several devices: {Nums 2} on Trainium is not a block size.
  EXPECT_EQ(direct_fit(b, trn, {2, "AWSNeuron", 0, 0, 2}).reason, "1/2 NumaNotFit");
}

TEST(AwsNeuron, WholeDeviceTakesTheNodesCoresPerDevice) {
  AwsNeuronBackend b;
  // 4 cores per device (inf1): a whole device asks for all 4 and, as in HAMi, records mask 3.
  Devices inf1 = devices_of(1, "inf1.xlarge", 4);
  const model::Pod whole = pod_with({{kNeuron, "1"}});
  auto fit = direct_fit(b, inf1, {1, "AWSNeuron", 0, 0, 2}, whole);
  ASSERT_TRUE(fit.outcome.fits) << fit.reason;
  EXPECT_EQ(fit.outcome.devices[0].usedcores, 3);
  inf1.usage[0].used = 1;
  inf1.usage[0].usedcores = 1;
  EXPECT_EQ(direct_fit(b, inf1, {1, "AWSNeuron", 0, 0, 2}, whole).reason,
            "1/1 CardInsufficientCore");
  // A core request still needs only its 2 cores.
  EXPECT_TRUE(direct_fit(b, inf1, {1, "AWSNeuron", 0, 0, 2}).outcome.fits);
}

TEST(AwsNeuron, FitsThroughTheEngine) {
  const auto registry = chart_registry();
  const model::Node inf = neuron_node("n", "inf2.xlarge", "2", "4");
  NodeFit fit = fit_on(pod_with({{kCore, "1"}}), inf, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kAllocated), "n-AWSNeuron-1,AWSNeuron,0,1:;");
  // With the pod (and no clock: simulation) the device plugin's keys but not the time.
  EXPECT_TRUE(fit.annotations.contains("AWS_NEURON_IDS"));
  EXPECT_FALSE(fit.annotations.contains("NEURON_ALLOC_TIME"));
  EXPECT_EQ(fit.node_score, 0);

  // Two single-core containers share one device: masks 1, then the other core 2.
  fit = fit_on(
      PodBuilder().app(container("a", {{kCore, "1"}})).app(container("b", {{kCore, "1"}})).build(),
      inf, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kAllocated),
            "n-AWSNeuron-1,AWSNeuron,0,1:;n-AWSNeuron-1,AWSNeuron,0,2:;");

  // Running pods' masks are rebuilt from their annotations.
  std::vector<model::Pod> running = {
      running_pod("r", "n", {{kAllocated, "n-AWSNeuron-1,AWSNeuron,0,3:;"}})};
  fit = fit_on(pod_with({{kCore, "2"}}), inf, registry, running);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("AWSNeuron")[0][0].uuid, "n-AWSNeuron-0");

  // Whole devices: a window of idle devices, recorded with their full masks.
  fit = fit_on(pod_with({{kNeuron, "2"}}), inf, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kAllocated),
            "n-AWSNeuron-0,AWSNeuron,0,3:n-AWSNeuron-1,AWSNeuron,0,3:;");
  EXPECT_EQ(fit_on(pod_with({{kNeuron, "2"}}), inf, registry, running).reason, "1/2 NumaNotFit");
  EXPECT_EQ(fit_on(pod_with({{kNeuron, "3"}}), inf, registry).reason, "NodeInsufficientDevice");

  const model::Node trn = neuron_node("t", "trn1.32xlarge", "4", "8");
  EXPECT_EQ(fit_on(pod_with({{kCore, "6"}}), trn, registry).reason, "1/4 NumaNotFit");
  fit = fit_on(pod_with({{kCore, "8"}}), trn, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("AWSNeuron")[0].size(), 4u);
}

TEST(AwsNeuron, AnnotationsWithTheFullContext) {
  AwsNeuronBackend b;
  const auto infos = b.node_devices(neuron_node("node1", "inf2", "2", "4")).devices;
  auto dev = [](int32_t idx, int32_t mask) {
    device::ContainerDevice d;
    d.idx = idx;
    d.uuid = "node1-AWSNeuron-" + std::to_string(idx);
    d.type = "AWSNeuron";
    d.usedcores = mask;
    return d;
  };
  auto annotate = [&](const model::Pod& pod, const device::PodSingleDevice& devices) {
    std::map<std::string, std::string> a;
    b.annotate_allocation(devices, device::AnnotationContext{&pod, "node1", infos, 1234567890123},
                          a);
    return a;
  };
  // Whole devices: their indexes.
  auto a = annotate(pod_with({{kNeuron, "2"}}), {{dev(0, 3), dev(1, 3)}});
  EXPECT_EQ(a.at(kAllocated), "node1-AWSNeuron-0,AWSNeuron,0,3:node1-AWSNeuron-1,AWSNeuron,0,3:;");
  EXPECT_EQ(a.at("AWS_NEURON_IDS"), "0,1");
  EXPECT_EQ(a.at("NEURON_ALLOC_TIME"), "1234567890123");
  EXPECT_EQ(a.at("NEURON_ALLOCATED"), "false");
  EXPECT_EQ(a.at("aws.amazon.com/predicate-node"), "node1");
  EXPECT_FALSE(a.contains("NEURON_RESOURCE_TYPE"));
  EXPECT_EQ(a.size(), 5u);

  // NeuronCores: cores per device x Idx, +1 for the second core.
  a = annotate(pod_with({{kCore, "2"}}), {{dev(0, 3)}});
  EXPECT_EQ(a.at("AWS_NEURON_IDS"), "0,1");
  EXPECT_EQ(a.at("NEURON_RESOURCE_TYPE"), "aws.amazon.com/neuroncore");
  a = annotate(pod_with({{kCore, "1"}}), {{dev(1, 2)}});
  EXPECT_EQ(a.at("AWS_NEURON_IDS"), "3");

  // Accumulated across containers, init containers first.
  const model::Pod two = PodBuilder()
                             .init(container("init", {{kNeuron, "1"}}))
                             .app(container("a", {{kCore, "1"}}))
                             .app(container("b", {{kCore, "1"}}))
                             .build();
  a = annotate(two, {{dev(0, 3)}, {dev(0, 1)}, {dev(0, 2)}});
  EXPECT_EQ(a.at("AWS_NEURON_IDS"), "0,0,1");

  // The whole-device rule reads limits only: a count in requests reads the mask instead.
  a = annotate(PodBuilder().app(container("c", {}, {{kNeuron, "1"}})).build(), {{dev(1, 3)}});
  EXPECT_EQ(a.at("AWS_NEURON_IDS"), "2,3");
  // A zero count in limits adds nothing, and nothing written means no env keys.
  a = annotate(PodBuilder().app(container("c", {{kNeuron, "0"}})).build(), {{dev(1, 3)}});
  EXPECT_FALSE(a.contains("AWS_NEURON_IDS"));
  EXPECT_FALSE(a.contains("NEURON_ALLOCATED"));
  EXPECT_TRUE(a.contains(kAllocated));

  // The node name comes from hami.io/vgpu-node when the map already has it.
  std::map<std::string, std::string> with_node = {{"hami.io/vgpu-node", "from-map"}};
  const model::Pod one = pod_with({{kNeuron, "1"}});
  b.annotate_allocation({{dev(0, 3)}}, device::AnnotationContext{&one, "ctx", infos, {}},
                        with_node);
  EXPECT_EQ(with_node.at("aws.amazon.com/predicate-node"), "from-map");
  EXPECT_FALSE(with_node.contains("NEURON_ALLOC_TIME"));
}

TEST(AwsNeuron, DeviceConfigSectionAndRegistration) {
  const auto registry = registry_from_yaml(R"(awsneuron:
  resourceCountName: example.com/neuron
  resourceCoreName: example.com/neuroncore
)");
  const auto* b = registry.find("AWSNeuron");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->request_for(container("c", {{"example.com/neuron", "2"}})).nums, 2);
  EXPECT_EQ(b->request_for(container("c", {{"example.com/neuroncore", "1"}})).coresreq, 1);
  EXPECT_EQ(b->managed_resources(),
            (std::vector<std::string>{"example.com/neuron", "example.com/neuroncore"}));
  // A file without the section leaves the names empty: no requests, no devices.
  const auto other = registry_from_yaml("nvidia: {}\n");
  ASSERT_NE(other.find("AWSNeuron"), nullptr);
  EXPECT_EQ(other.find("AWSNeuron")->request_for(container("c", {{kNeuron, "1"}})).nums, 0);
  EXPECT_EQ(other.find("AWSNeuron")->node_devices(neuron_node("n", "inf2", "1", "2")).state,
            NodeDevices::State::kAbsent);
  auto bad = device::parse_device_config("awsneuron:\n  resourceCoreName: {a: b}\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              HasSubstr("awsneuron.resourceCoreName: expected a string at line 2"));

  AwsNeuronBackend aws;
  EXPECT_EQ(aws.health_check(), device::HealthCheck::kAlways);
  EXPECT_EQ(aws.handshake_annotation(), "");
  EXPECT_EQ(aws.cleanup_annotation(), "");
  EXPECT_FALSE(aws.locks_node());
  EXPECT_EQ(aws.to_allocate_annotation(), "");
  EXPECT_EQ(aws.allocated_annotation(), kAllocated);
}

}  // namespace awsneuron_test
}  // namespace hamisim::fit::testing
