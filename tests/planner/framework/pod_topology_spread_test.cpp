// PodTopologySpread Filter (whenUnsatisfiable: DoNotSchedule).
// Reference: kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/
// (maxSkew against the global minimum over eligible domains; minDomains: "when the number
// of eligible domains ... is less than minDomains, ... the global minimum is treated as 0";
// nodeAffinityPolicy default Honor, nodeTaintsPolicy default Ignore; matchLabelKeys; "nodes
// without the topologyKey are ... not considered" and rejected with "(missing required
// label)").

#include "planner/framework/plugins/pod_topology_spread.h"

#include <gtest/gtest.h>

#include "framework_test_support.h"

namespace hamisim::planner::framework {
namespace {

using testing::add_node;
using testing::add_pod;
using testing::kHostname;
using testing::kZone;
using testing::Names;
using testing::NodeBuilder;
using testing::passing_nodes;
using testing::PodBuilder;
using testing::run_plugin;
using testing::spread;

ClusterSnapshot three_zones() {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("a1").zone("a"));
  add_node(s, NodeBuilder("b1").zone("b"));
  add_node(s, NodeBuilder("c1").zone("c"));
  return s;
}

PodBuilder web(std::string name) {
  return PodBuilder(std::move(name)).label("app", "web");
}

// The docs example: 1/1/0 with maxSkew 1 admits only zone c.
TEST(PodTopologySpread, MaxSkewAgainstGlobalMinimum) {
  ClusterSnapshot s = three_zones();
  add_pod(s, web("w1"), "a1");
  add_pod(s, web("w2"), "b1");
  model::Pod pod =
      PodBuilder("w3").label("app", "web").spread_constraint(spread(kZone, 1, {{"app", "web"}}));
  EXPECT_EQ(passing_nodes(PodTopologySpread(), pod, s), (Names{"c1"}));
  auto st = run_plugin(PodTopologySpread(), pod, s, "a1");
  EXPECT_EQ(st.code, FilterCode::kUnschedulable);
  EXPECT_EQ(st.reasons,
            (std::vector<std::string>{"node(s) didn't match pod topology spread constraints"}));
  // maxSkew 2 admits every zone.
  model::Pod loose =
      PodBuilder("w3").label("app", "web").spread_constraint(spread(kZone, 2, {{"app", "web"}}));
  EXPECT_EQ(passing_nodes(PodTopologySpread(), loose, s).size(), 3u);
}

// A node without the topology key is UnschedulableAndUnresolvable with its own reason.
TEST(PodTopologySpread, NodeWithoutTopologyKeyIsUnresolvable) {
  ClusterSnapshot s = three_zones();
  add_node(s, NodeBuilder("nozone"));
  model::Pod pod = web("w").spread_constraint(spread(kZone, 1, {{"app", "web"}}));
  auto st = run_plugin(PodTopologySpread(), pod, s, "nozone");
  EXPECT_EQ(st.code, FilterCode::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.reasons, (std::vector<std::string>{
                            "node(s) didn't match pod topology spread constraints (missing "
                            "required label)"}));
}

// A pod that does not match its own selector does not add itself to the count.
TEST(PodTopologySpread, SelfMatchCountsOnlyWhenSelectorMatchesThePod) {
  ClusterSnapshot s = three_zones();
  add_pod(s, web("w1"), "a1");
  model::Pod other = PodBuilder("x").spread_constraint(spread(kZone, 1, {{"app", "web"}}));
  // a: 1 + 0 - 0 = 1 <= 1.
  EXPECT_EQ(passing_nodes(PodTopologySpread(), other, s).size(), 3u);
}

// minDomains: with fewer eligible domains than minDomains the global minimum is 0, so a
// domain already at maxSkew is closed even if every domain is equally full.
TEST(PodTopologySpread, MinDomainsForcesGlobalMinimumToZero) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("a1").zone("a"));
  add_node(s, NodeBuilder("b1").zone("b"));
  add_pod(s, web("w1"), "a1");
  add_pod(s, web("w2"), "b1");
  model::TopologySpreadConstraint c = spread(kZone, 1, {{"app", "web"}});
  // Without minDomains: 1/1, min 1, skew 1+1-1 = 1: both pass.
  EXPECT_EQ(passing_nodes(PodTopologySpread(), web("w3").spread_constraint(c), s).size(), 2u);
  c.min_domains = 3;
  // 2 domains < 3: min 0, skew 2 > 1 everywhere: the pod waits for a new zone.
  EXPECT_TRUE(passing_nodes(PodTopologySpread(), web("w3").spread_constraint(c), s).empty());
  // A new (empty) zone node passes and raises the domain count.
  add_node(s, NodeBuilder("c1").zone("c"));
  EXPECT_EQ(passing_nodes(PodTopologySpread(), web("w3").spread_constraint(c), s), (Names{"c1"}));
}

// nodeAffinityPolicy Honor (default): nodes the pod's nodeSelector excludes are not
// eligible domains, so they do not pull the global minimum down. Ignore counts them.
TEST(PodTopologySpread, NodeAffinityPolicyHonorAndIgnore) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("a1").zone("a").label("pool", "x"));
  add_node(s, NodeBuilder("b1").zone("b").label("pool", "x"));
  add_node(s, NodeBuilder("c1").zone("c").label("pool", "y"));
  add_pod(s, web("w1"), "a1");
  model::TopologySpreadConstraint c = spread(kZone, 1, {{"app", "web"}});
  model::Pod honor = web("w2").node_selector("pool", "x").spread_constraint(c);
  // Eligible domains a=1, b=0: min 0; a: 1+1-0 = 2 > 1, b passes. c is not eligible but
  // Filter still evaluates it (NodeAffinity is what rejects it): 0+1-0 = 1 passes.
  EXPECT_EQ(passing_nodes(PodTopologySpread(), honor, s), (Names{"b1", "c1"}));
  add_pod(s, web("w2"), "b1");
  // a=1, b=1 (c not eligible): min 1, a and b pass.
  EXPECT_EQ(passing_nodes(PodTopologySpread(), honor, s), (Names{"a1", "b1", "c1"}));
  c.node_affinity_policy = "Ignore";
  model::Pod ignore = web("w3").node_selector("pool", "x").spread_constraint(c);
  // c counts with 0: min 0; a and b are at 1+1 = 2 > 1.
  EXPECT_EQ(passing_nodes(PodTopologySpread(), ignore, s), (Names{"c1"}));
}

// nodeTaintsPolicy Honor: nodes with untolerated NoSchedule taints are not eligible domains.
TEST(PodTopologySpread, NodeTaintsPolicyHonorSkipsTaintedDomains) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("a1").zone("a"));
  add_node(s, NodeBuilder("b1").zone("b"));
  add_node(s, NodeBuilder("c1").zone("c").taint("dedicated", "x", "NoSchedule"));
  add_pod(s, web("w1"), "a1");
  add_pod(s, web("w2"), "b1");
  model::TopologySpreadConstraint c = spread(kZone, 1, {{"app", "web"}});
  // Ignore (default): c counts with 0, a and b are closed.
  EXPECT_EQ(passing_nodes(PodTopologySpread(), web("w3").spread_constraint(c), s), (Names{"c1"}));
  c.node_taints_policy = "Honor";
  EXPECT_EQ(passing_nodes(PodTopologySpread(), web("w3").spread_constraint(c), s),
            (Names{"a1", "b1", "c1"}));
}

// matchLabelKeys adds the incoming pod's values for those keys to the selector.
TEST(PodTopologySpread, MatchLabelKeysNarrowTheSelector) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("a1").zone("a"));
  add_node(s, NodeBuilder("b1").zone("b"));
  add_pod(s, PodBuilder("old").label("app", "web").label("rev", "1"), "a1");
  model::TopologySpreadConstraint c = spread(kZone, 1, {{"app", "web"}});
  c.match_label_keys = {"rev"};
  model::Pod pod = PodBuilder("new").label("app", "web").label("rev", "2").spread_constraint(c);
  // The rev=1 pod does not count: both zones are empty for rev=2.
  EXPECT_EQ(passing_nodes(PodTopologySpread(), pod, s).size(), 2u);
  model::Pod same_rev =
      PodBuilder("new").label("app", "web").label("rev", "1").spread_constraint(c);
  model::Pod second = same_rev;
  add_pod(s, PodBuilder("old2").label("app", "web").label("rev", "1"), "a1");
  EXPECT_EQ(passing_nodes(PodTopologySpread(), second, s), (Names{"b1"}));
}

// Pods in other namespaces and terminating pods are not counted.
TEST(PodTopologySpread, IgnoresOtherNamespacesAndTerminatingPods) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("a1").zone("a"));
  add_node(s, NodeBuilder("b1").zone("b"));
  add_pod(s, PodBuilder("x", "other").label("app", "web"), "a1");
  add_pod(s, PodBuilder("y").label("app", "web").terminating(), "a1");
  add_pod(s, PodBuilder("z").label("app", "web").terminating(), "a1");
  model::Pod pod = web("w").spread_constraint(spread(kZone, 1, {{"app", "web"}}));
  EXPECT_EQ(passing_nodes(PodTopologySpread(), pod, s).size(), 2u);
}

// ScheduleAnyway constraints are scoring only: PreFilter skips.
TEST(PodTopologySpread, ScheduleAnywayIsNotAFilter) {
  ClusterSnapshot s = three_zones();
  add_pod(s, web("w1"), "a1");
  add_pod(s, web("w2"), "a1");
  model::TopologySpreadConstraint c = spread(kZone, 1, {{"app", "web"}});
  c.when_unsatisfiable = "ScheduleAnyway";
  EXPECT_EQ(passing_nodes(PodTopologySpread(), web("w3").spread_constraint(c), s).size(), 3u);
}

// Hostname spreading: each node is a domain; a new empty node (e.g. a CA template copy)
// is where the next pod goes.
TEST(PodTopologySpread, HostnameKeySpreadsAcrossNodes) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("n1"));
  add_pod(s, web("w1"), "n1");
  model::Pod pod = web("w2").spread_constraint(spread(kHostname, 1, {{"app", "web"}}));
  // One domain: 1+1-1 = 1 passes.
  EXPECT_EQ(passing_nodes(PodTopologySpread(), pod, s), (Names{"n1"}));
  s.fork();
  add_node(s, NodeBuilder("template-e-0"));
  EXPECT_EQ(passing_nodes(PodTopologySpread(), pod, s), (Names{"template-e-0"}));
  ASSERT_TRUE(s.revert().ok());
}

// An empty labelSelector counts no existing pod (countPodsMatchSelector), a nil one matches
// no pod at all; neither blocks.
TEST(PodTopologySpread, EmptyAndNilSelectorsCountNothing) {
  ClusterSnapshot s = three_zones();
  add_pod(s, web("w1"), "a1");
  add_pod(s, web("w2"), "a1");
  model::TopologySpreadConstraint c = spread(kZone, 1, {});
  c.label_selector = model::LabelSelector{};
  EXPECT_EQ(passing_nodes(PodTopologySpread(), web("w").spread_constraint(c), s).size(), 3u);
  c.label_selector.reset();
  EXPECT_EQ(passing_nodes(PodTopologySpread(), web("w").spread_constraint(c), s).size(), 3u);
}

// Several constraints must all hold.
TEST(PodTopologySpread, AllConstraintsMustHold) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("a1").zone("a"));
  add_node(s, NodeBuilder("a2").zone("a"));
  add_node(s, NodeBuilder("b1").zone("b"));
  add_pod(s, web("w1"), "a1");
  model::Pod pod = web("w2")
                       .spread_constraint(spread(kZone, 1, {{"app", "web"}}))
                       .spread_constraint(spread(kHostname, 1, {{"app", "web"}}));
  // zone: a=1, b=0 -> only b; hostname: a1=1, others 0 -> not a1.
  EXPECT_EQ(passing_nodes(PodTopologySpread(), pod, s), (Names{"b1"}));
}

// An invalid label selector is an Error from PreFilter.
TEST(PodTopologySpread, InvalidSelectorIsAnError) {
  ClusterSnapshot s = three_zones();
  model::TopologySpreadConstraint c = spread(kZone, 1, {});
  c.label_selector->match_expressions.push_back({"app", "In", {}});
  EXPECT_EQ(run_plugin(PodTopologySpread(), web("w").spread_constraint(c), s, "a1").code,
            FilterCode::kError);
}

}  // namespace
}  // namespace hamisim::planner::framework
