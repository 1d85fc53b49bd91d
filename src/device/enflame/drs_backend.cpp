// Enflame `Enflame` DRS partitions (reference: hami-other-vendors.md B.6.b).

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "device/allocation.h"
#include "device/codec.h"
#include "device/common/device_checks.h"
#include "device/enflame/enflame_backends.h"
#include "device/go_json_reader.h"
#include "go/json_key.h"
#include "go/strconv.h"
#include "go/utf8.h"
#include "model/json_writer.h"

namespace hamisim::device::enflame {
namespace {

namespace od = simdjson::ondemand;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
// A node publishes a handful of profiles; a hostile annotation with thousands would be copied
// into every card's custominfo and re-read by every Fit.
constexpr size_t kMaxProfiles = 256;

int32_t clamp_int32(int64_t v) {
  return static_cast<int32_t>(std::clamp(v, kInt32Min, kInt32Max));
}

// strconv.Atoi, absent when it fails.
std::optional<int64_t> go_atoi(std::string_view s) {
  int64_t v = 0;
  if (go::parse_int(s, 64, &v) != go::NumError::kNone) return std::nullopt;
  return v;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view trim_suffix(std::string_view s, std::string_view suffix) {
  if (s.ends_with(suffix)) s.remove_suffix(suffix.size());
  return s;
}

// --- The capacity annotation, decoded as Go's json.Unmarshal into HAMi's structs -----------
//
// Through the Go-JSON reader (device/go_json_reader.h): Go's own acceptance rules run over the
// whole text first, invalid UTF-8 becomes U+FFFD as Go's decoder makes it, and a capacity number
// is a float64 whatever its spelling; a number beyond float64 fails the annotation, as in Go
// (with another message).

// drsDeviceSpec.Capacity is `any`: what the JSON value decoded to.
struct CapacityValue {
  enum class Kind { kNil, kNumber, kString, kOther };
  Kind kind = Kind::kNil;
  double number = 0;
  std::string text;
};

struct DeviceSpec {
  std::string index;
  std::string minor;
  CapacityValue capacity;
};

struct CapacitySpec {
  std::vector<DeviceSpec> devices;
  std::map<std::string, std::string> profiles;
};

Error type_error(std::string_view what, od::json_type t, std::string_view go_type) {
  const char* got = "value";
  switch (t) {
    case od::json_type::array:
      got = "array";
      break;
    case od::json_type::object:
      got = "object";
      break;
    case od::json_type::number:
      got = "number";
      break;
    case od::json_type::string:
      got = "string";
      break;
    case od::json_type::boolean:
      got = "bool";
      break;
    case od::json_type::null:
      got = "null";
      break;
  }
  return Error{"cannot unmarshal " + std::string(got) + " into " + std::string(what) + " of type " +
               std::string(go_type)};
}

Error json_error(simdjson::error_code e) {
  return Error{std::string("invalid JSON: ") + simdjson::error_message(e)};
}

Result<od::json_type> type_of(od::value& v) {
  od::json_type t;
  if (auto e = v.type().get(t)) return json_error(e);
  return t;
}

// A string field: null leaves it as it was.
Status read_string(od::value& v, std::string_view what, std::string& out) {
  auto t = type_of(v);
  if (!t) return t.error();
  if (*t == od::json_type::null) return ok_status();
  std::string_view s;
  if (*t != od::json_type::string || v.get_string().get(s)) return type_error(what, *t, "string");
  out.assign(s);
  return ok_status();
}

Status read_device(od::value& v, const std::string& what, DeviceSpec& d) {
  auto t = type_of(v);
  if (!t) return t.error();
  if (*t == od::json_type::null) return ok_status();
  od::object obj;
  if (*t != od::json_type::object || v.get_object().get(obj)) {
    return type_error(what, *t, "enflame.drsDeviceSpec");
  }
  for (auto field_result : obj) {
    od::field field;
    std::string_view key;
    if (auto e = std::move(field_result).get(field)) return json_error(e);
    if (auto e = field.unescaped_key().get(key)) return json_error(e);
    od::value value = field.value();
    if (go::json_key_matches(key, "index")) {
      if (Status s = read_string(value, what + ".index", d.index); !s) return s;
    } else if (go::json_key_matches(key, "minor")) {
      if (Status s = read_string(value, what + ".minor", d.minor); !s) return s;
    } else if (go::json_key_matches(key, "capacity")) {
      auto vt = type_of(value);
      if (!vt) return vt.error();
      CapacityValue c;
      switch (*vt) {
        case od::json_type::null:
          break;
        case od::json_type::number:
          c.kind = CapacityValue::Kind::kNumber;
          if (auto e = value.get_double().get(c.number)) return json_error(e);
          break;
        case od::json_type::string: {
          c.kind = CapacityValue::Kind::kString;
          std::string_view text;
          if (auto e = value.get_string().get(text)) return json_error(e);
          c.text.assign(text);
          break;
        }
        default:
          c.kind = CapacityValue::Kind::kOther;
      }
      d.capacity = std::move(c);
    }
  }
  return ok_status();
}

// Read as Go's json.Unmarshal reads it (the Go-JSON reader): Go's acceptance of the text first,
// so invalid UTF-8 becomes U+FFFD rather than an error; keys fold as Go's struct fields do.
Result<CapacitySpec> decode_capacity(std::string_view raw) {
  auto prepared = gojson::prepare(raw);
  if (!prepared) return prepared.error();
  const simdjson::padded_string padded(*prepared);
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(padded).get(doc)) return json_error(e);
  od::json_type t;
  if (auto e = doc.type().get(t)) return json_error(e);
  CapacitySpec spec;
  if (t == od::json_type::null) return spec;
  od::object top;
  if (t != od::json_type::object || doc.get_object().get(top)) {
    return type_error("the value", t, "drsCapacitySpec");
  }
  for (auto field_result : top) {
    od::field field;
    std::string_view key;
    if (auto e = std::move(field_result).get(field)) return json_error(e);
    if (auto e = field.unescaped_key().get(key)) return json_error(e);
    od::value value = field.value();
    if (go::json_key_matches(key, "devices")) {
      auto vt = type_of(value);
      if (!vt) return vt.error();
      if (*vt == od::json_type::null) {
        spec.devices.clear();
        continue;
      }
      od::array arr;
      if (*vt != od::json_type::array || value.get_array().get(arr)) {
        return type_error("devices", *vt, "array");
      }
      // Go decodes element i into the existing element i, then truncates.
      size_t i = 0;
      for (auto element : arr) {
        od::value e;
        if (auto err = element.get(e)) return json_error(err);
        if (i >= spec.devices.size()) spec.devices.emplace_back();
        if (Status s = read_device(e, "devices[" + std::to_string(i) + "]", spec.devices[i]); !s)
          return s.error();
        ++i;
      }
      spec.devices.resize(i);
    } else if (go::json_key_matches(key, "profiles")) {
      auto vt = type_of(value);
      if (!vt) return vt.error();
      if (*vt == od::json_type::null) {
        spec.profiles.clear();
        continue;
      }
      od::object obj;
      if (*vt != od::json_type::object || value.get_object().get(obj)) {
        return type_error("profiles", *vt, "map");
      }
      // A map merges repeated keys; a null value stores "".
      for (auto p_result : obj) {
        od::field p;
        std::string_view id_key;
        if (auto e = std::move(p_result).get(p)) return json_error(e);
        if (auto e = p.unescaped_key().get(id_key)) return json_error(e);
        const std::string k(id_key);
        od::value pv = p.value();
        std::string id;
        if (Status s = read_string(pv, "profiles", id); !s) return s.error();
        spec.profiles[k] = std::move(id);
      }
    }
  }
  return spec;
}

// parseDRSCapacity: a number must be within int32 (then truncated), a string an integer
// (then clamped); anything else is invalid.
std::optional<int32_t> capacity_of(const CapacityValue& c) {
  switch (c.kind) {
    case CapacityValue::Kind::kNumber:
      if (std::isnan(c.number) || c.number > kInt32Max || c.number < kInt32Min) return std::nullopt;
      return static_cast<int32_t>(c.number);
    case CapacityValue::Kind::kString:
      if (auto v = go_atoi(go::trim_space(c.text))) return clamp_int32(*v);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::string card_custom_info(const std::string& index, const std::string& minor, int64_t max_slice,
                             const std::map<std::string, std::string>& profiles) {
  model::JsonWriter w;
  w.begin_object();
  w.key("index").string(index);
  w.key("maxSlice").number(max_slice);
  w.key("minor").string(minor);
  w.key("profiles").begin_object();
  for (const auto& [name, id] : profiles) w.key(name).string(id);
  w.end_object();
  w.end_object();
  return w.take();
}

// normalizeMemoryRequestToGB: a value more than twice the largest profile's GiB is taken as
// MiB (rounded up to GiB).
int64_t requested_gb(int32_t memreq, int64_t max_profile_gb) {
  if (memreq <= 0) return 0;
  if (max_profile_gb <= 0) return memreq;
  // Go's int multiplication wraps; so does this one, without signed overflow.
  const auto twice = static_cast<int64_t>(static_cast<uint64_t>(max_profile_gb) * 2);
  if (memreq > twice) return (int64_t{memreq} + 1023) / 1024;
  return memreq;
}

const DeviceInfo* find_device(std::span<const DeviceInfo> devices, std::string_view id) {
  for (const DeviceInfo& d : devices) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

std::string container_name(const model::Pod& pod, size_t index) {
  const size_t init = pod.spec.init_containers.size();
  if (index < init) return pod.spec.init_containers[index].name;
  if (index - init < pod.spec.containers.size()) return pod.spec.containers[index - init].name;
  return "container-" + std::to_string(index);
}

BackendIdentity drs_identity(const EnflameConfig& c) {
  BackendIdentity id;
  id.vendor = std::string(kDrsVendor);
  // The count name falls back to the legacy vGCU name, then to HAMi's default; memory and
  // core names have defaults too, so this backend has names even without a section.
  id.names.count = !c.resource_name_drs_gcu.empty() ? c.resource_name_drs_gcu
                   : !c.resource_name_vgcu.empty()  ? c.resource_name_vgcu
                                                    : std::string("enflame.com/drs-gcu");
  id.names.memory = !c.resource_name_gcu_memory.empty() ? c.resource_name_gcu_memory
                                                        : std::string("enflame.com/gcu-memory");
  id.names.cores = !c.resource_name_gcu_core.empty() ? c.resource_name_gcu_core
                                                     : std::string("enflame.com/gcu-core");
  id.allocated_annotation = std::string(kDrsAllocatedAnnotation);
  id.health = HealthCheck::kAlways;
  id.locks_node = false;
  id.use_uuid_annotation = std::string(kDrsUseUuidAnnotation);
  id.nouse_uuid_annotation = std::string(kDrsNouseUuidAnnotation);
  return id;
}

}  // namespace

std::pair<int64_t, int64_t> parse_profile(std::string_view name) {
  const std::string normalized = ascii_lower(go::trim_space(name));
  const size_t dot = normalized.find('.');
  if (dot == std::string::npos) return {0, 0};
  const std::string_view all(normalized);
  const std::string_view size_part = trim_suffix(go::trim_space(all.substr(0, dot)), "g");
  const std::optional<int64_t> size = go_atoi(size_part);
  if (!size) return {0, 0};
  // Only the second dot-separated part is the memory ("1g.6gb.x" is 1g.6gb).
  std::string_view rest = all.substr(dot + 1);
  rest = rest.substr(0, rest.find('.'));
  const std::optional<int64_t> mem = go_atoi(trim_suffix(go::trim_space(rest), "gb"));
  return {*size, mem.value_or(0)};
}

DrsCardFacts read_card_facts(const std::string* custom_info) {
  DrsCardFacts out;
  if (!custom_info) return out;
  gojson::for_each_custom_info_entry(*custom_info, [&](std::string_view key, od::value& v) {
    if (key == "index" || key == "minor") {
      if (const std::optional<std::string_view> s = gojson::any_string(v))
        (key == "index" ? out.index : out.minor).assign(*s);
    } else if (key == "maxSlice") {
      // readCustomInfoInt: integers as they are; anything else that is not a number is 0.
      od::number_type type{};
      if (v.get_number_type().get(type)) return true;  // not a number
      int64_t i = 0;
      double d = 0;
      if (type == od::number_type::signed_integer && !v.get_int64().get(i)) {
        out.max_slice = i;
      } else if (!v.get_double().get(d)) {
        out.max_slice =
            std::isnan(d) || d > kInt32Max || d < kInt32Min ? 0 : static_cast<int64_t>(d);
      }
    } else if (key == "profiles") {
      od::object profiles;
      if (v.get_object().get(profiles)) return true;
      for (auto field_result : profiles) {
        od::field field;
        std::string_view id_key;
        if (std::move(field_result).get(field) || field.unescaped_key().get(id_key)) return true;
        od::value id = field.value();
        if (const std::optional<std::string_view> s = gojson::any_string(id))
          out.profiles.emplace_back(id_key, *s);
      }
    }
    return true;
  });
  return out;
}

// --- DrsBackend ------------------------------------------------------------------------------

DrsBackend::DrsBackend(const EnflameConfig& config) : StandardBackend(drs_identity(config)) {}

ContainerDeviceRequest DrsBackend::request_for(const model::Container& c) const {
  const ResourceNames& names = resource_names();
  if (const model::Quantity* q = find_resource(c, names.count)) {
    const std::optional<int64_t> n = q->as_int64();
    if (n && *n > 0) {
      if (*n > kInt32Max) return {};
      return ContainerDeviceRequest{1, std::string(kDrsVendor), static_cast<int32_t>(*n),
                                    kDrsModeSlices, 0};
    }
    // A non-integer or non-positive slice count falls through to memory/cores.
  }
  const model::Quantity* mem_q = find_resource(c, names.memory);
  const model::Quantity* core_q = find_resource(c, names.cores);
  if (!mem_q && !core_q) return {};
  const int64_t mem = mem_q ? mem_q->value() : 0;
  const int64_t cores = core_q ? core_q->value() : 0;
  if (mem > kInt32Max || cores > kInt32Max) return {};
  // Go's int32() of a (possibly very negative) value keeps the low 32 bits.
  return ContainerDeviceRequest{1, std::string(kDrsVendor), static_cast<int32_t>(mem), kDrsModeSpec,
                                static_cast<int32_t>(cores)};
}

NodeDevices DrsBackend::node_devices(const model::Node& node) const {
  NodeDevices out;
  const std::string* raw = model::find_annotation(node.metadata, kDrsCapacityAnnotation);
  if (!raw) {
    out.message = "annotation not found " + std::string(kDrsCapacityAnnotation);
    return out;
  }
  auto malformed = [&](std::string message) {
    out.state = NodeDevices::State::kMalformed;
    out.message = std::move(message);
    return out;
  };
  auto spec = decode_capacity(*raw);
  if (!spec) {
    return malformed("failed to parse " + std::string(kDrsCapacityAnnotation) + ": " +
                     spec.error().message);
  }
  const std::string& node_name = node.metadata.name;
  if (spec->profiles.size() > kMaxProfiles) {
    return malformed(std::string(kDrsCapacityAnnotation) + ": " +
                     std::to_string(spec->profiles.size()) + " profiles, more than the " +
                     std::to_string(kMaxProfiles) + " hamisim accepts");
  }
  if (spec->devices.size() > static_cast<size_t>(kMaxDevices)) {
    return malformed(std::string(kDrsCapacityAnnotation) + ": " +
                     std::to_string(spec->devices.size()) + " cards, more than the " +
                     std::to_string(kMaxDevices) + " hamisim accepts");
  }
  int64_t max_slice = 0;
  int64_t max_mem_gb = 0;
  for (const auto& [name, id] : spec->profiles) {
    const auto [size, mem] = parse_profile(name);
    max_slice = std::max(max_slice, size);
    max_mem_gb = std::max(max_mem_gb, mem);
  }
  if (max_slice <= 0) return malformed("no valid drs profiles found on node " + node_name);
  if (max_mem_gb <= 0) max_mem_gb = max_slice;
  // Go's int32(maxMemGB * 1024): the product wraps in 64 bits, then keeps the low 32 bits.
  const auto devmem = static_cast<int32_t>(static_cast<uint64_t>(max_mem_gb) * 1024u);

  out.devices.reserve(spec->devices.size());
  for (size_t p = 0; p < spec->devices.size(); ++p) {
    const DeviceSpec& d = spec->devices[p];
    const int64_t dev_index = go_atoi(d.index).value_or(static_cast<int64_t>(p));
    const std::optional<int32_t> capacity = capacity_of(d.capacity);
    if (!capacity || *capacity <= 0) {
      out.devices.clear();
      return malformed("invalid drs capacity on node " + node_name);
    }
    std::string minor(go::trim_space(d.minor));
    if (minor.empty()) minor = std::to_string(dev_index);
    DeviceInfo info;
    info.id = node_name + "-enflame-drs-" + std::to_string(dev_index);
    info.index = static_cast<uint64_t>(dev_index);  // Go's uint(): negative indexes wrap
    info.count = *capacity;
    info.devmem = devmem;
    info.devcore = 100;
    info.type = std::string(kDrsVendor);
    info.health = true;
    info.device_vendor = std::string(kDrsVendor);
    info.custom_info =
        card_custom_info(std::to_string(dev_index), minor, max_slice, spec->profiles);
    out.devices.push_back(std::move(info));
  }
  if (out.devices.empty()) {
    out.message = "no drs devices found on node " + node_name;
    return out;
  }
  out.state = NodeDevices::State::kOk;
  return out;
}

std::vector<DrsProfile> DrsBackend::collect_profiles(std::span<DeviceUsage* const> devices) {
  std::vector<DrsCardFacts> facts;
  facts.reserve(devices.size());
  int64_t max_slice = 0;
  for (const DeviceUsage* d : devices) {
    facts.push_back(read_card_facts(d->custom_info));
    max_slice = std::max(max_slice, facts.back().max_slice);
  }
  if (max_slice <= 0) {
    for (const DrsCardFacts& f : facts) {
      for (const auto& [name, id] : f.profiles)
        max_slice = std::max(max_slice, parse_profile(name).first);
    }
  }
  if (max_slice <= 0) return {};
  // By name: a later card's ID for the same name wins, as in HAMi's map.
  std::map<std::string, DrsProfile> seen;
  for (const DrsCardFacts& f : facts) {
    for (const auto& [name, id] : f.profiles) {
      const auto [size, mem] = parse_profile(name);
      if (size <= 0 || mem <= 0) continue;
      const double core =
          std::ceil(static_cast<double>(size) * 100 / static_cast<double>(max_slice));
      // Only a card whose maxSlice understates its own profiles gets here; saturate.
      const int64_t core_percent =
          core >= 9.2e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(core);
      seen[name] = DrsProfile{name, id, size, mem, core_percent};
    }
  }
  std::vector<DrsProfile> out;
  out.reserve(seen.size());
  for (auto& [name, p] : seen) out.push_back(std::move(p));
  // Go's sort.Slice leaves equal (size, memory) pairs in no particular order; names decide.
  std::stable_sort(out.begin(), out.end(), [](const DrsProfile& a, const DrsProfile& b) {
    return a.size != b.size ? a.size < b.size : a.memory_gb < b.memory_gb;
  });
  return out;
}

std::optional<DrsProfile> DrsBackend::select_profile(const std::vector<DrsProfile>& candidates,
                                                     const ContainerDeviceRequest& request) {
  if (candidates.empty()) return std::nullopt;
  if (request.mem_percentagereq == kDrsModeSlices) {
    for (const DrsProfile& c : candidates) {
      if (c.size == request.memreq) return c;
    }
    return std::nullopt;
  }
  // The largest memory of the last candidate (largest size), not of all candidates.
  const int64_t want_gb = requested_gb(request.memreq, candidates.back().memory_gb);
  const int64_t want_core = request.coresreq;
  for (const DrsProfile& c : candidates) {
    if (want_gb > 0 && c.memory_gb < want_gb) continue;
    if (want_core > 0 && c.core_percent < want_core) continue;
    return c;
  }
  return std::nullopt;
}

FitOutcome DrsBackend::fit(std::span<DeviceUsage* const> devices,
                           const ContainerDeviceRequest& request, const FitContext& ctx) const {
  FitOutcome out;
  const check::Failures fail(out, ctx.explain);
  // Explanations speak of cards and their slices.
  constexpr check::Wording kCardWording{"card", "slices", ""};

  const std::optional<DrsProfile> profile = select_profile(collect_profiles(devices), request);
  if (!profile || profile->size <= 0 || profile->size > kInt32Max || profile->memory_gb <= 0 ||
      profile->memory_gb > kInt32Max / 1024 || profile->core_percent > kInt32Max) {
    out.reasons[Reason::kModeNotFit] = 1;
    if (ctx.explain) {
      for (const DeviceUsage* d : devices) {
        out.verdicts.push_back(
            DeviceVerdict{d->id, "ModeNotFit",
                          profile ? "profile " + profile->name + " is out of range"
                                  : std::string("no partition profile matches the request")});
      }
    }
    return out;
  }
  const auto profile_mib = static_cast<int32_t>(profile->memory_gb * 1024);
  const auto profile_core = static_cast<int32_t>(profile->core_percent);

  const StandardPreparedPod* pod = static_cast<const StandardPreparedPod*>(ctx.prepared);
  const bool is_mutex = policy_has_token(ctx.gpu_policy, "mutex");
  int32_t nums = request.nums;
  for (ptrdiff_t i = static_cast<ptrdiff_t>(devices.size()) - 1; i >= 0; --i) {
    const DeviceUsage& d = *devices[i];
    if (!check::selectable(d, request.type == kDrsVendor, pod ? &pod->uuids : nullptr,
                           fail.on(d))) {
      continue;
    }
    if (!check::slots_free(d, is_mutex, kCardWording, fail.on(d))) continue;
    // No "slices left" check: the memory and core sums are what bound a card.
    if (d.totalmem - d.usedmem < profile_mib) {
      fail(d, Reason::kCardInsufficientMemory, [&] {
        return "profile " + profile->name + " needs " + std::to_string(profile_mib) + " MiB, " +
               std::to_string(d.totalmem - d.usedmem) + " free";
      });
      continue;
    }
    if (d.totalcore > 0 && d.totalcore - d.usedcores < profile_core) {
      fail(d, Reason::kCardInsufficientCore, [&] {
        return "profile " + profile->name + " needs " + std::to_string(profile_core) + "%, " +
               std::to_string(d.totalcore - d.usedcores) + "% free";
      });
      continue;
    }
    ContainerDevice chosen = check::taken(d, request.type, profile_mib, profile_core);
    chosen.mig_profile = profile->name;
    if (check::take_device(out, nums, std::move(chosen))) return out;
  }
  check::count_insufficient(out);
  return out;
}

Status DrsBackend::add_usage(DeviceUsage& usage, ContainerDevice& chosen) const {
  int64_t slices = chosen.mig_profile ? clamp_int32(parse_profile(*chosen.mig_profile).first) : 0;
  if (slices <= 0) slices = 1;
  usage.used = clamp_int32(usage.used + slices);
  usage.usedcores += chosen.usedcores;
  usage.usedmem += chosen.usedmem;
  return ok_status();
}

void DrsBackend::annotate_allocation(const PodSingleDevice& devices, const AnnotationContext& ctx,
                                     std::map<std::string, std::string>& annotations) const {
  if (devices.empty()) return;
  annotations[std::string(kDrsAllocatedAnnotation)] = encode_pod_devices(devices);
  annotations[std::string(kAssignedAnnotation)] = "false";
  if (ctx.unix_nanos) {
    annotations[std::string(kAssignedTimeAnnotation)] = std::to_string(*ctx.unix_nanos);
  }
  struct Assigned {
    int32_t request = 0;
    std::string profile_id;
    std::string profile_name;
  };
  std::map<std::string, Assigned> assigned;  // Go's json sorts map keys
  auto write_once = [&](std::string_view key, const std::string& value) {
    if (value.empty()) return;
    annotations.try_emplace(std::string(key), value);
  };
  for (size_t ci = 0; ci < devices.size(); ++ci) {
    if (devices[ci].empty()) continue;
    const ContainerDevice& chosen = devices[ci].front();
    const std::string profile_name = chosen.mig_profile.value_or("");
    int32_t slices = clamp_int32(parse_profile(profile_name).first);
    if (slices <= 0) slices = 1;
    DrsCardFacts card;
    if (const DeviceInfo* d = find_device(ctx.node_devices, chosen.uuid)) {
      card = read_card_facts(&d->custom_info);
    }
    std::string profile_id;
    for (const auto& [name, id] : card.profiles) {
      if (name == profile_name) profile_id = id;
    }
    // The first container with a device decides the card keys (HAMi: "if not yet set").
    if (!card.index.empty() && !annotations.contains(std::string(kAssignedIndexAnnotation))) {
      annotations[std::string(kAssignedIndexAnnotation)] = card.index;
      annotations[std::string(kAssignedIdAnnotation)] = card.index;
    }
    write_once(kAssignedMinorAnnotation, card.minor);
    write_once(kRequestSizeAnnotation, std::to_string(slices));
    // Without the pod the names would be invented ("container-<i>"): not written.
    if (ctx.pod) assigned[container_name(*ctx.pod, ci)] = {slices, profile_id, profile_name};
  }
  if (assigned.empty()) return;
  model::JsonWriter w;
  w.begin_object();
  for (const auto& [name, a] : assigned) {
    w.key(name).begin_object();
    w.key("allocated").boolean(false);
    w.key("request").number(a.request);
    if (!a.profile_id.empty()) w.key("profileID").string(a.profile_id);
    if (!a.profile_name.empty()) w.key("profileName").string(a.profile_name);
    w.end_object();
  }
  w.end_object();
  annotations[std::string(kAssignedContainersAnnotation)] = w.take();
}

}  // namespace hamisim::device::enflame
