#pragma once
// Enflame (reference: hami-other-vendors.md B.6): two independent backends built from the one
// `enflame:` section, in HAMi's instantiation order:
//  - `GCU`: whole, exclusive cards synthesised from the node's capacity (B.6.a);
//  - `Enflame`: DRS hardware partitions. The node publishes its cards and the partition
//    profiles `<slices>g.<GiB>gb` in enflame.com/gcu-drs-capacity; a container asks for a
//    slice count or for memory/cores, Fit turns that into one profile and places it on one
//    card (B.6.b).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "device/common/config_section.h"
#include "device/common/standard_backend.h"

namespace hamisim::device::enflame {

// --- GCU (whole cards) ---
inline constexpr std::string_view kGcuVendor = "GCU";
inline constexpr std::string_view kGcuToAllocateAnnotation =
    "hami.io/enflame-gcu-devices-to-allocate";
inline constexpr std::string_view kGcuAllocatedAnnotation = "hami.io/enflame-gcu-devices-allocated";

// --- Enflame DRS ---
inline constexpr std::string_view kDrsVendor = "Enflame";
inline constexpr std::string_view kDrsCapacityAnnotation = "enflame.com/gcu-drs-capacity";
inline constexpr std::string_view kDrsAllocatedAnnotation =
    "hami.io/enflame-vgpu-devices-allocated";
inline constexpr std::string_view kDrsUseUuidAnnotation = "enflame.com/use-gpuuuid";
inline constexpr std::string_view kDrsNouseUuidAnnotation = "enflame.com/nouse-gpuuuid";
// Read by Enflame's device plugin.
inline constexpr std::string_view kAssignedAnnotation = "enflame.com/gcu-assigned";
inline constexpr std::string_view kAssignedTimeAnnotation = "enflame.com/gcu-assigned-time";
inline constexpr std::string_view kAssignedIndexAnnotation = "enflame.com/gcu-assigned-index";
inline constexpr std::string_view kAssignedIdAnnotation = "enflame.com/gcu-assigned-id";
inline constexpr std::string_view kAssignedMinorAnnotation = "enflame.com/gcu-assigned-minor";
inline constexpr std::string_view kRequestSizeAnnotation = "enflame.com/gcu-request-size";
inline constexpr std::string_view kAssignedContainersAnnotation = "assigned-containers";
// MemPercentagereq of a DRS request: the mode, not a percentage. 0 = Memreq is a slice count;
// anything else (the requests use -1) = Memreq/Coresreq are a memory/core specification.
inline constexpr int32_t kDrsModeSlices = 0;
inline constexpr int32_t kDrsModeSpec = -1;

// Capacity-synthesised devices per node are bounded: a hostile capacity (10^18 cards) would
// otherwise make discovery allocate without bound; no real node comes near this.
inline constexpr int64_t kMaxDevices = 1024;

// The `enflame:` section (HAMi EnflameConfig).
struct EnflameConfig {
  std::string resource_name_gcu = "enflame.com/gcu";
  std::string resource_name_drs_gcu = "enflame.com/drs-gcu";
  std::string resource_name_gcu_memory = "enflame.com/gcu-memory";
  std::string resource_name_gcu_core = "enflame.com/gcu-core";
  // Only a fallback name for the DRS count resource.
  std::string resource_name_vgcu;
  // Read by HAMi but never used.
  std::string resource_name_vgcu_percentage;
};

// `GCU`: capacity enflame.com/gcu cards, one container per card.
class GcuBackend final : public StandardBackend {
 public:
  explicit GcuBackend(std::string resource_name);
  // {Nums n, GCU, 100, 100, 100} for an integer count (limits, else requests).
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  // Cards "<node>-GCU-<i>" of 1 slot, 100 memory, 100 cores.
  NodeDevices node_devices(const model::Node& node) const override;
  // Health, type, then "a used card is taken" (no UUID filters, no mutex check).
  FitOutcome fit(std::span<DeviceUsage* const> devices, const ContainerDeviceRequest& request,
                 const FitContext& context) const override;
};

// One partition profile as Fit considers it.
struct DrsProfile {
  std::string name;  // as published ("3g.20gb")
  std::string id;
  int64_t size = 0;       // slices
  int64_t memory_gb = 0;  // GiB
  int64_t core_percent = 0;
};

// HAMi parseProfile: "<size>g.<mem>gb", case-insensitive, trimmed; {0, 0} when the size does
// not parse, {size, 0} when only the memory does not.
std::pair<int64_t, int64_t> parse_profile(std::string_view name);

// The facts a DRS card carries in its custominfo (written by node_devices()).
struct DrsCardFacts {
  std::string index;
  std::string minor;
  int64_t max_slice = 0;
  std::vector<std::pair<std::string, std::string>> profiles;  // name -> ID
};
DrsCardFacts read_card_facts(const std::string* custom_info);

// `Enflame`: DRS partitions.
class DrsBackend final : public StandardBackend {
 public:
  explicit DrsBackend(const EnflameConfig& config);
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  // enflame.com/gcu-drs-capacity -> one device per card.
  NodeDevices node_devices(const model::Node& node) const override;
  // Profile selection, then the checks of B.6.b §4 on one card. The chosen profile's name is
  // carried in ContainerDevice::mig_profile (HAMi: CustomInfo profileName).
  FitOutcome fit(std::span<DeviceUsage* const> devices, const ContainerDeviceRequest& request,
                 const FitContext& context) const override;
  // Used grows by the profile's slices (at least 1, clamped to int32); cores and memory by
  // the profile's. The rebuild from pod annotations adds 1 per container instead (quirk).
  Status add_usage(DeviceUsage& usage, ContainerDevice& chosen) const override;
  // Reads the pod (container names), the node's devices (a card's index, minor and profile
  // IDs) and the time; keys that need what the context lacks are left out.
  void annotate_allocation(const PodSingleDevice& devices, const AnnotationContext& context,
                           std::map<std::string, std::string>& annotations) const override;

  // The candidates of collectDRSProfiles over `devices`, sorted by size, then memory (then
  // name: Go's order among equal ones is unspecified).
  static std::vector<DrsProfile> collect_profiles(std::span<DeviceUsage* const> devices);
  // selectProfileByRequest; nullopt = no profile matches.
  static std::optional<DrsProfile> select_profile(const std::vector<DrsProfile>& candidates,
                                                  const ContainerDeviceRequest& request);

 private:
  std::string memory_name_;
  std::string core_name_;
};

// BackendFactory for the `enflame:` section: {GCU, Enflame}.
Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults);

}  // namespace hamisim::device::enflame
