#pragma once
// NodeAffinity: spec.nodeSelector AND the required node-affinity terms (terms ORed,
// requirements inside a term ANDed; matchExpressions over labels with In, NotIn, Exists,
// DoesNotExist, Gt, Lt; matchFields on metadata.name). Preferred terms are scoring only.
// A term whose requirements do not parse matches no node (kube-scheduler ignores the error).

#include "planner/framework/plugin.h"

namespace hamisim::planner::framework {

class NodeAffinity final : public FilterPlugin {
 public:
  static constexpr std::string_view kName = "NodeAffinity";
  static constexpr std::string_view kReasonPod =
      "node(s) didn't match Pod's node affinity/selector";
  // PreFilter rejection: every term pins metadata.name to a set of names and the sets
  // intersect to nothing.
  static constexpr std::string_view kReasonConflict = "pod affinity terms conflict";
  std::string_view name() const override { return kName; }
  FilterStatus pre_filter(const PodInfo& pod, const ClusterSnapshot& snapshot,
                          std::unique_ptr<PluginState>& state) const override;
  FilterStatus filter(const PodInfo& pod, const PluginState* state,
                      const NodeInfo& node) const override;
};

}  // namespace hamisim::planner::framework
