#pragma once
// HAMi's device model: what a node registers, what a container asks for, what it was given.
// Names follow HAMi (pkg/device/devices.go) so a HAMi reader finds their way; integer widths
// follow the wire (int32 where Go has int32) except running usage totals, which are int64 so
// that hostile annotations cannot overflow them.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hamisim::device {

inline constexpr std::string_view kNvidiaVendor = "NVIDIA";
// MemPercentagereq sentinel meaning "not a percentage request" (HAMi's 101).
inline constexpr int32_t kNoMemPercentage = 101;

struct MigPlacement {
  uint32_t start = 0;
  uint32_t size = 0;
  friend bool operator==(const MigPlacement&, const MigPlacement&) = default;
};

struct MigProfile {
  std::string name;  // "1g.5gb"
  int32_t memory_mb = 0;
  int32_t core = 0;
  uint32_t slice_count = 0;
  std::vector<MigPlacement> placements;
  bool placements_null = true;  // Go writes a nil placement list as null
  friend bool operator==(const MigProfile&, const MigProfile&) = default;
};

// One element of hami.io/node-<vendor>-register (JSON keys in this declaration order).
struct DeviceInfo {
  std::string id;
  uint64_t index = 0;
  int32_t count = 0;
  int32_t devmem = 0;
  int32_t devcore = 0;
  std::string type;
  int64_t numa = 0;
  std::string mode;
  std::vector<MigProfile> mig_profiles;
  bool health = false;
  std::string device_vendor;  // set by the scheduler after decoding, never on the wire
  // Topology pair scores from hami.io/node-nvidia-score: peer UUID -> score.
  std::map<std::string, int32_t, std::less<>> pair_scores;
  // The "custominfo" object as received (raw JSON text, empty when absent or null); Ascend
  // and Vastai read vendor facts from it. Never re-encoded.
  std::string custom_info;
  friend bool operator==(const DeviceInfo&, const DeviceInfo&) = default;
};

// One element of hami.io/node-nvidia-score.
struct DevicePairScore {
  std::string uuid;
  std::map<std::string, int32_t, std::less<>> scores;
  friend bool operator==(const DevicePairScore&, const DevicePairScore&) = default;
};

// One element of hami.io/vgpu-mig-allocations.
struct MigAllocation {
  int64_t container_index = 0;
  int64_t device_index = 0;
  std::string gpu_uuid;
  std::string profile;
  MigPlacement placement;
  // Written by the device plugin once the instance exists; all three or none.
  std::optional<std::string> mig_uuid;
  std::optional<int64_t> gpu_instance_id;
  std::optional<int64_t> compute_instance_id;
  friend bool operator==(const MigAllocation&, const MigAllocation&) = default;
};

// One device given to one container.
struct ContainerDevice {
  int32_t idx = 0;  // NVML index; not encoded in the pod annotation
  std::string uuid;
  std::string type;  // vendor key ("NVIDIA"), not the model
  int32_t usedmem = 0;
  int32_t usedcores = 0;
  int32_t slots = 0;  // internal: slots consumed after init-container collapse
  // MIG instance chosen at commit time (CustomInfo migProfile / migPlacement in HAMi).
  std::optional<std::string> mig_profile;
  std::optional<MigPlacement> mig_placement;
  friend bool operator==(const ContainerDevice&, const ContainerDevice&) = default;
};

using ContainerDevices = std::vector<ContainerDevice>;
// Positional: entry i belongs to container index i (init containers first).
using PodSingleDevice = std::vector<ContainerDevices>;
// vendor key -> positional list.
using PodDevices = std::map<std::string, PodSingleDevice, std::less<>>;

// What one container asks of one vendor.
struct ContainerDeviceRequest {
  int32_t nums = 0;
  std::string type;  // vendor key
  int32_t memreq = 0;
  int32_t mem_percentagereq = kNoMemPercentage;
  int32_t coresreq = 0;
  friend bool operator==(const ContainerDeviceRequest&, const ContainerDeviceRequest&) = default;
};

// Per container index: vendor key -> request (only vendors with nums > 0).
using ContainerRequests = std::map<std::string, ContainerDeviceRequest, std::less<>>;
using PodRequests = std::vector<ContainerRequests>;

struct MigInUse {
  std::string profile;
  MigPlacement placement;
  bool runtime_ready = false;
};

// A pod already on a device, for backends whose Fit looks at the device's other tenants
// (HAMi DeviceUsage.PodInfos; MetaX sGPU reads their app class and QoS). Filled only for pods
// charged to a backend that asks for it (DeviceBackend::reads_device_pods), so the common
// path pays nothing.
struct DevicePod {
  std::shared_ptr<const std::map<std::string, std::string, std::less<>>> annotations;
  int64_t usedcores = 0;  // the pod's cores on this device
};

// The scheduler's per-device state while deciding (HAMi DeviceUsage).
struct DeviceUsage {
  std::string id;
  uint64_t index = 0;
  int64_t used = 0;
  int32_t count = 0;
  int64_t usedmem = 0;
  int32_t totalmem = 0;
  int64_t usedcores = 0;
  int32_t totalcore = 0;
  int64_t numa = 0;
  std::string type;
  std::string mode;
  std::string vendor;
  bool health = true;
  // The registered device's MIG profiles (DeviceInfo); not owned, may be null. A fit never
  // changes them, so a usage is copied without them for every node a pod is fitted on.
  const std::vector<MigProfile>* mig_profiles = nullptr;
  std::vector<MigInUse> mig_in_use;
  // Pair scores of the registered device (topology-aware selection); not owned.
  const std::map<std::string, int32_t, std::less<>>* pair_scores = nullptr;
  // The registered device's custominfo JSON (see DeviceInfo); not owned, may be null.
  const std::string* custom_info = nullptr;
  std::vector<DevicePod> pods;  // see DevicePod
};

}  // namespace hamisim::device
