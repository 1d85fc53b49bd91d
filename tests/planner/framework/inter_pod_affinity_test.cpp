// InterPodAffinity Filter (required terms).
// Reference:
// kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#inter-pod-affinity-and-anti-affinity
// ("the rules are of the form: this Pod should (or, in the case of anti-affinity, should not)
// run in an X if that X is already running one or more Pods that meet rule Y"; topologyKey
// may be any label key; namespaces / namespaceSelector; "an empty namespaceSelector ({})
// matches all namespaces") and the scheduler's symmetry rule: existing pods' required
// anti-affinity also keeps the incoming pod away.

#include "planner/framework/plugins/inter_pod_affinity.h"

#include <gtest/gtest.h>

#include "framework_test_support.h"

namespace hamisim::planner::framework {
namespace {

using testing::add_node;
using testing::add_pod;
using testing::affinity_term;
using testing::kHostname;
using testing::kZone;
using testing::Names;
using testing::NodeBuilder;
using testing::passing_nodes;
using testing::PodBuilder;
using testing::run_plugin;

// Two zones, two nodes each, plus a node without a zone label.
ClusterSnapshot zoned_cluster() {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("a1").zone("a"));
  add_node(s, NodeBuilder("a2").zone("a"));
  add_node(s, NodeBuilder("b1").zone("b"));
  add_node(s, NodeBuilder("b2").zone("b"));
  add_node(s, NodeBuilder("nozone"));
  return s;
}

// Required affinity with a zone key: only nodes in a zone that runs a matching pod.
TEST(InterPodAffinity, RequiredAffinityFollowsMatchingPodsDomain) {
  ClusterSnapshot s = zoned_cluster();
  add_pod(s, PodBuilder("db").label("app", "db"), "a2");
  model::Pod web = PodBuilder("web").pod_affinity(affinity_term({{"app", "db"}}, kZone));
  EXPECT_EQ(passing_nodes(InterPodAffinity(), web, s), (Names{"a1", "a2"}));
  auto st = run_plugin(InterPodAffinity(), web, s, "b1");
  EXPECT_EQ(st.code, FilterCode::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.reasons, (std::vector<std::string>{"node(s) didn't match pod affinity rules"}));
}

// The same with the hostname key: only the node running the matching pod.
TEST(InterPodAffinity, RequiredAffinityWithHostnameKey) {
  ClusterSnapshot s = zoned_cluster();
  add_pod(s, PodBuilder("db").label("app", "db"), "b2");
  model::Pod web = PodBuilder("web").pod_affinity(affinity_term({{"app", "db"}}, kHostname));
  EXPECT_EQ(passing_nodes(InterPodAffinity(), web, s), (Names{"b2"}));
}

// The first pod of a group that matches its own affinity may go to any node carrying the
// topology key, when no pod in the cluster matches yet.
TEST(InterPodAffinity, FirstPodOfSelfAffineGroupMayLandAnywhere) {
  ClusterSnapshot s = zoned_cluster();
  model::Pod first =
      PodBuilder("w0").label("app", "w").pod_affinity(affinity_term({{"app", "w"}}, kZone));
  EXPECT_EQ(passing_nodes(InterPodAffinity(), first, s), (Names{"a1", "a2", "b1", "b2"}));
  // Once one exists, the group follows it.
  add_pod(s, PodBuilder("w1").label("app", "w"), "b1");
  EXPECT_EQ(passing_nodes(InterPodAffinity(), first, s), (Names{"b1", "b2"}));
  // A pod that does not match its own term gets no such exemption.
  ClusterSnapshot empty = zoned_cluster();
  model::Pod stranger = PodBuilder("x").pod_affinity(affinity_term({{"app", "w"}}, kZone));
  EXPECT_TRUE(passing_nodes(InterPodAffinity(), stranger, empty).empty());
}

// An existing pod counts for affinity only if it matches all of the pod's affinity terms.
TEST(InterPodAffinity, ExistingPodMustMatchAllAffinityTerms) {
  ClusterSnapshot s = zoned_cluster();
  add_pod(s, PodBuilder("db").label("app", "db"), "a1");
  add_pod(s, PodBuilder("cache").label("app", "cache"), "a1");
  model::Pod web = PodBuilder("web")
                       .pod_affinity(affinity_term({{"app", "db"}}, kZone))
                       .pod_affinity(affinity_term({{"app", "cache"}}, kZone));
  EXPECT_TRUE(passing_nodes(InterPodAffinity(), web, s).empty());
}

// Required anti-affinity: no node whose domain holds a matching pod.
TEST(InterPodAffinity, RequiredAntiAffinityAvoidsDomain) {
  ClusterSnapshot s = zoned_cluster();
  add_pod(s, PodBuilder("w1").label("app", "w"), "a1");
  model::Pod pod =
      PodBuilder("w2").label("app", "w").pod_anti_affinity(affinity_term({{"app", "w"}}, kZone));
  EXPECT_EQ(passing_nodes(InterPodAffinity(), pod, s), (Names{"b1", "b2", "nozone"}));
  auto st = run_plugin(InterPodAffinity(), pod, s, "a2");
  EXPECT_EQ(st.code, FilterCode::kUnschedulable);
  EXPECT_EQ(st.reasons, (std::vector<std::string>{"node(s) didn't match pod anti-affinity rules"}));
}

// Symmetry: an existing pod's required anti-affinity that matches the incoming pod keeps it
// out of that pod's domain, even though the incoming pod has no terms of its own.
TEST(InterPodAffinity, ExistingPodsAntiAffinityIsSymmetric) {
  ClusterSnapshot s = zoned_cluster();
  add_pod(s, PodBuilder("loner").pod_anti_affinity(affinity_term({{"app", "noisy"}}, kZone)), "b2");
  model::Pod noisy = PodBuilder("n").label("app", "noisy");
  EXPECT_EQ(passing_nodes(InterPodAffinity(), noisy, s), (Names{"a1", "a2", "nozone"}));
  auto st = run_plugin(InterPodAffinity(), noisy, s, "b1");
  EXPECT_EQ(st.code, FilterCode::kUnschedulable);
  EXPECT_EQ(st.reasons,
            (std::vector<std::string>{"node(s) didn't satisfy existing pods anti-affinity rules"}));
  // A pod the term does not select is unaffected.
  EXPECT_EQ(passing_nodes(InterPodAffinity(), PodBuilder("quiet"), s).size(), 5u);
}

// Required affinity needs the topology key on the node, even for the first pod.
TEST(InterPodAffinity, NodeWithoutTopologyKeyFailsAffinity) {
  ClusterSnapshot s = zoned_cluster();
  model::Pod first =
      PodBuilder("w0").label("app", "w").pod_affinity(affinity_term({{"app", "w"}}, kZone));
  EXPECT_FALSE(run_plugin(InterPodAffinity(), first, s, "nozone").ok());
}

// Terms match pods of the pod's own namespace by default, of the listed namespaces when
// given, and of every namespace with an empty namespaceSelector.
TEST(InterPodAffinity, NamespacesDefaultListedAndEmptySelector) {
  ClusterSnapshot s = zoned_cluster();
  add_pod(s, PodBuilder("db", "data").label("app", "db"), "a1");
  model::PodAffinityTerm term = affinity_term({{"app", "db"}}, kHostname);
  EXPECT_TRUE(
      passing_nodes(InterPodAffinity(), PodBuilder("web", "web").pod_affinity(term), s).empty());
  model::PodAffinityTerm listed = term;
  listed.namespaces = {"data"};
  EXPECT_EQ(passing_nodes(InterPodAffinity(), PodBuilder("web", "web").pod_affinity(listed), s),
            (Names{"a1"}));
  model::PodAffinityTerm all = term;
  all.namespace_selector = model::LabelSelector{};
  EXPECT_EQ(passing_nodes(InterPodAffinity(), PodBuilder("web", "web").pod_affinity(all), s),
            (Names{"a1"}));
}

// namespaceSelector resolves against the namespaces registered with the snapshot.
TEST(InterPodAffinity, NamespaceSelectorUsesRegisteredNamespaceLabels) {
  ClusterSnapshot s = zoned_cluster();
  add_pod(s, PodBuilder("db", "data").label("app", "db"), "a1");
  add_pod(s, PodBuilder("db", "other").label("app", "db"), "b1");
  s.set_namespace_labels("data", {{"team", "storage"}});
  s.set_namespace_labels("other", {{"team", "web"}});
  model::PodAffinityTerm term = affinity_term({{"app", "db"}}, kHostname);
  term.namespace_selector = testing::match_labels({{"team", "storage"}});
  EXPECT_EQ(passing_nodes(InterPodAffinity(), PodBuilder("web", "web").pod_affinity(term), s),
            (Names{"a1"}));
  // Symmetric case: an existing pod's anti-affinity namespaceSelector is matched against the
  // incoming pod's namespace labels.
  ClusterSnapshot s2 = zoned_cluster();
  s2.set_namespace_labels("web", {{"team", "web"}});
  model::PodAffinityTerm anti = affinity_term({{"app", "x"}}, kZone);
  anti.namespace_selector = testing::match_labels({{"team", "web"}});
  add_pod(s2, PodBuilder("guard", "sys").pod_anti_affinity(anti), "a1");
  EXPECT_EQ(passing_nodes(InterPodAffinity(), PodBuilder("p", "web").label("app", "x"), s2),
            (Names{"b1", "b2", "nozone"}));
  EXPECT_EQ(
      passing_nodes(InterPodAffinity(), PodBuilder("p", "batch").label("app", "x"), s2).size(), 5u);
}

// An invalid selector in the incoming pod's required terms fails PreFilter with Error.
TEST(InterPodAffinity, InvalidSelectorIsAnError) {
  ClusterSnapshot s = zoned_cluster();
  model::PodAffinityTerm bad = affinity_term({}, kZone);
  bad.label_selector->match_expressions.push_back({"app", "Gt", {"1"}});
  auto st = run_plugin(InterPodAffinity(), PodBuilder("p").pod_anti_affinity(bad), s, "a1");
  EXPECT_EQ(st.code, FilterCode::kError);
}

// Pods placed later in a fork are seen by the next PreFilter, and gone after revert.
TEST(InterPodAffinity, SeesPodsAddedInAFork) {
  ClusterSnapshot s = zoned_cluster();
  model::Pod pod =
      PodBuilder("w").label("app", "w").pod_anti_affinity(affinity_term({{"app", "w"}}, kHostname));
  s.fork();
  add_pod(s, PodBuilder("w-0").label("app", "w"), "a1");
  EXPECT_EQ(passing_nodes(InterPodAffinity(), pod, s), (Names{"a2", "b1", "b2", "nozone"}));
  ASSERT_TRUE(s.revert().ok());
  EXPECT_EQ(passing_nodes(InterPodAffinity(), pod, s).size(), 5u);
}

}  // namespace
}  // namespace hamisim::planner::framework
