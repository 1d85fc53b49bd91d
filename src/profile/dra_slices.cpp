#include "profile/dra_slices.h"

#include "device/allocation.h"
#include "dra/decode.h"
#include "dra/hami_driver.h"
#include "model/decode.h"
#include "model/yaml_check.h"
#include "profile/device_profiles.h"

namespace hamisim::profile {

using model::yaml::check_keys;
using model::yaml::Where;

namespace {

dra::DeviceCapacity whole_by_default(model::Quantity value, model::Quantity min,
                                     model::Quantity step) {
  dra::CapacityRequestPolicy policy;
  policy.default_value = value;
  policy.valid_range = dra::CapacityRange{min, value, step};
  return {value, policy};
}

}  // namespace

dra::ResourceSlice hami_driver_slice(const std::string& node,
                                     const std::vector<device::DeviceInfo>& devices) {
  dra::ResourceSlice s;
  s.metadata.name = node + "-" + std::string(dra::kHamiDriver);
  s.driver = dra::kHamiDriver;
  s.pool = {.name = node, .generation = 1, .resource_slice_count = 1};
  s.scope.node_name = node;
  for (const device::DeviceInfo& d : devices) {
    if (!d.health) continue;  // the driver drops unhealthy GPUs from its slice
    dra::Device& out = s.devices.emplace_back();
    out.name = "hami-gpu-" + std::to_string(d.index);
    out.allow_multiple_allocations = true;
    out.attributes["type"] = std::string(dra::kHamiDeviceType);
    out.attributes["uuid"] = d.id;
    out.attributes["minor"] = static_cast<int64_t>(d.index);
    constexpr std::string_view kPrefix = "NVIDIA-";
    out.attributes["productName"] =
        d.type.starts_with(kPrefix) ? d.type.substr(kPrefix.size()) : d.type;
    out.capacity["cores"] =
        whole_by_default(model::Quantity::from_int(d.devcore), model::Quantity::from_int(0),
                         model::Quantity::from_int(1));
    out.capacity["memory"] =
        whole_by_default(model::Quantity::from_int(int64_t{d.devmem} << 20),
                         model::Quantity::from_int(1 << 20), model::Quantity::from_int(1 << 20));
  }
  return s;
}

std::vector<dra::ResourceSlice> dra_slices_for_node(const DeviceProfile& profile,
                                                    const std::string& node) {
  std::vector<dra::ResourceSlice> out = profile.dra_slices;
  if (out.empty()) {
    std::vector<device::DeviceInfo> gpus;
    for (const auto& d : profile.description.devices) {
      if (device::contains_ignore_case(d.type, "nvidia")) gpus.push_back(d);
    }
    if (!gpus.empty()) out.push_back(hami_driver_slice(profile.name, gpus));
  }
  const std::string prefix = profile.name + "-";
  for (auto& s : out) {
    s.scope.node_name = node;
    if (s.pool.name == profile.name) s.pool.name = node;
    if (s.metadata.name.starts_with(prefix)) {
      s.metadata.name = node + s.metadata.name.substr(profile.name.size());
    }
  }
  return out;
}

Result<DraForm> read_dra_slices(const YAML::Node& n, const Where& where, const std::string& profile,
                                const std::vector<device::DeviceInfo>* devices) {
  if (!n.IsMap()) return where.error(n, "expected a mapping with hamiDriver and/or resourceSlices");
  if (Status s = check_keys(n, where, {"hamiDriver", "resourceSlices"}); !s) return s.error();
  DraForm form;
  std::vector<dra::ResourceSlice>& out = form.slices;
  if (const YAML::Node h = n["hamiDriver"]; h && !h.IsNull()) {
    bool on = false;
    if (!h.IsScalar() || !YAML::convert<bool>::decode(h, on)) {
      return (where / "hamiDriver").error(h, "expected true or false");
    }
    if (on) {
      if (devices == nullptr) {
        return (where / "hamiDriver")
            .error(h, "renders the profile's devices:, and the profile has none");
      }
      out.push_back(hami_driver_slice(profile, *devices));
      form.hami_driver = true;
    }
  }
  if (const YAML::Node list = n["resourceSlices"]; list && !list.IsNull()) {
    if (!list.IsSequence()) return (where / "resourceSlices").error(list, "expected a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const Where w = (where / "resourceSlices").at(i);
      YAML::Emitter text;
      text << list[i];
      auto json = model::yaml_to_json(text.c_str());
      if (!json) return w.error(list[i], json.error().message);
      auto slice = dra::decode_resource_slice(*json);
      if (!slice) return w.error(list[i], slice.error().message);
      if (!slice->scope.node_name) {
        return w.error(list[i],
                       "spec.nodeName is required (any value: each node's name replaces it); a "
                       "profile describes a node's own slices");
      }
      slice->scope.node_name = profile;
      out.push_back(std::move(slice).value());
    }
  }
  return form;
}

}  // namespace hamisim::profile
