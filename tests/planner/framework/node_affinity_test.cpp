// NodeAffinity Filter.
// Reference: kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
// (nodeSelector; "If you specify both nodeSelector and nodeAffinity, both must be satisfied";
// "multiple terms in nodeSelectorTerms ... if one of the specified terms can be satisfied";
// "multiple expressions in a single matchExpressions ... only if all the expressions are
// satisfied"; operators In, NotIn, Exists, DoesNotExist, Gt, Lt).

#include "planner/framework/plugins/node_affinity.h"

#include <gtest/gtest.h>

#include "framework_test_support.h"

namespace hamisim::planner::framework {
namespace {

using testing::add_node;
using testing::expr;
using testing::Names;
using testing::NodeBuilder;
using testing::passing_nodes;
using testing::PodBuilder;
using testing::run_plugin;

ClusterSnapshot labelled_cluster() {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("ssd-a").label("disk", "ssd").zone("a").label("gen", "5"));
  add_node(s, NodeBuilder("hdd-a").label("disk", "hdd").zone("a").label("gen", "3"));
  add_node(s, NodeBuilder("ssd-b").label("disk", "ssd").zone("b").label("gen", "x"));
  add_node(s, NodeBuilder("bare").no_labels());
  return s;
}

// spec.nodeSelector: every key must be present with that exact value.
TEST(NodeAffinity, NodeSelectorRequiresAllLabels) {
  ClusterSnapshot s = labelled_cluster();
  NodeAffinity plugin;
  EXPECT_EQ(passing_nodes(plugin, PodBuilder("p").node_selector("disk", "ssd"), s),
            (Names{"ssd-a", "ssd-b"}));
  EXPECT_EQ(passing_nodes(
                plugin,
                PodBuilder("p").node_selector("disk", "ssd").node_selector(testing::kZone, "b"), s),
            (Names{"ssd-b"}));
  auto st = run_plugin(plugin, PodBuilder("p").node_selector("disk", "ssd"), s, "bare");
  EXPECT_EQ(st.code, FilterCode::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.reasons,
            (std::vector<std::string>{"node(s) didn't match Pod's node affinity/selector"}));
}

// A pod without selector or required affinity is not checked (PreFilter skips).
TEST(NodeAffinity, NoConstraintsPassesEverywhere) {
  ClusterSnapshot s = labelled_cluster();
  EXPECT_EQ(passing_nodes(NodeAffinity(), PodBuilder("p"), s).size(), 4u);
}

// nodeSelector AND required terms; terms ORed; expressions in a term ANDed.
TEST(NodeAffinity, SelectorAndTermsCombine) {
  ClusterSnapshot s = labelled_cluster();
  model::Pod pod =
      PodBuilder("p")
          .node_selector(testing::kZone, "a")
          .required_node_term({{expr("disk", "In", {"ssd"}), expr("gen", "Exists")}, {}})
          .required_node_term({{expr("disk", "In", {"hdd"})}, {}});
  EXPECT_EQ(passing_nodes(NodeAffinity(), pod, s), (Names{"ssd-a", "hdd-a"}));
}

// NotIn and DoesNotExist match nodes lacking the label.
TEST(NodeAffinity, NotInAndDoesNotExistMatchMissingLabels) {
  ClusterSnapshot s = labelled_cluster();
  EXPECT_EQ(
      passing_nodes(NodeAffinity(),
                    PodBuilder("p").required_node_term({{expr("disk", "NotIn", {"ssd"})}, {}}), s),
      (Names{"hdd-a", "bare"}));
  EXPECT_EQ(
      passing_nodes(NodeAffinity(),
                    PodBuilder("p").required_node_term({{expr("disk", "DoesNotExist")}, {}}), s),
      (Names{"bare"}));
}

// Gt/Lt compare integers; a node label that is not an integer ("x") does not match.
TEST(NodeAffinity, GtLtCompareIntegersOnly) {
  ClusterSnapshot s = labelled_cluster();
  EXPECT_EQ(passing_nodes(NodeAffinity(),
                          PodBuilder("p").required_node_term({{expr("gen", "Gt", {"4"})}, {}}), s),
            (Names{"ssd-a"}));
  EXPECT_EQ(passing_nodes(NodeAffinity(),
                          PodBuilder("p").required_node_term({{expr("gen", "Lt", {"4"})}, {}}), s),
            (Names{"hdd-a"}));
}

// Gt with a non-integer value is an invalid term: it matches no node, while another valid
// term still can.
TEST(NodeAffinity, GtWithNonIntegerValueMatchesNothing) {
  ClusterSnapshot s = labelled_cluster();
  model::Pod bad = PodBuilder("p").required_node_term({{expr("gen", "Gt", {"4.5"})}, {}});
  EXPECT_TRUE(passing_nodes(NodeAffinity(), bad, s).empty());
  model::Pod mixed = PodBuilder("p")
                         .required_node_term({{expr("gen", "Gt", {"4.5"})}, {}})
                         .required_node_term({{expr("disk", "In", {"hdd"})}, {}});
  EXPECT_EQ(passing_nodes(NodeAffinity(), mixed, s), (Names{"hdd-a"}));
}

// An empty term matches nothing; an affinity with no terms at all matches nothing.
TEST(NodeAffinity, EmptyTermsMatchNothing) {
  ClusterSnapshot s = labelled_cluster();
  EXPECT_TRUE(passing_nodes(NodeAffinity(), PodBuilder("p").required_node_term({}), s).empty());
  model::Pod no_terms = PodBuilder("p");
  no_terms.spec.affinity.emplace();
  no_terms.spec.affinity->node_affinity.emplace();
  no_terms.spec.affinity->node_affinity->required.emplace();
  EXPECT_TRUE(passing_nodes(NodeAffinity(), no_terms, s).empty());
}

// matchFields on metadata.name, ANDed with matchExpressions in the same term.
TEST(NodeAffinity, MatchFieldsMetadataName) {
  ClusterSnapshot s = labelled_cluster();
  model::Pod pod = PodBuilder("p").required_node_term(
      {{expr("disk", "In", {"ssd"})}, {expr("metadata.name", "In", {"ssd-b"})}});
  EXPECT_EQ(passing_nodes(NodeAffinity(), pod, s), (Names{"ssd-b"}));
  model::Pod not_in =
      PodBuilder("p").required_node_term({{}, {expr("metadata.name", "NotIn", {"ssd-b"})}});
  EXPECT_EQ(passing_nodes(NodeAffinity(), not_in, s), (Names{"ssd-a", "hdd-a", "bare"}));
}

// Terms that pin metadata.name to disjoint names fail PreFilter ("pod affinity terms
// conflict"), rejecting the pod on every node.
TEST(NodeAffinity, ConflictingNodeNameTermsFailPreFilter) {
  ClusterSnapshot s = labelled_cluster();
  model::Pod pod = PodBuilder("p").required_node_term(
      {{}, {expr("metadata.name", "In", {"ssd-a"}), expr("metadata.name", "In", {"ssd-b"})}});
  auto st = run_plugin(NodeAffinity(), pod, s, "ssd-a");
  EXPECT_EQ(st.code, FilterCode::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.reasons, (std::vector<std::string>{"pod affinity terms conflict"}));
}

}  // namespace
}  // namespace hamisim::planner::framework
