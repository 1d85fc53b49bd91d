#pragma once
// NodeName: a pod with spec.nodeName fits only the node of that name.

#include "planner/framework/plugin.h"

namespace hamisim::planner::framework {

class NodeName final : public FilterPlugin {
 public:
  static constexpr std::string_view kName = "NodeName";
  static constexpr std::string_view kReason = "node(s) didn't match the requested node name";
  std::string_view name() const override { return kName; }
  FilterStatus filter(const PodInfo& pod, const PluginState* state,
                      const NodeInfo& node) const override;
};

}  // namespace hamisim::planner::framework
