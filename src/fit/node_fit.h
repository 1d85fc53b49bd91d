#pragma once
// Pod -> node device fit: per-container allocation in HAMi's order, failure reasons, the
// annotations the live path would write, and the node score.

#include <map>
#include <memory>
#include <string>

#include "device/reason.h"
#include "device/registry.h"
#include "fit/description.h"
#include "fit/policy.h"

namespace hamisim::fit {

inline constexpr std::string_view kGpuSchedulerPolicyAnnotation = "hami.io/gpu-scheduler-policy";
inline constexpr std::string_view kNodeSchedulerPolicyAnnotation = "hami.io/node-scheduler-policy";
inline constexpr std::string_view kDeviceScoringWeightsAnnotation =
    "hami.io/device-scoring-weights";

// Node-level failure strings outside the "n/m Reason" form.
inline constexpr std::string_view kNodeUnregistered = "node unregistered";
inline constexpr std::string_view kNodeInsufficientDevice = "NodeInsufficientDevice";
inline constexpr std::string_view kDeviceTypeNotFound = "Device type not found";

struct FitPolicy {
  std::string default_gpu_policy = "spread";
  std::string default_node_policy = "binpack";
};

// A pod parsed once for fitting against many nodes.
struct PreparedPod {
  const model::Pod* pod = nullptr;
  device::PodRequests requests;  // per container index, init containers first
  size_t init_count = 0;
  std::string gpu_policy;
  std::string node_policy;
  bool numa_bind = false;
  ScoringWeights weights;
  bool explain = false;  // collect per-device verdicts on failure (for people, not the hot path)
  std::map<std::string, std::unique_ptr<device::PreparedPod>, std::less<>> vendor_state;

  bool requests_devices() const { return device::has_device_requests(requests); }
};

// Errors: an invalid hami.io/device-scoring-weights annotation.
Result<PreparedPod> prepare_pod(const model::Pod& pod, const device::DeviceRegistry& registry,
                                const FitPolicy& policy);

// Why a node was rejected, for CA diagnostics.
enum class FitClass {
  kFits,
  kNotInterested,
  kInsufficientCapacity,
  kConstraintMismatch,
  kNoDeviceDescription,
  kMalformedDeviceDescription,
  kProfileRejected,
  kInternal,
};
std::string_view to_string(FitClass c);

struct NodeFit {
  bool fits = false;
  FitClass fit_class = FitClass::kFits;
  std::string reason;  // HAMi-compatible failure string when !fits
  // When a backend's Fit failed: its reason counts and the "m" of "n/m", of which `reason` is
  // the text (device::format_reasons). A fit made without reason text leaves `reason` empty
  // then, for a caller that fits many nodes and renders each distinct failure once.
  device::ReasonCounts reasons;
  size_t reason_cards = 0;
  device::PodDevices devices;  // per vendor, one entry per container (init first)
  // HAMi node score before the pod, plus the ScoreNode of every vendor in `devices` and of
  // every vendor HAMi pads in for the pod on this node (see `annotations`).
  float node_score = 0;
  // The vendor annotations the live path writes for this allocation: those of the vendors in
  // `devices`, and, as HAMi does, the all-empty ones (one ';' per container) of every other
  // vendor present on the node under exactly its vendor key (Cambricon's
  // `hami.io/cambricon-mlu-devices-allocated: ";"` and `CAMBRICON_DSMLU_ASSIGNED: "false"` for
  // a DCU pod on a DCU + MLU node). Such vendors never appear in `devices`.
  std::map<std::string, std::string> annotations;
  // On failure: the container that did not fit and why each device was passed over.
  int failed_container = -1;
  std::vector<device::DeviceVerdict> verdicts;
};

// Where and when an allocation is made, for the vendor annotations that name them. The live
// path knows both; simulation knows the node but gives no time, so its answers stay stable.
struct AllocationSite {
  std::string_view node;
  std::optional<int64_t> unix_nanos;
};

// Fits every container of the pod on a node whose current usage is `base` (HAMi scoreNode).
// Without `with_annotations` a fit leaves `annotations` empty, for a caller that fits many
// nodes and keeps one: annotate() writes them for that one. Without `with_reason_text` a
// backend's failure leaves `reason` empty and its counts in `reasons` (node-level failures
// still have their text).
NodeFit fit_pod(const PreparedPod& pod, const NodeUsage& base, const DeviceDescription& description,
                const device::DeviceRegistry& registry, const device::QuotaView* quota = nullptr,
                const AllocationSite& site = {}, bool with_annotations = true,
                bool with_reason_text = true);

// The allocation annotations of a fit made without them (same description, same site).
void annotate(NodeFit& fit, const PreparedPod& pod, const DeviceDescription& description,
              const device::DeviceRegistry& registry, const AllocationSite& site);

// Classifies a HAMi failure string: capacity when any device was rejected for lack of memory,
// cores, slots or count; otherwise a constraint mismatch.
FitClass classify_failure(std::string_view reason);

// Node choice among fitting nodes: `spread` prefers the lowest score, anything else (binpack)
// the highest. Ties go to the earliest candidate (deterministic; HAMi's order is random).
// Returns the index into `scores`.
size_t choose_node(const std::vector<float>& scores, std::string_view node_policy);
// Whether a node scoring `score` beats the best so far, `best`, under choose_node's rule (a
// tie does not: the earlier node stays), for a caller that chooses as the nodes come.
bool better_node_score(float score, float best, std::string_view node_policy);

}  // namespace hamisim::fit
