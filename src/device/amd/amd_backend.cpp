#include "device/amd/amd_backend.h"

#include <algorithm>
#include <limits>

#include "device/allocation.h"
#include "device/common/device_checks.h"

namespace hamisim::device::amd {
namespace {

constexpr std::string_view kUseTypeAnnotation = "amd.com/use-gputype";
constexpr std::string_view kNoUseTypeAnnotation = "amd.com/nouse-gputype";
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

BackendIdentity amd_identity(const AmdConfig& c) {
  BackendIdentity id;
  id.vendor = std::string(kVendor);
  id.names.count = c.resource_count_name;
  id.names.memory = c.resource_memory_name;
  id.names.cores = c.resource_core_name;
  id.to_allocate_annotation = "hami.io/amd-devices-to-allocate";
  id.allocated_annotation = "hami.io/amd-devices-allocated";
  // No handshake: when the GPUs leave the node's capacity HAMi deletes the registration.
  id.cleanup_annotation = std::string(kRegisterAnnotation);
  id.health = HealthCheck::kCapacity;
  id.use_uuid_annotation = "amd.com/use-gpu-uuid";
  id.nouse_uuid_annotation = "amd.com/nouse-gpu-uuid";
  id.use_type_annotation = std::string(kUseTypeAnnotation);
  id.nouse_type_annotation = std::string(kNoUseTypeAnnotation);
  return id;
}

bool equal_ignore_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && contains_ignore_case(a, b);
}

// The limit `name` (AMD ignores requests), or null.
const model::Quantity* find_limit(const model::Container& c, const std::string& name) {
  if (name.empty()) return nullptr;
  auto it = c.resources.limits.find(name);
  return it == c.resources.limits.end() ? nullptr : &it->second;
}

}  // namespace

AmdBackend::AmdBackend(AmdConfig config)
    : StandardBackend(amd_identity(config)), config_(std::move(config)) {}

HealthCheck AmdBackend::health_check() const {
  return config_.resource_count_name.empty() ? HealthCheck::kAlways : HealthCheck::kCapacity;
}

AmdAdmission AmdBackend::admission(const model::Container& c) const {
  AmdAdmission out;
  const model::Quantity* cores = find_limit(c, config_.resource_core_name);
  if (find_limit(c, config_.resource_count_name)) {
    out.found = true;
    if (cores) {
      const std::optional<int64_t> v = cores->as_int64();
      if (!v || *v < 1 || *v > 100) {
        out.error = config_.resource_core_name + " must be an integer percentage between 1 and 100";
      }
    }
    return out;
  }
  // Memory or cores alone still mark the container as an AMD user (no check then).
  out.found = find_limit(c, config_.resource_memory_name) || cores;
  return out;
}

// GenerateResourceRequests (B.1 §3): limits only; any out-of-range value drops the request.
ContainerDeviceRequest AmdBackend::request_for(const model::Container& c) const {
  const model::Quantity* count_q = find_limit(c, config_.resource_count_name);
  if (!count_q) return {};
  const std::optional<int64_t> count = count_q->as_int64();
  if (!count || *count <= 0 || *count > kInt32Max) return {};

  int64_t mem = 0;
  if (const model::Quantity* q = find_limit(c, config_.resource_memory_name)) {
    const std::optional<int64_t> v = q->as_int64();
    if (!v || *v < 0 || *v > kInt32Max) return {};
    mem = *v;
  }
  // Percent of the GPU's compute units; absent = the whole GPU.
  int64_t cores = 100;
  if (const model::Quantity* q = find_limit(c, config_.resource_core_name)) {
    const std::optional<int64_t> v = q->as_int64();
    if (!v || *v < 1 || *v > 100) return {};
    cores = *v;
  }
  return ContainerDeviceRequest{static_cast<int32_t>(*count), std::string(kVendor),
                                static_cast<int32_t>(mem), 0, static_cast<int32_t>(cores)};
}

NodeDevices AmdBackend::node_devices(const model::Node& node) const {
  NodeDevices out = registration_from_json(node, kRegisterAnnotation, kVendor);
  // The product name becomes the Type field of the pod's device string; with a separator in
  // it the allocation could not be read back (by the device plugin or by us). HAMi writes it
  // anyway; we refuse the registration instead (docs/deviations.md).
  for (const DeviceInfo& d : out.devices) {
    if (d.type.find_first_of(",:;") != std::string::npos) {
      NodeDevices bad;
      bad.state = NodeDevices::State::kMalformed;
      bad.message = std::string(kRegisterAnnotation) + ": device \"" + d.id + "\" has type \"" +
                    d.type + "\", which contains ',', ':' or ';'";
      return bad;
    }
  }
  return out;
}

// AMDDevices.Fit (B.1 §4): its own checks, not the standard template's.
FitOutcome AmdBackend::fit(std::span<DeviceUsage* const> devices,
                           const ContainerDeviceRequest& request, const FitContext& ctx) const {
  const auto& pod = static_cast<const StandardPreparedPod&>(*ctx.prepared);
  FitOutcome out;
  int32_t nums = request.nums;
  const bool is_mutex = policy_has_token(ctx.gpu_policy, "mutex");
  const check::Failures fail(out, ctx.explain);
  for (ptrdiff_t i = static_cast<ptrdiff_t>(devices.size()) - 1; i >= 0; --i) {
    const DeviceUsage& d = *devices[i];
    const bool type_matches = equal_ignore_case(request.type, kVendor) && pod.types.allows(d.type);
    if (!check::selectable(d, type_matches, &pod.uuids, fail.on(d),
                           [&] { return "type \"" + d.type + "\" not selected by the pod"; })) {
      continue;
    }
    if (!check::slots_free(d, is_mutex, check::kDeviceWording, fail.on(d))) continue;
    // No memory asked for = the whole GPU's memory.
    int64_t mem = request.memreq;
    if (mem <= 0 && d.totalmem > 0) mem = d.totalmem;
    if (!check::memory_free(d, mem, fail.on(d))) continue;
    // Percent -> compute units, truncating, at least 1 and at most all of them. Without a
    // percentage, a whole-memory request takes every CU. 64-bit: registrations are untrusted.
    int64_t cus = 0;
    if (request.coresreq > 0) {
      if (d.totalcore <= 0) {
        fail(d, Reason::kCardInsufficientCore, "the device registers no compute units");
        continue;
      }
      cus = std::clamp<int64_t>(int64_t{d.totalcore} * request.coresreq / 100, 1, d.totalcore);
    } else if (request.coresreq == 0 && d.totalmem > 0 && mem >= d.totalmem) {
      cus = d.totalcore;
    }
    if (d.totalcore - d.usedcores < cus) {
      fail(d, Reason::kCardInsufficientCore,
           "needs " + std::to_string(cus) + " CUs, " + std::to_string(d.totalcore - d.usedcores) +
               " of " + std::to_string(d.totalcore) + " free");
      continue;
    }
    // The Type field carries the product name, not the vendor key.
    if (check::take_device(out, nums,
                           check::taken(d, d.type, saturate_int32(mem), saturate_int32(cus)))) {
      return out;
    }
  }
  check::count_insufficient(out);
  return out;
}

Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults) {
  AmdConfig c;
  if (!chart_defaults) c = AmdConfig{"", "", ""};
  for (Status s : {section.read("resourceCountName", c.resource_count_name),
                   section.read("resourceMemoryName", c.resource_memory_name),
                   section.read("resourceCoreName", c.resource_core_name)}) {
    if (!s) return s.error();
  }
  return Backends{std::make_shared<AmdBackend>(std::move(c))};
}

}  // namespace hamisim::device::amd
