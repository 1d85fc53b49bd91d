// FilterPipeline: kube-scheduler's default Filter order and CA's use of it
// (ca-scale-up.md §3.5 RunFiltersUntilPassingNode, §3.6 RunFiltersOnNode, §4.4 step 7.1
// CheckPredicates on a forked snapshot with the template node).

#include "planner/framework/pipeline.h"

#include <gtest/gtest.h>

#include "dra/decode.h"
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

std::vector<std::string_view> plugin_names(const FilterPipeline& p) {
  std::vector<std::string_view> out;
  for (const auto& pl : p.plugins()) out.push_back(pl->name());
  return out;
}

// The default plugin order is kube-scheduler's default Filter order.
TEST(FilterPipeline, DefaultOrderIsKubeSchedulers) {
  EXPECT_EQ(plugin_names(FilterPipeline::make_default()),
            (std::vector<std::string_view>{
                "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity", "DynamicResources"}));
}

// Filtering stops at the first failing plugin per node, and keeps its status.
TEST(FilterPipeline, StopsAtFirstFailingPluginAndKeepsItsStatus) {
  ClusterSnapshot s;
  add_node(s,
           NodeBuilder("tainted").taint("k", "v", "NoSchedule").allocatable(res({{"pods", "0"}})));
  add_node(s, NodeBuilder("small").allocatable(res({{"cpu", "1"}, {"pods", "10"}})));
  add_node(s, NodeBuilder("ok"));
  auto pipeline = FilterPipeline::make_default();
  auto info = PodInfo::make(PodBuilder("p").container(res({{"cpu", "2"}})));
  FilterResult r = pipeline.find_passing_nodes(*info, s);
  ASSERT_TRUE(r.pre_filter.ok());
  ASSERT_EQ(r.passing.size(), 1u);
  EXPECT_EQ(r.passing[0]->name(), "ok");
  ASSERT_EQ(r.rejected.size(), 2u);
  EXPECT_EQ(r.rejected[0].node->name(), "tainted");
  EXPECT_EQ(r.rejected[0].status.plugin, "TaintToleration");  // not NodeResourcesFit
  EXPECT_EQ(r.rejected[0].status.reasons,
            (std::vector<std::string>{"node(s) had untolerated taint {k: v}"}));
  EXPECT_EQ(r.rejected[1].status.plugin, "NodeResourcesFit");
  EXPECT_EQ(r.rejected[1].status.code, FilterCode::kUnschedulableAndUnresolvable);
}

// A request's stop condition (issue #44) is asked node by node: once true, the walk over the
// nodes ends there, whichever search it is, and the steps done are counted.
TEST(FilterPipeline, TheSnapshotsStopConditionEndsTheWalkOverTheNodes) {
  ClusterSnapshot s;
  for (int i = 0; i < 100; ++i) {
    add_node(s,
             NodeBuilder("n" + std::to_string(i)).allocatable(res({{"cpu", "1"}, {"pods", "10"}})));
  }
  auto pipeline = FilterPipeline::make_default();
  auto big = PodInfo::make(PodBuilder("big").container(res({{"cpu", "2"}})));  // fits no node
  // Without a stop condition every node is checked, one step each.
  EXPECT_EQ(pipeline.find_first_passing_node(*big, s).rejected.size(), 100u);
  EXPECT_EQ(s.work_steps(), 100u);
  EXPECT_EQ(pipeline.find_passing_nodes(*big, s).rejected.size(), 100u);
  EXPECT_EQ(s.work_steps(), 200u);

  int asked = 0;
  s.set_stop([&asked] { return ++asked > 10; });
  PassingNodeSearch first = pipeline.find_first_passing_node(*big, s);
  EXPECT_EQ(first.node, nullptr);
  EXPECT_EQ(first.rejected.size(), 10u);
  EXPECT_TRUE(s.stop_requested());
  // Remembered: no further node is checked, and the condition is not asked again.
  const int asked_then = asked;
  EXPECT_TRUE(pipeline.find_passing_nodes(*big, s).rejected.empty());
  EXPECT_EQ(asked, asked_then);
}

// NodeResourcesFit args flow into the default pipeline (extender-managed resources).
TEST(FilterPipeline, DefaultPipelineHonoursFitArgs) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("n"));
  auto info = PodInfo::make(PodBuilder("p").container(res({{"nvidia.com/gpumem", "1000"}})));
  EXPECT_TRUE(FilterPipeline::make_default().find_passing_nodes(*info, s).passing.empty());
  auto pipeline = FilterPipeline::make_default({{"nvidia.com/gpumem"}, {}});
  EXPECT_EQ(pipeline.find_passing_nodes(*info, s).passing.size(), 1u);
}

// RunFiltersUntilPassingNode: walk from the start index, wrapping; skip cordoned and
// unacceptable nodes; the first passing node wins and earlier rejections are kept.
TEST(FilterPipeline, FirstPassingNodeWalksFromStartIndexAndWraps) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("n0"));
  add_node(s, NodeBuilder("n1").allocatable(res({{"cpu", "1"}, {"pods", "10"}})));
  add_node(s, NodeBuilder("n2").unschedulable());
  add_node(s, NodeBuilder("n3"));
  auto pipeline = FilterPipeline::make_default();
  auto info = PodInfo::make(PodBuilder("p").container(res({{"cpu", "2"}})));

  PassingNodeOptions opts;
  opts.start_index = 1;
  PassingNodeSearch r = pipeline.find_first_passing_node(*info, s, opts);
  ASSERT_NE(r.node, nullptr);
  EXPECT_EQ(r.node->name(), "n3");
  EXPECT_EQ(r.order_index, 2u);
  ASSERT_EQ(r.rejected.size(), 1u);  // n2 was skipped without filtering
  EXPECT_EQ(r.rejected[0].node->name(), "n1");

  opts.is_acceptable = [](const NodeInfo& n) { return n.name() != "n3"; };
  r = pipeline.find_first_passing_node(*info, s, opts);
  ASSERT_NE(r.node, nullptr);
  EXPECT_EQ(r.node->name(), "n0");  // wrapped around

  opts.is_acceptable = [](const NodeInfo& n) { return n.name() == "n1"; };
  r = pipeline.find_first_passing_node(*info, s, opts);
  EXPECT_EQ(r.node, nullptr);
  EXPECT_EQ(r.rejected.size(), 1u);
}

// CheckPredicates on a template: fork, add the template node, run on it, revert.
TEST(FilterPipeline, RunOnNodeAgainstForkedTemplate) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("full").allocatable(res({{"cpu", "1"}, {"pods", "10"}})));
  auto pipeline = FilterPipeline::make_default();
  auto info = PodInfo::make(PodBuilder("p").container(res({{"cpu", "2"}})));
  EXPECT_FALSE(pipeline.run_on_node(*info, s, "full").ok());
  EXPECT_EQ(pipeline.run_on_node(*info, s, "missing").code, FilterCode::kError);

  s.fork();
  add_node(s, NodeBuilder("template-ng1"));
  EXPECT_TRUE(pipeline.run_on_node(*info, s, "template-ng1").ok());
  ASSERT_TRUE(s.revert().ok());
  EXPECT_EQ(s.node("template-ng1"), nullptr);
}

// A PreFilter failure fails the pod everywhere and names the plugin.
TEST(FilterPipeline, PreFilterFailureRejectsEveryNode) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("n"));
  model::PodAffinityTerm bad = affinity_term({}, kHostname);
  bad.label_selector->match_expressions.push_back({"app", "Bogus", {}});
  auto info = PodInfo::make(PodBuilder("p").pod_anti_affinity(bad));
  auto pipeline = FilterPipeline::make_default();
  FilterResult r = pipeline.find_passing_nodes(*info, s);
  EXPECT_EQ(r.pre_filter.code, FilterCode::kError);
  EXPECT_EQ(r.pre_filter.plugin, "InterPodAffinity");
  EXPECT_TRUE(r.passing.empty());
  EXPECT_TRUE(r.rejected.empty());
  EXPECT_EQ(pipeline.run_on_node(*info, s, "n").plugin, "InterPodAffinity");
}

// CA's estimator loop in miniature: place pods with hostname anti-affinity, one per new
// template node, in a fork; revert leaves the cluster untouched.
TEST(FilterPipeline, EstimatorStyleBinpackingWithAntiAffinity) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("existing"));
  add_pod(s, PodBuilder("w0").label("app", "w"), "existing");
  auto pipeline = FilterPipeline::make_default();
  s.fork();
  int new_nodes = 0;
  for (int i = 1; i <= 3; ++i) {
    auto pod = PodInfo::make(PodBuilder("w" + std::to_string(i))
                                 .label("app", "w")
                                 .container(res({{"cpu", "1"}}))
                                 .pod_anti_affinity(affinity_term({{"app", "w"}}, kHostname)));
    PassingNodeSearch found = pipeline.find_first_passing_node(*pod, s);
    ASSERT_TRUE(found.pre_filter.ok());
    if (found.node == nullptr) {
      std::string name = "tmpl-e-" + std::to_string(new_nodes++);
      add_node(s, NodeBuilder(name));
      ASSERT_TRUE(pipeline.run_on_node(*pod, s, name).ok());
      ASSERT_TRUE(s.add_pod(pod, name).ok());
    } else {
      ASSERT_TRUE(s.add_pod(pod, found.node->name()).ok());
    }
  }
  EXPECT_EQ(new_nodes, 3);
  ASSERT_TRUE(s.revert().ok());
  EXPECT_EQ(s.node_count(), 1u);
  EXPECT_EQ(s.node("existing")->pod_count(), 1u);
}

// Results are deterministic: the same input gives the same order and statuses.
TEST(FilterPipeline, DeterministicResults) {
  auto build = [] {
    ClusterSnapshot s;
    for (int i = 0; i < 20; ++i) {
      EXPECT_TRUE(
          s.add_node(
               NodeBuilder("n" + std::to_string(19 - i)).allocatable("cpu", std::to_string(i % 4)))
              .ok());
    }
    return s;
  };
  ClusterSnapshot a = build();
  ClusterSnapshot b = build();
  auto pipeline = FilterPipeline::make_default();
  auto info = PodInfo::make(PodBuilder("p").container(res({{"cpu", "2"}})));
  FilterResult ra = pipeline.find_passing_nodes(*info, a);
  FilterResult rb = pipeline.find_passing_nodes(*info, b);
  ASSERT_EQ(ra.passing.size(), rb.passing.size());
  for (size_t i = 0; i < ra.passing.size(); ++i) {
    EXPECT_EQ(ra.passing[i]->name(), rb.passing[i]->name());
  }
  ASSERT_EQ(ra.rejected.size(), rb.rejected.size());
  for (size_t i = 0; i < ra.rejected.size(); ++i) {
    EXPECT_EQ(ra.rejected[i].node->name(), rb.rejected[i].node->name());
    EXPECT_EQ(ra.rejected[i].status.reasons, rb.rejected[i].status.reasons);
  }
}

// Issue #48: Reserve takes the allocation Filter made on the chosen node from the pod's filter
// state (kube-scheduler's CycleState) instead of running PreFilter and the allocator again. A
// node Filter never allocated on has nothing to reserve: an internal error, not a new search.
TEST(FilterPipeline, ReserveUsesTheAllocationFilterMadeOnTheChosenNode) {
  dra::Objects objects;
  for (const char* json : {
           R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu"},
               "spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.example.com'"}}]}})",
           R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"all"},
               "spec":{"driver":"gpu.example.com","allNodes":true,
                       "pool":{"name":"all","generation":1,"resourceSliceCount":1},
                       "devices":[{"name":"gpu-0"},{"name":"gpu-1"}]}})",
           R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
               "metadata":{"name":"c","namespace":"default"},
               "spec":{"devices":{"requests":[{"name":"r","exactly":{"deviceClassName":"gpu"}}]}}})"}) {
    ASSERT_TRUE(dra::decode_object(json, "test", objects).ok()) << json;
  }
  ClusterSnapshot s;
  s.set_dra(std::make_shared<const DraCluster>(std::move(objects)));
  add_node(s, NodeBuilder("n1").allocatable(res({{"pods", "10"}})));
  add_node(s, NodeBuilder("n2").allocatable(res({{"pods", "10"}})));
  auto pod = model::decode_pod_json(R"({"metadata":{"name":"p","namespace":"default"},
      "spec":{"containers":[{"name":"c"}],"resourceClaims":[{"name":"gpu","resourceClaimName":"c"}]}})");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  auto info = PodInfo::make(*pod);
  const FilterPipeline pipeline = FilterPipeline::make_default();

  PassingNodeSearch found = pipeline.find_first_passing_node(*info, s);
  ASSERT_NE(found.node, nullptr);
  ASSERT_EQ(found.node->name(), "n1");
  ASSERT_TRUE(found.state);
  auto elsewhere = pipeline.reserve(*info, *found.state, *s.node("n2"));
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.error().message,
            "reserve on node \"n2\": Filter allocated nothing there for this pod");
  auto reserved = pipeline.reserve(*info, *found.state, *found.node);
  ASSERT_TRUE(reserved.ok()) << reserved.error().message;
  ASSERT_TRUE(*reserved);
  const auto& allocations = (*reserved)->claim_allocations();
  ASSERT_EQ(allocations.size(), 1u);
  EXPECT_EQ(allocations[0].claim, "default/c");
  ASSERT_EQ(allocations[0].allocation.results.size(), 1u);
  EXPECT_EQ(allocations[0].allocation.results[0].device, "gpu-0");

  // Without the pod's claims, nothing is reserved and the pod is stored as it is.
  auto plain = PodInfo::make(PodBuilder("plain").build());
  PassingNodeSearch plain_found = pipeline.find_first_passing_node(*plain, s);
  ASSERT_TRUE(plain_found.state);
  auto unchanged = pipeline.reserve(*plain, *plain_found.state, *plain_found.node);
  ASSERT_TRUE(unchanged.ok());
  EXPECT_FALSE(*unchanged);
}

}  // namespace
}  // namespace hamisim::planner::framework
