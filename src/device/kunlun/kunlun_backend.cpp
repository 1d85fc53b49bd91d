#include "device/kunlun/kunlun_backend.h"

#include <algorithm>
#include <set>

#include "device/allocation.h"
#include "device/codec.h"
#include "device/common/device_checks.h"
#include "device/kunlun/topology.h"
#include "device/kunlun/xpu_backend.h"

namespace hamisim::device::kunlun {
namespace {

using check::kCardNotHealth;
using check::kCardUuidMismatch;
// Kunlun reports "no topology-valid selection" under HAMi's NUMA reason.
using check::kNumaNotFit;

BackendIdentity kunlun_identity(const KunlunConfig& c) {
  BackendIdentity id;
  id.vendor = std::string(kVendor);
  id.names.count = c.resource_count_name;
  id.allocated_annotation = std::string(kAllocatedAnnotation);  // no to-allocate key
  id.health = HealthCheck::kAlways;
  id.locks_node = false;
  id.use_uuid_annotation = std::string(kUseUuidAnnotation);
  id.nouse_uuid_annotation = std::string(kNouseUuidAnnotation);
  return id;
}

// Go's strings.Contains (case-sensitive), which ScoreNode uses on types.
bool has(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// HAMi addidx: a set kept in insertion order.
void add_index(std::vector<int64_t>& list, int64_t v) {
  if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
}

}  // namespace

bool KunlunPreparedPod::uuid_allowed(std::string_view id) const {
  return uuids.allows(id) && baidu_uuids.allows(id);
}

std::unique_ptr<PreparedPod> TopologyBackend::prepare(const model::Pod& pod) const {
  auto p = std::make_unique<KunlunPreparedPod>();
  prepare_standard(pod, *p);
  p->baidu_uuids =
      UuidSelection::read(pod.metadata, kBaiduUseUuidAnnotation, kBaiduNouseUuidAnnotation);
  return p;
}

KunlunBackend::KunlunBackend(KunlunConfig config)
    : TopologyBackend(kunlun_identity(config)), config_(std::move(config)) {}

ContainerDeviceRequest KunlunBackend::request_for(const model::Container& c) const {
  const std::optional<int64_t> count = resource_int64(c, config_.resource_count_name);
  if (!count) return {};
  // HAMi converts with int32(n) and no range check: the low 32 bits, as this cast keeps.
  return ContainerDeviceRequest{static_cast<int32_t>(*count), std::string(kVendor), 0, 100, 0};
}

NodeDevices KunlunBackend::node_devices(const model::Node& node) const {
  NodeDevices out;
  // A negative count: HAMi's loop produces no card, which the scheduler treats as none.
  const std::optional<int64_t> cards = capacity_devices(
      node, config_.resource_count_name, kMaxDevices, "cards", out, "no device found on node");
  if (!cards) return out;
  for (int64_t i = 0; i < *cards; ++i) {
    DeviceInfo d = capacity_device(node, "kunlun", i, kVendor, 100, kCardMemory, kCardCores);
    d.numa = i < *cards / 2 ? 0 : 1;
    out.devices.push_back(std::move(d));
  }
  out.state = NodeDevices::State::kOk;
  return out;
}

FitOutcome KunlunBackend::fit(std::span<DeviceUsage* const> devices,
                              const ContainerDeviceRequest& request, const FitContext& ctx) const {
  const auto& pod = static_cast<const KunlunPreparedPod&>(*ctx.prepared);
  FitOutcome out;
  // HAMi records each UUID failure in a set while its predicate runs; the selector evaluates
  // every device at least once, so the set is simply all devices the filters reject.
  std::set<std::string, std::less<>> uuid_failures;
  std::vector<bool> fits(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceUsage& d = *devices[i];
    const bool allowed = pod.uuid_allowed(d.id);
    if (!allowed) uuid_failures.insert(d.id);
    fits[i] = allowed && d.used == 0 && d.health;
  }
  const std::vector<uint64_t> chosen = graph_select(devices, fits, request.nums);
  if (chosen.empty()) {
    if (!uuid_failures.empty()) {
      out.reasons[kCardUuidMismatch] = static_cast<int>(uuid_failures.size());
    } else {
      out.reasons[kNumaNotFit] = 1;
    }
    if (ctx.explain) {
      for (size_t i = 0; i < devices.size(); ++i) {
        const DeviceUsage& d = *devices[i];
        if (uuid_failures.contains(d.id)) {
          out.verdicts.push_back({d.id, std::string(reason_name(kCardUuidMismatch)), ""});
        } else if (!d.health) {
          out.verdicts.push_back({d.id, std::string(reason_name(kCardNotHealth)), ""});
        } else if (d.used > 0) {
          out.verdicts.push_back(
              {d.id, std::string(reason_name(kNumaNotFit)),
               "in use by " + std::to_string(d.used) + " task(s); cards are exclusive"});
        } else {
          out.verdicts.push_back({d.id, std::string(reason_name(kNumaNotFit)),
                                  "idle, but no topology-valid set of " +
                                      std::to_string(request.nums) + " cards includes it"});
        }
      }
    }
    return out;
  }
  // Each chosen index names the first listed device with that index (none: skipped, as in
  // HAMi).
  for (uint64_t index : chosen) {
    auto it = std::find_if(devices.begin(), devices.end(),
                           [&](const DeviceUsage* d) { return d->index == index; });
    if (it == devices.end()) continue;
    out.devices.push_back(check::taken(**it, request.type, (*it)->totalmem, (*it)->totalcore));
  }
  out.fits = true;
  return out;
}

Status KunlunBackend::add_usage(DeviceUsage& usage, ContainerDevice&) const {
  usage.used += 1;
  return ok_status();
}

void KunlunBackend::annotate_allocation(const PodSingleDevice& devices,
                                        const AnnotationContext& context,
                                        std::map<std::string, std::string>& annotations) const {
  if (devices.empty()) return;
  annotations[std::string(kAllocatedAnnotation)] = encode_pod_devices(devices);
  // Every container with cards overwrites the index list: the last one wins.
  for (const ContainerDevices& container : devices) {
    if (!container.empty())
      annotations[std::string(kDeviceIndexAnnotation)] = join_indexes(container);
  }
}

float KunlunBackend::score_node(std::span<const DeviceUsage> previous,
                                const PodSingleDevice& chosen, std::string_view,
                                const PreparedPod*) const {
  std::vector<int64_t> prev;
  std::vector<int64_t> current;
  for (const DeviceUsage& d : previous) {
    if (!has(d.type, kVendor)) return 0;  // mixed-vendor node: no topology score
    if (d.used > 0) add_index(prev, static_cast<int64_t>(d.index));
  }
  for (const ContainerDevices& container : chosen) {
    for (const ContainerDevice& d : container) {
      if (!has(d.type, kVendor)) return 0;
      add_index(current, d.idx);
    }
  }
  return fragmentation_score(prev, current);
}

Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults) {
  KunlunConfig c;
  if (!chart_defaults) c = KunlunConfig{"", "", ""};
  for (Status s : {section.read("resourceCountName", c.resource_count_name),
                   section.read("resourceVCountName", c.resource_vcount_name),
                   section.read("resourceVMemoryName", c.resource_vmemory_name)}) {
    if (!s) return s.error();
  }
  return Backends{std::make_shared<KunlunBackend>(c), std::make_shared<XpuBackend>(c)};
}

}  // namespace hamisim::device::kunlun
