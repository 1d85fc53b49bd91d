#pragma once
// HAMi's device-config.yaml (--device-config-file): every vendor section, and the registry of
// vendor backends built from it (reference: hami-other-vendors.md A.1).

#include <memory>
#include <string>
#include <vector>

#include "device/nvidia/nvidia_backend.h"
#include "device/registry.h"
#include "model/result.h"

namespace hamisim::device {

// Families HAMi only instantiates behind a scheduler flag.
enum class VendorGate { kAlways, kAscend, kIluvatar };

struct VendorBackend {
  std::shared_ptr<const DeviceBackend> backend;
  VendorGate gate = VendorGate::kAlways;
};

struct DeviceConfig {
  nvidia::NvidiaConfig nvidia;
  // The other vendors' backends in HAMi's instantiation order. Filled by parse_device_config;
  // empty (never parsed) means HAMi's chart defaults.
  std::vector<VendorBackend> vendors;
  bool parsed = false;
  // HAMi's --enable-ascend and --enable-iluvatar (both default false, as in HAMi's chart).
  bool enable_ascend = false;
  bool enable_iluvatar = false;
  // Top-level sections hamisim does not know (a typo, or a newer HAMi's vendor).
  std::vector<std::string> ignored_sections;
};

// Parses the YAML text. Unknown keys inside a section are ignored like HAMi's decoder does;
// wrong types are errors naming the section, key and line.
Result<DeviceConfig> parse_device_config(std::string_view yaml);
// Reads `path` as model::read_document does (HAMi's ConfigMap, key device-config.yaml; `-`).
Result<DeviceConfig> load_device_config(const std::string& path);

// NVIDIA plus every other vendor (enabled gates only).
DeviceRegistry build_registry(const DeviceConfig& config);

}  // namespace hamisim::device
