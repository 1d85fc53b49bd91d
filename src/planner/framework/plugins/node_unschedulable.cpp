#include "planner/framework/plugins/node_unschedulable.h"

#include "planner/framework/taints.h"

namespace hamisim::planner::framework {

FilterStatus NodeUnschedulable::filter(const PodInfo& pod, const PluginState*,
                                       const NodeInfo& node) const {
  if (!node.node().spec.unschedulable) return FilterStatus::success();
  static const model::Taint kUnschedulableTaint{"node.kubernetes.io/unschedulable", "",
                                                "NoSchedule"};
  if (tolerations_tolerate_taint(pod.pod().spec.tolerations, kUnschedulableTaint)) {
    return FilterStatus::success();
  }
  return FilterStatus::make(FilterCode::kUnschedulableAndUnresolvable, kName,
                            std::string(kReasonUnschedulable));
}

}  // namespace hamisim::planner::framework
