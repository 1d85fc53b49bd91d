// Filter-out-schedulable (CA's FilterOutSchedulable): pending pods that fit an existing or
// upcoming node leave the scale-up, and so do pods no new node can help.
#include "planner/scaleup/planner.h"

#include <algorithm>

#include "device/registry.h"

namespace hamisim::planner::scaleup::detail {

// Steps 2 and 3: pending pods that fit existing (or upcoming) nodes are placed there, in
// priority order; pods no new node can help are set aside.
std::vector<PodInfoPtr> Planner::filter_out_schedulable() {
  std::vector<const model::Pod*> pending;
  if (in_.pending) {
    for (const model::Pod& p : *in_.pending) pending.push_back(&p);
  } else {
    for (const model::Pod& p : in_.pods) {
      if (p.spec.node_name.empty() && !terminated(p)) pending.push_back(&p);
    }
  }
  pending_ = pending.size();
  std::stable_sort(pending.begin(), pending.end(), [](const model::Pod* a, const model::Pod* b) {
    return priority_of(*a) > priority_of(*b);
  });
  std::vector<PodInfoPtr> remaining;
  SimilarPodsScheduling similar_pods;
  for (const model::Pod* pod : pending) {
    if (stop_requested()) break;
    PodInfoPtr info = pod_info(*pod);
    PodOutcome out;
    out.pod = info->key();
    out.owner = owner_of(*pod);
    if (priority_of(*pod) < o_.expendable_pods_priority_cutoff) {
      out.state = PodOutcome::State::kIgnored;
      out.reason = "expendable: priority " + std::to_string(priority_of(*pod)) +
                   " is below the cutoff " + std::to_string(o_.expendable_pods_priority_cutoff);
      add_outcome(std::move(out));
      continue;
    }
    if (model::has_resource_claims(*pod) &&
        device::has_device_requests(env_.cache->engine().registry().requests_for(*pod))) {
      out.state = PodOutcome::State::kBlocked;
      out.reason =
          "asks for HAMi devices by resource name and for ResourceClaims: HAMi's device-plugin "
          "mode and its DRA mode must not be mixed (convert the requests to claims, as HAMi-DRA's "
          "webhook does, or drop the claims)";
      add_outcome(std::move(out));
      continue;
    }
    if (auto over = quota_.admission_check(*pod)) {
      out.state = PodOutcome::State::kBlocked;
      out.reason = "device quota exceeded: " + *over;
      add_outcome(std::move(out));
      continue;
    }
    // CA does not try a pod when a pod of its controller with its labels and spec did not
    // fit.
    const bool similar = similar_pods.similar_unschedulable(*pod);
    estimator::FitResult r;
    if (!similar) r = fitter_.fit_any(*info, snap_, nullptr);
    if (r.fits()) {
      const PodInfoPtr& placed = r.placed_as ? r.placed_as : info;
      if (Status s = snap_.add_pod(placed, r.node); s.ok()) {
        quota_.add_usage(pod->metadata.namespace_, env_.cache->allocation(placed));
        out.state = PodOutcome::State::kFitsExistingNode;
        out.node = r.node;
        out.allocations = std::move(r.allocations);
        add_outcome(std::move(out));
        continue;
      }
    }
    if (nodegroups::is_daemonset_pod(*pod)) {
      out.state = PodOutcome::State::kIgnored;
      out.reason = "DaemonSet pod: a new node brings its own";
      add_outcome(std::move(out));
      continue;
    }
    // The outcome's reason comes from the node groups (mark_unhelped): why no existing node
    // took the pod would name every node.
    outcome_index_[info->key()] = plan_.pods.size();
    if (!similar && !r.fits()) similar_pods.set_unschedulable(*pod);
    add_outcome(std::move(out));
    remaining_by_key_.emplace(info->key(), info);
    remaining.push_back(std::move(info));
  }
  return remaining;
}

}  // namespace hamisim::planner::scaleup::detail
