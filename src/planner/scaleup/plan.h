#pragma once
// The scale-up planner (spec §6, reference ca-scale-up.md §4): given a cluster snapshot,
// pending pods and node groups, which group Cluster Autoscaler should grow, by how many
// nodes, where each pod would land (with its device allocation), and why every other group
// and pod was not chosen.
//
// The steps are CA's (§6.2): usage of existing nodes; filter-out-schedulable; pods no new
// node can help (device ResourceQuota, invalid pods); equivalence groups; valid node groups;
// per-group feasibility on the template; binpacking estimate; expander; caps; balancing.
// Everything CA would randomize is made deterministic (group order, template names,
// expander ties through --seed), and every reason CA drops is kept.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/objects.h"
#include "model/result.h"
#include "planner/estimator/binpacking.h"
#include "planner/framework/dra_cluster.h"
#include "planner/framework/plugins/node_resources_fit.h"
#include "planner/nodegroups/node_groups.h"
#include "planner/scaleup/device_stage.h"

namespace hamisim::planner::scaleup {

// CA's knobs (§6.1) with CA's defaults.
struct PlannerOptions {
  std::string expander = "least-waste";
  // The priority expander's config text (CA ConfigMap `priorities` value); nullopt: use the
  // node groups' `priority` fields.
  std::optional<std::string> priority_config;
  int64_t max_nodes_total = 0;  // 0 = no limit
  int64_t max_nodes_per_scaleup = 1000;
  std::chrono::nanoseconds max_nodegroup_binpacking_duration = std::chrono::seconds(10);
  std::chrono::nanoseconds max_binpacking_time = std::chrono::minutes(5);
  // How the two durations above are measured. False: in work (estimator::WorkClock), so the
  // plan is the same on any machine under any load. True: on the wall clock, as CA does (a
  // caller that names a duration asks for this).
  bool binpacking_wall_clock = false;
  bool balance_similar_node_groups = false;
  bool fastpath_binpacking = false;
  int32_t expendable_pods_priority_cutoff = -10;
  double memory_difference_ratio = 0.015;
  double max_allocatable_difference_ratio = 0.05;
  double max_free_difference_ratio = 0.05;
  uint64_t seed = 0;
  // Also plan as a Cluster Autoscaler whose extender calls carry no SimulatedPods would (its
  // device stage sees every node empty) and set Plan::unpatched_ca (issue #33).
  bool compare_unpatched_ca = false;
  // Never free the run's state (snapshot, caches, stages): for a process that exits right
  // after the plan. Freeing a 1,000-node plan's hundreds of MB of small objects took a fifth
  // of its time. Never set in a long-running process.
  bool keep_state_until_exit = false;
};

// Keeps `state` alive, and never destroys it, until the process exits (see
// keep_state_until_exit). It stays reachable, so leak checkers do not report it.
void keep_until_exit(std::shared_ptr<const void> state);

struct PlanInput {
  std::vector<model::Node> nodes;
  std::vector<model::Pod> pods;  // every pod of the snapshot
  std::vector<model::ResourceQuota> quotas;
  // What-if pods (--pods); nullopt: the snapshot's pods with no spec.nodeName are pending.
  std::optional<std::vector<model::Pod>> pending;
  nodegroups::NodeGroups node_groups;
  // The cluster's DRA objects (ResourceSlices, DeviceClasses, ResourceClaims and templates);
  // null without any.
  std::shared_ptr<const framework::DraCluster> dra;
};

// What happened to one pending pod.
struct PodOutcome {
  enum class State {
    kFitsExistingNode,  // filter-out-schedulable placed it; no scale-up needed for it
    kTriggersScaleUp,   // placed on a new node of the chosen group
    kAwaitsEvaluation,  // a group could take it, but the chosen option does not
    kNoScaleUpHelps,    // no node group's template can take it
    kBlocked,           // something no new node fixes (quota, invalid pod)
    kIgnored,           // expendable (priority below the cutoff), or a DaemonSet pod
  };
  std::string pod;  // namespace/name
  // The pod's controller as "<kind>/<name>" (its controller owner reference, else its first
  // one); empty for a bare pod. Reports group pods by it.
  std::string owner;
  State state = State::kNoScaleUpHelps;
  std::string node;                                             // where it landed, if placed
  std::map<std::string, std::string, std::less<>> allocations;  // device allocation annotations
  std::string reason;                                           // kBlocked / kIgnored / summary
  // kNoScaleUpHelps / kAwaitsEvaluation: why each node group's template rejects it.
  std::map<std::string, std::string, std::less<>> group_reasons;
};
std::string_view to_string(PodOutcome::State state);

// The evaluation of one node group.
struct GroupEvaluation {
  std::string name;
  int64_t min_size = 0;
  int64_t max_size = 0;
  int64_t target_size = 0;
  int64_t members = 0;  // member nodes in the snapshot
  std::optional<nodegroups::GroupTemplate::Source> template_source;
  std::string template_node;  // template name; empty without a template
  std::string sample_node;    // warm: the member the template came from
  std::string device_source;  // where the template's devices came from (annotation/profile/...)
  std::string device_profile;
  std::string skip_reason;  // set: the group was not considered (max size reached, no template)
  // Exemplars (pod keys) that fit an empty template, and why the others do not.
  std::vector<std::string> schedulable_pods;
  std::map<std::string, std::string, std::less<>> rejected_pods;
  // For the rejected pods whose devices do not fit: hamisim's account with numbers
  // (scaleup/device_detail.h), next to HAMi's reason in rejected_pods.
  std::map<std::string, std::string, std::less<>> rejected_details;
  // The binpacking estimate (only for groups with schedulable pods).
  std::optional<int64_t> estimated_nodes;
  std::vector<std::string> estimated_pods;
  std::vector<estimator::UnplacedPod> unplaced;  // pods the estimate could not place, and why
  std::vector<std::string> similar_groups;
  bool option = false;        // an expansion option was made
  bool chosen = false;        // the expander picked it
  std::string expander_note;  // e.g. the least-waste score
};

// A device a new node publishes under DRA, with what the claims placed on it consume.
struct DraDeviceUse {
  std::string driver;
  std::string pool;
  std::string device;
  bool shareable = false;  // allowMultipleAllocations
  struct Capacity {
    std::string name;
    model::Quantity consumed;  // summed over the shares on the device
    model::Quantity total;
  };
  std::vector<Capacity> capacity;   // every capacity of the device, by name
  std::vector<std::string> claims;  // namespace/name of the claims with a result on it
};

struct PlannedNode {
  std::string name;  // the estimator's template copy name
  std::string group;
  std::vector<std::string> pods;  // placed, in placement order
  int64_t cpu_requested_milli = 0;
  int64_t cpu_allocatable_milli = 0;
  int64_t memory_requested = 0;  // bytes
  int64_t memory_allocatable = 0;
  std::vector<DeviceUse> devices;  // empty when the template describes no devices
  // Under DRA: every device of the node's own ResourceSlices (slices by name, devices in
  // slice order). Empty when it publishes none.
  std::vector<DraDeviceUse> dra_devices;
};

struct ScaleUp {
  std::string group;
  int64_t current_size = 0;
  int64_t new_size = 0;
  int64_t delta() const { return new_size - current_size; }
};

struct UnpatchedCaPlan;
struct ModeComparison;

struct Plan {
  enum class Decision { kNoScaleUpNeeded, kScaleUp, kNoScaleUpPossible };
  Decision decision = Decision::kNoScaleUpNeeded;
  std::string summary;                  // one sentence
  std::vector<ScaleUp> scale_ups;       // the chosen group first, then balanced similar groups
  std::vector<GroupEvaluation> groups;  // node-groups file order
  std::vector<PodOutcome> pods;         // pending pods, in the order they were considered
  std::vector<PlannedNode> new_nodes;   // the chosen group's estimated nodes
  std::vector<std::string> warnings;    // expander, extender and input warnings
  // Non-ignorable extender failures (each message once). CA counts the pods they touched as
  // not fitting, so the decision may be "no scale-up" for want of an answer; the summary says
  // so and `hamisim plan` exits kExitExtenderFailed.
  std::vector<std::string> extender_failures;
  // Counts of the input, for the report header.
  int64_t cluster_nodes = 0;
  int64_t cluster_pods = 0;
  std::string device_stage;  // "in-process" or "extenders: <urls>"
  std::string expander;      // the expander chain used (--expander)
  // With PlannerOptions::compare_unpatched_ca: what a CA that does not send SimulatedPods
  // would decide instead, and what that leaves pending. Null otherwise.
  std::shared_ptr<const UnpatchedCaPlan> unpatched_ca;
  // With `plan --compare-modes`: the same input planned in HAMi's DRA mode, and how the two
  // plans differ (planner/modes). Null otherwise.
  std::shared_ptr<const ModeComparison> mode_comparison;
};
std::string_view to_string(Plan::Decision decision);

// One node group's node counts in a plan and in another plan of the same input.
struct GroupCounts {
  std::string name;
  std::optional<int64_t> estimated_nodes;  // this plan's estimate (null: no estimate)
  std::optional<int64_t> other_estimated_nodes;
  int64_t new_nodes = 0;  // nodes this plan adds to the group
  int64_t other_new_nodes = 0;
};
// Every group of `plan` (node-groups file order) next to `other`'s.
std::vector<GroupCounts> group_counts(const Plan& plan, const Plan& other);

// `hamisim plan`'s exit code when a plan was made but a non-ignorable extender failed
// (docs/plan.md): 0 is a plan to trust, 1 an internal failure, 2 bad input.
inline constexpr int kExitExtenderFailed = 3;

// The same input planned as a Cluster Autoscaler whose extender calls carry no SimulatedPods
// plans it (issue #33; docs/ca-side.md): the extender sees every node, existing or a template
// copy of an estimate, without the pods on it, so device memory and cores never run out and
// only CPU, memory, pod count and unignored resources bound its packing. Set next to the
// correct plan it is compared with.
struct UnpatchedCaPlan {
  Plan::Decision decision = Plan::Decision::kNoScaleUpNeeded;
  std::string summary;
  std::vector<ScaleUp> scale_ups;
  // Every node group, in node-groups file order: the estimate and scale-up of the correct plan,
  // and as `other_` those of such a CA.
  std::vector<GroupCounts> groups;
  // Pods the correct plan places (on an existing node or a new one) that stay pending after
  // such a CA's scale-up: the pending pods no existing node takes, packed with devices counted
  // onto the nodes that CA adds, as the binpacking estimator packs them. In the correct plan's
  // pod order.
  struct PendingPod {
    std::string pod;
    std::string reason;
  };
  std::vector<PendingPod> left_pending;
};

// The same input planned in HAMi's DRA mode (`plan --compare-modes`; docs/dra.md, "Comparing
// the modes"): pods converted as HAMi-DRA's webhook converts them, devices published as HAMi's
// k8s-dra-driver publishes them, placed by the default scheduler's DRA allocator.
struct ModeComparison {
  // The DRA-mode plan's decision.
  Plan::Decision decision = Plan::Decision::kNoScaleUpNeeded;
  std::string summary;
  std::vector<ScaleUp> scale_ups;
  std::vector<GroupCounts> groups;  // `other_`: DRA mode's
  // A pending pod whose outcome differs: placed in one mode only, or on different nodes.
  struct PodDifference {
    std::string pod;
    PodOutcome::State state = PodOutcome::State::kNoScaleUpHelps;  // device-plugin mode
    std::string node;                                              // where it lands, if placed
    std::optional<PodOutcome::State> dra_state;  // null: the webhook refuses the pod
    std::string dra_node;
    std::string why;  // why the mode that does not place it does not (empty: both place it)
  };
  std::vector<PodDifference> pods;  // in this plan's pod order
  int64_t same_outcome = 0;         // pending pods with the same state and node in both modes
  // What was converted.
  int64_t nodes_converted = 0;         // nodes whose NVIDIA registration became a ResourceSlice
  int64_t profiles_converted = 0;      // device profiles given a DRA form
  int64_t pending_pods_converted = 0;  // pending pods given claims
  int64_t running_pods_converted = 0;  // running pods whose devices became allocated claims
  // What DRA mode does not model, as this input shows it (each with the count it concerns),
  // and what the conversion could not carry over.
  std::vector<std::string> not_modelled;
  std::vector<std::string> warnings;  // the DRA-mode plan's own warnings
};

// Everything the planner needs besides the input. The device stage decides HAMi device fit
// (in process or through the configured extenders); the cache reads device descriptions and
// allocations locally (device quota usage, the device usage picture of new nodes).
struct PlannerEnv {
  DeviceStage* devices = nullptr;            // required
  DeviceCache* cache = nullptr;              // required
  framework::NodeResourcesFitArgs fit_args;  // NodeResourcesFit's ignored resources
  const estimator::Clock* clock = nullptr;   // null: the steady clock
  // Reports progress (groups evaluated so far, total); may be empty.
  std::function<void(size_t, size_t)> progress;
  // Asked between pods and between node groups (and before each new node of an estimate);
  // true ends the plan with an error starting "cancelled:". May be empty.
  std::function<bool()> cancelled;
  // The plan of a CA that does not send SimulatedPods for this input (made with a device stage
  // that ignores placed pods): when set, the plan made is the correct one and carries the
  // comparison in Plan::unpatched_ca.
  const Plan* unpatched_ca = nullptr;
  // Set when the caller handed the input over (Planning::plan taking a shared_ptr): the very
  // object make_plan plans, its pods defaulted already. The snapshot then shares its nodes and
  // pods (each keeps it alive) instead of copying them.
  std::shared_ptr<const PlanInput> shared_input;
};

// Errors are input errors (an invalid expander chain or priority config) or internal ones;
// the message says which.
Result<Plan> make_plan(const PlanInput& input, const PlannerOptions& options,
                       const PlannerEnv& env);

}  // namespace hamisim::planner::scaleup
