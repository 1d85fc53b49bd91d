#include "planner/framework/pipeline.h"

#include <fmt/format.h>

#include "planner/framework/plugins/dynamic_resources.h"
#include "planner/framework/plugins/inter_pod_affinity.h"
#include "planner/framework/plugins/node_affinity.h"
#include "planner/framework/plugins/node_name.h"
#include "planner/framework/plugins/node_ports.h"
#include "planner/framework/plugins/node_unschedulable.h"
#include "planner/framework/plugins/pod_topology_spread.h"
#include "planner/framework/plugins/taint_toleration.h"

namespace hamisim::planner::framework {

std::string_view filter_code_name(FilterCode code) {
  switch (code) {
    case FilterCode::kSuccess:
      return "Success";
    case FilterCode::kUnschedulable:
      return "Unschedulable";
    case FilterCode::kUnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case FilterCode::kError:
      return "Error";
    case FilterCode::kSkip:
      return "Skip";
  }
  return "Unknown";
}

FilterPipeline::FilterPipeline(std::vector<std::unique_ptr<FilterPlugin>> plugins)
    : plugins_(std::move(plugins)) {}

FilterPipeline FilterPipeline::make_default(NodeResourcesFitArgs fit_args) {
  std::vector<std::unique_ptr<FilterPlugin>> plugins;
  plugins.push_back(std::make_unique<NodeUnschedulable>());
  plugins.push_back(std::make_unique<NodeName>());
  plugins.push_back(std::make_unique<TaintToleration>());
  plugins.push_back(std::make_unique<NodeAffinity>());
  plugins.push_back(std::make_unique<NodePorts>());
  plugins.push_back(std::make_unique<NodeResourcesFit>(std::move(fit_args)));
  plugins.push_back(std::make_unique<PodTopologySpread>());
  plugins.push_back(std::make_unique<InterPodAffinity>());
  plugins.push_back(std::make_unique<DynamicResources>());
  return FilterPipeline(std::move(plugins));
}

Result<PodInfoPtr> FilterPipeline::reserve(const PodInfo& pod, const PodFilterState& state,
                                           const NodeInfo& node) const {
  if (!state.ok() || state.states_.size() != plugins_.size()) {
    return make_error(
        fmt::format("reserve on node \"{}\" without the pod's filter state", node.name()));
  }
  PodInfoPtr current;
  for (size_t i = 0; i < plugins_.size(); ++i) {
    if (state.skipped_[i]) continue;
    auto next = plugins_[i]->reserve(current ? *current : pod, state.states_[i].get(), node);
    if (!next.ok()) return next.error();
    if (*next) current = std::move(*next);
  }
  return current;
}

PodFilterState FilterPipeline::pre_filter(const PodInfo& pod,
                                          const ClusterSnapshot& snapshot) const {
  PodFilterState state;
  state.states_.resize(plugins_.size());
  state.skipped_.assign(plugins_.size(), false);
  for (size_t i = 0; i < plugins_.size(); ++i) {
    FilterStatus s = plugins_[i]->pre_filter(pod, snapshot, state.states_[i]);
    if (s.code == FilterCode::kSkip) {
      state.skipped_[i] = true;
      continue;
    }
    if (!s.ok()) {
      if (s.plugin.empty()) s.plugin = std::string(plugins_[i]->name());
      state.status_ = std::move(s);
      return state;
    }
  }
  return state;
}

FilterStatus FilterPipeline::filter(const PodFilterState& state, const PodInfo& pod,
                                    const NodeInfo& node) const {
  if (!state.ok()) return state.status_;
  for (size_t i = 0; i < plugins_.size(); ++i) {
    if (state.skipped_[i]) continue;
    FilterStatus s = plugins_[i]->filter(pod, state.states_[i].get(), node);
    if (s.ok()) continue;
    if (s.code == FilterCode::kSkip) continue;  // not a Filter answer; treat as a pass
    if (s.plugin.empty()) s.plugin = std::string(plugins_[i]->name());
    return s;
  }
  return FilterStatus::success();
}

FilterResult FilterPipeline::find_passing_nodes(const PodInfo& pod,
                                                const ClusterSnapshot& snapshot) const {
  FilterResult result;
  PodFilterState state = pre_filter(pod, snapshot);
  result.pre_filter = state.pre_filter_status();
  if (!state.ok()) return result;
  for (const NodeInfo* node : snapshot.nodes()) {
    if (snapshot.stop_requested()) break;
    snapshot.step();
    FilterStatus s = filter(state, pod, *node);
    if (s.ok()) {
      result.passing.push_back(node);
    } else {
      result.rejected.push_back({node, std::move(s)});
    }
  }
  return result;
}

PassingNodeSearch FilterPipeline::find_first_passing_node(const PodInfo& pod,
                                                          const ClusterSnapshot& snapshot,
                                                          const PassingNodeOptions& options) const {
  PassingNodeSearch result;
  auto shared = std::make_shared<PodFilterState>(pre_filter(pod, snapshot));
  const PodFilterState& state = *shared;
  result.pre_filter = state.pre_filter_status();
  if (!state.ok()) return result;
  result.state = std::move(shared);
  auto nodes = snapshot.nodes();
  const size_t n = nodes.size();
  if (n == 0) return result;
  const size_t start = options.start_index % n;
  for (size_t i = 0; i < n; ++i) {
    if (snapshot.stop_requested()) break;  // no node found; the caller drops the answer
    const NodeInfo* node = nodes[(start + i) % n];
    if (options.skip_unschedulable_nodes && node->node().spec.unschedulable) continue;
    if (options.is_acceptable && !options.is_acceptable(*node)) continue;
    snapshot.step();
    FilterStatus s = filter(state, pod, *node);
    if (s.ok()) {
      result.node = node;
      result.order_index = i;
      return result;
    }
    result.rejected.push_back({node, std::move(s)});
  }
  return result;
}

FilterStatus FilterPipeline::run_on_node(const PodInfo& pod, const ClusterSnapshot& snapshot,
                                         std::string_view node_name,
                                         std::shared_ptr<const PodFilterState>* state_out) const {
  const NodeInfo* node = snapshot.node(node_name);
  if (node == nullptr) {
    return FilterStatus::make(FilterCode::kError, "",
                              fmt::format("node \"{}\" not found in the snapshot", node_name));
  }
  auto state = std::make_shared<PodFilterState>(pre_filter(pod, snapshot));
  if (!state->ok()) return state->pre_filter_status();
  snapshot.step();
  FilterStatus status = filter(*state, pod, *node);
  if (state_out != nullptr) *state_out = std::move(state);
  return status;
}

}  // namespace hamisim::planner::framework
