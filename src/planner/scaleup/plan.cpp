#include "planner/scaleup/plan.h"

#include <mutex>

#include "planner/scaleup/planner.h"

namespace hamisim::planner::scaleup {

using detail::Planner;

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

Result<Plan> Planner::run() {
  Result<Plan> plan = decide();
  if (plan && !plan->extender_failures.empty()) {
    // The decision rests on answers that never came: say so where the decision is read.
    plan->summary += "; but an extender failed, so device fit was not checked for some pods (" +
                     plan->extender_failures.front() + ")";
  }
  if (plan && env_.unpatched_ca != nullptr) {
    plan->unpatched_ca = compare_unpatched_ca(*plan, *env_.unpatched_ca);
  }
  // The loops stop early once the request is over (ClusterSnapshot::set_stop) and leave a
  // partial answer behind: never hand it out as a plan.
  if (plan && stop_requested()) return cancelled_error();
  return plan;
}

Result<Plan> Planner::decide() {
  if (Status s = check_unique_pending(); !s) return s.error();
  auto chain = make_chain();
  if (!chain) return chain.error();
  plan_.device_stage = env_.devices->description();
  plan_.expander = o_.expander;
  plan_.cluster_nodes = static_cast<int64_t>(in_.nodes.size());
  plan_.cluster_pods = static_cast<int64_t>(in_.pods.size());
  if (Status s = load_cluster(); !s) return s.error();
  build_templates();
  if (Status s = add_upcoming_nodes(); !s) return s.error();
  std::vector<PodInfoPtr> remaining = filter_out_schedulable();
  remaining_ = remaining;
  if (stop_requested()) return cancelled_error();
  collect_warnings();
  if (remaining.empty()) {
    plan_.decision = Plan::Decision::kNoScaleUpNeeded;
    plan_.summary = pending_ == 0 ? "no pending pods: no scale-up needed"
                                  : "every pending pod fits an existing node or cannot be "
                                    "helped by a new one: no scale-up needed";
    finish_groups();
    return std::move(plan_);
  }
  if (o_.max_nodes_total > 0 && static_cast<int64_t>(ready_nodes_) >= o_.max_nodes_total) {
    return no_scale_up(remaining,
                       "max total nodes reached (" + std::to_string(o_.max_nodes_total) + ")");
  }
  groups_ = build_pod_groups(remaining);
  validate_groups();
  check_templates();
  std::vector<expander::Option> options = estimate_groups();
  if (stop_requested()) return cancelled_error();
  collect_warnings();
  if (options.empty()) return no_scale_up(remaining, "no node group can take any pending pod");
  // The scores of the expanders in use, so the report explains the choice with its own
  // numbers.
  for (const expander::Option& opt : options) {
    plan_.groups[index_of(opt.node_group)].expander_note = chain->describe(opt);
  }
  expander::Warnings w;
  std::optional<expander::Option> best = chain->best_option(options, w);
  for (auto& m : w.messages) plan_.warnings.push_back("expander: " + m);
  if (!best || best->node_count <= 0) {
    return no_scale_up(remaining, "expansion options filtered out");
  }
  return scale_up(*best, remaining);
}

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
  if (!options.keep_state_until_exit) return Planner(input, options, env).run();
  auto planner = std::make_shared<Planner>(input, options, env);
  Result<Plan> plan = planner->run();
  keep_until_exit(std::move(planner));
  return plan;
}

}  // namespace hamisim::planner::scaleup
