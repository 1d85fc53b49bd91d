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
//                             "seed", "compareUnpatchedCa"} (all optional, CA's defaults)}
// Errors: 400 {"error": "invalid request: <what and where>"}, 500 {"error": "internal: ..."},
// 503 {"error": "overloaded: ..."} when a request runs past PlanApiOptions::max_request_time.
//
// Both routes are heavy (Route::heavy): they run on the server's compute threads, so health
// probes, metrics and the live verbs answer while they run. CA's binpacking budgets are
// measured in work unless the request names them (then on the wall clock, capped at
// max_request_time): the same request gets the same answer under any load. The whole request
// stops at max_request_time, checked inside every loop that grows with the input (the
// planner's, the DRA allocator's), or when the server abandons it (shutdown grace over).

#include <chrono>
#include <memory>
#include <vector>

#include "planner/scaleup/planning.h"
#include "server/http_server.h"

namespace hamisim::server {

struct PlanApiOptions {
  // The longest any one request may compute (serve --max-plan-time).
  std::chrono::milliseconds max_request_time = std::chrono::seconds(30);
};

class PlanApi {
 public:
  explicit PlanApi(std::shared_ptr<const planner::scaleup::Planning> planning,
                   PlanApiOptions options = {})
      : planning_(std::move(planning)), options_(options) {}

  std::vector<Route> routes();
  HttpResponse estimate(const HttpRequest& request) const;
  HttpResponse plan(const HttpRequest& request) const;

 private:
  // True once `request` is abandoned by the server or has computed (since `start`) past
  // max_request_time. Monotonic: once true, true for good.
  std::function<bool()> stop_condition(const HttpRequest& request,
                                       std::chrono::steady_clock::time_point start) const;
  // 503, saying how long the request ran and what it had done (`done`).
  HttpResponse too_long(std::chrono::steady_clock::time_point start, std::string_view done) const;

  std::shared_ptr<const planner::scaleup::Planning> planning_;
  PlanApiOptions options_;
};

}  // namespace hamisim::server
