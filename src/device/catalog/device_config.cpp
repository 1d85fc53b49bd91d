#include "device/catalog/device_config.h"

#include <yaml-cpp/yaml.h>

#include <memory>
#include <stdexcept>

#include "device/amd/amd_backend.h"
#include "device/ascend/ascend_backend.h"
#include "device/awsneuron/awsneuron_backend.h"
#include "device/biren/biren_backend.h"
#include "device/cambricon/cambricon_backend.h"
#include "device/common/config_section.h"
#include "device/enflame/enflame_backends.h"
#include "device/hygon/hygon_backend.h"
#include "device/iluvatar/iluvatar_backend.h"
#include "device/kunlun/kunlun_backend.h"
#include "device/metax/metax_backend.h"
#include "device/mthreads/mthreads_backend.h"
#include "device/vastai/vastai_backend.h"
#include "model/decode.h"
#include "model/input.h"
#include "model/yaml_check.h"

namespace hamisim::device {
namespace {

// HAMi passes the value to HAMi-core unchecked, where anything but these is silently the
// default; a typo would quietly turn the policy off, so it is refused here.
Status check_gpu_core_policy(const YAML::Node& section, const std::string& policy) {
  if (policy.empty() || policy == "default" || policy == "force" || policy == "disable")
    return ok_status();
  return make_error("nvidia.gpuCorePolicy: expected default, force or disable, got \"" + policy +
                    "\" at line " + std::to_string(section["gpuCorePolicy"].Mark().line + 1));
}

// Every vendor section but nvidia, in HAMi's instantiation order (InitDevicesWithConfig).
struct VendorSection {
  const char* name;
  BackendFactory factory;
  VendorGate gate;
};
constexpr VendorSection kVendorSections[] = {
    {"cambricon", &cambricon::make_backends, VendorGate::kAlways},
    {"hygon", &hygon::make_backends, VendorGate::kAlways},
    {"enflame", &enflame::make_backends, VendorGate::kAlways},
    {"mthreads", &mthreads::make_backends, VendorGate::kAlways},
    {"metax", &metax::make_backends, VendorGate::kAlways},
    {"kunlun", &kunlun::make_backends, VendorGate::kAlways},
    {"awsneuron", &awsneuron::make_backends, VendorGate::kAlways},
    {"amd", &amd::make_backends, VendorGate::kAlways},
    {"vastai", &vastai::make_backends, VendorGate::kAlways},
    {"biren", &biren::make_backends, VendorGate::kAlways},
    {"vnpus", &ascend::make_backends, VendorGate::kAscend},
    {"iluvatars", &iluvatar::make_backends, VendorGate::kIluvatar},
};

Result<std::vector<VendorBackend>> build_vendors(const YAML::Node* root) {
  std::vector<VendorBackend> out;
  for (const VendorSection& v : kVendorSections) {
    ConfigSection section;
    if (root) {
      const YAML::Node node = (*root)[v.name];
      // HAMi's `iluvatars:` is a list; every other section is a mapping.
      const bool list = std::string_view(v.name) == "iluvatars";
      if (node && !node.IsNull() && (list ? !node.IsSequence() : !node.IsMap())) {
        return make_error(std::string(v.name) + ": expected " + (list ? "a list" : "a mapping") +
                          " at line " + std::to_string(node.Mark().line + 1));
      }
      section = ConfigSection(node, v.name);
    }
    auto backends = v.factory(section, root == nullptr);
    if (!backends) return backends.error();
    for (auto& b : *backends) out.push_back(VendorBackend{std::move(b), v.gate});
  }
  return out;
}

bool known_section(std::string_view name) {
  if (name == "nvidia") return true;
  for (const VendorSection& v : kVendorSections) {
    if (name == v.name) return true;
  }
  return false;
}

}  // namespace

Result<DeviceConfig> parse_device_config(std::string_view yaml) {
  DeviceConfig config;
  config.parsed = true;
  if (Status s = model::check_yaml(yaml); !s) {
    return make_error("device config: " + s.error().message);
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return make_error(std::string("device config: ") + e.what());
  }
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) return make_error("device config: expected a mapping of vendor sections");
  for (const auto& entry : root) {
    const std::string name = entry.first.as<std::string>("");
    if (!known_section(name)) config.ignored_sections.push_back(name);
  }
  auto vendors = build_vendors(&root);
  if (!vendors) return make_error("device config: " + vendors.error().message);
  config.vendors = std::move(vendors).value();
  const YAML::Node n = root["nvidia"];
  if (!n || n.IsNull()) return config;
  if (!n.IsMap()) return make_error("device config: nvidia: expected a mapping");
  auto& c = config.nvidia;
  const device::ConfigSection nvidia(n, "nvidia");
  for (Status s : {nvidia.read("resourceCountName", c.resource_count_name),
                   nvidia.read("resourceMemoryName", c.resource_memory_name),
                   nvidia.read("resourceMemoryPercentageName", c.resource_memory_percentage_name),
                   nvidia.read("resourceCoreName", c.resource_core_name),
                   nvidia.read("resourcePriorityName", c.resource_priority_name),
                   nvidia.read("defaultMemory", c.default_memory),
                   nvidia.read("defaultCores", c.default_cores),
                   nvidia.read("defaultGPUNum", c.default_gpu_num),
                   nvidia.read("memoryFactor", c.memory_factor),
                   nvidia.read("gpuCorePolicy", c.gpu_core_policy),
                   nvidia.read("overwriteEnv", c.overwrite_env),
                   nvidia.read("runtimeClassName", c.runtime_class_name)}) {
    if (!s) return s.error();
  }
  if (Status s = check_gpu_core_policy(n, c.gpu_core_policy); !s) return s.error();
  return config;
}

Result<DeviceConfig> load_device_config(const std::string& path) {
  // HAMi's chart ships it as the device-config.yaml key of the hami-scheduler-device ConfigMap.
  static const model::DocumentSpec kSpec{"--device-config-file",
                                         {},
                                         "HAMi's device-config.yaml (nvidia:, cambricon:, ...)",
                                         {"device-config.yaml"}};
  auto doc = model::read_document(path, kSpec);
  if (!doc) return doc.error();
  auto config = parse_device_config(doc->text);
  if (!config) return make_error(doc->source + ": " + config.error().message);
  return config;
}

DeviceRegistry build_registry(const DeviceConfig& config) {
  DeviceRegistry registry;
  registry.add(std::make_shared<nvidia::NvidiaBackend>(config.nvidia));
  std::vector<VendorBackend> defaults;
  if (!config.parsed) {
    // Chart defaults cannot be wrong; a failure here is a bug in a vendor's defaults.
    auto built = build_vendors(nullptr);
    if (!built) throw std::logic_error("vendor chart defaults: " + built.error().message);
    defaults = std::move(built).value();
  }
  for (const VendorBackend& v : config.parsed ? config.vendors : defaults) {
    if (v.gate == VendorGate::kAscend && !config.enable_ascend) continue;
    if (v.gate == VendorGate::kIluvatar && !config.enable_iluvatar) continue;
    registry.add(v.backend);
  }
  return registry;
}

}  // namespace hamisim::device
