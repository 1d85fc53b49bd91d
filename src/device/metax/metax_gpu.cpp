#include "device/metax/metax_gpu.h"

#include <simdjson.h>

#include <map>
#include <optional>

#include "device/go_json_reader.h"
#include "go/strconv.h"
#include "model/json_writer.h"

namespace hamisim::device::metax {
namespace {

// Keys of the custom_info object node_devices() writes on every device.
constexpr std::string_view kLossKey = "topology.losses";
constexpr std::string_view kScoreKey = "topology.scores";

BackendIdentity gpu_identity(const MetaxConfig& c) {
  BackendIdentity id;
  id.vendor = std::string(kGpuVendor);
  id.names.count = c.resource_count_name;
  id.to_allocate_annotation = "hami.io/metax-gpu-devices-to-allocate";
  id.allocated_annotation = "hami.io/metax-gpu-devices-allocated";
  id.health = HealthCheck::kCapacity;
  id.locks_node = false;
  return id;  // no UUID or type filters: HAMi's checks always pass
}

// strconv.ParseInt(s, 10, 64), which Go's JSON decoder applies to integer map keys.
bool parse_go_int64(std::string_view s, int64_t* out) {
  return go::parse_int(s, 64, out) == go::NumError::kNone;
}

}  // namespace

float topology_value(std::string_view annotation, int64_t n) {
  namespace od = simdjson::ondemand;
  // Read as Go's json.Unmarshal into a map[int64]int64 reads it (the Go-JSON reader).
  auto prepared = gojson::prepare(annotation);
  if (!prepared) return 0;
  const simdjson::padded_string padded(*prepared);
  od::parser parser;
  od::document doc;
  od::json_type t;
  if (parser.iterate(padded).get(doc) || doc.type().get(t)) return 0;
  if (t == od::json_type::null) return 0;  // Go leaves the map empty
  od::object obj;
  if (t != od::json_type::object || doc.get_object().get(obj)) return 0;
  // Go keeps decoding after a bad element but then reports the error, and HAMi reads 0;
  // repeated keys overwrite, so the last one counts.
  std::optional<int64_t> found;
  for (auto field_result : obj) {
    od::field field;
    std::string_view raw_key;
    if (std::move(field_result).get(field) || field.unescaped_key().get(raw_key)) return 0;
    int64_t key = 0;
    if (!parse_go_int64(raw_key, &key)) return 0;
    od::value v = field.value();
    od::json_type vt;
    if (v.type().get(vt)) return 0;
    int64_t value = 0;  // null stores the zero value
    if (vt != od::json_type::null) {
      if (vt != od::json_type::number ||
          go::parse_int(gojson::number_token(v), 64, &value) != go::NumError::kNone) {
        return 0;
      }
    }
    if (key == n) found = value;
  }
  return found ? static_cast<float>(*found) : 0;
}

MetaxGpuBackend::MetaxGpuBackend(MetaxConfig config)
    : StandardBackend(gpu_identity(config)), config_(std::move(config)) {}

// GenerateResourceRequests (B.10.a §3): the count, limits else requests, as a whole card.
ContainerDeviceRequest MetaxGpuBackend::request_for(const model::Container& c) const {
  const std::optional<int64_t> n = resource_int64(c, config_.resource_count_name);
  if (!n) return {};
  // Go's int32(n) keeps the low 32 bits; a result <= 0 is "no request" for the scheduler.
  const auto nums = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(*n)));
  if (nums <= 0) return {};
  return ContainerDeviceRequest{nums, std::string(kGpuVendor), 0, 100, 100};
}

NodeDevices MetaxGpuBackend::node_devices(const model::Node& node) const {
  NodeDevices out;
  const int64_t count = capacity_count(node, config_.resource_count_name);
  if (count <= 0) {
    // HAMi errors on 0 (absent or not an integer) and finds no devices below it.
    out.message = "device not found " + config_.resource_count_name;
    return out;
  }
  if (count > kMaxCapacityDevices) {
    out.state = NodeDevices::State::kMalformed;
    out.message = config_.resource_count_name + ": capacity " + std::to_string(count) +
                  " exceeds " + std::to_string(kMaxCapacityDevices) + " devices";
    return out;
  }
  std::string custom_info;
  const std::string* losses = model::find_annotation(node.metadata, kLossAnnotation);
  const std::string* scores = model::find_annotation(node.metadata, kScoreAnnotation);
  if (losses || scores) {
    model::JsonWriter w;
    w.begin_object();
    if (losses) w.key(kLossKey).string(*losses);
    if (scores) w.key(kScoreKey).string(*scores);
    w.end_object();
    custom_info = w.take();
  }
  out.devices.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    DeviceInfo d = capacity_device(node, "metax", i, kGpuVendor, 1, 65536, 100);
    d.custom_info = custom_info;
    out.devices.push_back(std::move(d));
  }
  out.state = NodeDevices::State::kOk;
  return out;
}

// Step 13 of the standard Fit: every device earlier containers of this pod got (same phase:
// init containers are fitted among themselves, app containers among themselves) must be this
// one, so a pod's whole-GPU containers share a single card.
bool MetaxGpuBackend::custom_rule_allows(const DeviceUsage& device, const FitContext& ctx) const {
  if (!ctx.allocated) return true;
  auto it = ctx.allocated->find(device.type);
  if (it == ctx.allocated->end()) return true;
  const size_t first =
      ctx.container_index < ctx.init_container_count ? 0 : ctx.init_container_count;
  for (size_t j = first; j < ctx.container_index && j < it->second.size(); ++j) {
    for (const ContainerDevice& cd : it->second[j]) {
      if (cd.uuid != device.id) return false;
    }
  }
  return true;
}

// ScoreNode (B.10.a §6): 2000 minus the plugin's loss (binpack) or topology score (spread)
// for the number of GPUs the pod takes; 0 when the node has no such annotation.
float MetaxGpuBackend::score_node(std::span<const DeviceUsage> previous,
                                  const PodSingleDevice& chosen, std::string_view node_policy,
                                  const PreparedPod*) const {
  std::string_view key;
  if (node_policy == "binpack") {
    key = kLossKey;
  } else if (node_policy == "spread") {
    key = kScoreKey;
  } else {
    return 0;
  }
  int64_t n = 0;
  for (const ContainerDevices& c : chosen) n += static_cast<int64_t>(c.size());
  for (const DeviceUsage& d : previous) {
    if (d.vendor != kGpuVendor || !d.custom_info) continue;
    // Go's map keeps the last of repeated keys: every occurrence overwrites.
    std::optional<std::string> annotation;
    gojson::for_each_custom_info_entry(
        *d.custom_info, [&](std::string_view k, simdjson::ondemand::value& v) {
          if (k != key) return true;
          const std::optional<std::string_view> s = gojson::any_string(v);
          annotation = s ? std::optional<std::string>(*s) : std::nullopt;
          return true;
        });
    if (!annotation) return 0;  // no such annotation
    return 2000.0f - topology_value(*annotation, n);
  }
  return 0;
}

}  // namespace hamisim::device::metax
