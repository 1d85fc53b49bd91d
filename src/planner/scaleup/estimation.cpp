// Estimation: the binpacking estimator over each valid group's template, within CA's time and
// node limits; one expansion option per group that takes pods.
#include "planner/scaleup/phases.h"

namespace hamisim::planner::scaleup::detail {

Estimation estimate_groups(const std::vector<NodeGroupOption>& groups,
                           const ByGroup<TemplateFit>& fits,
                           const std::vector<EquivalenceGroup>& pod_groups,
                           const PodsByKey& remaining, const PlannerOptions& o, Simulation& sim) {
  const estimator::WorkClock work(sim.snapshot);
  const estimator::Clock& clock = sim.binpacking_clock(work);
  estimator::BinpackingTimeLimiter time_limiter(clock, o.max_binpacking_time);
  time_limiter.init_binpacking();
  estimator::StaticLimits limits{o.max_nodes_per_scaleup, o.max_nodegroup_binpacking_duration,
                                 sim.env.cancelled};
  estimator::BinpackingEstimator est(sim.fitter(), clock, limits, o.fastpath_binpacking);
  Estimation out;
  const auto& progress = sim.env.progress;
  size_t done = 0;
  for (const NodeGroupOption& g : groups) {
    if (progress) progress(done++, groups.size());
    if (sim.stop_requested()) break;
    auto fit = fits.find(g.name());
    if (fit == fits.end() || fit->second.schedulable.empty()) continue;
    if (time_limiter.stop_binpacking()) {
      out.skipped.emplace(g.name(), "binpacking time budget (--max-binpacking-time) spent");
      continue;
    }
    GroupEstimate& ge = out.groups[g.name()];
    ge.similar_groups = similar_groups(g, groups, fits, o, *sim.env.cache);
    estimator::EstimateInput ei;
    for (size_t k : fit->second.schedulable) ei.groups.push_back({pod_groups[k].pods});
    ei.template_node = g.tmpl->node;
    ei.template_pods = g.tmpl->pods;
    ei.template_slices = g.slices;
    ei.group = {g.name(), g.target, g.spec->max_size};
    ei.template_index = g.index;
    estimator::EstimationContext ctx;
    ctx.max_nodes_total = o.max_nodes_total;
    ctx.current_node_count = static_cast<int64_t>(sim.snapshot.node_count());
    for (const std::string& name : ge.similar_groups) {
      const NodeGroupOption& h = *find_group(groups, name);
      ctx.similar_groups.push_back({name, h.target, h.spec->max_size});
    }
    ei.context = ctx;
    sim.env.cache->begin_scope();  // the estimate's copies and placed pods go with its revert
    estimator::Estimate result = est.estimate(sim.snapshot, ei);
    sim.env.cache->end_scope();
    if (result.internal_error) {
      ge.failure = result.internal_error->message;
      continue;
    }
    const estimator::Estimate& e = ge.estimate.emplace(std::move(result));
    if (e.placements.empty() || e.node_count <= 0) continue;
    expander::Option& opt = out.options.emplace_back();
    opt.node_group = g.name();
    opt.node_count = e.node_count;
    for (const auto& p : e.placements) opt.pods.push_back(remaining.find(p.pod)->second);
    opt.template_node = g.tmpl->node;
    opt.similar_node_groups = ge.similar_groups;
    opt.node_price = g.spec->price;
  }
  if (progress) progress(groups.size(), groups.size());
  return out;
}

}  // namespace hamisim::planner::scaleup::detail
