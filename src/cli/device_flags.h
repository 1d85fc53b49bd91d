#pragma once
// The device flags every command shares: HAMi's --device-config-file and the two vendor
// families HAMi only runs behind a flag (--enable-ascend, --enable-iluvatar).

#include <string>

#include "device/catalog/device_config.h"
#include "model/result.h"

namespace CLI {
class App;
}

namespace hamisim::cli {

struct DeviceFlags {
  std::string config_path;  // empty = HAMi's chart defaults
  bool enable_ascend = false;
  bool enable_iluvatar = false;
};

void add_device_flags(CLI::App& app, DeviceFlags& flags, const std::string& config_help);

// The device configuration the flags describe; errors name the file.
Result<device::DeviceConfig> load_device_flags(const DeviceFlags& flags);

}  // namespace hamisim::cli
