// Issue #33: the plan a Cluster Autoscaler whose extender calls carry no SimulatedPods makes,
// next to ours.
#include <algorithm>
#include <set>

#include "planner/scaleup/phases.h"

namespace hamisim::planner::scaleup::detail {

// Issue #33: `blind` is this input planned by a CA whose extender calls carry no
// SimulatedPods. Its node counts next to ours, and what its scale-up leaves pending: the pods
// no existing node takes (ours, devices counted), packed as the estimator packs them onto the
// nodes it adds, each group taking the pod groups whose exemplar fits its empty template.
UnpatchedComparison compare_unpatched_ca(const Plan& plan, const Plan& blind, const Decision& d,
                                         const PlannerOptions& o, Simulation& sim) {
  UnpatchedComparison result;
  auto out = std::make_shared<UnpatchedCaPlan>();
  out->decision = blind.decision;
  out->summary = blind.summary;
  out->scale_ups = blind.scale_ups;
  out->groups = group_counts(plan, blind);

  std::set<std::string, std::less<>> left;
  for (const PodInfoPtr& pod : d.pending.remaining) left.insert(pod->key());
  const estimator::WorkClock work(sim.snapshot);
  const estimator::Clock& clock = sim.binpacking_clock(work);
  int64_t blind_nodes = 0;
  std::string blind_groups;
  for (const ScaleUp& s : blind.scale_ups) {
    const NodeGroupOption* g = find_group(d.groups, s.group);
    if (s.delta() <= 0 || g == nullptr || !g->tmpl) continue;
    blind_nodes += s.delta();
    blind_groups += (blind_groups.empty() ? "" : ", ") + s.group;
    auto fit = d.fits.find(g->name());
    if (fit == d.fits.end()) continue;
    estimator::EstimateInput ei;
    for (size_t k : fit->second.schedulable) {
      estimator::PodGroup pg;
      for (const PodInfoPtr& pod : d.pod_groups[k].pods) {
        if (left.count(pod->key())) pg.pods.push_back(pod);
      }
      if (!pg.pods.empty()) ei.groups.push_back(std::move(pg));
    }
    if (ei.groups.empty()) continue;
    ei.template_node = g->tmpl->node;
    ei.template_pods = g->tmpl->pods;
    ei.template_slices = g->slices;
    ei.group = {g->name(), g->target, g->target + s.delta()};
    ei.template_index = g->index;
    estimator::StaticLimits limits{s.delta(), o.max_nodegroup_binpacking_duration,
                                   sim.env.cancelled};
    estimator::BinpackingEstimator est(sim.fitter(), clock, limits, o.fastpath_binpacking);
    estimator::Estimate r = est.estimate(sim.snapshot, ei);
    if (r.internal_error) {
      result.warnings.push_back(
          "comparison with a CA that does not send SimulatedPods: node "
          "group " +
          s.group + ": estimation failed: " + r.internal_error->message);
    }
    for (const estimator::Placement& p : r.placements) left.erase(p.pod);
  }
  (void)sim.take_messages();

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
  result.plan = std::move(out);
  return result;
}

}  // namespace hamisim::planner::scaleup::detail
