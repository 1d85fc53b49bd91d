#include "planner/framework/plugins/node_affinity.h"

#include <algorithm>
#include <optional>
#include <set>

#include "planner/framework/labels.h"

namespace hamisim::planner::framework {
namespace {

struct NodeAffinityState final : PluginState {
  explicit NodeAffinityState(RequiredNodeAffinity a) : affinity(std::move(a)) {}
  RequiredNodeAffinity affinity;
};

// The node names every term pins through `metadata.name In (...)`, unioned over the terms;
// nullopt when some term pins no name (then every node stays eligible).
std::optional<std::set<std::string>> pinned_node_names(const model::NodeSelector& required) {
  std::set<std::string> all;
  for (const auto& term : required.terms) {
    std::optional<std::set<std::string>> names;
    for (const auto& f : term.match_fields) {
      if (f.key != "metadata.name" || f.op != "In") continue;
      std::set<std::string> values(f.values.begin(), f.values.end());
      if (!names) {
        names = std::move(values);
      } else {
        std::set<std::string> both;
        std::set_intersection(names->begin(), names->end(), values.begin(), values.end(),
                              std::inserter(both, both.begin()));
        names = std::move(both);
      }
    }
    if (!names) return std::nullopt;
    all.insert(names->begin(), names->end());
  }
  return all;
}

}  // namespace

FilterStatus NodeAffinity::pre_filter(const PodInfo& pod, const ClusterSnapshot&,
                                      std::unique_ptr<PluginState>& state) const {
  const auto& spec = pod.pod().spec;
  const model::NodeSelector* required = nullptr;
  if (spec.affinity && spec.affinity->node_affinity && spec.affinity->node_affinity->required) {
    required = &*spec.affinity->node_affinity->required;
  }
  if (required == nullptr && spec.node_selector.empty()) return FilterStatus::skip();
  state = std::make_unique<NodeAffinityState>(RequiredNodeAffinity::of(pod.pod()));
  if (required != nullptr && !required->terms.empty()) {
    auto names = pinned_node_names(*required);
    if (names && names->empty()) {
      return FilterStatus::make(FilterCode::kUnschedulableAndUnresolvable, kName,
                                std::string(kReasonConflict));
    }
  }
  return FilterStatus::success();
}

FilterStatus NodeAffinity::filter(const PodInfo& pod, const PluginState* state,
                                  const NodeInfo& node) const {
  bool match;
  if (const auto* s = static_cast<const NodeAffinityState*>(state)) {
    match = s->affinity.matches(node.node());
  } else {
    match = RequiredNodeAffinity::of(pod.pod()).matches(node.node());
  }
  if (match) return FilterStatus::success();
  return FilterStatus::make(FilterCode::kUnschedulableAndUnresolvable, kName,
                            std::string(kReasonPod));
}

}  // namespace hamisim::planner::framework
