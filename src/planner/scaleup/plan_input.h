#pragma once
// The one way a PlanInput is put together from decoded objects, for every caller: `hamisim
// plan` from `--cluster` files or a live cluster, and `/v1/plan` from a request body. Each
// caller reads its objects its own way (files with warnings, paged LISTs, a body's parts); what
// follows is the same for all: the cluster's objects of every source joined, their DRA objects
// decoded strictly and made one DraCluster, the what-if pods and the node groups set.

#include <vector>

#include "model/decode.h"
#include "model/result.h"
#include "planner/scaleup/plan.h"

namespace hamisim::planner::scaleup {

class PlanInputBuilder {
 public:
  // One source's Nodes, Pods, ResourceQuotas and DRA objects (resource.k8s.io), appended to
  // those of the sources before it. A DRA object that does not decode is the error.
  Status add_cluster(model::ObjectSet objects);
  // What-if pods (`--pods`, `pendingPods`): planned instead of the cluster's pending pods.
  void set_pending(std::vector<model::Pod> pods) { input_.pending = std::move(pods); }
  void set_node_groups(nodegroups::NodeGroups groups) { input_.node_groups = std::move(groups); }

  PlanInput finish() &&;

 private:
  PlanInput input_;
  dra::Objects dra_;
};

}  // namespace hamisim::planner::scaleup
