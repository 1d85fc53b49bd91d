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

  const std::vector<dra::DeviceClass>& classes() const { return objects_.classes; }
  const std::vector<dra::ResourceClaim>& claims() const { return objects_.claims; }
  // The slices naming `node` (null when none).
  NodeSlices node_slices(std::string_view node) const;
  // The slices naming no node: for all nodes, a node selector, or per-device selection.
  const std::vector<const dra::ResourceSlice*>& shared_slices() const { return shared_; }
  const dra::ResourceClaim* claim(std::string_view namespace_, std::string_view name) const;
  const dra::ResourceClaimTemplate* claim_template(std::string_view namespace_,
                                                   std::string_view name) const;

 private:
  dra::Objects objects_;
  std::map<std::string, NodeSlices, std::less<>> by_node_;
  std::vector<const dra::ResourceSlice*> shared_;
  std::map<std::string, const dra::ResourceClaim*, std::less<>> claims_;  // "ns/name"
  std::map<std::string, const dra::ResourceClaimTemplate*, std::less<>> templates_;
};

// Decodes the DRA items a cluster input kept (model::ObjectSet::dra_objects) with the strict
// DRA decoder, appending to `into`; errors name the item.
Status decode_dra_objects(const std::vector<model::RawObject>& items, dra::Objects& into);

// `slices` (one node's own) as a copy of that node named `node` publishes them: nodeName set
// to it, each pool and slice renamed "<name>-<suffix>"; devices, generations and slice counts
// unchanged (CA's sanitized template copies, reference §5.5 and pitfall P22).
// Null for null.
NodeSlices slices_for_copy(const NodeSlices& slices, std::string_view node,
                           std::string_view suffix);

}  // namespace hamisim::planner::framework
