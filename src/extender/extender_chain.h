#pragma once
// The extender stage of one pod's evaluation: Cluster Autoscaler's runExtenderFilters
// (reference ca-scale-up.md §3.7) with the information CA drops kept (spec §6.3).
//
// - Extenders run in configured order (CA-exp does not move ignorable ones last).
// - An extender is consulted only when it has a filterVerb and is interested in the pod.
// - Each extender sees the survivors of the previous one: the candidates it let through, in
//   candidate order, as the planner's own Node JSON (an extender cannot inject or edit nodes).
// - Survivors are the intersection by name with the candidates; names the extender made up are
//   dropped and reported as a warning.
// - An error of an ignorable extender keeps the candidates and records a warning; any other
//   error fails the evaluation: `extender "<urlPrefix>" filter failed: <error>`.
// - Fast path: no extender interested (or no candidates) means no call at all.
// - FailedNodes / FailedAndUnresolvableNodes reasons are kept per extender and per rejected
//   node (the unresolvable reason wins); `Allocations` are kept per surviving node so the
//   planner can send them back as `SimulatedPods`.

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/http_extender.h"
#include "extender/scheduler_config.h"
#include "model/objects.h"
#include "model/result.h"

namespace hamisim::extender {

// Why a candidate did not survive: the extender that filtered it out and what it said.
struct NodeRejection {
  size_t extender_index = 0;
  std::string extender;       // urlPrefix
  std::string reason;         // empty when the extender dropped the node without a reason
  bool unresolvable = false;  // reason came from FailedAndUnresolvableNodes
};

// One consulted extender.
struct ExtenderCall {
  size_t extender_index = 0;
  std::string extender;
  size_t candidates = 0;            // how many nodes it was sent
  std::vector<std::string> passed;  // survivors after it, candidate order
  std::map<std::string, std::string, std::less<>> failed_nodes;
  std::map<std::string, std::string, std::less<>> failed_and_unresolvable_nodes;
  std::map<std::string, Annotations, std::less<>> allocations;
  std::map<std::string, NodeDiagnostic, std::less<>> diagnostics;
  std::vector<std::string> unknown_nodes;    // returned names that were not candidates
  std::optional<std::string> ignored_error;  // ignorable extender failed; candidates kept
};

struct ChainWarning {
  size_t extender_index = 0;
  std::string extender;
  std::string message;
};

struct ChainOutcome {
  // False on the fast path: no extender was interested, or there were no candidates.
  bool consulted = false;
  std::vector<std::string> survivors;  // candidate names, candidate order
  std::map<std::string, NodeRejection, std::less<>> rejections;
  // Survivor -> the allocation annotations the extenders returned for it (later extenders'
  // keys overwrite earlier ones).
  std::map<std::string, Annotations, std::less<>> allocations;
  std::vector<ExtenderCall> calls;
  std::vector<ChainWarning> warnings;
};

class ExtenderChain {
 public:
  // One HttpExtender per configured extender, in config order. An extender that cannot be
  // built fails the whole chain: `couldn't create HTTP extender for "<urlPrefix>": ...`.
  static Result<ExtenderChain> create(const SchedulerConfig& config);
  explicit ExtenderChain(std::vector<std::unique_ptr<Extender>> extenders);
  ExtenderChain(ExtenderChain&&) noexcept = default;
  ExtenderChain& operator=(ExtenderChain&&) noexcept = default;

  size_t size() const { return extenders_.size(); }
  const Extender& extender(size_t i) const { return *extenders_[i]; }

  // CA's shouldRunExtenders: some extender has a filterVerb and is interested in the pod.
  bool interested(const model::Pod& pod) const;

  // Filters `candidates` (the nodes that passed the framework filters) for `pod`. `pod_json`
  // is the pod as sent to the extenders; `simulated_pods` the SimulatedPods extension.
  Result<ChainOutcome> filter(const model::Pod& pod, std::string_view pod_json,
                              std::span<const CandidateNode> candidates,
                              const SimulatedPods* simulated_pods = nullptr) const;

 private:
  std::vector<std::unique_ptr<Extender>> extenders_;
};

}  // namespace hamisim::extender
