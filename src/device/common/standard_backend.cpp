#include "device/common/standard_backend.h"

#include <algorithm>
#include <limits>

#include "device/allocation.h"
#include "device/codec.h"
#include "device/common/device_checks.h"

namespace hamisim::device {
namespace {

using namespace check;  // the reason names

constexpr Reason kCardNotFoundCustomFilterRule = Reason::kCardNotFoundCustomFilterRule;

template <class Decode>
NodeDevices decode_registration(const model::Node& node, std::string_view key,
                                std::string_view vendor, Decode&& decode) {
  NodeDevices out;
  auto decoded = read_registration(node, key, "no gpu found on node", out, decode);
  if (!decoded) return out;
  out.devices = std::move(*decoded);
  for (DeviceInfo& d : out.devices) d.device_vendor = std::string(vendor);
  out.state = NodeDevices::State::kOk;
  return out;
}

}  // namespace

bool policy_has_token(std::string_view policy, std::string_view token) {
  // In place: this runs for every node a pod is fitted on, mostly for a token the policy does
  // not hold at all.
  if (policy.find(token) == std::string_view::npos) return false;
  return any_comma_item(policy, [&](std::string_view t) { return t == token; });
}

const model::Quantity* find_resource(const model::Container& c, const std::string& name) {
  if (name.empty()) return nullptr;
  if (auto it = c.resources.limits.find(name); it != c.resources.limits.end()) return &it->second;
  if (auto it = c.resources.requests.find(name); it != c.resources.requests.end())
    return &it->second;
  return nullptr;
}

std::optional<int64_t> resource_int64(const model::Container& c, const std::string& name) {
  const model::Quantity* q = find_resource(c, name);
  if (!q) return std::nullopt;
  return q->as_int64();
}

std::optional<int64_t> memory_units_mib(const model::Container& c, const std::string& name,
                                        int32_t unit_mib) {
  const model::Quantity* q = find_resource(c, name);
  if (!q) return 0;
  const std::optional<int64_t> units = q->as_int64();
  if (!units || *units < 0 || *units > std::numeric_limits<int32_t>::max() / unit_mib) {
    return std::nullopt;
  }
  return *units * unit_mib;
}

int32_t saturate_int32(int64_t v) {
  return static_cast<int32_t>(std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}

bool namespace_quota_allows(const FitContext& ctx, std::string_view vendor,
                            const ContainerDevices& selected, const ContainerDevice& candidate) {
  if (!ctx.quota || !ctx.pod) return true;
  PodDevices hypothetical;
  if (ctx.allocated) hypothetical = *ctx.allocated;
  PodSingleDevice& mine = hypothetical[std::string(vendor)];
  if (mine.size() <= ctx.container_index) mine.resize(ctx.container_index + 1);
  ContainerDevices& current = mine[ctx.container_index];
  current.insert(current.end(), selected.begin(), selected.end());
  current.push_back(candidate);
  const auto collapsed = collapse_init_container_usage(hypothetical, ctx.init_container_count);
  ChargeTotals totals;
  if (auto it = collapsed.find(vendor); it != collapsed.end()) totals = total_charges(it->second);
  return ctx.quota->fits(ctx.pod->metadata.namespace_, vendor, totals.memory, totals.cores);
}

NodeDevices registration_from_json(const model::Node& node, std::string_view key,
                                   std::string_view vendor) {
  return decode_registration(node, key, vendor,
                             [](const std::string& v) { return decode_register_json(v); });
}

NodeDevices registration_from_colon(const model::Node& node, std::string_view key,
                                    std::string_view vendor) {
  return decode_registration(node, key, vendor,
                             [](const std::string& v) { return decode_legacy_devices(v); });
}

ContainerDeviceRequest slot_request(const model::Container& c, const std::string& count_name,
                                    std::string_view vendor) {
  const std::optional<int64_t> count = resource_int64(c, count_name);
  if (!count) return {};
  const auto nums = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(*count)));
  if (nums <= 0) return {};
  return ContainerDeviceRequest{nums, std::string(vendor), 0, 100, 0};
}

NodeDevices registration_with_whole_cores(const model::Node& node, std::string_view key,
                                          std::string_view vendor) {
  NodeDevices out = registration_from_json(node, key, vendor);
  for (DeviceInfo& d : out.devices) d.devcore = 100;
  return out;
}

int64_t capacity_count(const model::Node& node, const std::string& name) {
  if (name.empty()) return 0;
  auto it = node.status.capacity.find(name);
  if (it == node.status.capacity.end()) return 0;
  return it->second.as_int64().value_or(0);
}

std::optional<int64_t> capacity_devices(const model::Node& node, const std::string& name,
                                        int64_t max, std::string_view noun, NodeDevices& out,
                                        std::string_view none_message) {
  std::optional<int64_t> count;
  if (auto it = node.status.capacity.find(name); !name.empty() && it != node.status.capacity.end())
    count = it->second.as_int64();
  if (!count || *count == 0) {
    out.message = "device not found " + name;
    return std::nullopt;
  }
  if (*count < 0) {
    out.message = std::string(none_message);
    return std::nullopt;
  }
  if (*count > max) {
    out.state = NodeDevices::State::kMalformed;
    out.message = name + ": capacity " + std::to_string(*count) + " is more than the " +
                  std::to_string(max) + " " + std::string(noun) + " hamisim accepts";
    return std::nullopt;
  }
  return count;
}

DeviceInfo capacity_device(const model::Node& node, std::string_view infix, int64_t i,
                           std::string_view vendor, int32_t count, int32_t devmem,
                           int32_t devcore) {
  DeviceInfo d;
  d.id = node.metadata.name + "-" + std::string(infix) + "-" + std::to_string(i);
  d.index = static_cast<uint64_t>(i);
  d.count = count;
  d.devmem = devmem;
  d.devcore = devcore;
  d.type = std::string(vendor);
  d.health = true;
  d.device_vendor = std::string(vendor);
  return d;
}

// --- StandardBackend -------------------------------------------------------------------------

StandardBackend::StandardBackend(BackendIdentity identity) : identity_(std::move(identity)) {}

void StandardBackend::prepare_standard(const model::Pod& pod, StandardPreparedPod& out) const {
  out.uuids = UuidSelection::read(pod.metadata, identity_.use_uuid_annotation,
                                  identity_.nouse_uuid_annotation);
  out.types = TypeSelection::read(pod.metadata, identity_.use_type_annotation,
                                  identity_.nouse_type_annotation);
}

std::unique_ptr<PreparedPod> StandardBackend::prepare(const model::Pod& pod) const {
  auto p = std::make_unique<StandardPreparedPod>();
  prepare_standard(pod, *p);
  return p;
}

bool StandardBackend::type_allowed(const DeviceUsage& device,
                                   const StandardPreparedPod& pod) const {
  return pod.types.allows(device.type);
}

FitOutcome StandardBackend::fit(std::span<DeviceUsage* const> devices,
                                const ContainerDeviceRequest& request,
                                const FitContext& ctx) const {
  const auto& pod = static_cast<const StandardPreparedPod&>(*ctx.prepared);
  FitOutcome out;
  ContainerDeviceRequest k = request;
  const bool is_mutex = policy_has_token(ctx.gpu_policy, "mutex");
  // Verdict texts only when someone will read them (hamisim fit), never on the hot path.
  const check::Failures failures(out, ctx.explain);

  for (ptrdiff_t i = static_cast<ptrdiff_t>(devices.size()) - 1; i >= 0; --i) {
    const DeviceUsage& d = *devices[i];
    const auto fail = failures.on(d);
    if (!selectable(d, k.type == identity_.vendor && type_allowed(d, pod), &pod.uuids, fail,
                    [&] { return "type \"" + d.type + "\" not selected by the pod"; })) {
      continue;
    }
    if (!slots_free(d, is_mutex, kDeviceWording, fail)) continue;
    if (clamps_cores() && k.coresreq > 100) k.coresreq = 100;
    int64_t memreq = k.memreq > 0 ? k.memreq : 0;
    if (k.mem_percentagereq != kNoMemPercentage && k.memreq == 0) {
      // Go computes this in 32 bits; totals and percentages here are small enough that the
      // 64-bit product truncates to the same value.
      memreq = int64_t{d.totalmem} * k.mem_percentagereq / 100;
    }
    ContainerDevice candidate = taken(d, identity_.vendor, saturate_int32(memreq), k.coresreq);
    if (!quota_allows(ctx, out.devices, candidate)) {
      fail(kResourceQuotaNotFit, "");
      continue;
    }
    if (!memory_free(d, memreq, fail)) continue;
    if (!cores_free(d, d.totalcore, k.coresreq, kDeviceWording, fail)) continue;
    if (!custom_rule_allows(d, ctx)) {
      fail(kCardNotFoundCustomFilterRule, "");
      continue;
    }
    if (take_device(out, k.nums, std::move(candidate))) return out;
  }
  count_insufficient(out);
  return out;
}

Status StandardBackend::add_usage(DeviceUsage& usage, ContainerDevice& chosen) const {
  usage.used += 1;
  usage.usedcores += chosen.usedcores;
  usage.usedmem += chosen.usedmem;
  return ok_status();
}

void StandardBackend::annotate_allocation(const PodSingleDevice& devices,
                                          const AnnotationContext& context,
                                          std::map<std::string, std::string>& annotations) const {
  if (devices.empty()) return;
  const std::string encoded = encode_pod_devices(devices);
  if (!identity_.to_allocate_annotation.empty())
    annotations[identity_.to_allocate_annotation] = encoded;
  if (!identity_.allocated_annotation.empty())
    annotations[identity_.allocated_annotation] = encoded;
}

}  // namespace hamisim::device
