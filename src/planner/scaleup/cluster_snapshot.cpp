// CA's first step: the cluster snapshot. Existing nodes and the pods running on them, with
// their device usage and quota; pending pods must be unique by namespace/name.
#include <set>

#include "planner/scaleup/phases.h"

namespace hamisim::planner::scaleup::detail {

// Pods are identified by namespace/name in every result: two pending pods with one name
// would make the plan ambiguous.
Status check_unique_pending(const PlanInput& in) {
  std::set<std::string, std::less<>> seen;
  for (const model::Pod* p : pending_pods(in)) {
    std::string key = p->metadata.namespace_ + "/" + p->metadata.name;
    if (!seen.insert(key).second) return make_error("pending pod " + key + " appears twice");
  }
  return ok_status();
}

// Step 1: nodes and the pods running on them, with their device usage and quota.
Result<ExistingCluster> load_cluster(const PlanInput& in, const PlannerOptions& o,
                                     Simulation& sim) {
  ExistingCluster out;
  ClusterSnapshot& snap = sim.snapshot;
  if (in.dra) snap.set_dra(in.dra);
  for (const model::Node& node : in.nodes) {
    const auto slices = in.dra ? in.dra->node_slices(node.metadata.name) : nullptr;
    Status s =
        sim.env.shared_input
            ? snap.add_node(std::shared_ptr<const model::Node>(sim.env.shared_input, &node), slices)
            : snap.add_node(node, slices);
    if (!s) {
      return make_error("node \"" + node.metadata.name + "\": " + s.error().message);
    }
    if (nodegroups::is_good_template_candidate(node)) ++out.ready_nodes;
  }
  for (const auto& q : in.quotas) sim.quota.add_quota(q);
  for (const model::Pod& pod : in.pods) {
    if (pod.spec.node_name.empty() || terminated(pod)) continue;
    if (priority_of(pod) < o.expendable_pods_priority_cutoff) continue;
    PodInfoPtr info = sim.pod_info(pod);
    if (snap.node(pod.spec.node_name) == nullptr) {
      out.warnings.push_back("pod " + info->key() + " is bound to node \"" + pod.spec.node_name +
                             "\", which is not in the snapshot; ignored");
      continue;
    }
    if (Status s = snap.add_pod(info, pod.spec.node_name); !s) {
      out.warnings.push_back("pod " + info->key() + ": " + s.error().message + "; ignored");
      continue;
    }
    sim.quota.add_usage(pod.metadata.namespace_, sim.env.cache->allocation(info));
  }
  return out;
}

}  // namespace hamisim::planner::scaleup::detail
