#pragma once
// What the extender routes ask of a live cluster source (spec §4.1): the decision of /filter
// with NodeNames, /bind, the webhook's quota pre-check and the live half of /readyz.
// ExtenderService answers the simulation routes itself and hands these to a LiveRoutes when one
// is configured (LiveService, over src/live); without one they answer `not ready:`. The
// interface is what keeps a simulation-only server from linking the live path.

#include <optional>
#include <string>
#include <vector>

#include "extender/extender_protocol.h"
#include "fit/node_fit.h"
#include "model/objects.h"

namespace hamisim::server {

// An ExtenderFilterResult body, and whether it carries an Error (the request log's outcome).
struct LiveFilterAnswer {
  std::string body;
  bool is_error = false;
};

// Readiness and leadership are separate signals (HAMi #1677): a ready follower does not filter
// until it leads.
struct LiveRoutesReadiness {
  bool ready = false;
  bool leading = false;
  bool filtering = false;
  std::string detail;
};

class LiveRoutes {
 public:
  virtual ~LiveRoutes() = default;

  // /filter with NodeNames, for a pod that requests devices (the others pass every node
  // without the live source). A null NodeNames arrives as an empty list.
  virtual LiveFilterAnswer filter(const fit::PreparedPod& pod,
                                  const std::vector<std::string>& node_names) = 0;
  // /bind with PodName and Node set: empty when bound, otherwise the error (with its class
  // word).
  virtual std::string bind(const extender::ExtenderBindingArgs& args) = 0;
  // /webhook's quota pre-check (nullopt: fits).
  virtual std::optional<std::string> admission_quota_check(const model::Pod& pod) const = 0;
  virtual LiveRoutesReadiness readiness() const = 0;
};

}  // namespace hamisim::server
