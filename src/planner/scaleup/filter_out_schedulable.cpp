// Filter-out-schedulable (CA's FilterOutSchedulable): pending pods that fit an existing or
// upcoming node leave the scale-up, and so do pods no new node can help.
#include <algorithm>

#include "device/registry.h"
#include "planner/scaleup/phases.h"

namespace hamisim::planner::scaleup::detail {
namespace {

// "<kind>/<name>" of the pod's controller owner reference, else of its first; "" for none.
std::string owner_of(const model::Pod& pod) {
  const auto& refs = pod.metadata.owner_references;
  if (refs.empty()) return {};
  const model::OwnerReference* pick = &refs.front();
  for (const auto& r : refs) {
    if (r.controller) pick = &r;
  }
  return pick->kind + "/" + pick->name;
}

}  // namespace

std::vector<const model::Pod*> pending_pods(const PlanInput& in) {
  std::vector<const model::Pod*> pending;
  if (in.pending) {
    for (const model::Pod& p : *in.pending) pending.push_back(&p);
  } else {
    for (const model::Pod& p : in.pods) {
      if (p.spec.node_name.empty() && !terminated(p)) pending.push_back(&p);
    }
  }
  return pending;
}

// Steps 2 and 3: pending pods that fit existing (or upcoming) nodes are placed there, in
// priority order; pods no new node can help are set aside.
PendingPods filter_out_schedulable(const PlanInput& in, const PlannerOptions& o, Simulation& sim) {
  std::vector<const model::Pod*> pending = pending_pods(in);
  PendingPods out;
  out.count = pending.size();
  std::stable_sort(pending.begin(), pending.end(), [](const model::Pod* a, const model::Pod* b) {
    return priority_of(*a) > priority_of(*b);
  });
  SimilarPodsScheduling similar_pods;
  for (const model::Pod* pod : pending) {
    if (sim.stop_requested()) break;
    PodInfoPtr info = sim.pod_info(*pod);
    PodOutcome& outcome = out.outcomes.emplace_back();
    outcome.pod = info->key();
    outcome.owner = owner_of(*pod);
    if (priority_of(*pod) < o.expendable_pods_priority_cutoff) {
      outcome.state = PodOutcome::State::kIgnored;
      outcome.reason = "expendable: priority " + std::to_string(priority_of(*pod)) +
                       " is below the cutoff " + std::to_string(o.expendable_pods_priority_cutoff);
      continue;
    }
    if (model::has_resource_claims(*pod) &&
        device::has_device_requests(sim.env.cache->engine().registry().requests_for(*pod))) {
      outcome.state = PodOutcome::State::kBlocked;
      outcome.reason =
          "asks for HAMi devices by resource name and for ResourceClaims: HAMi's device-plugin "
          "mode and its DRA mode must not be mixed (convert the requests to claims, as HAMi-DRA's "
          "webhook does, or drop the claims)";
      continue;
    }
    if (auto over = sim.quota.admission_check(*pod)) {
      outcome.state = PodOutcome::State::kBlocked;
      outcome.reason = "device quota exceeded: " + *over;
      continue;
    }
    // CA does not try a pod when a pod of its controller with its labels and spec did not
    // fit.
    const bool similar = similar_pods.similar_unschedulable(*pod);
    estimator::FitResult r;
    if (!similar) r = sim.fitter().fit_any(*info, sim.snapshot, nullptr);
    if (r.fits()) {
      const PodInfoPtr& placed = r.placed_as ? r.placed_as : info;
      if (Status s = sim.snapshot.add_pod(placed, r.node); s.ok()) {
        sim.quota.add_usage(pod->metadata.namespace_, sim.env.cache->allocation(placed));
        outcome.state = PodOutcome::State::kFitsExistingNode;
        outcome.node = r.node;
        outcome.allocations = std::move(r.allocations);
        continue;
      }
    }
    if (nodegroups::is_daemonset_pod(*pod)) {
      outcome.state = PodOutcome::State::kIgnored;
      outcome.reason = "DaemonSet pod: a new node brings its own";
      continue;
    }
    // The node groups decide the rest of its outcome (report.cpp): why no existing node took
    // the pod would name every node.
    if (!similar && !r.fits()) similar_pods.set_unschedulable(*pod);
    out.remaining.push_back(std::move(info));
    out.remaining_outcomes.push_back(out.outcomes.size() - 1);
  }
  return out;
}

}  // namespace hamisim::planner::scaleup::detail
