#pragma once
// The Planner behind make_plan (private to hamisim_planner_scaleup): the state of one planning
// run and its phases, in Cluster Autoscaler's order (reference ca-scale-up.md §4). decide()
// (plan.cpp) runs them; each phase is defined in the file named for it:
//   cluster_snapshot.cpp        existing nodes and their pods, device usage and quota
//   node_group_options.cpp      node group templates, upcoming nodes, valid groups
//   filter_out_schedulable.cpp  pending pods that fit an existing or upcoming node
//   estimation.cpp              binpacking each valid group's template (expansion options)
//   similar_groups.cpp          the groups an option balances with
//   expander_choice.cpp         the expander chain that picks the option
//   plan_result.cpp             the scale-up (caps, balancing) or its absence, pod outcomes
//   unpatched_ca.cpp            the comparison with a CA that sends no SimulatedPods (#33)

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
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

inline std::string describe(const FilterStatus& st) {
  std::string out = st.plugin.empty() ? std::string("rejected") : st.plugin;
  for (size_t i = 0; i < st.reasons.size(); ++i) out += (i == 0 ? ": " : "; ") + st.reasons[i];
  return out;
}

// "<kind>/<name>" of the pod's controller owner reference, else of its first; "" for none.
inline std::string owner_of(const model::Pod& pod) {
  const auto& refs = pod.metadata.owner_references;
  if (refs.empty()) return {};
  const model::OwnerReference* pick = &refs.front();
  for (const auto& r : refs) {
    if (r.controller) pick = &r;
  }
  return pick->kind + "/" + pick->name;
}

inline std::string nodes_word(int64_t n) {
  return n == 1 ? "1 node" : std::to_string(n) + " nodes";
}
inline std::string pods_word(size_t n) {
  return n == 1 ? "1 pod" : std::to_string(n) + " pods";
}

// Everything the planner keeps about one node group while planning.
struct GroupState {
  const nodegroups::NodeGroupSpec* spec = nullptr;
  std::optional<nodegroups::GroupTemplate> tmpl;
  // The template's own ResourceSlices (warm: the sample's, for the template; cold: none yet).
  framework::NodeSlices slices;
  int64_t target = 0;
  bool valid = false;
  std::vector<size_t> schedulable;  // indices into the equivalence groups
  std::optional<estimator::Estimate> estimate;
};

class Planner {
 public:
  Planner(const PlanInput& in, const PlannerOptions& o, const PlannerEnv& env)
      : in_(in),
        o_(o),
        env_(env),
        pipeline_(framework::FilterPipeline::make_default(env.fit_args)),
        fitter_(pipeline_, *env.devices),
        quota_(env.cache->engine().registry()) {}

  // PlannerEnv::cancelled, remembered once true.
  bool stop_requested() {
    if (!cancelled_ && env_.cancelled && env_.cancelled()) cancelled_ = true;
    return cancelled_;
  }
  static Error cancelled_error() {
    return make_error("cancelled: the plan was abandoned before it finished");
  }

  // plan.cpp
  Result<Plan> run();

 private:
  Result<Plan> decide();

  // cluster_snapshot.cpp
  Status check_unique_pending() const;
  Status load_cluster();

  // node_group_options.cpp
  void build_templates();
  framework::NodeSlices template_slices(const nodegroups::GroupTemplate& tmpl,
                                        const nodegroups::NodeGroupSpec& spec) const;
  Status add_upcoming_nodes();
  void validate_groups();
  void check_templates();

  // filter_out_schedulable.cpp
  std::vector<PodInfoPtr> filter_out_schedulable();

  // estimation.cpp
  std::vector<expander::Option> estimate_groups();

  // similar_groups.cpp
  std::vector<std::string> similar_groups(size_t i);
  bool same_devices(const model::Node& a, const model::Node& b);

  // expander_choice.cpp
  Result<expander::Chain> make_chain();

  // plan_result.cpp
  Result<Plan> scale_up(const expander::Option& best, const std::vector<PodInfoPtr>& remaining);
  void mark_unhelped(const std::vector<PodInfoPtr>& remaining,
                     const std::set<std::string, std::less<>>* triggered);
  Result<Plan> no_scale_up(const std::vector<PodInfoPtr>& remaining, std::string why);
  void planned_nodes(const GroupState& g);
  void finish_groups();
  void collect_warnings();

  // unpatched_ca.cpp
  std::shared_ptr<const UnpatchedCaPlan> compare_unpatched_ca(Plan& plan, const Plan& blind);

  void add_outcome(PodOutcome out) { plan_.pods.push_back(std::move(out)); }
  PodOutcome& outcome(const PodInfo& pod) { return plan_.pods[outcome_index_.at(pod.key())]; }

  // A pod left after filter-out-schedulable (estimates name pods by key).
  PodInfoPtr pod_by_key(std::string_view key) const {
    auto it = remaining_by_key_.find(key);
    return it == remaining_by_key_.end() ? nullptr : it->second;
  }

  // The pod as the snapshot holds it: shared with a handed-over input, else a copy.
  PodInfoPtr pod_info(const model::Pod& pod) const {
    if (!env_.shared_input) return PodInfo::make(pod);
    return PodInfo::share(std::shared_ptr<const model::Pod>(env_.shared_input, &pod));
  }

  GroupState* state_of(std::string_view name) {
    for (auto& g : states_) {
      if (g.spec->name == name) return &g;
    }
    return nullptr;
  }

  size_t index_of(std::string_view name) const {
    for (size_t i = 0; i < states_.size(); ++i) {
      if (states_[i].spec->name == name) return i;
    }
    return states_.size();
  }

  const PlanInput& in_;
  const PlannerOptions& o_;
  const PlannerEnv& env_;
  framework::FilterPipeline pipeline_;
  DeviceAwareFitter fitter_;
  fit::DeviceQuota quota_;
  estimator::SteadyClock steady_;
  const estimator::Clock& steady_clock() const { return steady_; }
  ClusterSnapshot snap_;
  Plan plan_;
  std::vector<GroupState> states_;
  std::vector<EquivalenceGroup> groups_;
  std::map<std::string, size_t, std::less<>> outcome_index_;
  std::map<std::string_view, PodInfoPtr, std::less<>> remaining_by_key_;  // keys live in the pods
  std::vector<PodInfoPtr> remaining_;  // left after filter-out-schedulable, in that order
  size_t ready_nodes_ = 0;
  size_t pending_ = 0;
  bool cancelled_ = false;
};

}  // namespace hamisim::planner::scaleup::detail
