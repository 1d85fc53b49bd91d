#pragma once
// Template versus reality under DRA: how the slices a node group's template promises differ
// from the slices a real node of the group publishes, in Cluster Autoscaler's categories
// (its dra_node_template_resources_mismatch metric, ../shared/reference/dra.md §5.7).
//
// Devices are grouped by (driver, pool, set of attribute names) with a count; values and
// capacities are not compared, as CA does not compare them. Groups equal in driver, names and
// count cancel out (pool names ignored); a template group left over is a `mismatch` against the
// node group of its driver sharing the most attribute names (ties: the nearest device count),
// else `missing`; a node group left over is `extra`. A driver whose pools on the node are
// changing (slices of several generations, or fewer than announced) is not compared.

#include <cstdint>
#include <string>
#include <vector>

#include "dra/objects.h"

namespace hamisim::dra {

struct DriverDifference {
  std::string driver;
  int64_t missing = 0;   // promised by the template, absent on the node
  int64_t extra = 0;     // on the node, not promised
  int64_t mismatch = 0;  // promised and present, with other attribute names or device count
  bool in_flux = false;  // the node's pools of this driver are changing: not compared
  bool any() const { return missing + extra + mismatch > 0; }
};

// One entry per driver of either side, by driver name.
std::vector<DriverDifference> compare_with_template(const std::vector<ResourceSlice>& promised,
                                                    const std::vector<ResourceSlice>& published);

}  // namespace hamisim::dra
