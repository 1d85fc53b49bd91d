#include "fit/device_config.h"

#include <yaml-cpp/yaml.h>

#include <memory>
#include <type_traits>

#include "model/decode.h"

namespace hamisim::fit {
namespace {

template <class T>
constexpr const char* expected_type() {
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  if constexpr (std::is_same_v<T, bool>) return "a boolean";
  return "an integer";
}

template <class T>
Status read_scalar(const YAML::Node& section, const char* key, T& out) {
  const YAML::Node v = section[key];
  if (!v || v.IsNull()) return ok_status();
  // yaml-cpp turns a sequence or mapping into a string without complaint for some T; a
  // scalar is what every key here holds.
  const auto type_error = [&] {
    return make_error(std::string("nvidia.") + key + ": expected " + expected_type<T>() +
                      " at line " + std::to_string(v.Mark().line + 1));
  };
  if (!v.IsScalar()) return type_error();
  try {
    out = v.as<T>();
  } catch (const YAML::Exception&) {
    return type_error();
  }
  return ok_status();
}

// HAMi passes the value to HAMi-core unchecked, where anything but these is silently the
// default; a typo would quietly turn the policy off, so it is refused here.
Status check_gpu_core_policy(const YAML::Node& section, const std::string& policy) {
  if (policy.empty() || policy == "default" || policy == "force" || policy == "disable")
    return ok_status();
  return make_error("nvidia.gpuCorePolicy: expected default, force or disable, got \"" + policy +
                    "\" at line " + std::to_string(section["gpuCorePolicy"].Mark().line + 1));
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
        read_scalar(n, "memoryFactor", c.memory_factor),
        read_scalar(n, "gpuCorePolicy", c.gpu_core_policy),
        read_scalar(n, "overwriteEnv", c.overwrite_env),
        read_scalar(n, "runtimeClassName", c.runtime_class_name)}) {
    if (!s) return s.error();
  }
  if (Status s = check_gpu_core_policy(n, c.gpu_core_policy); !s) return s.error();
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
