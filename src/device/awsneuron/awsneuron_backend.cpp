#include "device/awsneuron/awsneuron_backend.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "device/allocation.h"
#include "device/codec.h"
#include "device/common/device_checks.h"
#include "device/go_json_reader.h"
#include "model/json_writer.h"

namespace hamisim::device::awsneuron {
namespace {

namespace od = simdjson::ondemand;

constexpr int64_t kMaxDeviceCount = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxCoreCount = kMaxDeviceCount * kRequestCoresPerDevice;
// A device's time slices are its NeuronCores.
constexpr check::Wording kCoreSlotWording{"device", "cores", ""};

BackendIdentity aws_identity(const AwsNeuronConfig& c) {
  BackendIdentity id;
  id.vendor = std::string(kVendor);
  id.names.count = c.resource_count_name;
  id.names.cores = c.resource_core_name;
  id.allocated_annotation = std::string(kAllocatedAnnotation);
  id.health = HealthCheck::kAlways;
  id.locks_node = false;
  id.use_uuid_annotation = std::string(kUseUuidAnnotation);
  id.nouse_uuid_annotation = std::string(kNouseUuidAnnotation);
  return id;
}

// validateResourceRequest: an integer in [1, max].
std::optional<int64_t> valid_count(const model::Quantity& q, int64_t max) {
  const std::optional<int64_t> v = q.as_int64();
  if (!v || *v <= 0 || *v > max) return std::nullopt;
  return v;
}

// countMaskAvailable: the set bits of a positive mask; 0 for zero or negative masks.
int32_t cores_in_mask(int64_t mask) {
  const int32_t m = saturate_int32(mask);
  return m > 0 ? std::popcount(static_cast<uint32_t>(m)) : 0;
}

// The instance type the first device carries; nullopt when it carries none (HAMi: nil).
std::optional<std::string> node_type_of(const DeviceUsage& d) {
  if (!d.custom_info) return std::nullopt;
  std::optional<std::string> out;
  // Go's map keeps the last of repeated keys: every occurrence overwrites.
  gojson::for_each_custom_info_entry(*d.custom_info, [&](std::string_view key, od::value& v) {
    if (key != kNodeTypeKey) return true;
    if (od::json_type t; !v.type().get(t) && t == od::json_type::null) {
      out.reset();
      return true;
    }
    // A value that is not a string reads as "" (a failed type assertion in HAMi).
    const std::optional<std::string_view> s = gojson::any_string(v);
    out = s ? std::string(*s) : std::string();
    return true;
  });
  return out;
}

const model::Container* container_at(const model::Pod& pod, size_t index) {
  const size_t init = pod.spec.init_containers.size();
  if (index < init) return &pod.spec.init_containers[index];
  if (index - init < pod.spec.containers.size()) return &pod.spec.containers[index - init];
  return nullptr;
}

// The node's cores per device for annotation core IDs: the device's Count (HAMi's global
// coresPerAWSNeuron, here the node's own).
uint64_t cores_per_device(std::span<const DeviceInfo> node_devices, std::string_view uuid) {
  for (const DeviceInfo& d : node_devices) {
    if (d.id == uuid) return static_cast<uint32_t>(d.count);
  }
  return kRequestCoresPerDevice;
}

}  // namespace

AwsNeuronBackend::AwsNeuronBackend(AwsNeuronConfig config)
    : StandardBackend(aws_identity(config)), config_(std::move(config)) {}

ContainerDeviceRequest AwsNeuronBackend::request_for(const model::Container& c) const {
  if (const model::Quantity* q = find_resource(c, config_.resource_count_name)) {
    const std::optional<int64_t> n = valid_count(*q, kMaxDeviceCount);
    if (!n) return {};
    return ContainerDeviceRequest{static_cast<int32_t>(*n), std::string(kVendor), 0, 0,
                                  kRequestCoresPerDevice};
  }
  const model::Quantity* q = find_resource(c, config_.resource_core_name);
  if (!q) return {};
  const std::optional<int64_t> cores = valid_count(*q, kMaxCoreCount);
  if (!cores) return {};
  // splitCoreRequest: one device for up to a device's cores, else whole devices' worth.
  if (*cores <= kRequestCoresPerDevice) {
    return ContainerDeviceRequest{1, std::string(kVendor), 0, 0, static_cast<int32_t>(*cores)};
  }
  if (*cores % kRequestCoresPerDevice != 0) return {};
  return ContainerDeviceRequest{static_cast<int32_t>(*cores / kRequestCoresPerDevice),
                                std::string(kVendor), 0, 0, kRequestCoresPerDevice};
}

bool AwsNeuronBackend::whole_device_request(const model::Container& c) const {
  // An invalid count makes no request at all, so "present" is enough.
  return find_resource(c, config_.resource_count_name) != nullptr;
}

NodeDevices AwsNeuronBackend::node_devices(const model::Node& node) const {
  NodeDevices out;
  const std::optional<int64_t> counts =
      capacity_devices(node, config_.resource_count_name, kMaxDevices, "devices", out);
  if (!counts) return out;
  // Go: uint(coresTotal) / uint(counts); Count keeps the low 32 bits, and the mask built by
  // doubling-plus-one keeps its low 32 bits too (all ones from 32 cores on).
  const uint64_t cores_total =
      static_cast<uint64_t>(capacity_count(node, config_.resource_core_name));
  const uint64_t per_device = cores_total / static_cast<uint64_t>(*counts);
  const auto count = static_cast<int32_t>(static_cast<uint32_t>(per_device));
  const int32_t mask =
      per_device >= 32 ? -1 : static_cast<int32_t>((uint64_t{1} << per_device) - 1);

  const std::string* label = model::find_label(node.metadata, kInstanceTypeLabel);
  model::JsonWriter w;
  w.begin_object().key(kNodeTypeKey).string(label ? *label : std::string()).end_object();
  const std::string custom_info = w.take();

  out.devices.reserve(static_cast<size_t>(*counts));
  for (int64_t i = 0; i < *counts; ++i) {
    DeviceInfo d = capacity_device(node, kVendor, i, kVendor, count, 0, mask);
    d.custom_info = custom_info;
    out.devices.push_back(std::move(d));
  }
  out.state = NodeDevices::State::kOk;
  return out;
}

std::unique_ptr<PreparedPod> AwsNeuronBackend::prepare(const model::Pod& pod) const {
  auto p = std::make_unique<AwsPreparedPod>();
  prepare_standard(pod, *p);
  for (const auto* group : {&pod.spec.init_containers, &pod.spec.containers}) {
    for (const model::Container& c : *group) p->whole_device.push_back(whole_device_request(c));
  }
  return p;
}

std::vector<size_t> AwsNeuronBackend::select_window(std::span<DeviceUsage* const> devices,
                                                    int64_t count) {
  if (devices.empty() || count <= 0) return {};
  const std::optional<std::string> node_type = node_type_of(*devices.front());
  if (!node_type) return {};
  const auto n = static_cast<uint64_t>(count);
  auto window_at = [&](size_t start) {
    std::vector<size_t> out;
    if (devices.size() < start + n) return out;
    for (size_t p = start; p < start + n; ++p) {
      if (devices[p]->used > 0 || !devices[p]->health) return std::vector<size_t>{};
      out.push_back(p);
    }
    return out;
  };
  // Inferentia devices form a ring: any run of consecutive positions will do.
  const bool inferentia =
      node_type->find("inf") != std::string::npos || node_type->find("Inf") != std::string::npos;
  if (!inferentia && count != 1 && count != 4 && count != 8 && count != 16) return {};
  const size_t step = inferentia ? 1 : static_cast<size_t>(n);
  for (size_t start = 0; start < devices.size(); start += step) {
    std::vector<size_t> w = window_at(start);
    if (!w.empty()) return w;
  }
  return {};
}

FitOutcome AwsNeuronBackend::fit(std::span<DeviceUsage* const> devices,
                                 const ContainerDeviceRequest& request,
                                 const FitContext& ctx) const {
  FitOutcome out;
  if (request.nums > 1) {
    // Several devices: a topology window of list positions, each mapped to the device whose
    // Index equals the position (the same device while the list keeps discovery order). No
    // UUID, slot, type or mutex checks here.
    const std::vector<size_t> window = select_window(devices, request.nums);
    if (window.empty()) {
      out.reasons[check::kNumaNotFit] = 1;
      if (ctx.explain) {
        for (const DeviceUsage* d : devices) {
          out.verdicts.push_back(
              DeviceVerdict{d->id, std::string(reason_name(check::kNumaNotFit)),
                            "no window of " + std::to_string(request.nums) + " idle devices"});
        }
      }
      return out;
    }
    for (const size_t p : window) {
      for (const DeviceUsage* d : devices) {
        if (d->index != p) continue;
        out.devices.push_back(check::taken(*d, request.type, d->totalmem, d->totalcore));
        break;
      }
    }
    out.fits = true;
    return out;
  }

  const auto* pod = static_cast<const AwsPreparedPod*>(ctx.prepared);
  const bool whole = pod && ctx.container_index < pod->whole_device.size() &&
                     pod->whole_device[ctx.container_index];
  const bool is_mutex = policy_has_token(ctx.gpu_policy, "mutex");
  // Verdict texts only when someone will read them, never on the hot path.
  const check::Failures fail(out, ctx.explain);
  for (ptrdiff_t i = static_cast<ptrdiff_t>(devices.size()) - 1; i >= 0; --i) {
    const DeviceUsage& d = *devices[i];
    // Type: a case-sensitive substring, then the exact vendor key.
    const bool type_matches =
        d.type.find(request.type) != std::string::npos && request.type == kVendor;
    if (!check::selectable(d, type_matches, pod ? &pod->uuids : nullptr, fail.on(d))) continue;
    if (!check::slots_free(d, is_mutex, kCoreSlotWording, fail.on(d))) continue;
    // A whole device asks for all of this node's cores per device.
    const int64_t cores = whole ? d.count : request.coresreq;
    const int32_t free = cores_in_mask(d.totalcore) - cores_in_mask(d.usedcores);
    if (free < cores) {
      fail(d, Reason::kCardInsufficientCore, [&] {
        return "needs " + std::to_string(cores) + " cores, " + std::to_string(free) + " free";
      });
      continue;
    }
    // addCoreUsage with HAMi's in-pass counter, which always equals Usedcores: an idle device
    // gives mask 1 or 3, a used one its other core of two (3 - used).
    const int64_t used = saturate_int32(d.usedcores);
    int64_t mask = 3 - used;
    if (used == 0 && cores == 2) mask = 3;
    if (used == 0 && cores == 1) mask = 1;
    // Go's int32(): the low 32 bits of the mask.
    out.devices.push_back(check::taken(d, request.type, 0, static_cast<int32_t>(mask)));
    out.fits = true;
    return out;
  }
  return out;
}

void AwsNeuronBackend::annotate_allocation(const PodSingleDevice& devices,
                                           const AnnotationContext& ctx,
                                           std::map<std::string, std::string>& annotations) const {
  if (devices.empty()) return;
  annotations[std::string(kAllocatedAnnotation)] = encode_pod_devices(devices);
  // HAMi skips containers it cannot find in the pod.
  if (!ctx.pod) return;
  // Accumulated over all containers; each container that added IDs rewrites the keys.
  std::string ids;
  for (size_t ci = 0; ci < devices.size(); ++ci) {
    if (devices[ci].empty()) continue;
    const model::Container* c = container_at(*ctx.pod, ci);
    if (!c) continue;
    // Limits only, unlike the request (limits, else requests).
    auto limit = c->resources.limits.find(config_.resource_count_name);
    for (const ContainerDevice& d : devices[ci]) {
      if (limit != c->resources.limits.end()) {
        if (limit->second.as_int64().value_or(0) > 0) ids += std::to_string(d.idx) + ",";
        continue;
      }
      // NeuronCore IDs: cores per device x Idx (+1 for the second core), in Go's uint.
      const uint64_t first = cores_per_device(ctx.node_devices, d.uuid) *
                             static_cast<uint64_t>(static_cast<int64_t>(d.idx));
      const auto bits = static_cast<uint32_t>(d.usedcores);
      if (bits & 1u) ids += std::to_string(first) + ",";
      if (bits & 2u) ids += std::to_string(first + 1) + ",";
      if (bits & 3u) annotations[std::string(kResourceTypeAnnotation)] = config_.resource_core_name;
    }
  }
  if (ids.empty()) return;
  while (!ids.empty() && ids.back() == ',') ids.pop_back();
  annotations[std::string(kNeuronIdsAnnotation)] = ids;
  if (ctx.unix_nanos)
    annotations[std::string(kAllocTimeAnnotation)] = std::to_string(*ctx.unix_nanos);
  annotations[std::string(kAllocatedFlagAnnotation)] = "false";
  const auto node = annotations.find(std::string(kAssignedNodeAnnotation));
  annotations[std::string(kPredicateNodeAnnotation)] =
      node != annotations.end() ? node->second : std::string(ctx.node);
}

Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults) {
  AwsNeuronConfig c;
  // A file without the section leaves the names empty, as HAMi does.
  if (!chart_defaults) c = AwsNeuronConfig{"", ""};
  for (Status s : {section.read("resourceCountName", c.resource_count_name),
                   section.read("resourceCoreName", c.resource_core_name)}) {
    if (!s) return s.error();
  }
  return Backends{std::make_shared<AwsNeuronBackend>(std::move(c))};
}

}  // namespace hamisim::device::awsneuron
