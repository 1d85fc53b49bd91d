#pragma once
// `hamisim fit`: explains, for a person, whether a pod fits a node's devices and why.

#include <string>

#include "cli/device_flags.h"

namespace hamisim::cli {

struct FitOptions {
  std::string pod_path;
  std::string node_path;
  std::string pods_on_node_path;     // optional: pods already using the node's devices
  std::string device_profiles_path;  // optional: describes template nodes as serve does
  DeviceFlags device;                // --device-config-file, --enable-ascend, --enable-iluvatar
  std::string output = "table";      // table | json
  std::string gpu_policy = "spread";
  std::string node_policy = "binpack";
  bool strict = false;  // --strict: unknown fields in the objects read are errors
};

// Returns the process exit code: 0 when the question was answered (fit or not), 2 on bad
// input.
int run_fit(const FitOptions& options);

}  // namespace hamisim::cli
