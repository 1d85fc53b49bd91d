#pragma once
// NodeResourcesFit (Filter part): the pod's effective request (see resources.h) must fit in
// allocatable minus what the node's pods already request, for cpu, memory,
// ephemeral-storage, every scalar resource it requests (extended resources, hugepages-*),
// and the pod count (the pod counts 1 against allocatable "pods").
//
// NodeResourcesFitArgs' ignoredResources (exact names) and ignoredResourceGroups (the
// domain before '/') skip *extended* resources only; cpu, memory, ephemeral-storage, pods,
// hugepages and kubernetes.io/ names are always checked (ca-scale-up.md §2.5).
//
// Reasons, in this order: "Too many pods", "Insufficient cpu", "Insufficient memory",
// "Insufficient ephemeral-storage", then "Insufficient <name>" per scalar resource in name
// order (kube-scheduler walks a Go map here; we fix the order). The status is
// UnschedulableAndUnresolvable when some request exceeds the node's allocatable outright,
// Unschedulable otherwise ("Too many pods" alone is Unschedulable).
//
// An extended resource a DeviceClass serves (KEP-5004) is not checked on a node with no
// allocatable for it: DRA serves it there (DynamicResources).

#include <set>
#include <string>
#include <vector>

#include "planner/framework/plugin.h"

namespace hamisim::planner::framework {

struct NodeResourcesFitArgs {
  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_resource_groups;
};

// One resource the pod does not fit (noderesources.InsufficientResource).
struct InsufficientResource {
  std::string resource;
  std::string reason;
  int64_t requested = 0;
  int64_t used = 0;
  int64_t capacity = 0;
  bool unresolvable = false;
};

class NodeResourcesFit final : public FilterPlugin {
 public:
  static constexpr std::string_view kName = "NodeResourcesFit";
  explicit NodeResourcesFit(NodeResourcesFitArgs args = {});

  std::string_view name() const override { return kName; }
  FilterStatus pre_filter(const PodInfo& pod, const ClusterSnapshot& snapshot,
                          std::unique_ptr<PluginState>& state) const override;
  FilterStatus filter(const PodInfo& pod, const PluginState* state,
                      const NodeInfo& node) const override;

  // The structured answer behind filter(): empty when the request fits.
  // `dra_served`: extended resources a DeviceClass serves, skipped where the node has none.
  std::vector<InsufficientResource> insufficient_resources(
      const Resource& request, const NodeInfo& node,
      const std::vector<std::string>* dra_served = nullptr) const;

 private:
  // The request without the extended resources this plugin ignores.
  Resource counted(Resource request) const;
  // insufficient_resources() of a counted request.
  std::vector<InsufficientResource> shortfalls(const Resource& counted, const NodeInfo& node,
                                               const std::vector<std::string>* dra_served) const;

  std::set<std::string, std::less<>> ignored_resources_;
  std::set<std::string, std::less<>> ignored_groups_;
};

}  // namespace hamisim::planner::framework
