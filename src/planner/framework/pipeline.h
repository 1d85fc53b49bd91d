#pragma once
// FilterPipeline: kube-scheduler's Filter phase over a ClusterSnapshot, as CA's simulator
// runs it (ca-scale-up.md §3.5, §3.6): PreFilter once per pod, then the Filter plugins in
// order on each node, stopping at the first plugin that rejects the node. The rejecting
// plugin's status is kept so callers can explain every rejection.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "planner/framework/plugin.h"
#include "planner/framework/plugins/node_resources_fit.h"

namespace hamisim::planner::framework {

// The per-pod result of PreFilter: each plugin's state (or that it skipped), or the status
// that fails the pod everywhere. Valid while the snapshot is unchanged.
class PodFilterState {
 public:
  const FilterStatus& pre_filter_status() const { return status_; }
  bool ok() const { return status_.ok(); }

 private:
  friend class FilterPipeline;
  FilterStatus status_;
  std::vector<std::unique_ptr<PluginState>> states_;
  std::vector<bool> skipped_;
};

struct NodeVerdict {
  const NodeInfo* node = nullptr;
  FilterStatus status;
};

// Every node evaluated, in snapshot order.
struct FilterResult {
  FilterStatus pre_filter;  // not ok(): no node was evaluated
  std::vector<const NodeInfo*> passing;
  std::vector<NodeVerdict> rejected;  // the first failing plugin's status per node
};

struct PassingNodeSearch {
  FilterStatus pre_filter;  // not ok(): no node was evaluated
  // The pod's PreFilter and Filter state (CycleState), for reserve() on the node found.
  std::shared_ptr<const PodFilterState> state;
  const NodeInfo* node = nullptr;     // the first node that passed, null when none did
  size_t order_index = 0;             // its position in the order walked (from the start index)
  std::vector<NodeVerdict> rejected;  // nodes evaluated before it that failed, in walk order
};

struct PassingNodeOptions {
  // Index (in snapshot order) of the first node tried; the walk wraps around. CA's default
  // ordering starts right after the last match; its bookkeeping belongs to the caller.
  size_t start_index = 0;
  // CA skips nodes with spec.unschedulable before running any filter.
  bool skip_unschedulable_nodes = true;
  // CA's IsNodeAcceptable; null accepts every node.
  std::function<bool(const NodeInfo&)> is_acceptable;
};

class FilterPipeline {
 public:
  // Plugins run in the given order.
  explicit FilterPipeline(std::vector<std::unique_ptr<FilterPlugin>> plugins);
  // kube-scheduler's default Filter order: NodeUnschedulable, NodeName, TaintToleration,
  // NodeAffinity, NodePorts, NodeResourcesFit, PodTopologySpread, InterPodAffinity, then
  // DynamicResources (added when DRA is on, the most expensive, so last).
  static FilterPipeline make_default(NodeResourcesFitArgs fit_args = {});

  FilterPipeline(FilterPipeline&&) = default;
  FilterPipeline& operator=(FilterPipeline&&) = default;

  const std::vector<std::unique_ptr<FilterPlugin>>& plugins() const { return plugins_; }

  // PreFilter of every plugin, in order; stops at the first that fails the pod.
  PodFilterState pre_filter(const PodInfo& pod, const ClusterSnapshot& snapshot) const;
  // Filter of every plugin not skipped, in order; the first non-success status wins.
  // `state` must come from pre_filter for this pod and an unchanged snapshot, and be ok().
  FilterStatus filter(const PodFilterState& state, const PodInfo& pod, const NodeInfo& node) const;

  // Every node of the snapshot, in order (kube-scheduler's findNodesThatPassFilters).
  FilterResult find_passing_nodes(const PodInfo& pod, const ClusterSnapshot& snapshot) const;
  // CA's RunFiltersUntilPassingNode without extenders: the first node, walking from
  // options.start_index and wrapping, that is acceptable and passes every filter.
  PassingNodeSearch find_first_passing_node(const PodInfo& pod, const ClusterSnapshot& snapshot,
                                            const PassingNodeOptions& options = {}) const;
  // CA's RunFiltersOnNode: PreFilter then Filter on one node. A PreFilter failure is
  // returned as is; a node that does not exist is an Error status. `state`, when given,
  // receives the pod's state for reserve().
  FilterStatus run_on_node(const PodInfo& pod, const ClusterSnapshot& snapshot,
                           std::string_view node_name,
                           std::shared_ptr<const PodFilterState>* state = nullptr) const;
  // Reserve of every plugin not skipped, in order, once the pod is placed on `node`: the pod
  // to store (each plugin's changes applied in turn), or null to store it unchanged. `state`
  // is the pod's, from the pre_filter and the filter() on `node` that placed it.
  Result<PodInfoPtr> reserve(const PodInfo& pod, const PodFilterState& state,
                             const NodeInfo& node) const;

 private:
  std::vector<std::unique_ptr<FilterPlugin>> plugins_;
};

}  // namespace hamisim::planner::framework
