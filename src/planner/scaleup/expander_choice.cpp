// Expander choice: the --expander chain, with its priority configuration.
#include "planner/scaleup/planner.h"

#include <algorithm>

namespace hamisim::planner::scaleup::detail {

Result<expander::Chain> Planner::make_chain() {
  expander::ChainConfig cc;
  cc.seed = o_.seed;
  if (o_.priority_config) {
    auto parsed = expander::PriorityConfig::parse(*o_.priority_config);
    if (!parsed) return make_error("--priority-config: " + parsed.error().message);
    cc.priority = std::move(parsed);
  } else {
    std::vector<std::pair<std::string, int64_t>> priorities;
    for (const auto& g : in_.node_groups.groups) {
      if (g.priority) priorities.emplace_back(g.name, *g.priority);
    }
    if (!priorities.empty()) {
      cc.priority = expander::PriorityConfig::from_node_groups(priorities);
    } else {
      cc.priority = make_error("no --priority-config and no node group has a priority");
    }
  }
  cc.price.cluster_node_count = static_cast<int64_t>(in_.nodes.size());
  auto chain = expander::Chain::make(o_.expander, std::move(cc));
  if (!chain) return make_error("--expander: " + chain.error().message);
  return chain;
}

}  // namespace hamisim::planner::scaleup::detail
