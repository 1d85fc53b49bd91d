#pragma once
// NodePorts: every host port the pod wants (app containers and sidecar init containers) must
// be free on the node for its protocol and IP; 0.0.0.0 (or an empty hostIP) clashes with
// every IP, a specific IP with itself and with 0.0.0.0.

#include "planner/framework/plugin.h"

namespace hamisim::planner::framework {

class NodePorts final : public FilterPlugin {
 public:
  static constexpr std::string_view kName = "NodePorts";
  static constexpr std::string_view kReason =
      "node(s) didn't have free ports for the requested pod ports";
  std::string_view name() const override { return kName; }
  // Skips pods that want no host port.
  FilterStatus pre_filter(const PodInfo& pod, const ClusterSnapshot& snapshot,
                          std::unique_ptr<PluginState>& state) const override;
  FilterStatus filter(const PodInfo& pod, const PluginState* state,
                      const NodeInfo& node) const override;
};

}  // namespace hamisim::planner::framework
