#include "device/codec.h"

#include <simdjson.h>

#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "device/go_json_reader.h"
#include "go/json_key.h"
#include "go/quote.h"
#include "go/strconv.h"
#include "go/utf8.h"
#include "model/json_writer.h"

// The JSON codecs read with the Go-JSON reader (device/go_json_reader.h): what Go's
// json.Unmarshal accepts, with its merge semantics and its errors.

namespace hamisim::device {
namespace {

namespace od = simdjson::ondemand;

using go::NumError;
using gojson::at;
using gojson::for_each_field;
using gojson::get_type;
using gojson::numbers_fit_float64;
using gojson::Path;
using gojson::read_bool;
using gojson::read_int;
using gojson::read_int32;
using gojson::read_signed;
using gojson::read_slice;
using gojson::read_string;
using gojson::read_uint32;
using gojson::read_unsigned;
using gojson::simdjson_failure;
using gojson::wrong_type;

// strconv.ParseInt(s, 10, 32) into `out`; on failure returns Go's error text.
std::optional<std::string> parse_int32_field(std::string_view s, int32_t* out) {
  int64_t v = 0;
  if (const NumError e = go::parse_int(s, 32, &v); e != NumError::kNone) {
    return go::num_error_text("ParseInt", s, e);
  }
  *out = static_cast<int32_t>(v);
  return std::nullopt;
}

// strconv.Atoi(s).
std::optional<std::string> parse_atoi_field(std::string_view s, int64_t* out) {
  if (const NumError e = go::parse_int(s, 64, out); e != NumError::kNone) {
    return go::num_error_text("Atoi", s, e);
  }
  return std::nullopt;
}

// DeviceInfo.CustomInfo (map[string]any): type-checked as Go would, kept as raw JSON text.
Status read_custom_info(od::value& v, const Path& p, std::string* out) {
  od::json_type t;
  if (auto st = get_type(v, p, &t); !st.ok()) return st;
  if (t == od::json_type::null) return ok_status();
  if (t != od::json_type::object) return wrong_type(p, t, "map[string]any");
  od::object obj;
  if (auto e = v.get_object().get(obj)) return simdjson_failure(p, e);
  std::string_view raw;
  if (auto e = obj.raw_json().get(raw)) return simdjson_failure(p, e);
  if (!numbers_fit_float64(raw)) return at(p, "number out of range for float64");
  out->assign(raw);
  return ok_status();
}

// DeviceInfo.MIGTemplate ([]Geometry, Geometry = []MigTemplate{Name, Core, Memory, Count},
// no json tags): deprecated, never written, type-checked on read.
Status check_mig_template(od::value& v, const Path& p) {
  std::vector<std::vector<int>> discard;  // element types only matter for the walk
  return read_slice(
      v, p, "[]Geometry", &discard, nullptr,
      [](od::value& g, const Path& gp, std::vector<int>& geometry) {
        std::vector<int> templates;
        return read_slice(
            g, gp, "Geometry", &templates, nullptr, [](od::value& m, const Path& mp, int&) {
              std::string name;
              int32_t n = 0;
              return for_each_field(m, mp, "MigTemplate",
                                    [&](std::string_view key, od::value val) -> Status {
                                      if (go::json_key_matches(key, "Name")) {
                                        return read_string(val, mp.field("Name"), &name);
                                      }
                                      for (std::string_view f : {"Core", "Memory", "Count"}) {
                                        if (go::json_key_matches(key, f)) {
                                          return read_int32(val, mp.field(f), &n);
                                        }
                                      }
                                      return ok_status();
                                    });
            });
      });
}

Status read_placement(od::value& v, const Path& p, MigPlacement& pl) {
  return for_each_field(v, p, "MigPlacement", [&](std::string_view key, od::value val) -> Status {
    if (go::json_key_matches(key, "start")) return read_uint32(val, p.field("start"), &pl.start);
    if (go::json_key_matches(key, "size")) return read_uint32(val, p.field("size"), &pl.size);
    return ok_status();
  });
}

Status read_mig_profile(od::value& v, const Path& p, MigProfile& mp) {
  return for_each_field(v, p, "MigProfile", [&](std::string_view key, od::value val) -> Status {
    if (go::json_key_matches(key, "name")) return read_string(val, p.field("name"), &mp.name);
    if (go::json_key_matches(key, "memoryMB")) {
      return read_int32(val, p.field("memoryMB"), &mp.memory_mb);
    }
    if (go::json_key_matches(key, "core")) return read_int32(val, p.field("core"), &mp.core);
    if (go::json_key_matches(key, "sliceCount")) {
      return read_uint32(val, p.field("sliceCount"), &mp.slice_count);
    }
    if (go::json_key_matches(key, "placements")) {
      return read_slice(val, p.field("placements"), "[]MigPlacement", &mp.placements,
                        &mp.placements_null, read_placement);
    }
    return ok_status();
  });
}

Status read_device_info(od::value& v, const Path& p, DeviceInfo& d) {
  return for_each_field(v, p, "DeviceInfo", [&](std::string_view key, od::value val) -> Status {
    if (go::json_key_matches(key, "id")) return read_string(val, p.field("id"), &d.id);
    if (go::json_key_matches(key, "index")) {
      return read_unsigned(val, p.field("index"), std::numeric_limits<uint64_t>::max(), "a uint",
                           &d.index);
    }
    if (go::json_key_matches(key, "count")) return read_int32(val, p.field("count"), &d.count);
    if (go::json_key_matches(key, "devmem")) return read_int32(val, p.field("devmem"), &d.devmem);
    if (go::json_key_matches(key, "devcore"))
      return read_int32(val, p.field("devcore"), &d.devcore);
    if (go::json_key_matches(key, "type")) return read_string(val, p.field("type"), &d.type);
    if (go::json_key_matches(key, "numa")) return read_int(val, p.field("numa"), &d.numa);
    if (go::json_key_matches(key, "mode")) return read_string(val, p.field("mode"), &d.mode);
    if (go::json_key_matches(key, "migProfiles")) {
      bool is_nil = false;
      return read_slice(val, p.field("migProfiles"), "[]MigProfile", &d.mig_profiles, &is_nil,
                        read_mig_profile);
    }
    if (go::json_key_matches(key, "health")) return read_bool(val, p.field("health"), &d.health);
    if (go::json_key_matches(key, "migtemplate"))
      return check_mig_template(val, p.field("migtemplate"));
    if (go::json_key_matches(key, "devicevendor")) {
      std::string ignored;  // the scheduler sets the vendor itself after decoding
      return read_string(val, p.field("devicevendor"), &ignored);
    }
    if (go::json_key_matches(key, "custominfo")) {
      d.custom_info.clear();
      return read_custom_info(val, p.field("custominfo"), &d.custom_info);
    }
    return ok_status();  // unknown keys (v2.9 devicepairscore, ...) are ignored
  });
}

// Runs Go's acceptance pass, then hands the top-level array to `read_elements`; top-level
// null yields an empty list.
template <class T, class F>
Result<std::vector<T>> decode_json_list(std::string_view json, std::string_view go_type,
                                        F&& read_element) {
  auto prepared = gojson::prepare(json);
  if (!prepared.ok()) return prepared.error();
  const simdjson::padded_string padded(prepared.value());
  // One parser per thread, reused: a new parser allocates its buffers on first use, which
  // cost more than parsing an annotation of a few KiB (a planner run decodes tens of
  // thousands). A decode nested in another on the same thread gets a parser of its own.
  thread_local od::parser reused;
  thread_local bool reused_busy = false;
  std::optional<od::parser> nested;
  od::parser& parser = reused_busy ? nested.emplace() : reused;
  const bool owns_reused = !reused_busy;
  reused_busy = true;
  struct Release {
    bool active;
    ~Release() {
      if (active) reused_busy = false;
    }
  } release{owns_reused};
  od::document doc;
  const Path root;
  if (auto e = parser.iterate(padded).get(doc)) return simdjson_failure(root, e);
  od::json_type t;
  if (auto e = doc.type().get(t)) return simdjson_failure(root, e);
  std::vector<T> out;
  if (t == od::json_type::null) return out;
  // simdjson gives no value for a scalar document: the type error is Go's, named here.
  if (t != od::json_type::array) return wrong_type(root, t, go_type);
  od::value value;
  if (auto e = doc.get_value().get(value)) return simdjson_failure(root, e);
  if (auto st = read_slice(value, root, go_type, &out, nullptr, read_element); !st.ok()) {
    return st.error();
  }
  return out;
}

Status read_pair_score(od::value& v, const Path& p, DevicePairScore& s) {
  return for_each_field(
      v, p, "DevicePairScore", [&](std::string_view key, od::value val) -> Status {
        if (go::json_key_matches(key, "uuid")) return read_string(val, p.field("uuid"), &s.uuid);
        if (!go::json_key_matches(key, "score")) return ok_status();
        const Path sp = p.field("score");
        od::json_type t;
        if (auto st = get_type(val, sp, &t); !st.ok()) return st;
        if (t == od::json_type::null) {
          s.scores.clear();  // a nil map
          return ok_status();
        }
        if (t != od::json_type::object) return wrong_type(sp, t, "map[string]int");
        od::object obj;
        if (auto e = val.get_object().get(obj)) return simdjson_failure(sp, e);
        for (auto field_result : obj) {
          od::field field;
          if (auto e = std::move(field_result).get(field)) return simdjson_failure(sp, e);
          std::string_view peer;
          if (auto e = field.unescaped_key().get(peer)) return simdjson_failure(sp, e);
          std::string peer_id(peer);
          // Go stores a fresh zero value per map entry, so `null` maps to 0. HAMi's map value
          // is a Go int; we keep int32 and refuse wider values (real scores are below 2000).
          int32_t score = 0;
          if (auto st = read_int32(field.value(), sp.map_key(peer_id), &score); !st.ok()) {
            return st;
          }
          s.scores[peer_id] = score;
        }
        return ok_status();
      });
}

Status read_mig_allocation(od::value& v, const Path& p, MigAllocation& a) {
  return for_each_field(v, p, "MigAllocation", [&](std::string_view key, od::value val) -> Status {
    if (go::json_key_matches(key, "containerIndex")) {
      return read_int(val, p.field("containerIndex"), &a.container_index);
    }
    if (go::json_key_matches(key, "deviceIndex")) {
      return read_int(val, p.field("deviceIndex"), &a.device_index);
    }
    if (go::json_key_matches(key, "gpuUUID"))
      return read_string(val, p.field("gpuUUID"), &a.gpu_uuid);
    if (go::json_key_matches(key, "profile"))
      return read_string(val, p.field("profile"), &a.profile);
    if (go::json_key_matches(key, "placement"))
      return read_placement(val, p.field("placement"), a.placement);
    if (go::json_key_matches(key, "migUUID")) {
      std::string uuid = a.mig_uuid.value_or("");
      if (auto st = read_string(val, p.field("migUUID"), &uuid); !st.ok()) return st;
      a.mig_uuid = std::move(uuid);
      return ok_status();
    }
    for (auto [name, slot] :
         {std::pair{std::string_view("gpuInstanceID"), &a.gpu_instance_id},
          std::pair{std::string_view("computeInstanceID"), &a.compute_instance_id}}) {
      if (!go::json_key_matches(key, name)) continue;
      // *uint32 in Go: null resets the pointer.
      od::json_type t;
      if (auto st = get_type(val, p.field(name), &t); !st.ok()) return st;
      if (t == od::json_type::null) {
        slot->reset();
        return ok_status();
      }
      uint32_t id = 0;
      if (auto st = read_uint32(val, p.field(name), &id); !st.ok()) return st;
      *slot = id;
      return ok_status();
    }
    return ok_status();
  });
}

// "UUID,Type,Usedmem,Usedcores" for every device, each followed by ':'.
void append_container(std::string& out, const ContainerDevices& devices) {
  for (const ContainerDevice& d : devices) {
    out += d.uuid;
    out += ',';
    out += d.type;
    out += ',';
    out += std::to_string(d.usedmem);
    out += ',';
    out += std::to_string(d.usedcores);
    out += ':';
  }
}

// strings.Split semantics: n separators give n+1 pieces, empty ones included.
template <class F>
void split_each(std::string_view s, char sep, F&& f) {
  for (;;) {
    const size_t k = s.find(sep);
    f(s.substr(0, k));
    if (k == std::string_view::npos) return;
    s.remove_prefix(k + 1);
  }
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  split_each(s, sep, [&](std::string_view piece) { out.push_back(piece); });
  return out;
}

}  // namespace

// ------------------------------------------------------------------------------------------
// hami.io/node-nvidia-register

Result<std::vector<DeviceInfo>> decode_register_json(std::string_view json) {
  return decode_json_list<DeviceInfo>(json, "[]DeviceInfo", read_device_info);
}

std::string encode_register_json(const std::vector<DeviceInfo>& devices) {
  model::JsonWriter w;
  w.reserve(devices.size() * 200 + 2);
  w.begin_array();
  for (const DeviceInfo& d : devices) {
    w.begin_object();
    if (!d.id.empty()) w.key("id").string(d.id);
    if (d.index != 0) w.key("index").unsigned_number(d.index);
    if (d.count != 0) w.key("count").number(d.count);
    if (d.devmem != 0) w.key("devmem").number(d.devmem);
    if (d.devcore != 0) w.key("devcore").number(d.devcore);
    if (!d.type.empty()) w.key("type").string(d.type);
    if (d.numa != 0) w.key("numa").number(d.numa);
    if (!d.mode.empty()) w.key("mode").string(d.mode);
    if (!d.mig_profiles.empty()) {
      w.key("migProfiles").begin_array();
      for (const MigProfile& mp : d.mig_profiles) {
        w.begin_object();
        w.key("name").string(mp.name);
        w.key("memoryMB").number(mp.memory_mb);
        w.key("core").number(mp.core);
        w.key("sliceCount").unsigned_number(mp.slice_count);
        w.key("placements");
        if (mp.placements.empty() && mp.placements_null) {
          w.null();
        } else {
          w.begin_array();
          for (const MigPlacement& pl : mp.placements) {
            w.begin_object().key("start").unsigned_number(pl.start);
            w.key("size").unsigned_number(pl.size).end_object();
          }
          w.end_array();
        }
        w.end_object();
      }
      w.end_array();
    }
    if (d.health) w.key("health").boolean(true);
    w.end_object();
  }
  w.end_array();
  return w.take();
}

// ------------------------------------------------------------------------------------------
// hami.io/node-nvidia-score

Result<std::vector<DevicePairScore>> decode_pair_scores(std::string_view json) {
  return decode_json_list<DevicePairScore>(json, "[]DevicePairScore", read_pair_score);
}

std::string encode_pair_scores(const std::vector<DevicePairScore>& scores) {
  model::JsonWriter w;
  w.begin_array();
  for (const DevicePairScore& s : scores) {
    w.begin_object().key("uuid").string(s.uuid).key("score").begin_object();
    for (const auto& [peer, score] : s.scores) w.key(peer).number(score);
    w.end_object().end_object();
  }
  w.end_array();
  return w.take();
}

// ------------------------------------------------------------------------------------------
// hami.io/device-cordon

std::set<std::string, std::less<>> parse_cordon(std::string_view value) {
  std::set<std::string, std::less<>> out;
  split_each(value, ',', [&](std::string_view item) {
    const std::string_view id = go::trim_space(item);
    if (!id.empty()) out.emplace(id);
  });
  return out;
}

// ------------------------------------------------------------------------------------------
// Legacy colon format

Result<std::vector<DeviceInfo>> decode_legacy_devices(std::string_view value) {
  if (value.find(':') == std::string_view::npos) {
    return make_error("node annotation is not in the colon device format (no ':')");
  }
  std::vector<DeviceInfo> out;
  for (const std::string_view segment : split(value, ':')) {
    if (segment.empty()) continue;
    auto bad = [&](std::string_view what) {
      return make_error("device " + go::quote(segment) + ": " + std::string(what));
    };
    if (segment.find(',') == std::string_view::npos) return bad("no ',' separated fields");
    const std::vector<std::string_view> f = split(segment, ',');
    if (f.size() != 7 && f.size() != 9) {
      return bad(std::to_string(f.size()) + " fields, want 7 or 9");
    }
    DeviceInfo d;
    d.id = std::string(f[0]);
    for (auto [name, field, slot] :
         {std::tuple{"count", f[1], &d.count}, std::tuple{"devmem", f[2], &d.devmem},
          std::tuple{"devcore", f[3], &d.devcore}}) {
      if (auto err = parse_int32_field(field, slot)) return bad(std::string(name) + ": " + *err);
    }
    d.type = std::string(f[4]);
    if (auto err = parse_atoi_field(f[5], &d.numa)) return bad("numa: " + *err);
    if (!go::parse_bool(f[6], &d.health)) {
      return bad("health: strconv.ParseBool: parsing " + go::quote(f[6]) + ": invalid syntax");
    }
    d.mode = "hami-core";
    if (f.size() == 9) {
      int64_t index = 0;
      if (auto err = parse_atoi_field(f[7], &index)) return bad("index: " + *err);
      if (index < 0) return bad("index: " + std::string(f[7]) + " is negative");
      d.index = static_cast<uint64_t>(index);
      d.mode = std::string(f[8]);
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::string encode_legacy_devices(const std::vector<DeviceInfo>& devices) {
  std::string out;
  for (const DeviceInfo& d : devices) {
    out += d.id;
    out += ',' + std::to_string(d.count);
    out += ',' + std::to_string(d.devmem);
    out += ',' + std::to_string(d.devcore);
    out += ',';
    out += d.type;
    out += ',' + std::to_string(d.numa);
    out += d.health ? ",true" : ",false";
    out += ',' + std::to_string(d.index);
    out += ',';
    out += d.mode;
    out += ':';
  }
  return out;
}

// ------------------------------------------------------------------------------------------
// Pod allocation strings

Result<ContainerDevices> decode_container_devices(std::string_view value) {
  ContainerDevices out;
  for (const std::string_view piece : split(value, ':')) {
    if (piece.find(',') == std::string_view::npos) continue;
    const std::vector<std::string_view> f = split(piece, ',');
    if (f.size() < 4) {
      return make_error(
          "pod annotation format error, missing fields, do not use nodeName in task spec");
    }
    ContainerDevice d;
    d.uuid = std::string(f[0]);
    d.type = std::string(f[1]);
    // HAMi returns strconv's error unchanged; it names the offending value.
    if (auto err = parse_int32_field(f[2], &d.usedmem)) return make_error(std::move(*err));
    if (auto err = parse_int32_field(f[3], &d.usedcores)) return make_error(std::move(*err));
    out.push_back(std::move(d));
  }
  return out;
}

Result<PodSingleDevice> decode_pod_devices(std::string_view value) {
  PodSingleDevice out;
  for (const std::string_view segment : split(value, ';')) {
    auto devices = decode_container_devices(segment);
    if (!devices.ok()) return devices.error();  // HAMi's text, unchanged
    out.push_back(std::move(devices).value());
  }
  return out;
}

std::string encode_container_devices(const ContainerDevices& devices) {
  std::string out;
  append_container(out, devices);
  return out;
}

std::string encode_pod_devices(const PodSingleDevice& devices) {
  std::string out;
  for (const ContainerDevices& container : devices) {
    append_container(out, container);
    out += ';';
  }
  return out;
}

// ------------------------------------------------------------------------------------------
// hami.io/vgpu-mig-allocations

Result<std::vector<MigAllocation>> decode_mig_allocations(std::string_view json) {
  if (json.empty()) return std::vector<MigAllocation>{};
  auto decoded = decode_json_list<MigAllocation>(json, "[]MigAllocation", read_mig_allocation);
  if (!decoded.ok()) return decoded.error();
  std::vector<MigAllocation> out = std::move(decoded).value();
  std::set<std::pair<int64_t, int64_t>> seen;
  for (size_t i = 0; i < out.size(); ++i) {
    MigAllocation& a = out[i];
    if (a.mig_uuid && a.mig_uuid->empty()) a.mig_uuid.reset();  // omitempty: "" is absent
    auto bad = [&](std::string_view what) {
      return make_error("mig allocation [" + std::to_string(i) + "]: " + std::string(what));
    };
    if (a.container_index < 0) return bad("containerIndex is negative");
    if (a.device_index < 0) return bad("deviceIndex is negative");
    if (a.gpu_uuid.empty()) return bad("gpuUUID is empty");
    if (a.profile.empty()) return bad("profile is empty");
    if (a.placement.size == 0) return bad("placement size is 0");
    const int present = static_cast<int>(a.mig_uuid.has_value()) +
                        static_cast<int>(a.gpu_instance_id.has_value()) +
                        static_cast<int>(a.compute_instance_id.has_value());
    if (present != 0 && present != 3) {
      return bad("migUUID, gpuInstanceID and computeInstanceID must be set together");
    }
    if (!seen.emplace(a.container_index, a.device_index).second) {
      return bad("duplicate allocation for container " + std::to_string(a.container_index) +
                 " device " + std::to_string(a.device_index));
    }
  }
  return out;
}

std::string encode_mig_allocations(const std::vector<MigAllocation>& allocations) {
  if (allocations.empty()) return {};  // HAMi writes no annotation then
  model::JsonWriter w;
  w.begin_array();
  for (const MigAllocation& a : allocations) {
    w.begin_object();
    w.key("containerIndex").number(a.container_index);
    w.key("deviceIndex").number(a.device_index);
    w.key("gpuUUID").string(a.gpu_uuid);
    w.key("profile").string(a.profile);
    w.key("placement").begin_object().key("start").unsigned_number(a.placement.start);
    w.key("size").unsigned_number(a.placement.size).end_object();
    if (a.mig_uuid && !a.mig_uuid->empty()) w.key("migUUID").string(*a.mig_uuid);
    if (a.gpu_instance_id) w.key("gpuInstanceID").number(*a.gpu_instance_id);
    if (a.compute_instance_id) w.key("computeInstanceID").number(*a.compute_instance_id);
    w.end_object();
  }
  w.end_array();
  return w.take();
}

}  // namespace hamisim::device
