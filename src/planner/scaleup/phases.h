#pragma once
// The phases of one planning run (private to hamisim_planner_scaleup), in Cluster Autoscaler's
// order (reference ca-scale-up.md §4). As in CA's ScaleUpOrchestrator, each phase takes values
// and returns values; the one mutable thing they share is the Simulation (the cluster snapshot
// with the fitter and device quota that act on it), passed to them explicitly, as CA passes
// its ClusterSnapshot. decide() (plan.cpp) runs the phases into a Decision, and report()
// builds the Plan from the finished Decision alone. Each phase is defined in the file named
// for it:
//   cluster_snapshot.cpp        existing nodes and their pods, device usage and quota
//   node_group_options.cpp      node group templates, upcoming nodes, valid groups, template fits
//   filter_out_schedulable.cpp  pending pods that fit an existing or upcoming node
//   estimation.cpp              binpacking each valid group's template (expansion options)
//   similar_groups.cpp          the groups an option balances with
//   expander_choice.cpp         the expander chain and the option it picks
//   scale_up.cpp                the chosen option's scale-up (caps, balancing) and new nodes
//   report.cpp                  the Plan: every group's and pod's outcome, warnings, summary
//   unpatched_ca.cpp            the comparison with a CA that sends no SimulatedPods (#33)

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fit/quota.h"
#include "planner/expander/expander.h"
#include "planner/framework/pipeline.h"
#include "planner/scaleup/device_fitter.h"
#include "planner/scaleup/equivalence.h"
#include "planner/scaleup/plan.h"

namespace hamisim::planner::scaleup::detail {

using framework::ClusterSnapshot;
using framework::FilterStatus;
using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;

inline bool terminated(const model::Pod& pod) {
  return pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
}

inline int32_t priority_of(const model::Pod& pod) {
  return pod.spec.priority.value_or(0);
}

inline std::string nodes_word(int64_t n) {
  return n == 1 ? "1 node" : std::to_string(n) + " nodes";
}
inline std::string pods_word(size_t n) {
  return n == 1 ? "1 pod" : std::to_string(n) + " pods";
}

// Per node group, keyed by its name (which lives in the planned input), as CA keys its
// per-group maps by node group id.
template <class T>
using ByGroup = std::map<std::string_view, T, std::less<>>;

// Pods left after filter-out-schedulable by namespace/name (estimates name pods by key); the
// keys live in the pods.
using PodsByKey = std::map<std::string_view, PodInfoPtr, std::less<>>;

// What the device stage said besides its verdicts, taken at one point of the run.
struct FitterMessages {
  std::vector<std::string> warnings;
  std::vector<std::string> failures;
};

// The simulated world of one run: the snapshot (existing nodes, their pods and the pods
// placed so far), the fitter that places pods on it and the device quota they count against.
// A phase that tries templates forks the snapshot and reverts it before it returns.
class Simulation {
 public:
  Simulation(const PlannerEnv& env, const PlannerOptions& options);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  const PlannerEnv& env;
  ClusterSnapshot snapshot;
  DeviceAwareFitter& fitter() { return fitter_; }
  fit::DeviceQuota quota;

  // PlannerEnv::cancelled, remembered once true.
  bool stop_requested();
  // The clock the binpacking limits are measured on (PlannerOptions::binpacking_wall_clock):
  // the environment's, the wall clock, or `work`.
  const estimator::Clock& binpacking_clock(const estimator::WorkClock& work) const;
  // The fitter's warnings and failures since the last call.
  FitterMessages take_messages();
  // The pod as the snapshot holds it: shared with a handed-over input, else a copy.
  PodInfoPtr pod_info(const model::Pod& pod) const;

 private:
  const bool wall_clock_;
  framework::FilterPipeline pipeline_;
  DeviceAwareFitter fitter_;
  estimator::SteadyClock steady_;
  bool cancelled_ = false;
};

Error cancelled_error();

// cluster_snapshot.cpp: CA's first step.
// Every result names pods by namespace/name: two pending pods with one name are an error.
Status check_unique_pending(const PlanInput& in);
struct ExistingCluster {
  size_t ready_nodes = 0;  // nodes that could serve as a template (CA's max-total check)
  std::vector<std::string> warnings;
};
Result<ExistingCluster> load_cluster(const PlanInput& in, const PlannerOptions& o, Simulation& sim);

// node_group_options.cpp: a node group as the later phases see it.
struct NodeGroupOption {
  const nodegroups::NodeGroupSpec* spec = nullptr;
  int64_t index = 0;  // in the node-groups file; <n> in template copy names
  int64_t members = 0;
  int64_t target = 0;
  std::optional<nodegroups::GroupTemplate> tmpl;
  // The template's own ResourceSlices (warm: the sample's, for the template; cold: the
  // profile's DRA form; null: none).
  framework::NodeSlices slices;
  // The template's devices as the report shows them: where they came from, the profile that
  // described them, and the description's notes.
  std::string device_source;
  std::string device_profile;
  std::vector<std::string> notes;
  const std::string& name() const { return spec->name; }
};
std::vector<NodeGroupOption> node_group_options(const PlanInput& in, const Simulation& sim);
const NodeGroupOption* find_group(const std::vector<NodeGroupOption>& groups,
                                  std::string_view name);
// CA's upcoming nodes: template copies for every node a group's target has not registered.
Status add_upcoming_nodes(const std::vector<NodeGroupOption>& groups, ClusterSnapshot& snapshot);
// filterValidScaleUpNodeGroups: why the group may not grow; empty when it may.
std::string invalid_reason(const NodeGroupOption& group);
// SchedulablePodGroups: each equivalence group's exemplar against the group's empty template.
struct TemplateFit {
  bool simulated = true;            // false: the template node could not be added to the snapshot
  std::vector<size_t> schedulable;  // equivalence groups whose exemplar fits, ascending
  struct Rejection {
    size_t pod_group = 0;  // the equivalence group
    std::string why;       // the filter's reasons
    std::string detail;    // device rejections: hamisim's account with numbers (may be empty)
  };
  std::vector<Rejection> rejected;
};
TemplateFit schedulable_pod_groups(const NodeGroupOption& group,
                                   const std::vector<EquivalenceGroup>& pod_groups,
                                   Simulation& sim);

// filter_out_schedulable.cpp
// The pods to plan for: the what-if pods, else the snapshot's pods without a node that have
// not terminated.
std::vector<const model::Pod*> pending_pods(const PlanInput& in);
struct PendingPods {
  size_t count = 0;  // pending pods found in the input
  // Every pending pod considered, in the order considered; those in `remaining` are decided
  // by the node groups (report.cpp).
  std::vector<PodOutcome> outcomes;
  std::vector<PodInfoPtr> remaining;       // in the order considered
  std::vector<size_t> remaining_outcomes;  // remaining[i]'s entry in `outcomes`
};
PendingPods filter_out_schedulable(const PlanInput& in, const PlannerOptions& o, Simulation& sim);

// similar_groups.cpp: the valid groups (those with a fit) an option of `group` balances with.
std::vector<std::string> similar_groups(const NodeGroupOption& group,
                                        const std::vector<NodeGroupOption>& groups,
                                        const ByGroup<TemplateFit>& fits, const PlannerOptions& o,
                                        DeviceCache& cache);

// estimation.cpp: ComputeExpansionOption for every valid group with schedulable pods.
struct GroupEstimate {
  std::vector<std::string> similar_groups;
  std::optional<estimator::Estimate> estimate;  // null: it failed, `failure` says why
  std::string failure;
};
struct Estimation {
  ByGroup<GroupEstimate> groups;
  ByGroup<std::string> skipped;  // the binpacking time budget was spent before them
  std::vector<expander::Option> options;
};
Estimation estimate_groups(const std::vector<NodeGroupOption>& groups,
                           const ByGroup<TemplateFit>& fits,
                           const std::vector<EquivalenceGroup>& pod_groups,
                           const PodsByKey& remaining, const PlannerOptions& o, Simulation& sim);

// expander_choice.cpp
Result<expander::Chain> make_chain(const PlanInput& in, const PlannerOptions& o);
struct Choice {
  std::map<std::string, std::string, std::less<>> notes;  // what the chain judged each option by
  std::optional<expander::Option> best;
  std::vector<std::string> warnings;
};
Choice choose_option(expander::Chain& chain, const std::vector<expander::Option>& options);

// scale_up.cpp: GetCappedNewNodeCount and BalanceScaleUpBetweenGroups for the chosen option.
struct CappedScaleUp {
  std::vector<ScaleUp> scale_ups;  // the chosen group first; empty: no scale-up, see why_not
  std::string why_not;
  std::vector<std::string> warnings;
};
CappedScaleUp capped_scale_up(const expander::Option& best, const NodeGroupOption& chosen,
                              const std::vector<NodeGroupOption>& groups, int64_t current_nodes,
                              const PlannerOptions& o);
// The chosen group's new nodes with what lands on them, replayed in a fork of the snapshot.
struct NewNodes {
  std::vector<PlannedNode> nodes;
  std::vector<std::string> warnings;
};
NewNodes planned_nodes(const NodeGroupOption& group, const estimator::Estimate& estimate,
                       const PodsByKey& remaining, Simulation& sim);

// Everything decided in one run, from which the Plan is reported.
struct Decision {
  Plan::Decision kind = Plan::Decision::kNoScaleUpNeeded;
  std::string why_not;  // kNoScaleUpPossible: why
  ExistingCluster cluster;
  std::vector<NodeGroupOption> groups;  // node-groups file order
  PendingPods pending;
  FitterMessages after_filter;
  std::vector<EquivalenceGroup> pod_groups;  // of pending.remaining
  PodsByKey remaining;                       // pending.remaining by key
  ByGroup<std::string> skipped;              // groups not considered, and why
  ByGroup<TemplateFit> fits;                 // the valid groups' template fits
  ByGroup<GroupEstimate> estimates;
  FitterMessages after_estimation;
  Choice choice;
  const NodeGroupOption* chosen = nullptr;  // the expander's pick (even when it cannot grow)
  CappedScaleUp scale_up;
  NewNodes new_nodes;
  FitterMessages at_end;
};

// report.cpp
Plan report(const PlanInput& in, const PlannerOptions& o, std::string device_stage,
            const Decision& d);

// unpatched_ca.cpp (issue #33): `blind` is this input planned by a CA whose extender calls
// carry no SimulatedPods; `plan` the correct plan reported from `d`.
struct UnpatchedComparison {
  std::shared_ptr<const UnpatchedCaPlan> plan;
  std::vector<std::string> warnings;
};
UnpatchedComparison compare_unpatched_ca(const Plan& plan, const Plan& blind, const Decision& d,
                                         const PlannerOptions& o, Simulation& sim);

}  // namespace hamisim::planner::scaleup::detail
