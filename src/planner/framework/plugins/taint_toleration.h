#pragma once
// TaintToleration: every NoSchedule and NoExecute taint of the node must be tolerated by the
// pod; PreferNoSchedule taints only affect scoring.

#include "planner/framework/plugin.h"

namespace hamisim::planner::framework {

class TaintToleration final : public FilterPlugin {
 public:
  static constexpr std::string_view kName = "TaintToleration";
  std::string_view name() const override { return kName; }
  // Reason: "node(s) had untolerated taint {<key>: <value>}" for the first untolerated taint.
  FilterStatus filter(const PodInfo& pod, const PluginState* state,
                      const NodeInfo& node) const override;
};

}  // namespace hamisim::planner::framework
