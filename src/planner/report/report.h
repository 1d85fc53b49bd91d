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
#include <vector>

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

// Where a report came from (the HTML report's footer, the JSON document's "provenance"): a
// shared report must be traceable to its inputs. Not part of the plan, which is the same for
// the same inputs.
struct Provenance {
  std::string version;  // hamisim's
  std::string time;     // when the report was made, RFC 3339 UTC
  struct Input {
    std::string flag;    // "--cluster"
    std::string path;    // as given
    std::string sha256;  // hex digest of its bytes (a directory: of its files); "" for stdin
  };
  std::vector<Input> inputs;
  std::string command;  // the command line, each argument shell-quoted where needed
};

std::string render_table(const scaleup::Plan& plan, const TableOptions& options = {});
// `provenance` null: the document's "provenance" is null (the what-if API has no files).
std::string render_json(const scaleup::Plan& plan, const Provenance* provenance = nullptr);
// `provenance` may be null (no footer details).
std::string render_html(const scaleup::Plan& plan, const Provenance* provenance = nullptr);

// The apiVersion and kind of render_json's document.
inline constexpr std::string_view kPlanApiVersion = "hamisim.io/v1";
inline constexpr std::string_view kPlanKind = "Plan";

}  // namespace hamisim::planner::report
