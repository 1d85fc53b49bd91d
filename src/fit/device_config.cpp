#include "fit/device_config.h"

#include <yaml-cpp/yaml.h>

#include <memory>

#include "model/decode.h"

namespace hamisim::fit {
namespace {

template <class T>
Status read_scalar(const YAML::Node& section, const char* key, T& out) {
  const YAML::Node v = section[key];
  if (!v || v.IsNull()) return ok_status();
  try {
    out = v.as<T>();
  } catch (const YAML::Exception&) {
    return make_error(std::string("nvidia.") + key + ": expected " +
                      (std::is_same_v<T, std::string> ? "a string" : "an integer") + " at line " +
                      std::to_string(v.Mark().line + 1));
  }
  return ok_status();
}

}  // namespace

Result<DeviceConfig> parse_device_config(std::string_view yaml) {
  DeviceConfig config;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return make_error(std::string("device config: ") + e.what());
  }
  if (!root || root.IsNull()) return config;
  if (!root.IsMap()) return make_error("device config: expected a mapping of vendor sections");
  for (const auto& entry : root) {
    const std::string name = entry.first.as<std::string>("");
    if (name == "nvidia") continue;
    config.ignored_sections.push_back(name);
  }
  const YAML::Node n = root["nvidia"];
  if (!n || n.IsNull()) return config;
  if (!n.IsMap()) return make_error("device config: nvidia: expected a mapping");
  auto& c = config.nvidia;
  for (Status s :
       {read_scalar(n, "resourceCountName", c.resource_count_name),
        read_scalar(n, "resourceMemoryName", c.resource_memory_name),
        read_scalar(n, "resourceMemoryPercentageName", c.resource_memory_percentage_name),
        read_scalar(n, "resourceCoreName", c.resource_core_name),
        read_scalar(n, "resourcePriorityName", c.resource_priority_name),
        read_scalar(n, "defaultMemory", c.default_memory),
        read_scalar(n, "defaultCores", c.default_cores),
        read_scalar(n, "defaultGPUNum", c.default_gpu_num),
        read_scalar(n, "memoryFactor", c.memory_factor)}) {
    if (!s) return s.error();
  }
  return config;
}

Result<DeviceConfig> load_device_config(const std::string& path) {
  auto text = model::read_file(path);
  if (!text) return text.error();
  auto config = parse_device_config(*text);
  if (!config) return make_error(path + ": " + config.error().message);
  return config;
}

device::DeviceRegistry build_registry(const DeviceConfig& config) {
  device::DeviceRegistry registry;
  registry.add(std::make_shared<device::nvidia::NvidiaBackend>(config.nvidia));
  return registry;
}

}  // namespace hamisim::fit
