// The scale-up of the chosen option: capped by --max-nodes-total, balanced over similar groups,
// and the new nodes it adds with what lands on them.
#include <algorithm>

#include "planner/scaleup/balancing.h"
#include "planner/scaleup/phases.h"

namespace hamisim::planner::scaleup::detail {

CappedScaleUp capped_scale_up(const expander::Option& best, const NodeGroupOption& chosen,
                              const std::vector<NodeGroupOption>& groups, int64_t current_nodes,
                              const PlannerOptions& o) {
  CappedScaleUp out;
  int64_t new_nodes = best.node_count;
  // GetCappedNewNodeCount.
  if (o.max_nodes_total > 0 && new_nodes + current_nodes > o.max_nodes_total) {
    new_nodes = o.max_nodes_total - current_nodes;
    if (new_nodes < 1) {
      out.why_not =
          "max node total count already reached (" + std::to_string(o.max_nodes_total) + ")";
      return out;
    }
    out.warnings.push_back("scale-up capped to " + nodes_word(new_nodes) + " by --max-nodes-total");
  }
  std::vector<BalanceGroup> balance{{chosen.name(), chosen.target, chosen.spec->max_size}};
  for (const std::string& name : best.similar_node_groups) {
    const NodeGroupOption& h = *find_group(groups, name);
    balance.push_back({name, h.target, h.spec->max_size});
  }
  for (const BalancedScaleUp& b : balance_scale_up(balance, new_nodes)) {
    out.scale_ups.push_back({b.name, b.current_size, b.new_size});
  }
  // The chosen group first.
  std::stable_partition(out.scale_ups.begin(), out.scale_ups.end(),
                        [&](const ScaleUp& s) { return s.group == chosen.name(); });
  if (out.scale_ups.empty()) out.why_not = "node group " + chosen.name() + " cannot grow";
  return out;
}

namespace {

// The node's own DRA devices with what the claims on it consume (the snapshot's sums, which
// count every share on the device) and which claims have results on it.
std::vector<DraDeviceUse> describe_dra_devices(const NodeInfo& node,
                                               const dra::AllocatedState& allocated) {
  std::vector<DraDeviceUse> out;
  if (!node.slices()) return out;
  std::vector<const dra::ResourceSlice*> slices;
  for (const auto& s : *node.slices()) slices.push_back(&s);
  std::sort(slices.begin(), slices.end(),
            [](const auto* a, const auto* b) { return a->metadata.name < b->metadata.name; });
  for (const dra::ResourceSlice* s : slices) {
    for (const dra::Device& d : s->devices) {
      DraDeviceUse& use = out.emplace_back();
      use.driver = s->driver;
      use.pool = s->pool.name;
      use.device = d.name;
      use.shareable = d.allow_multiple_allocations;
      const dra::Amounts* consumed = allocated.consumed({s->driver, s->pool.name, d.name});
      for (const auto& [name, cap] : d.capacity) {
        model::Quantity used;
        if (consumed) {
          if (auto it = consumed->find(name); it != consumed->end()) used = it->second;
        } else if (allocated.held_whole({s->driver, s->pool.name, d.name})) {
          used = cap.value;  // a device held whole is all taken
        }
        use.capacity.push_back({name, used, cap.value});
      }
      for (const auto& pod : node.pods()) {
        for (const auto& c : pod->claim_allocations()) {
          const bool on_device = std::any_of(
              c.allocation.results.begin(), c.allocation.results.end(), [&](const auto& r) {
                return r.driver == use.driver && r.pool == use.pool && r.device == use.device;
              });
          if (on_device &&
              std::find(use.claims.begin(), use.claims.end(), c.claim) == use.claims.end()) {
            use.claims.push_back(c.claim);
          }
        }
      }
    }
  }
  return out;
}

}  // namespace

NewNodes planned_nodes(const NodeGroupOption& g, const estimator::Estimate& estimate,
                       const PodsByKey& remaining, Simulation& sim) {
  NewNodes out;
  ClusterSnapshot& snap = sim.snapshot;
  snap.fork();
  std::map<std::string, std::vector<const estimator::Placement*>, std::less<>> by_node;
  for (const auto& p : estimate.placements) by_node[p.node].push_back(&p);
  for (const std::string& name : estimate.nodes_with_pods) {
    if (snap.node(name) != nullptr) {
      // A hostname-spread pod the estimate put on an existing node: Cluster Autoscaler's
      // estimator counts that node among the new ones (trackScheduledPod), so the node count
      // keeps it, but it is not a node the scale-up adds.
      out.warnings.push_back("node group " + g.name() + ": the estimate counts existing node " +
                             name +
                             " among its new nodes (a pod with hostname topology spread landed "
                             "there), as Cluster Autoscaler's estimator does");
      continue;
    }
    PlannedNode pn;
    pn.name = name;
    pn.group = g.name();
    model::Node copy = g.tmpl->node;
    copy.metadata.name = name;
    copy.metadata.uid = name;
    copy.metadata.labels["kubernetes.io/hostname"] = name;
    const bool simulated =
        snap.add_node(std::move(copy), framework::slices_for_copy(g.slices, name, name)).ok();
    if (simulated) {
      for (const model::Pod& p : g.tmpl->pods) (void)snap.add_pod(p, name);
    }
    for (const estimator::Placement* p : by_node[name]) {
      pn.pods.push_back(p->pod);
      auto pod = remaining.find(p->pod);
      if (simulated && pod != remaining.end()) {
        PodInfoPtr placed =
            p->allocations ? with_allocations(*pod->second, *p->allocations) : pod->second;
        if (!p->claims.empty()) placed = PodInfo::with_claim_allocations(*placed, p->claims);
        (void)snap.add_pod(std::move(placed), name);
      }
    }
    if (const NodeInfo* info = simulated ? snap.node(name) : nullptr) {
      pn.cpu_requested_milli = info->requested().milli_cpu;
      pn.cpu_allocatable_milli = info->allocatable().milli_cpu;
      pn.memory_requested = info->requested().memory;
      pn.memory_allocatable = info->allocatable().memory;
      pn.devices = describe_devices(*sim.env.cache, *info);
      pn.dra_devices = describe_dra_devices(*info, snap.dra_allocated());
    }
    out.nodes.push_back(std::move(pn));
  }
  (void)snap.revert();
  return out;
}

}  // namespace hamisim::planner::scaleup::detail
