#pragma once
// Kunlunxin (Baidu) XPU, whole cards (reference: hami-other-vendors.md B.9.a): cards
// synthesised from the node's capacity, exclusive, placed by the 8-XPU topology selector on
// the policy-sorted list, a fragmentation ScoreNode and BAIDU_COM_DEVICE_IDX. The vXPU backend
// (xpu_backend.h) shares the `kunlun:` section, the selector and the UUID filters.

#include <string>
#include <vector>

#include "device/common/config_section.h"
#include "device/common/standard_backend.h"

namespace hamisim::device::kunlun {

inline constexpr std::string_view kVendor = "kunlun";
inline constexpr std::string_view kAllocatedAnnotation = "hami.io/kunlun-allocated";
// Comma-joined Idx values of the last container with cards, read by the device plugin.
inline constexpr std::string_view kDeviceIndexAnnotation = "BAIDU_COM_DEVICE_IDX";
// Both backends honour both pairs of UUID filters; a device must pass all four.
inline constexpr std::string_view kUseUuidAnnotation = "hami.io/use-xpu-uuid";
inline constexpr std::string_view kNouseUuidAnnotation = "hami.io/no-use-xpu-uuid";
inline constexpr std::string_view kBaiduUseUuidAnnotation = "baidu.com/use-gpuuuid";
inline constexpr std::string_view kBaiduNouseUuidAnnotation = "baidu.com/nouse-gpuuuid";
// One XPU: 96 GiB and 100 cores.
inline constexpr int32_t kCardMemory = 98304;
inline constexpr int32_t kCardCores = 100;
// A hostile capacity (10^18 cards) would otherwise make discovery allocate without bound; no
// real node comes near this many XPUs.
inline constexpr int64_t kMaxDevices = 1024;

// The `kunlun:` section, read by both backends.
struct KunlunConfig {
  std::string resource_count_name = "kunlunxin.com/xpu";
  std::string resource_vcount_name = "kunlunxin.com/vxpu";
  std::string resource_vmemory_name = "kunlunxin.com/vxpu-memory";
};

// The pod's UUID filters: the standard pair (hami.io/...) plus Baidu's.
struct KunlunPreparedPod : StandardPreparedPod {
  UuidSelection baidu_uuids;
  bool uuid_allowed(std::string_view id) const;
};

// What both Kunlunxin backends share: the UUID filters and the topology-driven Fit skeleton.
class TopologyBackend : public StandardBackend {
 public:
  using StandardBackend::StandardBackend;
  std::unique_ptr<PreparedPod> prepare(const model::Pod& pod) const override;
};

class KunlunBackend final : public TopologyBackend {
 public:
  explicit KunlunBackend(KunlunConfig config = {});
  // Any integer count (Go's int32 conversion), whole cards: {n, kunlun, 0, 100 %, 0}.
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  // One card per unit of capacity, the first half on NUMA 0 and the rest on NUMA 1; absent
  // ("device not found <count resource>") unless the capacity is a non-zero integer.
  NodeDevices node_devices(const model::Node& node) const override;
  // Idle healthy cards allowed by the UUID filters, chosen by the topology selector.
  FitOutcome fit(std::span<DeviceUsage* const> devices, const ContainerDeviceRequest& request,
                 const FitContext& context) const override;
  // Only Used grows (HAMi); the rebuild from the pod annotation later also counts the card's
  // memory and cores.
  Status add_usage(DeviceUsage& usage, ContainerDevice& chosen) const override;
  // hami.io/kunlun-allocated and BAIDU_COM_DEVICE_IDX (last container with cards).
  void annotate_allocation(const PodSingleDevice& devices, const AnnotationContext& context,
                           std::map<std::string, std::string>& annotations) const override;
  // HAMi calcscore over the node's busy card indexes before and after; 0 when the node has
  // any device whose type does not contain "kunlun".
  float score_node(std::span<const DeviceUsage> previous, const PodSingleDevice& chosen,
                   std::string_view node_policy,
                   const PreparedPod* prepared = nullptr) const override;

  const KunlunConfig& config() const { return config_; }

 private:
  KunlunConfig config_;
};

// BackendFactory for the `kunlun:` section: the whole-card and the vXPU backend, in HAMi's
// instantiation order.
Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults);

}  // namespace hamisim::device::kunlun
