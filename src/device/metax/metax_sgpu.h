#pragma once
// MetaX shared GPUs (reference: hami-other-vendors.md B.10.b): slots + MiB + percent on devices
// the plugin registers in its own JSON schema, QoS policies, online/offline application
// classes, MetaLink-zone preference for whole devices and a policy-neutral node score.
//
// HAMi's per-process "jittery QoS" cache (uuid -> the QoS the last pod scheduled there expects,
// until the plugin reports it) is not kept: the same answer is derived from the pods on the
// device each time (device_qos below), so decisions do not depend on what this process saw.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "device/common/standard_backend.h"
#include "device/metax/metax_backend.h"

namespace hamisim::device::metax {

inline constexpr std::string_view kSgpuRegisterAnnotation = "metax-tech.com/node-gpu-devices";
inline constexpr std::string_view kSgpuAllocatedAnnotation = "metax-tech.com/gpu-devices-allocated";
inline constexpr std::string_view kPredicateTimeAnnotation = "metax-tech.com/predicate-time";
inline constexpr std::string_view kQosPolicyAnnotation = "metax-tech.com/sgpu-qos-policy";
inline constexpr std::string_view kAppClassAnnotation = "metax-tech.com/sgpu-app-class";
inline constexpr std::string_view kTopologyAwareAnnotation = "metax-tech.com/sgpu-topology-aware";
inline constexpr std::string_view kOnline = "online";
inline constexpr std::string_view kOffline = "offline";
inline constexpr std::string_view kBestEffort = "best-effort";

// The pod facts the sGPU Fit reads.
struct SgpuPreparedPod : StandardPreparedPod {
  bool has_app_class = false;  // the annotation exists (whatever its value)
  std::string app_class;
  std::string qos_policy;
  // metax-tech.com/sgpu-topology-aware when it parses as a Go bool; it overrides the
  // `sgpuTopologyAware` setting for the node score.
  std::optional<bool> topology_aware;
};

class MetaxSgpuBackend final : public StandardBackend {
 public:
  Admission admission() const override { return Admission::kMetaxSgpu; }
  explicit MetaxSgpuBackend(MetaxConfig config = {});
  // Limits only; a bare vmemory is GiB, one with a unit is bytes.
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  // metax-tech.com/node-gpu-devices; custom_info = {"LinkZone":n,"Model":"..","QosPolicy":".."}.
  NodeDevices node_devices(const model::Node& node) const override;
  std::unique_ptr<PreparedPod> prepare(const model::Pod& pod) const override;
  // App classes and QoS come from the pods already on each device.
  bool reads_device_pods() const override { return true; }
  FitOutcome fit(std::span<DeviceUsage* const> devices, const ContainerDeviceRequest& request,
                 const FitContext& context) const override;
  // Both hami.io keys plus metax-tech.com/gpu-devices-allocated and predicate-time.
  void annotate_allocation(const PodSingleDevice& devices, const AnnotationContext& context,
                           std::map<std::string, std::string>& annotations) const override;
  // HAMi's ScoreNode result times 10000, or times -10000 under node policy spread (HAMi's
  // ScoreNode applies that factor itself; the engine adds score_node() as it is).
  float score_node(std::span<const DeviceUsage> previous, const PodSingleDevice& chosen,
                   std::string_view node_policy,
                   const PreparedPod* prepared = nullptr) const override;

 private:
  MetaxConfig config_;
};

// --- The rules, on plain facts (HAMi reads them from DeviceUsage.PodInfos and CustomInfo) ----

// A running pod charged to a device, as the sGPU rules see it.
struct PodOnDevice {
  std::string app_class;   // its metax-tech.com/sgpu-app-class
  std::string qos_policy;  // its metax-tech.com/sgpu-qos-policy
  int64_t usedcores = 0;   // its cores on this device
};

// checkAppClass: an idle device takes anyone; otherwise classed (online/offline) and unclassed
// pods never share, and offline pods stay off devices running online pods.
bool app_class_allows(std::string_view request_class, int64_t used,
                      std::span<const PodOnDevice> pods);

// The QoS a non-online pod leaves its device with: its policy, none for a whole device.
std::string_view expected_qos(std::string_view pod_qos, int64_t usedcores);

// The QoS checkDeviceQos compares with. HAMi prefers its cache entry, which exists while a
// non-online pod placed there expects another QoS than the device reports; then the value this
// pod's earlier containers wrote into the device copy (`this_pod`, AddResourceUsage); then the
// reported one. The entry is derived here from the pods on the device (the last one that
// disagrees with the report).
std::string device_qos(std::string_view reported, std::span<const PodOnDevice> pods,
                       const std::optional<std::string>& this_pod);

// checkDeviceQos: idle devices and whole-device requests take any QoS, an empty QoS takes any
// request.
bool qos_allows(std::string_view request_qos, int32_t coresreq, int64_t used,
                std::string_view device_qos);

// A candidate device for the two preference orders.
struct SgpuCandidate {
  std::string uuid;
  int32_t link_zone = 0;  // MetaLink zone, <= 0 = none
  int64_t online = 0;     // online pods on it
  int64_t offline = 0;    // offline pods on it
};

// prioritizeOnlineDevices: devices with only offline pods last (fewer offline first), the
// others by fewer online then fewer offline pods. Positions into `candidates`, `nums` of them.
// Go's sort.Slice is an insertion sort (stable) up to 12 elements; this is stable throughout.
std::vector<size_t> prioritize_online(std::span<const SgpuCandidate> candidates, size_t nums);

// prioritizeExclusiveDevices: the smallest MetaLink zone holding `nums` devices; else zones
// from the smallest, then devices without a zone. HAMi groups through a Go map, so the order
// of equal-sized zones is random there; here it is the order of first appearance.
std::vector<size_t> prioritize_exclusive(std::span<const SgpuCandidate> candidates, size_t nums);

// A device for the topology score.
struct LinkDevice {
  std::string uuid;
  int32_t link_zone = 0;
};

// LinkDevices.Score: 10 per unordered pair of distinct devices sharing a non-zero zone.
int64_t link_score(std::span<const LinkDevice> devices);

// scoreExclusiveDevices: 10 x the links inside the pod's whole devices minus the links the
// allocation cuts between them and the idle devices left (`available` = idle before the pod).
int64_t score_exclusive(std::span<const LinkDevice> allocated,
                        std::span<const LinkDevice> available);

// scoreOnlineDevices for one device the pod uses, from the classed pods already on it.
int64_t score_online_device(int64_t online, int64_t offline);

// HAMi MutateAdmission for a container whose limits name the sGPU count (`count`): an error
// rejects the pod; true means the pod gets metax-tech.com/sgpu-qos-policy: best-effort.
Result<bool> sgpu_admission(const model::StringMap& pod_annotations, const model::Quantity& count);

}  // namespace hamisim::device::metax
