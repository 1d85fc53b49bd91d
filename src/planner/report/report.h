#pragma once
// The three outputs of `hamisim plan` (spec §6.5), each a pure function of the Plan:
// - render_table: for a person on a terminal; the decision first, then warnings, node groups,
//   pending pods and the packing of every new node down to per-device usage;
// - render_json: the stable machine schema documented in docs/plan-json.md
//   (apiVersion hamisim.io/v1, kind Plan);
// - render_html: one self-contained page (inline CSS and SVG, nothing fetched) with a
//   device-usage picture per new node.
// Every string of the plan comes from input (pod names, extender reasons, annotations), so each
// renderer neutralizes it for its medium: control characters never reach the terminal, HTML
// is escaped, JSON is Go-escaped.

#include <string>
#include <string_view>

#include "planner/scaleup/plan.h"

namespace hamisim::planner::report {

struct TableOptions {
  // ANSI colours (decision, chosen group, pod states, warnings); the CLI turns this on only
  // when stdout is a terminal.
  bool color = false;
  // Characters of the memory bar in the per-device lines.
  int bar_width = 20;
  // Every pod and every new node on its own, and lists in full. Without it pods of one owner
  // and outcome are one row, identically packed nodes one entry, and lists show 5 names.
  bool verbose = false;
};

std::string render_table(const scaleup::Plan& plan, const TableOptions& options = {});
std::string render_json(const scaleup::Plan& plan);
std::string render_html(const scaleup::Plan& plan);

// The apiVersion and kind of render_json's document.
inline constexpr std::string_view kPlanApiVersion = "hamisim.io/v1";
inline constexpr std::string_view kPlanKind = "Plan";

}  // namespace hamisim::planner::report
