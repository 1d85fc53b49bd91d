#pragma once
// InterPodAffinity (Filter part), required terms only:
//  1. the incoming pod's required affinity terms: the node must carry every term's topology
//     key, and each term's domain (key=value of this node) must hold a pod matching all the
//     pod's affinity terms — except that the first pod of a group may land on any node with
//     those keys when no pod in the cluster matches and the pod matches its own terms;
//  2. the incoming pod's required anti-affinity terms: no pod matching a term in the node's
//     domain for that term's key;
//  3. existing pods' required anti-affinity terms (symmetry): no existing pod whose term
//     matches the incoming pod may sit in the same domain (any node label key/value pair the
//     term's topology key names).
// Namespaces: a term names its namespaces, or selects them with namespaceSelector (resolved
// against the namespaces registered in the snapshot), or defaults to the pod's namespace.
//
// Reasons: "node(s) didn't match pod affinity rules" (UnschedulableAndUnresolvable),
// "node(s) didn't match pod anti-affinity rules" (Unschedulable),
// "node(s) didn't satisfy existing pods anti-affinity rules" (Unschedulable).
// An invalid selector in the incoming pod's required terms fails PreFilter with Error.

#include "planner/framework/plugin.h"

namespace hamisim::planner::framework {

class InterPodAffinity final : public FilterPlugin {
 public:
  static constexpr std::string_view kName = "InterPodAffinity";
  static constexpr std::string_view kReasonAffinity = "node(s) didn't match pod affinity rules";
  static constexpr std::string_view kReasonAntiAffinity =
      "node(s) didn't match pod anti-affinity rules";
  static constexpr std::string_view kReasonExistingAntiAffinity =
      "node(s) didn't satisfy existing pods anti-affinity rules";

  std::string_view name() const override { return kName; }
  FilterStatus pre_filter(const PodInfo& pod, const ClusterSnapshot& snapshot,
                          std::unique_ptr<PluginState>& state) const override;
  // Requires the state pre_filter stored; without it (pre_filter skipped) the node passes.
  FilterStatus filter(const PodInfo& pod, const PluginState* state,
                      const NodeInfo& node) const override;
};

}  // namespace hamisim::planner::framework
