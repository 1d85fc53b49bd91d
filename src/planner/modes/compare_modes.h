#pragma once
// `plan --compare-modes` (issue #29; docs/dra.md, "Comparing the modes"): the same pending
// workload planned in HAMi's device-plugin mode and in its DRA mode, and how the plans differ.

#include <functional>

#include "planner/modes/dra_mode.h"
#include "planner/scaleup/planning.h"

namespace hamisim::planner::modes {

// Plans `input` with `planning` (device-plugin mode: the plan returned) and again in DRA mode
// (to_dra_mode, planned by the default scheduler's plugins alone, with the same options), and
// sets Plan::mode_comparison. Errors are those of either plan.
Result<scaleup::Plan> plan_comparing_modes(const scaleup::Planning& planning,
                                           const scaleup::PlanInput& input,
                                           const scaleup::PlannerOptions& options,
                                           std::function<void(size_t, size_t)> progress = {},
                                           std::function<bool()> cancelled = {});

// The comparison of `plan` (device-plugin mode) with `dra`, the plan of `converted`.
scaleup::ModeComparison compare_modes(const scaleup::Plan& plan, const scaleup::Plan& dra,
                                      const DraModeInput& converted);

}  // namespace hamisim::planner::modes
