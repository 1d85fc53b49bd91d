// Result assembly: the scale-up of the chosen option (capped, balanced) or why there is none,
// and every pod's and group's outcome in the plan.
#include "planner/scaleup/planner.h"

#include <algorithm>

#include "planner/scaleup/balancing.h"

namespace hamisim::planner::scaleup::detail {

Result<Plan> Planner::scale_up(const expander::Option& best,
                               const std::vector<PodInfoPtr>& remaining) {
  const size_t bi = index_of(best.node_group);
  GroupState& g = states_[bi];
  plan_.groups[bi].chosen = true;
  int64_t new_nodes = best.node_count;
  // GetCappedNewNodeCount.
  const int64_t current = static_cast<int64_t>(snap_.node_count());
  if (o_.max_nodes_total > 0 && new_nodes + current > o_.max_nodes_total) {
    new_nodes = o_.max_nodes_total - current;
    if (new_nodes < 1) {
      return no_scale_up(remaining, "max node total count already reached (" +
                                        std::to_string(o_.max_nodes_total) + ")");
    }
    plan_.warnings.push_back("scale-up capped to " + nodes_word(new_nodes) +
                             " by --max-nodes-total");
  }
  std::vector<BalanceGroup> balance{{g.spec->name, g.target, g.spec->max_size}};
  for (const std::string& name : best.similar_node_groups) {
    const GroupState& h = *state_of(name);
    balance.push_back({name, h.target, h.spec->max_size});
  }
  for (const BalancedScaleUp& b : balance_scale_up(balance, new_nodes)) {
    plan_.scale_ups.push_back({b.name, b.current_size, b.new_size});
  }
  // The chosen group first.
  std::stable_partition(plan_.scale_ups.begin(), plan_.scale_ups.end(),
                        [&](const ScaleUp& s) { return s.group == g.spec->name; });
  if (plan_.scale_ups.empty()) {
    return no_scale_up(remaining, "node group " + g.spec->name + " cannot grow");
  }
  plan_.decision = Plan::Decision::kScaleUp;
  int64_t total = 0;
  for (const auto& s : plan_.scale_ups) total += s.delta();

  std::set<std::string, std::less<>> triggered;
  for (const auto& p : g.estimate->placements) {
    PodOutcome& out = plan_.pods[outcome_index_.at(p.pod)];
    out.state = PodOutcome::State::kTriggersScaleUp;
    out.node = p.node;
    if (p.allocations) out.allocations = *p.allocations;
    out.reason.clear();
    triggered.insert(p.pod);
  }
  mark_unhelped(remaining, &triggered);
  planned_nodes(g);

  plan_.summary = "scale up " + g.spec->name + " by " + nodes_word(plan_.scale_ups[0].delta()) +
                  " (" + std::to_string(plan_.scale_ups[0].current_size) + " -> " +
                  std::to_string(plan_.scale_ups[0].new_size) + ")";
  if (plan_.scale_ups.size() > 1) {
    plan_.summary += ", balanced with " + std::to_string(plan_.scale_ups.size() - 1) +
                     " similar group(s), " + nodes_word(total) + " in all";
  }
  plan_.summary += ": " + pods_word(triggered.size()) + " placed on new nodes";
  finish_groups();
  return std::move(plan_);
}

// Pods left pending: awaiting evaluation when some group could take them, else no group
// helps.
void Planner::mark_unhelped(const std::vector<PodInfoPtr>& remaining,
                            const std::set<std::string, std::less<>>* triggered) {
  std::map<std::string, std::string, std::less<>> unplaced_reason;
  for (const auto& g : states_) {
    if (!g.estimate) continue;
    for (const auto& u : g.estimate->unplaced) {
      unplaced_reason.emplace(u.pod, g.spec->name + ": " + u.reason);
    }
  }
  for (size_t k = 0; k < groups_.size(); ++k) {
    bool schedulable_somewhere = false;
    for (const auto& g : states_) {
      if (std::find(g.schedulable.begin(), g.schedulable.end(), k) != g.schedulable.end()) {
        schedulable_somewhere = true;
      }
    }
    for (const auto& pod : groups_[k].pods) {
      if (triggered && triggered->count(pod->key())) continue;
      PodOutcome& out = outcome(*pod);
      if (schedulable_somewhere) {
        out.state = PodOutcome::State::kAwaitsEvaluation;
        auto it = unplaced_reason.find(pod->key());
        out.reason = it != unplaced_reason.end() ? "not placed by the estimate: " + it->second
                                                 : "fits a node group the expander did not choose";
      } else {
        out.state = PodOutcome::State::kNoScaleUpHelps;
        out.reason = out.group_reasons.empty() ? "no node group can be scaled up"
                                               : "no node group's template can take it";
      }
    }
  }
  (void)remaining;
}

Result<Plan> Planner::no_scale_up(const std::vector<PodInfoPtr>& remaining, std::string why) {
  plan_.decision = Plan::Decision::kNoScaleUpPossible;
  plan_.summary = "no scale-up: " + why;
  if (groups_.empty()) groups_ = build_pod_groups(remaining);
  mark_unhelped(remaining, nullptr);
  for (const auto& pod : remaining) {
    PodOutcome& out = outcome(*pod);
    if (out.state == PodOutcome::State::kNoScaleUpHelps && out.reason.empty()) out.reason = why;
  }
  finish_groups();
  return std::move(plan_);
}

// The chosen group's new nodes with what lands on them, replayed in a fork.
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

void Planner::planned_nodes(const GroupState& g) {
  snap_.fork();
  std::map<std::string, std::vector<const estimator::Placement*>, std::less<>> by_node;
  for (const auto& p : g.estimate->placements) by_node[p.node].push_back(&p);
  for (const std::string& name : g.estimate->nodes_with_pods) {
    if (snap_.node(name) != nullptr) {
      // A hostname-spread pod the estimate put on an existing node: Cluster Autoscaler's
      // estimator counts that node among the new ones (trackScheduledPod), so the node count
      // keeps it, but it is not a node the scale-up adds.
      plan_.warnings.push_back("node group " + g.spec->name +
                               ": the estimate counts existing node " + name +
                               " among its new nodes (a pod with hostname topology spread landed "
                               "there), as Cluster Autoscaler's estimator does");
      continue;
    }
    PlannedNode pn;
    pn.name = name;
    pn.group = g.spec->name;
    model::Node copy = g.tmpl->node;
    copy.metadata.name = name;
    copy.metadata.uid = name;
    copy.metadata.labels["kubernetes.io/hostname"] = name;
    const bool simulated =
        snap_.add_node(std::move(copy), framework::slices_for_copy(g.slices, name, name)).ok();
    if (simulated) {
      for (const model::Pod& p : g.tmpl->pods) (void)snap_.add_pod(p, name);
    }
    for (const estimator::Placement* p : by_node[name]) {
      pn.pods.push_back(p->pod);
      PodInfoPtr pod = pod_by_key(p->pod);
      if (simulated && pod) {
        PodInfoPtr placed = p->allocations ? with_allocations(*pod, *p->allocations) : pod;
        if (!p->claims.empty()) placed = PodInfo::with_claim_allocations(*placed, p->claims);
        (void)snap_.add_pod(std::move(placed), name);
      }
    }
    if (const NodeInfo* info = simulated ? snap_.node(name) : nullptr) {
      pn.cpu_requested_milli = info->requested().milli_cpu;
      pn.cpu_allocatable_milli = info->allocatable().milli_cpu;
      pn.memory_requested = info->requested().memory;
      pn.memory_allocatable = info->allocatable().memory;
      pn.devices = describe_devices(*env_.cache, *info);
      pn.dra_devices = describe_dra_devices(*info, snap_.dra_allocated());
    }
    plan_.new_nodes.push_back(std::move(pn));
  }
  (void)snap_.revert();
}

void Planner::finish_groups() {
  for (size_t i = 0; i < states_.size(); ++i) {
    GroupEvaluation& e = plan_.groups[i];
    if (!e.skip_reason.empty() || e.chosen) continue;
    if (!states_[i].valid) continue;
    if (e.option) {
      e.expander_note +=
          e.expander_note.empty() ? "not chosen by the expander" : "; not chosen by the expander";
    }
  }
  collect_warnings();
}

void Planner::collect_warnings() {
  for (auto& f : fitter_.take_failures()) {
    auto& all = plan_.extender_failures;
    if (std::find(all.begin(), all.end(), f) == all.end()) all.push_back(std::move(f));
  }
  for (auto& w : fitter_.take_warnings()) {
    if (std::find(plan_.warnings.begin(), plan_.warnings.end(), w) == plan_.warnings.end()) {
      plan_.warnings.push_back(std::move(w));
    }
  }
}

}  // namespace hamisim::planner::scaleup::detail
