#include "planner/framework/plugins/node_name.h"

namespace hamisim::planner::framework {

FilterStatus NodeName::filter(const PodInfo& pod, const PluginState*, const NodeInfo& node) const {
  const std::string& wanted = pod.pod().spec.node_name;
  if (wanted.empty() || wanted == node.name()) return FilterStatus::success();
  return FilterStatus::make(FilterCode::kUnschedulableAndUnresolvable, kName, std::string(kReason));
}

}  // namespace hamisim::planner::framework
