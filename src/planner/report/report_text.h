#pragma once
// Text the three plan renderers share (render_table.cpp, render_json.cpp, render_html.cpp):
// input made printable, the number formats a person reads, and the words for a group's state
// and template source. Private to hamisim_planner_report.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "planner/scaleup/plan.h"

namespace hamisim::planner::report {

using scaleup::DeviceUse;
using scaleup::GroupEvaluation;
using scaleup::Plan;
using scaleup::PlannedNode;
using scaleup::PodOutcome;
using scaleup::ScaleUp;
using scaleup::UnpatchedCaPlan;

// Invalid UTF-8 as U+FFFD, control characters as visible escapes (\n, \t, \u001B...).
std::string printable(std::string_view s);
// "1 pod", "3 pods".
std::string plural(int64_t n, std::string_view one, std::string_view many);
// Millicores as cores: 3500 -> "3.5".
std::string format_cores(int64_t milli);
// Bytes in the largest binary unit that keeps the value at least 1: "12.5 GiB".
std::string format_bytes(int64_t bytes);
// A DRA capacity for people: a memory-like one (its name ends in "memory") in binary units,
// any other as its quantity text.
std::string format_capacity(std::string_view name, const model::Quantity& q);
// "75 / 100", "60 GiB / 80 GiB".
std::string capacity_usage(const scaleup::DraDeviceUse::Capacity& c);
// "ml/a, ml/b, ml/c +4 more": at most `shown` names.
std::string claims_text(const std::vector<std::string>& claims, size_t shown);
// Share of `total` in [0, 1]; 0 without a total.
double fraction(int64_t used, int64_t total);
// "warm", "cold", or "none" without a template.
std::string_view template_source_word(std::optional<nodegroups::GroupTemplate::Source> s);
// "chosen", "skipped", "option", "no option", "rejects all" or "not needed".
std::string_view group_status(const GroupEvaluation& g);

}  // namespace hamisim::planner::report
