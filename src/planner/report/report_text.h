#pragma once
// Text the three plan renderers share (render_table.cpp, render_json.cpp, render_html.cpp):
// input made printable, the number formats a person reads, and the words for a group's state
// and template source. Private to hamisim_planner_report.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// ---- Aggregates: what a report shows first, so it reads the same at 2 nodes and at 500. ----

// Pending pods per state, in the states' declaration order, states with no pod left out.
std::vector<std::pair<PodOutcome::State, int64_t>> state_counts(const Plan& plan);

// Pending pods with one owner, one state and one explanation (reason and per-group reasons):
// the rows of the grouped pod list. Pods in plan order; rows in the order of their first pod.
struct PodRow {
  std::string owner;  // "" for bare pods
  PodOutcome::State state = PodOutcome::State::kNoScaleUpHelps;
  const PodOutcome* first = nullptr;  // reason and group_reasons are the first pod's
  std::vector<const PodOutcome*> pods;
};
std::vector<PodRow> pod_rows(const Plan& plan);

// New nodes packed identically (group, requests, devices and their use, pod count): one
// picture stands for all of them. In the order of their first node.
struct PackingGroup {
  const PlannedNode* first = nullptr;
  std::vector<const PlannedNode*> nodes;
};
std::vector<PackingGroup> packing_groups(const Plan& plan);

// A group's most common rejection (the reason and how many exemplar pods give it); nullopt
// when it rejects none.
std::optional<std::pair<std::string, int64_t>> dominant_rejection(const GroupEvaluation& g);

// One line per node group for a summary: what happened to it and why, in numbers.
std::string group_line(const GroupEvaluation& g);

// Names joined by ", ", each run of three or more that share a stem (up to the last '-', '/'
// or '.', at least 8 characters: a pod's owner, a node's template) written once:
// "ml/web-7d9f-{a1b2c, d3e4f, 9z8y7}, ml/db-0".
std::string compressed_names(const std::vector<std::string_view>& names);

// The group's rejected pods and why, HAMi's reason followed by hamisim's numbers where there are
// some: "HAMi: 2/2 CardInsufficientMemory (asks 1 NVIDIA GPU with 12000 MiB ...)".
std::vector<std::pair<std::string, std::string>> rejected_with_details(const GroupEvaluation& g);

// "a, b, c and 17 more": at most `shown` items.
std::string first_of(const std::vector<std::string>& items, size_t shown);

}  // namespace hamisim::planner::report
