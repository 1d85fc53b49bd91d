// Expander choice: the --expander chain, with its priority configuration, and the option it
// picks.
#include "planner/scaleup/phases.h"

namespace hamisim::planner::scaleup::detail {

Result<expander::Chain> make_chain(const PlanInput& in, const PlannerOptions& o) {
  expander::ChainConfig cc;
  cc.seed = o.seed;
  if (o.priority_config) {
    auto parsed = expander::PriorityConfig::parse(*o.priority_config);
    if (!parsed) return make_error("--priority-config: " + parsed.error().message);
    cc.priority = std::move(parsed);
  } else {
    std::vector<std::pair<std::string, int64_t>> priorities;
    for (const auto& g : in.node_groups.groups) {
      if (g.priority) priorities.emplace_back(g.name, *g.priority);
    }
    if (!priorities.empty()) {
      cc.priority = expander::PriorityConfig::from_node_groups(priorities);
    } else {
      cc.priority = make_error("no --priority-config and no node group has a priority");
    }
  }
  cc.price.cluster_node_count = static_cast<int64_t>(in.nodes.size());
  auto chain = expander::Chain::make(o.expander, std::move(cc));
  if (!chain) return make_error("--expander: " + chain.error().message);
  return chain;
}

Choice choose_option(expander::Chain& chain, const std::vector<expander::Option>& options) {
  Choice out;
  // The scores of the expanders in use, so the report explains the choice with its own
  // numbers.
  for (const expander::Option& opt : options) {
    out.notes[opt.node_group] = chain.describe(opt);
  }
  expander::Warnings w;
  out.best = chain.best_option(options, w);
  for (auto& m : w.messages) out.warnings.push_back("expander: " + m);
  return out;
}

}  // namespace hamisim::planner::scaleup::detail
