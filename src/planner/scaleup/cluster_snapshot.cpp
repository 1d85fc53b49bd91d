// CA's first step: the cluster snapshot. Existing nodes and the pods running on them, with
// their device usage and quota; pending pods must be unique by namespace/name.
#include "planner/scaleup/planner.h"

#include <algorithm>

namespace hamisim::planner::scaleup::detail {

// Pods are identified by namespace/name in every result: two pending pods with one name
// would make the plan ambiguous.
Status Planner::check_unique_pending() const {
  if (!in_.pending) return ok_status();
  std::set<std::string, std::less<>> seen;
  for (const model::Pod& p : *in_.pending) {
    std::string key = p.metadata.namespace_ + "/" + p.metadata.name;
    if (!seen.insert(key).second) return make_error("pending pod " + key + " appears twice");
  }
  return ok_status();
}

// Step 1: nodes and the pods running on them, with their device usage and quota.
Status Planner::load_cluster() {
  snap_.set_stop(env_.cancelled);
  if (in_.dra) snap_.set_dra(in_.dra);
  for (const model::Node& node : in_.nodes) {
    const auto slices = in_.dra ? in_.dra->node_slices(node.metadata.name) : nullptr;
    Status s =
        env_.shared_input
            ? snap_.add_node(std::shared_ptr<const model::Node>(env_.shared_input, &node), slices)
            : snap_.add_node(node, slices);
    if (!s) {
      return make_error("node \"" + node.metadata.name + "\": " + s.error().message);
    }
    if (nodegroups::is_good_template_candidate(node)) ++ready_nodes_;
  }
  for (const auto& q : in_.quotas) quota_.add_quota(q);
  for (const model::Pod& pod : in_.pods) {
    if (pod.spec.node_name.empty() || terminated(pod)) continue;
    if (priority_of(pod) < o_.expendable_pods_priority_cutoff) continue;
    PodInfoPtr info = pod_info(pod);
    if (snap_.node(pod.spec.node_name) == nullptr) {
      plan_.warnings.push_back("pod " + info->key() + " is bound to node \"" + pod.spec.node_name +
                               "\", which is not in the snapshot; ignored");
      continue;
    }
    if (Status s = snap_.add_pod(info, pod.spec.node_name); !s) {
      plan_.warnings.push_back("pod " + info->key() + ": " + s.error().message + "; ignored");
      continue;
    }
    quota_.add_usage(pod.metadata.namespace_, env_.cache->allocation(info));
  }
  return ok_status();
}

}  // namespace hamisim::planner::scaleup::detail
