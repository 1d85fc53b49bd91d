// The scale-up planner end to end, in process (spec §6.2; ca-scale-up.md §4): the bundled
// example by hand calculation, device packing, quota, caps and skip reasons.

#include "planner/scaleup/plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/catalog/device_config.h"
#include "model/decode.h"
#include "planner/report/report.h"
#include "planner/scaleup/planning.h"
#include "test_paths.h"

namespace hamisim::planner::scaleup {
namespace {

using State = PodOutcome::State;

std::shared_ptr<const device::DeviceRegistry> registry() {
  static auto r = std::make_shared<const device::DeviceRegistry>(device::build_registry({}));
  return r;
}

struct Scenario {
  PlanInput input;
  std::shared_ptr<const profile::DeviceProfiles> profiles;
};

Scenario from_yaml(const std::string& cluster, const std::string& groups,
                   const std::string& profiles = {}) {
  Scenario s;
  auto objects = model::decode_objects(cluster);
  EXPECT_TRUE(objects) << objects.error().message;
  s.input.nodes = objects->nodes;
  s.input.pods = objects->pods;
  s.input.quotas = objects->quotas;
  auto g = nodegroups::parse_node_groups(groups, "groups.yaml");
  EXPECT_TRUE(g) << g.error().message;
  s.input.node_groups = std::move(g).value();
  if (!profiles.empty()) {
    auto p = profile::parse_device_profiles(profiles, "profiles.yaml", *registry());
    EXPECT_TRUE(p) << p.error().message;
    s.profiles = std::make_shared<const profile::DeviceProfiles>(std::move(p).value());
  }
  return s;
}

Scenario bundled_example() {
  const std::string dir = std::string(hamisim::testing::examples_dir()) + "/plan/";
  auto read = [&](const char* f) {
    auto text = model::read_file(dir + f);
    EXPECT_TRUE(text) << text.error().message;
    return text.value_or("");
  };
  return from_yaml(read("cluster.yaml"), read("node-groups.yaml"), read("device-profiles.yaml"));
}

Plan plan(const Scenario& s, PlannerOptions o = {},
          std::optional<extender::SchedulerConfig> config = std::nullopt) {
  auto planning = Planning::create(registry(), s.profiles, std::move(config));
  EXPECT_TRUE(planning) << planning.error().message;
  auto p = (*planning)->plan(s.input, o);
  EXPECT_TRUE(p) << p.error().message;
  return p.value_or(Plan{});
}

const PodOutcome& pod(const Plan& p, const std::string& key) {
  for (const auto& o : p.pods) {
    if (o.pod == key) return o;
  }
  ADD_FAILURE() << "no outcome for " << key;
  static PodOutcome none;
  return none;
}

const GroupEvaluation& group(const Plan& p, const std::string& name) {
  for (const auto& g : p.groups) {
    if (g.name == name) return g;
  }
  ADD_FAILURE() << "no group " << name;
  static GroupEvaluation none;
  return none;
}

// The README's main command. By hand: trainer-2 wants 1 GPU with 8000 MiB; both K80 entries
// of k80-node-1 hold 8000 of 11441 MiB, so no existing node takes it (2/2
// CardInsufficientMemory), while web-0 (no GPU) fits cpu-node-1. A fresh gpu-k80 node and a
// fresh gpu-a100 node (from its profile) can take trainer-2, the cpu group cannot (node
// unregistered). least-waste: gpu-k80 (12 cpu, 112Gi) wastes 10000/12000 + 104/112 = 1.7619,
// gpu-a100 (96 cpu, 1900Gi) 94000/96000 + 1892/1900 = 1.9750: gpu-k80 grows from 1 to 2.
TEST(Planner, BundledExampleByHand) {
  Plan p = plan(bundled_example());
  EXPECT_EQ(p.decision, Plan::Decision::kScaleUp);
  ASSERT_EQ(p.scale_ups.size(), 1u);
  EXPECT_EQ(p.scale_ups[0].group, "gpu-k80");
  EXPECT_EQ(p.scale_ups[0].current_size, 1);
  EXPECT_EQ(p.scale_ups[0].new_size, 2);
  EXPECT_EQ(p.summary, "scale up gpu-k80 by 1 node (1 -> 2): 1 pod placed on new nodes");

  const PodOutcome& web = pod(p, "shop/web-0");
  EXPECT_EQ(web.state, State::kFitsExistingNode);
  EXPECT_EQ(web.node, "cpu-node-1");
  const PodOutcome& trainer = pod(p, "ml/trainer-2");
  EXPECT_EQ(trainer.state, State::kTriggersScaleUp);
  EXPECT_EQ(trainer.node, "template-node-for-gpu-k80-0-e-0");
  // Both devices of the fresh copy are empty; HAMi's order with equal scores picks the last.
  EXPECT_EQ(trainer.allocations.at("hami.io/vgpu-devices-allocated"),
            "GPU-0a1b2c3d-0000-4000-8000-000000000001,NVIDIA,8000,50:;");

  const GroupEvaluation& k80 = group(p, "gpu-k80");
  EXPECT_TRUE(k80.chosen);
  EXPECT_EQ(k80.sample_node, "k80-node-1");
  EXPECT_EQ(k80.estimated_nodes, 1);
  EXPECT_EQ(k80.expander_note, "least-waste score 1.7619");
  const GroupEvaluation& a100 = group(p, "gpu-a100");
  EXPECT_FALSE(a100.chosen);
  EXPECT_TRUE(a100.option);
  EXPECT_EQ(a100.device_source, "profile");
  EXPECT_EQ(a100.device_profile, "nd96-a100-80g");
  EXPECT_EQ(a100.template_source, nodegroups::GroupTemplate::Source::kCold);
  EXPECT_NE(a100.expander_note.find("least-waste score 1.9750"), std::string::npos)
      << a100.expander_note;
  const GroupEvaluation& cpu = group(p, "cpu");
  EXPECT_FALSE(cpu.option);
  EXPECT_EQ(cpu.rejected_pods.at("ml/trainer-2"), "HAMi: node unregistered");

  ASSERT_EQ(p.new_nodes.size(), 1u);
  const PlannedNode& n = p.new_nodes[0];
  EXPECT_EQ(n.pods, std::vector<std::string>{"ml/trainer-2"});
  EXPECT_EQ(n.cpu_requested_milli, 2000);
  ASSERT_EQ(n.devices.size(), 2u);
  EXPECT_EQ(n.devices[0].used_memory, 0);
  EXPECT_EQ(n.devices[1].used_memory, 8000);
  EXPECT_EQ(n.devices[1].total_memory, 11441);
  EXPECT_EQ(n.devices[1].used_cores, 50);
  EXPECT_EQ(n.devices[1].used_slots, 1);
  EXPECT_EQ(n.devices[1].total_slots, 10);
}

// A CLI run keeps its state until exit instead of freeing it: the plan is the same, and the
// state is handed over (it outlives the call).
// Issue #47: why a template's GPUs cannot take a pod, with numbers: what the pod asks and the
// most a GPU of the template has free. A K80 entry has 11441 MiB; the pod asks 12000. HAMi's
// reason stays HAMi's; a group without devices (node unregistered) gets no numbers.
TEST(Planner, DeviceRejectionsSayWhatThePodAsksAndTheMostAGpuHasFree) {
  Scenario s = bundled_example();
  auto big = model::decode_pod(R"(metadata: {name: big, namespace: ml}
spec:
  containers:
  - name: main
    resources:
      limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 12000, nvidia.com/gpucores: 30}
)");
  ASSERT_TRUE(big) << big.error().message;
  s.input.pods.push_back(*big);
  const Plan p = plan(s);
  const GroupEvaluation& k80 = group(p, "gpu-k80");
  EXPECT_EQ(k80.rejected_pods.at("ml/big"), "HAMi: 2/2 CardInsufficientMemory");
  EXPECT_EQ(k80.rejected_details.at("ml/big"),
            "asks 1 NVIDIA GPU with 12000 MiB and 30% cores; most free on one GPU: 11441 of "
            "11441 MiB and 100% cores (GPU 0); 2 of 2 GPUs "
            "have a free slot");
  const GroupEvaluation& cpu = group(p, "cpu");
  EXPECT_EQ(cpu.rejected_pods.at("ml/big"), "HAMi: node unregistered");
  EXPECT_EQ(cpu.rejected_details.count("ml/big"), 0u);
  // The A100 template takes it: nothing to explain.
  EXPECT_EQ(group(p, "gpu-a100").rejected_details.count("ml/big"), 0u);
}

// Every result names a pending pod by namespace/name, so two with one name are refused,
// whether they are what-if pods or the snapshot's pods without a node.
TEST(Planner, TwoPendingPodsWithOneNameAreAnError) {
  Scenario s = bundled_example();
  auto planning = Planning::create(registry(), s.profiles, std::nullopt);
  ASSERT_TRUE(planning) << planning.error().message;
  const auto trainer =
      std::find_if(s.input.pods.begin(), s.input.pods.end(),
                   [](const model::Pod& p) { return p.metadata.name == "trainer-2"; });
  ASSERT_NE(trainer, s.input.pods.end());
  const model::Pod copy = *trainer;

  Scenario snapshot = s;
  snapshot.input.pods.push_back(copy);
  auto p = (*planning)->plan(snapshot.input, {});
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message, "pending pod ml/trainer-2 appears twice");

  Scenario what_if = s;
  what_if.input.pending = std::vector<model::Pod>{copy, copy};
  p = (*planning)->plan(what_if.input, {});
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message, "pending pod ml/trainer-2 appears twice");

  // A bound pod may share a pending pod's name (it is not planned for).
  Scenario bound = s;
  model::Pod placed = copy;
  placed.spec.node_name = "k80-node-1";
  placed.metadata.namespace_ = "ml";
  bound.input.pods.push_back(placed);
  EXPECT_TRUE((*planning)->plan(bound.input, {}));
}

TEST(Planner, KeepingTheStateUntilExitChangesNothingInThePlan) {
  const Scenario s = bundled_example();
  PlannerOptions keep;
  keep.keep_state_until_exit = true;
  const Plan freed = plan(s);
  const Plan kept = plan(s, keep);
  EXPECT_EQ(kept.summary, freed.summary);
  EXPECT_EQ(kept.decision, freed.decision);
  ASSERT_EQ(kept.pods.size(), freed.pods.size());
  for (size_t i = 0; i < kept.pods.size(); ++i) {
    EXPECT_EQ(kept.pods[i].pod, freed.pods[i].pod);
    EXPECT_EQ(kept.pods[i].node, freed.pods[i].node);
    EXPECT_EQ(kept.pods[i].allocations, freed.pods[i].allocations);
  }
  ASSERT_EQ(kept.groups.size(), freed.groups.size());
  for (size_t i = 0; i < kept.groups.size(); ++i) {
    EXPECT_EQ(kept.groups[i].expander_note, freed.groups[i].expander_note);
  }

  auto state = std::make_shared<int>(7);
  std::weak_ptr<int> watch = state;
  keep_until_exit(std::move(state));
  EXPECT_FALSE(watch.expired());
}

// An input handed over (the CLI's) is planned as a copied one: the snapshot shares its nodes
// and pods, and its pods are defaulted in place (requests from limits) as make() defaults the
// copies. Running pods and what-if pods both.
TEST(Planner, AHandedOverInputIsPlannedAsACopiedOne) {
  const Scenario s = bundled_example();
  bool limits_only = false;
  for (const model::Pod& p : s.input.pods) limits_only |= model::needs_default_requests(p.spec);
  ASSERT_TRUE(limits_only) << "the example should have a pod that asks by limits only";
  auto planning = Planning::create(registry(), s.profiles, std::nullopt);
  ASSERT_TRUE(planning) << planning.error().message;
  for (bool what_if : {false, true}) {
    for (bool keep : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "what-if pods " << what_if << ", kept " << keep);
      PlanInput copied = s.input;
      if (what_if) {
        std::vector<model::Pod> pending;
        for (const model::Pod& p : copied.pods) {
          if (p.spec.node_name.empty()) pending.push_back(p);
        }
        copied.pending = std::move(pending);
      }
      PlannerOptions o;
      o.keep_state_until_exit = keep;
      auto expected = (*planning)->plan(copied, o);
      ASSERT_TRUE(expected) << expected.error().message;
      auto handed = std::make_shared<PlanInput>(copied);
      std::weak_ptr<PlanInput> watch = handed;
      auto got = (*planning)->plan(handed, o);
      ASSERT_TRUE(got) << got.error().message;
      EXPECT_EQ(report::render_json(*got), report::render_json(*expected));
      for (const model::Pod& p : handed->pods) EXPECT_FALSE(model::needs_default_requests(p.spec));
      handed.reset();
      // Only a run that keeps its state until exit keeps the input alive after the call.
      EXPECT_EQ(watch.expired(), !keep);
    }
  }
}

// The existing node's pods are counted: with trainer-1 gone, GPU 1 has room and trainer-2
// fits k80-node-1: no scale-up.
TEST(Planner, ExistingDeviceUsageDecidesFilterOutSchedulable) {
  Scenario s = bundled_example();
  std::erase_if(s.input.pods, [](const model::Pod& p) { return p.metadata.name == "trainer-1"; });
  Plan p = plan(s);
  EXPECT_EQ(p.decision, Plan::Decision::kNoScaleUpNeeded);
  const PodOutcome& trainer = pod(p, "ml/trainer-2");
  EXPECT_EQ(trainer.state, State::kFitsExistingNode);
  EXPECT_EQ(trainer.node, "k80-node-1");
  EXPECT_EQ(trainer.allocations.at("hami.io/vgpu-devices-allocated"),
            "GPU-0a1b2c3d-0000-4000-8000-000000000001,NVIDIA,8000,50:;");
}

// CA's SimilarPodsScheduling: trainer-3, a replica of trainer-2 (same controller, labels and
// spec), is not tried against the existing nodes once trainer-2 found none; both are
// planned onto new nodes.
TEST(Planner, ASimilarPodOfAPodThatFoundNoNodeIsNotTriedAgain) {
  Scenario s = bundled_example();
  model::Pod replica;
  for (const model::Pod& p : s.input.pods) {
    if (p.metadata.name == "trainer-2") replica = p;
  }
  replica.metadata.name = "trainer-3";
  s.input.pods.push_back(replica);
  Plan p = plan(s);
  const PodOutcome& first = pod(p, "ml/trainer-2");
  const PodOutcome& second = pod(p, "ml/trainer-3");
  EXPECT_EQ(first.state, State::kTriggersScaleUp);
  EXPECT_EQ(second.state, State::kTriggersScaleUp);
  ASSERT_EQ(p.scale_ups.size(), 1u);
  EXPECT_EQ(p.scale_ups[0].delta(), 1);  // 8000 MiB twice: both K80 entries of one copy
}

constexpr const char* kA100Profile = R"(
apiVersion: hamisim.io/v1
kind: DeviceProfiles
profiles:
  - name: a100
    match: {nodeGroups: [gpu]}
    devices:
      - {count: 8, split: 10, devmem: 81920, devcore: 100, type: NVIDIA A100-SXM4-80GB}
)";

constexpr const char* kColdGpuGroup = R"(
apiVersion: hamisim.io/v1
kind: NodeGroups
nodeGroups:
  - name: gpu
    minSize: 0
    maxSize: 10
    template:
      status: {capacity: {cpu: "96", memory: 1900Gi, pods: "110"}}
)";

std::string fractional_pods(int n, const std::string& mem, const std::string& cores) {
  std::string out = "apiVersion: v1\nkind: List\nitems:\n";
  for (int i = 0; i < n; ++i) {
    out += "- apiVersion: v1\n  kind: Pod\n  metadata: {name: job-" + std::to_string(i) +
           ", namespace: ml}\n  spec:\n    containers:\n    - name: c\n      resources:\n"
           "        limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: " +
           mem + (cores.empty() ? "" : ", nvidia.com/gpucores: " + cores) + "}\n";
  }
  return out;
}

// Many fractional-GPU pods pack into the right node count because the planner counts the
// devices of pods it already placed (CA with HAMi's own extender would put all 25 on one node).
// gpumem 8000 on 80 GB GPUs split 10: 10 per GPU by memory and by slots, 80 per node: 1 node.
TEST(Planner, FractionalPodsPackByMemoryAndSlots) {
  Plan p = plan(from_yaml(fractional_pods(25, "8000", ""), kColdGpuGroup, kA100Profile));
  ASSERT_EQ(p.decision, Plan::Decision::kScaleUp);
  EXPECT_EQ(p.scale_ups[0].delta(), 1);
  ASSERT_EQ(p.new_nodes.size(), 1u);
  EXPECT_EQ(p.new_nodes[0].pods.size(), 25u);
  int64_t used = 0, slots = 0;
  for (const auto& d : p.new_nodes[0].devices) {
    used += d.used_memory;
    slots += d.used_slots;
    EXPECT_LE(d.used_memory, d.total_memory);
  }
  EXPECT_EQ(used, 25 * 8000);
  EXPECT_EQ(slots, 25);
}

// With 30% of a GPU's cores each, three pods share a GPU: 24 per node, so 25 pods need 2.
TEST(Planner, FractionalPodsPackByCores) {
  Plan p = plan(from_yaml(fractional_pods(25, "8000", "30"), kColdGpuGroup, kA100Profile));
  ASSERT_EQ(p.decision, Plan::Decision::kScaleUp);
  EXPECT_EQ(p.scale_ups[0].delta(), 2);
  ASSERT_EQ(p.new_nodes.size(), 2u);
  EXPECT_EQ(p.new_nodes[0].pods.size(), 24u);
  EXPECT_EQ(p.new_nodes[1].pods.size(), 1u);
  for (const auto& d : p.new_nodes[0].devices) EXPECT_EQ(d.used_cores, 90);
}

// 40 GB each: two per GPU, 16 per node: 25 pods need 2 nodes (16 + 9).
TEST(Planner, FractionalPodsPackByMemory) {
  Plan p = plan(from_yaml(fractional_pods(25, "40000", ""), kColdGpuGroup, kA100Profile));
  ASSERT_EQ(p.decision, Plan::Decision::kScaleUp);
  EXPECT_EQ(p.scale_ups[0].delta(), 2);
  EXPECT_EQ(p.new_nodes[0].pods.size(), 16u);
  EXPECT_EQ(p.new_nodes[1].pods.size(), 9u);
}

// Issue #33: the same pods planned as a Cluster Autoscaler that does not send SimulatedPods
// plans them. 40 pods, each 1 GPU with 30000 MiB and 10% of its cores, 4 CPUs and 8 GiB, on
// the cold A100 group (8 GPUs of 81920 MiB, split 10; 96 CPUs, 1900 GiB, 110 pods). By hand:
// - correct: a GPU holds floor(81920 / 30000) = 2 pods (cores would allow 10, slots 10), so a
//   node holds 8 x 2 = 16 pods, using 64 of its 96 CPUs: memory-bound. 40 pods need
//   16 + 16 + 8 = 3 nodes.
// - unpatched CA: its extender sees every copy empty, so each pod "fits" wherever the CPUs
//   do (HAMi's resources are ignored by NodeResourcesFit): floor(96 / 4) = 24 pods per node,
//   40 pods on 24 + 16 = 2 nodes.
// - after its 2-node scale-up, with devices counted, 2 x 16 = 32 pods fit (job-0..job-31 in
//   the estimator's order) and 40 - 32 = 8 stay pending: job-32..job-39.
TEST(Planner, AnUnpatchedCaAsksForTooFewNodesWhenDeviceMemoryBoundsThePacking) {
  std::string pods = "apiVersion: v1\nkind: List\nitems:\n";
  for (int i = 0; i < 40; ++i) {
    pods += "- apiVersion: v1\n  kind: Pod\n  metadata: {name: job-" + std::to_string(i) +
            ", namespace: ml}\n  spec:\n    containers:\n    - name: c\n      resources:\n"
            "        requests: {cpu: '4', memory: 8Gi}\n"
            "        limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 30000, "
            "nvidia.com/gpucores: 10}\n";
  }
  const Scenario s = from_yaml(pods, kColdGpuGroup, kA100Profile);
  PlannerOptions o;
  o.compare_unpatched_ca = true;
  Plan p = plan(s, o);
  ASSERT_EQ(p.decision, Plan::Decision::kScaleUp);
  ASSERT_EQ(p.scale_ups.size(), 1u);
  EXPECT_EQ(p.scale_ups[0].delta(), 3);
  ASSERT_EQ(p.new_nodes.size(), 3u);
  EXPECT_EQ(p.new_nodes[0].pods.size(), 16u);
  EXPECT_EQ(p.new_nodes[2].pods.size(), 8u);

  ASSERT_NE(p.unpatched_ca, nullptr);
  const UnpatchedCaPlan& u = *p.unpatched_ca;
  EXPECT_EQ(u.decision, Plan::Decision::kScaleUp);
  EXPECT_EQ(u.summary, "scale up gpu by 2 nodes (0 -> 2): 40 pods placed on new nodes");
  ASSERT_EQ(u.scale_ups.size(), 1u);
  EXPECT_EQ(u.scale_ups[0].delta(), 2);
  ASSERT_EQ(u.groups.size(), 1u);
  EXPECT_EQ(u.groups[0].name, "gpu");
  EXPECT_EQ(u.groups[0].estimated_nodes, 3);
  EXPECT_EQ(u.groups[0].other_estimated_nodes, 2);
  EXPECT_EQ(u.groups[0].new_nodes, 3);
  EXPECT_EQ(u.groups[0].other_new_nodes, 2);
  ASSERT_EQ(u.left_pending.size(), 8u);
  for (size_t i = 0; i < u.left_pending.size(); ++i) {
    EXPECT_EQ(u.left_pending[i].pod, "ml/job-" + std::to_string(32 + i));
    EXPECT_EQ(u.left_pending[i].reason,
              "such a CA counts it on its new node template-node-for-gpu-0-e-1; with devices "
              "counted, the 2 nodes it adds (gpu) have no room for it");
  }
  // The comparison changes nothing in the plan itself.
  Plan alone = plan(s);
  EXPECT_EQ(alone.unpatched_ca, nullptr);
  EXPECT_EQ(alone.summary, p.summary);
  EXPECT_EQ(alone.new_nodes.size(), p.new_nodes.size());
}

// On the bundled example such a CA asks for no node at all: its extender sees k80-node-1's
// K80s unused (trainer-0 and trainer-1 hold 8000 of their 11441 MiB), so trainer-2 "fits"
// there, and trainer-2 stays pending where the correct plan adds a gpu-k80 node.
TEST(Planner, AnUnpatchedCaSeesExistingNodesEmptyToo) {
  PlannerOptions o;
  o.compare_unpatched_ca = true;
  Plan p = plan(bundled_example(), o);
  ASSERT_EQ(p.decision, Plan::Decision::kScaleUp);
  ASSERT_NE(p.unpatched_ca, nullptr);
  const UnpatchedCaPlan& u = *p.unpatched_ca;
  EXPECT_EQ(u.decision, Plan::Decision::kNoScaleUpNeeded);
  EXPECT_TRUE(u.scale_ups.empty());
  ASSERT_EQ(u.groups.size(), 3u);
  EXPECT_EQ(u.groups[0].name, "gpu-k80");
  EXPECT_EQ(u.groups[0].new_nodes, 1);
  EXPECT_EQ(u.groups[0].other_new_nodes, 0);
  ASSERT_EQ(u.left_pending.size(), 1u);
  EXPECT_EQ(u.left_pending[0].pod, "ml/trainer-2");
  EXPECT_EQ(u.left_pending[0].reason,
            "such a CA counts it on existing node k80-node-1, whose devices it sees unused, and "
            "adds no node for it");
}

// The group's max size caps the estimate; pods beyond it wait, with the limiter's reason.
TEST(Planner, MaxSizeCapsTheEstimate) {
  std::string groups = kColdGpuGroup;
  groups.replace(groups.find("maxSize: 10"), 11, "maxSize: 1");
  Plan p = plan(from_yaml(fractional_pods(25, "40000", ""), groups, kA100Profile));
  ASSERT_EQ(p.decision, Plan::Decision::kScaleUp);
  EXPECT_EQ(p.scale_ups[0].new_size, 1);
  EXPECT_EQ(p.new_nodes.size(), 1u);
  size_t waiting = 0;
  for (const auto& o : p.pods) waiting += o.state == State::kAwaitsEvaluation;
  EXPECT_EQ(waiting, 9u);
}

// A device ResourceQuota no new node can fix: the pod is reported blocked, not scaled for.
TEST(Planner, DeviceQuotaBlocksWithoutScaleUp) {
  std::string cluster = fractional_pods(1, "40000", "");
  cluster +=
      "- apiVersion: v1\n  kind: ResourceQuota\n  metadata: {name: gpu, namespace: ml}\n"
      "  spec: {hard: {limits.nvidia.com/gpumem: \"30000\"}}\n";
  Plan p = plan(from_yaml(cluster, kColdGpuGroup, kA100Profile));
  EXPECT_EQ(p.decision, Plan::Decision::kNoScaleUpNeeded);
  const PodOutcome& o = pod(p, "ml/job-0");
  EXPECT_EQ(o.state, State::kBlocked);
  EXPECT_EQ(o.reason,
            "device quota exceeded: nvidia.com/gpumem: used 0 + requested 40000 > limit 30000 in "
            "namespace ml");
}

// Skip reasons: a group at its max size and a group with nothing to build a template from.
TEST(Planner, InvalidGroupsAreSkippedWithReasons) {
  Scenario s = from_yaml(fractional_pods(1, "8000", ""), R"(
apiVersion: hamisim.io/v1
kind: NodeGroups
nodeGroups:
  - {name: full, minSize: 0, maxSize: 2, targetSize: 2, members: {pool: full}}
  - {name: empty, minSize: 0, maxSize: 2}
)");
  Plan p = plan(s);
  EXPECT_EQ(p.decision, Plan::Decision::kNoScaleUpPossible);
  EXPECT_EQ(group(p, "full").skip_reason, "max size reached (target 2, max 2)");
  EXPECT_NE(group(p, "empty").skip_reason.find("no template"), std::string::npos);
  EXPECT_EQ(pod(p, "ml/job-0").state, State::kNoScaleUpHelps);
}

// --max-nodes-total caps the new node count (GetCappedNewNodeCount).
TEST(Planner, MaxNodesTotalCapsTheScaleUp) {
  PlannerOptions o;
  o.max_nodes_total = 1;
  Plan p = plan(from_yaml(fractional_pods(25, "40000", ""), kColdGpuGroup, kA100Profile), o);
  ASSERT_EQ(p.decision, Plan::Decision::kScaleUp);
  EXPECT_EQ(p.scale_ups[0].new_size, 1);
}

// Expendable pods never trigger a scale-up.
TEST(Planner, ExpendablePodsAreIgnored) {
  std::string cluster = fractional_pods(1, "8000", "");
  cluster.replace(cluster.find("    containers:"), 0, "    priority: -100\n");
  Plan p = plan(from_yaml(cluster, kColdGpuGroup, kA100Profile));
  EXPECT_EQ(p.decision, Plan::Decision::kNoScaleUpNeeded);
  EXPECT_EQ(pod(p, "ml/job-0").state, State::kIgnored);
}

// Two identical groups with balancing: the scale-up is split between them (CA §4.7).
TEST(Planner, BalancesSimilarGroups) {
  const std::string groups = R"(
apiVersion: hamisim.io/v1
kind: NodeGroups
nodeGroups:
  - name: gpu
    maxSize: 10
    deviceProfile: a100
    template: {status: {capacity: {cpu: "96", memory: 1900Gi, pods: "110"}}}
  - name: gpu-b
    maxSize: 10
    deviceProfile: a100
    template: {status: {capacity: {cpu: "96", memory: 1900Gi, pods: "110"}}}
)";
  PlannerOptions o;
  o.balance_similar_node_groups = true;
  Plan p = plan(from_yaml(fractional_pods(64, "40000", ""), groups, kA100Profile), o);
  ASSERT_EQ(p.decision, Plan::Decision::kScaleUp);
  ASSERT_EQ(p.scale_ups.size(), 2u);
  EXPECT_EQ(p.scale_ups[0].delta() + p.scale_ups[1].delta(), 4);
  EXPECT_EQ(p.scale_ups[0].delta(), 2);
  EXPECT_EQ(group(p, "gpu").similar_groups, std::vector<std::string>{"gpu-b"});
}

// Bad expander chains and priority configs are input errors naming the flag.
TEST(Planner, InputErrorsNameTheFlag) {
  auto planning = Planning::create(registry(), nullptr, std::nullopt);
  ASSERT_TRUE(planning);
  PlannerOptions o;
  o.expander = "least-waste,nonsense";
  auto p = (*planning)->plan(bundled_example().input, o);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message.rfind("--expander: ", 0), 0u) << p.error().message;
  o.expander = "priority";
  o.priority_config = "10: [\"(\"]";
  p = (*planning)->plan(bundled_example().input, o);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message.rfind("--priority-config: ", 0), 0u) << p.error().message;
}

// The same input twice gives the same plan (no hidden randomness or state).
TEST(Planner, Deterministic) {
  Scenario s = bundled_example();
  Plan a = plan(s), b = plan(s);
  EXPECT_EQ(a.summary, b.summary);
  ASSERT_EQ(a.pods.size(), b.pods.size());
  for (size_t i = 0; i < a.pods.size(); ++i) {
    EXPECT_EQ(a.pods[i].node, b.pods[i].node);
    EXPECT_EQ(a.pods[i].allocations, b.pods[i].allocations);
  }
}

// Issue #30: the expander note carries the scores of the expanders in use, not always
// least-waste's.
TEST(Planner, ExpanderNotesAreThoseOfTheChainInUse) {
  const Scenario s = bundled_example();
  PlannerOptions price;
  price.expander = "price";
  const Plan by_price = plan(s, price);
  EXPECT_THAT(group(by_price, "gpu-k80").expander_note, ::testing::StartsWith("price score "));
  EXPECT_THAT(group(by_price, "gpu-a100").expander_note, ::testing::StartsWith("price score "));
  EXPECT_THAT(group(by_price, "gpu-k80").expander_note,
              ::testing::Not(::testing::HasSubstr("least-waste")));

  PlannerOptions priority;
  priority.expander = "priority,least-waste";
  priority.priority_config = "10:\n  - gpu-a100\n1:\n  - .*\n";
  const Plan by_priority = plan(s, priority);
  EXPECT_THAT(group(by_priority, "gpu-a100").expander_note,
              ::testing::StartsWith("priority 10; least-waste score "));
  EXPECT_THAT(group(by_priority, "gpu-k80").expander_note,
              ::testing::StartsWith("priority 1; least-waste score "));
  ASSERT_EQ(by_priority.scale_ups.size(), 1u);
  EXPECT_EQ(by_priority.scale_ups[0].group, "gpu-a100");
}

// Issue #30: Cluster Autoscaler's estimator may put a pod with hostname topology spread on an
// existing node (when the last copy would break the skew, it tries every other node, real ones
// included) and counts that node among the new ones. oldnode runs one pod of app spread; eight
// pending pods spread over hostnames with maxSkew 1 and minDomains 3, so none fits oldnode
// before the estimate adds copies (one domain < 3: the global minimum is 0, oldnode's skew 2).
// During the estimate some land on oldnode. The node count keeps CA's arithmetic (existing
// nodes counted), but the new nodes are the copies only, and a warning names oldnode.
TEST(Planner, AnExistingNodeTheEstimateCountsIsNotANewNode) {
  std::string cluster =
      "apiVersion: v1\nkind: List\nitems:\n"
      "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: oldnode\n"
      "    labels: {pool: web, kubernetes.io/hostname: oldnode}\n  status:\n"
      "    capacity: {cpu: '8', memory: 32Gi, pods: '110'}\n"
      "    allocatable: {cpu: '8', memory: 32Gi, pods: '110'}\n"
      "    conditions: [{type: Ready, status: 'True'}]\n"
      "- apiVersion: v1\n  kind: Pod\n  metadata: {name: running, namespace: web, labels: {app: "
      "spread}}\n  spec:\n    nodeName: oldnode\n    containers: [{name: c, resources: "
      "{requests: {cpu: '1'}}}]\n  status: {phase: Running}\n";
  for (int i = 0; i < 8; ++i) {
    cluster += "- apiVersion: v1\n  kind: Pod\n  metadata: {name: p-" + std::to_string(i) +
               ", namespace: web, labels: {app: spread}}\n  spec:\n"
               "    containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n"
               "    topologySpreadConstraints: [{maxSkew: 1, minDomains: 3, topologyKey: "
               "kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: "
               "{matchLabels: {app: spread}}}]\n";
  }
  const std::string groups =
      "apiVersion: hamisim.io/v1\nkind: NodeGroups\nnodeGroups:\n  - name: web\n    minSize: 1\n"
      "    maxSize: 10\n    members: {pool: web}\n";
  const Plan p = plan(from_yaml(cluster, groups));
  ASSERT_EQ(p.decision, Plan::Decision::kScaleUp) << p.summary;
  int on_oldnode = 0;
  for (const auto& o : p.pods) on_oldnode += o.node == "oldnode";
  EXPECT_GT(on_oldnode, 0);
  for (const auto& n : p.new_nodes) EXPECT_NE(n.name, "oldnode");
  // CA's count: every copy plus oldnode.
  EXPECT_EQ(group(p, "web").estimated_nodes, static_cast<int64_t>(p.new_nodes.size()) + 1);
  bool warned = false;
  for (const auto& w : p.warnings) warned |= w.find("existing node oldnode") != std::string::npos;
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace hamisim::planner::scaleup
