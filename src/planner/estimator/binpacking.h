#pragma once
// CA's BinpackingNodeEstimator (ca-scale-up.md §4.5) and its limits (§4.5.1): how many copies
// of a node group's template the pending pods need, and which pod lands on which copy.
//
// Differences from CA that are deliberate and documented:
// - Pod groups are ordered with a *stable* sort (CA's sort is not stable), so equal scores
//   keep the caller's order and the result is deterministic.
// - Every pod the estimate could not place is reported with the reason (CA drops it).
// - The "does this pod fit" question goes through PodFitter, so device fit (HAMi) can be
//   layered on top of the framework filters.
// - Fast path (--fastpath-binpacking-enabled): when no group is eligible none is chosen;
//   among eligible groups the largest `saved` wins, ties to the later group, a group with
//   saved 0 included. A zero template capacity drops its cpu / memory term (CA would divide
//   by zero).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/objects.h"
#include "model/result.h"
#include "planner/framework/pipeline.h"
#include "planner/framework/snapshot.h"

namespace hamisim::planner::estimator {

// Injectable monotonic time, so no test depends on the real clock.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::nanoseconds now() const = 0;
};

class SteadyClock final : public Clock {
 public:
  std::chrono::nanoseconds now() const override;
};

// Time measured in work instead of on the wall: the steps done on a snapshot (a node checked
// for a pod, framework::ClusterSnapshot::step) at a nominal kStepCost each. CA's binpacking
// limits (--max-nodegroup-binpacking-duration, --max-binpacking-time) read the wall clock, so
// its answers change with the machine's load; through this clock the same limits become a
// budget of work, and the same input gives the same answer on any machine under any load
// (issue #44: one estimate gave 860 or 1,000 nodes by load). kStepCost is what one step cost
// on a quiet machine (docs/reliability.md), so the default budgets stop where CA's clock would
// there.
class WorkClock final : public Clock {
 public:
  static constexpr std::chrono::nanoseconds kStepCost{3000};
  explicit WorkClock(const framework::ClusterSnapshot& snapshot) : snapshot_(snapshot) {}
  std::chrono::nanoseconds now() const override {
    return kStepCost * static_cast<int64_t>(snapshot_.work_steps());
  }

 private:
  const framework::ClusterSnapshot& snapshot_;
};

// The answer of a PodFitter for one pod.
struct FitResult {
  enum class Kind { kFits, kRejected, kInternalError };
  Kind kind = Kind::kRejected;
  std::string node;                // kFits: the chosen node
  framework::FilterStatus status;  // kRejected: why (the last rejection seen)
  std::string internal_error;      // kInternalError: aborts the whole estimation, as CA does
  // kFits, optional: the pod as it is to be placed (e.g. carrying the device allocation
  // annotations the extender returned), so later fits on that node see its usage. Null:
  // the pod is placed as it is.
  framework::PodInfoPtr placed_as;
  std::map<std::string, std::string, std::less<>> allocations;  // kFits: annotations added
  // kFits: the pipeline's state of the pod's cycle (PreFilter's, and Filter's on the node
  // chosen), which Reserve uses (reserve_fit).
  std::shared_ptr<const framework::PodFilterState> filter_state;

  bool fits() const { return kind == Kind::kFits; }
  static FitResult fit(std::string node, std::shared_ptr<const framework::PodFilterState> state) {
    return {Kind::kFits, std::move(node), {}, {}, {}, {}, std::move(state)};
  }
  static FitResult rejected(framework::FilterStatus s) {
    return {Kind::kRejected, {}, std::move(s), {}, {}, {}, {}};
  }
};

// "Does this pod fit on this node": CA's SchedulePod / SchedulePodOnAnyNodeMatching minus the
// snapshot update, which the estimator does. Implementations may keep state across calls of
// one estimation (CA's last-match node ordering; HAMi device allocations via placed()).
class PodFitter {
 public:
  virtual ~PodFitter() = default;
  // The first acceptable node the pod fits on, in the fitter's walk order.
  virtual FitResult fit_any(const framework::PodInfo& pod, const framework::ClusterSnapshot& s,
                            const std::function<bool(const framework::NodeInfo&)>& acceptable) = 0;
  // Whether the pod fits on one named node.
  virtual FitResult fit_on(const framework::PodInfo& pod, const framework::ClusterSnapshot& s,
                           std::string_view node) = 0;
  // The estimator has added the pod to the node in the snapshot.
  virtual void placed(const framework::PodInfo& pod, const framework::NodeInfo& node) {}
  // Called at the start and the end of each estimate() (the snapshot is reverted at the end).
  virtual void begin_estimation() {}
  virtual void end_estimation() {}
};

// CA's Reserve after a fit (it runs it for pods with claims): `fit` with the pod as the
// pipeline's plugins store it (DRA: carrying the claims Filter allocated on the node, from
// fit.filter_state). A Reserve error becomes an internal error, which ends the estimation as
// in CA.
FitResult reserve_fit(const framework::FilterPipeline& pipeline, const framework::PodInfo& pod,
                      const framework::ClusterSnapshot& s, FitResult fit);

// The default fitter: the framework FilterPipeline, walking nodes in CA's default
// LastIndexOrderMapping order: the walk starts right after the node of the last match (at
// index 0 before any match) and wraps. The state persists across calls, as CA's runner does.
class PipelineFitter final : public PodFitter {
 public:
  explicit PipelineFitter(const framework::FilterPipeline& pipeline) : pipeline_(pipeline) {}
  FitResult fit_any(const framework::PodInfo& pod, const framework::ClusterSnapshot& s,
                    const std::function<bool(const framework::NodeInfo&)>& acceptable) override;
  FitResult fit_on(const framework::PodInfo& pod, const framework::ClusterSnapshot& s,
                   std::string_view node) override;

 private:
  const framework::FilterPipeline& pipeline_;
  size_t next_start_ = 0;
};

// An equivalence group (§4.2): pods with the same scheduling requirements; pods[0] is the
// exemplar whose requests order the group.
struct PodGroup {
  std::vector<framework::PodInfoPtr> pods;
};

// The node group being estimated, and its similar groups for the SNG capacity threshold.
struct NodeGroupSize {
  std::string id;
  int64_t target_size = 0;
  int64_t max_size = 0;
};

// CA's EstimationContext: nullopt in the estimate() call means "no context" (no SNG and no
// cluster capacity limit).
struct EstimationContext {
  int64_t max_nodes_total = 0;  // --max-nodes-total; 0 = no limit
  int64_t current_node_count = 0;
  std::vector<NodeGroupSize> similar_groups;
};

struct StaticLimits {
  int64_t max_nodes_per_scaleup = 1000;  // 0 = no limit
  std::chrono::nanoseconds max_nodegroup_binpacking_duration =
      std::chrono::seconds(10);  // 0 = none
  // Asked before each new node; true denies it, as a spent duration does (a server gave up on
  // the request). Empty: never.
  std::function<bool()> cancelled = {};
};

// CA's ThresholdBasedLimiter with StaticThreshold, SngCapacityThreshold and
// ClusterCapacityThreshold, combined by getMinLimit (§4.5.1).
class EstimationLimiter {
 public:
  EstimationLimiter(const Clock& clock, StaticLimits limits) : clock_(clock), limits_(limits) {}
  void start_estimation(const NodeGroupSize& group, const std::optional<EstimationContext>& ctx);
  // Allows one more node, counting it; on denial says why.
  bool permission_to_add_node(std::string* why = nullptr);
  int64_t max_nodes() const { return max_nodes_; }
  std::chrono::nanoseconds max_duration() const { return max_duration_; }

  // getMinLimit: -1 if either is negative, else the smaller positive value; 0 = no limit.
  static int64_t min_limit(int64_t base, int64_t t);

 private:
  const Clock& clock_;
  StaticLimits limits_;
  int64_t max_nodes_ = 0;
  std::chrono::nanoseconds max_duration_{0};
  std::chrono::nanoseconds start_{0};
  int64_t nodes_ = 0;
};

// CA's TimeLimiter (--max-binpacking-time, default 5m): once the budget is spent, no further
// node group is estimated. Checked by the caller after each group.
class BinpackingTimeLimiter {
 public:
  BinpackingTimeLimiter(const Clock& clock,
                        std::chrono::nanoseconds max_binpacking_time = std::chrono::minutes(5))
      : clock_(clock), budget_(max_binpacking_time) {}
  void init_binpacking() { start_ = clock_.now(); }
  bool stop_binpacking() const { return clock_.now() > start_ + budget_; }

 private:
  const Clock& clock_;
  std::chrono::nanoseconds budget_;
  std::chrono::nanoseconds start_{0};
};

// CA's DecreasingPodOrderer score of an exemplar against a template:
//   cpuRequest/allocatableCpu + memoryRequest/allocatableMemory,
// each term only when the allocatable is > 0; requests are the effective pod requests
// (containers, sidecar-aware init max, overhead), cpu in millicores, memory in bytes.
double decreasing_order_score(const model::Pod& exemplar, const model::Node& template_node);
// Indices of `groups` in estimation order: score descending, ties in input order (stable).
std::vector<size_t> decreasing_pod_order(const std::vector<PodGroup>& groups,
                                         const model::Node& template_node);

// The fast path's choice (§4.5 step 3, determineBestPEGToFastpath): the position in `order`
// (indices into `groups`) of the group to move to the end, nullopt when none is eligible.
std::optional<size_t> best_group_for_fastpath(const std::vector<PodGroup>& groups,
                                              const std::vector<size_t>& order,
                                              const model::Node& template_node);

// CA's name for a template copy: "template-node-for-<group>-<n>-e-<k>".
std::string template_copy_name(std::string_view group_id, int64_t template_index, int64_t k);

using Allocations = std::map<std::string, std::string, std::less<>>;

struct Placement {
  std::string pod;   // namespace/name
  std::string node;  // template copy name
  // What the fit added; null when nothing. Shared between placements with equal allocations:
  // copies of one template register the same devices, so the pods of an estimate come in a few
  // hundred distinct allocations, and a 5,000-pod plan keeps every group's placements until the
  // expander has chosen (a map per placement was 30 MB of its peak).
  std::shared_ptr<const Allocations> allocations;
  std::vector<framework::ClaimAllocation> claims;  // claims it allocated there
};

struct UnplacedPod {
  std::string pod;  // namespace/name
  std::string reason;
};

struct Estimate {
  int64_t node_count = 0;                    // template copies that received at least one pod
  std::vector<Placement> placements;         // in placement order
  std::vector<UnplacedPod> unplaced;         // in estimation order
  std::vector<std::string> nodes_with_pods;  // in creation order
  std::optional<Error> internal_error;       // set: CA's (0, nil) result
};

struct EstimateInput {
  std::vector<PodGroup> groups;
  model::Node template_node;              // its name is replaced on each copy
  std::vector<model::Pod> template_pods;  // e.g. DaemonSet pods, copied onto every new node
  framework::NodeSlices template_slices;  // its own ResourceSlices, renamed on each copy
  NodeGroupSize group;
  int64_t template_index = 0;  // <n> in the copy names
  std::optional<EstimationContext> context;
};

class BinpackingEstimator {
 public:
  BinpackingEstimator(PodFitter& fitter, const Clock& clock, StaticLimits limits = {},
                      bool fastpath_binpacking = false)
      : fitter_(fitter), limiter_(clock, limits), fastpath_(fastpath_binpacking) {}
  // Runs the estimation in a fork of `snapshot` and reverts it before returning.
  Estimate estimate(framework::ClusterSnapshot& snapshot, const EstimateInput& in);

 private:
  PodFitter& fitter_;
  EstimationLimiter limiter_;
  bool fastpath_ = false;
};

}  // namespace hamisim::planner::estimator
