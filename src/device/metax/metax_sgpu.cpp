#include "device/metax/metax_sgpu.h"

#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <set>

#include "device/allocation.h"
#include "device/common/device_checks.h"
#include "device/go_json_reader.h"
#include "go/json_key.h"
#include "go/strconv.h"
#include "model/json_writer.h"
#include "model/simdjson_util.h"

namespace hamisim::device::metax {
namespace {

namespace od = simdjson::ondemand;

using namespace check;  // the shared reason names

// The sGPU Fit's own reason names (reference A.10).
constexpr Reason kCardUnhealthy = Reason::kCardUnhealthy;
constexpr Reason kCardAppClassMismatch = Reason::kCardAppClassMismatch;
constexpr Reason kCardQosPolicyMismatch = Reason::kCardQosPolicyMismatch;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

BackendIdentity sgpu_identity(const MetaxConfig& c) {
  BackendIdentity id;
  id.vendor = std::string(kSgpuVendor);
  id.names.count = c.resource_vcount_name;
  id.names.memory = c.resource_vmemory_name;
  id.names.cores = c.resource_vcore_name;
  id.names.memory_factor = 1024;  // a bare vmemory is GiB (namespace quota, A.8)
  id.to_allocate_annotation = "hami.io/metax-sgpu-devices-to-allocate";
  id.allocated_annotation = "hami.io/metax-sgpu-devices-allocated";
  id.health = HealthCheck::kRegistered;
  id.use_uuid_annotation = "metax-tech.com/use-gpuuuid";
  id.nouse_uuid_annotation = "metax-tech.com/nouse-gpuuuid";
  return id;
}

const model::Quantity* limit_of(const model::Container& c, const std::string& name) {
  if (name.empty()) return nullptr;
  auto it = c.resources.limits.find(name);
  return it == c.resources.limits.end() ? nullptr : &it->second;
}

// HAMi reads "has a unit" off the quantity's canonical text (a letter in it). hamisim keeps a
// quantity's value, not the form it was written in, so the form is inferred from the value.
// Kubernetes prints multiples of 1000 with a decimal suffix (1000 -> "1k": the quirk that
// turns a bare 1000 into bytes) and binary quantities as Ki/Mi/Gi multiples, but the value
// alone cannot tell "1Mi" from a bare 1048576: multiples of 1024 count as binary from 1 Mi up
// (bare, they would ask for a PiB or more) and as bare below (binary, less than 1 MiB).
bool canonical_has_suffix(int64_t v) {
  const uint64_t m = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  if (m == 0) return false;
  if (m % 1000 == 0) return true;
  return m >= (uint64_t{1} << 20) && m % 1024 == 0;
}

using model::json::type_name;

// One MetaxSDeviceInfo as Go decodes it: null leaves a field alone, a value of another type
// (or an int32 field given a fraction, exponent or out-of-range number) fails the annotation.
struct SgpuRegistration {
  std::string uuid;
  std::string model;
  std::string qos_policy;
  int32_t total_dev_count = 0;
  int32_t total_compute = 0;
  int32_t total_vram = 0;
  int32_t numa = 0;
  int32_t link_zone = 0;
  bool healthy = false;
};

Status field_error(size_t index, std::string_view key, std::string_view want, od::json_type got) {
  return make_error("[" + std::to_string(index) + "]." + std::string(key) + ": expected " +
                    std::string(want) + ", got " + std::string(type_name(got)));
}

Status json_error(simdjson::error_code e) {
  return make_error(std::string("invalid JSON: ") + simdjson::error_message(e));
}

Status read_string_field(od::value& v, size_t index, std::string_view key, std::string* out) {
  od::json_type t;
  if (auto e = v.type().get(t)) return json_error(e);
  if (t == od::json_type::null) return ok_status();
  std::string_view s;
  if (t != od::json_type::string || v.get_string().get(s)) {
    return field_error(index, key, "a string", t);
  }
  out->assign(s);
  return ok_status();
}

// Go's int32: strconv.ParseInt of the number as written, so no fraction, no exponent.
Status read_int32_field(od::value& v, size_t index, std::string_view key, int32_t* out) {
  od::json_type t;
  if (auto e = v.type().get(t)) return json_error(e);
  if (t == od::json_type::null) return ok_status();
  if (t != od::json_type::number) return field_error(index, key, "an int32", t);
  const std::string_view token = gojson::number_token(v);
  int64_t n = 0;
  if (go::parse_int(token, 64, &n) != go::NumError::kNone ||
      n < std::numeric_limits<int32_t>::min() || n > kInt32Max) {
    return make_error("[" + std::to_string(index) + "]." + std::string(key) + ": " +
                      std::string(token) + " is not an int32");
  }
  *out = static_cast<int32_t>(n);
  return ok_status();
}

Status read_bool_field(od::value& v, size_t index, std::string_view key, bool* out) {
  od::json_type t;
  if (auto e = v.type().get(t)) return json_error(e);
  if (t == od::json_type::null) return ok_status();
  if (t != od::json_type::boolean || v.get_bool().get(*out)) {
    return field_error(index, key, "a boolean", t);
  }
  return ok_status();
}

Status read_registration(od::object& obj, size_t index, SgpuRegistration& r) {
  for (auto field_result : obj) {
    od::field field;
    if (auto e = std::move(field_result).get(field)) return json_error(e);
    std::string_view k;
    if (auto e = field.unescaped_key().get(k)) return json_error(e);
    od::value v = field.value();
    Status s = ok_status();
    std::string ignored;
    int32_t ignored_int = 0;
    if (go::json_key_matches(k, "uuid")) {
      s = read_string_field(v, index, "uuid", &r.uuid);
    } else if (go::json_key_matches(k, "model")) {
      s = read_string_field(v, index, "model", &r.model);
    } else if (go::json_key_matches(k, "qosPolicy")) {
      s = read_string_field(v, index, "qosPolicy", &r.qos_policy);
    } else if (go::json_key_matches(k, "bdf")) {
      s = read_string_field(v, index, "bdf", &ignored);
    } else if (go::json_key_matches(k, "totalDevCount")) {
      s = read_int32_field(v, index, "totalDevCount", &r.total_dev_count);
    } else if (go::json_key_matches(k, "totalCompute")) {
      s = read_int32_field(v, index, "totalCompute", &r.total_compute);
    } else if (go::json_key_matches(k, "totalVRam")) {
      s = read_int32_field(v, index, "totalVRam", &r.total_vram);
    } else if (go::json_key_matches(k, "numa")) {
      s = read_int32_field(v, index, "numa", &r.numa);
    } else if (go::json_key_matches(k, "linkZone")) {
      s = read_int32_field(v, index, "linkZone", &r.link_zone);
    } else if (go::json_key_matches(k, "availableDevCount") ||
               go::json_key_matches(k, "availableCompute") ||
               go::json_key_matches(k, "availableVRam")) {
      s = read_int32_field(v, index, k, &ignored_int);  // typed in Go, unused by HAMi
    } else if (go::json_key_matches(k, "healthy")) {
      s = read_bool_field(v, index, "healthy", &r.healthy);
    }
    if (!s) return s;
  }
  return ok_status();
}

// GetNodeDevices' decode: a JSON array of MetaxSDeviceInfo (top-level null = no devices), read
// as Go's json.Unmarshal reads it (the Go-JSON reader: Go's acceptance of the text first, so
// invalid UTF-8 becomes U+FFFD rather than an error; keys fold as Go's struct fields do).
Result<std::vector<SgpuRegistration>> decode_registrations(std::string_view json) {
  auto prepared = gojson::prepare(json);
  if (!prepared) return prepared.error();
  const simdjson::padded_string padded(*prepared);
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(padded).get(doc)) return json_error(e).error();
  od::json_type t;
  if (auto e = doc.type().get(t)) return json_error(e).error();
  std::vector<SgpuRegistration> out;
  if (t == od::json_type::null) return out;
  od::array arr;
  if (t != od::json_type::array || doc.get_array().get(arr)) {
    return make_error("expected an array, got " + std::string(type_name(t)));
  }
  for (auto element : arr) {
    const size_t i = out.size();
    od::value el;
    if (auto e = element.get(el)) return json_error(e).error();
    od::json_type et;
    if (auto e = el.type().get(et)) return json_error(e).error();
    // Go decodes null into a nil *MetaxSDeviceInfo, which HAMi then dereferences.
    if (et == od::json_type::null) return make_error("[" + std::to_string(i) + "]: null device");
    od::object obj;
    if (et != od::json_type::object || el.get_object().get(obj)) {
      return make_error("[" + std::to_string(i) + "]: expected an object, got " +
                        std::string(type_name(et)));
    }
    out.emplace_back();
    if (Status s = read_registration(obj, i, out.back()); !s) return s.error();
  }
  return out;
}

// What the rules read from a device's custom_info (HAMi: CustomInfo["QosPolicy"] as a string,
// CustomInfo["LinkZone"] as an int32; anything else counts as absent).
struct SgpuFacts {
  std::optional<std::string> qos_policy;
  int32_t link_zone = 0;
};

SgpuFacts read_facts(const DeviceUsage& d) {
  SgpuFacts out;
  if (!d.custom_info) return out;
  // Go's map keeps the last of repeated keys: every occurrence overwrites.
  gojson::for_each_custom_info_entry(
      *d.custom_info, [&](std::string_view key, simdjson::ondemand::value& v) {
        if (key == "QosPolicy") {
          if (const std::optional<std::string_view> s = gojson::any_string(v)) {
            out.qos_policy = std::string(*s);
          } else {
            out.qos_policy.reset();
          }
        } else if (key == "LinkZone") {
          // An integer in int32's range (the text backends write); anything else is 0.
          int64_t z = 0;
          simdjson::ondemand::number_type type{};
          const bool ok = !v.get_number_type().get(type) &&
                          type == simdjson::ondemand::number_type::signed_integer &&
                          !v.get_int64().get(z) && z >= std::numeric_limits<int32_t>::min() &&
                          z <= kInt32Max;
          out.link_zone = ok ? static_cast<int32_t>(z) : 0;
        }
        return true;
      });
  return out;
}

// The classes and QoS of the pods running on a device (HAMi DeviceUsage.PodInfos).
std::vector<PodOnDevice> pods_on(const DeviceUsage& d) {
  std::vector<PodOnDevice> out;
  out.reserve(d.pods.size());
  for (const DevicePod& p : d.pods) {
    PodOnDevice pod;
    pod.usedcores = p.usedcores;
    if (p.annotations) {
      if (auto it = p.annotations->find(kAppClassAnnotation); it != p.annotations->end())
        pod.app_class = it->second;
      if (auto it = p.annotations->find(kQosPolicyAnnotation); it != p.annotations->end())
        pod.qos_policy = it->second;
    }
    out.push_back(std::move(pod));
  }
  return out;
}

std::pair<int64_t, int64_t> class_counts(std::span<const PodOnDevice> pods) {
  int64_t online = 0, offline = 0;
  for (const PodOnDevice& p : pods) {
    if (p.app_class == kOnline) ++online;
    if (p.app_class == kOffline) ++offline;
  }
  return {online, offline};
}

// The QoS this pod's earlier containers wrote into the device copy (AddResourceUsage): app
// containers accumulate on one copy, each init container is fitted on a fresh one.
std::optional<std::string> written_by_this_pod(const DeviceUsage& d, const FitContext& ctx,
                                               std::string_view pod_qos) {
  std::optional<std::string> out;
  if (!ctx.allocated || ctx.container_index < ctx.init_container_count) return out;
  auto it = ctx.allocated->find(kSgpuVendor);
  if (it == ctx.allocated->end()) return out;
  for (size_t j = ctx.init_container_count; j < ctx.container_index && j < it->second.size(); ++j) {
    for (const ContainerDevice& cd : it->second[j]) {
      if (cd.uuid == d.id) out = std::string(expected_qos(pod_qos, cd.usedcores));
    }
  }
  return out;
}

}  // namespace

// --- Rules -------------------------------------------------------------------------------------

bool app_class_allows(std::string_view request_class, int64_t used,
                      std::span<const PodOnDevice> pods) {
  if (used == 0) return true;
  const auto [online, offline] = class_counts(pods);
  const bool device_classed = online > 0 || offline > 0;
  const bool request_classed = request_class == kOnline || request_class == kOffline;
  if (device_classed != request_classed) return false;
  // Offline pods are suspended while online ones run: no point placing one there.
  return !(online > 0 && request_class == kOffline);
}

std::string_view expected_qos(std::string_view pod_qos, int64_t usedcores) {
  return usedcores == 100 ? std::string_view() : pod_qos;
}

std::string device_qos(std::string_view reported, std::span<const PodOnDevice> pods,
                       const std::optional<std::string>& this_pod) {
  std::optional<std::string_view> cached;
  for (const PodOnDevice& p : pods) {
    if (p.app_class == kOnline) continue;  // online pods never record a QoS
    const std::string_view e = expected_qos(p.qos_policy, p.usedcores);
    if (e != reported) cached = e;
  }
  if (cached) return std::string(*cached);
  if (this_pod) return *this_pod;
  return std::string(reported);
}

bool qos_allows(std::string_view request_qos, int32_t coresreq, int64_t used,
                std::string_view device_qos) {
  if (used == 0 || coresreq == 100) return true;
  return device_qos.empty() || device_qos == request_qos;
}

std::vector<size_t> prioritize_online(std::span<const SgpuCandidate> candidates, size_t nums) {
  std::vector<size_t> order(candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto only_offline = [](const SgpuCandidate& c) { return c.online == 0 && c.offline > 0; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const SgpuCandidate& x = candidates[a];
    const SgpuCandidate& y = candidates[b];
    if (only_offline(x) && only_offline(y)) return x.offline < y.offline;
    if (only_offline(x)) return false;
    if (only_offline(y)) return true;
    if (x.online == y.online) return x.offline < y.offline;
    return x.online < y.online;
  });
  order.resize(std::min(nums, order.size()));
  return order;
}

std::vector<size_t> prioritize_exclusive(std::span<const SgpuCandidate> candidates, size_t nums) {
  std::vector<size_t> out;
  if (candidates.size() <= nums) {
    for (size_t i = 0; i < candidates.size(); ++i) out.push_back(i);
    return out;
  }
  // Groups per zone in order of first appearance, devices in candidate order.
  std::vector<std::vector<size_t>> zones, others;
  std::map<int32_t, size_t> group_of;  // zone -> index into zones / others
  for (size_t i = 0; i < candidates.size(); ++i) {
    const int32_t zone = candidates[i].link_zone;
    auto& groups = zone > 0 ? zones : others;
    auto [it, added] = group_of.try_emplace(zone, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  std::stable_sort(zones.begin(), zones.end(),
                   [](const auto& a, const auto& b) { return a.size() < b.size(); });
  // 1. Within one MetaLink zone.
  for (const auto& z : zones) {
    if (z.size() >= nums) return std::vector<size_t>(z.begin(), z.begin() + nums);
  }
  // 2. Across zones, smallest first; 3. then devices without a zone.
  for (const auto* groups : {&zones, &others}) {
    for (const auto& g : *groups) {
      for (size_t i : g) {
        out.push_back(i);
        if (out.size() >= nums) return out;
      }
    }
  }
  // 4. Unreachable with more candidates than nums, kept as HAMi has it.
  out.clear();
  for (size_t i = 0; i < nums; ++i) out.push_back(i);
  return out;
}

int64_t link_score(std::span<const LinkDevice> devices) {
  // Pairs counted per zone rather than pair by pair (a registration may list many devices):
  // all pairs in a zone minus those between entries with the same UUID.
  std::map<int32_t, int64_t> per_zone;
  std::map<std::pair<int32_t, std::string_view>, int64_t> per_uuid;
  for (const LinkDevice& d : devices) {
    if (d.link_zone == 0) continue;
    ++per_zone[d.link_zone];
    ++per_uuid[{d.link_zone, d.uuid}];
  }
  int64_t pairs = 0;
  for (const auto& [zone, n] : per_zone) pairs += n * (n - 1) / 2;
  for (const auto& [key, n] : per_uuid) pairs -= n * (n - 1) / 2;
  return 10 * pairs;
}

int64_t score_exclusive(std::span<const LinkDevice> allocated,
                        std::span<const LinkDevice> available) {
  std::set<std::string_view> taken;
  for (const LinkDevice& a : allocated) taken.insert(a.uuid);
  std::vector<LinkDevice> rest;
  for (const LinkDevice& d : available) {
    if (!taken.contains(d.uuid)) rest.push_back(d);
  }
  const int64_t inside = link_score(allocated);
  const int64_t lost = link_score(available) - inside - link_score(rest);
  return 10 * inside - lost;
}

int64_t score_online_device(int64_t online, int64_t offline) {
  if (offline > 0 && online == 0) return -100 * offline;
  return -20 * online - 2 * offline;
}

Result<bool> sgpu_admission(const model::StringMap& pod_annotations, const model::Quantity& count) {
  auto get = [&](std::string_view key) -> const std::string* {
    auto it = pod_annotations.find(key);
    return it == pod_annotations.end() ? nullptr : &it->second;
  };
  const std::string* app_class = get(kAppClassAnnotation);
  if (app_class) {
    if (*app_class != kOnline && *app_class != kOffline) {
      return make_error(std::string(kAppClassAnnotation) + " must be set one of [online, offline]");
    }
    if (count.value() != 1) return make_error("app-class pod must request single device");
  }
  if (app_class && *app_class == kOnline) return false;
  const std::string* qos = get(kQosPolicyAnnotation);
  if (!qos) return true;
  if (*qos == kBestEffort || *qos == "fixed-share" || *qos == "burst-share") return false;
  return make_error(std::string(kQosPolicyAnnotation) +
                    " must be set one of [best-effort, fixed-share, burst-share]");
}

// --- Backend -----------------------------------------------------------------------------------

MetaxSgpuBackend::MetaxSgpuBackend(MetaxConfig config)
    : StandardBackend(sgpu_identity(config)), config_(std::move(config)) {}

// GenerateResourceRequests (B.10.b §3): limits only; any value out of range is no request.
ContainerDeviceRequest MetaxSgpuBackend::request_for(const model::Container& c) const {
  const model::Quantity* count_q = limit_of(c, config_.resource_vcount_name);
  if (!count_q) return {};
  const std::optional<int64_t> count = count_q->as_int64();
  if (!count || *count < 1 || *count > kInt32Max) return {};

  int64_t cores = 100;
  if (const model::Quantity* q = limit_of(c, config_.resource_vcore_name)) {
    if (const std::optional<int64_t> v = q->as_int64()) {
      if (*v < 0 || *v > kInt32Max) return {};
      cores = *v;
    }
  }
  int64_t mem = 0;
  if (const model::Quantity* q = limit_of(c, config_.resource_vmemory_name)) {
    if (const std::optional<int64_t> v = q->as_int64()) {
      if (canonical_has_suffix(*v)) {
        mem = *v / 1024 / 1024;  // bytes -> MiB, truncating
      } else if (*v >= 0 && *v <= kInt32Max / 1024) {
        mem = *v * 1024;  // GiB -> MiB
      } else {
        return {};
      }
      if (mem < 0 || mem > kInt32Max) return {};
    }
  }
  return ContainerDeviceRequest{static_cast<int32_t>(*count), std::string(kSgpuVendor),
                                static_cast<int32_t>(mem), mem == 0 ? 100 : 0,
                                static_cast<int32_t>(cores)};
}

NodeDevices MetaxSgpuBackend::node_devices(const model::Node& node) const {
  NodeDevices out;
  auto decoded = read_registration(node, kSgpuRegisterAnnotation, "no sdevice found on node", out,
                                   [](const std::string& v) { return decode_registrations(v); });
  if (!decoded) return out;
  out.devices.reserve(decoded->size());
  for (size_t i = 0; i < decoded->size(); ++i) {
    const SgpuRegistration& r = (*decoded)[i];
    DeviceInfo d;
    d.id = r.uuid;
    d.index = i;
    d.count = r.total_dev_count;
    d.devmem = r.total_vram;
    d.devcore = r.total_compute;
    d.type = std::string(kSgpuVendor);
    d.numa = r.numa;
    d.health = r.healthy;
    d.device_vendor = std::string(kSgpuVendor);
    // HAMi's CustomInfo map, keys in Go's (sorted) marshalling order.
    model::JsonWriter w;
    w.begin_object()
        .key("LinkZone")
        .number(r.link_zone)
        .key("Model")
        .string(r.model)
        .key("QosPolicy")
        .string(r.qos_policy)
        .end_object();
    d.custom_info = w.take();
    out.devices.push_back(std::move(d));
  }
  out.state = NodeDevices::State::kOk;
  return out;
}

std::unique_ptr<PreparedPod> MetaxSgpuBackend::prepare(const model::Pod& pod) const {
  auto p = std::make_unique<SgpuPreparedPod>();
  prepare_standard(pod, *p);
  if (const std::string* v = model::find_annotation(pod.metadata, kAppClassAnnotation)) {
    p->has_app_class = true;
    p->app_class = *v;
  }
  if (const std::string* v = model::find_annotation(pod.metadata, kQosPolicyAnnotation)) {
    p->qos_policy = *v;
  }
  if (const std::string* v = model::find_annotation(pod.metadata, kTopologyAwareAnnotation)) {
    bool b = false;
    if (go::parse_bool(*v, &b)) p->topology_aware = b;
  }
  return p;
}

// MetaxSDevices.Fit (B.10.b §4): every device is checked (type before health, the app class,
// the QoS, then the standard capacity checks without the core clamp), the passing ones are
// candidates in scan order, and a preference order picks among more candidates than needed.
FitOutcome MetaxSgpuBackend::fit(std::span<DeviceUsage* const> devices,
                                 const ContainerDeviceRequest& request,
                                 const FitContext& ctx) const {
  const auto& pod = static_cast<const SgpuPreparedPod&>(*ctx.prepared);
  const bool online = pod.app_class == kOnline;
  const bool is_mutex = policy_has_token(ctx.gpu_policy, "mutex");
  FitOutcome out;
  // Verdict texts only when someone will read them (hamisim fit), never on the hot path.
  const check::Failures failures(out, ctx.explain);

  struct Candidate {
    const DeviceUsage* device;
    int64_t memreq;
    SgpuFacts facts;
  };
  std::vector<Candidate> candidates;
  for (ptrdiff_t i = static_cast<ptrdiff_t>(devices.size()) - 1; i >= 0; --i) {
    const DeviceUsage& d = *devices[i];
    const auto fail = failures.on(d);
    if (request.type != kSgpuVendor) {
      fail(kCardTypeMismatch, "");
      continue;
    }
    if (!d.health) {
      fail(kCardUnhealthy, "");
      continue;
    }
    const std::vector<PodOnDevice> pods = pods_on(d);
    if (!app_class_allows(pod.app_class, d.used, pods)) {
      fail(kCardAppClassMismatch,
           [&] { return "class \"" + pod.app_class + "\" cannot share with the device's pods"; });
      continue;
    }
    SgpuFacts facts = read_facts(d);
    if (!online) {
      // AddResourceUsage rewrites only a string QosPolicy: a device that reports none keeps
      // none, whatever its pods and this pod's earlier containers asked for.
      const std::string qos =
          facts.qos_policy
              ? device_qos(*facts.qos_policy, pods, written_by_this_pod(d, ctx, pod.qos_policy))
              : std::string();
      if (!qos_allows(pod.qos_policy, request.coresreq, d.used, qos)) {
        fail(kCardQosPolicyMismatch, [&] {
          return "device runs \"" + qos + "\", the pod asks for \"" + pod.qos_policy + "\"";
        });
        continue;
      }
    }
    if (!pod.uuids.allows(d.id)) {
      fail(kCardUuidMismatch, "");
      continue;
    }
    if (!slots_free(d, is_mutex, kDeviceWording, fail)) continue;
    // Go computes this in 32 bits; real totals are far too small for the product to wrap.
    const int64_t memreq = request.memreq > 0
                               ? int64_t{request.memreq}
                               : int64_t{d.totalmem} * request.mem_percentagereq / 100;
    if (!memory_free(d, memreq, fail)) continue;
    // No clamp to 100: a request above the device's compute never fits.
    if (!online && !cores_free(d, d.totalcore, request.coresreq, kDeviceWording, fail)) continue;
    candidates.push_back(Candidate{&d, memreq, std::move(facts)});
  }

  const auto nums = static_cast<size_t>(std::max(request.nums, 0));
  if (candidates.size() < nums) {
    if (!candidates.empty()) {
      out.reasons[kAllocatedCardsInsufficientRequest] = static_cast<int>(candidates.size());
    }
    return out;
  }
  std::vector<size_t> best;
  if (candidates.size() > nums &&
      ((pod.has_app_class && online) || (!pod.has_app_class && request.coresreq == 100))) {
    std::vector<SgpuCandidate> facts;
    facts.reserve(candidates.size());
    for (const Candidate& c : candidates) {
      const auto [on, off] = class_counts(pods_on(*c.device));
      facts.push_back(SgpuCandidate{c.device->id, c.facts.link_zone, on, off});
    }
    best = online ? prioritize_online(facts, nums) : prioritize_exclusive(facts, nums);
  } else {
    for (size_t i = 0; i < nums; ++i) best.push_back(i);
  }
  for (size_t i : best) {
    const Candidate& c = candidates[i];
    ContainerDevice cd;
    cd.idx = static_cast<int32_t>(std::min<uint64_t>(c.device->index, kInt32Max));
    cd.uuid = c.device->id;
    cd.type = c.device->type;
    cd.usedmem = saturate_int32(c.memreq);
    cd.usedcores = online ? 0 : request.coresreq;  // online pods do not reserve compute
    out.devices.push_back(std::move(cd));
  }
  out.fits = true;
  return out;
}

void MetaxSgpuBackend::annotate_allocation(const PodSingleDevice& devices,
                                           const AnnotationContext& context,
                                           std::map<std::string, std::string>& annotations) const {
  if (devices.empty()) return;
  StandardBackend::annotate_allocation(devices, context, annotations);
  // PodMetaxSDevice: one array per container (positional), compute/vRam omitted when 0.
  model::JsonWriter w;
  w.begin_array();
  for (const ContainerDevices& container : devices) {
    w.begin_array();
    for (const ContainerDevice& d : container) {
      w.begin_object().key("uuid").string(d.uuid);
      if (d.usedcores != 0) w.key("compute").number(d.usedcores);
      if (d.usedmem != 0) w.key("vRam").number(d.usedmem);
      w.end_object();
    }
    w.end_array();
  }
  w.end_array();
  annotations[std::string(kSgpuAllocatedAnnotation)] = w.take();
  // Without a scheduling time (simulation) the key is left out.
  if (context.unix_nanos) {
    annotations[std::string(kPredicateTimeAnnotation)] = std::to_string(*context.unix_nanos);
  }
}

// ScoreNode (B.10.b §6): an online pod by the classed pods already on the devices it takes;
// else a pod taking whole devices by MetaLink topology, when enabled: by its own
// metax-tech.com/sgpu-topology-aware if that parses as a Go bool, else by `sgpuTopologyAware`.
// HAMi reads the pod's annotations from the "Pod.Annotations" its Fit stored in each chosen
// device; here they come from what prepare() read of the pod.
float MetaxSgpuBackend::score_node(std::span<const DeviceUsage> previous,
                                   const PodSingleDevice& chosen, std::string_view node_policy,
                                   const PreparedPod* prepared) const {
  const int64_t weight = node_policy == "spread" ? -10000 : 10000;
  const auto* pod = dynamic_cast<const SgpuPreparedPod*>(prepared);
  std::set<std::string_view> taken;
  bool whole_device = false;
  for (const ContainerDevices& c : chosen) {
    for (const ContainerDevice& d : c) {
      taken.insert(d.uuid);
      whole_device = whole_device || d.usedcores == 100;
    }
  }
  if (pod && !taken.empty() && pod->app_class == kOnline) {
    int64_t score = 0;
    for (const DeviceUsage& d : previous) {
      if (!taken.contains(d.id)) continue;
      const auto [online, offline] = class_counts(pods_on(d));
      score += score_online_device(online, offline);
    }
    return static_cast<float>(weight * score);
  }
  const bool topology_aware =
      pod && pod->topology_aware ? *pod->topology_aware : config_.sgpu_topology_aware;
  if (!whole_device || !topology_aware) return 0;

  std::map<std::string_view, int32_t> zone_of;
  std::vector<LinkDevice> available;
  for (const DeviceUsage& d : previous) {
    // Only this backend's devices carry a LinkZone HAMi can read (an int32 it stored itself).
    const int32_t zone = d.vendor == kSgpuVendor ? read_facts(d).link_zone : 0;
    zone_of.emplace(d.id, zone);
    if (d.used == 0) available.push_back(LinkDevice{d.id, zone});
  }
  std::vector<LinkDevice> allocated;
  for (const ContainerDevices& c : chosen) {
    for (const ContainerDevice& d : c) {
      if (d.usedcores != 100) continue;
      auto it = zone_of.find(d.uuid);
      allocated.push_back(LinkDevice{d.uuid, it == zone_of.end() ? 0 : it->second});
    }
  }
  return static_cast<float>(weight * score_exclusive(allocated, available));
}

}  // namespace hamisim::device::metax
