#pragma once
// One place that turns the planner's configuration (device registry, device profiles, the
// scheduler configuration CA would load) into runnable plans, for `hamisim plan` and for
// `POST /v1/plan` alike. A Planning is immutable after create() and safe to share between
// threads; every plan() call gets its own caches and device stage.

#include <memory>
#include <optional>

#include "engine/engine.h"
#include "extender/extender_chain.h"
#include "extender/scheduler_config.h"
#include "planner/scaleup/plan.h"

namespace hamisim::planner::scaleup {

// `/v1/estimate` (spec §5.5): pods packed onto fresh copies of one template.
struct EstimateRequest {
  model::Node template_node;
  std::vector<model::Pod> pods;
  int64_t max_nodes = 0;  // 0: CA's default --max-nodes-per-scaleup (1000)
  // Pods every new node runs before the estimated ones (DaemonSets): they take resources and
  // devices on each copy.
  std::vector<model::Pod> existing_pods;
  // CA's --max-nodegroup-binpacking-duration for this estimate, measured in work
  // (estimator::WorkClock) unless `wall_clock`.
  std::chrono::nanoseconds max_duration = std::chrono::seconds(10);
  bool wall_clock = false;
  // Asked before each new node; true stops adding nodes and the estimate fails "cancelled:".
  std::function<bool()> cancelled;
};

struct EstimateResult {
  int64_t node_count = 0;
  std::vector<estimator::Placement> placements;
  std::vector<estimator::UnplacedPod> unplaced;
  std::vector<std::string> warnings;
};

class Planning {
 public:
  // With a scheduler configuration, its NodeResourcesFit args are used (CA-exp's
  // ignored-resource derivation) and its extenders decide device fit; without one, or when it
  // configures no extender, `engine` does (the one `serve` answers /filter-simulation with),
  // with every managed HAMi resource ignored by NodeResourcesFit (as HAMi's chart configures
  // it).
  static Result<std::shared_ptr<const Planning>> create(
      std::shared_ptr<const engine::Engine> engine,
      std::optional<extender::SchedulerConfig> scheduler_config);
  // The same over an engine of its own (`profiles` may be null).
  static Result<std::shared_ptr<const Planning>> create(
      std::shared_ptr<const device::DeviceRegistry> registry,
      std::shared_ptr<const profile::DeviceProfiles> profiles,
      std::optional<extender::SchedulerConfig> scheduler_config, fit::FitPolicy policy = {});

  // `cancelled`: see PlannerEnv::cancelled.
  Result<Plan> plan(const PlanInput& input, const PlannerOptions& options,
                    std::function<void(size_t, size_t)> progress = {},
                    std::function<bool()> cancelled = {}) const;
  // The same plan for an input handed over: its pods are defaulted in place (requests from
  // limits, as the API server stores them and as the planner reads every pod), and the plan's
  // snapshot shares its nodes and pods instead of copying them (35,000 pods of a 1,000-node
  // cluster were ~110 MB of copies). The caller must not change the input while a PodInfo of
  // the run may still read it.
  Result<Plan> plan(std::shared_ptr<PlanInput> input, const PlannerOptions& options,
                    std::function<void(size_t, size_t)> progress = {},
                    std::function<bool()> cancelled = {}) const;

  // Errors are internal failures of the estimation.
  Result<EstimateResult> estimate(const EstimateRequest& request) const;

  const device::DeviceRegistry& registry() const { return engine_->registry(); }
  const profile::DeviceProfiles& profiles() const { return engine_->profiles(); }
  bool uses_extenders() const { return chain_.has_value(); }

 private:
  Planning() = default;
  Result<Plan> run_plan(const PlanInput& input, std::shared_ptr<const PlanInput> shared,
                        const PlannerOptions& options, std::function<void(size_t, size_t)> progress,
                        std::function<bool()> cancelled) const;
  std::shared_ptr<const device::DeviceRegistry> registry_;  // the own engine's, when it has one
  std::shared_ptr<const engine::Engine> engine_;
  std::optional<extender::ExtenderChain> chain_;
  framework::NodeResourcesFitArgs fit_args_;
};

// The resource names NodeResourcesFit ignores when the in-process engine judges devices.
std::vector<std::string> managed_resource_names(const device::DeviceRegistry& registry);

}  // namespace hamisim::planner::scaleup
