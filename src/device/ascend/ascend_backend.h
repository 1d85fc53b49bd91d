#pragma once
// Huawei Ascend NPUs (reference: hami-other-vendors.md B.2): one backend per chip of the
// `vnpus:` section, keyed by the chip's commonWord ("Ascend910B3"). Hard split hands out vNPU
// templates (memory rounded up to a template by the admission webhook); soft split
// (`huawei.com/vnpu-mode: hami-core` on a node that supports it) shares raw memory and a
// percentage of the AI cores. Ascend 910 chips group multi-NPU requests by the NetworkID
// their device plugin reports, and Ascend 910C hands out whole two-NPU modules.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device/common/config_section.h"
#include "device/common/standard_backend.h"

namespace hamisim::device::ascend {

inline constexpr std::string_view kVnpuModeAnnotation = "huawei.com/vnpu-mode";
inline constexpr std::string_view kHamiCoreMode = "hami-core";
// Node annotation the device plugin writes: "true" when the node can soft-split.
inline constexpr std::string_view kNodeHamiCoreAnnotation = "hami-vnpu-core";
// Written with the allocation; HAMi gives it no prefix.
inline constexpr std::string_view kPredicateTimeAnnotation = "predicate-time";
inline constexpr std::string_view k910Prefix = "Ascend910";
inline constexpr std::string_view k910C = "Ascend910C";
// DeviceInfo::mode of the devices of a node whose NPUs may be soft-split (see node_devices).
inline constexpr std::string_view kSoftSplitMode = "hami-core";

// One vNPU template of a chip.
struct VnpuTemplate {
  std::string name;
  int64_t memory = 0;  // MiB
  int32_t ai_core = 0;
  int32_t ai_cpu = 0;
  friend bool operator==(const VnpuTemplate&, const VnpuTemplate&) = default;
};

// One entry of `vnpus.configs` (HAMi VNPUConfig).
struct VnpuConfig {
  std::string common_word;
  std::string chip_name;
  std::string resource_name;         // count
  std::string resource_memory_name;  // MiB
  std::string resource_core_name;    // percent of a card, soft split only
  int64_t memory_allocatable = 0;    // what a whole card gives a container
  int64_t memory_capacity = 0;       // the largest memory request still served by a whole card
  int32_t memory_factor = 0;
  int32_t ai_core = 0;
  int32_t ai_cpu = 0;
  std::string runtime_class_name;
  bool overwrite_env = false;
  std::vector<VnpuTemplate> templates;  // the backend keeps them sorted by memory ascending
  bool super_pod = false;               // Ascend910C: requests come in whole modules of 2
};

// HAMi's chart chip profiles (charts/hami/templates/scheduler/device-configmap.yaml).
std::vector<VnpuConfig> chart_chips();

// trimMemory: the smallest template holding `m` MiB, else the whole card while `m` is within
// the card's capacity (memory = memoryAllocatable, no template name), else {0, ""} (invalid).
struct TrimmedMemory {
  int64_t memory = 0;
  std::string_view template_name;
};
TrimmedMemory trim_memory(const VnpuConfig& config, int64_t m);

// The facts a pod brings to the Ascend Fit.
struct AscendPreparedPod : StandardPreparedPod {
  bool hami_core = false;  // huawei.com/vnpu-mode == hami-core
};

class AscendBackend final : public StandardBackend {
 public:
  Admission admission() const override { return Admission::kAscend; }
  // `hami_vnpu_core` is the section's global soft-split default (vnpus.hamiVnpuCore).
  AscendBackend(VnpuConfig config, bool hami_vnpu_core);

  const VnpuConfig& config() const { return config_; }
  bool hami_vnpu_core() const { return hami_vnpu_core_; }

  ContainerDeviceRequest request_for(const model::Container& container) const override;
  // hami.io/node-register-<cw> (JSON DeviceInfo array). Every device's `mode` is set to
  // kSoftSplitMode when the node may soft-split (its hami-vnpu-core annotation is "true", or
  // it has none and the global default is on) and to "" otherwise, so that Fit, which does not
  // see the node, can apply HAMi's node check.
  NodeDevices node_devices(const model::Node& node) const override;
  std::unique_ptr<PreparedPod> prepare(const model::Pod& pod) const override;
  FitOutcome fit(std::span<DeviceUsage* const> devices, const ContainerDeviceRequest& request,
                 const FitContext& context) const override;

  // Fit plus the denominator HAMi prints its reasons with: len(devices), except after a
  // failed 910C module pairing, where it is the requested count.
  struct DetailedFit {
    FitOutcome outcome;
    size_t reason_cards = 0;
  };
  DetailedFit fit_detailed(std::span<DeviceUsage* const> devices,
                           const ContainerDeviceRequest& request, const FitContext& context) const;

  // PatchAnnotations: both device-string keys, predicate-time (Unix seconds, with a scheduling
  // time) and huawei.com/<cw> (one JSON object per device: UUID, the template name unless the
  // pod is hami-core, memory, cores; empty fields omitted). No pod = not hami-core.
  void annotate_allocation(const PodSingleDevice& devices, const AnnotationContext& context,
                           std::map<std::string, std::string>& annotations) const override;

  // Ascend 910 chips only: 10 × Σ over containers of (largest share of the container's NPUs
  // on one NetworkID); 0 when a chosen NPU has no NetworkID.
  float score_node(std::span<const DeviceUsage> previous, const PodSingleDevice& chosen,
                   std::string_view node_policy,
                   const PreparedPod* prepared = nullptr) const override;

 private:
  VnpuConfig config_;
  bool hami_vnpu_core_ = false;
  std::string register_annotation_;
  std::string runtime_annotation_;  // huawei.com/<cw>
};

// --- Admission (HAMi MutateAdmission), for the webhook ----------------------------------------

// One container as the webhook sees it. Quantities are nullopt when absent.
struct AdmissionInput {
  std::optional<model::Quantity> count_limit;   // limits[resourceName]
  bool count_in_requests = false;               // requests has resourceName
  std::optional<model::Quantity> memory_limit;  // limits[resourceMemoryName]
  std::optional<model::Quantity> core;          // limits, else requests [resourceCoreName]
  bool hami_core = false;                       // pod annotation huawei.com/vnpu-mode
  bool pod_has_runtime_class = false;
};

// What to change. Apply the edits only when `error` is empty (HAMi rejects the pod otherwise).
struct AdmissionResult {
  bool found = false;  // the container uses this chip
  std::string error;
  // Not an Ascend container and overwriteEnv: append env ASCEND_VISIBLE_DEVICES="".
  bool clear_visible_devices = false;
  // 910C superPod: rewrite the count in limits, and in requests when present there.
  std::optional<int64_t> count;
  // Written into limits and requests (created if missing) as a plain decimal quantity.
  std::optional<int64_t> memory;
  std::string runtime_class_name;  // set on the pod when non-empty
};
AdmissionResult admit_container(const VnpuConfig& config, const AdmissionInput& input);

// BackendFactory for the `vnpus:` section: {hamiVnpuCore, configs: [...]}; one backend per
// configs entry. Chart defaults = chart_chips() with hamiVnpuCore false.
Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults);

}  // namespace hamisim::device::ascend
