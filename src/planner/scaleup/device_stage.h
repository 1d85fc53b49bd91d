#pragma once
// The device stage of the planner: after the framework filters, which candidate nodes can
// take a pod's HAMi devices. Two implementations:
// - InProcessDeviceStage asks the simulation engine (engine::Engine), the same code
//   `/filter-simulation` runs, with the usage of every pod already on a candidate (real pods
//   from the snapshot and pods the planner placed) counted from their allocation annotations;
// - ExtenderDeviceStage calls the configured scheduler extenders as a patched CA does
//   (spec §6.3), sending the pods placed on each candidate as `SimulatedPods` so an extender
//   that understands them (hamisim's /filter-simulation) counts their usage.
// Both keep every rejection reason, and hand back the allocation annotations of the node
// chosen so the placed pod carries them (later fits on that node see its usage).
// Either can also judge as a Cluster Autoscaler whose extender calls carry no SimulatedPods
// does (PlacedPods::kIgnored, issue #33): every candidate is then an empty node to it.

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/engine.h"
#include "extender/extender_chain.h"
#include "model/result.h"
#include "model/string_hash.h"
#include "planner/framework/snapshot.h"

namespace hamisim::planner::scaleup {

using Annotations = std::map<std::string, std::string, std::less<>>;

// Whether a device stage counts the pods already on a candidate. kIgnored is what an extender
// asked without SimulatedPods sees of every node, real or template copy: no pod at all (the
// Cluster Autoscaler build of `docs/running-with-ca.md` before it implements docs/ca-side.md).
enum class PlacedPods { kCounted, kIgnored };

struct DeviceVerdicts {
  // Per candidate, in candidate order: empty when it survived, else why not.
  std::vector<std::string> rejections;
  // Per candidate: the allocation annotations for a survivor.
  std::vector<Annotations> allocations;
  std::vector<std::string> warnings;  // e.g. an ignorable extender failed
  bool survived(size_t i) const { return rejections[i].empty(); }
};

class DeviceStage {
 public:
  virtual ~DeviceStage() = default;
  // False: the stage has nothing to say about this pod (no device request / no interested
  // extender): every candidate passes and no call is made (CA's fast path).
  virtual bool interested(const framework::PodInfo& pod) const = 0;
  // An error fails the evaluation for every candidate (a non-ignorable extender failed).
  virtual Result<DeviceVerdicts> filter(const framework::PodInfo& pod,
                                        std::span<const framework::NodeInfo* const> candidates) = 0;
  // True when a candidate's verdict depends on that candidate alone: the fitter may then ask
  // about one candidate at a time, in walk order, and stop at the first survivor (the same
  // decision with fewer fits). False for extenders: CA sends them every candidate in one call.
  virtual bool judges_each_node_alone() const { return false; }
  // "in-process" or "extenders: <url>, <url>".
  virtual std::string description() const = 0;
  // The name rejections are reported under ("HAMi" or "ExtenderFilter").
  virtual std::string_view plugin_name() const = 0;
};

// Decodes and caches what the device code needs about nodes and pods of one planner run.
// Node descriptions are cached by node name: within one run a name always denotes the same
// node (template copies of one group are identical).
class DeviceCache {
 public:
  explicit DeviceCache(const engine::Engine& engine) : engine_(engine) {}
  // The engine's description of the node.
  const std::shared_ptr<const fit::DescriptionResult>& described(const model::Node& node);
  const fit::DescriptionResult& description(const model::Node& node) { return *described(node); }
  // The pod's allocation from its annotations; an undecodable one counts as nothing (the
  // live pod manager would not have admitted it either) and is remembered as a warning.
  const fit::PodAllocation& allocation(const framework::PodInfoPtr& pod);
  // What the device stage knows about a node with its current pods.
  struct NodeState {
    fit::NodeUsage usage;  // every pod on the node counted
    // Pods this usage rejected, by the id of what the fit reads of them (see
    // InProcessDeviceStage), with the reason: the same pod against the same usage and
    // description gets the same answer, and the planner asks about full nodes again and again.
    std::vector<std::pair<uint32_t, std::string>> rejections;
  };
  // Valid until the next call for a node of the same name. Cached per node name with the pods
  // it counts: the planner asks about the same nodes for every pending pod
  // (filter-out-schedulable, each estimate), and rebuilding a usage costs one add_pod_usage
  // per pod on the node; when pods were only appended since (binpacking), just those are
  // added. Any change of the pods forgets the rejections.
  NodeState& state(const framework::NodeInfo& node, const fit::DeviceDescription& description);
  const fit::NodeUsage& usage(const framework::NodeInfo& node,
                              const fit::DeviceDescription& description) {
    return state(node, description).usage;
  }
  const engine::Engine& engine() const { return engine_; }
  std::vector<std::string> take_warnings() { return std::move(warnings_); }

  // What is cached between begin_scope() and end_scope() is forgotten at end_scope(): an
  // estimate's template copies and the pods it placed are gone once it reverts, and their
  // entries (a description, a usage and an allocation each) held tens of MB in a 1,000-node
  // plan. Forgetting is always safe: an entry asked for again is made again.
  void begin_scope() { scoped_ = true; }
  void end_scope();

 private:
  const engine::Engine& engine_;
  model::StringHashMap<std::shared_ptr<const fit::DescriptionResult>> nodes_;
  // By PodInfo::serial(), which no other pod ever gets: the cache does not keep the pods
  // alive, so the pods an estimation places are freed when it reverts (holding them kept a
  // copy of every pod placed in every estimate until the end of the plan).
  std::unordered_map<uint64_t, fit::PodAllocation> pods_;
  struct CachedState {
    // The serials of the pods counted, in the node's order.
    std::vector<uint64_t> pods;
    NodeState state;
  };
  model::StringHashMap<CachedState> states_;  // references stay valid as it grows
  std::vector<std::string> warnings_;
  // Entries made since begin_scope(): keys of nodes_, states_ and pods_.
  bool scoped_ = false;
  std::vector<std::string> scoped_nodes_;
  std::vector<std::string> scoped_states_;
  std::vector<uint64_t> scoped_pods_;
};

class InProcessDeviceStage final : public DeviceStage {
 public:
  explicit InProcessDeviceStage(DeviceCache& cache, PlacedPods placed = PlacedPods::kCounted)
      : cache_(cache), placed_(placed) {}
  bool interested(const framework::PodInfo& pod) const override;
  Result<DeviceVerdicts> filter(const framework::PodInfo& pod,
                                std::span<const framework::NodeInfo* const> candidates) override;
  std::string description() const override { return "in-process"; }
  std::string_view plugin_name() const override { return "HAMi"; }
  bool judges_each_node_alone() const override { return true; }

 private:
  // What the fit reads of a pod, prepared once per pod: every estimate asks about the same
  // pending pods again (a 5,000-pod plan prepared 49,000 of them, a tenth of its instructions
  // with the device requests read for interested()).
  struct Prepared {
    std::optional<fit::PreparedPod> pod;
    std::string error;
    // Pods that read alike to the fit (namespace, annotations, containers) share an id.
    uint32_t fit_id = 0;
  };
  const Prepared& prepared(const framework::PodInfo& pod);

  // kIgnored: a node as an empty node (its rejections cached as DeviceCache::state's are).
  DeviceCache::NodeState& empty_state(const framework::NodeInfo& node,
                                      const fit::DeviceDescription& description);

  DeviceCache& cache_;
  PlacedPods placed_;
  model::StringHashMap<DeviceCache::NodeState> empty_states_;
  // By PodInfo::serial().
  std::unordered_map<uint64_t, Prepared> prepared_;
  mutable std::unordered_map<uint64_t, bool> interested_;
  std::map<std::string, uint32_t, std::less<>> fit_ids_;
};

class ExtenderDeviceStage final : public DeviceStage {
 public:
  // `cache` tells which pods on a candidate hold devices: they go out as SimulatedPods
  // (unless `placed` is kIgnored: then SimulatedPods are never sent).
  ExtenderDeviceStage(const extender::ExtenderChain& chain, DeviceCache& cache,
                      PlacedPods placed = PlacedPods::kCounted)
      : chain_(chain), cache_(cache), placed_(placed) {}
  bool interested(const framework::PodInfo& pod) const override;
  Result<DeviceVerdicts> filter(const framework::PodInfo& pod,
                                std::span<const framework::NodeInfo* const> candidates) override;
  std::string description() const override;
  std::string_view plugin_name() const override { return "ExtenderFilter"; }

 private:
  const std::string& pod_json(const framework::PodInfoPtr& pod);
  const std::string& node_json(const model::Node& node);

  const extender::ExtenderChain& chain_;
  DeviceCache& cache_;
  PlacedPods placed_;
  std::map<const framework::PodInfo*, std::pair<framework::PodInfoPtr, std::string>> pod_json_;
  std::map<std::string, std::string, std::less<>> node_json_;
};

// One device of a node with the usage of the pods on it, for reports.
struct DeviceUse {
  std::string id;
  std::string type;
  int64_t used_memory = 0;  // MiB
  int64_t total_memory = 0;
  int64_t used_cores = 0;  // percent of the device
  int64_t total_cores = 0;
  int64_t used_slots = 0;  // pods sharing the device
  int64_t total_slots = 0;
};

// The device usage picture of a node: every device of its description with the usage of the
// pods on it. Empty when the node describes no devices.
std::vector<DeviceUse> describe_devices(DeviceCache& cache, const framework::NodeInfo& node);

}  // namespace hamisim::planner::scaleup
