// Issue #33: the plan a Cluster Autoscaler whose extender calls carry no SimulatedPods makes,
// next to ours.
#include "planner/scaleup/planner.h"

#include <algorithm>

namespace hamisim::planner::scaleup::detail {

// Issue #33: `blind` is this input planned by a CA whose extender calls carry no
// SimulatedPods. Its node counts next to ours, and what its scale-up leaves pending: the pods
// no existing node takes (ours, devices counted), packed as the estimator packs them onto the
// nodes it adds, each group taking the pod groups whose exemplar fits its empty template.
std::shared_ptr<const UnpatchedCaPlan> Planner::compare_unpatched_ca(Plan& plan,
                                                                     const Plan& blind) {
  auto out = std::make_shared<UnpatchedCaPlan>();
  out->decision = blind.decision;
  out->summary = blind.summary;
  out->scale_ups = blind.scale_ups;
  out->groups = group_counts(plan, blind);

  std::set<std::string, std::less<>> left;
  for (const PodInfoPtr& pod : remaining_) left.insert(pod->key());
  const estimator::WorkClock work(snap_);
  const estimator::Clock& clock = env_.clock                 ? *env_.clock
                                  : o_.binpacking_wall_clock ? steady_clock()
                                                             : work;
  int64_t blind_nodes = 0;
  std::string blind_groups;
  for (const ScaleUp& s : blind.scale_ups) {
    const size_t i = index_of(s.group);
    if (s.delta() <= 0 || i == states_.size() || !states_[i].tmpl) continue;
    blind_nodes += s.delta();
    blind_groups += (blind_groups.empty() ? "" : ", ") + s.group;
    const GroupState& g = states_[i];
    estimator::EstimateInput ei;
    for (size_t k : g.schedulable) {
      estimator::PodGroup pg;
      for (const PodInfoPtr& pod : groups_[k].pods) {
        if (left.count(pod->key())) pg.pods.push_back(pod);
      }
      if (!pg.pods.empty()) ei.groups.push_back(std::move(pg));
    }
    if (ei.groups.empty()) continue;
    ei.template_node = g.tmpl->node;
    ei.template_pods = g.tmpl->pods;
    ei.template_slices = g.slices;
    ei.group = {g.spec->name, g.target, g.target + s.delta()};
    ei.template_index = static_cast<int64_t>(i);
    estimator::StaticLimits limits{s.delta(), o_.max_nodegroup_binpacking_duration, env_.cancelled};
    estimator::BinpackingEstimator est(fitter_, clock, limits, o_.fastpath_binpacking);
    estimator::Estimate r = est.estimate(snap_, ei);
    if (r.internal_error) {
      plan.warnings.push_back(
          "comparison with a CA that does not send SimulatedPods: node "
          "group " +
          s.group + ": estimation failed: " + r.internal_error->message);
    }
    for (const estimator::Placement& p : r.placements) left.erase(p.pod);
  }
  (void)fitter_.take_warnings();
  (void)fitter_.take_failures();

  std::map<std::string_view, const PodOutcome*> blind_pods;
  for (const PodOutcome& p : blind.pods) blind_pods.emplace(p.pod, &p);
  for (const PodOutcome& p : plan.pods) {
    if (p.state != PodOutcome::State::kTriggersScaleUp &&
        p.state != PodOutcome::State::kFitsExistingNode) {
      continue;
    }
    if (!left.count(p.pod)) continue;
    auto b = blind_pods.find(p.pod);
    const PodOutcome* theirs = b == blind_pods.end() ? nullptr : b->second;
    std::string why;
    if (theirs && theirs->state == PodOutcome::State::kFitsExistingNode) {
      why = "such a CA counts it on existing node " + theirs->node +
            ", whose devices it sees unused, and adds no node for it";
    } else if (blind_nodes == 0) {
      why = "such a CA adds no node (" + blind.summary + ")";
    } else if (theirs && theirs->state == PodOutcome::State::kTriggersScaleUp) {
      why = "such a CA counts it on its new node " + theirs->node + "; with devices counted, the " +
            nodes_word(blind_nodes) + " it adds (" + blind_groups + ") have no room for it";
    } else {
      why = "with devices counted, the " + nodes_word(blind_nodes) + " such a CA adds (" +
            blind_groups + ") have no room for it";
    }
    out->left_pending.push_back({p.pod, std::move(why)});
  }
  return out;
}

}  // namespace hamisim::planner::scaleup::detail
