// ClusterSnapshot: node/pod bookkeeping as kube-scheduler's NodeInfo keeps it, and CA-style
// fork/revert/commit (ca-scale-up.md §4.4 step 7.1 and §4.5 step 4: fork, add the template
// node and pods, revert).

#include "planner/framework/snapshot.h"

#include <gtest/gtest.h>

#include "framework_test_support.h"

namespace hamisim::planner::framework {
namespace {

using testing::add_node;
using testing::add_pod;
using testing::affinity_term;
using testing::kHostname;
using testing::NodeBuilder;
using testing::PodBuilder;
using testing::res;

// Everything observable about a snapshot, to compare before/after a fork.
struct NodeState {
  std::string name;
  std::vector<std::string> pods;
  Resource allocatable;
  Resource requested;
  HostPortSet ports;
  size_t with_affinity;
  size_t with_anti_affinity;
  bool operator==(const NodeState&) const = default;
};
struct State {
  std::vector<NodeState> nodes;
  std::map<std::string, model::StringMap, std::less<>> namespaces;
  bool operator==(const State&) const = default;
};
State capture(const ClusterSnapshot& s) {
  State st;
  for (const NodeInfo* n : s.nodes()) {
    NodeState ns{n->name(),
                 {},
                 n->allocatable(),
                 n->requested(),
                 n->used_ports(),
                 n->pods_with_affinity(),
                 n->pods_with_required_anti_affinity()};
    for (const auto& p : n->pods()) ns.pods.push_back(p->key());
    st.nodes.push_back(std::move(ns));
  }
  st.namespaces = s.namespaces();
  return st;
}

std::vector<std::string> node_names(const ClusterSnapshot& s) {
  std::vector<std::string> out;
  for (const NodeInfo* n : s.nodes()) out.push_back(n->name());
  return out;
}

ClusterSnapshot small_cluster() {
  ClusterSnapshot s;
  EXPECT_TRUE(s.add_node(NodeBuilder("n1")).ok());
  EXPECT_TRUE(s.add_node(NodeBuilder("n2")).ok());
  EXPECT_TRUE(s.add_node(NodeBuilder("n3")).ok());
  EXPECT_TRUE(s.add_pod(PodBuilder("a").container(res({{"cpu", "1"}})).host_port(80), "n1").ok());
  EXPECT_TRUE(s.add_pod(PodBuilder("b")
                            .container(res({{"cpu", "500m"}, {"memory", "1Gi"}}))
                            .pod_anti_affinity(affinity_term({{"app", "x"}}, kHostname)),
                        "n1")
                  .ok());
  EXPECT_TRUE(s.add_pod(PodBuilder("c").container(res({{"example.com/dev", "2"}})), "n2").ok());
  return s;
}

// Nodes iterate in insertion order, regardless of their names.
TEST(ClusterSnapshot, IteratesNodesInInsertionOrder) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("zeta"));
  add_node(s, NodeBuilder("alpha"));
  add_node(s, NodeBuilder("mid"));
  EXPECT_EQ(node_names(s), (testing::Names{"zeta", "alpha", "mid"}));
  ASSERT_TRUE(s.remove_node("alpha").ok());
  add_node(s, NodeBuilder("alpha"));
  EXPECT_EQ(node_names(s), (testing::Names{"zeta", "mid", "alpha"}));
}

// NodeInfo aggregates: requested resources (effective requests), host ports, pod count,
// pods with required anti-affinity.
TEST(ClusterSnapshot, KeepsPerNodeAggregates) {
  ClusterSnapshot s = small_cluster();
  const NodeInfo* n1 = s.node("n1");
  ASSERT_NE(n1, nullptr);
  EXPECT_EQ(n1->pod_count(), 2u);
  EXPECT_EQ(n1->requested().milli_cpu, 1500);
  EXPECT_EQ(n1->requested().memory, int64_t{1} << 30);
  EXPECT_TRUE(n1->used_ports().conflicts("", "TCP", 80));
  EXPECT_EQ(n1->pods_with_required_anti_affinity(), 1u);
  EXPECT_EQ(n1->allocatable().milli_cpu, 4000);
  EXPECT_EQ(n1->allocatable().allowed_pod_number, 110);
  EXPECT_EQ(s.node("n2")->requested().scalar_value("example.com/dev"), 2);

  ASSERT_TRUE(s.remove_pod("default", "a", "n1").ok());
  EXPECT_EQ(n1->requested().milli_cpu, 500);
  EXPECT_FALSE(n1->used_ports().conflicts("", "TCP", 80));
  EXPECT_EQ(n1->pod_count(), 1u);
}

// Bad input is reported as an error value, never thrown.
TEST(ClusterSnapshot, RejectsDuplicatesAndUnknownNames) {
  ClusterSnapshot s = small_cluster();
  EXPECT_FALSE(s.add_node(NodeBuilder("n1")).ok());
  EXPECT_FALSE(s.add_node(model::Node{}).ok());
  EXPECT_FALSE(s.add_pod(PodBuilder("a"), "n1").ok());
  EXPECT_TRUE(s.add_pod(PodBuilder("a", "other-ns"), "n1").ok());
  EXPECT_FALSE(s.add_pod(PodBuilder("z"), "missing").ok());
  EXPECT_FALSE(s.remove_pod("default", "zz", "n1").ok());
  EXPECT_FALSE(s.remove_pod("default", "a", "missing").ok());
  EXPECT_FALSE(s.remove_node("missing").ok());
  EXPECT_FALSE(s.revert().ok());
  EXPECT_FALSE(s.commit().ok());
}

// fork/revert restores exactly the previous state: nodes, order, pods and their order,
// aggregates, namespaces.
TEST(ClusterSnapshot, ForkRevertRestoresExactlyThePreviousState) {
  ClusterSnapshot s = small_cluster();
  s.set_namespace_labels("default", {{"team", "a"}});
  const State before = capture(s);

  s.fork();
  add_node(s, NodeBuilder("template-e-0"));
  add_pod(s, PodBuilder("p1").container(res({{"cpu", "3"}})).host_port(9000), "template-e-0");
  add_pod(s, PodBuilder("p2").container(res({{"cpu", "100m"}})), "n1");
  ASSERT_TRUE(s.remove_pod("default", "a", "n1").ok());
  ASSERT_TRUE(s.remove_node("n2").ok());
  add_node(s, NodeBuilder("n2").label("re", "added"));
  ASSERT_TRUE(s.remove_node("n3").ok());
  s.set_namespace_labels("default", {{"team", "b"}});
  s.set_namespace_labels("new", {});
  EXPECT_NE(capture(s), before);
  ASSERT_TRUE(s.revert().ok());

  EXPECT_EQ(capture(s), before);
  EXPECT_EQ(s.node("n2")->labels().count("re"), 0u);
  EXPECT_EQ(s.fork_depth(), 0u);
}

// Removing a pod from the middle of a node and reverting puts it back at the same position.
TEST(ClusterSnapshot, RevertRestoresPodOrderWithinNode) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("n"));
  for (const char* name : {"a", "b", "c", "d"}) add_pod(s, PodBuilder(name), "n");
  const State before = capture(s);
  s.fork();
  ASSERT_TRUE(s.remove_pod("default", "b", "n").ok());
  ASSERT_TRUE(s.remove_pod("default", "d", "n").ok());
  add_pod(s, PodBuilder("b"), "n");
  ASSERT_TRUE(s.revert().ok());
  EXPECT_EQ(capture(s), before);
}

// Forks nest: an inner commit folds its changes into the outer fork, which can still revert
// them; an inner revert leaves the outer fork's earlier changes.
TEST(ClusterSnapshot, NestedForksCommitAndRevert) {
  ClusterSnapshot s = small_cluster();
  const State base = capture(s);
  s.fork();
  add_node(s, NodeBuilder("outer"));
  const State after_outer = capture(s);
  s.fork();
  add_pod(s, PodBuilder("inner"), "outer");
  ASSERT_TRUE(s.revert().ok());
  EXPECT_EQ(capture(s), after_outer);
  s.fork();
  add_pod(s, PodBuilder("inner"), "outer");
  ASSERT_TRUE(s.commit().ok());
  EXPECT_EQ(s.node("outer")->pod_count(), 1u);
  ASSERT_TRUE(s.revert().ok());
  EXPECT_EQ(capture(s), base);
}

// commit() with no enclosing fork makes the changes permanent.
TEST(ClusterSnapshot, CommitKeepsChanges) {
  ClusterSnapshot s = small_cluster();
  s.fork();
  add_node(s, NodeBuilder("kept"));
  add_pod(s, PodBuilder("x"), "kept");
  ASSERT_TRUE(s.commit().ok());
  EXPECT_FALSE(s.revert().ok());
  ASSERT_NE(s.node("kept"), nullptr);
  EXPECT_EQ(s.node("kept")->pod_count(), 1u);
}

// Reverting restores aggregates exactly even when they had saturated.
TEST(ClusterSnapshot, RevertRestoresSaturatedAggregates) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("n"));
  add_pod(s, PodBuilder("big").container(res({{"cpu", "9P"}})), "n");
  const State before = capture(s);
  s.fork();
  add_pod(s, PodBuilder("big2").container(res({{"cpu", "9P"}})), "n");
  EXPECT_EQ(s.node("n")->requested().milli_cpu, std::numeric_limits<int64_t>::max());
  ASSERT_TRUE(s.revert().ok());
  EXPECT_EQ(capture(s), before);
}

// Many removals outside a fork compact the tombstones; order and lookups are unaffected.
TEST(ClusterSnapshot, RemovalsOutsideForksKeepOrder) {
  ClusterSnapshot s;
  for (int i = 0; i < 10; ++i) add_node(s, NodeBuilder("n" + std::to_string(i)));
  for (int i = 0; i < 10; i += 2) ASSERT_TRUE(s.remove_node("n" + std::to_string(i)).ok());
  EXPECT_EQ(node_names(s), (testing::Names{"n1", "n3", "n5", "n7", "n9"}));
  EXPECT_EQ(s.node_count(), 5u);
  EXPECT_EQ(s.node("n4"), nullptr);
  ASSERT_NE(s.node("n7"), nullptr);
  EXPECT_EQ(s.node("n7")->name(), "n7");
}

// HostPortInfo: entries are counted, so two pods on the same port and removing one keeps it.
TEST(HostPortSet, CountsDuplicateEntries) {
  HostPortSet ports;
  ports.add("", "", 8080);
  ports.add("0.0.0.0", "TCP", 8080);
  ports.remove("", "TCP", 8080);
  EXPECT_TRUE(ports.conflicts("10.0.0.1", "TCP", 8080));
  ports.remove("0.0.0.0", "", 8080);
  EXPECT_FALSE(ports.conflicts("10.0.0.1", "TCP", 8080));
  EXPECT_TRUE(ports.empty());
}

// Existing pods' required anti-affinity terms are compiled once, with the pod's namespace as
// the default; invalid selectors are recorded, not thrown.
TEST(PodInfo, CompilesAffinityTermsAndRecordsParseErrors) {
  auto info = PodInfo::make(
      PodBuilder("p", "ns1").pod_anti_affinity(affinity_term({{"app", "x"}}, kHostname)));
  ASSERT_EQ(info->required_anti_affinity_terms().size(), 1u);
  EXPECT_EQ(info->required_anti_affinity_terms()[0].namespaces.count("ns1"), 1u);
  EXPECT_FALSE(info->affinity_parse_error().has_value());

  // One invalid term drops every required term of that kind (framework.getAffinityTerms).
  model::PodAffinityTerm bad = affinity_term({}, kHostname);
  bad.label_selector->match_expressions.push_back({"app", "In", {}});
  auto broken = PodInfo::make(
      PodBuilder("q").pod_affinity(affinity_term({{"app", "y"}}, kHostname)).pod_affinity(bad));
  EXPECT_TRUE(broken->affinity_parse_error().has_value());
  EXPECT_TRUE(broken->required_affinity_terms().empty());

  // An invalid preferred term marks the pod unparsable too.
  model::Pod preferred = PodBuilder("r");
  preferred.spec.affinity.emplace();
  preferred.spec.affinity->pod_anti_affinity.emplace();
  preferred.spec.affinity->pod_anti_affinity->preferred.push_back({10, bad});
  EXPECT_TRUE(PodInfo::make(preferred)->affinity_parse_error().has_value());
}

// What-if pods written with limits only are requested at their limits, as the API server
// defaults them; an explicit request is kept.
TEST(PodInfo, RequestsDefaultToLimits) {
  model::Pod pod = PodBuilder("p").container({});
  pod.spec.containers.at(0).resources.limits = {{"example.com/gpu", model::Quantity::from_int(2)},
                                                {"cpu", model::Quantity::from_int(4)}};
  pod.spec.containers.at(0).resources.requests = {{"cpu", model::Quantity::from_int(1)}};
  model::Container init;
  init.name = "init";
  init.resources.limits = {{"memory", model::Quantity::from_int(1 << 20)}};
  pod.spec.init_containers.push_back(init);
  auto info = PodInfo::make(pod);
  EXPECT_EQ(info->requests().scalar_value("example.com/gpu"), 2);
  EXPECT_EQ(info->requests().milli_cpu, 1000);
  EXPECT_EQ(info->requests().memory, 1 << 20);
  EXPECT_EQ(info->pod().spec.containers[0].resources.requests.size(), 2u);
}

// share() keeps the pod it is given instead of a copy, unless the API server's defaulting
// would change it: then it defaults a copy, as make() does, and the given pod stays as it was.
TEST(PodInfo, ShareKeepsThePodUnlessDefaultingChangesIt) {
  model::Pod pod = PodBuilder("p", "ns1").container(res({{"cpu", "2"}}));
  auto shared = std::make_shared<const model::Pod>(pod);
  auto info = PodInfo::share(shared);
  EXPECT_EQ(&info->pod(), shared.get());
  EXPECT_EQ(info->key(), "ns1/p");
  EXPECT_EQ(info->requests().milli_cpu, 2000);
  EXPECT_NE(info->serial(), PodInfo::share(shared)->serial());
  std::weak_ptr<const model::Pod> watch = shared;
  shared.reset();
  EXPECT_FALSE(watch.expired());  // the PodInfo keeps it alive
  info.reset();
  EXPECT_TRUE(watch.expired());

  pod.spec.containers.at(0).resources.limits = {{"example.com/gpu", model::Quantity::from_int(1)}};
  ASSERT_TRUE(model::needs_default_requests(pod.spec));
  auto limits_only = std::make_shared<const model::Pod>(pod);
  auto defaulted = PodInfo::share(limits_only);
  EXPECT_NE(&defaulted->pod(), limits_only.get());
  EXPECT_EQ(defaulted->requests().scalar_value("example.com/gpu"), 1);
  EXPECT_EQ(defaulted->pod().spec.containers[0].resources.requests.count("example.com/gpu"), 1u);
  EXPECT_EQ(limits_only->spec.containers[0].resources.requests.count("example.com/gpu"), 0u);
}

// A node added by shared_ptr is kept as it is, not copied (a plan's snapshot shares its
// input's nodes).
TEST(ClusterSnapshot, AddsASharedNodeWithoutACopy) {
  auto node = std::make_shared<const model::Node>(NodeBuilder("n1").build());
  ClusterSnapshot s;
  ASSERT_TRUE(s.add_node(node).ok());
  ASSERT_NE(s.node("n1"), nullptr);
  EXPECT_EQ(&s.node("n1")->node(), node.get());
  EXPECT_EQ(s.node("n1")->allocatable().milli_cpu, 4000);
  EXPECT_FALSE(s.add_node(node).ok());  // the same name twice
  EXPECT_FALSE(s.add_node(std::shared_ptr<const model::Node>()).ok());
}

// A placed pod carrying its device allocation: the same pod, shared, with the annotations kept
// beside it, a serial of its own, and what make() derived unchanged; the original keeps its
// annotations.
TEST(PodInfo, WithAnnotationsCopiesTheDerivedFieldsAndSetsTheAnnotations) {
  model::Pod pod = PodBuilder("p", "ns1")
                       .container(res({{"cpu", "2"}}))
                       .pod_anti_affinity(affinity_term({{"app", "x"}}, kHostname));
  pod.metadata.annotations["keep"] = "1";
  pod.metadata.annotations["hami.io/vgpu-devices-to-allocate"] = "old";
  auto info = PodInfo::make(pod);
  auto placed =
      PodInfo::with_annotations(*info, {{"hami.io/vgpu-devices-to-allocate", "GPU-1,NVIDIA"}});
  EXPECT_NE(placed->serial(), info->serial());
  EXPECT_EQ(placed->key(), "ns1/p");
  EXPECT_EQ(placed->requests().milli_cpu, info->requests().milli_cpu);
  ASSERT_EQ(placed->required_anti_affinity_terms().size(), 1u);
  EXPECT_EQ(placed->required_anti_affinity_terms()[0].topology_key, kHostname);
  EXPECT_EQ(&placed->pod(), &info->pod());  // shared, not copied
  ASSERT_NE(placed->added_annotations(), nullptr);
  EXPECT_EQ(*placed->added_annotations(),
            (model::StringMap{{"hami.io/vgpu-devices-to-allocate", "GPU-1,NVIDIA"}}));
  EXPECT_EQ(info->added_annotations(), nullptr);
  const model::Pod whole = placed->annotated_pod();
  EXPECT_EQ(whole.metadata.annotations.at("keep"), "1");
  EXPECT_EQ(whole.metadata.annotations.at("hami.io/vgpu-devices-to-allocate"), "GPU-1,NVIDIA");
  EXPECT_EQ(info->pod().metadata.annotations.at("hami.io/vgpu-devices-to-allocate"), "old");
  // Set again over a placed pod, the later value wins and the earlier ones stay.
  auto again = PodInfo::with_annotations(*placed, {{"b", "2"}});
  EXPECT_EQ(again->annotated_pod().metadata.annotations.at("hami.io/vgpu-devices-to-allocate"),
            "GPU-1,NVIDIA");
  EXPECT_EQ(again->annotated_pod().metadata.annotations.at("b"), "2");
}

}  // namespace
}  // namespace hamisim::planner::framework
