#pragma once
// `hamisim profile check`: are the real nodes of each profiled group what the profile says?

#include <string>

#include <vector>
#include "cli/device_flags.h"

namespace hamisim::cli {

struct ProfileCheckOptions {
  std::string device_profiles_path;
  // Where the real nodes come from: exactly one of these.
  std::vector<std::string> cluster_paths;
  std::string kubeconfig;
  std::string kube_context;
  bool in_cluster = false;
  DeviceFlags device;            // --device-config-file, --enable-ascend, --enable-iluvatar
  std::string output = "table";  // table | json
  bool strict = false;           // --strict: unknown fields in --cluster's objects are errors
};

// Exit code: 0 when every described node matches, 1 on any mismatch, 2 on bad input.
int run_profile_check(const ProfileCheckOptions& options);

}  // namespace hamisim::cli
