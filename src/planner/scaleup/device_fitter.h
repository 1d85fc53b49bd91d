#pragma once
// CA's SchedulePod / SchedulePodOnAnyNodeMatching with the extender stage (reference
// ca-scale-up.md §3.5, §3.6), the device stage standing in for the extenders:
// - no interest in the pod: the framework filters alone, first passing node in walk order;
// - otherwise every acceptable node that passes the framework filters is a candidate, the
//   device stage filters them, and the survivor earliest in walk order wins (CA does no
//   scoring here). The walk starts after the last match and wraps (LastIndexOrderMapping).
// A pod placed through the device stage is placed carrying the allocation annotations the
// stage returned, so later fits on that node count its devices.

#include "planner/estimator/binpacking.h"
#include "planner/framework/pipeline.h"
#include "planner/scaleup/device_stage.h"

namespace hamisim::planner::scaleup {

class DeviceAwareFitter final : public estimator::PodFitter {
 public:
  DeviceAwareFitter(const framework::FilterPipeline& pipeline, DeviceStage& devices)
      : pipeline_(pipeline), devices_(devices) {}

  estimator::FitResult fit_any(
      const framework::PodInfo& pod, const framework::ClusterSnapshot& s,
      const std::function<bool(const framework::NodeInfo&)>& acceptable) override;
  estimator::FitResult fit_on(const framework::PodInfo& pod, const framework::ClusterSnapshot& s,
                              std::string_view node) override;

  // Warnings from the device stage since the last call (ignorable extender failures, pods
  // whose allocation could not be read).
  std::vector<std::string> take_warnings() { return std::move(warnings_); }
  // Failures of the device stage as a whole (a non-ignorable extender failed) since the last
  // call, each message once: the pods they touched were judged "does not fit", as CA does.
  std::vector<std::string> take_failures() { return std::move(failures_); }

 private:
  // The fit before Reserve.
  estimator::FitResult find_any(const framework::PodInfo& pod, const framework::ClusterSnapshot& s,
                                const std::function<bool(const framework::NodeInfo&)>& acceptable);
  estimator::FitResult find_on(const framework::PodInfo& pod, const framework::ClusterSnapshot& s,
                               std::string_view node);
  // Runs the device stage over `candidates` (walk order) and picks the first survivor; `state`
  // is the pod's filter state, carried to Reserve.
  estimator::FitResult decide(const framework::PodInfo& pod,
                              const std::vector<const framework::NodeInfo*>& candidates,
                              const std::shared_ptr<const framework::PodFilterState>& state);
  // The device stage's verdicts, its warnings kept.
  Result<DeviceVerdicts> filter(const framework::PodInfo& pod,
                                std::span<const framework::NodeInfo* const> candidates);
  // The stage failed as a whole (e.g. a non-ignorable extender).
  estimator::FitResult failed(const Error& error);

  const framework::FilterPipeline& pipeline_;
  DeviceStage& devices_;
  size_t next_start_ = 0;
  std::vector<std::string> warnings_;
  std::vector<std::string> failures_;
};

// The pod with the allocation annotations added (a new PodInfo; the original is unchanged).
framework::PodInfoPtr with_allocations(const framework::PodInfo& pod,
                                       const Annotations& annotations);

}  // namespace hamisim::planner::scaleup
