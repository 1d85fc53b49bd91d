#pragma once
// The resource pools the structured allocator considers for one node (GatherPools, as
// kube-scheduler 1.37 does it: ../shared/reference/dra.md §2.4, §2.18).
//
// A slice is relevant to the node when it names the node, is for all nodes, has a node
// selector the node matches, or (perDeviceNodeSelection) has a device whose own node fields
// match. A slice whose devices declare compatibility groups (gate DRADeviceCompatibilityGroups,
// alpha and off in 1.37) is ignored, and does not count towards its pool's slices. Relevant slices
// are grouped by (driver, pool); only the newest generation counts. A pool is complete when as many
// slices of that generation exist, anywhere in the cluster, as its resourceSliceCount says; a pool
// for which a newer generation exists anywhere is dropped. Complete pools are checked (duplicate
// device names, duplicate counter sets, counters that do not exist) and ordered: by driver and pool
// name, pools with binding conditions last; slices by name; devices in slice order. That order is
// the allocator's first-fit order.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dra/objects.h"

namespace hamisim::dra {

// Whether the node matches a node selector (kube-scheduler's node-selector semantics,
// matchFields on metadata.name included). Supplied by the caller, which knows the node.
using NodeSelectorMatch = std::function<bool(const model::NodeSelector&)>;

struct Pool {
  std::string driver;
  std::string name;
  int64_t generation = 0;
  // An incomplete pool (slices of its generation still missing) or an invalid one (`why`) is
  // kept so that an `All` request can fail on it; no device of it is ever allocated.
  bool incomplete = false;
  std::string invalid;  // empty: valid
  bool has_binding_conditions = false;
  // The pool's slices that hold devices for this node, by name, and the rest of the pool's
  // slices of this generation (other nodes' devices and counter sets: counters are shared
  // across the whole pool).
  std::vector<const ResourceSlice*> slices;
  std::vector<const ResourceSlice*> other_slices;
};

// `slices` is every ResourceSlice of the cluster; the pools point into it.
std::vector<Pool> gather_pools(const std::vector<ResourceSlice>& slices, std::string_view node_name,
                               const NodeSelectorMatch& matches_node);
// The same over slices held elsewhere: a simulation keeps each node's own slices with the node
// and passes them with the slices that name no node.
std::vector<Pool> gather_pools(const std::vector<const ResourceSlice*>& slices,
                               std::string_view node_name, const NodeSelectorMatch& matches_node);

// Whether a device of `slice` can be used on the node (the slice's scope, or the device's own
// with perDeviceNodeSelection).
bool device_on_node(const ResourceSlice& slice, const Device& device, std::string_view node_name,
                    const NodeSelectorMatch& matches_node);

}  // namespace hamisim::dra
