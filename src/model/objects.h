#pragma once
// The subset of Kubernetes core/v1 objects hamisim reads. Field names follow the API
// (snake_case here); anything not listed is ignored when decoding.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/quantity.h"

namespace hamisim::model {

using StringMap = std::map<std::string, std::string, std::less<>>;
// Sorted by resource name so iteration (and every output built from it) is deterministic.
using ResourceList = std::map<std::string, Quantity, std::less<>>;

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
};

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  std::string creation_timestamp;  // RFC3339 text as received; empty when null
  std::optional<std::string> deletion_timestamp;
  StringMap labels;
  StringMap annotations;
  std::vector<OwnerReference> owner_references;
};

// An entry of a container's resources.claims: access to a claim of the pod (or to one request
// of it); it has no effect on allocation.
struct ContainerResourceClaim {
  std::string name;     // a PodResourceClaim's name
  std::string request;  // empty: every request of the claim
};

struct ResourceRequirements {
  ResourceList requests;
  ResourceList limits;
  std::vector<ContainerResourceClaim> claims;
};

struct ContainerPort {
  int32_t container_port = 0;
  int32_t host_port = 0;
  std::string protocol = "TCP";
  std::string host_ip;
};

struct Container {
  std::string name;
  std::string image;
  ResourceRequirements resources;
  std::vector<ContainerPort> ports;
  // "Always" on an init container marks a restartable sidecar.
  std::optional<std::string> restart_policy;
  bool privileged = false;  // securityContext.privileged
};

struct Toleration {
  std::string key;
  std::string op;  // "Equal" (default when empty) or "Exists"
  std::string value;
  std::string effect;  // empty = all effects
  std::optional<int64_t> toleration_seconds;
};

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
};

struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
};

struct LabelSelector {
  StringMap match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
};

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
};

struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
};

struct NodeAffinity {
  std::optional<NodeSelector> required;
  std::vector<PreferredSchedulingTerm> preferred;
};

struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;
  std::vector<std::string> namespaces;
  std::optional<LabelSelector> namespace_selector;
  std::string topology_key;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
};

struct PodAffinity {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
};

struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;
};

struct TopologySpreadConstraint {
  int32_t max_skew = 0;
  std::string topology_key;
  std::string when_unsatisfiable;  // DoNotSchedule or ScheduleAnyway
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  std::vector<std::string> match_label_keys;
  std::string node_affinity_policy;  // Honor (default) or Ignore
  std::string node_taints_policy;    // Ignore (default) or Honor
};

// An entry of spec.resourceClaims: a ResourceClaim by name, or one made from a
// ResourceClaimTemplate (its name is then in status.resourceClaimStatuses). The decoder
// checks that the name is a unique DNS label and that exactly one source is set.
struct PodResourceClaim {
  std::string name;
  std::optional<std::string> resource_claim_name;
  std::optional<std::string> resource_claim_template_name;
};

struct PodSpec {
  std::string node_name;
  std::string scheduler_name;
  std::optional<std::string> runtime_class_name;
  std::string priority_class_name;
  std::optional<int32_t> priority;
  std::vector<Container> init_containers;
  std::vector<Container> containers;
  StringMap node_selector;
  std::optional<Affinity> affinity;
  std::vector<Toleration> tolerations;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  ResourceList overhead;
  bool host_network = false;
  std::string scheduling_group_pod_group_name;  // spec.schedulingGroup.podGroupName
  std::vector<PodResourceClaim> resource_claims;
};

struct ContainerStateTerminated {
  int32_t exit_code = 0;
  std::string reason;
};

struct ContainerStatus {
  std::string name;
  std::optional<ContainerStateTerminated> terminated;  // state.terminated
};

// The claim generated for a template reference of spec.resourceClaims, by the pod claim's
// name. No resource_claim_name: the controller chose not to create one (the claim is skipped).
struct PodResourceClaimStatus {
  std::string name;
  std::optional<std::string> resource_claim_name;
};

struct PodStatus {
  std::string phase;  // Pending, Running, Succeeded, Failed, Unknown
  std::vector<ContainerStatus> init_container_statuses;
  std::vector<PodResourceClaimStatus> resource_claim_statuses;
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
};

struct NodeCondition {
  std::string type;
  std::string status;
};

struct NodeSpec {
  bool unschedulable = false;
  std::vector<Taint> taints;
  std::string provider_id;
};

struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;
  std::vector<NodeCondition> conditions;
};

struct Node {
  ObjectMeta metadata;
  NodeSpec spec;
  NodeStatus status;
};

struct ResourceQuotaSpec {
  ResourceList hard;
};

struct ResourceQuotaStatus {
  ResourceList hard;
  ResourceList used;
};

struct ResourceQuota {
  ObjectMeta metadata;
  ResourceQuotaSpec spec;
  ResourceQuotaStatus status;
};

// Convenience lookups used all over the scheduler code.
const std::string* find_annotation(const ObjectMeta& meta, std::string_view key);
const std::string* find_label(const ObjectMeta& meta, std::string_view key);

// Whether the pod names ResourceClaims (spec.resourceClaims), the claims kube-scheduler's
// DynamicResources plugin allocates; a pod without skips that plugin. Extended resources that
// DRA serves (KEP-5004) are requests, not claims, and do not count here.
bool has_resource_claims(const Pod& pod);

// The API server's defaulting of container resources (core/v1 SetDefaults_Pod): a resource a
// container limits but does not request is requested at its limit, in containers and init
// containers. Pods read from the API server already are; hand-written what-if pods may not be.
void default_requests_from_limits(PodSpec& spec);
// Whether default_requests_from_limits would change the spec (a limit without its request).
bool needs_default_requests(const PodSpec& spec);

}  // namespace hamisim::model
