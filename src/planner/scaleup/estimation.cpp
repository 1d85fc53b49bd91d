// Estimation: the binpacking estimator over each valid group's template, within CA's time and
// node limits; one expansion option per group that takes pods.
#include "planner/scaleup/planner.h"

#include <algorithm>

namespace hamisim::planner::scaleup::detail {

// ComputeExpansionOption for every valid group with schedulable pods.
std::vector<expander::Option> Planner::estimate_groups() {
  const estimator::WorkClock work(snap_);
  const estimator::Clock& clock = env_.clock                 ? *env_.clock
                                  : o_.binpacking_wall_clock ? steady_clock()
                                                             : work;
  estimator::BinpackingTimeLimiter time_limiter(clock, o_.max_binpacking_time);
  time_limiter.init_binpacking();
  estimator::StaticLimits limits{o_.max_nodes_per_scaleup, o_.max_nodegroup_binpacking_duration,
                                 env_.cancelled};
  estimator::BinpackingEstimator est(fitter_, clock, limits, o_.fastpath_binpacking);
  std::vector<expander::Option> options;
  size_t done = 0;
  for (size_t i = 0; i < states_.size(); ++i) {
    GroupState& g = states_[i];
    GroupEvaluation& e = plan_.groups[i];
    if (env_.progress) env_.progress(done++, states_.size());
    if (stop_requested()) break;
    if (!g.valid || g.schedulable.empty()) continue;
    if (time_limiter.stop_binpacking()) {
      e.skip_reason = "binpacking time budget (--max-binpacking-time) spent";
      continue;
    }
    e.similar_groups = similar_groups(i);
    estimator::EstimateInput ei;
    for (size_t k : g.schedulable) ei.groups.push_back({groups_[k].pods});
    ei.template_node = g.tmpl->node;
    ei.template_pods = g.tmpl->pods;
    ei.template_slices = g.slices;
    ei.group = {g.spec->name, g.target, g.spec->max_size};
    ei.template_index = static_cast<int64_t>(i);
    estimator::EstimationContext ctx;
    ctx.max_nodes_total = o_.max_nodes_total;
    ctx.current_node_count = static_cast<int64_t>(snap_.node_count());
    for (const std::string& name : e.similar_groups) {
      const GroupState& h = *state_of(name);
      ctx.similar_groups.push_back({name, h.target, h.spec->max_size});
    }
    ei.context = ctx;
    env_.cache->begin_scope();  // the estimate's copies and placed pods go with its revert
    estimator::Estimate result = est.estimate(snap_, ei);
    env_.cache->end_scope();
    if (result.internal_error) {
      plan_.warnings.push_back("node group " + e.name +
                               ": estimation failed: " + result.internal_error->message);
      continue;
    }
    e.estimated_nodes = result.node_count;
    for (const auto& p : result.placements) e.estimated_pods.push_back(p.pod);
    e.unplaced = result.unplaced;
    g.estimate = std::move(result);
    if (g.estimate->placements.empty() || g.estimate->node_count <= 0) continue;
    e.option = true;
    expander::Option opt;
    opt.node_group = e.name;
    opt.node_count = g.estimate->node_count;
    for (const auto& p : g.estimate->placements) opt.pods.push_back(pod_by_key(p.pod));
    opt.template_node = g.tmpl->node;
    opt.similar_node_groups = e.similar_groups;
    opt.node_price = g.spec->price;
    options.push_back(std::move(opt));
  }
  if (env_.progress) env_.progress(states_.size(), states_.size());
  return options;
}

}  // namespace hamisim::planner::scaleup::detail
