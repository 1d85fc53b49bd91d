#pragma once
// The what-if API of `hamisim serve` (spec §2, §5.5, §6): `POST /v1/estimate` packs pods onto
// fresh copies of one template; `POST /v1/plan` runs the whole scale-up planner on a snapshot
// sent in the request and answers with the same JSON as `hamisim plan -o json`. Both are
// stateless: nothing of a request outlives it.
//
// Requests (JSON, keys case-sensitive):
//   /v1/estimate {"template": Node, "pods": [Pod], "maxNodes": N, "existingPods": [Pod]}
//   /v1/plan     {"cluster": <kubectl List of Nodes, Pods, ResourceQuotas>,
//                 "nodeGroups": <NodeGroups document>, "pendingPods": [Pod] (optional),
//                 "options": {"expander", "priorityConfig", "maxNodesTotal",
//                             "maxNodesPerScaleup", "maxNodegroupBinpackingDuration",
//                             "maxBinpackingTime", "balanceSimilarNodeGroups",
//                             "fastpathBinpackingEnabled", "expendablePodsPriorityCutoff",
//                             "seed"} (all optional, CA's defaults)}
// Errors: 400 {"error": "invalid request: <what and where>"}, 500 {"error": "internal: ..."}.

#include <memory>
#include <vector>

#include "planner/scaleup/planning.h"
#include "server/http_server.h"

namespace hamisim::server {

class PlanApi {
 public:
  explicit PlanApi(std::shared_ptr<const planner::scaleup::Planning> planning)
      : planning_(std::move(planning)) {}

  std::vector<Route> routes();
  HttpResponse estimate(const HttpRequest& request) const;
  HttpResponse plan(const HttpRequest& request) const;

 private:
  std::shared_ptr<const planner::scaleup::Planning> planning_;
};

}  // namespace hamisim::server
