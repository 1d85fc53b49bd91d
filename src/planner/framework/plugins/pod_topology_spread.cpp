#include "planner/framework/plugins/pod_topology_spread.h"

#include <algorithm>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "planner/framework/labels.h"
#include "planner/framework/taints.h"

namespace hamisim::planner::framework {
namespace {

struct Constraint {
  int32_t max_skew = 1;
  std::string topology_key;
  Selector selector = Selector::nothing();
  int32_t min_domains = 1;
  bool honor_node_affinity = true;
  bool honor_node_taints = false;
};

struct SpreadState final : PluginState {
  std::vector<Constraint> constraints;
  // Per constraint: topology value -> matching pods, over eligible domains only.
  std::vector<std::map<std::string, int64_t, std::less<>>> counts;
  std::vector<bool> self_match;
  // Per constraint: the global minimum the skew is measured against.
  std::vector<int64_t> global_min;
};

Result<std::vector<Constraint>> required_constraints(const model::Pod& pod) {
  std::vector<Constraint> out;
  const auto& list = pod.spec.topology_spread_constraints;
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& c = list[i];
    if (c.when_unsatisfiable != "DoNotSchedule") continue;
    auto selector = Selector::from_label_selector(c.label_selector ? &*c.label_selector : nullptr);
    if (!selector) {
      return make_error(
          fmt::format("topologySpreadConstraints[{}]: {}", i, selector.error().message));
    }
    Constraint out_c;
    out_c.max_skew = c.max_skew;
    out_c.topology_key = c.topology_key;
    out_c.selector = std::move(selector.value());
    // matchLabelKeys: the incoming pod's values for those keys join the selector.
    for (const auto& key : c.match_label_keys) {
      auto it = pod.metadata.labels.find(key);
      if (it == pod.metadata.labels.end()) continue;
      Requirement r;
      r.key = key;
      r.op = SelectorOp::kEquals;
      r.values = {it->second};
      out_c.selector.add(std::move(r));
    }
    if (c.min_domains) out_c.min_domains = *c.min_domains;
    out_c.honor_node_affinity = c.node_affinity_policy != "Ignore";
    out_c.honor_node_taints = c.node_taints_policy == "Honor";
    out.push_back(std::move(out_c));
  }
  return out;
}

int64_t count_matching(const NodeInfo& node, const Selector& selector, const std::string& ns) {
  if (selector.empty()) return 0;
  int64_t n = 0;
  for (const auto& p : node.pods()) {
    const auto& pod = p->pod();
    if (pod.metadata.deletion_timestamp || pod.metadata.namespace_ != ns) continue;
    if (selector.matches(pod.metadata.labels)) ++n;
  }
  return n;
}

}  // namespace

FilterStatus PodTopologySpread::pre_filter(const PodInfo& pod, const ClusterSnapshot& snapshot,
                                           std::unique_ptr<PluginState>& state) const {
  auto constraints = required_constraints(pod.pod());
  if (!constraints) {
    return FilterStatus::make(FilterCode::kError, kName, constraints.error().message);
  }
  if (constraints->empty()) return FilterStatus::skip();

  auto s = std::make_unique<SpreadState>();
  s->constraints = std::move(constraints.value());
  s->counts.resize(s->constraints.size());
  for (const auto& c : s->constraints)
    s->self_match.push_back(c.selector.matches(pod.pod().metadata.labels));

  const RequiredNodeAffinity node_affinity = RequiredNodeAffinity::of(pod.pod());
  for (const NodeInfo* n : snapshot.nodes()) {
    const auto& labels = n->labels();
    bool has_all_keys =
        std::all_of(s->constraints.begin(), s->constraints.end(),
                    [&](const Constraint& c) { return labels.count(c.topology_key) > 0; });
    if (!has_all_keys) continue;
    std::optional<bool> affinity_ok;
    std::optional<bool> taints_ok;
    for (size_t i = 0; i < s->constraints.size(); ++i) {
      const auto& c = s->constraints[i];
      if (c.honor_node_affinity) {
        if (!affinity_ok) affinity_ok = node_affinity.matches(n->node());
        if (!*affinity_ok) continue;
      }
      if (c.honor_node_taints) {
        if (!taints_ok) {
          taints_ok = find_untolerated_do_not_schedule_taint(n->node().spec.taints,
                                                             pod.pod().spec.tolerations) == nullptr;
        }
        if (!*taints_ok) continue;
      }
      const std::string& value = labels.find(c.topology_key)->second;
      s->counts[i][value] += count_matching(*n, c.selector, pod.namespace_());
    }
  }
  for (size_t i = 0; i < s->constraints.size(); ++i) {
    const auto& counts = s->counts[i];
    // With no eligible domain at all the minimum stays "infinite" (kube-scheduler's
    // MaxInt32 critical path), unless minDomains forces it to 0.
    int64_t global_min = std::numeric_limits<int32_t>::max();
    for (const auto& [value, n] : counts) global_min = std::min(global_min, n);
    if (static_cast<int64_t>(counts.size()) < s->constraints[i].min_domains) global_min = 0;
    s->global_min.push_back(global_min);
  }
  state = std::move(s);
  return FilterStatus::success();
}

FilterStatus PodTopologySpread::filter(const PodInfo&, const PluginState* state,
                                       const NodeInfo& node) const {
  if (state == nullptr) return FilterStatus::success();
  const auto& s = *static_cast<const SpreadState*>(state);
  const auto& labels = node.labels();
  for (size_t i = 0; i < s.constraints.size(); ++i) {
    const auto& c = s.constraints[i];
    auto it = labels.find(c.topology_key);
    if (it == labels.end()) {
      return FilterStatus::make(FilterCode::kUnschedulableAndUnresolvable, kName,
                                std::string(kReasonNodeLabelNotMatch));
    }
    const auto& counts = s.counts[i];
    auto here = counts.find(it->second);
    int64_t match = here == counts.end() ? 0 : here->second;
    int64_t skew = match + (s.self_match[i] ? 1 : 0) - s.global_min[i];
    if (skew > c.max_skew) {
      return FilterStatus::make(FilterCode::kUnschedulable, kName,
                                std::string(kReasonConstraintsNotMatch));
    }
  }
  return FilterStatus::success();
}

}  // namespace hamisim::planner::framework
