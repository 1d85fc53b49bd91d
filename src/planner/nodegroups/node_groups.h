#pragma once
// Node groups (spec §7.3): the groups the planner may grow, read from a NodeGroups YAML file,
// and the template node of each group (reference ca-scale-up.md §4.3): a warm group's
// template is its first good member, sanitized as CA does; a cold-zero group's template is
// built from the file's `template` plus its device profile.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/objects.h"
#include "model/result.h"

namespace hamisim::planner::nodegroups {

struct NodeGroupSpec {
  std::string name;  // the CA node group id
  int64_t min_size = 0;
  int64_t max_size = 0;
  std::optional<int64_t> target_size;  // default: the number of members in the snapshot
  model::StringMap members;            // label selector (matchLabels) of member nodes
  // The `template` node (metadata.labels/annotations, spec.taints/unschedulable,
  // status.capacity/allocatable); nullopt when the file gives none.
  std::optional<model::Node> template_node;
  std::string device_profile;  // empty: none
  std::optional<double> price;
  std::optional<int64_t> priority;
};

struct NodeGroups {
  std::vector<NodeGroupSpec> groups;  // file order
  const NodeGroupSpec* find(std::string_view name) const;
};

// Parses and validates a NodeGroups document (apiVersion hamisim.io/v1, kind NodeGroups).
// Errors name the source, the group and the field, then the line:
//   "groups.yaml: nodeGroups[1] (gpu-a100).maxSize: must be >= minSize (2), got 1 (line 7)".
// Rules: names non-empty, unique, and valid as CA ids (no whitespace); 0 <= minSize <=
// maxSize; targetSize within [0, maxSize] when given; `members` values are strings; `price`
// >= 0; unknown keys are errors (a typo must not silently change a plan).
// Where the spec is silent:
// - maxSize is required, minSize defaults to 0; names also exclude control characters;
// - a key given twice in one mapping is an error (yaml-cpp would keep only the first);
// - one YAML document (empty ones, such as a trailing `---`, are ignored);
// - scalars are read as text whatever their quoting (`zone: 1` is the label value "1",
//   `maxSize: "3"` is 3); integers follow model/yaml_number.h ("010" is an error naming
//   its two readings; "0x10" is not an integer); booleans are the YAML 1.2 core ones
//   (true/True/TRUE, false/False/FALSE); price must be finite;
// - an explicit empty deviceProfile is an error; whether the profile exists is not checked
//   here (the caller holds the DeviceProfiles);
// - `template` keys match exactly (no case folding, unlike the JSON decoder): metadata
//   {labels, annotations}, spec {taints, unschedulable}, status {capacity, allocatable};
//   taints need a non-empty key and an effect NoSchedule, PreferNoSchedule or NoExecute;
//   quantities must parse and not be negative. `template: null` means no template.
Result<NodeGroups> parse_node_groups(std::string_view yaml, std::string_view source);
// Reads `path` as model::read_document does (a ConfigMap's node-groups.yaml key, a List of
// one NodeGroups, `-` for stdin).
Result<NodeGroups> load_node_groups(const std::string& path);

// Whether a node belongs to the group: every `members` label matches. A group with no
// `members` has no members.
bool is_member(const NodeGroupSpec& group, const model::Node& node);

// CA's good template candidate (§4.3): Ready condition True, not spec.unschedulable, not
// tainted ToBeDeletedByClusterAutoscaler (any effect). The first Ready condition decides; no
// Ready condition is not ready. (CA also wants the readiness transition to be more than a
// minute old; snapshots carry no transition time we read, so that rule is not applied.)
bool is_good_template_candidate(const model::Node& node);

// CA's pod_util.IsDaemonSetPod: the controller owner (the first owner reference marked
// controller) has kind DaemonSet, or the pod carries cluster-autoscaler.kubernetes.io/
// daemonset-pod=true.
bool is_daemonset_pod(const model::Pod& pod);

// CA's taints.SanitizeTaints: drops ToBeDeletedByClusterAutoscaler,
// DeletionCandidateOfClusterAutoscaler, the node-condition taints (node.kubernetes.io/...:
// not-ready, unreachable, unschedulable, memory-pressure, disk-pressure, pid-pressure,
// network-unavailable, out-of-disk) and startup/status/ignore taints (key prefixes
// "startup-taint.cluster-autoscaler.kubernetes.io/", "status-taint.cluster-autoscaler.
// kubernetes.io/", "ignore-taint.cluster-autoscaler.kubernetes.io/").
std::vector<model::Taint> sanitize_taints(const std::vector<model::Taint>& taints);

struct GroupTemplate {
  enum class Source { kWarm, kCold };
  Source source = Source::kCold;
  std::string sample_node;  // kWarm: the member it was built from
  model::Node node;         // named "template-node-for-<group>-<index>"
  // Pods a fresh node would run (kWarm: the sample's DaemonSet and mirror pods that are not
  // being deleted, renamed "<pod>-<index>", nodeName set to the template). Always empty for
  // kCold.
  std::vector<model::Pod> pods;
};

struct TemplateInput {
  const NodeGroupSpec* group = nullptr;
  // Members of the group in the snapshot, in snapshot order, and every pod of the snapshot
  // (only those bound to the chosen sample are looked at).
  std::vector<const model::Node*> members;
  const std::vector<model::Pod>* pods = nullptr;
  int64_t index = 0;  // the <n> of the template name; deterministic (CA uses a random int)
};

// The group's template:
// - warm: the first good member (else, as CA's last resort, the first member), sanitized:
//   new name and uid (the name), label kubernetes.io/hostname = the new name, taints
//   sanitized, label cluster-autoscaler.kubernetes.io/template-node=true; annotations,
//   labels, capacity and allocatable kept (that is how the HAMi registration reaches the
//   extender). If the group names a device profile, annotation hamisim.io/device-profile is
//   set to it so the profile (and its onMismatch rules) describes the devices;
// - cold: no member; built from `template` (labels, annotations, taints, capacity and
//   allocatable; allocatable defaults to capacity and vice versa), with the same name,
//   hostname and template labels, and hamisim.io/device-profile when the group names one;
//   Ready condition True.
// nullopt when the group has neither a member nor a `template` (CA: "no template"); a device
// profile alone is not a template.
// Details where the spec is silent:
// - the template's uid is its name (CA draws a random one); a kept pod's uid is
//   "<template name>/<namespace>/<original pod name>", deterministic and unique per template;
// - warm: the sample is deep-copied as CA does, so conditions, spec.unschedulable (CA clears
//   it only with --scale-from-unschedulable, not modelled) and spec.providerID stay; null
//   entries of `members` are skipped; a sample with an empty name keeps no pods;
// - a DaemonSet pod is CA's pod_util.IsDaemonSetPod: its controller owner (the first owner
//   reference marked controller) has kind DaemonSet, or it carries the annotation
//   cluster-autoscaler.kubernetes.io/daemonset-pod=true; a mirror pod has the annotation
//   kubernetes.io/config.mirror. Pods of DaemonSets not running on the sample (CA's
//   --force-ds) are not added: the snapshot has no DaemonSet objects;
// - cold: allocatable and capacity are defaulted per resource (a resource missing from one
//   list is copied from the other; given values are never overwritten); conditions are
//   exactly [Ready=True]; spec.unschedulable is kept as the template gives it;
// - on both, the name, hostname, template label and profile annotation overwrite any value
//   the sample or the file gave; without a device profile an existing
//   hamisim.io/device-profile annotation is left as it is.
std::optional<GroupTemplate> build_template(const TemplateInput& in);

}  // namespace hamisim::planner::nodegroups
