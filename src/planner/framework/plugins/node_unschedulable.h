#pragma once
// NodeUnschedulable: a cordoned node (spec.unschedulable) accepts only pods that tolerate the
// node.kubernetes.io/unschedulable:NoSchedule taint.

#include "planner/framework/plugin.h"

namespace hamisim::planner::framework {

class NodeUnschedulable final : public FilterPlugin {
 public:
  static constexpr std::string_view kName = "NodeUnschedulable";
  static constexpr std::string_view kReasonUnschedulable = "node(s) were unschedulable";
  std::string_view name() const override { return kName; }
  FilterStatus filter(const PodInfo& pod, const PluginState* state,
                      const NodeInfo& node) const override;
};

}  // namespace hamisim::planner::framework
