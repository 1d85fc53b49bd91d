#include "device/ascend/ascend_backend.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <unordered_map>

#include "device/allocation.h"
#include "device/common/device_checks.h"
#include "device/go_json_reader.h"
#include "model/json_writer.h"

namespace hamisim::device::ascend {
namespace {

namespace od = simdjson::ondemand;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

using namespace check;  // the shared reason names

constexpr Reason kModeNotFit = Reason::kModeNotFit;

BackendIdentity ascend_identity(const VnpuConfig& c) {
  const std::string& cw = c.common_word;
  BackendIdentity id;
  id.vendor = cw;
  id.names.count = c.resource_name;
  id.names.memory = c.resource_memory_name;
  id.names.cores = c.resource_core_name;
  id.names.memory_factor = c.memory_factor;
  id.to_allocate_annotation = "hami.io/" + cw + "-devices-to-allocate";
  id.allocated_annotation = "hami.io/" + cw + "-devices-allocated";
  id.handshake_annotation = "hami.io/node-handshake-" + cw;
  id.cleanup_annotation = id.handshake_annotation;
  id.use_uuid_annotation = "hami.io/use-" + cw + "-uuid";
  id.nouse_uuid_annotation = "hami.io/no-use-" + cw + "-uuid";
  return id;
}

// Go's int(float64) on amd64: truncation toward zero, and the "integer indefinite"
// 0x8000000000000000 for anything out of range.
int64_t go_int(double d) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (std::isnan(d) || d >= kTwo63 || d < -kTwo63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

// What a device's custominfo says about its network. HAMi keeps custominfo as
// map[string]any: `present` = the map is not nil, `has_key` = it has "NetworkID", `id` = that
// value as int when it is a JSON number (HAMi's float64 type assertion).
struct NetworkFacts {
  bool present = false;
  bool has_key = false;
  std::optional<int64_t> id;
};

NetworkFacts network_facts(const std::string* custom_info) {
  NetworkFacts out;
  if (!custom_info) return out;
  out.present = true;
  // Go's map keeps the last of repeated keys: every occurrence overwrites.
  gojson::for_each_custom_info_entry(*custom_info, [&](std::string_view key, od::value& v) {
    if (key != "NetworkID") return true;
    out.has_key = true;
    out.id.reset();
    if (auto d = gojson::any_number(v)) out.id = go_int(*d);
    return true;
  });
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Go int32 arithmetic of `Totalmem * MemPercentagereq / 100`: the product wraps.
int32_t percent_of(int32_t total, int32_t percent) {
  const auto product =
      static_cast<int32_t>(static_cast<uint32_t>(total) * static_cast<uint32_t>(percent));
  return product / 100;
}

// Collected slots grouped by key, groups in the order of their first member (a map from key
// to group keeps this O(n log n) on hostile registrations).
class Groups {
 public:
  void add(int64_t key, size_t slot) {
    auto [it, inserted] = index_.try_emplace(key, groups_.size());
    if (inserted) groups_.emplace_back();
    groups_[it->second].push_back(slot);
  }
  std::vector<std::vector<size_t>>& list() { return groups_; }

 private:
  std::map<int64_t, size_t> index_;
  std::vector<std::vector<size_t>> groups_;
};

}  // namespace

// --- Templates ---------------------------------------------------------------------------------

TrimmedMemory trim_memory(const VnpuConfig& config, int64_t m) {
  // The first template of the memory-sorted list that holds `m` = the smallest one (the
  // earliest of equal sizes); written order-independently so that any config works.
  const VnpuTemplate* best = nullptr;
  for (const VnpuTemplate& t : config.templates) {
    if (m <= t.memory && (!best || t.memory < best->memory)) best = &t;
  }
  if (best) return {best->memory, best->name};
  if (m <= config.memory_capacity) return {config.memory_allocatable, {}};
  return {0, {}};
}

// --- Backend -----------------------------------------------------------------------------------

AscendBackend::AscendBackend(VnpuConfig config, bool hami_vnpu_core)
    : StandardBackend(ascend_identity(config)),
      config_(std::move(config)),
      hami_vnpu_core_(hami_vnpu_core),
      register_annotation_("hami.io/node-register-" + config_.common_word),
      runtime_annotation_("huawei.com/" + config_.common_word) {
  // HAMi sorts the templates at init (sort.Slice, unstable); equal sizes keep their order here.
  std::stable_sort(
      config_.templates.begin(), config_.templates.end(),
      [](const VnpuTemplate& a, const VnpuTemplate& b) { return a.memory < b.memory; });
}

// GenerateResourceRequests (B.2 §3). Memory is taken as written: the admission webhook has
// already rounded it to a template (hard split) or kept it (soft split).
ContainerDeviceRequest AscendBackend::request_for(const model::Container& c) const {
  const model::Quantity* count_q = find_resource(c, config_.resource_name);
  if (!count_q) return {};
  const std::optional<int64_t> count = count_q->as_int64();
  if (!count || *count < 1 || *count > kInt32Max) return {};

  int64_t mem = 0;
  if (const model::Quantity* q = find_resource(c, config_.resource_memory_name)) {
    if (q->sign() < 0) return {};
    if (const std::optional<int64_t> v = q->as_int64()) {
      if (*v > kInt32Max) return {};
      mem = *v;
      if (config_.memory_factor > 1) {
        mem *= config_.memory_factor;  // both <= int32 max: no int64 overflow
        if (mem > kInt32Max) return {};
      }
    }
    // A positive non-integer memory is ignored: the container asks for whole cards.
  }
  int64_t cores = 0;
  if (!config_.resource_core_name.empty()) {
    if (const model::Quantity* q = find_resource(c, config_.resource_core_name)) {
      const int64_t v = q->value();
      if (v < 0 || v > kInt32Max) return {};
      cores = v;
    }
  }
  return ContainerDeviceRequest{static_cast<int32_t>(*count), config_.common_word,
                                static_cast<int32_t>(mem), mem == 0 ? 100 : 0,
                                static_cast<int32_t>(cores)};
}

NodeDevices AscendBackend::node_devices(const model::Node& node) const {
  NodeDevices out = registration_from_json(node, register_annotation_, config_.common_word);
  if (out.state == NodeDevices::State::kAbsent &&
      model::find_annotation(node.metadata, register_annotation_)) {
    out.message = "no device found on node";  // HAMi's text for an empty list
  }
  // nodeSupport: the node annotation when present, else the section's default.
  bool soft_split = hami_vnpu_core_;
  if (const std::string* v = model::find_annotation(node.metadata, kNodeHamiCoreAnnotation)) {
    soft_split = *v == "true";
  }
  for (DeviceInfo& d : out.devices) d.mode = soft_split ? std::string(kSoftSplitMode) : "";
  return out;
}

std::unique_ptr<PreparedPod> AscendBackend::prepare(const model::Pod& pod) const {
  auto p = std::make_unique<AscendPreparedPod>();
  prepare_standard(pod, *p);
  const std::string* mode = model::find_annotation(pod.metadata, kVnpuModeAnnotation);
  p->hami_core = mode && *mode == kHamiCoreMode;
  return p;
}

FitOutcome AscendBackend::fit(std::span<DeviceUsage* const> devices,
                              const ContainerDeviceRequest& request,
                              const FitContext& context) const {
  DetailedFit d = fit_detailed(devices, request, context);
  if (d.reason_cards != devices.size()) d.outcome.reason_cards = d.reason_cards;
  return std::move(d.outcome);
}

AscendBackend::DetailedFit AscendBackend::fit_detailed(std::span<DeviceUsage* const> devices,
                                                       const ContainerDeviceRequest& request,
                                                       const FitContext& ctx) const {
  const auto& pod = static_cast<const AscendPreparedPod&>(*ctx.prepared);
  DetailedFit result;
  result.reason_cards = devices.size();
  FitOutcome& out = result.outcome;
  // Verdict texts only when someone will read them (hamisim fit), never on the hot path.
  const check::Failures failures(out, ctx.explain);

  // A soft-split pod needs a node that soft-splits (node_devices recorded it in `mode`); a
  // hard-split pod may use any node.
  if (pod.hami_core && std::none_of(devices.begin(), devices.end(), [](const DeviceUsage* d) {
        return d->mode == kSoftSplitMode;
      })) {
    out.reasons[kModeNotFit] = 1;
    if (ctx.explain) {
      out.verdicts.push_back(DeviceVerdict{
          "", std::string(reason_name(kModeNotFit)),
          "the pod asks for hami-core soft split; the node's hami-vnpu-core is not \"true\""});
    }
    return result;
  }

  // 910 chips whose every candidate reports a NetworkID collect all passing NPUs and then
  // choose the best-connected ones.
  const bool is_910 = starts_with(config_.common_word, k910Prefix);
  std::vector<NetworkFacts> facts;
  bool need_topology = false;
  if (is_910) {
    facts.reserve(devices.size());
    for (const DeviceUsage* d : devices) facts.push_back(network_facts(d->custom_info));
    need_topology = std::all_of(facts.begin(), facts.end(),
                                [](const NetworkFacts& f) { return f.present && f.has_key; });
  }
  const int32_t origin_req = request.nums;
  // 910C hands out whole modules (NPU pairs): it collects every passing NPU too.
  const bool pairing = request.type == k910C && origin_req > 1;
  const bool collect_all = need_topology || pairing;

  ContainerDeviceRequest k = request;
  const bool is_mutex = policy_has_token(ctx.gpu_policy, "mutex");
  std::vector<size_t> collected_at;  // candidate position of each collected device

  for (ptrdiff_t i = static_cast<ptrdiff_t>(devices.size()) - 1; i >= 0; --i) {
    const DeviceUsage& d = *devices[i];
    const auto fail = failures.on(d);
    // The request type must be this chip; the device type is not compared (the candidate list
    // already holds the devices whose type contains it).
    if (!selectable(d, k.type == config_.common_word, &pod.uuids, fail,
                    [&] { return "request type \"" + k.type + "\""; })) {
      continue;
    }
    if (!slots_free(d, is_mutex, kDeviceWording, fail)) continue;
    if (k.coresreq > 100) k.coresreq = 100;
    int32_t memreq = k.memreq > 0 ? k.memreq : 0;
    if (k.mem_percentagereq != kNoMemPercentage && k.memreq == 0) {
      memreq = percent_of(d.totalmem, k.mem_percentagereq);
    }
    if (!memory_free(d, memreq, fail)) continue;
    // Soft split counts cores in percent of a card whatever the device reports.
    const int64_t total_core = pod.hami_core ? 100 : d.totalcore;
    if (!cores_free(d, total_core, k.coresreq, kDeviceWording, fail)) continue;
    if (k.nums > 0) {
      if (!collect_all) --k.nums;
      out.devices.push_back(taken(d, config_.common_word, memreq, k.coresreq));
      collected_at.push_back(static_cast<size_t>(i));
    }
    if (k.nums == 0 && !collect_all) {
      out.fits = true;
      return result;
    }
  }

  if (pairing) {
    // Modules = NPU index / 2 (Go int division). Only modules whose two NPUs both passed are
    // taken, whole, until at least the request is covered. HAMi orders full modules through a
    // Go map and an unstable sort; here they keep the order of their first collected NPU (the
    // most preferred first).
    Groups modules;
    for (size_t s = 0; s < out.devices.size(); ++s) {
      modules.add(static_cast<int64_t>(devices[collected_at[s]]->index) / 2, s);
    }
    ContainerDevices taken;
    for (const std::vector<size_t>& slots : modules.list()) {
      if (static_cast<int64_t>(taken.size()) >= origin_req) break;
      if (slots.size() != 2) continue;
      for (size_t s : slots) taken.push_back(out.devices[s]);
    }
    const bool ok = static_cast<int64_t>(taken.size()) == origin_req;
    out.devices = std::move(taken);
    if (ok) {
      out.fits = true;
      return result;
    }
    out.reasons[kAllocatedCardsInsufficientRequest] = static_cast<int>(out.devices.size());
    // HAMi reports this failure against the request, not the candidates.
    result.reason_cards = static_cast<size_t>(origin_req);
    return result;
  }

  if (need_topology) {
    const size_t collected = out.devices.size();
    const auto wanted = static_cast<size_t>(std::max(origin_req, 0));
    if (collected == wanted) {
      out.fits = true;
      return result;
    }
    if (collected > wanted) {
      if (wanted == 1) {
        out.devices.resize(1);
      } else {
        // computeBestCombination: group by NetworkID as the node's own registration of this
        // chip says (a device of another chip matched by type substring is not in it, and a
        // non-numeric NetworkID is no group: both are dropped, and the shorter list still
        // counts as success, as in HAMi). Largest group first; HAMi's ties come from a Go map,
        // here the group seen first wins.
        Groups groups;
        for (size_t s = 0; s < collected; ++s) {
          const DeviceUsage& d = *devices[collected_at[s]];
          const NetworkFacts& f = facts[collected_at[s]];
          if (d.vendor == config_.common_word && f.id) groups.add(*f.id, s);
        }
        std::stable_sort(groups.list().begin(), groups.list().end(),
                         [](const auto& a, const auto& b) { return a.size() > b.size(); });
        ContainerDevices best;
        for (const std::vector<size_t>& slots : groups.list()) {
          for (size_t s : slots) {
            if (best.size() == wanted) break;
            best.push_back(out.devices[s]);
          }
        }
        out.devices = std::move(best);
      }
      out.fits = true;
      return result;
    }
  }

  count_insufficient(out);
  return result;
}

void AscendBackend::annotate_allocation(const PodSingleDevice& devices,
                                        const AnnotationContext& context,
                                        std::map<std::string, std::string>& annotations) const {
  if (devices.empty()) return;
  StandardBackend::annotate_allocation(devices, context, annotations);
  // HAMi writes time.Now().Unix(); without a scheduling time (simulation) the key is left out.
  if (context.unix_nanos) {
    annotations[std::string(kPredicateTimeAnnotation)] =
        std::to_string(*context.unix_nanos / 1'000'000'000);
  }
  const model::Pod* pod = context.pod;

  bool hami_core = false;
  if (pod) {
    const std::string* mode = model::find_annotation(pod->metadata, kVnpuModeAnnotation);
    hami_core = mode && *mode == kHamiCoreMode;
  }
  // Go marshals the nil slice of a device-less list as null; omitempty drops "", 0.
  model::JsonWriter w;
  bool any = false;
  for (const ContainerDevices& container : devices) {
    for (const ContainerDevice& d : container) {
      if (!any) w.begin_array();
      any = true;
      w.begin_object();
      if (!d.uuid.empty()) w.key("UUID").string(d.uuid);
      if (!hami_core) {
        const std::string_view temp = trim_memory(config_, d.usedmem).template_name;
        if (!temp.empty()) w.key("temp").string(temp);
      }
      if (d.usedmem != 0) w.key("memory").number(d.usedmem);
      if (d.usedcores != 0) w.key("core").number(d.usedcores);
      w.end_object();
    }
  }
  if (any) {
    w.end_array();
    annotations[runtime_annotation_] = w.take();
  } else {
    annotations[runtime_annotation_] = "null";
  }
}

float AscendBackend::score_node(std::span<const DeviceUsage> previous,
                                const PodSingleDevice& chosen, std::string_view,
                                const PreparedPod*) const {
  if (!starts_with(config_.common_word, k910Prefix)) return 0;
  // The chosen device carries the custominfo of the device Fit took, found by UUID as the
  // usage commit finds it (the first device with that ID).
  std::unordered_map<std::string_view, const DeviceUsage*> by_id;
  for (const DeviceUsage& d : previous) by_id.try_emplace(d.id, &d);
  float score = 0;
  for (const ContainerDevices& container : chosen) {
    if (container.empty()) continue;
    std::map<int64_t, int> per_network;
    for (const ContainerDevice& c : container) {
      auto dev = by_id.find(c.uuid);
      if (dev == by_id.end()) return 0;
      const NetworkFacts f = network_facts(dev->second->custom_info);
      if (!f.present || !f.has_key) return 0;
      if (f.id) ++per_network[*f.id];  // a non-numeric NetworkID is not counted
    }
    int most = 0;
    int total = 0;
    for (const auto& [id, n] : per_network) {
      most = std::max(most, n);
      total += n;
    }
    if (total == 0) continue;
    score += static_cast<float>(most) / static_cast<float>(total);
  }
  return score * 10.0F;
}

// --- Admission ---------------------------------------------------------------------------------

AdmissionResult admit_container(const VnpuConfig& config, const AdmissionInput& in) {
  AdmissionResult out;
  if (!in.count_limit) {
    out.clear_visible_devices = config.overwrite_env;
    return out;
  }
  const int64_t original = in.count_limit->value();
  if (config.common_word == k910C && config.super_pod) {
    if (original == 1) {
      out.count = 2;  // one module (2 NPUs) is the smallest unit
    } else if (original % 2 != 0) {
      out.error = "Ascend910C device request must be 1 or 2*n, got " + std::to_string(original);
      return out;
    }
  }
  if (!in.hami_core && !config.resource_core_name.empty() && in.core && in.core->value() > 0) {
    out.error = config.resource_core_name + " is only supported in hami-core (soft split) mode";
    return out;
  }
  int64_t trimmed = config.memory_allocatable;
  if (in.memory_limit) {
    const int64_t asked = in.memory_limit->value();
    if (in.hami_core) {
      trimmed = asked;
    } else {
      trimmed = trim_memory(config, asked).memory;
      if (trimmed == 0) {
        out.error = config.resource_memory_name + " " + std::to_string(asked) + " is invalid";
        return out;
      }
    }
  }
  out.found = true;
  // Template slices only for single-NPU containers; the check reads the count as written, so
  // a 910C "1" (made 2 above) may still take a template.
  if (original > 1 && !in.hami_core && trimmed != config.memory_allocatable) {
    out.error = "vNPU not supported for multiple devices";
    return out;
  }
  out.memory = trimmed;
  if (!in.pod_has_runtime_class) out.runtime_class_name = config.runtime_class_name;
  return out;
}

}  // namespace hamisim::device::ascend
