// NodeUnschedulable, NodeName and TaintToleration Filters.
// Reference: kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/,
// kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename, and
// kubernetes.io/docs/reference/labels-annotations-taints/#node-kubernetes-io-unschedulable.

#include <gtest/gtest.h>

#include "framework_test_support.h"
#include "planner/framework/plugins/node_name.h"
#include "planner/framework/plugins/node_unschedulable.h"
#include "planner/framework/plugins/taint_toleration.h"
#include "planner/framework/taints.h"

namespace hamisim::planner::framework {
namespace {

using testing::add_node;
using testing::NodeBuilder;
using testing::PodBuilder;
using testing::run_plugin;
using Reasons = std::vector<std::string>;

// A cordoned node rejects pods (UnschedulableAndUnresolvable, "node(s) were unschedulable").
TEST(NodeUnschedulable, CordonedNodeRejectsPods) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("cordoned").unschedulable());
  add_node(s, NodeBuilder("open"));
  NodeUnschedulable plugin;
  auto st = run_plugin(plugin, PodBuilder("p"), s, "cordoned");
  EXPECT_EQ(st.code, FilterCode::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.reasons, (Reasons{"node(s) were unschedulable"}));
  EXPECT_TRUE(run_plugin(plugin, PodBuilder("p"), s, "open").ok());
}

// A pod tolerating node.kubernetes.io/unschedulable:NoSchedule (e.g. a DaemonSet pod) may
// land on a cordoned node; so may one that tolerates everything (empty key + Exists).
TEST(NodeUnschedulable, UnschedulableTolerationIsTheException) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("cordoned").unschedulable());
  NodeUnschedulable plugin;
  EXPECT_TRUE(run_plugin(plugin,
                         PodBuilder("ds").toleration("node.kubernetes.io/unschedulable", "Exists",
                                                     "", "NoSchedule"),
                         s, "cordoned")
                  .ok());
  EXPECT_TRUE(
      run_plugin(plugin, PodBuilder("all").toleration("", "Exists", "", ""), s, "cordoned").ok());
  EXPECT_FALSE(
      run_plugin(plugin,
                 PodBuilder("wrong-effect")
                     .toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoExecute"),
                 s, "cordoned")
          .ok());
}

// spec.nodeName pins the pod to that node only; empty nodeName fits every node.
TEST(NodeName, RequestedNodeNameMustMatch) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("a"));
  add_node(s, NodeBuilder("b"));
  NodeName plugin;
  EXPECT_EQ(testing::passing_nodes(plugin, PodBuilder("p").node_name("b"), s),
            (testing::Names{"b"}));
  EXPECT_EQ(testing::passing_nodes(plugin, PodBuilder("p"), s), (testing::Names{"a", "b"}));
  auto st = run_plugin(plugin, PodBuilder("p").node_name("b"), s, "a");
  EXPECT_EQ(st.code, FilterCode::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.reasons, (Reasons{"node(s) didn't match the requested node name"}));
}

// NoSchedule and NoExecute taints must be tolerated; the reason names the first untolerated
// taint as "{key: value}".
TEST(TaintToleration, UntoleratedNoScheduleAndNoExecuteReject) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("n").taint("gpu", "true", "NoSchedule").taint("maint", "", "NoExecute"));
  TaintToleration plugin;
  auto st = run_plugin(plugin, PodBuilder("p"), s, "n");
  EXPECT_EQ(st.code, FilterCode::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.reasons, (Reasons{"node(s) had untolerated taint {gpu: true}"}));
  st = run_plugin(plugin, PodBuilder("p").toleration("gpu", "Equal", "true", "NoSchedule"), s, "n");
  EXPECT_EQ(st.reasons, (Reasons{"node(s) had untolerated taint {maint: }"}));
  EXPECT_TRUE(run_plugin(plugin,
                         PodBuilder("p")
                             .toleration("gpu", "Equal", "true", "NoSchedule")
                             .toleration("maint", "Exists", "", "NoExecute"),
                         s, "n")
                  .ok());
}

// PreferNoSchedule taints only affect scoring.
TEST(TaintToleration, PreferNoScheduleIsIgnored) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("n").taint("soft", "x", "PreferNoSchedule"));
  EXPECT_TRUE(run_plugin(TaintToleration(), PodBuilder("p"), s, "n").ok());
}

// Toleration matching: empty key + Exists tolerates every taint; empty effect matches every
// effect; empty operator means Equal; Equal compares values; key must match when given.
TEST(TaintToleration, TolerationMatchingRules) {
  model::Taint t{"k", "v", "NoSchedule"};
  EXPECT_TRUE(tolerates({"", "Exists", "", "", std::nullopt}, t));
  EXPECT_TRUE(tolerates({"", "Exists", "", "NoSchedule", std::nullopt}, t));
  EXPECT_FALSE(tolerates({"", "Exists", "", "NoExecute", std::nullopt}, t));
  EXPECT_TRUE(tolerates({"k", "", "v", "", std::nullopt}, t));
  EXPECT_FALSE(tolerates({"k", "", "w", "", std::nullopt}, t));
  EXPECT_FALSE(tolerates({"k", "Equal", "", "", std::nullopt}, t));
  EXPECT_TRUE(tolerates({"k", "Exists", "", "", std::nullopt}, t));
  EXPECT_FALSE(tolerates({"other", "Exists", "", "", std::nullopt}, t));
  EXPECT_FALSE(tolerates({"k", "Gt", "v", "", std::nullopt}, t));
  // Exists ignores the toleration's value.
  EXPECT_TRUE(tolerates({"k", "Exists", "ignored", "", std::nullopt}, t));
}

}  // namespace
}  // namespace hamisim::planner::framework
