#include "cli/device_flags.h"

#include <CLI/CLI.hpp>

namespace hamisim::cli {

void add_device_flags(CLI::App& app, DeviceFlags& flags, const std::string& config_help) {
  app.add_option("--device-config-file", flags.config_path, config_help);
  app.add_flag("--enable-ascend", flags.enable_ascend,
               "Schedule Huawei Ascend NPUs (the vnpus section), as HAMi's flag");
  app.add_flag("--enable-iluvatar", flags.enable_iluvatar,
               "Schedule Iluvatar GPUs (the iluvatars section), as HAMi's flag");
}

Result<device::DeviceConfig> load_device_flags(const DeviceFlags& flags) {
  device::DeviceConfig config;
  if (!flags.config_path.empty()) {
    auto loaded = device::load_device_config(flags.config_path);
    if (!loaded) return make_error("--device-config-file: " + loaded.error().message);
    config = std::move(loaded).value();
  }
  config.enable_ascend = flags.enable_ascend;
  config.enable_iluvatar = flags.enable_iluvatar;
  return config;
}

}  // namespace hamisim::cli
