#pragma once
// The vendor backend interface: what the scheduler core needs from one kind of device.
// Modeled on HAMi's `Devices` interface (reference: hami-device-model.md §6), keeping only
// what hamisim uses and naming it for what it does. One instance per vendor key; backends are
// immutable after construction and safe to share between threads.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "device/reason.h"
#include "device/types.h"
#include "model/objects.h"
#include "model/result.h"

namespace hamisim::device {

// Extended resource names a vendor reads from container resources.
struct ResourceNames {
  std::string count;
  std::string memory;
  std::string memory_percentage;
  std::string cores;
  int32_t memory_factor = 1;
};

// How a node describes its devices for one vendor.
struct NodeDevices {
  enum class State {
    kAbsent,     // nothing registered for this vendor
    kMalformed,  // a registration exists but cannot be decoded; `message` says why
    kOk,
  };
  State state = State::kAbsent;
  std::vector<DeviceInfo> devices;
  std::string message;
};

// Namespace ResourceQuota view used by Fit (HAMi FitQuota). Simulation passes none.
class QuotaView {
 public:
  virtual ~QuotaView() = default;
  // True when adding `memory` MiB and `cores` to namespace `ns` stays within its limits
  // for `vendor`.
  virtual bool fits(std::string_view ns, std::string_view vendor, int64_t memory,
                    int64_t cores) const = 0;
};

// A vendor's own node lock (HAMi's Cambricon LockNode): the annotation holds the time it was
// taken (RFC 3339, no owner); a lock younger than `expiry` fails the bind with
// "node <name> <held>", an older one is replaced.
struct OwnNodeLock {
  std::string_view annotation;
  std::chrono::seconds expiry{0};
  std::string_view held;  // e.g. "has been locked within 2 minutes"
};

// Vendor-specific facts about the pod being placed, parsed once per pod (selectors, modes).
class PreparedPod {
 public:
  virtual ~PreparedPod() = default;
};

// Everything Fit may look at besides the candidate devices.
struct FitContext {
  const model::Pod* pod = nullptr;
  const PreparedPod* prepared = nullptr;
  std::string_view gpu_policy;  // effective GPU policy (pod annotation or default)
  bool numa_bind = false;
  const std::set<std::string, std::less<>>* cordoned = nullptr;
  // This pod's devices fitted so far (positional per vendor), for the quota check.
  const PodDevices* allocated = nullptr;
  size_t init_container_count = 0;
  size_t container_index = 0;  // index (init first) of the container being fitted
  const QuotaView* quota = nullptr;
  bool explain = false;  // record a DeviceVerdict per rejected device
};

// Why one device was passed over, for people ("CardInsufficientMemory: needs 12000 MiB,
// 11441 MiB free").
struct DeviceVerdict {
  std::string uuid;
  std::string reason;  // HAMi reason name
  std::string detail;
};

// What HAMi's PatchAnnotations sees besides the device lists: the pod, the chosen node and its
// registered devices, and the scheduling time. Simulation passes no time: keys that carry the
// time are then left out, so that answers do not change from one call to the next.
struct AnnotationContext {
  const model::Pod* pod = nullptr;
  std::string_view node{};
  std::span<const DeviceInfo> node_devices{};
  std::optional<int64_t> unix_nanos{};
};

struct FitOutcome {
  bool fits = false;
  ContainerDevices devices;             // chosen devices (or the partial selection on failure)
  ReasonCounts reasons;                 // rejected devices per reason
  std::vector<DeviceVerdict> verdicts;  // one per rejected device visit
  // The "m" of HAMi's "n/m Reason" when it is not the number of candidate devices (Ascend
  // 910C prints the requested count after a failed module pairing).
  std::optional<size_t> reason_cards;
};

// How the scheduler decides that a vendor's devices on a node are alive
// (reference: hami-other-vendors.md A.2).
enum class HealthCheck {
  // The handshake annotation: "Requesting_<time>" written by the scheduler must be answered by
  // the device plugin within the grace period, or the count resource must still be allocatable.
  kHandshake,
  kCapacity,    // node.status.capacity[count resource] is an integer > 0
  kRegistered,  // the registration decodes to at least one device
  kAlways,
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  // The vendor key ("NVIDIA"): the device string Type and the PodDevices map key.
  virtual std::string_view vendor() const = 0;
  virtual const ResourceNames& resource_names() const = 0;
  // Pod annotation keys the scheduler writes ("to-allocate", consumed by the device plugin)
  // and the pod manager reads back ("allocated").
  virtual std::string_view to_allocate_annotation() const = 0;
  virtual std::string_view allocated_annotation() const = 0;

  // Container resources -> request; nums == 0 means "does not use this vendor".
  virtual ContainerDeviceRequest request_for(const model::Container& container) const = 0;
  // Decodes the node's registration for this vendor (device_vendor is set on every device).
  // Reads only metadata.name, metadata.labels, metadata.annotations and status.capacity:
  // decoded descriptions are cached by exactly those bytes (fit::DescriptionCache).
  virtual NodeDevices node_devices(const model::Node& node) const = 0;

  virtual std::unique_ptr<PreparedPod> prepare(const model::Pod& pod) const = 0;
  // True when the container's request must be treated as a MIG request on these devices
  // (skips the NodeInsufficientDevice pre-check).
  virtual bool is_mig_request(const PreparedPod& prepared,
                              std::span<DeviceUsage* const> devices) const = 0;
  // Chooses devices for one container among `devices` (sorted by preference; the end of the
  // span is the most preferred). Never modifies the devices.
  virtual FitOutcome fit(std::span<DeviceUsage* const> devices,
                         const ContainerDeviceRequest& request,
                         const FitContext& context) const = 0;
  // Commits one chosen device to the usage (MIG: picks the instance and records it in
  // `chosen`). Errors name the device.
  virtual Status add_usage(DeviceUsage& usage, ContainerDevice& chosen) const = 0;

  // Annotations the live path writes on the pod for this vendor's allocation (HAMi
  // PatchAnnotations).
  virtual void annotate_allocation(const PodSingleDevice& devices, const AnnotationContext& context,
                                   std::map<std::string, std::string>& annotations) const = 0;
  // The same without pod, node or time (what does not depend on them).
  void allocation_annotations(const PodSingleDevice& devices,
                              std::map<std::string, std::string>& annotations) const {
    annotate_allocation(devices, AnnotationContext{}, annotations);
  }

  // --- Registration (live path) ---
  virtual HealthCheck health_check() const { return HealthCheck::kHandshake; }
  // HAMi HandshakeAnnos[vendor]; empty = no handshake (the check then passes).
  virtual std::string_view handshake_annotation() const { return {}; }
  // The node annotation HAMi deletes when the vendor turns unhealthy (NodeCleanUp); empty =
  // nothing is deleted.
  virtual std::string_view cleanup_annotation() const { return {}; }
  // Whether /bind takes hami.io/mutex.lock for a pod whose regular containers use this vendor.
  virtual bool locks_node() const { return true; }
  // A node lock of the vendor's own that /bind takes instead (HAMi's Cambricon): nullopt for
  // none.
  virtual std::optional<OwnNodeLock> own_node_lock() const { return std::nullopt; }
  // Whether Fit reads the pods already on a device (DeviceUsage::pods).
  virtual bool reads_device_pods() const { return false; }

  // --- Admission (the webhook) ---
  // Which of HAMi's MutateAdmission variants this backend takes (webhook/mutation.h does the
  // pod edits). Most vendors change nothing: they only report whether a container's limits
  // name their count resource.
  enum class Admission {
    kCountInLimits,
    kNvidia,
    kIluvatar,
    kAscend,
    kAmd,
    kMthreads,
    kKunlunVxpu,
    kMetaxSgpu,
  };
  virtual Admission admission() const { return Admission::kCountInLimits; }

  // HAMi ScoreNode: added to the node score when the pod was given devices of this vendor.
  // `previous` is the node's usage before the pod, `chosen` the pod's positional list, and
  // `prepared` what prepare() read of the pod (null when the pod asks nothing of this vendor):
  // HAMi's scorers read the pod's annotations from the CustomInfo its Fit stored in each
  // chosen device.
  virtual float score_node(std::span<const DeviceUsage> previous, const PodSingleDevice& chosen,
                           std::string_view node_policy,
                           const PreparedPod* prepared = nullptr) const {
    (void)previous;
    (void)chosen;
    (void)node_policy;
    (void)prepared;
    return 0;
  }

  // Extended resources this vendor manages (the extender's managedResources, doctor's
  // checks): every configured resource name.
  virtual std::vector<std::string> managed_resources() const {
    std::vector<std::string> out;
    const ResourceNames& n = resource_names();
    for (const std::string* name : {&n.count, &n.memory, &n.memory_percentage, &n.cores}) {
      if (!name->empty()) out.push_back(*name);
    }
    return out;
  }
};

}  // namespace hamisim::device
