// `plan --compare-modes` (issue #29): HAMi-DRA's webhook conversion (reference dra.md §4.2), the
// cluster rewritten in HAMi's DRA mode, and the two plans compared. Every expectation is derived
// by hand in the test's comment.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "device/catalog/device_config.h"
#include "dra/encode.h"
#include "model/decode.h"
#include "planner/modes/compare_modes.h"
#include "planner/modes/hami_dra_webhook.h"
#include "profile/device_profiles.h"
#include "test_paths.h"

namespace hamisim::planner::modes {
namespace {

using scaleup::Plan;
using State = scaleup::PodOutcome::State;

const device::DeviceRegistry& registry() {
  static const device::DeviceRegistry r = device::build_registry({});
  return r;
}

const device::ResourceNames& nvidia_names() {
  return registry().find(device::kNvidiaVendor)->resource_names();
}

model::Pod decode_pod(const std::string& yaml) {
  auto objects = model::decode_objects("apiVersion: v1\nkind: List\nitems:\n" + yaml);
  EXPECT_TRUE(objects) << objects.error().message;
  EXPECT_EQ(objects->pods.size(), 1u);
  return objects->pods.empty() ? model::Pod{} : objects->pods.front();
}

// A pod of namespace ml whose container `main` has `limits` (YAML flow mapping entries).
std::string pod_yaml(const std::string& name, const std::string& limits,
                     const std::string& annotations = "{}", const std::string& node = "") {
  return "- apiVersion: v1\n  kind: Pod\n  metadata: {name: " + name +
         ", namespace: ml, annotations: " + annotations + "}\n  spec:\n" +
         (node.empty() ? "" : "    nodeName: " + node + "\n") +
         "    containers: [{name: main, resources: {limits: {" + limits +
         "}, requests: {cpu: '1'}}}]\n" + (node.empty() ? "" : "  status: {phase: Running}\n");
}

TEST(HamiDraWebhook, ConvertsTheReferenceExample) {
  // Reference dra.md §4.2: limits gpu 1, gpumem 8000, gpucores 25, cpu 2 on container main of
  // pod infer-7 in ml: claim ml-infer-7-main-nvidia, one request gpu of count 1 asking
  // memory 8000 × 2^20 = 8388608000 bytes and cores 25, the type selector; the pod keeps cpu.
  const model::Pod pod = decode_pod(
      "- apiVersion: v1\n  kind: Pod\n  metadata: {name: infer-7, namespace: ml}\n  spec:\n"
      "    containers: [{name: main, resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: "
      "8000, nvidia.com/gpucores: 25, cpu: '2'}}}]\n");
  auto c = convert_pod(pod, nvidia_names());
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->claims.size(), 1u);
  const dra::ResourceClaim& claim = c->claims[0];
  EXPECT_EQ(claim.metadata.name, "ml-infer-7-main-nvidia");
  EXPECT_EQ(claim.metadata.namespace_, "ml");
  ASSERT_EQ(claim.spec.requests.size(), 1u);
  EXPECT_EQ(claim.spec.requests[0].name, "gpu");
  const dra::ExactDeviceRequest& r = *claim.spec.requests[0].exactly;
  EXPECT_EQ(r.device_class_name, "hami-core-gpu.project-hami.io");
  EXPECT_EQ(r.count, 1);
  EXPECT_EQ(r.capacity_requests.at("memory").as_int64(), 8388608000);
  EXPECT_EQ(r.capacity_requests.at("cores").as_int64(), 25);
  EXPECT_EQ(r.selectors,
            std::vector<std::string>{
                R"(device.attributes["hami-core-gpu.project-hami.io"].type == "hami-gpu")"});
  const model::Container& main = c->pod.spec.containers[0];
  EXPECT_EQ(main.resources.limits.size(), 1u);
  EXPECT_TRUE(main.resources.limits.contains("cpu"));
  ASSERT_EQ(main.resources.claims.size(), 1u);
  EXPECT_EQ(main.resources.claims[0].name, "ml-infer-7-main-nvidia");
  ASSERT_EQ(c->pod.spec.resource_claims.size(), 1u);
  EXPECT_EQ(c->pod.spec.resource_claims[0].resource_claim_name, "ml-infer-7-main-nvidia");
  EXPECT_EQ(c->pod.metadata.labels.at("hami.io/dra"), "true");
  EXPECT_TRUE(c->unconverted.empty());
}

TEST(HamiDraWebhook, LongClaimNamesKeep54CharactersAndAHash) {
  // "ml-" + 50 × a + "-main-nvidia" is 65 characters: the first 54 end in '-', which is
  // trimmed, then "-" and the first 8 hex digits of its SHA-256 (0ab69530, by sha256sum).
  EXPECT_EQ(claim_name("ml", std::string(50, 'a'), "main"),
            "ml-" + std::string(50, 'a') + "-0ab69530");
  EXPECT_EQ(claim_name("ml", "p", "main"), "ml-p-main-nvidia");
}

TEST(HamiDraWebhook, AnnotationsBecomeSelectorsAndAnEmptyOneIsRefused) {
  const model::Pod pod = decode_pod(
      pod_yaml("p", "nvidia.com/gpu: 1",
               R"({nvidia.com/use-gputype: "A100, H100,", nvidia.com/nouse-gpuuuid: "GPU-\"1"})"));
  auto c = convert_pod(pod, nvidia_names());
  ASSERT_TRUE(c) << c.error().message;
  const auto& selectors = c->claims.at(0).spec.requests.at(0).exactly->selectors;
  ASSERT_EQ(selectors.size(), 3u);
  // Annotations in the webhook's order: use-gpuuuid, nouse-gpuuuid, use-gputype, nouse-gputype.
  EXPECT_EQ(selectors[1],
            R"(!(device.attributes["hami-core-gpu.project-hami.io"].uuid in ["GPU-\"1"]))");
  EXPECT_EQ(
      selectors[2],
      R"(device.attributes["hami-core-gpu.project-hami.io"].productName in ["A100", "H100"])");
  EXPECT_TRUE(c->claims[0].spec.requests[0].exactly->capacity_requests.empty());

  auto refused = convert_pod(
      decode_pod(pod_yaml("q", "nvidia.com/gpu: 1", R"({nvidia.com/use-gpuuuid: " , "})")),
      nvidia_names());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("annotation nvidia.com/use-gpuuuid"), std::string::npos)
      << refused.error().message;
}

TEST(HamiDraWebhook, LeavesWhatItDoesNotConvert) {
  // Init containers, gpumem-percentage and a count given only as a request stay extended
  // resources.
  const model::Pod pod = decode_pod(
      "- apiVersion: v1\n  kind: Pod\n  metadata: {name: p, namespace: ml}\n  spec:\n"
      "    initContainers: [{name: warm, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
      "    containers:\n"
      "    - {name: a, resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: "
      "50}}}\n"
      "    - {name: b, resources: {requests: {nvidia.com/gpu: 1}}}\n");
  auto c = convert_pod(pod, nvidia_names());
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->claims.size(), 1u);
  EXPECT_EQ(c->claims[0].metadata.name, "ml-p-a-nvidia");
  ASSERT_EQ(c->unconverted.size(), 3u);
  EXPECT_NE(c->unconverted[0].find("init container warm: nvidia.com/gpu"), std::string::npos);
  EXPECT_NE(c->unconverted[1].find("container a: nvidia.com/gpumem-percentage"), std::string::npos);
  EXPECT_NE(c->unconverted[2].find("container b: nvidia.com/gpu"), std::string::npos);
  EXPECT_TRUE(c->pod.spec.containers[0].resources.limits.contains("nvidia.com/gpumem-percentage"));
  EXPECT_TRUE(c->pod.spec.containers[1].resources.requests.contains("nvidia.com/gpu"));
}

// ---- plans ----------------------------------------------------------------------------------

const char* kOneGpuProfile = R"(apiVersion: hamisim.io/v1
kind: DeviceProfiles
profiles:
  - name: one-a100
    match: {nodeGroups: [gpu]}
    devices:
      - vendor: nvidia
        count: 1
        split: 10
        devmem: 81920
        devcore: 100
        type: NVIDIA A100-SXM4-80GB
)";

// Group gpu: cold-zero, or warm from members labelled pool: gpu.
std::string groups_yaml(const std::string& profile, bool cold) {
  std::string y =
      "apiVersion: hamisim.io/v1\nkind: NodeGroups\nnodeGroups:\n  - name: gpu\n    minSize: 0\n"
      "    maxSize: 20\n    members: {pool: gpu}\n";
  if (cold) {
    y += "    template:\n      metadata: {labels: {pool: gpu}}\n      status:\n"
         "        capacity: {cpu: '96', memory: 1900Gi, pods: '110', nvidia.com/gpu: '80'}\n"
         "        allocatable: {cpu: '96', memory: 1900Gi, pods: '110', nvidia.com/gpu: '80'}\n"
         "    deviceProfile: " +
         profile + "\n";
  }
  return y;
}

scaleup::PlanInput input(const std::string& cluster_yaml, const std::string& groups) {
  scaleup::PlanInput in;
  auto objects = model::decode_objects("apiVersion: v1\nkind: List\nitems:\n" + cluster_yaml);
  EXPECT_TRUE(objects) << objects.error().message;
  if (objects) {
    in.nodes = objects->nodes;
    in.pods = objects->pods;
  }
  auto g = nodegroups::parse_node_groups(groups, "groups.yaml");
  EXPECT_TRUE(g) << g.error().message;
  if (g) in.node_groups = std::move(g).value();
  return in;
}

std::shared_ptr<const profile::DeviceProfiles> profiles(const std::string& yaml) {
  auto p = profile::parse_device_profiles(yaml, "profiles.yaml", registry());
  EXPECT_TRUE(p) << p.error().message;
  return std::make_shared<const profile::DeviceProfiles>(p.value_or(profile::DeviceProfiles{}));
}

Plan compare(const scaleup::PlanInput& in, std::shared_ptr<const profile::DeviceProfiles> p) {
  auto reg = std::make_shared<const device::DeviceRegistry>(device::build_registry({}));
  auto planning = scaleup::Planning::create(reg, std::move(p), std::nullopt);
  EXPECT_TRUE(planning) << planning.error().message;
  auto plan = plan_comparing_modes(**planning, in, scaleup::PlannerOptions{});
  EXPECT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(plan && plan->mode_comparison);
  return plan.value_or(Plan{});
}

std::string pods(int n, const std::string& limits) {
  std::string out;
  for (int i = 0; i < n; ++i) out += pod_yaml("p-" + std::to_string(i), limits);
  return out;
}

TEST(CompareModes, WithoutGpucoresDraGivesEachShareAWholeGpu) {
  // One 80 GiB GPU (100 cores, 10 shares) per node of a cold-zero group. Four pods ask gpu 1
  // and gpumem 10000, no gpucores. HAMi (device-plugin mode) charges them 0 cores (its default),
  // 4 × 10000 MiB fit one GPU: 1 node. HAMi-DRA's claim asks memory only, so the driver's
  // request policy makes each share consume the default cores, all 100: one share per GPU,
  // 4 nodes. The first pod lands on the first new node in both modes; the other three differ.
  const Plan p = compare(
      input(pods(4, "nvidia.com/gpu: 1, nvidia.com/gpumem: 10000"), groups_yaml("one-a100", true)),
      profiles(kOneGpuProfile));
  const scaleup::ModeComparison& m = *p.mode_comparison;
  ASSERT_EQ(m.groups.size(), 1u);
  EXPECT_EQ(m.groups[0].estimated_nodes, 1);
  EXPECT_EQ(m.groups[0].other_estimated_nodes, 4);
  EXPECT_EQ(m.groups[0].new_nodes, 1);
  EXPECT_EQ(m.groups[0].other_new_nodes, 4);
  EXPECT_EQ(m.decision, Plan::Decision::kScaleUp);
  EXPECT_EQ(m.profiles_converted, 1);
  EXPECT_EQ(m.pending_pods_converted, 4);
  EXPECT_EQ(m.same_outcome, 1);
  ASSERT_EQ(m.pods.size(), 3u);
  for (const auto& d : m.pods) {
    EXPECT_EQ(d.state, State::kTriggersScaleUp);
    EXPECT_EQ(d.dra_state, State::kTriggersScaleUp);
    EXPECT_NE(d.node, d.dra_node);
    EXPECT_TRUE(d.why.empty()) << d.why;
  }
  bool noted = false;
  for (const auto& n : m.not_modelled)
    noted |= n.starts_with("4 claims set gpumem without gpucores");
  EXPECT_TRUE(noted);
}

TEST(CompareModes, WithGpucoresBothModesPackTheSame) {
  // The same pods with gpucores 25: in both modes 4 shares (4 × 25 cores, 4 × 10000 MiB) fit
  // one GPU, so 1 node, and every pod lands on the same node.
  const Plan p =
      compare(input(pods(4, "nvidia.com/gpu: 1, nvidia.com/gpumem: 10000, nvidia.com/gpucores: 25"),
                    groups_yaml("one-a100", true)),
              profiles(kOneGpuProfile));
  const scaleup::ModeComparison& m = *p.mode_comparison;
  EXPECT_EQ(m.groups.at(0).estimated_nodes, 1);
  EXPECT_EQ(m.groups.at(0).other_estimated_nodes, 1);
  EXPECT_EQ(m.same_outcome, 4);
  EXPECT_TRUE(m.pods.empty());
}

TEST(CompareModes, PodsTheWebhookLeavesOrRefusesFitInDevicePluginModeOnly) {
  // pct keeps nvidia.com/gpumem-percentage, which no DRA node has as allocatable: NodeResourcesFit
  // refuses it on every template. bad names nouse-gpuuuid "," : the webhook finds no usable
  // value and refuses the pod, which never exists in DRA mode; HAMi splits it into two empty
  // UUIDs that exclude no GPU. HAMi places both on one new node.
  const std::string cluster =
      pod_yaml("pct", "nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 50") +
      pod_yaml("bad", "nvidia.com/gpu: 1, nvidia.com/gpumem: 1000, nvidia.com/gpucores: 10",
               R"({nvidia.com/nouse-gpuuuid: ","})");
  const Plan p = compare(input(cluster, groups_yaml("one-a100", true)), profiles(kOneGpuProfile));
  const scaleup::ModeComparison& m = *p.mode_comparison;
  EXPECT_EQ(m.groups.at(0).new_nodes, 1);
  EXPECT_EQ(m.groups.at(0).other_new_nodes, 0);
  EXPECT_EQ(m.decision, Plan::Decision::kNoScaleUpPossible);
  ASSERT_EQ(m.pods.size(), 2u);
  const auto& pct = m.pods[0].pod == "ml/pct" ? m.pods[0] : m.pods[1];
  const auto& bad = m.pods[0].pod == "ml/pct" ? m.pods[1] : m.pods[0];
  EXPECT_EQ(pct.state, State::kTriggersScaleUp);
  EXPECT_EQ(pct.dra_state, State::kNoScaleUpHelps);
  EXPECT_NE(pct.why.find("nvidia.com/gpumem-percentage"), std::string::npos) << pct.why;
  EXPECT_NE(pct.why.find("is not converted"), std::string::npos) << pct.why;
  EXPECT_EQ(bad.state, State::kTriggersScaleUp);
  EXPECT_FALSE(bad.dra_state.has_value());
  EXPECT_NE(bad.why.find("webhook refuses it: annotation nvidia.com/nouse-gpuuuid"),
            std::string::npos)
      << bad.why;
}

TEST(CompareModes, RunningPodsKeepTheirGpusAndConsumeWhatDraMakesOfTheirRequests) {
  // gpu-node-1 has one GPU (81920 MiB, 100 cores) and runs `held` on it: 40000 MiB, 50 cores.
  // Pending a (40000 MiB, 40 cores) fits next to it in both modes. Pending b (1000 MiB, no
  // gpucores): HAMi charges 0 cores, 81000 MiB in all (and 90 of 100 cores used, so the GPU's
  // cores are not exhausted), so it fits gpu-node-1 too. In DRA mode b's share consumes all
  // 100 cores and 90 are taken: it needs a new node of the warm group.
  const std::string registration =
      R"('[{"id":"GPU-a","count":10,"devmem":81920,"devcore":100,"type":"NVIDIA-A100","health":true}]')";
  std::string cluster =
      "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: gpu-node-1\n    labels: {pool: gpu}\n"
      "    annotations: {hami.io/node-nvidia-register: " +
      registration +
      "}\n  status:\n    capacity: {cpu: '64', memory: 512Gi, pods: '110', nvidia.com/gpu: '10'}\n"
      "    allocatable: {cpu: '64', memory: 512Gi, pods: '110', nvidia.com/gpu: '10'}\n"
      "    conditions: [{type: Ready, status: 'True'}]\n";
  cluster +=
      pod_yaml("held", "nvidia.com/gpu: 1, nvidia.com/gpumem: 40000, nvidia.com/gpucores: 50",
               R"({hami.io/vgpu-devices-allocated: "GPU-a,NVIDIA,40000,50:;"})", "gpu-node-1");
  cluster += pod_yaml("a", "nvidia.com/gpu: 1, nvidia.com/gpumem: 40000, nvidia.com/gpucores: 40");
  cluster += pod_yaml("b", "nvidia.com/gpu: 1, nvidia.com/gpumem: 1000");
  const Plan p = compare(input(cluster, groups_yaml("", false)), nullptr);
  EXPECT_EQ(p.decision, Plan::Decision::kNoScaleUpNeeded) << p.summary;
  const scaleup::ModeComparison& m = *p.mode_comparison;
  EXPECT_EQ(m.nodes_converted, 1);
  EXPECT_EQ(m.running_pods_converted, 1);
  EXPECT_EQ(m.decision, Plan::Decision::kScaleUp) << m.summary;
  EXPECT_EQ(m.groups.at(0).other_new_nodes, 1);
  EXPECT_EQ(m.same_outcome, 1);  // a
  ASSERT_EQ(m.pods.size(), 1u);
  EXPECT_EQ(m.pods[0].pod, "ml/b");
  EXPECT_EQ(m.pods[0].state, State::kFitsExistingNode);
  EXPECT_EQ(m.pods[0].node, "gpu-node-1");
  EXPECT_EQ(m.pods[0].dra_state, State::kTriggersScaleUp);
}

TEST(CompareModes, ProfileSlicesOfTheBundledProfilePlanLikeTheDevicePluginProfile) {
  // Issue #29's done-when: what `hamisim profile slices` prints for the bundled nd96-a100-80g
  // profile (8 GPUs of 81920 MiB), read back as a profile's `dra: {resourceSlices: ...}`, is a
  // cold-zero template in DRA mode. 100 pods of gpu 1, gpumem 20000, gpucores 25: per GPU
  // min(100/25, 81920/20000) = 4 shares in both modes (HAMi's split of 10 does not bind),
  // 32 per node, so 4 nodes either way. Without gpucores DRA gives each share a whole GPU:
  // 8 per node, 13 nodes (HAMi still packs 4 per GPU by memory: 4 nodes).
  std::ifstream file(std::string(testing::examples_dir()) + "/profiles/device-profiles.yaml");
  std::stringstream text;
  text << file.rdbuf();
  auto bundled = profiles(text.str());
  const profile::DeviceProfile* a100 = bundled->find("nd96-a100-80g");
  ASSERT_NE(a100, nullptr);
  std::string items;
  for (const auto& s : profile::dra_slices_for_node(*a100, "template-node-for-gpu-a100")) {
    items += (items.empty() ? "" : ", ") + dra::encode_resource_slice(s);
  }
  auto from_slices = profiles(
      "apiVersion: hamisim.io/v1\nkind: DeviceProfiles\nprofiles:\n  - name: a100-slices\n"
      "    match: {nodeGroups: [gpu]}\n    dra:\n      resourceSlices: [" +
      items + "]\n");
  ASSERT_EQ(from_slices->profiles.size(), 1u);
  EXPECT_EQ(from_slices->profiles[0].dra_slices.at(0).devices.size(), 8u);

  for (const auto& [limits, plugin_nodes, dra_nodes] :
       {std::tuple{"nvidia.com/gpu: 1, nvidia.com/gpumem: 20000, nvidia.com/gpucores: 25", 4, 4},
        std::tuple{"nvidia.com/gpu: 1, nvidia.com/gpumem: 20000", 4, 13}}) {
    // Device-plugin mode with the bundled profile.
    const Plan plugin =
        compare(input(pods(100, limits), groups_yaml("nd96-a100-80g", true)), bundled);
    EXPECT_EQ(plugin.mode_comparison->groups.at(0).new_nodes, plugin_nodes) << limits;
    // DRA mode from the printed slices: the converted input of a cluster whose profile is the
    // slices alone, planned without HAMi's extender.
    auto converted = to_dra_mode(input(pods(100, limits), groups_yaml("a100-slices", true)),
                                 from_slices.get(), registry());
    ASSERT_TRUE(converted) << converted.error().message;
    auto planning = scaleup::Planning::create(std::make_shared<const device::DeviceRegistry>(),
                                              converted->profiles, std::nullopt);
    ASSERT_TRUE(planning);
    auto dra = (*planning)->plan(converted->input, scaleup::PlannerOptions{});
    ASSERT_TRUE(dra) << dra.error().message;
    ASSERT_EQ(dra->scale_ups.size(), 1u) << dra->summary;
    EXPECT_EQ(dra->scale_ups[0].delta(), dra_nodes) << limits;
    // And --compare-modes' own conversion of the bundled profile agrees.
    EXPECT_EQ(plugin.mode_comparison->groups.at(0).other_new_nodes, dra_nodes) << limits;
  }
}

}  // namespace
}  // namespace hamisim::planner::modes
