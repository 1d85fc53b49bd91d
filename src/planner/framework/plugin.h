#pragma once
// The Filter-plugin interface, modelled on kube-scheduler's framework: each plugin answers
// one question about (pod, node); an optional per-pod PreFilter step precomputes what the
// plugin needs (parsed selectors, topology counts) once per pod and snapshot state.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "planner/framework/snapshot.h"

namespace hamisim::planner::framework {

enum class FilterCode {
  kSuccess,
  // The node does not fit now; a change on the node (e.g. evicting pods) might help.
  kUnschedulable,
  // The node cannot fit this pod whatever happens to the pods on it.
  kUnschedulableAndUnresolvable,
  // Internal or input error (e.g. an invalid selector in the pod).
  kError,
  // PreFilter only: the plugin has nothing to check for this pod; its Filter is not run.
  kSkip,
};

std::string_view filter_code_name(FilterCode code);

struct FilterStatus {
  FilterCode code = FilterCode::kSuccess;
  std::string plugin;                // the plugin that decided; empty on success
  std::vector<std::string> reasons;  // kube-scheduler's reason strings

  bool ok() const { return code == FilterCode::kSuccess; }
  bool is_rejection() const {
    return code == FilterCode::kUnschedulable || code == FilterCode::kUnschedulableAndUnresolvable;
  }

  static FilterStatus success() { return {}; }
  static FilterStatus skip() { return {FilterCode::kSkip, {}, {}}; }
  static FilterStatus make(FilterCode code, std::string_view plugin, std::string reason) {
    return {code, std::string(plugin), {std::move(reason)}};
  }
};

// What a plugin's PreFilter hands to its Filter for one pod.
struct PluginState {
  virtual ~PluginState() = default;
};

class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual std::string_view name() const = 0;

  // Runs once per pod before filter() on any node, against the snapshot as it is now; the
  // state it stores is valid until the snapshot changes. Success: filter() runs with the
  // state. Skip: filter() is not run (the plugin passes every node). A rejection or error
  // fails the pod on every node.
  virtual FilterStatus pre_filter(const PodInfo& pod, const ClusterSnapshot& snapshot,
                                  std::unique_ptr<PluginState>& state) const {
    return FilterStatus::success();
  }

  // `state` is what pre_filter stored (may be null when it stored nothing).
  virtual FilterStatus filter(const PodInfo& pod, const PluginState* state,
                              const NodeInfo& node) const = 0;

  // Reserve, once the pod is placed on `node` (CA runs it for pods with claims): the pod as it
  // is to be stored in the snapshot when the plugin records something with it (DRA: the claims
  // it allocated there); null when it stores the pod unchanged. An error is an internal one.
  // `state` is what pre_filter stored and filter() on `node` added to, as kube-scheduler's
  // CycleState carries them from Filter to Reserve: nothing is decided again here.
  virtual Result<PodInfoPtr> reserve(const PodInfo& pod, const PluginState* state,
                                     const NodeInfo& node) const {
    return PodInfoPtr();
  }
};

}  // namespace hamisim::planner::framework
