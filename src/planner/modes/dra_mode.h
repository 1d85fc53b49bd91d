#pragma once
// A plan input in HAMi's device-plugin mode rewritten as the same cluster in HAMi's DRA mode
// (../shared/reference/dra.md §4): what `plan --compare-modes` plans the second time.
//
// - Nodes: an NVIDIA registration (hami.io/node-nvidia-register) becomes the ResourceSlice
//   HAMi's k8s-dra-driver publishes (profile::hami_driver_slice); the registration, its
//   topology scores and the nvidia.com/gpu capacity of HAMi's device plugin go away.
// - Device profiles and node group templates: the same, so new nodes publish slices too.
// - Pods: converted as HAMi-DRA's webhook converts them (hami_dra_webhook.h). A running pod's
//   claims are allocated on the GPUs its HAMi allocation names, consuming what DRA's request
//   policy makes of its requests (no gpucores: every core).
// - The cluster gets HAMi's DeviceClass unless it has one by that name.
// The scheduler of that cluster is the default one: no HAMi extender, so the plan is made
// without a device registry and every leftover HAMi resource is an ordinary extended resource.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device/registry.h"
#include "planner/scaleup/plan.h"
#include "profile/device_profiles.h"

namespace hamisim::planner::modes {

struct DraModeInput {
  scaleup::PlanInput input;
  std::shared_ptr<const profile::DeviceProfiles> profiles;  // DRA forms; never null
  // Pending pods the webhook refuses at admission (pod key -> why): they do not exist in
  // DRA mode.
  std::map<std::string, std::string, std::less<>> refused;
  // Pending pods the webhook leaves extended resources in (pod key -> what, joined).
  std::map<std::string, std::string, std::less<>> unconverted;
  int64_t nodes_converted = 0;
  int64_t profiles_converted = 0;
  int64_t pending_pods_converted = 0;
  int64_t running_pods_converted = 0;
  // What DRA mode does not model, as the input shows it, and what could not be converted.
  std::vector<std::string> not_modelled;
};

// `profiles` may be null. Errors are internal: nothing the input holds fails the conversion
// (what cannot be converted is reported in DraModeInput).
Result<DraModeInput> to_dra_mode(const scaleup::PlanInput& in,
                                 const profile::DeviceProfiles* profiles,
                                 const device::DeviceRegistry& registry);

}  // namespace hamisim::planner::modes
