#pragma once
// HAMi-DRA's pod admission webhook (../shared/reference/dra.md §4.2), as far as placement
// depends on it: which containers of a pod it converts, the ResourceClaim it makes for each,
// and what it leaves in the pod. NVIDIA only, the chart's default `deviceVendors`; the Hygon
// and Ascend conversions are not modelled (docs/dra.md, "Comparing the modes").

#include <string>
#include <vector>

#include "device/backend.h"
#include "dra/objects.h"
#include "model/objects.h"
#include "model/result.h"

namespace hamisim::planner::modes {

// What the webhook made of one pod.
struct WebhookConversion {
  model::Pod pod;                          // with claims instead of the converted resources
  std::vector<dra::ResourceClaim> claims;  // one per converted container, unallocated
  // Per converted claim, the container it came from (index into spec.containers).
  std::vector<size_t> containers;
  // What the webhook leaves as extended resources, each naming the container and the resource
  // ("container main: nvidia.com/gpumem-percentage is not converted"). A pod with such
  // leftovers still asks for them, and DRA-only nodes publish none.
  std::vector<std::string> unconverted;
};

// Converts `pod` as the webhook does: each regular container whose limits name the count
// resource gets a claim `<namespace>-<pod>-<container>-nvidia` (shortened with a SHA-256 suffix
// past 63 characters) with one request `gpu` of class hami-core-gpu.project-hami.io: `count`
// devices, capacity requests `cores` (the cores limit) and `memory` (the memory limit in MiB,
// as bytes) when given, the type selector and the use/nouse-gpuuuid and use/nouse-gputype
// annotations as selectors; the three resources leave requests and limits. An error is the
// webhook's admission refusal (an annotation with no usable value), naming the annotation.
Result<WebhookConversion> convert_pod(const model::Pod& pod, const device::ResourceNames& names);

// The claim name the webhook gives container `container` of pod `pod` in `namespace_`.
std::string claim_name(std::string_view namespace_, std::string_view pod,
                       std::string_view container);

}  // namespace hamisim::planner::modes
