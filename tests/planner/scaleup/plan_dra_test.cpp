// The scale-up planner with ResourceClaims (issue #28; reference dra.md §5): HAMi's shareable
// GPUs as its k8s-dra-driver publishes them, claims as HAMi-DRA's webhook writes them, planned
// end to end in process. Every expectation is derived by hand in the test's comment.

#include <gtest/gtest.h>

#include <string>

#include "device/catalog/device_config.h"
#include "dra/decode.h"
#include "model/decode.h"
#include "planner/scaleup/plan.h"
#include "planner/scaleup/planning.h"
#include "profile/device_profiles.h"

namespace hamisim::planner::scaleup {
namespace plan_dra_test {

using State = PodOutcome::State;

// A node's HAMi slice: `gpus` devices of 80Gi (81920 MiB) and 100 cores, shareable, the
// driver's request policies (reference §4.1).
std::string hami_slice(const std::string& node, int gpus) {
  std::string devices;
  for (int i = 0; i < gpus; ++i) {
    if (i > 0) devices += ",";
    devices +=
        R"({"name":"hami-gpu-)" + std::to_string(i) +
        R"(","allowMultipleAllocations":true,"attributes":{"type":{"string":"hami-gpu"},"uuid":{"string":"GPU-)" +
        node + "-" + std::to_string(i) + R"("}},"capacity":{
      "cores":{"value":"100","requestPolicy":{"default":"100","validRange":{"min":"0","max":"100","step":"1"}}},
      "memory":{"value":"80Gi","requestPolicy":{"default":"80Gi","validRange":{"min":"1Mi","step":"1Mi"}}}}})";
  }
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":")" +
         node + R"(-hami"},"spec":{"driver":"hami-core-gpu.project-hami.io","nodeName":")" + node +
         R"(","pool":{"name":")" + node +
         R"(","generation":1,"resourceSliceCount":1},"devices":[)" + devices + "]}}";
}

const char* kHamiClass = R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",
  "metadata":{"name":"hami-gpu"},"spec":{"selectors":[{"cel":{"expression":
  "device.driver == 'hami-core-gpu.project-hami.io' && device.attributes['hami-core-gpu.project-hami.io'].type == 'hami-gpu'"}}]}})";

// HAMi-DRA's claim for one container asking gpu 1, gpumem `mib`, gpucores `cores`.
std::string share_request(int mib, int cores) {
  return R"({"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"hami-gpu","count":1,
    "capacity":{"requests":{"memory":")" +
         std::to_string(int64_t{mib} * 1048576) + R"(","cores":")" + std::to_string(cores) +
         R"("}}}}]}})";
}

std::string claim_template(const std::string& name, int mib, int cores) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{"name":")" +
         name + R"(","namespace":"ml"},"spec":{"spec":)" + share_request(mib, cores) + "}}";
}

// Claim "busy" of a running pod, holding both GPUs of `node`'s slice whole (cores 100, all
// memory).
std::string busy_claim(const std::string& node) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"busy","namespace":"ml"},
  "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"hami-gpu","count":2}}]}},
  "status":{"allocation":{"devices":{"results":[
    {"request":"gpu","driver":"hami-core-gpu.project-hami.io","pool":")" +
         node + R"(","device":"hami-gpu-0",
     "shareID":"aaaaaaaa-0000-4000-8000-000000000000","consumedCapacity":{"cores":"100","memory":"80Gi"}},
    {"request":"gpu","driver":"hami-core-gpu.project-hami.io","pool":")" +
         node + R"(","device":"hami-gpu-1",
     "shareID":"aaaaaaaa-0000-4000-8000-000000000001","consumedCapacity":{"cores":"100","memory":"80Gi"}}]}},
   "reservedFor":[{"resource":"pods","name":"busy","uid":"u-busy"}]}})";
}

std::string node_yaml(const std::string& name, const std::string& pool) {
  return "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: " + name +
         "\n    labels: {pool: " + pool + ", kubernetes.io/hostname: " + name +
         "}\n  status:\n    capacity: {cpu: '64', memory: 512Gi, pods: '110'}\n"
         "    allocatable: {cpu: '64', memory: 512Gi, pods: '110'}\n"
         "    conditions: [{type: Ready, status: 'True'}]\n";
}

// A pending pod whose claim comes from a template (not created yet: planned as the claim the
// template will make), or a named claim.
std::string pod_yaml(const std::string& name, const std::string& claim_ref) {
  return "- apiVersion: v1\n  kind: Pod\n  metadata: {name: " + name +
         ", namespace: ml}\n  spec:\n    containers: [{name: main, resources: {requests: {cpu: "
         "'1'}}}]\n    resourceClaims: [{name: gpu, " +
         claim_ref + "}]\n";
}

std::shared_ptr<const device::DeviceRegistry> registry() {
  static auto r = std::make_shared<const device::DeviceRegistry>(device::build_registry({}));
  return r;
}

struct DraScenario {
  PlanInput input;
  std::shared_ptr<const profile::DeviceProfiles> profiles;
};

DraScenario scenario(const std::string& cluster_yaml, const std::string& groups_yaml,
                     const std::vector<std::string>& dra_json,
                     const std::string& profiles_yaml = {}) {
  DraScenario s;
  if (!profiles_yaml.empty()) {
    auto p = profile::parse_device_profiles(profiles_yaml, "profiles.yaml", *registry());
    EXPECT_TRUE(p) << p.error().message;
    if (p) s.profiles = std::make_shared<const profile::DeviceProfiles>(std::move(p).value());
  }
  auto objects = model::decode_objects("apiVersion: v1\nkind: List\nitems:\n" + cluster_yaml);
  EXPECT_TRUE(objects) << objects.error().message;
  if (objects) {
    s.input.nodes = objects->nodes;
    s.input.pods = objects->pods;
  }
  auto groups = nodegroups::parse_node_groups(groups_yaml, "groups.yaml");
  EXPECT_TRUE(groups) << groups.error().message;
  if (groups) s.input.node_groups = std::move(groups).value();
  dra::Objects dra;
  for (size_t i = 0; i < dra_json.size(); ++i) {
    const Status st = dra::decode_object(dra_json[i], "items[" + std::to_string(i) + "]", dra);
    EXPECT_TRUE(st.ok()) << st.error().message;
  }
  s.input.dra = std::make_shared<const framework::DraCluster>(std::move(dra));
  return s;
}

Plan plan_dra(const DraScenario& s) {
  auto planning = Planning::create(registry(), s.profiles, std::nullopt);
  EXPECT_TRUE(planning) << planning.error().message;
  auto p = (*planning)->plan(s.input, PlannerOptions{});
  EXPECT_TRUE(p) << p.error().message;
  return p.value_or(Plan{});
}

const PodOutcome& outcome(const Plan& p, const std::string& key) {
  for (const auto& o : p.pods) {
    if (o.pod == key) return o;
  }
  ADD_FAILURE() << "no outcome for " << key;
  static PodOutcome none;
  return none;
}

const char* kGroups =
    "apiVersion: hamisim.io/v1\nkind: NodeGroups\nnodeGroups:\n  - name: gpu\n    minSize: 1\n    "
    "maxSize: 10\n    members: {pool: gpu}\n";

TEST(PlannerDra, WarmGroupStartsFreshAndPacksFourSharesPerGpu) {
  // gpu-node-1 has 2 GPUs, both taken whole by the allocated claim of a running pod (cores
  // 100 each). Ten pending pods share GPUs at 20000 MiB and 25 cores: none fits the existing
  // node. The template copies the node's slice but not its consumption: per GPU
  // min(100/25, 81920/20000) = 4 shares, 8 per node, so 10 pods need 2 new nodes.
  std::string cluster = node_yaml("gpu-node-1", "gpu");
  cluster +=
      "- apiVersion: v1\n  kind: Pod\n  metadata: {name: busy, namespace: ml}\n  spec:\n"
      "    nodeName: gpu-node-1\n    containers: [{name: main}]\n"
      "    resourceClaims: [{name: gpu, resourceClaimName: busy}]\n";
  for (int i = 0; i < 10; ++i) {
    cluster += pod_yaml("share-" + std::to_string(i), "resourceClaimTemplateName: share");
  }
  const DraScenario s = scenario(cluster, kGroups,
                                 {hami_slice("gpu-node-1", 2), kHamiClass,
                                  claim_template("share", 20000, 25), busy_claim("gpu-node-1")});
  const Plan p = plan_dra(s);
  ASSERT_EQ(p.decision, Plan::Decision::kScaleUp) << p.summary;
  ASSERT_EQ(p.scale_ups.size(), 1u);
  EXPECT_EQ(p.scale_ups[0].group, "gpu");
  EXPECT_EQ(p.scale_ups[0].new_size, 3);
  int on_new = 0;
  for (const auto& o : p.pods) on_new += o.state == State::kTriggersScaleUp;
  EXPECT_EQ(on_new, 10);
  ASSERT_EQ(p.new_nodes.size(), 2u);
  EXPECT_EQ(p.new_nodes[0].pods.size(), 8u);
  EXPECT_EQ(p.new_nodes[1].pods.size(), 2u);
}

TEST(PlannerDra, ExistingCapacityIsUsedFirstAndShareCountsFollowTheRequest) {
  // The existing node publishes one free GPU, and so does each new node of the group. Eight
  // pods of 20000 MiB and 25 cores: 4 fit the existing GPU, the other 4 one new node. At 100
  // cores each share takes the whole GPU: 1 pod on the existing node, 7 new nodes.
  for (const auto& [cores, existing, new_nodes] : {std::tuple{25, 4, 1}, std::tuple{100, 1, 7}}) {
    std::string cluster = node_yaml("gpu-node-1", "gpu");
    for (int i = 0; i < 8; ++i) {
      cluster += pod_yaml("p-" + std::to_string(i), "resourceClaimTemplateName: share");
    }
    const Plan p = plan_dra(
        scenario(cluster, kGroups,
                 {hami_slice("gpu-node-1", 1), kHamiClass, claim_template("share", 20000, cores)}));
    int fits = 0;
    for (const auto& o : p.pods) fits += o.state == State::kFitsExistingNode;
    EXPECT_EQ(fits, existing) << "cores " << cores;
    ASSERT_EQ(p.scale_ups.size(), 1u) << p.summary;
    EXPECT_EQ(p.scale_ups[0].delta(), new_nodes) << "cores " << cores;
  }
}

TEST(PlannerDra, ASharedClaimPinsItsSecondPodToTheFirstPodsNode) {
  // Claim "pair" (unallocated) is shared by two pods and asks a whole GPU (cores 100 and all
  // memory by default). Both GPUs of the existing node are taken, so the first pod triggers a
  // new node; the claim is then allocated on that node and the second pod can only go there
  // (its allocation's node selector names that node): both on one new node.
  std::string cluster = node_yaml("gpu-node-1", "gpu");
  cluster += pod_yaml("a", "resourceClaimName: pair");
  cluster += pod_yaml("b", "resourceClaimName: pair");
  const std::string pair =
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"pair","namespace":"ml"},
  "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"hami-gpu"}}]}}})";
  const DraScenario s = scenario(
      cluster, kGroups, {hami_slice("gpu-node-1", 2), kHamiClass, pair, busy_claim("gpu-node-1")});
  const Plan p = plan_dra(s);
  ASSERT_EQ(p.scale_ups.size(), 1u) << p.summary;
  EXPECT_EQ(p.scale_ups[0].delta(), 1);
  EXPECT_EQ(outcome(p, "ml/a").state, State::kTriggersScaleUp);
  EXPECT_EQ(outcome(p, "ml/b").state, State::kTriggersScaleUp);
  EXPECT_EQ(outcome(p, "ml/a").node, outcome(p, "ml/b").node);
}

TEST(PlannerDra, AClassSelectorOutsideTheCelSubsetIsAClearError) {
  std::string cluster = node_yaml("gpu-node-1", "gpu");
  cluster += pod_yaml("p", "resourceClaimTemplateName: share");
  const char* odd_class = R"x({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",
    "metadata":{"name":"hami-gpu"},"spec":{"selectors":[{"cel":{"expression":
    "device.attributes['hami-core-gpu.project-hami.io'].type.format([]) == 'hami-gpu'"}}]}})x";
  const DraScenario s =
      scenario(cluster, kGroups,
               {hami_slice("gpu-node-1", 1), odd_class, claim_template("share", 1000, 10)});
  const Plan p = plan_dra(s);
  const PodOutcome& o = outcome(p, "ml/p");
  EXPECT_NE(o.state, State::kFitsExistingNode);
  std::string reasons = o.reason;
  for (const auto& [group, why] : o.group_reasons) reasons += " | " + why;
  EXPECT_NE(reasons.find("device class hami-gpu: selector #0: CEL expression"), std::string::npos)
      << reasons;
}

TEST(PlannerDra, ColdZeroGroupFromAProfileRenderedInHamiDriverShape) {
  // No node of group a100 exists; its profile describes 8 A100s of 81920 MiB and renders them
  // as HAMi's k8s-dra-driver publishes them. 40 pods of 20 GiB (20480 MiB) and 25 cores: per
  // GPU min(100/25, 81920/20480) = 4, per node 32, so 40 pods need 2 nodes (32 + 8).
  std::string cluster = node_yaml("cpu-node-1", "cpu");
  for (int i = 0; i < 40; ++i) {
    cluster += pod_yaml("share-" + std::to_string(i), "resourceClaimTemplateName: share");
  }
  const std::string groups =
      "apiVersion: hamisim.io/v1\nkind: NodeGroups\nnodeGroups:\n"
      "  - name: a100\n    minSize: 0\n    maxSize: 5\n    members: {pool: a100}\n"
      "    template:\n      metadata: {labels: {pool: a100}}\n"
      "      status: {capacity: {cpu: '96', memory: 1900Gi, pods: '110'}}\n"
      "    deviceProfile: a100\n";
  const std::string profiles =
      "apiVersion: hamisim.io/v1\nkind: DeviceProfiles\nprofiles:\n"
      "  - name: a100\n    match: {nodeGroups: [a100]}\n"
      "    devices:\n      - {count: 8, split: 10, devmem: 81920, type: NVIDIA-A100-SXM4-80GB}\n"
      "    dra: {hamiDriver: true}\n";
  const Plan p = plan_dra(
      scenario(cluster, groups, {kHamiClass, claim_template("share", 20480, 25)}, profiles));
  ASSERT_EQ(p.scale_ups.size(), 1u) << p.summary;
  EXPECT_EQ(p.scale_ups[0].group, "a100");
  EXPECT_EQ(p.scale_ups[0].delta(), 2);
  ASSERT_EQ(p.new_nodes.size(), 2u);
  EXPECT_EQ(p.new_nodes[0].pods.size(), 32u);
  EXPECT_EQ(p.new_nodes[1].pods.size(), 8u);
}

// A cold group "g" whose profile lists one slice of shareable GPUs, given as
// (memory, PCIe root) per GPU, in HAMi's shape.
std::string profile_with_gpus(const std::vector<std::pair<std::string, std::string>>& gpus) {
  std::string devices;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const auto& [memory, root] = gpus[i];
    devices += "              - name: hami-gpu-" + std::to_string(i) +
               "\n                allowMultipleAllocations: true\n"
               "                attributes:\n"
               "                  type: {string: hami-gpu}\n"
               "                  resource.kubernetes.io/pcieRoot: {string: " +
               root +
               "}\n"
               "                capacity:\n"
               "                  cores: {value: '100', requestPolicy: {default: '100', "
               "validRange: {min: '0', max: '100', step: '1'}}}\n"
               "                  memory: {value: " +
               memory + ", requestPolicy: {default: " + memory +
               ", validRange: {min: 1Mi, step: 1Mi}}}\n";
  }
  return "apiVersion: hamisim.io/v1\nkind: DeviceProfiles\nprofiles:\n"
         "  - name: g\n    match: {nodeGroups: [g]}\n    dra:\n      resourceSlices:\n"
         "        - apiVersion: resource.k8s.io/v1\n          kind: ResourceSlice\n"
         "          metadata: {name: gpus}\n          spec:\n"
         "            driver: hami-core-gpu.project-hami.io\n            nodeName: any\n"
         "            pool: {name: gpus, generation: 1, resourceSliceCount: 1}\n"
         "            devices:\n" +
         devices;
}

const char* kColdGroup =
    "apiVersion: hamisim.io/v1\nkind: NodeGroups\nnodeGroups:\n"
    "  - name: g\n    minSize: 0\n    maxSize: 5\n    members: {pool: g}\n"
    "    template:\n      metadata: {labels: {pool: g}}\n"
    "      status: {capacity: {cpu: '96', memory: 1900Gi, pods: '110'}}\n"
    "    deviceProfile: g\n";

// The claims on each device of the plan's first new node: "hami-gpu-0=ml/p-gpu".
std::vector<std::string> claims_on_new_node(const Plan& p) {
  std::vector<std::string> out;
  if (p.new_nodes.empty()) return out;
  for (const auto& d : p.new_nodes[0].dra_devices) {
    for (const auto& c : d.claims) out.push_back(d.device + "=" + c);
  }
  return out;
}

std::string template_json(const std::string& name, const std::string& spec) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{"name":")" +
         name + R"(","namespace":"ml"},"spec":{"spec":)" + spec + "}}";
}

TEST(PlannerDra, MatchAttributeAcrossTwoGpus) {
  // PCIe roots A, B, A. Two GPUs on one root: first fit would take 0 and 1, the constraint
  // refuses 1 (root B) and takes 2.
  const std::string spec = R"({"devices":{"requests":[{"name":"gpu","exactly":{
    "deviceClassName":"hami-gpu","count":2,"capacity":{"requests":{"cores":"50"}}}}],
    "constraints":[{"matchAttribute":"resource.kubernetes.io/pcieRoot"}]}})";
  const std::string cluster =
      node_yaml("cpu-node-1", "cpu") + pod_yaml("p", "resourceClaimTemplateName: pair");
  const Plan p =
      plan_dra(scenario(cluster, kColdGroup, {kHamiClass, template_json("pair", spec)},
                        profile_with_gpus({{"80Gi", "A"}, {"80Gi", "B"}, {"80Gi", "A"}})));
  ASSERT_EQ(p.scale_ups.size(), 1u) << p.summary;
  EXPECT_EQ(claims_on_new_node(p),
            (std::vector<std::string>{"hami-gpu-0=ml/p-gpu", "hami-gpu-2=ml/p-gpu"}));
}

TEST(PlannerDra, FirstAvailableFallsBackToASmallerGpu) {
  // The claim prefers a GPU with 80Gi free, else one with 40Gi; the group's GPUs have 48Gi:
  // the second alternative is chosen, and 40Gi of the first GPU is consumed.
  const std::string spec = R"({"devices":{"requests":[{"name":"gpu","firstAvailable":[
    {"name":"big","deviceClassName":"hami-gpu","capacity":{"requests":{"memory":"80Gi","cores":"50"}}},
    {"name":"small","deviceClassName":"hami-gpu","capacity":{"requests":{"memory":"40Gi","cores":"50"}}}]}]}})";
  const std::string cluster =
      node_yaml("cpu-node-1", "cpu") + pod_yaml("p", "resourceClaimTemplateName: fallback");
  const Plan p =
      plan_dra(scenario(cluster, kColdGroup, {kHamiClass, template_json("fallback", spec)},
                        profile_with_gpus({{"48Gi", "A"}, {"48Gi", "A"}})));
  ASSERT_EQ(p.scale_ups.size(), 1u) << p.summary;
  ASSERT_EQ(p.new_nodes.size(), 1u);
  const auto& gpu0 = p.new_nodes[0].dra_devices.at(0);
  EXPECT_EQ(gpu0.claims, std::vector<std::string>{"ml/p-gpu"});
  for (const auto& c : gpu0.capacity) {
    if (c.name == "memory") {
      EXPECT_EQ(c.consumed, model::Quantity::parse("40Gi").value());
    }
  }
}

TEST(PlannerDra, ExtendedResourcesADeviceClassServes) {
  // KEP-5004: class example-gpu serves example.com/gpu. node-a has no allocatable for it and
  // publishes two whole GPUs, so DRA serves it there: p-0 and p-1 each get one (the
  // scheduler's claim "<pod>-extended-resources"), p-2 needs a new node of the group. node-b
  // has allocatable example.com/gpu 1 from a device plugin: NodeResourcesFit counts it there,
  // so p-3 (which wants 1) fits node-b without a claim.
  const std::string slice = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
    "metadata":{"name":"node-a-gpus"},"spec":{"driver":"gpu.example.com","nodeName":"node-a",
    "pool":{"name":"node-a","generation":1,"resourceSliceCount":1},
    "devices":[{"name":"gpu-0"},{"name":"gpu-1"}]}})";
  const std::string device_class = R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",
    "metadata":{"name":"example-gpu"},"spec":{"selectors":[{"cel":{"expression":
    "device.driver == 'gpu.example.com'"}}],"extendedResourceName":"example.com/gpu"}})";
  std::string cluster = node_yaml("node-a", "gpu");
  cluster +=
      "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: node-b\n"
      "    labels: {pool: plugin, kubernetes.io/hostname: node-b}\n  status:\n"
      "    allocatable: {cpu: '64', memory: 512Gi, pods: '110', example.com/gpu: '1'}\n"
      "    conditions: [{type: Ready, status: 'True'}]\n";
  for (int i = 0; i < 4; ++i) {
    cluster += "- apiVersion: v1\n  kind: Pod\n  metadata: {name: p-" + std::to_string(i) +
               ", namespace: ml}\n  spec:\n    containers: [{name: main, resources: {requests: "
               "{example.com/gpu: '1'}, limits: {example.com/gpu: '1'}}}]\n";
  }
  const Plan p = plan_dra(scenario(cluster, kGroups, {slice, device_class}));
  int on_a = 0, on_b = 0;
  for (const auto& o : p.pods) {
    if (o.state != State::kFitsExistingNode) continue;
    on_a += o.node == "node-a";
    on_b += o.node == "node-b";
  }
  EXPECT_EQ(on_a, 2) << p.summary;
  EXPECT_EQ(on_b, 1) << p.summary;
  ASSERT_EQ(p.scale_ups.size(), 1u) << p.summary;
  EXPECT_EQ(p.scale_ups[0].delta(), 1);
  ASSERT_EQ(p.new_nodes.size(), 1u);
  EXPECT_EQ(p.new_nodes[0].dra_devices.at(0).claims.size(), 1u);
  EXPECT_TRUE(p.new_nodes[0].dra_devices.at(0).claims[0].ends_with("-extended-resources"));
}

TEST(PlannerDra, APodMixingHamiRequestsAndClaimsIsBlocked) {
  // HAMi says the two modes must not share a cluster: such a pod is refused, not planned.
  std::string cluster = node_yaml("gpu-node-1", "gpu");
  cluster +=
      "- apiVersion: v1\n  kind: Pod\n  metadata: {name: mixed, namespace: ml}\n  spec:\n"
      "    containers: [{name: main, resources: {limits: {nvidia.com/gpu: '1', "
      "nvidia.com/gpumem: '1000'}}}]\n"
      "    resourceClaims: [{name: gpu, resourceClaimTemplateName: share}]\n";
  const Plan p = plan_dra(
      scenario(cluster, kGroups,
               {hami_slice("gpu-node-1", 1), kHamiClass, claim_template("share", 1000, 10)}));
  const PodOutcome& o = outcome(p, "ml/mixed");
  EXPECT_EQ(o.state, State::kBlocked);
  EXPECT_NE(o.reason.find("HAMi's device-plugin mode and its DRA mode must not be mixed"),
            std::string::npos)
      << o.reason;
}

}  // namespace plan_dra_test
}  // namespace hamisim::planner::scaleup
