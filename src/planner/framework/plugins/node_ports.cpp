#include "planner/framework/plugins/node_ports.h"

#include <algorithm>

namespace hamisim::planner::framework {

FilterStatus NodePorts::pre_filter(const PodInfo& pod, const ClusterSnapshot&,
                                   std::unique_ptr<PluginState>&) const {
  return pod.host_ports().empty() ? FilterStatus::skip() : FilterStatus::success();
}

FilterStatus NodePorts::filter(const PodInfo& pod, const PluginState*, const NodeInfo& node) const {
  const auto& used = node.used_ports();
  bool clash = std::any_of(pod.host_ports().begin(), pod.host_ports().end(), [&](const auto& p) {
    return used.conflicts(p.host_ip, p.protocol, p.host_port);
  });
  if (!clash) return FilterStatus::success();
  return FilterStatus::make(FilterCode::kUnschedulable, kName, std::string(kReason));
}

}  // namespace hamisim::planner::framework
