#pragma once
// HAMi's device-config.yaml (--device-config-file), the sections hamisim understands, and the
// registry of vendor backends built from it.

#include <string>
#include <vector>

#include "device/nvidia/nvidia_backend.h"
#include "device/registry.h"
#include "model/result.h"

namespace hamisim::fit {

struct DeviceConfig {
  device::nvidia::NvidiaConfig nvidia;
  // Sections present in the file that hamisim does not implement yet (other vendors).
  std::vector<std::string> ignored_sections;
};

// Parses the YAML text. Unknown keys inside `nvidia:` are ignored like HAMi's decoder does;
// wrong types are errors naming the key.
Result<DeviceConfig> parse_device_config(std::string_view yaml);
Result<DeviceConfig> load_device_config(const std::string& path);

device::DeviceRegistry build_registry(const DeviceConfig& config);

}  // namespace hamisim::fit
