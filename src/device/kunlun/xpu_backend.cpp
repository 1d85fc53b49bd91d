#include "device/kunlun/xpu_backend.h"

#include <algorithm>
#include <set>

#include "device/allocation.h"
#include "device/common/device_checks.h"
#include "device/kunlun/topology.h"

namespace hamisim::device::kunlun {
namespace {

using check::kCardUuidMismatch;
using check::kExclusiveConflict;
using check::kNumaNotFit;

constexpr int64_t kQuarterCard = 24576;
constexpr int64_t kHalfCard = 49152;

BackendIdentity xpu_identity(const KunlunConfig& c) {
  BackendIdentity id;
  id.vendor = std::string(kXpuVendor);
  id.names.count = c.resource_vcount_name;
  id.names.memory = c.resource_vmemory_name;
  id.to_allocate_annotation = std::string(kXpuToAllocateAnnotation);
  id.allocated_annotation = std::string(kXpuAllocatedAnnotation);
  id.handshake_annotation = std::string(kXpuHandshakeAnnotation);
  id.cleanup_annotation = std::string(kXpuHandshakeAnnotation);
  id.health = HealthCheck::kHandshake;
  id.locks_node = true;
  id.use_uuid_annotation = std::string(kUseUuidAnnotation);
  id.nouse_uuid_annotation = std::string(kNouseUuidAnnotation);
  return id;
}

// HAMi FitVXPU: room for the slice, and the card holds nothing or only slices of this size
// (integer average, so a card is shared by one slice size only). Under `mutex` the card must
// be idle.
bool fits_vxpu(const DeviceUsage& d, int32_t memreq, bool mutex) {
  if (!d.health) return false;
  if (memreq + d.usedmem > d.totalmem) return false;
  if (d.used == 0) return true;
  if (mutex) return false;
  return d.usedmem / d.used == memreq;
}

}  // namespace

int64_t trim_memory(int64_t mib) {
  if (mib <= kQuarterCard) return kQuarterCard;
  if (mib <= kHalfCard) return kHalfCard;
  return kCardMemory;
}

XpuBackend::XpuBackend(KunlunConfig config)
    : TopologyBackend(xpu_identity(config)), config_(std::move(config)) {}

ContainerDeviceRequest XpuBackend::request_for(const model::Container& c) const {
  const std::optional<int64_t> count = resource_int64(c, config_.resource_vcount_name);
  if (!count) return {};
  int64_t mem = 0;
  if (const model::Quantity* q = find_resource(c, config_.resource_vmemory_name)) {
    // Not an integer: ignored (a whole card); any integer, 0 included, becomes a slice.
    if (const std::optional<int64_t> v = q->as_int64()) mem = trim_memory(*v);
  }
  if (mem == 0) {
    return ContainerDeviceRequest{static_cast<int32_t>(*count), std::string(kXpuVendor),
                                  kCardMemory, 100, 100};
  }
  // HAMi converts the count with int32(n) and no range check: the low 32 bits.
  return ContainerDeviceRequest{static_cast<int32_t>(*count), std::string(kXpuVendor),
                                static_cast<int32_t>(mem), 0,
                                static_cast<int32_t>(mem * 100 / kCardMemory)};
}

NodeDevices XpuBackend::node_devices(const model::Node& node) const {
  NodeDevices out = registration_from_json(node, kXpuRegisterAnnotation, kXpuVendor);
  // An empty array is HAMi's "no device found on node" for this backend.
  if (out.state == NodeDevices::State::kAbsent &&
      model::find_annotation(node.metadata, kXpuRegisterAnnotation)) {
    out.message = "no device found on node";
  }
  return out;
}

FitOutcome XpuBackend::fit(std::span<DeviceUsage* const> devices,
                           const ContainerDeviceRequest& request, const FitContext& ctx) const {
  const auto& pod = static_cast<const KunlunPreparedPod&>(*ctx.prepared);
  const bool mutex = policy_has_token(ctx.gpu_policy, "mutex");
  FitOutcome out;
  std::set<std::string, std::less<>> uuid_failures;
  std::vector<bool> fits(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceUsage& d = *devices[i];
    const bool allowed = pod.uuid_allowed(d.id);
    if (!allowed) uuid_failures.insert(d.id);
    fits[i] = allowed && fits_vxpu(d, request.memreq, mutex);
  }
  const std::vector<uint64_t> chosen = graph_select(devices, fits, request.nums);
  if (chosen.empty()) {
    // Under mutex, every busy card that would otherwise have taken the slice is a conflict.
    if (mutex) {
      for (const DeviceUsage* d : devices) {
        if (d->used > 0 && fits_vxpu(*d, request.memreq, false)) ++out.reasons[kExclusiveConflict];
      }
    }
    if (out.reasons.empty() && !uuid_failures.empty()) {
      out.reasons[kCardUuidMismatch] = static_cast<int>(uuid_failures.size());
    }
    if (out.reasons.empty()) out.reasons[kNumaNotFit] = 1;
    if (ctx.explain) {
      for (size_t i = 0; i < devices.size(); ++i) {
        const DeviceUsage& d = *devices[i];
        Reason reason = kNumaNotFit;
        std::string detail;
        if (uuid_failures.contains(d.id)) {
          reason = kCardUuidMismatch;
        } else if (!d.health) {
          detail = "not healthy";
        } else if (request.memreq + d.usedmem > d.totalmem) {
          detail = "needs " + std::to_string(request.memreq) + " MiB, " +
                   std::to_string(d.totalmem - d.usedmem) + " MiB free";
        } else if (mutex && d.used > 0) {
          reason = kExclusiveConflict;
          detail = "mutex policy needs an idle card";
        } else if (!fits[i]) {
          detail = "holds slices of another size";
        } else {
          detail = "fits, but no topology-valid set of " + std::to_string(request.nums) +
                   " cards includes it";
        }
        out.verdicts.push_back({d.id, std::string(reason_name(reason)), std::move(detail)});
      }
    }
    return out;
  }
  for (uint64_t index : chosen) {
    auto it = std::find_if(devices.begin(), devices.end(),
                           [&](const DeviceUsage* d) { return d->index == index; });
    if (it == devices.end()) continue;  // as in HAMi: an index no device has is skipped
    out.devices.push_back(check::taken(**it, request.type, request.memreq, request.coresreq));
  }
  out.fits = true;
  return out;
}

XpuAdmission admit_xpu_container(const KunlunConfig& config, const model::Container& c) {
  XpuAdmission out;
  if (config.resource_vcount_name.empty() ||
      !c.resources.limits.contains(config.resource_vcount_name)) {
    return out;
  }
  out.found = true;
  if (config.resource_vmemory_name.empty()) return out;
  auto mem = c.resources.limits.find(config.resource_vmemory_name);
  if (mem != c.resources.limits.end()) out.set_memory = trim_memory(mem->second.value());
  return out;
}

}  // namespace hamisim::device::kunlun
