#include "profile/device_profiles.h"

#include <yaml-cpp/yaml.h>

#include <set>

#include "device/codec.h"
#include "model/decode.h"
#include "model/input.h"
#include "model/yaml_check.h"
#include "model/yaml_fields.h"
#include "profile/dra_slices.h"

namespace hamisim::profile {
namespace {

using model::yaml::check_keys;
using model::yaml::read_int;
using model::yaml::read_optional_string;
using model::yaml::read_string;
using model::yaml::Where;

Result<std::vector<device::MigProfile>> read_mig_profiles(const YAML::Node& n, const Where& where) {
  std::vector<device::MigProfile> out;
  if (!n || n.IsNull()) return out;
  if (!n.IsSequence()) return where.error(n, "expected a list of MIG profiles");
  for (size_t i = 0; i < n.size(); ++i) {
    const YAML::Node p = n[i];
    const Where w = where.at(i);
    if (!p.IsMap()) return w.error(p, "expected a MIG profile mapping");
    if (Status s = check_keys(p, w, {"name", "memoryMB", "core", "sliceCount", "placements"}); !s)
      return s.error();
    device::MigProfile mp;
    auto name = read_string(p, "name", w);
    if (!name) return name.error();
    mp.name = *name;
    auto mem = read_int(p["memoryMB"], w / "memoryMB", 1, INT32_MAX);
    if (!mem) return mem.error();
    auto core = read_int(p["core"], w / "core", 0, 100);
    if (!core) return core.error();
    auto slices = read_int(p["sliceCount"], w / "sliceCount", 1, 64);
    if (!slices) return slices.error();
    mp.memory_mb = static_cast<int32_t>(*mem);
    mp.core = static_cast<int32_t>(*core);
    mp.slice_count = static_cast<uint32_t>(*slices);
    const YAML::Node pl = p["placements"];
    if (!pl || !pl.IsSequence() || pl.size() == 0) {
      return (w / "placements").error(pl, "expected a non-empty list of {start, size}");
    }
    mp.placements_null = false;
    for (size_t j = 0; j < pl.size(); ++j) {
      const Where pw = (w / "placements").at(j);
      auto start = read_int(pl[j]["start"], pw / "start", 0, 64);
      if (!start) return start.error();
      auto size = read_int(pl[j]["size"], pw / "size", 1, 64);
      if (!size) return size.error();
      mp.placements.push_back({static_cast<uint32_t>(*start), static_cast<uint32_t>(*size)});
    }
    out.push_back(std::move(mp));
  }
  return out;
}

// The `devices:` form -> DeviceInfo list with synthetic IDs.
Result<std::vector<device::DeviceInfo>> read_devices(const YAML::Node& n, const Where& where,
                                                     const std::string& profile) {
  if (!n.IsSequence() || n.size() == 0)
    return where.error(n, "expected a non-empty list of device groups");
  std::vector<device::DeviceInfo> out;
  for (size_t i = 0; i < n.size(); ++i) {
    const YAML::Node d = n[i];
    const Where w = where.at(i);
    if (!d.IsMap()) return w.error(d, "expected a device group mapping");
    if (Status s = check_keys(d, w,
                              {"vendor", "count", "split", "devmem", "devcore", "type", "numa",
                               "mode", "migProfiles"});
        !s) {
      return s.error();
    }
    auto vendor = read_optional_string(d, "vendor", w);
    if (!vendor) return vendor.error();
    std::string v = vendor->empty() ? "nvidia" : *vendor;
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (v != "nvidia")
      return (w / "vendor")
          .error(d["vendor"], "unsupported vendor \"" + *vendor + "\" (supported: nvidia)");
    auto count = read_int(d["count"], w / "count", 1, 1024);
    if (!count) return count.error();
    auto split = read_int(d["split"], w / "split", 1, INT32_MAX);
    if (!split) return split.error();
    auto devmem = read_int(d["devmem"], w / "devmem", 1, INT32_MAX);
    if (!devmem) return devmem.error();
    int64_t devcore = 100;
    if (d["devcore"]) {
      auto c = read_int(d["devcore"], w / "devcore", 1, INT32_MAX);
      if (!c) return c.error();
      devcore = *c;
    }
    auto type = read_string(d, "type", w);
    if (!type) return type.error();
    if (!device::contains_ignore_case(*type, "nvidia")) {
      return (w / "type")
          .error(d["type"], "\"" + *type +
                                "\" does not contain \"NVIDIA\"; HAMi's device plugin "
                                "prefixes model names with NVIDIA- and the scheduler "
                                "ignores devices whose type lacks it");
    }
    auto mode = read_optional_string(d, "mode", w);
    if (!mode) return mode.error();
    const std::string m = mode->empty() ? "hami-core" : *mode;
    if (m != "hami-core" && m != "mig" && m != "mps") {
      return (w / "mode").error(d["mode"], "\"" + m + "\" is not one of hami-core, mig, mps");
    }
    auto mig = read_mig_profiles(d["migProfiles"], w / "migProfiles");
    if (!mig) return mig.error();
    if (m == "mig" && mig->empty()) {
      return (w / "migProfiles")
          .error(d["migProfiles"],
                 "required with mode mig (HAMi registers no MIG GPU without profiles)");
    }
    if (m != "mig" && !mig->empty()) {
      return (w / "migProfiles").error(d["migProfiles"], "only allowed with mode mig");
    }
    std::vector<int64_t> numa(static_cast<size_t>(*count), 0);
    if (const YAML::Node nn = d["numa"]; nn && !nn.IsNull()) {
      if (nn.IsScalar()) {
        auto one = read_int(nn, w / "numa", 0, 1024);
        if (!one) return one.error();
        std::fill(numa.begin(), numa.end(), *one);
      } else if (nn.IsSequence()) {
        if (nn.size() != numa.size()) {
          return (w / "numa")
              .error(nn, "expected one value for all devices or " + std::to_string(*count) +
                             " values (one per device), got " + std::to_string(nn.size()));
        }
        for (size_t k = 0; k < nn.size(); ++k) {
          auto one = read_int(nn[k], (w / "numa").at(k), 0, 1024);
          if (!one) return one.error();
          numa[k] = *one;
        }
      } else {
        return (w / "numa").error(nn, "expected an integer or a list of integers");
      }
    }
    for (int64_t k = 0; k < *count; ++k) {
      device::DeviceInfo info;
      info.index = out.size();
      info.id = profile + "-" + v + "-" + std::to_string(out.size());
      // For MIG GPUs HAMi registers the largest instance count among the profiles: give it
      // as split.
      info.count = static_cast<int32_t>(*split);
      info.devmem = static_cast<int32_t>(*devmem);
      info.devcore = static_cast<int32_t>(devcore);
      info.type = *type;
      info.numa = numa[static_cast<size_t>(k)];
      info.mode = m;
      info.mig_profiles = *mig;
      info.health = true;
      info.device_vendor = std::string(device::kNvidiaVendor);  // as a registration decodes
      out.push_back(std::move(info));
    }
  }
  return out;
}

Result<std::vector<device::DevicePairScore>> read_topology(
    const YAML::Node& n, const Where& where, const std::vector<device::DeviceInfo>& devices) {
  std::vector<device::DevicePairScore> out;
  if (!n || n.IsNull()) return out;
  if (!n.IsSequence() || n.size() != devices.size()) {
    return where.error(n, "expected a " + std::to_string(devices.size()) + "x" +
                              std::to_string(devices.size()) +
                              " matrix of pair scores (one row per device)");
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    const YAML::Node row = n[i];
    if (!row.IsSequence() || row.size() != devices.size()) {
      return where.at(i).error(row, "expected " + std::to_string(devices.size()) + " scores");
    }
    device::DevicePairScore s;
    s.uuid = devices[i].id;
    for (size_t j = 0; j < devices.size(); ++j) {
      auto v = read_int(row[j], where.at(i).at(j), 0, INT32_MAX);
      if (!v) return v.error();
      if (i != j) s.scores[devices[j].id] = static_cast<int32_t>(*v);
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<OnMismatch> read_on_mismatch(const YAML::Node& n, const Where& where) {
  if (!n || n.IsNull()) return OnMismatch::kWarn;
  const std::string v = n.IsScalar() ? n.Scalar() : "";
  if (v == "warn") return OnMismatch::kWarn;
  if (v == "preferObserved") return OnMismatch::kPreferObserved;
  if (v == "reject") return OnMismatch::kReject;
  return where.error(n, "\"" + v + "\" is not one of warn, preferObserved, reject");
}

Result<ProfileMatch> read_match(const YAML::Node& n, const Where& where) {
  ProfileMatch m;
  if (!n || n.IsNull()) return m;
  if (!n.IsMap()) return where.error(n, "expected a mapping");
  if (Status s = check_keys(n, where, {"nodeGroups", "labels", "nodeGroupLabel"}); !s)
    return s.error();
  if (const YAML::Node g = n["nodeGroups"]; g && !g.IsNull()) {
    if (!g.IsSequence())
      return (where / "nodeGroups").error(g, "expected a list of node group ids");
    for (size_t i = 0; i < g.size(); ++i) {
      auto id = read_string(g[i], (where / "nodeGroups").at(i));
      if (!id) return id.error();
      m.node_groups.push_back(*id);
    }
  }
  if (const YAML::Node l = n["labels"]; l && !l.IsNull()) {
    if (!l.IsMap()) return (where / "labels").error(l, "expected a mapping of label -> value");
    for (const auto& kv : l) {
      auto v = read_string(kv.second, where / "labels" / kv.first.as<std::string>(""));
      if (!v) return v.error();
      m.labels[kv.first.as<std::string>("")] = *v;
    }
  }
  auto label = read_optional_string(n, "nodeGroupLabel", where);
  if (!label) return label.error();
  m.node_group_label = *label;
  return m;
}

}  // namespace

std::string_view to_string(OnMismatch m) {
  switch (m) {
    case OnMismatch::kWarn:
      return "warn";
    case OnMismatch::kPreferObserved:
      return "preferObserved";
    case OnMismatch::kReject:
      return "reject";
  }
  return "warn";
}

const DeviceProfile* DeviceProfiles::find(std::string_view name) const {
  for (const auto& p : profiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Result<DeviceProfiles> parse_device_profiles(std::string_view yaml, std::string_view source,
                                             const device::DeviceRegistry& registry) {
  if (Status s = model::check_yaml(yaml); !s) {
    return make_error(std::string(source) + ": " + s.error().message);
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return make_error(std::string(source) + ": " + e.what());
  }
  const Where top{source, ""};
  if (!root.IsMap())
    return make_error(std::string(source) + ": expected a DeviceProfiles document");
  if (Status s = check_keys(root, top, {"apiVersion", "kind", "profiles"}); !s) return s.error();
  if (root["apiVersion"].as<std::string>("") != "hamisim.io/v1") {
    return (top / "apiVersion").error(root["apiVersion"], "expected hamisim.io/v1");
  }
  if (root["kind"].as<std::string>("") != "DeviceProfiles") {
    return (top / "kind").error(root["kind"], "expected DeviceProfiles");
  }
  DeviceProfiles out;
  const YAML::Node list = root["profiles"];
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) return (top / "profiles").error(list, "expected a list");
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node p = list[i];
    Where w = (top / "profiles").at(i);
    if (!p.IsMap()) return w.error(p, "expected a profile mapping");
    auto name = read_string(p, "name", w);
    if (!name) return name.error();
    w.path += " (" + *name + ")";
    if (name->empty() || name->find_first_of(" \t,/") != std::string::npos) {
      return (w / "name").error(p["name"], "must be non-empty without spaces, commas or slashes");
    }
    if (!names.insert(*name).second) return (w / "name").error(p["name"], "duplicate profile name");
    if (Status s = check_keys(
            p, w,
            {"name", "match", "onMismatch", "devices", "register", "capacity", "topology", "dra"});
        !s) {
      return s.error();
    }
    DeviceProfile profile;
    profile.name = *name;
    auto match = read_match(p["match"], w / "match");
    if (!match) return match.error();
    profile.match = std::move(match).value();
    auto on_mismatch = read_on_mismatch(p["onMismatch"], w / "onMismatch");
    if (!on_mismatch) return on_mismatch.error();
    profile.on_mismatch = *on_mismatch;

    const bool has_devices = p["devices"] && !p["devices"].IsNull();
    const bool has_register = p["register"] && !p["register"].IsNull();
    const bool has_capacity = p["capacity"] && !p["capacity"].IsNull();
    if (has_devices && has_register) return w.error(p, "devices and register are exclusive");
    const bool has_dra = p["dra"] && !p["dra"].IsNull();
    if (!has_devices && !has_register && !has_capacity && !has_dra)
      return w.error(p, "one of devices, register, capacity or dra is required");
    std::optional<std::vector<device::DeviceInfo>> devices;
    if (has_devices) {
      auto read = read_devices(p["devices"], w / "devices", profile.name);
      if (!read) return read.error();
      devices = std::move(read).value();
    }
    bool hami_driver = false;  // devices: describe HAMi's DRA driver, not a registration
    if (has_dra) {
      auto dra = read_dra_slices(p["dra"], w / "dra", profile.name, devices ? &*devices : nullptr);
      if (!dra) return dra.error();
      profile.dra_slices = std::move(dra->slices);
      hami_driver = dra->hami_driver;
    }
    if (hami_driver && p["topology"]) {
      return (w / "topology")
          .error(p["topology"],
                 "not with dra.hamiDriver: the devices are published to DRA, which has no "
                 "HAMi topology scores");
    }
    if (has_devices && !hami_driver) {
      profile.annotations[std::string(device::kNvidiaRegisterAnnotation)] =
          device::encode_register_json(*devices);
      auto topology = read_topology(p["topology"], w / "topology", *devices);
      if (!topology) return topology.error();
      if (!topology->empty()) {
        profile.annotations[std::string(device::kNvidiaScoreAnnotation)] =
            device::encode_pair_scores(*topology);
      }
    } else if (has_register) {
      const YAML::Node reg = p["register"];
      if (!reg.IsMap())
        return (w / "register").error(reg, "expected a mapping of vendor -> registration JSON");
      if (p["topology"]) return (w / "topology").error(p["topology"], "only allowed with devices:");
      for (const auto& kv : reg) {
        // `nvidia` stands for its registration annotation; other vendors name theirs in full
        // (hami.io/node-dcu-register, ...), since their keys and formats differ.
        const std::string key = kv.first.as<std::string>("");
        const bool annotation = key.find('/') != std::string::npos;
        if (key != "nvidia" && !annotation) {
          return (w / "register" / key)
              .error(kv.first,
                     "expected nvidia or a registration annotation key such as "
                     "hami.io/node-dcu-register");
        }
        auto value = read_string(kv.second, w / "register" / key);
        if (!value) return value.error();
        profile.annotations[annotation ? key : std::string(device::kNvidiaRegisterAnnotation)] =
            *value;
      }
    }
    if (const YAML::Node cap = p["capacity"]; cap && !cap.IsNull()) {
      if (!cap.IsMap()) {
        return (w / "capacity").error(cap, "expected a mapping of resource name -> quantity");
      }
      for (const auto& kv : cap) {
        const std::string resource = kv.first.as<std::string>("");
        auto text = read_string(kv.second, w / "capacity" / resource);
        if (!text) return text.error();
        auto q = model::Quantity::parse(*text);
        if (!q) return (w / "capacity" / resource).error(kv.second, q.error().message);
        profile.capacity[resource] = *q;
      }
    }
    if (!has_register && !has_capacity && (!has_devices || hami_driver)) {
      // DRA only: there is no device-plugin registration to decode.
      profile.description.source = fit::DeviceSource::kProfile;
      profile.description.profile = profile.name;
      out.profiles.push_back(std::move(profile));
      continue;
    }
    // Decode the description exactly as a registered node's annotation would be decoded.
    model::Node synthetic;
    synthetic.metadata.name = profile.name;
    synthetic.metadata.annotations = profile.annotations;
    synthetic.status.capacity = profile.capacity;
    synthetic.status.allocatable = profile.capacity;
    fit::DescriptionResult inv = fit::read_registered_description(synthetic, registry);
    if (inv.state != fit::DescriptionResult::State::kOk) {
      return w.error(p, "device description does not decode: " + inv.message);
    }
    profile.description = std::move(inv.description);
    profile.description.source = fit::DeviceSource::kProfile;
    profile.description.profile = profile.name;
    out.profiles.push_back(std::move(profile));
  }
  return out;
}

Result<DeviceProfiles> load_device_profiles(const std::string& path,
                                            const device::DeviceRegistry& registry) {
  static const model::DocumentSpec kSpec{"--device-profiles",
                                         {"DeviceProfiles"},
                                         "a DeviceProfiles document",
                                         {"device-profiles.yaml"}};
  auto doc = model::read_document(path, kSpec);
  if (!doc) return doc.error();
  return parse_device_profiles(doc->text, doc->source, registry);
}

}  // namespace hamisim::profile
