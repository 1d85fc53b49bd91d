#pragma once
// The DRA objects of a simulated cluster, as Cluster Autoscaler's DRA snapshot holds them
// (../shared/reference/dra.md §5.1): the DeviceClasses, the ResourceClaims (keyed by
// namespace/name) and templates, and the ResourceSlices split into each node's own (those with
// spec.nodeName) and the rest. A node's own slices travel with its NodeInfo, so a template
// copy added by the estimator brings its slices and a revert takes them away.
//
// Immutable once made; what the simulation allocates lives in the ClusterSnapshot.

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dra/objects.h"
#include "model/decode.h"

namespace hamisim::planner::framework {

using NodeSlices = std::shared_ptr<const std::vector<dra::ResourceSlice>>;

class DraCluster {
 public:
  explicit DraCluster(dra::Objects objects);
  // Null when there is no object at all: a plan without DRA.
  static std::shared_ptr<const DraCluster> make_if_any(dra::Objects objects);

  const dra::Objects& objects() const { return objects_; }
  const std::vector<dra::DeviceClass>& classes() const { return objects_.classes; }
  const std::vector<dra::ResourceClaim>& claims() const { return objects_.claims; }
  // The slices naming `node` (null when none).
  NodeSlices node_slices(std::string_view node) const;
  // The slices naming no node: for all nodes, a node selector, or per-device selection.
  const std::vector<const dra::ResourceSlice*>& shared_slices() const { return shared_; }
  const dra::ResourceClaim* claim(std::string_view namespace_, std::string_view name) const;
  const dra::ResourceClaimTemplate* claim_template(std::string_view namespace_,
                                                   std::string_view name) const;
  // The class that serves extended resource `resource` through DRA (KEP-5004, reference §1.8):
  // the class whose extendedResourceName it is (the newest, by creation time, when several
  // say so), or the class `<c>` of `deviceclass.resource.kubernetes.io/<c>`; null for none.
  const dra::DeviceClass* extended_resource_class(std::string_view resource) const;

 private:
  dra::Objects objects_;
  std::map<std::string, NodeSlices, std::less<>> by_node_;
  std::vector<const dra::ResourceSlice*> shared_;
  std::map<std::string, const dra::ResourceClaim*, std::less<>> claims_;  // "ns/name"
  std::map<std::string, const dra::ResourceClaimTemplate*, std::less<>> templates_;
  std::map<std::string, const dra::DeviceClass*, std::less<>> classes_;
  std::map<std::string, const dra::DeviceClass*, std::less<>> by_extended_resource_;
};

// A pod's request for an extended resource a DeviceClass serves (KEP-5004, reference §1.8). On
// a node without allocatable for the resource, DRA serves it: the scheduler allocates it as a
// request of one claim it makes for the pod, `exactly {deviceClassName, count}`, no selectors.
struct ExtendedResourceRequest {
  std::string resource;
  const dra::DeviceClass* device_class = nullptr;
  std::string request;  // "container-<i>-request-<j>"
  int64_t count = 0;
};

// The pod's requests for extended resources DRA can serve, by container: i indexes
// initContainers then containers, j the resource among the container's requests by name.
// Long-lived containers (regular ones and sidecars) ask what they request; a non-sidecar init
// container runs before the regular containers and reuses their devices, so it asks only what
// it needs beyond them, and only the largest such ask per resource is kept (docs/dra.md).
std::vector<ExtendedResourceRequest> extended_resource_requests(const model::Pod& pod,
                                                                const DraCluster& cluster);

// `slices` (one node's own) as a copy of that node named `node` publishes them: nodeName set
// to it, each pool and slice renamed "<name>-<suffix>"; devices, generations and slice counts
// unchanged (CA's sanitized template copies, reference §5.5 and pitfall P22).
// Null for null.
NodeSlices slices_for_copy(const NodeSlices& slices, std::string_view node,
                           std::string_view suffix);

}  // namespace hamisim::planner::framework
