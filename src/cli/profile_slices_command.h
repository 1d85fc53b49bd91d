#pragma once
// `hamisim profile slices`: the ResourceSlices a node of a group would publish under DRA, from
// the group's device profile, for providers and tools that need template slices for a node
// group with zero nodes (docs/device-profiles.md, "Template slices").

#include <string>

#include "cli/device_flags.h"

namespace hamisim::cli {

struct ProfileSlicesOptions {
  std::string device_profiles_path;
  std::string node_group;
  std::string node_name;  // default: template-node-for-<group>
  DeviceFlags device;
  std::string output = "yaml";            // yaml | json
  std::string format = "resourceslices";  // resourceslices | clusterapi
};

// Exit code: 0, or 2 on bad input (no profile for the group, nothing DRA can publish).
int run_profile_slices(const ProfileSlicesOptions& options);

}  // namespace hamisim::cli
