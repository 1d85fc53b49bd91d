#pragma once
// The NVIDIA backend, reproducing HAMi v2.10 (reference: hami-device-model.md §2–§4) with the
// deliberate deviations listed in docs/deviations.md.

#include <memory>
#include <string>

#include "device/backend.h"

namespace hamisim::device::nvidia {

// The `nvidia:` section of HAMi's device-config.yaml (reference §2.1), scheduler-relevant keys.
struct NvidiaConfig {
  std::string resource_count_name = "nvidia.com/gpu";
  std::string resource_memory_name = "nvidia.com/gpumem";
  std::string resource_memory_percentage_name = "nvidia.com/gpumem-percentage";
  std::string resource_core_name = "nvidia.com/gpucores";
  std::string resource_priority_name = "nvidia.com/priority";
  int32_t default_memory = 0;
  int32_t default_cores = 0;
  int32_t default_gpu_num = 1;
  int32_t memory_factor = 1;
  // Admission webhook only (reference §2.2). "" and "default" add no environment; "force" and
  // "disable" become GPU_CORE_UTILIZATION_POLICY in every container.
  std::string gpu_core_policy;
  // Containers without an NVIDIA device get NVIDIA_VISIBLE_DEVICES=none, so that an image
  // whose default environment exposes every GPU cannot reach the node's devices.
  bool overwrite_env = false;
  // Set on pods with an NVIDIA container that name no runtime class; empty = leave it.
  std::string runtime_class_name;
};

// Pod annotations the NVIDIA backend reads (reference §2.5).
inline constexpr std::string_view kUseGpuTypeAnnotation = "nvidia.com/use-gputype";
inline constexpr std::string_view kNoUseGpuTypeAnnotation = "nvidia.com/nouse-gputype";
inline constexpr std::string_view kUseGpuUuidAnnotation = "nvidia.com/use-gpuuuid";
inline constexpr std::string_view kNoUseGpuUuidAnnotation = "nvidia.com/nouse-gpuuuid";
inline constexpr std::string_view kVgpuModeAnnotation = "nvidia.com/vgpu-mode";
inline constexpr std::string_view kNumaBindAnnotation = "nvidia.com/numa-bind";

class NvidiaBackend final : public DeviceBackend {
 public:
  Admission admission() const override { return Admission::kNvidia; }
  explicit NvidiaBackend(NvidiaConfig config = {});

  std::string_view vendor() const override { return kNvidiaVendor; }
  const ResourceNames& resource_names() const override { return names_; }
  std::string_view to_allocate_annotation() const override;
  std::string_view allocated_annotation() const override;

  ContainerDeviceRequest request_for(const model::Container& container) const override;
  NodeDevices node_devices(const model::Node& node) const override;
  std::unique_ptr<PreparedPod> prepare(const model::Pod& pod) const override;
  bool is_mig_request(const PreparedPod& prepared,
                      std::span<DeviceUsage* const> devices) const override;
  FitOutcome fit(std::span<DeviceUsage* const> devices, const ContainerDeviceRequest& request,
                 const FitContext& context) const override;
  Status add_usage(DeviceUsage& usage, ContainerDevice& chosen) const override;
  void annotate_allocation(const PodSingleDevice& devices, const AnnotationContext& context,
                           std::map<std::string, std::string>& annotations) const override;

  std::string_view handshake_annotation() const override;
  std::string_view cleanup_annotation() const override { return handshake_annotation(); }
  // HAMi's chart also manages the task-priority resource.
  std::vector<std::string> managed_resources() const override;

  const NvidiaConfig& config() const { return config_; }

 private:
  NvidiaConfig config_;
  ResourceNames names_;
};

}  // namespace hamisim::device::nvidia
