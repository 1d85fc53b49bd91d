#include "device/vastai/vastai_backend.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "device/allocation.h"
#include "device/common/device_checks.h"
#include "device/go_json_reader.h"

namespace hamisim::device::vastai {
namespace {

BackendIdentity vastai_identity(const VastaiConfig& c) {
  BackendIdentity id;
  id.vendor = std::string(kVendor);
  id.names.count = c.resource_count_name;
  // HAMi builds these from the CommonWord, hence the capital V.
  id.to_allocate_annotation = "hami.io/Vastai-devices-to-allocate";
  id.allocated_annotation = "hami.io/Vastai-devices-allocated";
  id.handshake_annotation = std::string(kHandshakeAnnotation);
  id.cleanup_annotation = std::string(kHandshakeAnnotation);
  id.use_uuid_annotation = "vastaitech.com/use-gpuuuid";
  id.nouse_uuid_annotation = "vastaitech.com/nouse-gpuuuid";
  // vastaitech.com/use-va and nouse-va exist in HAMi but are never read.
  return id;
}

// What a device's custominfo says about dies. HAMi keeps custominfo as map[string]any and
// reads both keys with string type assertions: a key of another type counts as absent.
struct DieFacts {
  bool has_custom_info = false;
  std::optional<std::string> strategy;  // "DeviceStrategy"
  std::optional<std::string> aic;       // "AIC": the physical card the die belongs to
};

DieFacts read_die_facts(const DeviceUsage& d) {
  DieFacts out;
  if (!d.custom_info) return out;
  // The codec accepted this text as a JSON object; a failure here leaves "no custominfo".
  // Go's map decoding keeps the last of repeated keys, so every occurrence overwrites.
  out.has_custom_info = gojson::for_each_custom_info_entry(
      *d.custom_info, [&](std::string_view key, simdjson::ondemand::value& v) {
        std::optional<std::string>* slot = key == "DeviceStrategy" ? &out.strategy
                                           : key == "AIC"          ? &out.aic
                                                                   : nullptr;
        if (!slot) return true;
        if (const std::optional<std::string_view> s = gojson::any_string(v)) {
          *slot = std::string(*s);
        } else {
          slot->reset();
        }
        return true;
      });
  return out;
}

// The group a die belongs to. A die without a string AIC falls in the group "" (Go's zero
// value of the failed type assertion) (inferred).
const std::string& aic_of(const DieFacts& f) {
  static const std::string kNone;
  return f.aic ? *f.aic : kNone;
}

bool is_die(const DieFacts& f) {
  return f.strategy && *f.strategy == "die";
}

// Nums > 1 dies out of more candidates: prefer the AICs with most candidates so that a
// container's dies share cards. Groups keep the order of their first candidate, which makes
// HAMi's ties (it walks a Go map) deterministic here.
ContainerDevices best_dies(ContainerDevices candidates, const std::vector<std::string>& aics,
                           size_t nums) {
  std::vector<ContainerDevices> groups;
  std::map<std::string_view, size_t, std::less<>> group_of;  // AIC -> index in groups
  for (size_t i = 0; i < candidates.size(); ++i) {
    auto [it, added] = group_of.try_emplace(aics[i], groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(std::move(candidates[i]));
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.size() > b.size(); });
  ContainerDevices out;
  for (ContainerDevices& dies : groups) {
    for (ContainerDevice& d : dies) {
      if (out.size() == nums) return out;
      out.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace

VastaiBackend::VastaiBackend(VastaiConfig config)
    : StandardBackend(vastai_identity(config)), config_(std::move(config)) {}

// GenerateResourceRequests (B.12 §3): the count, limits else requests, converted with
// int32(n) and no range check as HAMi does (a count beyond int32 wraps); not positive = no
// request.
ContainerDeviceRequest VastaiBackend::request_for(const model::Container& c) const {
  return slot_request(c, config_.resource_count_name, kVendor);
}

NodeDevices VastaiBackend::node_devices(const model::Node& node) const {
  return registration_with_whole_cores(node, kRegisterAnnotation, kVendor);
}

FitOutcome VastaiBackend::fit(std::span<DeviceUsage* const> devices,
                              const ContainerDeviceRequest& request, const FitContext& ctx) const {
  const auto& pod = static_cast<const StandardPreparedPod&>(*ctx.prepared);
  FitOutcome out;
  const bool is_mutex = policy_has_token(ctx.gpu_policy, "mutex");

  // Die mode is decided by the first device of the list (the least preferred one).
  const bool die_mode = !devices.empty() && is_die(read_die_facts(*devices[0]));
  std::vector<std::string> device_aics;          // by position, die mode only
  std::set<std::string, std::less<>> busy_aics;  // AICs with a die in use (die mode + mutex)
  if (die_mode) {
    device_aics.reserve(devices.size());
    for (const DeviceUsage* d : devices) {
      device_aics.push_back(aic_of(read_die_facts(*d)));
      if (is_mutex && d->used > 0) busy_aics.insert(device_aics.back());
    }
  }

  const check::Failures fail(out, ctx.explain);
  int32_t nums = request.nums;
  std::vector<std::string> chosen_aics;  // parallel to out.devices in die mode
  for (ptrdiff_t i = static_cast<ptrdiff_t>(devices.size()) - 1; i >= 0; --i) {
    const DeviceUsage& d = *devices[i];
    if (!check::selectable(d, request.type == kVendor, &pod.uuids, fail.on(d))) continue;
    if (!check::slots_free(d, is_mutex, check::kDeviceWording, fail.on(d))) continue;
    if (is_mutex && die_mode && busy_aics.contains(device_aics[i])) {
      fail(d, Reason::kExclusiveDeviceAllocateConflict,
           "mutex policy needs an idle card, another die of AIC \"" + device_aics[i] +
               "\" is in use");
      continue;
    }
    // Vastai records neither memory nor cores.
    ContainerDevice candidate = check::taken(d, std::string(kVendor));
    if (die_mode) {
      // Every passing die is collected; the choice among them comes after the scan.
      out.devices.push_back(std::move(candidate));
      chosen_aics.push_back(device_aics[i]);
      continue;
    }
    if (check::take_device(out, nums, std::move(candidate))) return out;
  }
  const size_t want = nums > 0 ? static_cast<size_t>(nums) : 0;
  if (die_mode && out.devices.size() >= want) {
    if (out.devices.size() > want) {
      if (want == 1) {
        out.devices.resize(1);  // the most preferred passing die
      } else {
        out.devices = best_dies(std::move(out.devices), chosen_aics, want);
      }
    }
    out.fits = true;
    return out;
  }
  check::count_insufficient(out);
  return out;
}

float VastaiBackend::score_node(std::span<const DeviceUsage> previous,
                                const PodSingleDevice& chosen, std::string_view,
                                const PreparedPod*) const {
  float score = 0;
  for (const ContainerDevices& container : chosen) {
    if (container.empty()) continue;
    std::map<std::string, size_t, std::less<>> per_aic;
    size_t most = 0;
    for (const ContainerDevice& c : container) {
      // HAMi reads the chosen device's custominfo (copied from the registration in Fit).
      auto dev = std::find_if(previous.begin(), previous.end(),
                              [&](const DeviceUsage& d) { return d.id == c.uuid; });
      if (dev == previous.end()) return 0;
      const DieFacts facts = read_die_facts(*dev);
      // Not dies grouped by AIC: no opinion on this node. An absent (or non-string)
      // DeviceStrategy is tolerated.
      if (!facts.has_custom_info || (facts.strategy && *facts.strategy != "die") || !facts.aic) {
        return 0;
      }
      most = std::max(most, ++per_aic[*facts.aic]);
    }
    score += static_cast<float>(most) / static_cast<float>(container.size());
  }
  return score;
}

Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults) {
  VastaiConfig c;
  if (!chart_defaults) c.resource_count_name.clear();
  if (Status s = section.read("resourceCountName", c.resource_count_name); !s) return s.error();
  return Backends{std::make_shared<VastaiBackend>(std::move(c))};
}

}  // namespace hamisim::device::vastai
