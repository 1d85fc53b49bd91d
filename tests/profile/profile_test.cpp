// Device profiles (product spec §5.3, §7.1, §7.2, §7.4).

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <set>

#include "device/catalog/device_config.h"
#include "device/codec.h"
#include "extender_fixtures.h"
#include "profile/device_profiles.h"
#include "profile/reconcile.h"
#include "profile/template_node.h"
#include "server/simulation_filter.h"

namespace hamisim::profile {
namespace {

constexpr const char* kProfiles = R"(apiVersion: hamisim.io/v1
kind: DeviceProfiles
profiles:
  - name: a100
    match:
      nodeGroups: [gpu-a100]
      labels: {node.kubernetes.io/instance-type: Standard_ND96amsr_A100_v4}
      nodeGroupLabel: agentpool
    onMismatch: warn
    devices:
      - vendor: nvidia
        count: 8
        split: 10
        devmem: 81920
        devcore: 100
        type: NVIDIA A100-SXM4-80GB
        numa: [0, 0, 0, 0, 1, 1, 1, 1]
        mode: hami-core
  - name: t4
    match:
      nodeGroups: [gpu-t4]
    devices:
      - count: 1
        split: 4
        devmem: 15360
        type: NVIDIA-Tesla T4
    topology: [[0]]
)";

class ProfileTest : public ::testing::Test {
 protected:
  ProfileTest() : registry_(device::build_registry({})) {}

  DeviceProfiles load(const std::string& yaml) {
    auto p = parse_device_profiles(yaml, "profiles.yaml", registry_);
    EXPECT_TRUE(p) << p.error().message;
    return p ? std::move(p).value() : DeviceProfiles{};
  }
  std::string parse_error(const std::string& yaml) {
    auto p = parse_device_profiles(yaml, "profiles.yaml", registry_);
    EXPECT_FALSE(p);
    return p ? std::string() : p.error().message;
  }

  device::DeviceRegistry registry_;
};

model::Node node(const std::string& name, model::StringMap labels = {},
                 model::StringMap annotations = {}) {
  model::Node n;
  n.metadata.name = name;
  n.metadata.labels = std::move(labels);
  n.metadata.annotations = std::move(annotations);
  return n;
}

TEST_F(ProfileTest, DevicesFormBuildsSyntheticDevicesWithPerDeviceNuma) {
  DeviceProfiles p = load(kProfiles);
  ASSERT_EQ(p.profiles.size(), 2u);
  const auto& devs = p.profiles[0].description.devices;
  ASSERT_EQ(devs.size(), 8u);
  EXPECT_EQ(devs[0].id, "a100-nvidia-0");
  EXPECT_EQ(devs[7].id, "a100-nvidia-7");
  EXPECT_EQ(devs[7].index, 7u);
  EXPECT_EQ(devs[3].numa, 0);
  EXPECT_EQ(devs[4].numa, 1);
  EXPECT_EQ(devs[0].count, 10);
  EXPECT_EQ(devs[0].devmem, 81920);
  EXPECT_TRUE(devs[0].health);
  EXPECT_EQ(devs[0].device_vendor, "NVIDIA");
  EXPECT_EQ(p.profiles[0].description.source, fit::DeviceSource::kProfile);
  EXPECT_EQ(p.profiles[1].description.devices[0].devcore, 100);  // default
  // The profile stands for exactly the annotation a device plugin would write.
  auto decoded = device::decode_register_json(
      p.profiles[0].annotations.at(std::string(device::kNvidiaRegisterAnnotation)));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->size(), 8u);
}

TEST_F(ProfileTest, RegisterFormTakesTheExactAnnotation) {
  DeviceProfiles p = load(R"(apiVersion: hamisim.io/v1
kind: DeviceProfiles
profiles:
  - name: k80
    register: {nvidia: '[{"id":"GPU-a","count":10,"devmem":11441,"devcore":100,"type":"NVIDIA-Tesla K80","mode":"hami-core","health":true}]'}
)");
  ASSERT_EQ(p.profiles.size(), 1u);
  EXPECT_EQ(p.profiles[0].description.devices.at(0).id, "GPU-a");
}

TEST_F(ProfileTest, OtherVendorsRegisterByAnnotationKeyOrCapacity) {
  DeviceProfiles p = load(R"(apiVersion: hamisim.io/v1
kind: DeviceProfiles
profiles:
  - name: dcu
    register: {hami.io/node-dcu-register: 'dcu-0,10,65520,100,DCU-K100,0,true,0,hami-core:'}
  - name: mixed
    register:
      nvidia: '[{"id":"GPU-a","count":10,"devmem":11441,"devcore":100,"type":"NVIDIA-Tesla K80","mode":"hami-core","health":true}]'
      hami.io/node-dcu-register: 'dcu-0,10,65520,100,DCU-K100,0,true,0,hami-core:'
)");
  ASSERT_EQ(p.profiles.size(), 2u);
  ASSERT_EQ(p.profiles[0].description.devices.size(), 1u);
  EXPECT_EQ(p.profiles[0].description.devices[0].device_vendor, "DCU");
  std::set<std::string> vendors;
  for (const auto& d : p.profiles[1].description.devices) vendors.insert(d.device_vendor);
  EXPECT_EQ(vendors, (std::set<std::string>{"DCU", "NVIDIA"}));
}

TEST_F(ProfileTest, CapacityDescribesVendorsHamiDiscoversFromCapacity) {
  DeviceProfiles p = load(R"(apiVersion: hamisim.io/v1
kind: DeviceProfiles
profiles:
  - name: mlu
    capacity: {cambricon.com/mlu.smlu.vcore: "400", cambricon.com/mlu.smlu.vmemory: "384"}
)");
  ASSERT_EQ(p.profiles.size(), 1u);
  // One MLU per 100 vcore.
  ASSERT_EQ(p.profiles[0].description.devices.size(), 4u);
  EXPECT_EQ(p.profiles[0].description.devices[0].device_vendor, "MLU");
}

struct BadProfile {
  const char* name;
  std::string body;  // one profile entry (indented under profiles:)
  const char* fragment;
};

class ProfileValidationTest : public ProfileTest,
                              public ::testing::WithParamInterface<BadProfile> {};

TEST_P(ProfileValidationTest, NamesFileProfileAndField) {
  const std::string yaml =
      "apiVersion: hamisim.io/v1\nkind: DeviceProfiles\nprofiles:\n" + GetParam().body;
  const std::string error = parse_error(yaml);
  EXPECT_EQ(error.rfind("profiles.yaml: ", 0), 0u) << error;
  EXPECT_NE(error.find(GetParam().fragment), std::string::npos) << error;
}

const std::string kDevice = "    devices: [{count: 2, split: 10, devmem: 1000, type: NVIDIA-T4}]\n";

INSTANTIATE_TEST_SUITE_P(
    Spec71, ProfileValidationTest,
    ::testing::Values(
        BadProfile{"UnknownField", "  - name: x\n    colour: red\n" + kDevice,
                   "profiles[0] (x).colour: unknown field"},
        BadProfile{
            "NumaLength",
            "  - name: x\n    devices: [{count: 2, split: 10, devmem: 1000, type: NVIDIA-T4, numa: "
            "[0, 1, 1]}]\n",
            "profiles[0] (x).devices[0].numa: expected one value for all devices or 2 values"},
        BadProfile{"BadMode",
                   "  - name: x\n    devices: [{count: 2, split: 10, devmem: 1000, type: "
                   "NVIDIA-T4, mode: turbo}]\n",
                   "devices[0].mode: \"turbo\" is not one of"},
        BadProfile{"MigWithoutProfiles",
                   "  - name: x\n    devices: [{count: 1, split: 7, devmem: 40960, type: "
                   "NVIDIA-A100, mode: mig}]\n",
                   "devices[0].migProfiles: required with mode mig"},
        BadProfile{"DuplicateName", "  - name: x\n" + kDevice + "  - name: x\n" + kDevice,
                   "duplicate profile name"},
        BadProfile{"BothForms", "  - name: x\n" + kDevice + "    register: {nvidia: '[]'}\n",
                   "devices and register are exclusive"},
        BadProfile{"NeitherForm", "  - name: x\n", "one of devices, register, capacity or dra"},
        BadProfile{"RegisterKeyNeitherNvidiaNorAnnotation",
                   "  - name: x\n    register: {hygon: 'a,1,1,100,DCU,0,true:'}\n",
                   "expected nvidia or a registration annotation key"},
        BadProfile{"CapacityNotAQuantity",
                   "  - name: x\n    capacity: {cambricon.com/vmlu: lots}\n",
                   "capacity.cambricon.com/vmlu"},
        BadProfile{"Vendor",
                   "  - name: x\n    devices: [{vendor: amd, count: 1, split: 1, devmem: 1, type: "
                   "NVIDIA-X}]\n",
                   "unsupported vendor \"amd\""},
        BadProfile{"TypeWithoutNvidia",
                   "  - name: x\n    devices: [{count: 1, split: 1, devmem: 1, type: Tesla T4}]\n",
                   "does not contain \"NVIDIA\""},
        // Issue #26: yaml-cpp read this as octal 32768 MiB; node groups read "010" as 10.
        BadProfile{"LeadingZero",
                   "  - name: x\n    devices: [{count: 1, split: 1, devmem: 0100000, type: "
                   "NVIDIA-T4}]\n",
                   "profiles[0] (x).devices[0].devmem: \"0100000\" has a leading zero (octal in "
                   "YAML 1.1, decimal in YAML 1.2): write 100000, or 32768 for octal (line 5)"},
        BadProfile{"HexIsNotAnInteger",
                   "  - name: x\n    devices: [{count: 0x2, split: 1, devmem: 1, type: "
                   "NVIDIA-T4}]\n",
                   "devices[0].count: \"0x2\" is not an integer"},
        BadProfile{
            "NegativeMemory",
            "  - name: x\n    devices: [{count: 1, split: 1, devmem: -5, type: NVIDIA-T4}]\n",
            "devices[0].devmem: -5 is out of range"},
        BadProfile{"TopologyShape", "  - name: x\n" + kDevice + "    topology: [[0, 1]]\n",
                   "topology: expected a 2x2 matrix"},
        BadProfile{"MalformedRegister", "  - name: x\n    register: {nvidia: '[{\"id\":1}]'}\n",
                   "device description does not decode"},
        BadProfile{"BadOnMismatch", "  - name: x\n    onMismatch: ignore\n" + kDevice,
                   "onMismatch: \"ignore\" is not one of"},
        // Issue #26: one field reader for node groups and profiles. yaml-cpp keeps both keys
        // and a lookup sees the first, so the second value would be lost without a word.
        BadProfile{"DuplicateField",
                   "  - name: x\n    devices: [{count: 1, count: 2, split: 1, devmem: 1, type: "
                   "NVIDIA-T4}]\n",
                   "devices[0].count: duplicate field"},
        // A missing field names its mapping's line.
        BadProfile{"MissingTypeNamesTheLine",
                   "  - name: x\n    devices: [{count: 1, split: 1, devmem: 1}]\n",
                   "profiles[0] (x).devices[0].type: required (line 5)"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(ProfileTest, WrongApiVersionIsRejected) {
  EXPECT_NE(parse_error("apiVersion: v1\nkind: DeviceProfiles\n")
                .find("apiVersion: expected hamisim.io/v1"),
            std::string::npos);
}

// Spec §7.1: a template's node group id comes from CA's template names.
TEST(TemplateNode, NodeGroupIdFromCaTemplateNames) {
  EXPECT_EQ(node_group_from_template_name("template-node-for-gpu-a100-5577006791947779410"),
            "gpu-a100");
  EXPECT_EQ(node_group_from_template_name("template-node-for-ng-gpu-5577006791947779410-e-0"),
            "ng-gpu");
  EXPECT_EQ(node_group_from_template_name("template-node-for-pool-2-123-upcoming-4"), "pool-2");
  EXPECT_EQ(node_group_from_template_name("gpu-node-a"), std::nullopt);
  EXPECT_EQ(node_group_from_template_name("template-node-for-123"), std::nullopt);
}

TEST(TemplateNode, TemplateLabelOrNameMarksATemplate) {
  model::Node n = node("gpu-node-a");
  EXPECT_FALSE(is_template_node(n));
  n.metadata.labels[std::string(kTemplateNodeLabel)] = "true";
  EXPECT_TRUE(is_template_node(n));
  EXPECT_TRUE(is_template_node(node("template-node-for-x-1")));
}

// Spec §5.3 order: explicit annotation, then match (node group id, labels).
TEST_F(ProfileTest, MatchingOrderAndAmbiguity) {
  DeviceProfiles p = load(kProfiles);
  auto by_annotation = profile_for_node(p, node("x", {}, {{"hamisim.io/device-profile", "t4"}}));
  ASSERT_TRUE(by_annotation);
  EXPECT_EQ((*by_annotation)->name, "t4");
  auto by_group = profile_for_node(p, node("template-node-for-gpu-t4-42"));
  ASSERT_TRUE(by_group && *by_group);
  EXPECT_EQ((*by_group)->name, "t4");
  auto by_label = profile_for_node(
      p, node("n1", {{"node.kubernetes.io/instance-type", "Standard_ND96amsr_A100_v4"}}));
  ASSERT_TRUE(by_label && *by_label);
  EXPECT_EQ((*by_label)->name, "a100");
  auto by_group_label = profile_for_node(p, node("n2", {{"agentpool", "gpu-a100"}}));
  ASSERT_TRUE(by_group_label && *by_group_label);
  auto none = profile_for_node(p, node("cpu-node"));
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, nullptr);
  auto unknown = profile_for_node(p, node("x", {}, {{"hamisim.io/device-profile", "h100"}}));
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown profile \"h100\""), std::string::npos);
  // Both profiles select this node: an error naming both.
  auto both = profile_for_node(
      p, node("template-node-for-gpu-t4-1",
              {{"node.kubernetes.io/instance-type", "Standard_ND96amsr_A100_v4"}}));
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().message.find("\"a100\" and \"t4\""), std::string::npos)
      << both.error().message;
}

// --- simulation through profiles ---

class ProfileSimulationTest : public ProfileTest {
 protected:
  void use(const std::string& yaml) {
    profiles_ = std::make_shared<DeviceProfiles>(load(yaml));
    filter_.reset();
    engine_ = std::make_unique<engine::Engine>(registry_, profiles_);
    filter_ = std::make_unique<server::SimulationFilter>(*engine_);
  }
  boost::json::object run(const std::string& pod, const std::vector<std::string>& nodes) {
    testing::ArgsSpec spec;
    spec.pod = pod;
    spec.nodes = nodes;
    return boost::json::parse(filter_->filter(testing::args_json(spec)).body).as_object();
  }
  static const boost::json::object& diag(const boost::json::object& r, const std::string& n) {
    return r.at("Diagnostics").as_object().at(n).as_object();
  }

  std::shared_ptr<DeviceProfiles> profiles_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<server::SimulationFilter> filter_;
};

const std::string kPod = testing::pod_json(
    "trainer",
    {{"nvidia.com/gpu", "2"}, {"nvidia.com/gpumem", "40000"}, {"nvidia.com/gpucores", "50"}});

// The design's cold-zero case: a provider-built template carrying only labels gets the same
// answer a registered node would get.
TEST_F(ProfileSimulationTest, ColdZeroTemplateIsAnsweredFromItsProfile) {
  use(kProfiles);
  const std::string cold = testing::node_json("template-node-for-gpu-a100-8812", {});
  const auto& a = profiles_->profiles[0].annotations;
  const std::string registered =
      testing::node_json("registered", testing::Annotations(a.begin(), a.end()));
  auto r = run(kPod, {cold, registered});
  EXPECT_EQ(diag(r, "template-node-for-gpu-a100-8812").at("Class").as_string(), "Fits");
  EXPECT_EQ(diag(r, "template-node-for-gpu-a100-8812").at("DeviceSource").as_string(), "profile");
  EXPECT_EQ(diag(r, "template-node-for-gpu-a100-8812").at("Profile").as_string(), "a100");
  const auto& alloc = r.at("Allocations").as_object();
  EXPECT_EQ(alloc.at("template-node-for-gpu-a100-8812"), alloc.at("registered"));
}

TEST_F(ProfileSimulationTest, ColdZeroTemplateWithoutProfileIsNodeUnregistered) {
  use(kProfiles);
  auto r = run(kPod, {testing::node_json("template-node-for-gpu-v100-1", {})});
  EXPECT_EQ(r.at("FailedNodes").as_object().at("template-node-for-gpu-v100-1").as_string(),
            "node unregistered");
}

std::string sample_register() {
  return R"([{"id":"GPU-0","count":10,"devmem":16000,"devcore":100,"type":"NVIDIA-Tesla T4","mode":"hami-core"},)"
         R"({"id":"GPU-1","index":1,"count":10,"devmem":16000,"devcore":100,"type":"NVIDIA-Tesla T4","mode":"hami-core","health":true}])";
}

// Spec §7.2: a warm template copied from a node with an unhealthy device and a cordoned GPU
// describes a fresh node: both devices usable.
TEST_F(ProfileSimulationTest, WarmSampleIsNormalizedToAFreshNode) {
  use("apiVersion: hamisim.io/v1\nkind: DeviceProfiles\nprofiles: []\n");
  const std::string pod =
      testing::pod_json("two", {{"nvidia.com/gpu", "2"}, {"nvidia.com/gpumem", "1000"}});
  const testing::Annotations annotations{{"hami.io/node-nvidia-register", sample_register()},
                                         {"hami.io/device-cordon", "GPU-1"}};
  auto warm = run(pod, {testing::node_json("template-node-for-t4-1", annotations)});
  EXPECT_EQ(diag(warm, "template-node-for-t4-1").at("Class").as_string(), "Fits");
  EXPECT_EQ(diag(warm, "template-node-for-t4-1").at("DeviceSource").as_string(), "sample");
  // The same registration on a real node keeps its unhealthy and cordoned devices.
  auto real = run(pod, {testing::node_json("t4-node-1", annotations)});
  EXPECT_EQ(real.at("FailedNodes").as_object().at("t4-node-1").as_string(),
            "1/2 CardCordoned, 1/2 CardNotHealth");
  EXPECT_EQ(diag(real, "t4-node-1").at("DeviceSource").as_string(), "annotation");
}

// Spec §7.2: when a profile also matches a warm template, the profile wins and the sample's
// divergence is reported.
TEST_F(ProfileSimulationTest, ProfileWinsOverADivergingSample) {
  use(kProfiles);
  auto r = run(kPod, {testing::node_json("template-node-for-gpu-a100-3",
                                         {{"hami.io/node-nvidia-register", sample_register()}})});
  const auto& d = diag(r, "template-node-for-gpu-a100-3");
  EXPECT_EQ(d.at("Class").as_string(), "Fits");
  EXPECT_EQ(d.at("DeviceSource").as_string(), "profile");
  const auto& notes = d.at("Notes").as_array();
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(std::string(notes[0].as_string()).find("sample diverges from profile \"a100\""),
            std::string::npos);
}

// Spec §7.4: a heterogeneous group — two members registering different GPUs — is reported.
TEST_F(ProfileTest, ReconcileReportsTheMemberThatDiffers) {
  DeviceProfiles p = load(kProfiles);
  model::Node good = node("aks-gpua100-0", {{"agentpool", "gpu-a100"}}, p.profiles[0].annotations);
  std::string other = p.profiles[0].annotations.at("hami.io/node-nvidia-register");
  // The second member has 40 GB cards.
  for (size_t pos = other.find("81920"); pos != std::string::npos; pos = other.find("81920")) {
    other.replace(pos, 5, "40960");
  }
  model::Node bad =
      node("aks-gpua100-1", {{"agentpool", "gpu-a100"}}, {{"hami.io/node-nvidia-register", other}});
  model::Node unrelated = node("cpu-0");
  ReconcileReport report = reconcile(p, {good, bad, unrelated}, registry_);
  ASSERT_EQ(report.checks.size(), 2u);
  EXPECT_TRUE(report.checks[0].mismatches.empty());
  ASSERT_EQ(report.checks[1].mismatches.size(), 1u);
  EXPECT_EQ(report.checks[1].mismatches[0], "devmem: profile 81920 x8, node 40960 x8");
  EXPECT_TRUE(report.any_mismatch());
}

class OnMismatchTest : public ProfileSimulationTest,
                       public ::testing::WithParamInterface<const char*> {};

// Spec §7.4: onMismatch decides what simulation does with a profile real nodes contradict.
TEST_P(OnMismatchTest, PolicyChangesSimulation) {
  const std::string policy = GetParam();
  use("apiVersion: hamisim.io/v1\nkind: DeviceProfiles\nprofiles:\n"
      "  - name: t4\n    match: {nodeGroups: [t4], nodeGroupLabel: pool}\n    onMismatch: " +
      policy +
      "\n"
      "    devices: [{count: 2, split: 10, devmem: 16000, type: NVIDIA-Tesla T4}]\n");
  // The real member registered 8000 MiB cards.
  const std::string small =
      R"([{"id":"GPU-x","count":10,"devmem":8000,"devcore":100,"type":"NVIDIA-Tesla T4","mode":"hami-core","health":true},)"
      R"({"id":"GPU-y","index":1,"count":10,"devmem":8000,"devcore":100,"type":"NVIDIA-Tesla T4","mode":"hami-core","health":true}])";
  model::Node member = node("t4-0", {{"pool", "t4"}}, {{"hami.io/node-nvidia-register", small}});
  const std::string pod =
      testing::pod_json("p", {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem", "12000"}});
  // Before reconciliation the profile alone answers; the description cached for this template
  // must not outlive the observations it was made under.
  auto before = run(pod, {testing::node_json("template-node-for-t4-77", {})});
  EXPECT_EQ(diag(before, "template-node-for-t4-77").at("Class").as_string(), "Fits");
  EXPECT_TRUE(diag(before, "template-node-for-t4-77").at("Notes").as_array().empty());
  engine_->set_observations(
      std::make_shared<ProfileObservations>(observe(*profiles_, {member}, registry_)));

  auto r = run(pod, {testing::node_json("template-node-for-t4-77", {})});
  const auto& d = diag(r, "template-node-for-t4-77");
  if (policy == "warn") {
    EXPECT_EQ(d.at("Class").as_string(), "Fits");
    EXPECT_EQ(d.at("Notes").as_array().size(), 1u);
  } else if (policy == "preferObserved") {
    EXPECT_EQ(d.at("Class").as_string(), "InsufficientCapacity");
    EXPECT_EQ(d.at("DeviceSource").as_string(), "sample");
    EXPECT_EQ(r.at("FailedNodes").as_object().at("template-node-for-t4-77").as_string(),
              "2/2 CardInsufficientMemory");
  } else {
    EXPECT_EQ(d.at("Class").as_string(), "ProfileRejected");
    EXPECT_NE(std::string(r.at("FailedNodes").as_object().at("template-node-for-t4-77").as_string())
                  .find("device profile rejected"),
              std::string::npos);
  }

  // The reconciler observing the same again changes nothing; observing the contradiction gone
  // brings the profile's own answer back for the very same template bytes.
  engine_->set_observations(
      std::make_shared<ProfileObservations>(observe(*profiles_, {member}, registry_)));
  EXPECT_EQ(diag(run(pod, {testing::node_json("template-node-for-t4-77", {})}),
                 "template-node-for-t4-77"),
            d);
  engine_->set_observations(
      std::make_shared<ProfileObservations>(observe(*profiles_, {}, registry_)));
  auto after = run(pod, {testing::node_json("template-node-for-t4-77", {})});
  EXPECT_EQ(diag(after, "template-node-for-t4-77").at("Class").as_string(), "Fits");
  EXPECT_TRUE(diag(after, "template-node-for-t4-77").at("Notes").as_array().empty());
}

INSTANTIATE_TEST_SUITE_P(Spec74, OnMismatchTest,
                         ::testing::Values("warn", "preferObserved", "reject"));

}  // namespace
}  // namespace hamisim::profile

namespace hamisim::profile {
namespace dra_form_test {

class ProfileDraTest : public ::testing::Test {
 protected:
  ProfileDraTest() : registry_(device::build_registry({})) {}
  Result<DeviceProfiles> parse(const std::string& profile_body) {
    return parse_device_profiles(
        "apiVersion: hamisim.io/v1\nkind: DeviceProfiles\nprofiles:\n  - name: g\n" + profile_body,
        "profiles.yaml", registry_);
  }
  device::DeviceRegistry registry_;
};

// `hamiDriver: true`: the devices as HAMi's k8s-dra-driver publishes them (reference §4.1),
// one node-local slice with a pool named after the node; an unhealthy GPU is never listed.
TEST_F(ProfileDraTest, HamiDriverRendersTheDevices) {
  auto p = parse(
      "    devices:\n      - {count: 2, split: 10, devmem: 81920, type: NVIDIA-A100-SXM4-80GB}\n"
      "    dra: {hamiDriver: true}\n");
  ASSERT_TRUE(p) << p.error().message;
  const auto& slices = p->profiles.at(0).dra_slices;
  ASSERT_EQ(slices.size(), 1u);
  const dra::ResourceSlice& s = slices[0];
  EXPECT_EQ(s.driver, "hami-core-gpu.project-hami.io");
  EXPECT_EQ(s.pool.name, "g");
  EXPECT_EQ(s.scope.node_name, "g");
  ASSERT_EQ(s.devices.size(), 2u);
  const dra::Device& d = s.devices[1];
  EXPECT_EQ(d.name, "hami-gpu-1");
  EXPECT_TRUE(d.allow_multiple_allocations);
  EXPECT_EQ(std::get<std::string>(d.attributes.at("type")), "hami-gpu");
  EXPECT_EQ(std::get<std::string>(d.attributes.at("productName")), "A100-SXM4-80GB");
  EXPECT_EQ(std::get<int64_t>(d.attributes.at("minor")), 1);
  EXPECT_EQ(d.capacity.at("memory").value, model::Quantity::from_int(81920LL << 20));
  EXPECT_EQ(d.capacity.at("memory").request_policy->valid_range->step,
            model::Quantity::from_int(1 << 20));
  EXPECT_EQ(d.capacity.at("cores").request_policy->default_value, model::Quantity::from_int(100));
  // Published to DRA, the devices are not also a device-plugin registration.
  EXPECT_TRUE(p->profiles.at(0).annotations.empty());
  EXPECT_TRUE(p->profiles.at(0).description.devices.empty());
}

// `resourceSlices:` are read by the strict DRA decoder; the node name is the profile's until a
// node is made.
TEST_F(ProfileDraTest, ResourceSlicesAreDecodedStrictly) {
  auto p = parse(
      "    dra:\n      resourceSlices:\n"
      "        - apiVersion: resource.k8s.io/v1\n          kind: ResourceSlice\n"
      "          metadata: {name: nic}\n"
      "          spec:\n            driver: nic.example.com\n            nodeName: any\n"
      "            pool: {name: nics, generation: 1, resourceSliceCount: 1}\n"
      "            devices: [{name: nic-0, attributes: {speed: {int: 400}}}]\n");
  ASSERT_TRUE(p) << p.error().message;
  const auto& slices = p->profiles.at(0).dra_slices;
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].driver, "nic.example.com");
  EXPECT_EQ(slices[0].scope.node_name, "g");
  EXPECT_EQ(std::get<int64_t>(slices[0].devices.at(0).attributes.at("speed")), 400);
  EXPECT_TRUE(p->profiles.at(0).annotations.empty());  // DRA only: no registration
}

TEST_F(ProfileDraTest, ErrorsNameTheField) {
  auto p = parse("    dra: {hamiDriver: true}\n");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("dra.hamiDriver"), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("the profile has none"), std::string::npos);
  p = parse("    dra: {hami: true}\n");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("hami"), std::string::npos) << p.error().message;
  p = parse(
      "    dra:\n      resourceSlices:\n"
      "        - {apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {name: x},\n"
      "           spec: {driver: d.io, allNodes: true, pool: {name: p, resourceSliceCount: 1}}}\n");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("dra.resourceSlices[0]"), std::string::npos)
      << p.error().message;
  EXPECT_NE(p.error().message.find("spec.nodeName is required"), std::string::npos);
  p = parse(
      "    dra:\n      resourceSlices:\n"
      "        - {apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {name: x},\n"
      "           spec: {driver: d.io, nodeName: n, pool: {name: p, resourceSliceCount: 1},\n"
      "                  devices: [{name: A}]}}\n");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("spec.devices[0]: \"A\" is not a DNS label"), std::string::npos)
      << p.error().message;
}

}  // namespace dra_form_test
}  // namespace hamisim::profile
