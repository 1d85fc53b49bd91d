#include "planner/framework/plugins/inter_pod_affinity.h"

#include <map>
#include <utility>

namespace hamisim::planner::framework {
namespace {

using TopologyPair = std::pair<std::string, std::string>;
using TopologyCounts = std::map<TopologyPair, int64_t, std::less<>>;

struct AffinityState final : PluginState {
  std::vector<AffinityTerm> affinity;       // namespaces resolved
  std::vector<AffinityTerm> anti_affinity;  // namespaces resolved
  TopologyCounts affinity_counts;
  TopologyCounts anti_affinity_counts;
  TopologyCounts existing_anti_affinity_counts;
  bool pod_matches_own_affinity = false;
};

// Resolve a non-empty namespaceSelector into names (only namespaces known to the snapshot
// exist), as kube-scheduler does for the incoming pod's terms before matching.
std::vector<AffinityTerm> resolve_namespaces(const std::vector<AffinityTerm>& terms,
                                             const ClusterSnapshot& snapshot) {
  std::vector<AffinityTerm> out = terms;
  for (auto& term : out) {
    if (term.namespace_selector.empty()) continue;  // Everything stays a match-all selector
    for (const auto& [ns, labels] : snapshot.namespaces()) {
      if (term.namespace_selector.matches(labels)) term.namespaces.insert(ns);
    }
    term.namespace_selector = Selector::nothing();
  }
  return out;
}

void bump(TopologyCounts& counts, const model::StringMap& node_labels, const std::string& key) {
  auto it = node_labels.find(key);
  if (it != node_labels.end()) ++counts[{key, it->second}];
}

bool matches_all(const std::vector<AffinityTerm>& terms, const model::Pod& pod) {
  if (terms.empty()) return false;
  for (const auto& t : terms) {
    if (!t.matches(pod, nullptr)) return false;
  }
  return true;
}

}  // namespace

FilterStatus InterPodAffinity::pre_filter(const PodInfo& pod, const ClusterSnapshot& snapshot,
                                          std::unique_ptr<PluginState>& state) const {
  if (pod.affinity_parse_error()) {
    return FilterStatus::make(FilterCode::kError, kName,
                              "parsing pod: " + pod.affinity_parse_error()->message);
  }
  const bool has_own_terms =
      !pod.required_affinity_terms().empty() || !pod.required_anti_affinity_terms().empty();
  if (!has_own_terms && snapshot.pods_with_required_anti_affinity() == 0) {
    return FilterStatus::skip();
  }
  auto nodes = snapshot.nodes();

  auto s = std::make_unique<AffinityState>();
  s->affinity = resolve_namespaces(pod.required_affinity_terms(), snapshot);
  s->anti_affinity = resolve_namespaces(pod.required_anti_affinity_terms(), snapshot);
  s->pod_matches_own_affinity = matches_all(s->affinity, pod.pod());
  const model::StringMap* ns_labels = snapshot.namespace_labels(pod.namespace_());

  for (const NodeInfo* n : nodes) {
    const auto& labels = n->labels();
    if (n->pods_with_required_anti_affinity() > 0) {
      for (const auto& existing : n->pods()) {
        for (const auto& term : existing->required_anti_affinity_terms()) {
          if (term.matches(pod.pod(), ns_labels)) {
            bump(s->existing_anti_affinity_counts, labels, term.topology_key);
          }
        }
      }
    }
    if (!has_own_terms) continue;
    for (const auto& existing : n->pods()) {
      // An existing pod counts for affinity only if it matches every affinity term.
      if (matches_all(s->affinity, existing->pod())) {
        for (const auto& term : s->affinity) bump(s->affinity_counts, labels, term.topology_key);
      }
      for (const auto& term : s->anti_affinity) {
        if (term.matches(existing->pod(), nullptr)) {
          bump(s->anti_affinity_counts, labels, term.topology_key);
        }
      }
    }
  }
  state = std::move(s);
  return FilterStatus::success();
}

FilterStatus InterPodAffinity::filter(const PodInfo&, const PluginState* state,
                                      const NodeInfo& node) const {
  if (state == nullptr) return FilterStatus::success();
  const auto& s = *static_cast<const AffinityState*>(state);
  const auto& labels = node.labels();

  // 1. Incoming pod's affinity.
  bool pods_exist = true;
  for (const auto& term : s.affinity) {
    auto it = labels.find(term.topology_key);
    if (it == labels.end()) {
      return FilterStatus::make(FilterCode::kUnschedulableAndUnresolvable, kName,
                                std::string(kReasonAffinity));
    }
    auto c = s.affinity_counts.find(TopologyPair{term.topology_key, it->second});
    if (c == s.affinity_counts.end() || c->second <= 0) pods_exist = false;
  }
  if (!pods_exist && !(s.affinity_counts.empty() && s.pod_matches_own_affinity)) {
    return FilterStatus::make(FilterCode::kUnschedulableAndUnresolvable, kName,
                              std::string(kReasonAffinity));
  }

  // 2. Incoming pod's anti-affinity.
  if (!s.anti_affinity_counts.empty()) {
    for (const auto& term : s.anti_affinity) {
      auto it = labels.find(term.topology_key);
      if (it == labels.end()) continue;
      auto c = s.anti_affinity_counts.find(TopologyPair{term.topology_key, it->second});
      if (c != s.anti_affinity_counts.end() && c->second > 0) {
        return FilterStatus::make(FilterCode::kUnschedulable, kName,
                                  std::string(kReasonAntiAffinity));
      }
    }
  }

  // 3. Existing pods' anti-affinity against the incoming pod.
  if (!s.existing_anti_affinity_counts.empty()) {
    for (const auto& [key, value] : labels) {
      auto c = s.existing_anti_affinity_counts.find(TopologyPair{key, value});
      if (c != s.existing_anti_affinity_counts.end() && c->second > 0) {
        return FilterStatus::make(FilterCode::kUnschedulable, kName,
                                  std::string(kReasonExistingAntiAffinity));
      }
    }
  }
  return FilterStatus::success();
}

}  // namespace hamisim::planner::framework
