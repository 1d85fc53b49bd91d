#pragma once
// Pod resource requests and node resources as kube-scheduler counts them.
//
// The effective request of a pod ("Effective Pod requests and limits" in the Kubernetes docs;
// component-helpers' resource.PodRequests) is, per resource:
//   max( sum of app containers + sum of restartable (sidecar) init containers,
//        max over init containers i of (request_i + sidecars declared before i) )
//   + pod overhead.
// A sidecar's own entry in the init max counts itself and the sidecars before it.
// Non-zero defaults (100m cpu / 200Mi memory for containers that request nothing) apply to
// scoring only; Filter uses the requests as written, so they are not modelled here.
//
// kube-scheduler then reduces the quantities to integers (framework.Resource): cpu in
// millicores (rounded up), everything else in whole units (rounded up). Only the scalar
// resources it tracks are kept: extended resources, hugepages-*, attachable-volumes-*, and
// names under kubernetes.io/; bare names it does not know (e.g. "foo") are dropped.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "model/objects.h"

namespace hamisim::planner::framework {

inline constexpr std::string_view kResourceCpu = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourceEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kResourcePods = "pods";

// v1helper.IsNativeResource: no domain, or a domain ending in kubernetes.io/.
bool is_native_resource(std::string_view name);
// v1helper.IsExtendedResourceName: not native, not "requests.*", and "requests.<name>" is a
// qualified name (so it has a valid DNS-subdomain prefix).
bool is_extended_resource_name(std::string_view name);
bool is_hugepage_resource_name(std::string_view name);
// schedutil.IsScalarResourceName: extended, hugepages-*, kubernetes.io/-prefixed, or
// attachable-volumes-*.
bool is_scalar_resource_name(std::string_view name);

// framework.Resource. Arithmetic saturates at the int64 limits instead of overflowing.
struct Resource {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t ephemeral_storage = 0;
  int64_t allowed_pod_number = 0;
  std::map<std::string, int64_t, std::less<>> scalar;  // sorted by name: deterministic order

  int64_t scalar_value(std::string_view name) const;

  // Resource.Add: sums a ResourceList into this (node allocatable, a pod's share of a node).
  void add(const model::ResourceList& list);
  // Adds / subtracts another Resource's cpu, memory, ephemeral storage and scalars (not the
  // pod number): NodeInfo's requested-resource bookkeeping.
  void add(const Resource& other);
  void subtract(const Resource& other);
  // Resource.SetMaxResource: each field becomes max(field, quantity), so negative requests
  // count as zero. This is how NodeResourcesFit's PreFilter reads the pod's request.
  void set_max(const model::ResourceList& list);

  friend bool operator==(const Resource&, const Resource&) = default;
};

// The pod's effective request per resource, as quantities (overhead included).
model::ResourceList pod_requests(const model::Pod& pod);
// Effective request reduced to framework.Resource with Add semantics (node bookkeeping).
Resource pod_resource(const model::Pod& pod);
// Effective request reduced with SetMaxResource semantics (NodeResourcesFit's PreFilter).
Resource pod_fit_request(const model::Pod& pod);
// framework.NewResource(node.status.allocatable).
Resource node_allocatable(const model::Node& node);

}  // namespace hamisim::planner::framework
