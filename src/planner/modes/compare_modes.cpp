#include "planner/modes/compare_modes.h"

#include <fmt/format.h>

namespace hamisim::planner::modes {
namespace {

using scaleup::PodOutcome;

bool placed(PodOutcome::State s) {
  return s == PodOutcome::State::kFitsExistingNode || s == PodOutcome::State::kTriggersScaleUp;
}

// Why a plan does not place `o`, in one line.
std::string why_not_placed(const PodOutcome& o) {
  if (!o.reason.empty()) return o.reason;
  if (o.group_reasons.empty()) return std::string(scaleup::to_string(o.state));
  const auto& [group, reason] = *o.group_reasons.begin();
  std::string out = "node group " + group + ": " + reason;
  if (o.group_reasons.size() > 1) {
    out += fmt::format(" (and {} more node groups)", o.group_reasons.size() - 1);
  }
  return out;
}

}  // namespace

scaleup::ModeComparison compare_modes(const scaleup::Plan& plan, const scaleup::Plan& dra,
                                      const DraModeInput& converted) {
  scaleup::ModeComparison c;
  c.decision = dra.decision;
  c.summary = dra.summary;
  c.scale_ups = dra.scale_ups;
  c.groups = scaleup::group_counts(plan, dra);
  c.nodes_converted = converted.nodes_converted;
  c.profiles_converted = converted.profiles_converted;
  c.pending_pods_converted = converted.pending_pods_converted;
  c.running_pods_converted = converted.running_pods_converted;
  c.not_modelled = converted.not_modelled;
  c.warnings = dra.warnings;

  std::map<std::string_view, const PodOutcome*> in_dra;
  for (const PodOutcome& o : dra.pods) in_dra.emplace(o.pod, &o);
  for (const PodOutcome& p : plan.pods) {
    scaleup::ModeComparison::PodDifference d;
    d.pod = p.pod;
    d.state = p.state;
    d.node = p.node;
    if (auto refused = converted.refused.find(p.pod); refused != converted.refused.end()) {
      d.why = "DRA mode: " + refused->second;
      c.pods.push_back(std::move(d));
      continue;
    }
    const auto it = in_dra.find(p.pod);
    if (it == in_dra.end()) continue;  // not pending in DRA mode; cannot happen
    const PodOutcome& o = *it->second;
    if (o.state == p.state && o.node == p.node) {
      ++c.same_outcome;
      continue;
    }
    d.dra_state = o.state;
    d.dra_node = o.node;
    if (!placed(o.state)) {
      d.why = "DRA mode: " + why_not_placed(o);
      if (auto u = converted.unconverted.find(p.pod); u != converted.unconverted.end()) {
        d.why += " (the webhook leaves " + u->second + ")";
      }
    }
    if (!placed(p.state)) {
      d.why +=
          (d.why.empty() ? "" : "; ") + std::string("device-plugin mode: ") + why_not_placed(p);
    }
    c.pods.push_back(std::move(d));
  }
  return c;
}

Result<scaleup::Plan> plan_comparing_modes(const scaleup::Planning& planning,
                                           const scaleup::PlanInput& input,
                                           const scaleup::PlannerOptions& options,
                                           std::function<void(size_t, size_t)> progress,
                                           std::function<bool()> cancelled) {
  auto converted = to_dra_mode(input, &planning.profiles(), planning.registry());
  if (!converted) return converted.error();
  // HAMi's DRA mode has no scheduler extender: no device registry, so nothing is ignored by
  // NodeResourcesFit and no HAMi device stage runs.
  auto dra_planning = scaleup::Planning::create(std::make_shared<const device::DeviceRegistry>(),
                                                converted->profiles, std::nullopt);
  if (!dra_planning) return dra_planning.error();
  scaleup::PlannerOptions dra_options = options;
  dra_options.compare_unpatched_ca = false;
  dra_options.keep_state_until_exit = false;
  auto dra = (*dra_planning)->plan(converted->input, dra_options, {}, cancelled);
  if (!dra) return make_error("DRA mode: " + dra.error().message);
  auto plan = planning.plan(input, options, std::move(progress), std::move(cancelled));
  if (!plan) return plan;
  plan->mode_comparison =
      std::make_shared<const scaleup::ModeComparison>(compare_modes(*plan, *dra, *converted));
  return plan;
}

}  // namespace hamisim::planner::modes
