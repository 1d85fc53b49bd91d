#pragma once
// The one rule for "these two descriptions have the same devices": similar node groups in
// the planner (balancing) and profile homogeneity in reconciliation both use it, so a group
// the planner balances with another can never be one reconciliation calls different.

#include <string>
#include <string_view>
#include <vector>

#include "device/types.h"

namespace hamisim::fit {

// How two device lists differ, one line per field ("devmem: profile 81920 x8, node 40960 x8",
// with `a_name` = "profile", `b_name` = "node"). Empty when they describe the same devices:
// the same multiset of (vendor, type, devmem, devcore, split, mode, MIG profiles), in any
// order. Identity (UUIDs, indexes), NUMA placement, topology scores and runtime state (health,
// cordon) are not part of what a device is.
std::vector<std::string> device_differences(const std::vector<device::DeviceInfo>& a,
                                            const std::vector<device::DeviceInfo>& b,
                                            std::string_view a_name, std::string_view b_name);

inline bool same_devices(const std::vector<device::DeviceInfo>& a,
                         const std::vector<device::DeviceInfo>& b) {
  return device_differences(a, b, "a", "b").empty();
}

}  // namespace hamisim::fit
