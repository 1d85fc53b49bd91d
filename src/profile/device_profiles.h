#pragma once
// Device profiles (spec §7.1): the device description of a node group, for templates that
// carry no registration (cold-zero groups) and as the reference real nodes are checked
// against.

#include <memory>
#include <string>
#include <vector>

#include "device/registry.h"
#include "dra/objects.h"
#include "fit/description.h"
#include "model/objects.h"
#include "model/result.h"

namespace hamisim::profile {

inline constexpr std::string_view kDeviceProfileAnnotation = "hamisim.io/device-profile";

enum class OnMismatch { kWarn, kPreferObserved, kReject };
std::string_view to_string(OnMismatch m);

struct ProfileMatch {
  std::vector<std::string> node_groups;  // CA node group ids
  model::StringMap labels;               // every label must match
  std::string node_group_label;          // label whose value is the node's group id
};

struct DeviceProfile {
  std::string name;
  ProfileMatch match;
  OnMismatch on_mismatch = OnMismatch::kWarn;
  // The devices a fresh node of the group registers, decoded once at load time (synthetic
  // IDs `<profile>-<vendor>-<index>` for the `devices:` form).
  fit::DeviceDescription description;
  // The registration annotations the profile stands for (key -> exact value), as a device
  // plugin would write them.
  model::StringMap annotations;
  // Node capacity the profile stands for (vendors that HAMi discovers from node capacity,
  // such as Cambricon or Moore Threads).
  model::ResourceList capacity;
  // Under DRA (`dra:`): the ResourceSlices a fresh node of the group publishes, on a node named
  // after the profile until a template is made from it. Empty: the profile describes none.
  std::vector<dra::ResourceSlice> dra_slices;
};

struct DeviceProfiles {
  std::vector<DeviceProfile> profiles;
  const DeviceProfile* find(std::string_view name) const;
};

// The ResourceSlices a node named `node` of the profile's group publishes under DRA: the
// profile's `dra:` slices, else its NVIDIA devices as HAMi's k8s-dra-driver publishes them.
// nodeName is `node`, and a pool or slice named after the profile (HAMi's pool is named after
// its node) is named after `node` instead. Empty when the profile describes nothing DRA can
// publish.
std::vector<dra::ResourceSlice> dra_slices_for_node(const DeviceProfile& profile,
                                                    const std::string& node);

// Parses and validates a DeviceProfiles YAML document. `source` names the file in errors
// ("profiles.yaml: profiles[0] (a100).devices[0].numa: ...").
Result<DeviceProfiles> parse_device_profiles(std::string_view yaml, std::string_view source,
                                             const device::DeviceRegistry& registry);
// Reads `path` as model::read_document does (a ConfigMap's device-profiles.yaml key, `-`).
Result<DeviceProfiles> load_device_profiles(const std::string& path,
                                            const device::DeviceRegistry& registry);

}  // namespace hamisim::profile
