#pragma once
// DynamicResources: kube-scheduler's DRA plugin as Cluster Autoscaler's simulation runs it
// (../shared/reference/dra.md §2.1, §5.2). PreFilter resolves the pod's claims; Filter checks
// that claims already allocated can be used on the node and allocates the others there with
// the structured allocator (dra/allocator), all claims of the pod together, and keeps what it
// allocated on each node in the pod's state; Reserve returns the pod carrying the allocation
// Filter made on the chosen node, so the snapshot counts their devices while the pod is placed.
//
// Where hamisim plans rather than schedules: a claim a template would make for the pod but that
// does not exist yet (a pending pod of a Deployment, or a --pods what-if pod) is made from its
// ResourceClaimTemplate, named "<pod>-<claim>", instead of failing with "ResourceClaim not
// created yet" (docs/dra.md).

#include <mutex>

#include "planner/framework/plugin.h"

namespace hamisim::planner::framework {

class DynamicResources final : public FilterPlugin {
 public:
  static constexpr std::string_view kName = "DynamicResources";
  static constexpr std::string_view kReasonNotAvailable = "resourceclaim not available on the node";

  std::string_view name() const override { return kName; }
  FilterStatus pre_filter(const PodInfo& pod, const ClusterSnapshot& snapshot,
                          std::unique_ptr<PluginState>& state) const override;
  FilterStatus filter(const PodInfo& pod, const PluginState* state,
                      const NodeInfo& node) const override;
  Result<PodInfoPtr> reserve(const PodInfo& pod, const PluginState* state,
                             const NodeInfo& node) const override;

 private:
  // Compiled selectors and share IDs last the plugin's life (one plan); Filter may run on
  // several threads.
  mutable std::mutex mu_;
  mutable dra::SelectorCache selectors_;
  mutable dra::ShareIds share_ids_;
};

}  // namespace hamisim::planner::framework
