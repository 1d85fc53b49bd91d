#pragma once
// ClusterSnapshot: the nodes of a simulated cluster, the pods assigned to each, and the
// per-node aggregates kube-scheduler's filters read (NodeInfo: requested resources, used host
// ports, pod count, pods with required anti-affinity).
//
// CA's estimator adds template nodes and pods speculatively and rolls back. fork() opens a
// transaction; revert() undoes every change since the matching fork(); commit() keeps them
// (an enclosing fork can still revert them). Forks nest. Every change made inside a fork is
// recorded in an undo log, so fork/revert/commit cost O(changes), never O(cluster); revert
// restores exactly the previous state, node and pod order included.
//
// Iteration order is insertion order (nodes, and pods within a node). Pod and node objects
// are immutable once added and shared (shared_ptr), so copies are never made on fork.
//
// Pointers to NodeInfo stay valid until the node is removed outside any fork (removed nodes
// are kept as tombstones while a fork might resurrect them).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dra/allocator/allocator.h"
#include "model/objects.h"
#include "model/result.h"
#include "planner/framework/dra_cluster.h"
#include "planner/framework/labels.h"
#include "planner/framework/resources.h"

namespace hamisim::planner::framework {

// Host ports in use on a node (kube-scheduler's HostPortInfo). An empty IP means 0.0.0.0 and
// an empty protocol TCP. Entries are counted so removal is the exact inverse of addition.
class HostPortSet {
 public:
  void add(std::string_view ip, std::string_view protocol, int32_t port);
  void remove(std::string_view ip, std::string_view protocol, int32_t port);
  // HostPortInfo.CheckConflict: a wanted 0.0.0.0 port conflicts with that protocol/port on
  // any IP; a specific IP conflicts with the same IP or with 0.0.0.0. Ports <= 0 never do.
  bool conflicts(std::string_view ip, std::string_view protocol, int32_t port) const;
  bool empty() const { return by_ip_.empty(); }
  friend bool operator==(const HostPortSet&, const HostPortSet&) = default;

 private:
  using ProtocolPort = std::pair<std::string, int32_t>;
  std::map<std::string, std::map<ProtocolPort, int>, std::less<>> by_ip_;
};

// Host ports a pod occupies: hostPort > 0 on app containers and on restartable (sidecar)
// init containers, which run for the pod's whole life (scheduler util.GetHostPorts).
std::vector<model::ContainerPort> pod_host_ports(const model::Pod& pod);

// A compiled PodAffinityTerm (framework.AffinityTerm).
struct AffinityTerm {
  // Namespaces named by the term; the pod's own namespace when the term names none and has
  // no namespaceSelector.
  std::set<std::string, std::less<>> namespaces;
  Selector namespace_selector = Selector::nothing();
  Selector selector = Selector::nothing();
  std::string topology_key;

  // AffinityTerm.Matches: the pod is in one of the namespaces (or its namespace's labels
  // match the namespace selector) and its labels match the selector. `namespace_labels` may
  // be null (no labels).
  bool matches(const model::Pod& pod, const model::StringMap* namespace_labels) const;
};

// A claim a pod allocated when the simulation placed it (CA's Reserve writes the allocation
// into the snapshot; here it travels with the placed pod, so removing the pod frees it).
struct ClaimAllocation {
  std::string claim;  // namespace/name
  dra::AllocationResult allocation;
};

// A pod with what the filters need precomputed once (framework.PodInfo).
class PodInfo {
 public:
  static std::shared_ptr<const PodInfo> make(model::Pod pod);
  // The same without a copy of the pod, which the PodInfo keeps alive instead (a plan's
  // snapshot shares its input's pods: copying 35,000 of them was a quarter of a plan's memory).
  // A pod the API server's defaulting would change (requests from limits) is copied, as make()
  // would.
  static std::shared_ptr<const PodInfo> share(std::shared_ptr<const model::Pod> pod);
  // The same pod carrying the allocations of the claims it allocates where it is placed.
  static std::shared_ptr<const PodInfo> with_claim_allocations(
      const PodInfo& pod, std::vector<ClaimAllocation> allocations);
  // The same pod with these annotations set (a placed pod carrying its device allocation).
  // Nothing make() derives reads annotations, so the PodInfo is copied rather than derived
  // again, and the pod itself is shared: the annotations are kept beside it
  // (added_annotations()). A full copy of the pod per placement was a tenth of a large plan.
  static std::shared_ptr<const PodInfo> with_annotations(
      const PodInfo& pod, const std::map<std::string, std::string, std::less<>>& annotations);

  // The pod without what with_annotations() added: readers of a placed pod's annotations
  // take added_annotations() too, or annotated_pod().
  const model::Pod& pod() const { return *pod_; }
  // Annotations set over pod()'s own; null when none were.
  const model::StringMap* added_annotations() const { return added_annotations_.get(); }
  // pod() with added_annotations() set: a copy.
  model::Pod annotated_pod() const;
  const std::string& name() const { return pod_->metadata.name; }
  const std::string& namespace_() const { return pod_->metadata.namespace_; }
  // "<namespace>/<name>": a pod's identity within a node.
  const std::string& key() const { return key_; }
  // Unique among every PodInfo of the process, never reused: caches key on it, since a freed
  // PodInfo's address can come back as another pod's.
  uint64_t serial() const { return serial_; }
  // The effective request, as a node's bookkeeping counts it.
  const Resource& requests() const { return requests_; }
  const std::vector<model::ContainerPort>& host_ports() const { return host_ports_; }
  const std::vector<AffinityTerm>& required_affinity_terms() const { return affinity_; }
  const std::vector<AffinityTerm>& required_anti_affinity_terms() const { return anti_affinity_; }
  // Set when an (anti-)affinity term, required or preferred, has an invalid selector; as in
  // kube-scheduler, the whole list of that kind is then left empty. InterPodAffinity's
  // PreFilter fails for such an incoming pod; as an existing pod it has no terms.
  const std::optional<Error>& affinity_parse_error() const { return parse_error_; }
  const std::vector<ClaimAllocation>& claim_allocations() const { return claim_allocations_; }

 private:
  PodInfo() = default;
  // Derives what make() precomputes from the (defaulted) pod, which `pod_` then holds.
  static std::shared_ptr<PodInfo> derive(std::shared_ptr<const model::Pod> pod);
  std::shared_ptr<const model::Pod> pod_;  // never null; shared by copies of the PodInfo
  std::shared_ptr<const model::StringMap> added_annotations_;
  uint64_t serial_ = 0;
  std::string key_;
  Resource requests_;
  std::vector<model::ContainerPort> host_ports_;
  std::vector<AffinityTerm> affinity_;
  std::vector<AffinityTerm> anti_affinity_;
  std::optional<Error> parse_error_;
  std::vector<ClaimAllocation> claim_allocations_;
};

using PodInfoPtr = std::shared_ptr<const PodInfo>;

class ClusterSnapshot;

// One node and the pods assigned to it (framework.NodeInfo).
class NodeInfo {
 public:
  const model::Node& node() const { return *node_; }
  const std::string& name() const { return node_->metadata.name; }
  const model::StringMap& labels() const { return node_->metadata.labels; }
  const std::vector<PodInfoPtr>& pods() const { return pods_; }
  size_t pod_count() const { return pods_.size(); }
  const Resource& allocatable() const { return allocatable_; }
  // Sum of the effective requests of the pods on the node.
  const Resource& requested() const { return requested_; }
  const HostPortSet& used_ports() const { return used_ports_; }
  size_t pods_with_affinity() const { return pods_with_affinity_; }
  size_t pods_with_required_anti_affinity() const { return pods_with_required_anti_affinity_; }
  // The node's own ResourceSlices (spec.nodeName); null when it publishes none.
  const NodeSlices& slices() const { return slices_; }

 private:
  friend class ClusterSnapshot;
  std::shared_ptr<const model::Node> node_;
  NodeSlices slices_;
  std::vector<PodInfoPtr> pods_;
  Resource allocatable_;
  Resource requested_;
  HostPortSet used_ports_;
  size_t pods_with_affinity_ = 0;
  size_t pods_with_required_anti_affinity_ = 0;
  bool removed_ = false;
};

class ClusterSnapshot {
 public:
  ClusterSnapshot() = default;
  ClusterSnapshot(const ClusterSnapshot&) = delete;
  ClusterSnapshot& operator=(const ClusterSnapshot&) = delete;
  ClusterSnapshot(ClusterSnapshot&&) = default;
  ClusterSnapshot& operator=(ClusterSnapshot&&) = default;

  // Errors: empty name, or a node of that name already present. `slices` are the node's own
  // ResourceSlices.
  Status add_node(model::Node node, NodeSlices slices = nullptr);
  // The same without a copy of the node (a plan's snapshot shares its input's nodes).
  Status add_node(std::shared_ptr<const model::Node> node, NodeSlices slices = nullptr);
  // Removes the node and the pods on it. Error when there is no such node.
  Status remove_node(std::string_view name);
  // Errors: no such node, or a pod with the same namespace/name already on that node.
  Status add_pod(model::Pod pod, std::string_view node_name);
  Status add_pod(PodInfoPtr pod, std::string_view node_name);
  Status remove_pod(std::string_view namespace_, std::string_view pod_name,
                    std::string_view node_name);

  const NodeInfo* node(std::string_view name) const;
  // Live nodes in insertion order.
  std::vector<const NodeInfo*> nodes() const;
  size_t node_count() const { return index_.size(); }
  // Pods with required anti-affinity terms on live nodes: InterPodAffinity's PreFilter has
  // nothing to do without them (and without terms of the incoming pod).
  size_t pods_with_required_anti_affinity() const { return pods_with_required_anti_affinity_; }

  // Namespace labels, for namespaceSelector in pod (anti-)affinity terms. The model has no
  // Namespace objects; callers that know them register them here. A namespace never
  // registered does not exist as far as namespaceSelector resolution is concerned.
  void set_namespace_labels(std::string namespace_, model::StringMap labels);
  const model::StringMap* namespace_labels(std::string_view namespace_) const;
  const std::map<std::string, model::StringMap, std::less<>>& namespaces() const {
    return namespaces_;
  }

  // The cluster's DRA objects; set before any pod is added. Claims allocated in their status
  // count as allocated from then on.
  void set_dra(std::shared_ptr<const DraCluster> dra);
  const DraCluster* dra() const { return dra_.get(); }
  // What every allocated claim holds: the input's allocations and those of placed pods.
  const dra::AllocatedState& dra_allocated() const { return dra_allocated_; }
  // A claim's allocation ("namespace/name"): the one a placed pod made, else the claim's
  // status; null when it is not allocated.
  const dra::AllocationResult* claim_allocation(std::string_view claim) const;

  // The request's stop condition (its deadline passed, or the server abandoned it): the loops
  // that can grow with the input (the filter pass over the nodes, the device fit over the
  // copies, the DRA allocator's search) ask it as they go and stop early, leaving an answer
  // that the caller, seeing the same condition, throws away. Unset: never stops.
  void set_stop(std::function<bool()> stop) { stop_ = std::move(stop); }
  // The stop condition, remembered once true.
  bool stop_requested() const {
    if (!stopped_ && stop_ && stop_()) stopped_ = true;
    return stopped_;
  }
  const std::function<bool()>& stop_condition() const { return stop_; }
  // One step of work done on this snapshot: one node checked for one pod (the unit the loops
  // above count, and estimator::WorkClock turns into time).
  void step() const { ++work_steps_; }
  uint64_t work_steps() const { return work_steps_; }

  void fork();
  // Undo everything since the innermost fork(). Error when no fork is open.
  Status revert();
  // Keep everything since the innermost fork(). Error when no fork is open.
  Status commit();
  size_t fork_depth() const { return marks_.size(); }

 private:
  struct NodeAdded {};
  struct NodeRemoved {
    size_t slot;
  };
  struct PodAdded {
    size_t slot;
    Resource previous_requested;
  };
  struct PodRemoved {
    size_t slot;
    size_t position;
    PodInfoPtr pod;
    Resource previous_requested;
  };
  struct NamespaceSet {
    std::string name;
    std::optional<model::StringMap> previous;
  };
  using Change = std::variant<NodeAdded, NodeRemoved, PodAdded, PodRemoved, NamespaceSet>;

  size_t pods_with_required_anti_affinity_ = 0;

  NodeInfo* live_node(std::string_view name);
  void record(Change change);
  void undo(Change& change);
  void account_pod(NodeInfo& node, const PodInfo& pod, int sign);
  void account_claims(const PodInfo& pod, int sign);
  void maybe_compact();

  std::vector<std::unique_ptr<NodeInfo>> slots_;      // insertion order, tombstones included
  std::map<std::string, size_t, std::less<>> index_;  // live node name -> slot
  size_t tombstones_ = 0;
  std::map<std::string, model::StringMap, std::less<>> namespaces_;
  std::vector<Change> log_;
  std::vector<size_t> marks_;  // log size at each open fork
  std::shared_ptr<const DraCluster> dra_;
  dra::AllocatedState dra_allocated_;
  std::function<bool()> stop_;
  mutable bool stopped_ = false;
  mutable uint64_t work_steps_ = 0;
  // Claims allocated by placed pods: the allocation (owned by the pod) and how many placed
  // pods carry it.
  std::map<std::string, std::pair<const dra::AllocationResult*, int>, std::less<>> placed_claims_;
};

}  // namespace hamisim::planner::framework
