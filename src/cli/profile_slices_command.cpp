#include "cli/profile_slices_command.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>

#include "cli/input_error.h"
#include "device/catalog/device_config.h"
#include "dra/encode.h"
#include "model/json_writer.h"
#include "profile/device_profiles.h"

namespace hamisim::cli {
namespace {

constexpr std::string_view kCommand = "profile slices";

// JSON text as block YAML, as kubectl prints objects: strings stay quoted where YAML would
// read them as something else ("100", "true"), so a quantity stays a string.
void emit(YAML::Emitter& out, const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      out << YAML::BeginMap;
      for (const auto& kv : n) {
        out << YAML::Key << kv.first.Scalar() << YAML::Value;
        emit(out, kv.second);
      }
      out << YAML::EndMap;
      break;
    case YAML::NodeType::Sequence:
      out << YAML::BeginSeq;
      for (const auto& item : n) emit(out, item);
      out << YAML::EndSeq;
      break;
    case YAML::NodeType::Scalar:
      // A quoted JSON string has the non-specific tag "!"; numbers and booleans are plain.
      if (n.Tag() == "!") {
        out << YAML::DoubleQuoted << n.Scalar();
      } else {
        out << n.Scalar();
      }
      break;
    default:
      out << YAML::Null;
  }
}

std::string as_yaml(const std::string& json) {
  YAML::Emitter out;
  emit(out, YAML::Load(json));
  return std::string(out.c_str()) + "\n";
}

// What clusterapi's scale-from-zero annotations can say of the slices: one driver and a device
// count (reference dra.md §5.9), and the warning of what that loses.
std::string clusterapi(const std::vector<dra::ResourceSlice>& slices, bool json) {
  const dra::ResourceSlice& first = slices.front();
  size_t devices = 0;
  for (const auto& s : slices) {
    if (s.driver == first.driver) devices += s.devices.size();
  }
  std::fprintf(stderr,
               "hamisim profile slices: warning: clusterapi describes %zu device(s) of %s as "
               "devices gpu-0..gpu-%zu with the one attribute type: gpu, so it loses every "
               "attribute, capacity and request policy, allowMultipleAllocations and counters; "
               "a class selector on the driver's attributes (HAMi's type == 'hami-gpu') matches "
               "none of them, and a claim asking capacity (HAMi's memory and cores) cannot use "
               "them\n",
               devices, first.driver.c_str(), devices == 0 ? 0 : devices - 1);
  for (const auto& s : slices) {
    if (s.driver != first.driver) {
      std::fprintf(stderr,
                   "hamisim profile slices: warning: clusterapi names one DRA driver; the "
                   "devices of %s are left out\n",
                   s.driver.c_str());
      break;
    }
  }
  model::JsonWriter w;
  w.begin_object().key("metadata").begin_object().key("annotations").begin_object();
  w.key("capacity.cluster-autoscaler.kubernetes.io/dra-driver").string(first.driver);
  w.key("capacity.cluster-autoscaler.kubernetes.io/gpu-count").string(std::to_string(devices));
  w.end_object().end_object().end_object();
  return json ? w.str() + "\n" : as_yaml(w.str());
}

}  // namespace

int run_profile_slices(const ProfileSlicesOptions& o) {
  if (o.output != "yaml" && o.output != "json") {
    return input_error(kCommand, "--output must be yaml or json, not \"" + o.output + "\"");
  }
  if (o.format != "resourceslices" && o.format != "clusterapi") {
    return input_error(kCommand,
                       "--format must be resourceslices or clusterapi, not \"" + o.format + "\"");
  }
  auto config = load_device_flags(o.device);
  if (!config) return input_error(kCommand, config.error().message);
  const device::DeviceRegistry registry = device::build_registry(*config);
  auto profiles = profile::load_device_profiles(o.device_profiles_path, registry);
  if (!profiles) return input_error(kCommand, profiles.error().message);
  std::vector<const profile::DeviceProfile*> matching;
  for (const auto& p : profiles->profiles) {
    const auto& groups = p.match.node_groups;
    if (std::find(groups.begin(), groups.end(), o.node_group) != groups.end()) {
      matching.push_back(&p);
    }
  }
  if (matching.size() != 1) {
    std::string names;
    for (const auto* p : matching) names += (names.empty() ? "" : ", ") + p->name;
    return input_error(kCommand, matching.empty()
                                     ? o.device_profiles_path + ": no profile names node group \"" +
                                           o.node_group + "\" in match.nodeGroups"
                                     : o.device_profiles_path +
                                           ": several profiles name node group \"" + o.node_group +
                                           "\": " + names);
  }
  const std::string node = o.node_name.empty() ? "template-node-for-" + o.node_group : o.node_name;
  const auto slices = profile::dra_slices_for_node(*matching[0], node);
  if (slices.empty()) {
    return input_error(kCommand, "profile " + matching[0]->name +
                                     " describes nothing DRA publishes (no dra: and no NVIDIA "
                                     "devices:)");
  }
  const bool json = o.output == "json";
  std::string out;
  if (o.format == "clusterapi") {
    out = clusterapi(slices, json);
  } else {
    const std::string list = dra::encode_resource_slice_list(slices);
    out = json ? list + "\n" : as_yaml(list);
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace hamisim::cli
