// CA's BinpackingNodeEstimator (ca-scale-up.md §4.5) and its limits (§4.5.1).

#include "planner/estimator/binpacking.h"

#include <gtest/gtest.h>

#include <thread>

#include "framework_test_support.h"

namespace hamisim::planner::estimator {
namespace {

using framework::ClusterSnapshot;
using framework::FilterPipeline;
using framework::PodInfo;
using framework::testing::NodeBuilder;
using framework::testing::PodBuilder;
using framework::testing::res;
using namespace std::chrono_literals;

class FakeClock : public Clock {
 public:
  std::chrono::nanoseconds now() const override { return t; }
  std::chrono::nanoseconds t{0};
};

// A fitter that advances the fake clock on every question, so time passes during binpacking.
class TickingFitter : public PodFitter {
 public:
  TickingFitter(PodFitter& inner, FakeClock& clock, std::chrono::nanoseconds tick)
      : inner_(inner), clock_(clock), tick_(tick) {}
  FitResult fit_any(const PodInfo& p, const ClusterSnapshot& s,
                    const std::function<bool(const framework::NodeInfo&)>& a) override {
    clock_.t += tick_;
    return inner_.fit_any(p, s, a);
  }
  FitResult fit_on(const PodInfo& p, const ClusterSnapshot& s, std::string_view n) override {
    clock_.t += tick_;
    return inner_.fit_on(p, s, n);
  }

 private:
  PodFitter& inner_;
  FakeClock& clock_;
  std::chrono::nanoseconds tick_;
};

PodGroup group(const std::string& prefix, int n, model::ResourceList requests) {
  PodGroup g;
  for (int i = 0; i < n; ++i) {
    g.pods.push_back(PodInfo::make(PodBuilder(prefix + std::to_string(i)).container(requests)));
  }
  return g;
}

EstimateInput input(std::vector<PodGroup> groups, model::Node tmpl, int64_t max_size = 100) {
  EstimateInput in;
  in.groups = std::move(groups);
  in.template_node = std::move(tmpl);
  in.group = {"ng1", 0, max_size};
  return in;
}

struct Fixture {
  FilterPipeline pipeline = FilterPipeline::make_default();
  PipelineFitter fitter{pipeline};
  FakeClock clock;
  ClusterSnapshot snapshot;
};

// §4.5 step 2: score = cpu/allocCpu + mem/allocMem of the exemplar, descending; ties keep
// input order (our sort is stable).
TEST(BinpackingEstimator, DecreasingPodOrdererSortsByCpuPlusMemoryShare) {
  model::Node tmpl = NodeBuilder("t").allocatable(res({{"cpu", "4"}, {"memory", "8Gi"}}));
  std::vector<PodGroup> groups = {group("small", 1, res({{"cpu", "1"}})),
                                  group("mem", 1, res({{"memory", "6Gi"}})),
                                  group("both", 1, res({{"cpu", "2"}, {"memory", "2Gi"}})),
                                  group("tie", 1, res({{"cpu", "1"}}))};
  EXPECT_DOUBLE_EQ(decreasing_order_score(groups[2].pods[0]->pod(), tmpl), 0.75);
  EXPECT_EQ(decreasing_pod_order(groups, tmpl), (std::vector<size_t>{1, 2, 0, 3}));
}

// §4.5: a term is skipped when the template's allocatable of that resource is 0.
TEST(BinpackingEstimator, OrdererIgnoresResourcesWithZeroAllocatable) {
  model::Node tmpl = NodeBuilder("t").allocatable(res({{"cpu", "2"}}));
  auto p = PodBuilder("p").container(res({{"cpu", "1"}, {"memory", "1Gi"}})).build();
  EXPECT_DOUBLE_EQ(decreasing_order_score(p, tmpl), 0.5);
}

// §4.5 tryToScheduleOnNewNodes: pods fill the last copy, then a new copy is added.
TEST(BinpackingEstimator, PacksPodsIntoTemplateCopiesWithCaNames) {
  Fixture f;
  BinpackingEstimator est(f.fitter, f.clock);
  auto in = input({group("p", 5, res({{"cpu", "1"}}))}, NodeBuilder("t"));
  in.template_index = 7;
  Estimate e = est.estimate(f.snapshot, in);
  ASSERT_FALSE(e.internal_error);
  EXPECT_EQ(e.node_count, 2);  // 4 cpu per node
  EXPECT_EQ(e.nodes_with_pods, (std::vector<std::string>{"template-node-for-ng1-7-e-0",
                                                         "template-node-for-ng1-7-e-1"}));
  ASSERT_EQ(e.placements.size(), 5u);
  EXPECT_EQ(e.placements[4].node, "template-node-for-ng1-7-e-1");
  EXPECT_TRUE(e.unplaced.empty());
  EXPECT_EQ(f.snapshot.node_count(), 0u);  // reverted
}

// §4.5 step 5.1: a later group first fills the copies already added (CA's walk order)
// before a new copy is added.
TEST(BinpackingEstimator, PlacesOnExistingTemplateCopiesFirst) {
  Fixture f;
  BinpackingEstimator est(f.fitter, f.clock);
  // big: 3 cpu each -> 2 copies with 1 cpu free each; small (1 cpu) go to those copies.
  auto in = input({group("small", 2, res({{"cpu", "1"}})), group("big", 2, res({{"cpu", "3"}}))},
                  NodeBuilder("t"));
  Estimate e = est.estimate(f.snapshot, in);
  EXPECT_EQ(e.node_count, 2);
  ASSERT_EQ(e.placements.size(), 4u);
  EXPECT_EQ(e.placements[0].pod, "default/big0");
  EXPECT_EQ(e.placements[2].pod, "default/small0");
  // The walk starts after the last match (e-1), wraps to e-0, then continues to e-1.
  EXPECT_EQ(e.placements[2].node, "template-node-for-ng1-0-e-0");
  EXPECT_EQ(e.placements[3].node, "template-node-for-ng1-0-e-1");
}

// §4.5: device-like scalar resources: 25 pods x 1 slice on 10-slice templates -> 3 nodes.
TEST(BinpackingEstimator, ScalarResourceSlicesPackIntoCeilNodes) {
  Fixture f;
  BinpackingEstimator est(f.fitter, f.clock);
  auto in = input({group("p", 25, res({{"example.com/slice", "1"}}))},
                  NodeBuilder("t").allocatable("example.com/slice", "10"));
  Estimate e = est.estimate(f.snapshot, in);
  EXPECT_EQ(e.node_count, 3);
  EXPECT_EQ(e.placements.size(), 25u);
}

// §4.5 tryToScheduleOnNewNodes 2.1 / 2.4: a pod that does not fit an empty copy stops the
// group; the empty copy is not counted and its pods are reported unplaced.
TEST(BinpackingEstimator, EmptyNodeStopRule) {
  Fixture f;
  BinpackingEstimator est(f.fitter, f.clock);
  auto in = input({group("huge", 3, res({{"cpu", "8"}})), group("ok", 1, res({{"cpu", "1"}}))},
                  NodeBuilder("t"));
  Estimate e = est.estimate(f.snapshot, in);
  EXPECT_EQ(e.node_count, 1);  // only "ok"; the copy tried for "huge" reused by "ok"
  ASSERT_EQ(e.placements.size(), 1u);
  EXPECT_EQ(e.placements[0].node, "template-node-for-ng1-0-e-0");
  ASSERT_EQ(e.unplaced.size(), 3u);
  EXPECT_NE(e.unplaced[0].reason.find("NodeResourcesFit"), std::string::npos);
}

// §4.5.1 StaticThreshold: --max-nodes-per-scaleup.
TEST(BinpackingEstimator, MaxNodesPerScaleupLimit) {
  Fixture f;
  BinpackingEstimator est(f.fitter, f.clock, {2, 10s});
  Estimate e =
      est.estimate(f.snapshot, input({group("p", 5, res({{"cpu", "3"}}))}, NodeBuilder("t")));
  EXPECT_EQ(e.node_count, 2);
  ASSERT_EQ(e.unplaced.size(), 3u);
  EXPECT_NE(e.unplaced[0].reason.find("node limit"), std::string::npos);
}

// §4.5.1 StaticThreshold: --max-nodegroup-binpacking-duration, checked only when adding a node.
TEST(BinpackingEstimator, NodeGroupBinpackingDurationCheckedOnlyWhenAddingNode) {
  Fixture f;
  TickingFitter ticking(f.fitter, f.clock, 4s);
  BinpackingEstimator est(ticking, f.clock, {1000, 10s});
  // 8 pods of 1 cpu: 4 per node. Pods keep landing on the first copy after the budget is
  // spent (no check), but the second copy is refused.
  Estimate e =
      est.estimate(f.snapshot, input({group("p", 8, res({{"cpu", "1"}}))}, NodeBuilder("t")));
  EXPECT_EQ(e.node_count, 1);
  EXPECT_EQ(e.placements.size(), 4u);
  ASSERT_EQ(e.unplaced.size(), 4u);
  EXPECT_EQ(e.unplaced[0].reason, "node group binpacking duration exceeded");
}

// A fitter that takes `delay` of wall time per question: a slow or busy machine.
class SlowFitter : public PodFitter {
 public:
  SlowFitter(PodFitter& inner, std::chrono::microseconds delay) : inner_(inner), delay_(delay) {}
  FitResult fit_any(const PodInfo& p, const ClusterSnapshot& s,
                    const std::function<bool(const framework::NodeInfo&)>& a) override {
    std::this_thread::sleep_for(delay_);
    return inner_.fit_any(p, s, a);
  }
  FitResult fit_on(const PodInfo& p, const ClusterSnapshot& s, std::string_view n) override {
    std::this_thread::sleep_for(delay_);
    return inner_.fit_on(p, s, n);
  }

 private:
  PodFitter& inner_;
  std::chrono::microseconds delay_;
};

// Issue #44: measured by the WorkClock, the binpacking duration is a budget of steps (nodes
// checked for pods): the estimate stops at the same node whatever the machine's speed.
TEST(BinpackingEstimator, AWorkClockBudgetGivesTheSameAnswerOnASlowMachine) {
  // 40 pods of 1 cpu, 4 per copy: each pod is checked against every copy before a new one
  // is added, so the steps grow with the square of the copies; 30 steps allow a few copies.
  auto run = [](std::chrono::microseconds delay) {
    Fixture f;
    SlowFitter slow(f.fitter, delay);
    WorkClock work(f.snapshot);
    BinpackingEstimator est(slow, work, {1000, WorkClock::kStepCost * 30});
    Estimate e =
        est.estimate(f.snapshot, input({group("p", 40, res({{"cpu", "1"}}))}, NodeBuilder("t")));
    return std::pair{e.node_count, f.snapshot.work_steps()};
  };
  const auto fast = run(std::chrono::microseconds(0));
  EXPECT_GT(fast.first, 1);
  EXPECT_LT(fast.first, 10) << fast.second << " steps";  // 10 copies would take all 40 pods
  const auto slow = run(std::chrono::microseconds(2000));
  EXPECT_EQ(slow, fast);
}

// §4.5.1 SngCapacityThreshold: node group max size (plus similar groups) bounds the count.
TEST(BinpackingEstimator, NodeGroupMaxSizeLimit) {
  Fixture f;
  BinpackingEstimator est(f.fitter, f.clock);
  auto in = input({group("p", 5, res({{"cpu", "3"}}))}, NodeBuilder("t"), 4);
  in.group.target_size = 3;
  in.context = EstimationContext{};
  EXPECT_EQ(est.estimate(f.snapshot, in).node_count, 1);
  in.context->similar_groups.push_back({"ng2", 0, 2});
  EXPECT_EQ(est.estimate(f.snapshot, in).node_count, 3);
  in.group.target_size = 4;
  in.context->similar_groups.clear();
  EXPECT_EQ(est.estimate(f.snapshot, in).node_count, 0);  // -1: no node at all
}

// §4.5.1 ClusterCapacityThreshold: --max-nodes-total minus the current node count.
TEST(BinpackingEstimator, MaxNodesTotalLimit) {
  Fixture f;
  BinpackingEstimator est(f.fitter, f.clock);
  auto in = input({group("p", 5, res({{"cpu", "3"}}))}, NodeBuilder("t"));
  in.context = EstimationContext{10, 8, {}};
  EXPECT_EQ(est.estimate(f.snapshot, in).node_count, 2);
  in.context = EstimationContext{8, 8, {}};
  EXPECT_EQ(est.estimate(f.snapshot, in).node_count, 0);
  in.context = EstimationContext{0, 8, {}};
  EXPECT_EQ(est.estimate(f.snapshot, in).node_count, 5);
}

// §4.5.1 getMinLimit.
TEST(BinpackingEstimator, LimitsCombineByGetMinLimit) {
  EXPECT_EQ(EstimationLimiter::min_limit(0, 5), 5);
  EXPECT_EQ(EstimationLimiter::min_limit(3, 0), 3);
  EXPECT_EQ(EstimationLimiter::min_limit(3, 5), 3);
  EXPECT_EQ(EstimationLimiter::min_limit(-1, 5), -1);
  EXPECT_EQ(EstimationLimiter::min_limit(3, -1), -1);
}

// §4.4 step 4 / §4.5.1 TimeLimiter: --max-binpacking-time across node groups.
TEST(BinpackingEstimator, MaxBinpackingTimeAcrossGroups) {
  FakeClock clock;
  BinpackingTimeLimiter limiter(clock, 5min);
  limiter.init_binpacking();
  clock.t = 5min;
  EXPECT_FALSE(limiter.stop_binpacking());
  clock.t = 5min + 1ns;
  EXPECT_TRUE(limiter.stop_binpacking());
}

// §4.5: template copies sit alongside real nodes; real nodes are never used by the estimate.
TEST(BinpackingEstimator, RealNodesAreNotUsed) {
  Fixture f;
  framework::testing::add_node(f.snapshot, NodeBuilder("real"));
  BinpackingEstimator est(f.fitter, f.clock);
  Estimate e =
      est.estimate(f.snapshot, input({group("p", 2, res({{"cpu", "1"}}))}, NodeBuilder("t")));
  EXPECT_EQ(e.node_count, 1);
  for (const auto& p : e.placements) EXPECT_NE(p.node, "real");
  EXPECT_EQ(f.snapshot.node_count(), 1u);
}

// §4.5 step 3 / tryFastPath: the group saving most nodes goes last; one copy is simulated
// and the rest of its pods are assigned by count to "<copy>-fake-<j>", which count as nodes.
TEST(BinpackingEstimator, FastPathAssignsRemainingPodsToFakeNodes) {
  Fixture f;
  BinpackingEstimator est(f.fitter, f.clock, {}, true);
  std::vector<PodGroup> groups = {group("a", 10, res({{"cpu", "1"}})),
                                  group("b", 2, res({{"cpu", "3"}}))};
  model::Node tmpl = NodeBuilder("t");
  EXPECT_EQ(best_group_for_fastpath(groups, decreasing_pod_order(groups, tmpl), tmpl),
            std::optional<size_t>(1));  // order is b, a; a saves 10 - 10/3 = 7
  Estimate e = est.estimate(f.snapshot, input(groups, tmpl));
  EXPECT_EQ(e.node_count, 4);
  EXPECT_EQ(e.nodes_with_pods.back(), "template-node-for-ng1-0-e-2-fake-1");
  EXPECT_EQ(e.placements.size(), 12u);

  BinpackingEstimator limited(f.fitter, f.clock, {3, 10s}, true);
  Estimate l = limited.estimate(f.snapshot, input(groups, tmpl));
  EXPECT_EQ(l.node_count, 3);  // the fake node is refused by the limit
  EXPECT_EQ(l.unplaced.size(), 4u);
}

// §4.5 step 3: groups with topology spread constraints are not eligible for the fast path.
TEST(BinpackingEstimator, FastPathSkipsGroupsWithTopologySpread) {
  PodGroup g;
  g.pods.push_back(PodInfo::make(PodBuilder("s")
                                     .container(res({{"cpu", "1"}}))
                                     .spread_constraint(framework::testing::spread(
                                         "kubernetes.io/hostname", 1, {{"app", "x"}}))));
  std::vector<PodGroup> groups = {g};
  model::Node tmpl = NodeBuilder("t");
  EXPECT_FALSE(best_group_for_fastpath(groups, {0}, tmpl));
}

// §4.5 step 5: an internal (snapshot) error aborts the estimation with CA's (0, nil).
TEST(BinpackingEstimator, InternalErrorAbortsWithNothing) {
  Fixture f;
  framework::testing::add_node(f.snapshot, NodeBuilder("template-node-for-ng1-0-e-1"));
  BinpackingEstimator est(f.fitter, f.clock);
  Estimate e =
      est.estimate(f.snapshot, input({group("p", 5, res({{"cpu", "3"}}))}, NodeBuilder("t")));
  ASSERT_TRUE(e.internal_error);
  EXPECT_EQ(e.node_count, 0);
  EXPECT_TRUE(e.placements.empty());
  EXPECT_EQ(f.snapshot.node_count(), 1u);
}

// A fitter that places each pod "annotated" (as the device stage does) and accepts a node
// only while fewer than two annotated pods sit on it: the estimator must place the pod the
// fitter handed back, so later fits see it.
class AnnotatingFitter : public PodFitter {
 public:
  explicit AnnotatingFitter(PodFitter& inner) : inner_(inner) {}
  FitResult fit_any(const PodInfo& p, const ClusterSnapshot& s,
                    const std::function<bool(const framework::NodeInfo&)>& a) override {
    return annotate(p, inner_.fit_any(p, s, [&](const framework::NodeInfo& n) {
      return (!a || a(n)) && annotated(n) < 2;
    }));
  }
  FitResult fit_on(const PodInfo& p, const ClusterSnapshot& s, std::string_view n) override {
    if (const auto* node = s.node(n); node != nullptr && annotated(*node) >= 2) {
      return FitResult::rejected(
          framework::FilterStatus::make(framework::FilterCode::kUnschedulable, "Dev", "full"));
    }
    return annotate(p, inner_.fit_on(p, s, n));
  }

 private:
  static size_t annotated(const framework::NodeInfo& n) {
    size_t k = 0;
    for (const auto& pod : n.pods()) k += pod->pod().metadata.annotations.count("dev");
    return k;
  }
  static FitResult annotate(const PodInfo& p, FitResult r) {
    if (!r.fits()) return r;
    model::Pod copy = p.pod();
    copy.metadata.annotations["dev"] = r.node;
    r.placed_as = PodInfo::make(std::move(copy));
    r.allocations = {{"dev", r.node}};
    return r;
  }
  PodFitter& inner_;
};

TEST(BinpackingEstimator, PlacesThePodTheFitterHandsBack) {
  Fixture f;
  AnnotatingFitter fitter(f.fitter);
  BinpackingEstimator est(fitter, f.clock);
  Estimate e =
      est.estimate(f.snapshot, input({group("p", 5, res({{"cpu", "100m"}}))}, NodeBuilder("t")));
  ASSERT_FALSE(e.internal_error);
  // Plenty of cpu: only the fitter's own two-per-node rule limits the packing.
  EXPECT_EQ(e.node_count, 3);
  ASSERT_EQ(e.placements.size(), 5u);
  EXPECT_EQ(e.placements[0].allocations->at("dev"), "template-node-for-ng1-0-e-0");
  EXPECT_EQ(e.placements[4].allocations->at("dev"), "template-node-for-ng1-0-e-2");
  // Equal allocations are one shared map: a large plan keeps every group's placements.
  EXPECT_EQ(e.placements[0].allocations, e.placements[1].allocations);
  EXPECT_NE(e.placements[1].allocations, e.placements[2].allocations);
}

}  // namespace
}  // namespace hamisim::planner::estimator
