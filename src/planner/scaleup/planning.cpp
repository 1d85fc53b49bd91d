#include "planner/scaleup/planning.h"

#include <algorithm>

#include "planner/scaleup/device_fitter.h"
#include "planner/scaleup/equivalence.h"
#include "profile/template_node.h"

namespace hamisim::planner::scaleup {

std::vector<std::string> managed_resource_names(const device::DeviceRegistry& registry) {
  std::vector<std::string> out;
  for (const auto& backend : registry.backends()) {
    for (std::string& name : backend->managed_resources()) {
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
    }
  }
  return out;
}

Result<std::shared_ptr<const Planning>> Planning::create(
    std::shared_ptr<const device::DeviceRegistry> registry,
    std::shared_ptr<const profile::DeviceProfiles> profiles,
    std::optional<extender::SchedulerConfig> scheduler_config, fit::FitPolicy policy) {
  auto own =
      std::make_shared<const engine::Engine>(*registry, std::move(profiles), std::move(policy));
  auto planning = create(std::move(own), std::move(scheduler_config));
  if (planning) std::const_pointer_cast<Planning>(*planning)->registry_ = std::move(registry);
  return planning;
}

Result<std::shared_ptr<const Planning>> Planning::create(
    std::shared_ptr<const engine::Engine> engine,
    std::optional<extender::SchedulerConfig> scheduler_config) {
  std::shared_ptr<Planning> p(new Planning());
  p->engine_ = std::move(engine);
  if (scheduler_config) {
    auto args = extender::effective_node_resources_fit(*scheduler_config);
    if (!args) return args.error();
    // The extender library keeps its own copy of the args type (it does not depend on the
    // framework); the fields are the same.
    p->fit_args_.ignored_resources = std::move(args->ignored_resources);
    p->fit_args_.ignored_resource_groups = std::move(args->ignored_resource_groups);
    if (!scheduler_config->extenders.empty()) {
      auto chain = extender::ExtenderChain::create(*scheduler_config);
      if (!chain) return chain.error();
      p->chain_.emplace(std::move(chain).value());
    }
  } else {
    p->fit_args_.ignored_resources = managed_resource_names(p->engine_->registry());
  }
  return std::shared_ptr<const Planning>(std::move(p));
}

Result<Plan> Planning::plan(const PlanInput& input, const PlannerOptions& options,
                            std::function<void(size_t, size_t)> progress,
                            std::function<bool()> cancelled) const {
  return run_plan(input, nullptr, options, std::move(progress), std::move(cancelled));
}

Result<Plan> Planning::plan(std::shared_ptr<PlanInput> input, const PlannerOptions& options,
                            std::function<void(size_t, size_t)> progress,
                            std::function<bool()> cancelled) const {
  if (!input) return make_error("internal: no input to plan");
  for (model::Pod& pod : input->pods) model::default_requests_from_limits(pod.spec);
  if (input->pending) {
    for (model::Pod& pod : *input->pending) model::default_requests_from_limits(pod.spec);
  }
  const PlanInput& in = *input;
  return run_plan(in, std::move(input), options, std::move(progress), std::move(cancelled));
}

Result<Plan> Planning::run_plan(const PlanInput& input, std::shared_ptr<const PlanInput> shared,
                                const PlannerOptions& options,
                                std::function<void(size_t, size_t)> progress,
                                std::function<bool()> cancelled) const {
  struct RunState {
    explicit RunState(const engine::Engine& engine) : cache(engine) {}
    DeviceCache cache;
    std::optional<InProcessDeviceStage> in_process;
    std::optional<ExtenderDeviceStage> extenders;
  };
  auto start = [&](const std::shared_ptr<RunState>& run, PlacedPods placed) {
    PlannerEnv env;
    env.cache = &run->cache;
    if (chain_) {
      env.devices = &run->extenders.emplace(*chain_, run->cache, placed);
    } else {
      env.devices = &run->in_process.emplace(run->cache, placed);
    }
    env.fit_args = fit_args_;
    env.cancelled = cancelled;
    env.shared_input = shared;
    return env;
  };
  // Issue #33: first the plan of a CA whose extender calls carry no SimulatedPods, then the
  // correct one, which compares itself with it.
  std::optional<Plan> unpatched;
  if (options.compare_unpatched_ca) {
    auto blind_run = std::make_shared<RunState>(*engine_);
    PlannerOptions blind_options = options;
    blind_options.compare_unpatched_ca = false;
    blind_options.keep_state_until_exit = false;
    Result<Plan> blind = make_plan(input, blind_options, start(blind_run, PlacedPods::kIgnored));
    if (!blind) return blind.error();
    unpatched = std::move(blind).value();
  }
  auto run = std::make_shared<RunState>(*engine_);
  PlannerEnv env = start(run, PlacedPods::kCounted);
  env.progress = std::move(progress);
  if (unpatched) env.unpatched_ca = &*unpatched;
  Result<Plan> plan = make_plan(input, options, env);
  if (options.keep_state_until_exit) keep_until_exit(std::move(run));
  return plan;
}

Result<EstimateResult> Planning::estimate(const EstimateRequest& request) const {
  DeviceCache cache(*engine_);
  std::optional<InProcessDeviceStage> in_process;
  std::optional<ExtenderDeviceStage> extenders;
  DeviceStage& stage = chain_ ? static_cast<DeviceStage&>(extenders.emplace(*chain_, cache))
                              : in_process.emplace(cache);
  framework::FilterPipeline pipeline = framework::FilterPipeline::make_default(fit_args_);
  DeviceAwareFitter fitter(pipeline, stage);
  framework::ClusterSnapshot snapshot;
  snapshot.set_stop(request.cancelled);
  estimator::SteadyClock steady;
  estimator::WorkClock work(snapshot);
  const estimator::Clock& clock =
      request.wall_clock ? static_cast<const estimator::Clock&>(steady) : work;
  estimator::StaticLimits limits;
  if (request.max_nodes > 0) limits.max_nodes_per_scaleup = request.max_nodes;
  limits.max_nodegroup_binpacking_duration = request.max_duration;
  limits.cancelled = request.cancelled;
  estimator::BinpackingEstimator est(fitter, clock, limits);

  estimator::EstimateInput in;
  std::vector<framework::PodInfoPtr> pods;
  pods.reserve(request.pods.size());
  for (const model::Pod& p : request.pods) pods.push_back(framework::PodInfo::make(p));
  for (auto& g : build_pod_groups(pods)) in.groups.push_back({std::move(g.pods)});
  in.template_node = request.template_node;
  in.template_pods = request.existing_pods;
  // Copies are named as CA names them: the group id from a CA template name, else the
  // template's own name.
  const std::string& name = request.template_node.metadata.name;
  in.group.id = profile::node_group_from_template_name(name).value_or(name);
  in.group.max_size = limits.max_nodes_per_scaleup;
  estimator::Estimate e = est.estimate(snapshot, in);
  if (e.internal_error) return make_error("internal: " + e.internal_error->message);
  if (request.cancelled && request.cancelled()) return make_error("cancelled: estimate abandoned");
  EstimateResult out;
  out.node_count = e.node_count;
  out.placements = std::move(e.placements);
  out.unplaced = std::move(e.unplaced);
  out.warnings = fitter.take_warnings();
  return out;
}

}  // namespace hamisim::planner::scaleup
