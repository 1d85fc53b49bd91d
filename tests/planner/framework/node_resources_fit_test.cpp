// NodeResourcesFit Filter.
// Reference: kubernetes.io/docs/concepts/configuration/manage-resources-containers/
// ("How Pods with resource requests are scheduled"), the effective-request page, and
// ca-scale-up.md §2.5 (ignoredResources / ignoredResourceGroups apply to extended resources).

#include "planner/framework/plugins/node_resources_fit.h"

#include <gtest/gtest.h>

#include "framework_test_support.h"

namespace hamisim::planner::framework {
namespace {

using testing::add_node;
using testing::add_pod;
using testing::NodeBuilder;
using testing::PodBuilder;
using testing::res;
using testing::run_plugin;
using Reasons = std::vector<std::string>;

ClusterSnapshot one_node(model::Node node) {
  ClusterSnapshot s;
  EXPECT_TRUE(s.add_node(std::move(node)).ok());
  return s;
}

// Fits when request <= allocatable - already requested; "Insufficient cpu" otherwise.
TEST(NodeResourcesFit, InsufficientCpuCountsExistingPods) {
  ClusterSnapshot s = one_node(NodeBuilder("n"));
  NodeResourcesFit fit;
  add_pod(s, PodBuilder("old").container(res({{"cpu", "3"}})), "n");
  EXPECT_TRUE(run_plugin(fit, PodBuilder("p").container(res({{"cpu", "1"}})), s, "n").ok());
  auto st = run_plugin(fit, PodBuilder("p").container(res({{"cpu", "1001m"}})), s, "n");
  EXPECT_EQ(st.code, FilterCode::kUnschedulable);
  EXPECT_EQ(st.plugin, "NodeResourcesFit");
  EXPECT_EQ(st.reasons, (Reasons{"Insufficient cpu"}));
}

// Every insufficient resource is reported, in a fixed order.
TEST(NodeResourcesFit, ReportsAllInsufficientResourcesInFixedOrder) {
  ClusterSnapshot s = one_node(
      NodeBuilder("n").allocatable("ephemeral-storage", "10Gi").allocatable("example.com/a", "1"));
  add_pod(s, PodBuilder("old").container(res({{"cpu", "4"}, {"memory", "8Gi"}})), "n");
  auto st = run_plugin(NodeResourcesFit(),
                       PodBuilder("p").container(res({{"example.com/b", "1"},
                                                      {"example.com/a", "2"},
                                                      {"ephemeral-storage", "11Gi"},
                                                      {"memory", "1"},
                                                      {"cpu", "1m"}})),
                       s, "n");
  EXPECT_EQ(st.reasons,
            (Reasons{"Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage",
                     "Insufficient example.com/a", "Insufficient example.com/b"}));
  // example.com/b (allocatable 0) and ephemeral-storage exceed allocatable outright.
  EXPECT_EQ(st.code, FilterCode::kUnschedulableAndUnresolvable);
}

// A request larger than the node's whole allocatable cannot be fixed by preemption:
// UnschedulableAndUnresolvable; one that only collides with existing pods is Unschedulable.
TEST(NodeResourcesFit, RequestAboveAllocatableIsUnresolvable) {
  ClusterSnapshot s = one_node(NodeBuilder("n"));
  auto st =
      run_plugin(NodeResourcesFit(), PodBuilder("p").container(res({{"memory", "9Gi"}})), s, "n");
  EXPECT_EQ(st.code, FilterCode::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.reasons, (Reasons{"Insufficient memory"}));
}

// The pod counts 1 against allocatable "pods": "Too many pods" (Unschedulable), even for a
// pod that requests nothing. A node without "pods" allocatable takes no pod.
TEST(NodeResourcesFit, PodCountLimit) {
  ClusterSnapshot s = one_node(NodeBuilder("n").allocatable("pods", "2"));
  add_node(s, NodeBuilder("nopods").allocatable(res({{"cpu", "4"}})));
  NodeResourcesFit fit;
  add_pod(s, PodBuilder("a"), "n");
  EXPECT_TRUE(run_plugin(fit, PodBuilder("p"), s, "n").ok());
  add_pod(s, PodBuilder("b"), "n");
  auto st = run_plugin(fit, PodBuilder("p"), s, "n");
  EXPECT_EQ(st.code, FilterCode::kUnschedulable);
  EXPECT_EQ(st.reasons, (Reasons{"Too many pods"}));
  EXPECT_EQ(run_plugin(fit, PodBuilder("p"), s, "nopods").reasons, (Reasons{"Too many pods"}));
}

// Zero requests always fit resources (only the pod count applies); a zero extended request
// is not checked.
TEST(NodeResourcesFit, ZeroRequestsFit) {
  ClusterSnapshot s = one_node(NodeBuilder("n").allocatable(res({{"pods", "1"}})));
  NodeResourcesFit fit;
  EXPECT_TRUE(run_plugin(fit, PodBuilder("p").container({}), s, "n").ok());
  EXPECT_TRUE(run_plugin(fit,
                         PodBuilder("p").container(res({{"cpu", "0"}, {"nvidia.com/gpu", "0"}})), s,
                         "n")
                  .ok());
}

// Huge requests are compared without overflow.
TEST(NodeResourcesFit, HugeQuantities) {
  ClusterSnapshot s = one_node(NodeBuilder("n").allocatable("cpu", "9P"));
  NodeResourcesFit fit;
  EXPECT_TRUE(run_plugin(fit, PodBuilder("p").container(res({{"cpu", "9P"}})), s, "n").ok());
  add_pod(s, PodBuilder("big").container(res({{"cpu", "9P"}})), "n");
  add_pod(s, PodBuilder("big2").container(res({{"cpu", "9P"}})), "n");  // saturates
  auto st = run_plugin(fit, PodBuilder("p").container(res({{"cpu", "1m"}})), s, "n");
  EXPECT_EQ(st.reasons, (Reasons{"Insufficient cpu"}));
}

// Init containers: the effective request is the max of init containers and the app sum.
TEST(NodeResourcesFit, InitContainerMaxDecides) {
  ClusterSnapshot s = one_node(NodeBuilder("n"));
  auto st = run_plugin(
      NodeResourcesFit(),
      PodBuilder("p").init_container(res({{"cpu", "5"}})).container(res({{"cpu", "1"}})), s, "n");
  EXPECT_EQ(st.reasons, (Reasons{"Insufficient cpu"}));
}

// Sidecars add to both phases: 2 (sidecar) + 2.5 (app) = 4.5 cpu does not fit 4.
TEST(NodeResourcesFit, SidecarsCountForTheWholePodLife) {
  ClusterSnapshot s = one_node(NodeBuilder("n"));
  model::Pod pod = PodBuilder("p")
                       .init_container(res({{"cpu", "2"}}), /*sidecar=*/true)
                       .container(res({{"cpu", "2500m"}}));
  EXPECT_EQ(run_plugin(NodeResourcesFit(), pod, s, "n").reasons, (Reasons{"Insufficient cpu"}));
  // The same as a regular init container fits: max(2, 2.5) = 2.5.
  model::Pod plain =
      PodBuilder("p").init_container(res({{"cpu", "2"}})).container(res({{"cpu", "2500m"}}));
  EXPECT_TRUE(run_plugin(NodeResourcesFit(), plain, s, "n").ok());
}

// Pod overhead is part of the request, and of the node's requested total once placed.
TEST(NodeResourcesFit, OverheadCounts) {
  ClusterSnapshot s = one_node(NodeBuilder("n"));
  model::Pod pod =
      PodBuilder("p").container(res({{"memory", "7Gi"}})).overhead(res({{"memory", "1025Mi"}}));
  EXPECT_EQ(run_plugin(NodeResourcesFit(), pod, s, "n").reasons, (Reasons{"Insufficient memory"}));
  add_pod(s, PodBuilder("o").container(res({{"cpu", "1"}})).overhead(res({{"cpu", "3"}})), "n");
  EXPECT_EQ(run_plugin(NodeResourcesFit(), PodBuilder("q").container(res({{"cpu", "1m"}})), s, "n")
                .reasons,
            (Reasons{"Insufficient cpu"}));
}

// Extended resources and hugepages are checked against allocatable.
TEST(NodeResourcesFit, ExtendedResourcesAndHugepages) {
  ClusterSnapshot s = one_node(
      NodeBuilder("n").allocatable("nvidia.com/gpu", "2").allocatable("hugepages-2Mi", "1Gi"));
  NodeResourcesFit fit;
  EXPECT_TRUE(
      run_plugin(
          fit, PodBuilder("p").container(res({{"nvidia.com/gpu", "2"}, {"hugepages-2Mi", "1Gi"}})),
          s, "n")
          .ok());
  auto st = run_plugin(
      fit, PodBuilder("p").container(res({{"nvidia.com/gpu", "3"}, {"hugepages-2Mi", "2Gi"}})), s,
      "n");
  EXPECT_EQ(st.reasons, (Reasons{"Insufficient hugepages-2Mi", "Insufficient nvidia.com/gpu"}));
}

// ignoredResources skips exact extended resource names.
TEST(NodeResourcesFit, IgnoredResources) {
  ClusterSnapshot s = one_node(NodeBuilder("n"));
  NodeResourcesFit fit({{"nvidia.com/gpumem", "nvidia.com/gpucores"}, {}});
  model::Pod pod = PodBuilder("p").container(
      res({{"nvidia.com/gpumem", "4000"}, {"nvidia.com/gpucores", "30"}, {"nvidia.com/gpu", "1"}}));
  EXPECT_EQ(run_plugin(fit, pod, s, "n").reasons, (Reasons{"Insufficient nvidia.com/gpu"}));
}

// ignoredResourceGroups skips every extended resource whose domain (before '/') is listed.
TEST(NodeResourcesFit, IgnoredResourceGroups) {
  ClusterSnapshot s = one_node(NodeBuilder("n"));
  NodeResourcesFit fit({{}, {"hami.io", "nvidia.com"}});
  model::Pod pod = PodBuilder("p").container(
      res({{"hami.io/vgpu", "1"}, {"nvidia.com/gpu", "1"}, {"example.com/x", "1"}}));
  EXPECT_EQ(run_plugin(fit, pod, s, "n").reasons, (Reasons{"Insufficient example.com/x"}));
}

// The ignore lists never apply to non-extended resources: cpu, memory, hugepages and
// kubernetes.io/ names stay checked even if listed.
TEST(NodeResourcesFit, IgnoreListsDoNotApplyToNativeResources) {
  ClusterSnapshot s = one_node(NodeBuilder("n").allocatable(res({{"pods", "0"}})));
  NodeResourcesFit fit({{"cpu", "hugepages-2Mi", "kubernetes.io/foo", "pods"}, {"kubernetes.io"}});
  model::Pod pod = PodBuilder("p").container(
      res({{"cpu", "1"}, {"hugepages-2Mi", "2Mi"}, {"kubernetes.io/foo", "1"}}));
  EXPECT_EQ(run_plugin(fit, pod, s, "n").reasons,
            (Reasons{"Too many pods", "Insufficient cpu", "Insufficient hugepages-2Mi",
                     "Insufficient kubernetes.io/foo"}));
}

// The structured answer keeps the numbers, for explanations.
TEST(NodeResourcesFit, InsufficientResourceDetails) {
  ClusterSnapshot s = one_node(NodeBuilder("n"));
  add_pod(s, PodBuilder("old").container(res({{"cpu", "3500m"}})), "n");
  NodeResourcesFit fit;
  Resource want;
  want.milli_cpu = 1000;
  auto missing = fit.insufficient_resources(want, *s.node("n"));
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].resource, "cpu");
  EXPECT_EQ(missing[0].requested, 1000);
  EXPECT_EQ(missing[0].used, 3500);
  EXPECT_EQ(missing[0].capacity, 4000);
  EXPECT_FALSE(missing[0].unresolvable);
}

}  // namespace
}  // namespace hamisim::planner::framework
