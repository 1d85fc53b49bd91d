#pragma once
// The one simulation engine (issue #22): "this pod on this node, with these pods already
// placed: fits or not, why, with which allocation and annotations". Every path that answers
// that question calls it: `/filter-simulation`, `/filter` with `Nodes`, the planner's
// in-process device stage, `/v1/plan`, `/v1/estimate` and `hamisim fit`. It owns request
// validation (spec §5.4), how a node's devices are described (template detection and
// normalization §7.2, profiles §5.3 under the reconciler's observations, registrations), the
// Fit and the annotations. Nothing else describes devices or calls the Fit.
//
// Thread-safe: one engine serves every route of a `serve` process.

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "device/registry.h"
#include "engine/describer.h"
#include "fit/description.h"
#include "fit/node_fit.h"
#include "model/objects.h"
#include "model/result.h"
#include "profile/device_profiles.h"
#include "profile/reconcile.h"

namespace hamisim::engine {

// The answer for one node.
struct Verdict {
  fit::FitClass fit_class = fit::FitClass::kFits;
  std::string failed_text;  // HAMi-compatible FailedNodes text; empty when the node passes
  std::string reason;       // Diagnostics.Reason; empty when the node passes
  // How the node's devices were described (source, profile, notes); null when the pod
  // requests no device and the node was not looked at.
  std::shared_ptr<const fit::DescriptionResult> described;
  // The Fit itself when the node was described and the pod requests devices: the devices
  // chosen, the annotations to write, the node score; per-device verdicts with `explain`.
  fit::NodeFit fit;
  bool passes() const {
    return fit_class == fit::FitClass::kFits || fit_class == fit::FitClass::kNotInterested;
  }
};

inline constexpr std::string_view kNotInterestedReason = "pod requests no managed device";

class Engine {
 public:
  // `registry` must outlive the engine. `profiles` may be null (no profiles: templates are
  // described by their normalized samples).
  Engine(const device::DeviceRegistry& registry,
         std::shared_ptr<const profile::DeviceProfiles> profiles, fit::FitPolicy policy = {});
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const device::DeviceRegistry& registry() const { return registry_; }
  const profile::DeviceProfiles& profiles() const { return *profiles_; }
  const fit::FitPolicy& policy() const { return policy_; }

  // Validates the pod's managed device quantities (spec §5.4) and parses it for fitting.
  // Errors name `where` ("Pod", "pod default/x") and the field.
  Result<fit::PreparedPod> prepare(const model::Pod& pod, std::string_view where) const;

  // How the node's devices are described. Shared and immutable.
  std::shared_ptr<const fit::DescriptionResult> describe(const fit::KeyedNode& node) const;
  std::shared_ptr<const fit::DescriptionResult> describe(const model::Node& node) const;

  // A placed pod's allocation from its annotations (what counts against a node's devices).
  // `added`: annotations set over the pod's own (fit::decode_pod_allocation).
  Result<fit::PodAllocation> allocation(const model::Pod& pod,
                                        const model::StringMap* added = nullptr) const;

  // The decision for a node described as `described` whose devices are used as `usage` says
  // (usage built from `described.description` and the node's placed pods).
  Verdict decide(const fit::PreparedPod& pod, const model::Node& node,
                 std::shared_ptr<const fit::DescriptionResult> described,
                 const fit::NodeUsage& usage) const;

  // describe + usage of `placed` + decide. `scratch` is reused memory (one per thread).
  Verdict fit(const fit::PreparedPod& pod, const fit::KeyedNode& node,
              std::span<const fit::PodAllocation> placed, fit::NodeUsage& scratch) const;

  // What the reconciler observed of real nodes; onMismatch policies act on it from the next
  // decision on, on every route.
  void set_observations(std::shared_ptr<const profile::ProfileObservations> observations);

 private:
  const device::DeviceRegistry& registry_;
  std::shared_ptr<const profile::DeviceProfiles> profiles_;
  fit::FitPolicy policy_;
  Describer describer_;
};

// Spec §5.4: managed device resources must be non-negative integers that fit HAMi's int32
// fields. Errors name the container and resource.
Status validate_device_resources(const model::Pod& pod, const device::DeviceRegistry& registry,
                                 std::string_view where);

}  // namespace hamisim::engine
