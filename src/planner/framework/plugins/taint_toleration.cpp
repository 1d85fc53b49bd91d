#include "planner/framework/plugins/taint_toleration.h"

#include <fmt/format.h>

#include "planner/framework/taints.h"

namespace hamisim::planner::framework {

FilterStatus TaintToleration::filter(const PodInfo& pod, const PluginState*,
                                     const NodeInfo& node) const {
  const model::Taint* taint =
      find_untolerated_do_not_schedule_taint(node.node().spec.taints, pod.pod().spec.tolerations);
  if (taint == nullptr) return FilterStatus::success();
  return FilterStatus::make(
      FilterCode::kUnschedulableAndUnresolvable, kName,
      fmt::format("node(s) had untolerated taint {{{}: {}}}", taint->key, taint->value));
}

}  // namespace hamisim::planner::framework
