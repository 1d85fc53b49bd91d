#include "model/encode.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <concepts>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/decode.h"
#include "test_paths.h"

namespace hamisim::model {
namespace encode_test {

// ---- structural equality over every model field ----
//
// The model types have no operator== of their own. Each `fields` lists every member of one
// type, so `same` compares two objects member by member, recursing through optionals and
// vectors. Comparing re-encoded bytes alone would not notice a field the encoder forgets to
// write (it would be missing from both encodings).

auto fields(const OwnerReference& x) {
  return std::tie(x.api_version, x.kind, x.name, x.uid, x.controller);
}
auto fields(const ObjectMeta& x) {
  return std::tie(x.name, x.generate_name, x.namespace_, x.uid, x.resource_version,
                  x.creation_timestamp, x.deletion_timestamp, x.labels, x.annotations,
                  x.owner_references);
}
auto fields(const ContainerResourceClaim& x) {
  return std::tie(x.name, x.request);
}
auto fields(const ResourceRequirements& x) {
  return std::tie(x.requests, x.limits, x.claims);
}
auto fields(const ContainerPort& x) {
  return std::tie(x.container_port, x.host_port, x.protocol, x.host_ip);
}
auto fields(const Container& x) {
  return std::tie(x.name, x.image, x.resources, x.ports, x.restart_policy, x.privileged);
}
auto fields(const Toleration& x) {
  return std::tie(x.key, x.op, x.value, x.effect, x.toleration_seconds);
}
auto fields(const Taint& x) {
  return std::tie(x.key, x.value, x.effect);
}
auto fields(const LabelSelectorRequirement& x) {
  return std::tie(x.key, x.op, x.values);
}
auto fields(const LabelSelector& x) {
  return std::tie(x.match_labels, x.match_expressions);
}
auto fields(const NodeSelectorRequirement& x) {
  return std::tie(x.key, x.op, x.values);
}
auto fields(const NodeSelectorTerm& x) {
  return std::tie(x.match_expressions, x.match_fields);
}
auto fields(const NodeSelector& x) {
  return std::tie(x.terms);
}
auto fields(const PreferredSchedulingTerm& x) {
  return std::tie(x.weight, x.preference);
}
auto fields(const NodeAffinity& x) {
  return std::tie(x.required, x.preferred);
}
auto fields(const PodAffinityTerm& x) {
  return std::tie(x.label_selector, x.namespaces, x.namespace_selector, x.topology_key);
}
auto fields(const WeightedPodAffinityTerm& x) {
  return std::tie(x.weight, x.term);
}
auto fields(const PodAffinity& x) {
  return std::tie(x.required, x.preferred);
}
auto fields(const Affinity& x) {
  return std::tie(x.node_affinity, x.pod_affinity, x.pod_anti_affinity);
}
auto fields(const TopologySpreadConstraint& x) {
  return std::tie(x.max_skew, x.topology_key, x.when_unsatisfiable, x.label_selector, x.min_domains,
                  x.match_label_keys, x.node_affinity_policy, x.node_taints_policy);
}
auto fields(const PodSpec& x) {
  return std::tie(x.node_name, x.scheduler_name, x.runtime_class_name, x.priority_class_name,
                  x.priority, x.init_containers, x.containers, x.node_selector, x.affinity,
                  x.tolerations, x.topology_spread_constraints, x.overhead, x.host_network,
                  x.scheduling_group_pod_group_name, x.resource_claims);
}
auto fields(const PodResourceClaim& x) {
  return std::tie(x.name, x.resource_claim_name, x.resource_claim_template_name);
}
auto fields(const PodResourceClaimStatus& x) {
  return std::tie(x.name, x.resource_claim_name);
}
auto fields(const ContainerStateTerminated& x) {
  return std::tie(x.exit_code, x.reason);
}
auto fields(const ContainerStatus& x) {
  return std::tie(x.name, x.terminated);
}
auto fields(const PodStatus& x) {
  return std::tie(x.phase, x.init_container_statuses, x.resource_claim_statuses);
}
auto fields(const Pod& x) {
  return std::tie(x.metadata, x.spec, x.status);
}
auto fields(const NodeCondition& x) {
  return std::tie(x.type, x.status);
}
auto fields(const NodeSpec& x) {
  return std::tie(x.unschedulable, x.taints, x.provider_id);
}
auto fields(const NodeStatus& x) {
  return std::tie(x.capacity, x.allocatable, x.conditions);
}
auto fields(const Node& x) {
  return std::tie(x.metadata, x.spec, x.status);
}

template <class T>
concept Described = requires(const T& t) {
  fields(t);
};

// Declared before any use: the overloads are found by ordinary lookup only (this file's
// namespace is not searched by argument-dependent lookup).
template <class T>
bool same(const T& a, const T& b);
template <class T>
bool same(const std::optional<T>& a, const std::optional<T>& b);
template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b);

template <class Tuple, size_t... I>
bool same_members(const Tuple& a, const Tuple& b, std::index_sequence<I...>) {
  return (same(std::get<I>(a), std::get<I>(b)) && ...);
}

template <class T>
bool same(const std::optional<T>& a, const std::optional<T>& b) {
  return a.has_value() == b.has_value() && (!a || same(*a, *b));
}

template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const T& x, const T& y) { return same(x, y); });
}

template <class T>
bool same(const T& a, const T& b) {
  if constexpr (Described<T>) {
    using Members = decltype(fields(a));
    return same_members(fields(a), fields(b),
                        std::make_index_sequence<std::tuple_size_v<Members>>());
  } else {
    return a == b;  // strings, numbers, StringMap, ResourceList (Quantity has ==)
  }
}

// ---- helpers ----

Quantity q(std::string_view text) {
  auto parsed = Quantity::parse(text);
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.ok() ? *parsed : Quantity();
}

std::string source_path(std::string_view relative) {
  return std::string(hamisim::testing::source_dir()) + "/" + std::string(relative);
}

// decode(encode(x)) equals x field by field, and re-encoding gives the same bytes.
void expect_round_trip(const Pod& pod, std::string_view where = {}) {
  const std::string json = encode_pod_json(pod);
  auto back = decode_pod_json(json);
  ASSERT_TRUE(back.ok()) << where << ": " << back.error().message << "\n" << json;
  EXPECT_TRUE(same(*back, pod)) << where << "\nsent:    " << json
                                << "\ndecoded: " << encode_pod_json(*back);
  EXPECT_EQ(encode_pod_json(*back), json) << where;
}

void expect_round_trip(const Node& node, std::string_view where = {}) {
  const std::string json = encode_node_json(node);
  auto back = decode_node_json(json);
  ASSERT_TRUE(back.ok()) << where << ": " << back.error().message << "\n" << json;
  EXPECT_TRUE(same(*back, node)) << where << "\nsent:    " << json
                                 << "\ndecoded: " << encode_node_json(*back);
  EXPECT_EQ(encode_node_json(*back), json) << where;
}

Pod decoded_pod(const std::string& json) {
  auto pod = decode_pod_json(json);
  EXPECT_TRUE(pod.ok()) << pod.error().message << "\n" << json;
  return pod.ok() ? *pod : Pod{};
}

// ---- rich objects: every field of the model set, most to a non-default value ----

ObjectMeta rich_metadata(std::string name) {
  ObjectMeta m;
  m.name = std::move(name);
  m.generate_name = "trainer-7d9c8b6f5-";
  m.namespace_ = "ml";
  m.uid = "8f9e0d1c-2b3a-4958-8776-655443322110";
  m.resource_version = "123456";
  m.creation_timestamp = "2024-06-10T08:00:00Z";
  m.deletion_timestamp = "2024-06-10T09:30:00Z";
  m.labels = {{"app", "trainer"}, {"é-label", "ü"}, {"", "empty key"}};
  m.annotations = {{"hami.io/vgpu-node", "gpu-node-1"},
                   {"hami.io/vgpu-devices-allocated", "GPU-0,NVIDIA,10240,30:;"},
                   {"odd", "quote\" backslash\\ newline\n tab\t <html> & \x01 \u2028 😀"},
                   {"empty", ""}};
  m.owner_references = {
      {"apps/v1", "ReplicaSet", "trainer-7d9c8b6f5", "5b1d7c1e", true},
      {"v1", "Node", "gpu-node-1", "11111111", false},
  };
  return m;
}

LabelSelector rich_label_selector() {
  LabelSelector s;
  s.match_labels = {{"app", "trainer"}, {"tier", "gpu"}};
  s.match_expressions = {{"role", "In", {"worker", "ps"}}, {"debug", "DoesNotExist", {}}};
  return s;
}

Pod rich_pod() {
  Pod p;
  p.metadata = rich_metadata("trainer-7d9c8b6f5-x2b4q");

  PodSpec& s = p.spec;
  s.node_name = "gpu-node-1";
  s.scheduler_name = "hami-scheduler";
  s.runtime_class_name = "nvidia";
  s.priority_class_name = "high-priority";
  s.priority = -5;

  Container init;
  init.name = "sidecar";
  init.image = "busybox:1.36";
  init.resources.requests = {{"cpu", q("100m")}, {"memory", q("64Mi")}};
  init.ports = {{9000, 0, "UDP", ""}};
  init.restart_policy = "Always";
  init.privileged = true;
  init.resources.claims = {{"gpus", "warmup"}};
  Container init_done;
  init_done.name = "setup";
  init_done.restart_policy = "";  // a *string set to "": written, not dropped
  s.init_containers = {init, init_done};

  Container main;
  main.name = "main";
  main.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  main.resources.limits = {
      {"nvidia.com/gpu", q("2")}, {"nvidia.com/gpumem", q("10240")}, {"memory", q("1.5Gi")}};
  main.resources.requests = {{"cpu", q("1.5")}, {"nvidia.com/gpucores", q("30")}};
  main.ports = {{8080, 18080, "TCP", "10.0.0.1"}, {53, 0, "", ""}};
  main.resources.claims = {{"gpus", ""}, {"nic", "port-0"}};
  Container bare;  // nothing but defaults (not even a name)
  s.containers = {main, bare};

  s.node_selector = {{"gpu", "on"}, {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}};

  Affinity& a = s.affinity.emplace();
  NodeAffinity& na = a.node_affinity.emplace();
  na.required.emplace().terms = {
      {{{"nvidia.com/gpu.product", "In", {"A100", "H100"}}, {"zone", "Exists", {}}},
       {{"metadata.name", "NotIn", {"gpu-node-9"}}}},
      {},  // an empty term: written as {}
  };
  na.preferred = {{50, {{{"topology.kubernetes.io/zone", "In", {"zone-a"}}}, {}}}, {0, {}}};
  PodAffinity& pa = a.pod_affinity.emplace();
  pa.required = {{rich_label_selector(), {"ml", "prod"}, LabelSelector{}, "zone"},
                 {std::nullopt, {}, std::nullopt, ""}};
  pa.preferred = {{100, {std::nullopt, {"ml"}, rich_label_selector(), "kubernetes.io/hostname"}}};
  PodAffinity& anti = a.pod_anti_affinity.emplace();
  anti.preferred = {{-1, {LabelSelector{{{"app", "trainer"}}, {}}, {}, std::nullopt, "host"}}};

  s.tolerations = {
      {"nvidia.com/gpu", "Equal", "present", "NoSchedule", 300},
      {"", "Exists", "", "", std::nullopt},
      {"node.kubernetes.io/unreachable", "", "", "NoExecute", 0},
  };
  s.topology_spread_constraints = {
      {1,
       "zone",
       "DoNotSchedule",
       rich_label_selector(),
       3,
       {"pod-template-hash"},
       "Ignore",
       "Honor"},
      {2, "kubernetes.io/hostname", "ScheduleAnyway", LabelSelector{}, 0, {}, "", ""},
      {},
  };
  s.overhead = {{"cpu", q("250m")}, {"memory", q("120Mi")}};
  s.host_network = true;
  s.scheduling_group_pod_group_name = "gang-a";
  s.resource_claims = {{"gpus", std::nullopt, "two-gpus"}, {"nic", "shared-nic", std::nullopt}};

  p.status.phase = "Pending";
  p.status.init_container_statuses = {
      {"sidecar", ContainerStateTerminated{137, "OOMKilled"}},
      {"setup", std::nullopt},
      {"other", ContainerStateTerminated{0, ""}},
  };
  p.status.resource_claim_statuses = {{"gpus", "trainer-gpus-x7k2p"}, {"nic", std::nullopt}};
  return p;
}

Node rich_node() {
  Node n;
  n.metadata = rich_metadata("gpu-node-1");
  n.spec.unschedulable = true;
  n.spec.taints = {{"nvidia.com/gpu", "present", "NoSchedule"},
                   {"dedicated", "", "PreferNoSchedule"},
                   {"", "", ""}};
  n.spec.provider_id = "aws:///us-east-1a/i-0123456789abcdef0";
  n.status.capacity = {{"cpu", q("64")},
                       {"memory", q("528330404Ki")},
                       {"nvidia.com/gpu", q("80")},
                       {"hugepages-1Gi", q("0")}};
  n.status.allocatable = {{"cpu", q("63500m")}, {"memory", q("500Gi")}, {"pods", q("110")}};
  n.status.conditions = {{"Ready", "True"}, {"MemoryPressure", "False"}, {"", ""}};
  return n;
}

// ---- round trips ----

TEST(EncodePodTest, RichPodRoundTripsEveryField) {
  expect_round_trip(rich_pod());
}

TEST(EncodeNodeTest, RichNodeRoundTripsEveryField) {
  expect_round_trip(rich_node());
}

TEST(EncodePodTest, DecodedRichPodKeepsSpotCheckedFields) {
  const Pod p = decoded_pod(encode_pod_json(rich_pod()));
  EXPECT_EQ(p.metadata.deletion_timestamp, "2024-06-10T09:30:00Z");
  EXPECT_EQ(p.metadata.annotations.at("odd"),
            "quote\" backslash\\ newline\n tab\t <html> & \x01 \u2028 😀");
  ASSERT_EQ(p.metadata.owner_references.size(), 2u);
  EXPECT_TRUE(p.metadata.owner_references[0].controller);
  EXPECT_FALSE(p.metadata.owner_references[1].controller);
  EXPECT_EQ(p.spec.scheduling_group_pod_group_name, "gang-a");
  EXPECT_EQ(p.spec.priority, -5);
  EXPECT_EQ(p.spec.runtime_class_name, "nvidia");
  EXPECT_TRUE(p.spec.host_network);
  ASSERT_EQ(p.spec.init_containers.size(), 2u);
  EXPECT_TRUE(p.spec.init_containers[0].privileged);
  EXPECT_EQ(p.spec.init_containers[0].restart_policy, "Always");
  EXPECT_EQ(p.spec.init_containers[1].restart_policy, "");
  EXPECT_EQ(p.spec.init_containers[0].ports.at(0).protocol, "UDP");
  ASSERT_EQ(p.spec.containers.size(), 2u);
  EXPECT_EQ(p.spec.containers[0].resources.limits.at("memory"), q("1.5Gi"));
  EXPECT_EQ(p.spec.containers[0].resources.requests.at("cpu").milli_value(), 1500);
  EXPECT_EQ(p.spec.containers[0].ports.at(0).host_ip, "10.0.0.1");
  EXPECT_EQ(p.spec.containers[0].ports.at(1).protocol, "");
  ASSERT_TRUE(p.spec.affinity && p.spec.affinity->node_affinity);
  const NodeAffinity& na = *p.spec.affinity->node_affinity;
  ASSERT_TRUE(na.required);
  ASSERT_EQ(na.required->terms.size(), 2u);
  EXPECT_EQ(na.required->terms[0].match_fields.at(0).values,
            std::vector<std::string>{"gpu-node-9"});
  EXPECT_TRUE(na.required->terms[1].match_expressions.empty());
  ASSERT_TRUE(p.spec.affinity->pod_affinity);
  const PodAffinityTerm& term = p.spec.affinity->pod_affinity->required.at(0);
  ASSERT_TRUE(term.namespace_selector);
  EXPECT_TRUE(term.namespace_selector->match_labels.empty());
  EXPECT_FALSE(p.spec.affinity->pod_affinity->required.at(1).label_selector);
  ASSERT_TRUE(p.spec.affinity->pod_anti_affinity);
  EXPECT_EQ(p.spec.affinity->pod_anti_affinity->preferred.at(0).weight, -1);
  EXPECT_EQ(p.spec.tolerations.at(2).toleration_seconds, 0);
  EXPECT_FALSE(p.spec.tolerations.at(1).toleration_seconds);
  const TopologySpreadConstraint& tsc = p.spec.topology_spread_constraints.at(0);
  EXPECT_EQ(tsc.min_domains, 3);
  EXPECT_EQ(tsc.node_affinity_policy, "Ignore");
  EXPECT_EQ(tsc.node_taints_policy, "Honor");
  EXPECT_EQ(tsc.match_label_keys, std::vector<std::string>{"pod-template-hash"});
  EXPECT_EQ(p.spec.topology_spread_constraints.at(1).min_domains, 0);
  EXPECT_EQ(p.spec.overhead.at("memory"), q("120Mi"));
  ASSERT_EQ(p.status.init_container_statuses.size(), 3u);
  EXPECT_EQ(p.status.init_container_statuses[0].terminated->exit_code, 137);
  EXPECT_FALSE(p.status.init_container_statuses[1].terminated);
  ASSERT_TRUE(p.status.init_container_statuses[2].terminated);
  EXPECT_EQ(p.status.init_container_statuses[2].terminated->reason, "");
  ASSERT_EQ(p.spec.resource_claims.size(), 2u);
  EXPECT_EQ(p.spec.resource_claims[0].resource_claim_template_name, "two-gpus");
  EXPECT_FALSE(p.spec.resource_claims[0].resource_claim_name);
  EXPECT_EQ(p.spec.resource_claims[1].resource_claim_name, "shared-nic");
  EXPECT_EQ(p.spec.init_containers[0].resources.claims.at(0).request, "warmup");
  ASSERT_EQ(p.spec.containers[0].resources.claims.size(), 2u);
  EXPECT_EQ(p.spec.containers[0].resources.claims[1].name, "nic");
  ASSERT_EQ(p.status.resource_claim_statuses.size(), 2u);
  EXPECT_EQ(p.status.resource_claim_statuses[0].resource_claim_name, "trainer-gpus-x7k2p");
  EXPECT_FALSE(p.status.resource_claim_statuses[1].resource_claim_name);
}

TEST(EncodeNodeTest, DecodedRichNodeKeepsSpotCheckedFields) {
  auto n = decode_node_json(encode_node_json(rich_node()));
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_TRUE(n->spec.unschedulable);
  EXPECT_EQ(n->spec.provider_id, "aws:///us-east-1a/i-0123456789abcdef0");
  ASSERT_EQ(n->spec.taints.size(), 3u);
  EXPECT_EQ(n->spec.taints[1].value, "");
  EXPECT_EQ(n->spec.taints[1].effect, "PreferNoSchedule");
  EXPECT_EQ(n->status.capacity.at("memory"), q("528330404Ki"));
  EXPECT_TRUE(n->status.capacity.at("hugepages-1Gi").is_zero());
  EXPECT_EQ(n->status.allocatable.at("cpu").milli_value(), 63500);
  EXPECT_EQ(n->status.conditions.at(1).type, "MemoryPressure");
  EXPECT_EQ(n->metadata.labels.at(""), "empty key");
}

TEST(EncodePodTest, DefaultPodRoundTrips) {
  expect_round_trip(Pod{});
  expect_round_trip(Node{});
}

// A decoder-visible value for each Go pointer the model holds, set to its zero value: present
// must stay present.
TEST(EncodePodTest, PresentZeroValuedPointersRoundTrip) {
  Pod p;
  p.metadata.deletion_timestamp = "";
  p.spec.runtime_class_name = "";
  p.spec.priority = 0;
  p.spec.affinity.emplace();
  p.spec.tolerations = {{"k", "", "", "", 0}};
  Container c;
  c.restart_policy = "";
  p.spec.containers = {c};
  p.status.init_container_statuses = {{"i", ContainerStateTerminated{}}};
  p.status.resource_claim_statuses = {{"", ""}};
  expect_round_trip(p);

  p.spec.affinity->node_affinity.emplace().required.emplace();
  p.spec.affinity->pod_affinity.emplace();
  p.spec.affinity->pod_anti_affinity.emplace();
  expect_round_trip(p);
}

// ---- byte-exact output ----

TEST(EncodePodTest, SmallPodIsByteExact) {
  Pod p;
  p.metadata.name = "gpu-workload";
  p.metadata.namespace_ = "default";
  p.metadata.annotations = {{"hami.io/vgpu-node", "node-1"}};
  Container c;
  c.name = "main";
  c.resources.limits = {{"nvidia.com/gpumem", q("3000")}, {"nvidia.com/gpu", q("1")}};
  c.resources.requests = {{"cpu", q("0.1")}};
  c.ports = {{8080, 0, "TCP", ""}};
  p.spec.containers = {c};
  p.spec.scheduler_name = "hami-scheduler";
  p.spec.tolerations = {{"nvidia.com/gpu", "Exists", "", "NoSchedule", std::nullopt}};
  p.status.phase = "Pending";
  // Go's order: kind before apiVersion, struct fields in declaration order (limits before
  // requests, containers before schedulerName), map keys sorted.
  EXPECT_EQ(encode_pod_json(p),
            R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"gpu-workload",)"
            R"("namespace":"default","creationTimestamp":null,)"
            R"("annotations":{"hami.io/vgpu-node":"node-1"}},)"
            R"("spec":{"containers":[{"name":"main","ports":[{"containerPort":8080,)"
            R"("protocol":"TCP"}],"resources":{"limits":{"nvidia.com/gpu":"1",)"
            R"("nvidia.com/gpumem":"3000"},"requests":{"cpu":"100m"}}}],)"
            R"("schedulerName":"hami-scheduler","tolerations":[{"key":"nvidia.com/gpu",)"
            R"("operator":"Exists","effect":"NoSchedule"}]},"status":{"phase":"Pending"}})");
}

TEST(EncodeNodeTest, SmallNodeIsByteExact) {
  Node n;
  n.metadata.name = "template-node-for-gpu-a100-0";
  n.metadata.creation_timestamp = "2024-05-01T00:00:00Z";
  n.metadata.labels = {{"agentpool", "gpu-a100"}};
  n.spec.provider_id = "azure:///vm-0";
  n.spec.taints = {{"nvidia.com/gpu", "", "NoSchedule"}};
  n.status.capacity = {{"memory", q("16Gi")}, {"cpu", q("8")}};
  n.status.allocatable = {{"cpu", q("7.5")}, {"pods", q("110")}};
  n.status.conditions = {{"Ready", "True"}};
  EXPECT_EQ(encode_node_json(n),
            R"({"kind":"Node","apiVersion":"v1","metadata":{)"
            R"("name":"template-node-for-gpu-a100-0","creationTimestamp":"2024-05-01T00:00:00Z",)"
            R"("labels":{"agentpool":"gpu-a100"}},)"
            R"("spec":{"providerID":"azure:///vm-0","taints":[{"key":"nvidia.com/gpu",)"
            R"("effect":"NoSchedule"}]},)"
            R"("status":{"capacity":{"cpu":"8","memory":"17179869184"},)"
            R"("allocatable":{"cpu":"7500m","pods":"110"},)"
            R"("conditions":[{"type":"Ready","status":"True"}]}})");
}

// Go's order: claims after limits and requests, resourceClaims after
// topologySpreadConstraints, resourceClaimStatuses after initContainerStatuses; an empty
// request and an unset *string are left out.
TEST(EncodePodTest, ResourceClaimsAreByteExact) {
  Pod p;
  Container c;
  c.name = "main";
  c.resources.limits = {{"cpu", q("1")}};
  c.resources.claims = {{"gpu", ""}, {"nic", "port-0"}};
  p.spec.containers = {c};
  p.spec.topology_spread_constraints = {{1, "zone", "DoNotSchedule", std::nullopt, {}, {}, "", ""}};
  p.spec.resource_claims = {{"gpu", std::nullopt, "one-gpu"}, {"nic", "shared-nic", std::nullopt}};
  p.status.init_container_statuses = {{"init", std::nullopt}};
  p.status.resource_claim_statuses = {{"gpu", "p-gpu-x7k2p"}, {"other", std::nullopt}};
  EXPECT_EQ(encode_pod_json(p),
            R"({"kind":"Pod","apiVersion":"v1","metadata":{"creationTimestamp":null},)"
            R"("spec":{"containers":[{"name":"main","resources":{"limits":{"cpu":"1"},)"
            R"("claims":[{"name":"gpu"},{"name":"nic","request":"port-0"}]}}],)"
            R"("topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone",)"
            R"("whenUnsatisfiable":"DoNotSchedule"}],)"
            R"("resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"},)"
            R"({"name":"nic","resourceClaimName":"shared-nic"}]},)"
            R"("status":{"initContainerStatuses":[{"name":"init","state":{}}],)"
            R"("resourceClaimStatuses":[{"name":"gpu","resourceClaimName":"p-gpu-x7k2p"},)"
            R"({"name":"other"}]}})");
  expect_round_trip(p);
}

// ---- omission ----

// What Go writes for a zero k8s.io/api object restricted to our fields: structs always appear,
// a metav1.Time is null, `containers` (no omitempty) is a nil slice.
TEST(EncodePodTest, EmptyPodWritesOnlyFieldsWithoutOmitempty) {
  EXPECT_EQ(encode_pod_json(Pod{}),
            R"({"kind":"Pod","apiVersion":"v1","metadata":{"creationTimestamp":null},)"
            R"("spec":{"containers":null},"status":{}})");
}

TEST(EncodeNodeTest, EmptyNodeWritesOnlyFieldsWithoutOmitempty) {
  EXPECT_EQ(encode_node_json(Node{}),
            R"({"kind":"Node","apiVersion":"v1","metadata":{"creationTimestamp":null},)"
            R"("spec":{},"status":{}})");
}

TEST(EncodePodTest, DefaultValuedFieldsAreOmitted) {
  Pod p;
  p.spec.containers = {Container{}};
  p.spec.containers[0].ports = {ContainerPort{}};
  p.spec.tolerations = {Toleration{}};
  p.spec.topology_spread_constraints = {TopologySpreadConstraint{}};
  p.spec.affinity.emplace().pod_affinity.emplace().required = {PodAffinityTerm{}};
  p.status.init_container_statuses = {ContainerStatus{}};
  p.metadata.owner_references = {OwnerReference{}};
  EXPECT_EQ(encode_pod_json(p),
            R"({"kind":"Pod","apiVersion":"v1","metadata":{"creationTimestamp":null,)"
            R"("ownerReferences":[{"apiVersion":"","kind":"","name":"","uid":""}]},)"
            R"("spec":{"containers":[{"name":"","ports":[{"containerPort":0,"protocol":"TCP"}],)"
            R"("resources":{}}],"affinity":{"podAffinity":{)"
            R"("requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":""}]}},)"
            R"("tolerations":[{}],"topologySpreadConstraints":[{"maxSkew":0,"topologyKey":"",)"
            R"("whenUnsatisfiable":""}]},"status":{"initContainerStatuses":[{"name":"",)"
            R"("state":{}}]}})");
  expect_round_trip(p);
}

TEST(EncodePodTest, EmptyCollectionsAreOmitted) {
  Pod p;
  p.metadata.labels.clear();
  p.spec.node_selector.clear();
  p.spec.overhead.clear();
  Container c;
  c.name = "c";
  c.resources.limits.clear();
  c.ports.clear();
  p.spec.containers = {c};
  p.spec.init_containers.clear();
  p.spec.tolerations.clear();
  EXPECT_EQ(encode_pod_json(p),
            R"({"kind":"Pod","apiVersion":"v1","metadata":{"creationTimestamp":null},)"
            R"("spec":{"containers":[{"name":"c","resources":{}}]},"status":{}})");
}

TEST(EncodePodTest, PointerCollapsedIntoZeroValueIsOmitted) {
  Pod p;
  Container c;
  c.name = "c";
  c.privileged = false;
  p.spec.containers = {c};
  p.spec.host_network = false;
  p.spec.scheduling_group_pod_group_name.clear();
  EXPECT_EQ(encode_pod_json(p).find("securityContext"), std::string::npos);
  c.privileged = true;
  p.spec.containers = {c};
  p.spec.scheduling_group_pod_group_name = "g";
  const std::string json = encode_pod_json(p);
  EXPECT_NE(json.find(R"("securityContext":{"privileged":true})"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("schedulingGroup":{"podGroupName":"g"})"), std::string::npos) << json;
}

// A required node affinity without terms is a present NodeSelector whose nodeSelectorTerms
// (no omitempty) is a nil slice.
TEST(EncodePodTest, RequiredNodeAffinityWithoutTermsIsNull) {
  Pod p;
  p.spec.affinity.emplace().node_affinity.emplace().required.emplace();
  const std::string json = encode_pod_json(p);
  EXPECT_NE(json.find(R"("affinity":{"nodeAffinity":{)"
                      R"("requiredDuringSchedulingIgnoredDuringExecution":{)"
                      R"("nodeSelectorTerms":null}}})"),
            std::string::npos)
      << json;
  expect_round_trip(p);
}

// Go omits an empty protocol, but then the decoder would read the API default "TCP".
TEST(EncodePodTest, EmptyPortProtocolIsWrittenToSurviveDecoding) {
  Pod p;
  Container c;
  c.name = "c";
  c.ports = {{80, 0, "", ""}};
  p.spec.containers = {c};
  EXPECT_NE(encode_pod_json(p).find(R"({"containerPort":80,"protocol":""})"), std::string::npos);
  EXPECT_EQ(decoded_pod(encode_pod_json(p)).spec.containers.at(0).ports.at(0).protocol, "");
}

// ---- quantities and keys ----

TEST(EncodePodTest, QuantitiesUseTheirCanonicalText) {
  Pod p;
  Container c;
  c.name = "c";
  c.resources.limits = {{"a", q("1Gi")},  {"b", q("0.5")},   {"c", q("1u")},   {"d", q("-100m")},
                        {"e", q("1e3")},  {"f", q("0")},     {"g", q("2k")},   {"h", q("1.5Gi")},
                        {"i", q("0.1n")}, {"j", q("-0.1n")}, {"k", q("12.5m")}};
  p.spec.containers = {c};
  const std::string json = encode_pod_json(p);
  for (const auto& [name, quantity] : c.resources.limits) {
    auto reparsed = Quantity::parse(quantity.to_string());
    ASSERT_TRUE(reparsed.ok()) << name << ": " << reparsed.error().message;
    EXPECT_TRUE(*reparsed == quantity) << name << ": " << quantity.to_string();
  }
  EXPECT_NE(json.find(R"("limits":{"a":"1073741824","b":"500m","c":"1000n","d":"-100m",)"
                      R"("e":"1000","f":"0","g":"2000","h":"1610612736","i":"1n","j":"-1n",)"
                      R"("k":"12500000n"})"),
            std::string::npos)
      << json;
  expect_round_trip(p);
}

TEST(EncodePodTest, LargestParsableQuantityRoundTrips) {
  Pod p;
  Container c;
  c.name = "c";
  c.resources.limits = {{"max", q("9223372036854775807m")}, {"min", q("-9223372036854775807m")}};
  p.spec.containers = {c};
  expect_round_trip(p);
}

// Quantity::parse refuses magnitudes above int64 milli-units; a larger value (only reachable by
// arithmetic on Quantity) is still written exactly, and the decoder then says so.
TEST(EncodePodTest, QuantityBeyondParseRangeIsWrittenExactly) {
  Pod p;
  Container c;
  c.name = "c";
  c.resources.limits = {{"huge", Quantity::from_int(std::numeric_limits<int64_t>::max())}};
  p.spec.containers = {c};
  const std::string json = encode_pod_json(p);
  EXPECT_NE(json.find(R"("huge":"9223372036854775807")"), std::string::npos) << json;
  auto back = decode_pod_json(json);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message.find("too large"), std::string::npos) << back.error().message;
}

TEST(EncodePodTest, MapKeysAreSortedByBytes) {
  Pod p;
  p.metadata.labels = {{"b", "1"}, {"a", "2"}, {"B", "3"}, {"é", "4"}, {"a.b", "5"}, {"a-b", "6"}};
  const std::string json = encode_pod_json(p);
  EXPECT_NE(json.find(R"("labels":{"B":"3","a":"2","a-b":"6","a.b":"5","b":"1","é":"4"})"),
            std::string::npos)
      << json;
}

// ---- escaping (append_go_json_string's rules) ----

TEST(EncodePodTest, StringsAreEscapedAsGoDoes) {
  Pod p;
  p.metadata.annotations = {
      {"k<\"\\>",
       std::string("q\"b\\s/\n\t\r\b\f\x01\x1f\x7f<>& \u2028\u2029 é 😀 ") + std::string("\0", 1)},
  };
  const std::string json = encode_pod_json(p);
  EXPECT_NE(json.find(R"("annotations":{"k\u003c\"\\\u003e":)"
                      R"("q\"b\\s/\n\t\r\b\f\u0001\u001f)"
                      "\x7f"
                      R"(\u003c\u003e\u0026 \u2028\u2029 é 😀 \u0000"})"),
            std::string::npos)
      << json;
  expect_round_trip(p);
}

// Invalid UTF-8 cannot be decoded, so it cannot round-trip: each bad byte becomes U+FFFD, as
// Go's encoder does.
TEST(EncodePodTest, InvalidUtf8BecomesReplacementCharacters) {
  Pod p;
  p.metadata.name =
      "a\xff"
      "b\xe2\x82"
      "c\xed\xa0\x80";  // stray, truncated, surrogate
  const std::string json = encode_pod_json(p);
  EXPECT_NE(json.find(R"("name":"a\ufffdb\ufffd\ufffdc\ufffd\ufffd\ufffd")"), std::string::npos)
      << json;
  EXPECT_EQ(decoded_pod(json).metadata.name,
            "a\uFFFD"
            "b\uFFFD\uFFFD"
            "c\uFFFD\uFFFD\uFFFD");
}

// ---- embedding ----

TEST(EncodePodTest, WritersEmbedObjectsInLargerDocuments) {
  const Pod pod = rich_pod();
  const Node node = rich_node();
  JsonWriter w;
  w.begin_object().key("Pod");
  write_pod(w, pod);
  w.key("Nodes").begin_object().key("items").begin_array();
  write_node(w, node);
  write_node(w, Node{});
  w.end_array().end_object().end_object();
  EXPECT_EQ(w.str(), R"({"Pod":)" + encode_pod_json(pod) + R"(,"Nodes":{"items":[)" +
                         encode_node_json(node) + "," + encode_node_json(Node{}) + "]}}");
}

// ---- bundled files ----

struct Objects {
  std::vector<Pod> pods;
  std::vector<Node> nodes;
};

template <class Value>
std::string_view raw_object(Value&& value) {
  std::string_view raw;
  simdjson::ondemand::object object;
  EXPECT_EQ(value.get_object().get(object), simdjson::SUCCESS);
  EXPECT_EQ(object.raw_json().get(raw), simdjson::SUCCESS);
  return raw;
}

// An ExtenderArgs body (examples/simulation) holds its Pod under "Pod" and its Nodes under
// "Nodes".items. Any other JSON yields nothing.
Objects extender_args_objects(const std::string& text) {
  Objects out;
  simdjson::ondemand::parser parser;
  const simdjson::padded_string padded(text);
  simdjson::ondemand::document doc;
  simdjson::ondemand::object root;
  if (parser.iterate(padded).get(doc) || doc.get_object().get(root)) return out;
  for (auto field : root) {
    std::string_view key;
    EXPECT_EQ(field.unescaped_key().get(key), simdjson::SUCCESS);
    if (key == "Pod") {
      auto pod = decode_pod_json(raw_object(field.value()));
      EXPECT_TRUE(pod.ok()) << pod.error().message;
      if (pod.ok()) out.pods.push_back(*pod);
    } else if (key == "Nodes") {
      // Live requests (kube-scheduler with nodeCacheCapable) send NodeNames and Nodes: null.
      simdjson::ondemand::value value = field.value();
      bool is_null = false;
      if (value.is_null().get(is_null) == simdjson::SUCCESS && is_null) continue;
      simdjson::ondemand::object nodes;
      const bool is_object = value.get_object().get(nodes) == simdjson::SUCCESS;
      EXPECT_TRUE(is_object);
      if (!is_object) continue;
      simdjson::ondemand::array items;
      EXPECT_EQ(nodes["items"].get_array().get(items), simdjson::SUCCESS);
      for (auto item : items) {
        auto node = decode_node_json(raw_object(item));
        EXPECT_TRUE(node.ok()) << node.error().message;
        if (node.ok()) out.nodes.push_back(*node);
      }
    }
  }
  return out;
}

// The Pods and Nodes of a file: Kubernetes objects and lists as decode_objects reads them,
// or, for JSON holding none, an ExtenderArgs body. Files of other formats (configs, device
// profiles) hold none; whether they decode is not this test's business.
Objects file_objects(const std::filesystem::path& path) {
  auto text = read_file(path.string());
  EXPECT_TRUE(text.ok()) << text.error().message;
  if (!text.ok()) return {};
  auto set = decode_objects(*text);
  if (set.ok() && !(set->pods.empty() && set->nodes.empty())) {
    return {std::move(set->pods), std::move(set->nodes)};
  }
  if (path.extension() == ".json") return extender_args_objects(*text);
  return {};
}

std::vector<std::filesystem::path> object_files(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".json" || ext == ".yaml" || ext == ".yml")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Every Pod and Node of examples/ and of the decoder's fixtures survives decode, encode,
// decode.
TEST(EncodeFilesTest, BundledPodsAndNodesRoundTrip) {
  size_t pods = 0;
  size_t nodes = 0;
  std::vector<std::string> files_with_objects;
  for (const char* dir : {"examples", "tests/model/testdata"}) {
    for (const auto& path : object_files(source_path(dir))) {
      SCOPED_TRACE(path.string());
      const Objects objects = file_objects(path);
      for (size_t i = 0; i < objects.pods.size(); ++i) {
        expect_round_trip(objects.pods[i], "pod " + std::to_string(i));
      }
      for (size_t i = 0; i < objects.nodes.size(); ++i) {
        expect_round_trip(objects.nodes[i], "node " + std::to_string(i));
      }
      pods += objects.pods.size();
      nodes += objects.nodes.size();
      if (!objects.pods.empty() || !objects.nodes.empty()) {
        files_with_objects.push_back(
            std::filesystem::relative(path, source_path("")).generic_string());
      }
    }
  }
  // Files known to hold both kinds; others join as they are added.
  for (const char* file : {"examples/simulation/fits.json", "examples/simulation/too-big.json",
                           "examples/simulation/unregistered.json", "examples/fit/pod-fits.yaml",
                           "examples/fit/node-k80.yaml", "tests/model/testdata/pod.json",
                           "tests/model/testdata/node.json"}) {
    EXPECT_NE(std::find(files_with_objects.begin(), files_with_objects.end(), file),
              files_with_objects.end())
        << file << " yielded no Pod or Node";
  }
  EXPECT_GE(pods, 6u);
  EXPECT_GE(nodes, 6u);
}

// The kubectl-printed fixture: what our encoder writes for it is exactly the fields we keep.
TEST(EncodeFilesTest, KubectlPodFixtureEncodesItsModelFields) {
  auto text = read_file(source_path("tests/model/testdata/pod.json"));
  ASSERT_TRUE(text.ok()) << text.error().message;
  const Pod pod = decoded_pod(*text);
  const std::string json = encode_pod_json(pod);
  EXPECT_EQ(json.find("managedFields"), std::string::npos);
  EXPECT_NE(json.find(R"("creationTimestamp":"2024-06-10T08:00:00Z")"), std::string::npos);
  EXPECT_NE(json.find(R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet",)"
                      R"("name":"trainer-7d9c8b6f5","uid":"5b1d7c1e-3f4a-4c8e-9a57-0b1b2c3d4e5f",)"
                      R"("controller":true}])"),
            std::string::npos)
      << json;
  expect_round_trip(pod);
}

}  // namespace encode_test
}  // namespace hamisim::model
