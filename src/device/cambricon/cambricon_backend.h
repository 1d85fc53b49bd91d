#pragma once
// Cambricon MLU (reference: hami-other-vendors.md B.5): devices synthesised from the node's
// capacity, the standard Fit with the namespace quota checked inside it, the DSMLU profile
// annotations and Cambricon's own node lock.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "device/common/config_section.h"
#include "device/common/standard_backend.h"

namespace hamisim::device::cambricon {

inline constexpr std::string_view kVendor = "MLU";
inline constexpr std::string_view kToAllocateAnnotation =
    "hami.io/cambricon-mlu-devices-to-allocate";
inline constexpr std::string_view kAllocatedAnnotation = "hami.io/cambricon-mlu-devices-allocated";
inline constexpr std::string_view kUseUuidAnnotation = "cambricon.com/use-gpuuuid";
inline constexpr std::string_view kNouseUuidAnnotation = "cambricon.com/nouse-gpuuuid";
// Read by the Cambricon device plugin: "false" until it has set up the DSMLU instance, and
// "<Idx>_<cores>_<memory in 256 MiB units>" of the pod's first device.
inline constexpr std::string_view kAssignedAnnotation = "CAMBRICON_DSMLU_ASSIGNED";
inline constexpr std::string_view kProfileAnnotation = "CAMBRICON_DSMLU_PROFILE";
// The vmemory resource counts units of 256 MiB (requests, capacity, quota).
inline constexpr int32_t kMemoryUnitMiB = 256;
// Each physical MLU contributes 100 vcores to the node's capacity.
inline constexpr int64_t kCoresPerDevice = 100;
// A hostile capacity (vcore 10^18) would otherwise make discovery allocate without bound; no
// real node comes near this many MLUs.
inline constexpr int64_t kMaxDevices = 1024;

// Cambricon's node lock, taken by /bind instead of hami.io/mutex.lock (so locks_node() is
// false, own_node_lock() says how): the value is a bare RFC 3339 time with no owner, and it
// expires after 2 minutes.
inline constexpr std::string_view kLockAnnotation = "cambricon.com/dsmlu.lock";
inline constexpr std::chrono::minutes kLockExpiry{2};

// The `cambricon:` section.
struct CambriconConfig {
  std::string resource_count_name = "cambricon.com/vmlu";
  std::string resource_memory_name = "cambricon.com/mlu.smlu.vmemory";
  std::string resource_core_name = "cambricon.com/mlu.smlu.vcore";
};

class CambriconBackend final : public StandardBackend {
 public:
  explicit CambriconBackend(CambriconConfig config = {});
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  // ceil(vcore capacity / 100) devices of 100 slots and 100 cores sharing the vmemory
  // capacity; absent ("device not found <core resource>") unless the vcore capacity is a
  // non-zero integer.
  NodeDevices node_devices(const model::Node& node) const override;
  // The DSMLU annotations, then both device-string keys.
  void annotate_allocation(const PodSingleDevice& devices, const AnnotationContext& context,
                           std::map<std::string, std::string>& annotations) const override;
  // Only the count resource, as HAMi's chart lists for the extender: the device plugin
  // advertises vmemory and vcore as node resources that kube-scheduler checks itself.
  std::vector<std::string> managed_resources() const override;
  std::optional<OwnNodeLock> own_node_lock() const override {
    return OwnNodeLock{kLockAnnotation, kLockExpiry, "has been locked within 2 minutes"};
  }

  const CambriconConfig& config() const { return config_; }

 protected:
  bool quota_allows(const FitContext& ctx, const ContainerDevices& selected,
                    const ContainerDevice& candidate) const override;

 private:
  CambriconConfig config_;
};

// BackendFactory for the `cambricon:` section.
Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults);

}  // namespace hamisim::device::cambricon
