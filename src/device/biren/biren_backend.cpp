#include "device/biren/biren_backend.h"

#include "device/allocation.h"
#include "device/common/device_checks.h"

namespace hamisim::device::biren {
namespace {

BackendIdentity biren_identity(const BirenConfig& c) {
  BackendIdentity id;
  id.vendor = std::string(kVendor);
  id.names.count = c.resource_count_name;
  // HAMi builds these from the CommonWord, hence the capital B.
  id.to_allocate_annotation = "hami.io/Biren-devices-to-allocate";
  id.allocated_annotation = "hami.io/Biren-devices-allocated";
  id.handshake_annotation = std::string(kHandshakeAnnotation);
  id.cleanup_annotation = std::string(kHandshakeAnnotation);
  id.use_uuid_annotation = "birentech.com/use-gpuuuid";
  id.nouse_uuid_annotation = "birentech.com/nouse-gpuuuid";
  // birentech.com/use-biren and nouse-biren exist in HAMi but are never read.
  return id;
}

}  // namespace

BirenBackend::BirenBackend(BirenConfig config)
    : StandardBackend(biren_identity(config)), config_(std::move(config)) {}

// GenerateResourceRequests (B.4 §3): the count, limits else requests. HAMi converts it with
// int32(n) and no range check, so a count beyond int32 wraps; what is not positive after
// that is no request (the registry drops nums <= 0).
ContainerDeviceRequest BirenBackend::request_for(const model::Container& c) const {
  return slot_request(c, config_.resource_count_name, kVendor);
}

NodeDevices BirenBackend::node_devices(const model::Node& node) const {
  return registration_with_whole_cores(node, kRegisterAnnotation, kVendor);
}

FitOutcome BirenBackend::fit(std::span<DeviceUsage* const> devices,
                             const ContainerDeviceRequest& request, const FitContext& ctx) const {
  const auto& pod = static_cast<const StandardPreparedPod&>(*ctx.prepared);
  FitOutcome out;
  int32_t nums = request.nums;
  const bool is_mutex = policy_has_token(ctx.gpu_policy, "mutex");
  const check::Failures fail(out, ctx.explain);
  for (ptrdiff_t i = static_cast<ptrdiff_t>(devices.size()) - 1; i >= 0; --i) {
    const DeviceUsage& d = *devices[i];
    if (!check::selectable(d, request.type == kVendor, &pod.uuids, fail.on(d))) continue;
    if (!check::slots_free(d, is_mutex, check::kDeviceWording, fail.on(d))) continue;
    // Biren records neither memory nor cores (the request's cores are always 0).
    if (check::take_device(out, nums, check::taken(d, std::string(kVendor), 0, request.coresreq))) {
      return out;
    }
  }
  check::count_insufficient(out);
  return out;
}

Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults) {
  BirenConfig c;
  if (!chart_defaults) c.resource_count_name.clear();
  if (Status s = section.read("resourceCountName", c.resource_count_name); !s) return s.error();
  return Backends{std::make_shared<BirenBackend>(std::move(c))};
}

}  // namespace hamisim::device::biren
