// Enflame `GCU` whole cards (reference: hami-other-vendors.md B.6.a).

#include "device/common/device_checks.h"
#include "device/enflame/enflame_backends.h"

namespace hamisim::device::enflame {
namespace {

BackendIdentity gcu_identity(std::string resource_name) {
  BackendIdentity id;
  id.vendor = std::string(kGcuVendor);
  id.names.count = std::move(resource_name);
  id.to_allocate_annotation = std::string(kGcuToAllocateAnnotation);
  id.allocated_annotation = std::string(kGcuAllocatedAnnotation);
  id.health = HealthCheck::kCapacity;
  id.locks_node = false;
  return id;
}

// A whole card: the request says "all of it" in every unit.
constexpr int32_t kWhole = 100;

}  // namespace

GcuBackend::GcuBackend(std::string resource_name)
    : StandardBackend(gcu_identity(std::move(resource_name))) {}

ContainerDeviceRequest GcuBackend::request_for(const model::Container& c) const {
  const std::optional<int64_t> n = resource_int64(c, resource_names().count);
  if (!n) return {};
  // Go's int32(n): the low 32 bits (well defined in C++20); 0 or negative is no request.
  return ContainerDeviceRequest{static_cast<int32_t>(*n), std::string(kGcuVendor), kWhole, kWhole,
                                kWhole};
}

NodeDevices GcuBackend::node_devices(const model::Node& node) const {
  NodeDevices out;
  const std::optional<int64_t> count =
      capacity_devices(node, resource_names().count, kMaxDevices, "cards", out);
  if (!count) return out;
  out.devices.reserve(static_cast<size_t>(*count));
  for (int64_t i = 0; i < *count; ++i) {
    out.devices.push_back(capacity_device(node, "GCU", i, kGcuVendor, 1, kWhole, kWhole));
  }
  out.state = NodeDevices::State::kOk;
  return out;
}

FitOutcome GcuBackend::fit(std::span<DeviceUsage* const> devices,
                           const ContainerDeviceRequest& request, const FitContext& ctx) const {
  FitOutcome out;
  int32_t nums = request.nums;
  // Verdict texts only when someone will read them, never on the hot path.
  const check::Failures fail(out, ctx.explain);
  for (ptrdiff_t i = static_cast<ptrdiff_t>(devices.size()) - 1; i >= 0; --i) {
    const DeviceUsage& d = *devices[i];
    // HAMi's GCU Fit does not look at UUID selections.
    if (!check::selectable(d, request.type == kGcuVendor, nullptr, fail.on(d))) continue;
    // A card serves one container; that is the only capacity rule.
    if (d.used > 0) {
      fail(d, Reason::kExclusiveDeviceAllocateConflict,
           [&] { return "the card is taken by " + std::to_string(d.used) + " container(s)"; });
      continue;
    }
    if (check::take_device(out, nums,
                           check::taken(d, request.type, request.memreq, request.coresreq))) {
      return out;
    }
  }
  check::count_insufficient(out);
  return out;
}

}  // namespace hamisim::device::enflame
