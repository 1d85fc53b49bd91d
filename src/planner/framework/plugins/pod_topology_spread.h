#pragma once
// PodTopologySpread (Filter part): the pod's constraints with whenUnsatisfiable
// DoNotSchedule. For each constraint, over the eligible domains (the distinct values of its
// topology key on nodes that carry every constraint's key and pass the inclusion policies:
// nodeAffinityPolicy Honor (default) = the pod's nodeSelector/required node affinity,
// nodeTaintsPolicy Honor = no untolerated NoSchedule/NoExecute taint, Ignore (default)):
//   matching pods in this node's domain + (1 if the pod matches its own selector)
//     - global minimum  <=  maxSkew
// where the global minimum is the smallest count among eligible domains, or 0 when there are
// fewer eligible domains than minDomains (default 1). Pods match a constraint when they are in
// the incoming pod's namespace, not terminating, and match its labelSelector merged with
// matchLabelKeys (the incoming pod's values for those keys). A nil labelSelector matches no
// pod; an empty one counts no existing pod (kube-scheduler's countPodsMatchSelector).
//
// Reasons: "node(s) didn't match pod topology spread constraints (missing required label)"
// (UnschedulableAndUnresolvable) for a node without the topology key,
// "node(s) didn't match pod topology spread constraints" (Unschedulable) for skew.
// Cluster-level default constraints are ScheduleAnyway in kube-scheduler, so they do not
// apply to Filter and are not modelled.

#include "planner/framework/plugin.h"

namespace hamisim::planner::framework {

class PodTopologySpread final : public FilterPlugin {
 public:
  static constexpr std::string_view kName = "PodTopologySpread";
  static constexpr std::string_view kReasonConstraintsNotMatch =
      "node(s) didn't match pod topology spread constraints";
  static constexpr std::string_view kReasonNodeLabelNotMatch =
      "node(s) didn't match pod topology spread constraints (missing required label)";

  std::string_view name() const override { return kName; }
  FilterStatus pre_filter(const PodInfo& pod, const ClusterSnapshot& snapshot,
                          std::unique_ptr<PluginState>& state) const override;
  // Requires the state pre_filter stored; without it (pre_filter skipped) the node passes.
  FilterStatus filter(const PodInfo& pod, const PluginState* state,
                      const NodeInfo& node) const override;
};

}  // namespace hamisim::planner::framework
