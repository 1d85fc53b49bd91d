#pragma once
// Moore Threads (reference: hami-other-vendors.md B.11): GPUs synthesised from the node's
// sGPU core and memory capacity (16 core groups per GPU), requests whose memory and cores are
// totals split evenly over the GPUs, the standard Fit with the "one GPU per pod" custom rule,
// and the mthreads.com/gpu-index annotation.

#include <array>
#include <optional>
#include <string>

#include "device/common/config_section.h"
#include "device/common/standard_backend.h"

namespace hamisim::device::mthreads {

inline constexpr std::string_view kVendor = "Mthreads";
// Registered by HAMi as the to-allocate key, but never written on pods.
inline constexpr std::string_view kToAllocateAnnotation =
    "hami.io/mthreads-vgpu-devices-to-allocate";
inline constexpr std::string_view kAllocatedAnnotation = "hami.io/mthreads-vgpu-devices-allocated";
// The UUID filters live in the .ai domain, unlike every other Moore Threads key.
inline constexpr std::string_view kUseUuidAnnotation = "mthreads.ai/use-gpuuuid";
inline constexpr std::string_view kNouseUuidAnnotation = "mthreads.ai/nouse-gpuuuid";
// Comma-joined Idx values of the (last) container with devices, read by the device plugin.
inline constexpr std::string_view kGpuIndexAnnotation = "mthreads.com/gpu-index";
// Written by the webhook when a container asks for more than one whole GPU.
inline constexpr std::string_view kRequestGpuNumAnnotation = "mthreads.com/request-gpu-num";
inline constexpr std::string_view kPredicateNodeAnnotation = "mthreads.com/predicate-node";
inline constexpr std::string_view kPredicateTimeAnnotation = "mthreads.com/predicate-time";

// One GPU has 16 core groups; the sgpu-core capacity and requests count groups.
inline constexpr int64_t kCoresPerGpu = 16;
// The sgpu-memory resource counts units of 512 MiB (requests, capacity, quota).
inline constexpr int32_t kMemoryUnitMiB = 512;
// A whole GPU in memory units (what the webhook writes for whole-GPU requests).
inline constexpr int64_t kMemoryUnitsPerGpu = 96;
// The memory values the webhook accepts for a single shared GPU.
inline constexpr std::array<int64_t, 7> kLegalMemoryUnits = {2, 4, 8, 16, 32, 64, 96};
// A hostile core capacity (10^18) would otherwise make discovery allocate without bound; no
// real node comes near this many GPUs.
inline constexpr int64_t kMaxDevices = 1024;

// The `mthreads:` section.
struct MthreadsConfig {
  std::string resource_count_name = "mthreads.com/vgpu";
  std::string resource_memory_name = "mthreads.com/sgpu-memory";
  std::string resource_core_name = "mthreads.com/sgpu-core";
};

class MthreadsBackend final : public StandardBackend {
 public:
  Admission admission() const override { return Admission::kMthreads; }
  explicit MthreadsBackend(MthreadsConfig config = {});
  // Count 1..2^31-1; memory (512 MiB units whose MiB fit in int32) and cores are totals divided
  // by the count.
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  // ceil(cores / 16) GPUs sharing the memory capacity; absent ("device not found <core
  // resource>") unless the core capacity is a non-zero integer.
  NodeDevices node_devices(const model::Node& node) const override;
  // The allocated key and mthreads.com/gpu-index (the to-allocate key is never written).
  void annotate_allocation(const PodSingleDevice& devices, const AnnotationContext& context,
                           std::map<std::string, std::string>& annotations) const override;

  const MthreadsConfig& config() const { return config_; }

 protected:
  // The device type must contain "Mthreads" (case-sensitive), besides the request type check.
  bool type_allowed(const DeviceUsage& device, const StandardPreparedPod& pod) const override;
  // Every device given to an earlier container of the same phase must be this one.
  bool custom_rule_allows(const DeviceUsage& device, const FitContext& ctx) const override;

 private:
  MthreadsConfig config_;
};

// What HAMi's MutateAdmission does to one container (the webhook applies it).
struct MthreadsAdmission {
  bool found = false;  // the container asks for Moore Threads GPUs
  // Limits to set (whole GPUs: 16 core groups and 96 memory units per GPU).
  std::optional<int64_t> set_cores;
  std::optional<int64_t> set_memory;
  // Pod annotation mthreads.com/request-gpu-num, for more than one GPU.
  std::optional<std::string> request_gpu_num;
};
// Errors are HAMi's rejection messages ("mthreads.com/vgpu must be greater than 0", "sGPU
// memory request value is invalid, valid values are [2, 4, 8, 16, 32, 64, 96]").
Result<MthreadsAdmission> admit_container(const MthreadsConfig& config,
                                          const model::Container& container);

// BackendFactory for the `mthreads:` section.
Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults);

}  // namespace hamisim::device::mthreads
