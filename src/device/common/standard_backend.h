#pragma once
// What most of HAMi's non-NVIDIA backends share (reference: hami-other-vendors.md Part A):
// the "standard Fit" (A.4), standard usage accounting, the two registration decoders (A.2),
// the pod annotation writer (A.5) and resource lookups (A.11). A vendor derives from
// StandardBackend, describes itself with a BackendIdentity and adds what is its own.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "device/backend.h"
#include "device/selection.h"

namespace hamisim::device {

// A vendor's names and registration behaviour, fixed at construction.
struct BackendIdentity {
  std::string vendor;  // CommonWord: request Type, PodDevices key, DeviceVendor
  ResourceNames names;
  std::string to_allocate_annotation;  // InRequestDevices[vendor]; empty = not written
  std::string allocated_annotation;    // SupportDevices[vendor]; empty = not written or read
  std::string handshake_annotation;    // empty = no handshake
  std::string cleanup_annotation;      // deleted when the vendor turns unhealthy
  HealthCheck health = HealthCheck::kHandshake;
  bool locks_node = true;
  // device.CheckUUID keys (empty = not read), read with the shared rule of selection.h.
  std::string use_uuid_annotation;
  std::string nouse_uuid_annotation;
  // device.CheckType keys (empty = not read), read with the shared rule of selection.h.
  std::string use_type_annotation;
  std::string nouse_type_annotation;
};

// The pod facts the standard Fit reads, parsed once per pod.
struct StandardPreparedPod : PreparedPod {
  UuidSelection uuids;
  TypeSelection types;
};

class StandardBackend : public DeviceBackend {
 public:
  explicit StandardBackend(BackendIdentity identity);

  std::string_view vendor() const override { return identity_.vendor; }
  const ResourceNames& resource_names() const override { return identity_.names; }
  std::string_view to_allocate_annotation() const override {
    return identity_.to_allocate_annotation;
  }
  std::string_view allocated_annotation() const override { return identity_.allocated_annotation; }
  HealthCheck health_check() const override { return identity_.health; }
  std::string_view handshake_annotation() const override { return identity_.handshake_annotation; }
  std::string_view cleanup_annotation() const override { return identity_.cleanup_annotation; }
  bool locks_node() const override { return identity_.locks_node; }

  std::unique_ptr<PreparedPod> prepare(const model::Pod& pod) const override;
  bool is_mig_request(const PreparedPod&, std::span<DeviceUsage* const>) const override {
    return false;
  }
  // HAMi's standard Fit (A.4), check for check: devices from the most preferred (the end) to
  // the least, the first failing check counts its reason.
  FitOutcome fit(std::span<DeviceUsage* const> devices, const ContainerDeviceRequest& request,
                 const FitContext& context) const override;
  // Used += 1, Usedcores += cores, Usedmem += memory.
  Status add_usage(DeviceUsage& usage, ContainerDevice& chosen) const override;
  // Both annotation keys with the positional device string (EncodePodSingleDevice).
  void annotate_allocation(const PodSingleDevice& devices, const AnnotationContext& context,
                           std::map<std::string, std::string>& annotations) const override;

  const BackendIdentity& identity() const { return identity_; }

 protected:
  // Fills the standard fields; vendors with more pod facts derive from StandardPreparedPod
  // and call this on their own object.
  void prepare_standard(const model::Pod& pod, StandardPreparedPod& out) const;
  // Step 2's vendor part (after `request.type == vendor`): e.g. Hygon's model filters.
  // Default: the CheckType annotations, when configured.
  virtual bool type_allowed(const DeviceUsage& device, const StandardPreparedPod& pod) const;
  // Step 8: the namespace quota (only Cambricon checks it inside Fit).
  virtual bool quota_allows(const FitContext&, const ContainerDevices& /*selected*/,
                            const ContainerDevice& /*candidate*/) const {
    return true;
  }
  // Step 13: the custom rule (MetaX GPU, Moore Threads); true = passes.
  virtual bool custom_rule_allows(const DeviceUsage&, const FitContext&) const { return true; }
  // Step 6: requests above 100 % of a device's cores are clamped to 100 (not MetaX sGPU).
  virtual bool clamps_cores() const { return true; }

 private:
  BackendIdentity identity_;
};

// --- Shared pieces ---------------------------------------------------------------------------

// A.11 "limits, else requests": the quantity of `name`, or null (also for an empty name).
const model::Quantity* find_resource(const model::Container& c, const std::string& name);
// find_resource's quantity as an integer; empty when absent or not an integer.
std::optional<int64_t> resource_int64(const model::Container& c, const std::string& name);
// A memory request counted in units of `unit_mib` MiB (Cambricon, Iluvatar, Mthreads), in MiB:
// 0 when absent; empty when it is not an integer, is negative, or its MiB would not fit in
// int32, in which case HAMi drops the whole request rather than reading "all of the device".
std::optional<int64_t> memory_units_mib(const model::Container& c, const std::string& name,
                                        int32_t unit_mib);
int32_t saturate_int32(int64_t v);

// True when the comma list `policy` (hami.io/gpu-scheduler-policy) holds `token` ("mutex",
// "topology-aware", ...).
bool policy_has_token(std::string_view policy, std::string_view token);

// The namespace quota check with the pod's hypothetical devices: fitted containers, the
// current container's selection and the candidate, collapsed with init-container peaks.
bool namespace_quota_allows(const FitContext& ctx, std::string_view vendor,
                            const ContainerDevices& selected, const ContainerDevice& candidate);

// HAMi's reading of the registration annotation `key` on a node, with the vendor's decoder:
// absent -> kAbsent "annos not found <key>"; undecodable -> kMalformed "<key>: <error>"; no
// devices -> kAbsent `empty_message`. On any of these `out` holds the failure and the result
// is empty; otherwise it is the decoded list, for the caller to turn into `out.devices`.
template <class Decode>
auto read_registration(const model::Node& node, std::string_view key,
                       std::string_view empty_message, NodeDevices& out, Decode&& decode)
    -> std::optional<std::decay_t<decltype(decode(std::declval<const std::string&>()).value())>> {
  const std::string* reg = model::find_annotation(node.metadata, key);
  if (!reg) {
    out.message = "annos not found " + std::string(key);
    return std::nullopt;
  }
  auto decoded = decode(*reg);
  if (!decoded) {
    out.state = NodeDevices::State::kMalformed;
    out.message = std::string(key) + ": " + decoded.error().message;
    return std::nullopt;
  }
  if (decoded->empty()) {
    out.message = std::string(empty_message);
    return std::nullopt;
  }
  return std::move(decoded).value();
}

// A.2 decoders of `key` on the node (read_registration, "no gpu found on node"); devices get
// `vendor` as DeviceVendor.
NodeDevices registration_from_json(const model::Node& node, std::string_view key,
                                   std::string_view vendor);
NodeDevices registration_from_colon(const model::Node& node, std::string_view key,
                                    std::string_view vendor);

// Biren and Vastai share devices by slots only: the count (limits, else requests) converted
// with Go's int32(n) and no range check, so a count beyond int32 wraps; not positive = no
// request. Memory percentage 100, no memory or cores.
ContainerDeviceRequest slot_request(const model::Container& c, const std::string& count_name,
                                    std::string_view vendor);
// registration_from_json with every device's cores forced to 100 (Biren, Vastai).
NodeDevices registration_with_whole_cores(const model::Node& node, std::string_view key,
                                          std::string_view vendor);

// node.status.capacity[name] as an integer (0 when absent or not an integer).
int64_t capacity_count(const model::Node& node, const std::string& name);

// HAMi's reading of a node whose devices are its capacity[name] (devices named by index): the
// count when it is 1..`max`. Otherwise `out` holds the failure: absent, not an integer or 0 ->
// kAbsent "device not found <name>"; negative -> kAbsent `none_message` (HAMi's loop yields
// nothing; the vendors word it differently); above `max` -> kMalformed, naming the `noun`
// ("devices", "cards") hamisim accepts.
std::optional<int64_t> capacity_devices(const model::Node& node, const std::string& name,
                                        int64_t max, std::string_view noun, NodeDevices& out,
                                        std::string_view none_message = "no gpu found on node");

// Device `i` of those HAMi derives from a node's capacity: "<node>-<infix>-<i>", healthy, of
// `vendor` (type and DeviceVendor), with `count` slots, `devmem` MiB and `devcore` cores.
DeviceInfo capacity_device(const model::Node& node, std::string_view infix, int64_t i,
                           std::string_view vendor, int32_t count, int32_t devmem, int32_t devcore);

}  // namespace hamisim::device
