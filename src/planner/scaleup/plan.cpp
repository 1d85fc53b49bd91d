#include "planner/scaleup/plan.h"

#include <mutex>

#include "planner/scaleup/phases.h"

namespace hamisim::planner::scaleup {

std::string_view to_string(PodOutcome::State state) {
  switch (state) {
    case PodOutcome::State::kFitsExistingNode:
      return "fits-existing-node";
    case PodOutcome::State::kTriggersScaleUp:
      return "triggers-scale-up";
    case PodOutcome::State::kAwaitsEvaluation:
      return "awaits-evaluation";
    case PodOutcome::State::kNoScaleUpHelps:
      return "no-scale-up-helps";
    case PodOutcome::State::kBlocked:
      return "blocked";
    case PodOutcome::State::kIgnored:
      return "ignored";
  }
  return "unknown";
}

std::string_view to_string(Plan::Decision decision) {
  switch (decision) {
    case Plan::Decision::kNoScaleUpNeeded:
      return "no-scale-up-needed";
    case Plan::Decision::kScaleUp:
      return "scale-up";
    case Plan::Decision::kNoScaleUpPossible:
      return "no-scale-up-possible";
  }
  return "unknown";
}

std::vector<GroupCounts> group_counts(const Plan& plan, const Plan& other) {
  auto added = [](const Plan& p, std::string_view group) {
    int64_t n = 0;
    for (const ScaleUp& s : p.scale_ups) {
      if (s.group == group) n += s.delta();
    }
    return n;
  };
  std::vector<GroupCounts> out;
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    GroupCounts c;
    c.name = plan.groups[i].name;
    c.estimated_nodes = plan.groups[i].estimated_nodes;
    // Both plans list the groups of one node-groups file, in its order.
    if (i < other.groups.size() && other.groups[i].name == c.name) {
      c.other_estimated_nodes = other.groups[i].estimated_nodes;
    }
    c.new_nodes = added(plan, c.name);
    c.other_new_nodes = added(other, c.name);
    out.push_back(std::move(c));
  }
  return out;
}

namespace detail {

Simulation::Simulation(const PlannerEnv& e, const PlannerOptions& options)
    : env(e),
      quota(e.cache->engine().registry()),
      wall_clock_(options.binpacking_wall_clock),
      pipeline_(framework::FilterPipeline::make_default(e.fit_args)),
      fitter_(pipeline_, *e.devices) {
  snapshot.set_stop(env.cancelled);
}

bool Simulation::stop_requested() {
  if (!cancelled_ && env.cancelled && env.cancelled()) cancelled_ = true;
  return cancelled_;
}

const estimator::Clock& Simulation::binpacking_clock(const estimator::WorkClock& work) const {
  if (env.clock) return *env.clock;
  if (wall_clock_) return steady_;
  return work;
}

FitterMessages Simulation::take_messages() {
  return {fitter_.take_warnings(), fitter_.take_failures()};
}

PodInfoPtr Simulation::pod_info(const model::Pod& pod) const {
  if (!env.shared_input) return PodInfo::make(pod);
  return PodInfo::share(std::shared_ptr<const model::Pod>(env.shared_input, &pod));
}

Error cancelled_error() {
  return make_error("cancelled: the plan was abandoned before it finished");
}

namespace {

// The phases in CA's order (ScaleUpOrchestrator.ScaleUp), each taking the values the earlier
// ones returned. A Decision returned whole is final: the report reads nothing else.
Result<Decision> decide(const PlanInput& in, const PlannerOptions& o, Simulation& sim) {
  if (Status s = check_unique_pending(in); !s) return s.error();
  auto chain = make_chain(in, o);
  if (!chain) return chain.error();
  Decision d;
  auto cluster = load_cluster(in, o, sim);
  if (!cluster) return cluster.error();
  d.cluster = std::move(cluster).value();
  d.groups = node_group_options(in, sim);
  if (Status s = add_upcoming_nodes(d.groups, sim.snapshot); !s) return s.error();
  d.pending = filter_out_schedulable(in, o, sim);
  if (sim.stop_requested()) return cancelled_error();
  d.after_filter = sim.take_messages();
  auto finish = [&](Plan::Decision kind, std::string why_not = {}) {
    d.kind = kind;
    d.why_not = std::move(why_not);
    d.at_end = sim.take_messages();
    return std::move(d);
  };
  if (d.pending.remaining.empty()) return finish(Plan::Decision::kNoScaleUpNeeded);
  d.pod_groups = build_pod_groups(d.pending.remaining);
  for (const PodInfoPtr& pod : d.pending.remaining) d.remaining.emplace(pod->key(), pod);
  const auto kNoScaleUp = Plan::Decision::kNoScaleUpPossible;
  if (o.max_nodes_total > 0 && static_cast<int64_t>(d.cluster.ready_nodes) >= o.max_nodes_total) {
    return finish(kNoScaleUp,
                  "max total nodes reached (" + std::to_string(o.max_nodes_total) + ")");
  }
  for (const NodeGroupOption& g : d.groups) {
    if (std::string why = invalid_reason(g); !why.empty()) {
      d.skipped.emplace(g.name(), std::move(why));
      continue;
    }
    TemplateFit fit = schedulable_pod_groups(g, d.pod_groups, sim);
    if (!fit.simulated) {
      d.skipped.emplace(g.name(), "template node could not be simulated");
      continue;
    }
    d.fits.emplace(g.name(), std::move(fit));
  }
  Estimation est = estimate_groups(d.groups, d.fits, d.pod_groups, d.remaining, o, sim);
  if (sim.stop_requested()) return cancelled_error();
  d.after_estimation = sim.take_messages();
  d.estimates = std::move(est.groups);
  d.skipped.merge(est.skipped);
  if (est.options.empty()) return finish(kNoScaleUp, "no node group can take any pending pod");
  d.choice = choose_option(*chain, est.options);
  const std::optional<expander::Option>& best = d.choice.best;
  if (!best || best->node_count <= 0) return finish(kNoScaleUp, "expansion options filtered out");
  d.chosen = find_group(d.groups, best->node_group);
  const auto current_nodes = static_cast<int64_t>(sim.snapshot.node_count());
  d.scale_up = capped_scale_up(*best, *d.chosen, d.groups, current_nodes, o);
  if (d.scale_up.scale_ups.empty()) return finish(kNoScaleUp, d.scale_up.why_not);
  d.new_nodes =
      planned_nodes(*d.chosen, *d.estimates.at(d.chosen->name()).estimate, d.remaining, sim);
  return finish(Plan::Decision::kScaleUp);
}

// A planning run: the simulation and the decision made in it, which the comparison with an
// unpatched CA reads after the report.
struct Run {
  Run(const PlannerEnv& env, const PlannerOptions& o) : sim(env, o) {}
  Simulation sim;
  Decision decision;
};

Result<Plan> run(const PlanInput& in, const PlannerOptions& o, Run& r) {
  auto decided = decide(in, o, r.sim);
  if (!decided) return decided.error();
  r.decision = std::move(decided).value();
  Plan plan = report(in, o, r.sim.env.devices->description(), r.decision);
  if (!plan.extender_failures.empty()) {
    // The decision rests on answers that never came: say so where the decision is read.
    plan.summary += "; but an extender failed, so device fit was not checked for some pods (" +
                    plan.extender_failures.front() + ")";
  }
  if (r.sim.env.unpatched_ca != nullptr) {
    UnpatchedComparison c =
        compare_unpatched_ca(plan, *r.sim.env.unpatched_ca, r.decision, o, r.sim);
    plan.unpatched_ca = std::move(c.plan);
    plan.warnings.insert(plan.warnings.end(), c.warnings.begin(), c.warnings.end());
  }
  // The loops stop early once the request is over (ClusterSnapshot::set_stop) and leave a
  // partial answer behind: never hand it out as a plan.
  if (r.sim.stop_requested()) return cancelled_error();
  return plan;
}

}  // namespace
}  // namespace detail

void keep_until_exit(std::shared_ptr<const void> state) {
  static std::mutex mutex;
  static auto* kept = new std::vector<std::shared_ptr<const void>>();  // never destroyed
  std::lock_guard lock(mutex);
  kept->push_back(std::move(state));
}

Result<Plan> make_plan(const PlanInput& input, const PlannerOptions& options,
                       const PlannerEnv& env) {
  if (env.devices == nullptr || env.cache == nullptr) {
    return make_error("internal: planner without a device stage or cache");
  }
  if (env.shared_input && env.shared_input.get() != &input) {
    return make_error("internal: the shared input is not the input planned");
  }
  auto r = std::make_shared<detail::Run>(env, options);
  Result<Plan> plan = detail::run(input, options, *r);
  if (options.keep_state_until_exit) keep_until_exit(std::move(r));
  return plan;
}

}  // namespace hamisim::planner::scaleup
