#include "planner/report/report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string_view>
#include <vector>

#include "go/quote.h"
#include "model/json_writer.h"

namespace hamisim::planner::report {

using scaleup::DeviceUse;
using scaleup::GroupEvaluation;
using scaleup::Plan;
using scaleup::PlannedNode;
using scaleup::PodOutcome;
using scaleup::ScaleUp;
using scaleup::UnpatchedCaPlan;

namespace {

// ---------------------------------------------------------------------------------------------
// Text shared by the three renderers
// ---------------------------------------------------------------------------------------------

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Input text made safe to show: invalid UTF-8 becomes U+FFFD (as Go and the JSON writer do)
// and control characters become visible escapes. A reason coming back from an extender could
// otherwise move the cursor or recolour the terminal, or break an HTML table apart.
std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    uint32_t cp = 0;
    const size_t n = model::decode_utf8_rune(s, i, &cp);
    if (n == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
      if (cp == '\n' || cp == '\r' || cp == '\t') {
        out += go::short_escape(cp);
      } else {
        char buf[12];
        std::snprintf(buf, sizeof buf, "\\u%04" PRIX32, cp);
        out += buf;
      }
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

// East Asian wide and fullwidth runes take two terminal columns; everything else one. Only the
// main blocks: names in a plan are mostly DNS labels, this keeps the odd CJK reason aligned.
bool wide_rune(uint32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
         (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
         (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
         (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
         (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD);
}

// Terminal columns of text that went through printable().
size_t display_width(std::string_view s) {
  size_t width = 0;
  size_t i = 0;
  while (i < s.size()) {
    uint32_t cp = 0;
    const size_t n = model::decode_utf8_rune(s, i, &cp);
    width += (n != 0 && wide_rune(cp)) ? 2 : 1;
    i += n == 0 ? 1 : n;
  }
  return width;
}

std::string plural(int64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// Millicores as cores: 3500 -> "3.5", 8000 -> "8", 125 -> "0.125".
std::string format_cores(int64_t milli) {
  const bool negative = milli < 0;
  const uint64_t m = negative ? 0 - static_cast<uint64_t>(milli) : static_cast<uint64_t>(milli);
  std::string out = (negative ? "-" : "") + std::to_string(m / 1000);
  if (uint64_t frac = m % 1000; frac != 0) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%03" PRIu64, frac);
    std::string digits = buf;
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out;
}

// Bytes in the largest binary unit that keeps the value at least 1, one decimal: "12.5 GiB".
std::string format_bytes(int64_t bytes) {
  static constexpr std::string_view kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024 && bytes > -1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  size_t unit = 0;
  v /= 1024;
  while (unit + 1 < std::size(kUnits) && (v >= 1024 || v <= -1024)) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string num = buf;
  if (num.size() > 2 && num.ends_with(".0")) num.resize(num.size() - 2);
  return num + " " + std::string(kUnits[unit]);
}

// Share of `total` in [0, 1]; 0 when there is no total (a device without memory, a node whose
// template could not be simulated).
double fraction(int64_t used, int64_t total) {
  if (total <= 0 || used <= 0) return 0;
  return std::min(1.0, static_cast<double>(used) / static_cast<double>(total));
}

std::string percent_text(int64_t used, int64_t total) {
  if (total <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%",
                100.0 * static_cast<double>(used) / static_cast<double>(total));
  return buf;
}

std::string_view template_source_word(std::optional<nodegroups::GroupTemplate::Source> s) {
  if (!s) return "none";
  return *s == nodegroups::GroupTemplate::Source::kWarm ? "warm" : "cold";
}

// One word for where a group stands, shared by the table and the HTML.
std::string_view group_status(const GroupEvaluation& g) {
  if (g.chosen) return "chosen";
  if (!g.skip_reason.empty()) return "skipped";
  if (g.option) return "option";
  if (!g.schedulable_pods.empty()) return "no option";
  if (!g.rejected_pods.empty()) return "rejects all";
  return "not needed";
}

// ---------------------------------------------------------------------------------------------
// Table
// ---------------------------------------------------------------------------------------------

namespace ansi {
constexpr std::string_view kBold = "1";
constexpr std::string_view kDim = "2";
constexpr std::string_view kRed = "31";
constexpr std::string_view kGreen = "32";
constexpr std::string_view kYellow = "33";
constexpr std::string_view kCyan = "36";
constexpr std::string_view kBoldGreen = "1;32";
constexpr std::string_view kBoldRed = "1;31";
}  // namespace ansi

class Painter {
 public:
  explicit Painter(bool color) : color_(color) {}
  std::string operator()(std::string text, std::string_view style) const {
    if (!color_ || style.empty() || text.empty()) return text;
    return "\x1b[" + std::string(style) + "m" + text + "\x1b[0m";
  }

 private:
  bool color_;
};

std::string_view decision_style(Plan::Decision d) {
  switch (d) {
    case Plan::Decision::kScaleUp:
      return ansi::kBoldGreen;
    case Plan::Decision::kNoScaleUpNeeded:
      return ansi::kBold;
    case Plan::Decision::kNoScaleUpPossible:
      return ansi::kBoldRed;
  }
  return ansi::kBold;
}

std::string_view state_style(PodOutcome::State s) {
  switch (s) {
    case PodOutcome::State::kTriggersScaleUp:
      return ansi::kGreen;
    case PodOutcome::State::kFitsExistingNode:
      return ansi::kCyan;
    case PodOutcome::State::kAwaitsEvaluation:
      return ansi::kYellow;
    case PodOutcome::State::kNoScaleUpHelps:
    case PodOutcome::State::kBlocked:
      return ansi::kRed;
    case PodOutcome::State::kIgnored:
      return ansi::kDim;
  }
  return {};
}

struct Cell {
  std::string text;  // already printable()
  bool right = false;
  std::string_view style = {};
};

Cell left(std::string text, std::string_view style = {}) {
  return {std::move(text), false, style};
}
Cell right(std::string text) {
  return {std::move(text), true, {}};
}

// Rows of cells aligned into columns two spaces apart. Padding is computed on the plain text
// and the colour wrapped around it afterwards, so escapes never shift a column; the last cell
// of a row is not padded (no trailing blanks).
class Columns {
 public:
  Columns() = default;
  // Columns at least this wide, so separate tables can line up (e.g. detail labels).
  explicit Columns(std::vector<size_t> min_widths) : min_widths_(std::move(min_widths)) {}
  void add(std::vector<Cell> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }

  // The column where cell `c` starts in render()'s lines.
  size_t column_start(size_t c, std::string_view gap = "  ") const {
    const std::vector<size_t> width = widths();
    size_t start = 0;
    for (size_t i = 0; i < c && i < width.size(); ++i) start += width[i] + gap.size();
    return start;
  }

  std::vector<std::string> render(const Painter& paint, std::string_view gap = "  ") const {
    const std::vector<size_t> width = widths();
    std::vector<std::string> lines;
    lines.reserve(rows_.size());
    for (const auto& row : rows_) {
      std::string line;
      for (size_t c = 0; c < row.size(); ++c) {
        const Cell& cell = row[c];
        const size_t pad = width[c] - display_width(cell.text);
        const bool last = c + 1 == row.size();
        if (c > 0) line += gap;
        if (cell.right) line.append(pad, ' ');
        line += paint(cell.text, cell.style);
        if (!cell.right && !last) line.append(pad, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      lines.push_back(std::move(line));
    }
    return lines;
  }

 private:
  std::vector<size_t> widths() const {
    std::vector<size_t> width = min_widths_;
    for (const auto& row : rows_) {
      if (width.size() < row.size()) width.resize(row.size(), 0);
      for (size_t c = 0; c < row.size(); ++c) {
        width[c] = std::max(width[c], display_width(row[c].text));
      }
    }
    return width;
  }

  std::vector<size_t> min_widths_;
  std::vector<std::vector<Cell>> rows_;
};

// Width of the label column of every "label  value" block, so the blocks of one group or node
// line up with each other.
constexpr size_t kLabelWidth = 8;

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += printable(items[i]);
  }
  return out;
}

std::string text_bar(int64_t used, int64_t total, int width) {
  width = std::clamp(width, 1, 200);
  auto filled = static_cast<int>(std::lround(fraction(used, total) * width));
  // Rounding must not hide the difference between unused and lightly used, or between nearly
  // full and full.
  if (filled == 0 && used > 0 && total > 0) filled = 1;
  if (filled == width && used < total) filled = width - 1;
  return "[" + std::string(static_cast<size_t>(filled), '#') +
         std::string(static_cast<size_t>(width - filled), '.') + "]";
}

class TableWriter {
 public:
  TableWriter(const Plan& plan, const TableOptions& options)
      : plan_(plan), options_(options), paint_(options.color) {}

  std::string run() {
    decision();
    warnings();
    unpatched_ca();
    groups();
    pods();
    new_nodes();
    return std::move(out_);
  }

 private:
  void line(std::string_view text = {}) {
    out_ += text;
    out_ += '\n';
  }
  void lines(const std::vector<std::string>& ls, std::string_view indent) {
    for (const auto& l : ls) line(std::string(indent) + l);
  }
  void heading(std::string_view title, size_t count) {
    line();
    line(paint_(std::string(title) + " (" + std::to_string(count) + ")", ansi::kBold));
  }

  // The answer a person came for is the first line; the scale-ups follow as a small table.
  void decision() {
    const std::string summary = plan_.summary.empty()
                                    ? std::string(scaleup::to_string(plan_.decision))
                                    : printable(plan_.summary);
    line(paint_("Decision: " + summary, decision_style(plan_.decision)));
    if (!plan_.scale_ups.empty()) {
      Columns t;
      int64_t total = 0;
      for (const ScaleUp& s : plan_.scale_ups) {
        t.add({left(printable(s.group)), right(std::to_string(s.current_size)), left("->"),
               right(std::to_string(s.new_size)),
               left((s.delta() >= 0 ? "+" : "") + std::to_string(s.delta()), ansi::kGreen)});
        total += s.delta();
      }
      line();
      lines(t.render(paint_), "  ");
      if (plan_.scale_ups.size() > 1) {
        line("  total " + std::string(total >= 0 ? "+" : "") + plural(total, "node", "nodes"));
      }
    }
    line();
    line("Snapshot: " + plural(plan_.cluster_nodes, "node", "nodes") + ", " +
         plural(plan_.cluster_pods, "pod", "pods") +
         "; device stage: " + (plan_.device_stage.empty() ? "-" : printable(plan_.device_stage)));
  }

  void warnings() {
    if (plan_.warnings.empty()) return;
    heading("Warnings", plan_.warnings.size());
    for (const auto& w : plan_.warnings) line("  " + paint_("! " + printable(w), ansi::kYellow));
  }

  // Issue #33: what a CA that does not send SimulatedPods decides instead.
  void unpatched_ca() {
    if (!plan_.unpatched_ca) return;
    const UnpatchedCaPlan& u = *plan_.unpatched_ca;
    line();
    line(
        paint_("Compared with a Cluster Autoscaler that does not send SimulatedPods", ansi::kBold));
    line("  its decision: " + paint_(u.summary.empty() ? std::string(scaleup::to_string(u.decision))
                                                       : printable(u.summary),
                                     decision_style(u.decision)));
    auto nodes = [](const std::optional<int64_t>& n) {
      return n ? plural(*n, "node", "nodes") : std::string("-");
    };
    auto added = [](int64_t n) { return (n > 0 ? "+" : "") + std::to_string(n); };
    Columns t;
    t.add({left("node group"), left("estimate"), left("its estimate"), left("adds"),
           left("it adds")});
    for (const auto& g : u.groups) {
      const bool differs =
          g.estimated_nodes != g.unpatched_estimated_nodes || g.new_nodes != g.unpatched_new_nodes;
      t.add({left(printable(g.name)), left(nodes(g.estimated_nodes)),
             left(nodes(g.unpatched_estimated_nodes), differs ? ansi::kYellow : std::string_view{}),
             left(added(g.new_nodes)),
             left(added(g.unpatched_new_nodes), differs ? ansi::kYellow : std::string_view{})});
    }
    lines(t.render(paint_), "  ");
    if (u.left_pending.empty()) {
      line("  left pending by its decision: none");
      return;
    }
    line("  " + paint_("left pending by its decision: " +
                           plural(static_cast<int64_t>(u.left_pending.size()), "pod", "pods"),
                       ansi::kRed));
    Columns p;
    for (const auto& l : u.left_pending) {
      p.add({left(printable(l.pod)), left(printable(l.reason), ansi::kRed)});
    }
    lines(p.render(paint_), "    ");
  }

  // One header line per group (aligned across groups: name, sizes, status), then its details
  // as "label  value" lines under it.
  void groups() {
    heading("Node groups", plan_.groups.size());
    if (plan_.groups.empty()) {
      line("  none");
      return;
    }
    Columns headers;
    for (const GroupEvaluation& g : plan_.groups) {
      const std::string_view status = group_status(g);
      std::string_view style;
      if (g.chosen) style = ansi::kBoldGreen;
      if (status == "skipped" || status == "rejects all") style = ansi::kDim;
      headers.add({left((g.chosen ? "* " : "  ") + printable(g.name),
                        g.chosen ? ansi::kBoldGreen : std::string_view{}),
                   left("min"), right(std::to_string(g.min_size)), left("max"),
                   right(std::to_string(g.max_size)), left("target"),
                   right(std::to_string(g.target_size)), left("members"),
                   right(std::to_string(g.members)), left(std::string(status), style)});
    }
    const std::vector<std::string> header_lines = headers.render(paint_);
    for (size_t i = 0; i < plan_.groups.size(); ++i) {
      line("  " + header_lines[i]);
      group_details(plan_.groups[i]);
    }
  }

  void group_details(const GroupEvaluation& g) {
    Columns d({kLabelWidth});
    auto detail = [&](std::string label, std::string value, std::string_view style = {}) {
      d.add({left(std::move(label)), left(std::move(value), style)});
    };
    std::string tmpl(template_source_word(g.template_source));
    if (!g.template_node.empty()) tmpl += ", " + printable(g.template_node);
    if (!g.sample_node.empty()) tmpl += " (from node " + printable(g.sample_node) + ")";
    detail("template", tmpl);
    // A group without a template has no device description to speak of.
    if (!g.device_source.empty() || g.template_source) {
      detail("devices", g.device_source.empty() ? "-" : printable(g.device_source));
    }
    if (!g.device_profile.empty()) detail("profile", printable(g.device_profile));
    if (!g.skip_reason.empty()) detail("skipped", printable(g.skip_reason), ansi::kYellow);
    if (!g.schedulable_pods.empty()) detail("fits", join(g.schedulable_pods, ", "));
    if (g.estimated_nodes) {
      detail("estimate", plural(*g.estimated_nodes, "node", "nodes") + ", " +
                             plural(static_cast<int64_t>(g.estimated_pods.size()), "pod", "pods"));
    }
    if (!g.expander_note.empty()) detail("expander", printable(g.expander_note));
    if (!g.similar_groups.empty()) detail("similar", join(g.similar_groups, ", "));
    lines(d.render(paint_), "      ");
    // Pod-and-reason lists get their own aligned sub-table under a label.
    auto reasons = [&](std::string_view label,
                       const std::vector<std::pair<std::string, std::string>>& rows) {
      if (rows.empty()) return;
      Columns r({kLabelWidth});
      for (size_t i = 0; i < rows.size(); ++i) {
        r.add({left(i == 0 ? std::string(label) : std::string()), left(printable(rows[i].first)),
               left(printable(rows[i].second), ansi::kRed)});
      }
      lines(r.render(paint_), "      ");
    };
    reasons("rejects", {g.rejected_pods.begin(), g.rejected_pods.end()});
    std::vector<std::pair<std::string, std::string>> unplaced;
    for (const auto& u : g.unplaced) unplaced.emplace_back(u.pod, u.reason);
    reasons("unplaced", unplaced);
  }

  void pods() {
    heading("Pending pods", plan_.pods.size());
    if (plan_.pods.empty()) {
      line("  none");
      return;
    }
    Columns t;
    for (const PodOutcome& p : plan_.pods) {
      std::string where;
      if (!p.node.empty()) where = "on " + printable(p.node);
      std::string reason = printable(p.reason);
      if (!where.empty() && !reason.empty()) where += ": ";
      t.add({left(printable(p.pod)),
             left(std::string(scaleup::to_string(p.state)), state_style(p.state)),
             left(where + reason)});
    }
    const std::vector<std::string> rows = t.render(paint_);
    // Group reasons go under the reason column, indented one step, their group names aligned
    // among themselves.
    const std::string reason_indent(2 + t.column_start(2) + 2, ' ');
    for (size_t i = 0; i < rows.size(); ++i) {
      line("  " + rows[i]);
      const PodOutcome& p = plan_.pods[i];
      if (p.group_reasons.empty()) continue;
      Columns g;
      for (const auto& [group, why] : p.group_reasons) {
        g.add({left(printable(group) + ":"), left(printable(why), ansi::kRed)});
      }
      lines(g.render(paint_), reason_indent);
    }
  }

  void new_nodes() {
    if (plan_.new_nodes.empty()) return;
    heading("New nodes", plan_.new_nodes.size());
    for (const PlannedNode& n : plan_.new_nodes) {
      line("  " + paint_(printable(n.name), ansi::kBold) + "  (group " + printable(n.group) + ", " +
           plural(static_cast<int64_t>(n.pods.size()), "pod", "pods") + ")");
      Columns d({kLabelWidth});
      for (size_t i = 0; i < n.pods.size(); ++i) {
        d.add({left(i == 0 ? "pods" : ""), left(printable(n.pods[i]))});
      }
      if (n.pods.empty()) d.add({left("pods"), left("none")});
      d.add({left("cpu"), left(format_cores(n.cpu_requested_milli) + " / " +
                               format_cores(n.cpu_allocatable_milli) + " cores  " +
                               percent_text(n.cpu_requested_milli, n.cpu_allocatable_milli))});
      d.add({left("memory"),
             left(format_bytes(n.memory_requested) + " / " + format_bytes(n.memory_allocatable) +
                  "  " + percent_text(n.memory_requested, n.memory_allocatable))});
      if (n.devices.empty()) d.add({left("devices"), left("none described by the template")});
      lines(d.render(paint_), "      ");
      if (!n.devices.empty()) device_lines(n.devices);
    }
  }

  // "GPU-id  type  mem [bar] used/total MiB  cores used/total %  slots used/total", every
  // number right-aligned so a column of devices reads at a glance.
  void device_lines(const std::vector<DeviceUse>& devices) {
    Columns t;
    for (const DeviceUse& d : devices) {
      t.add({left(printable(d.id)), left(printable(d.type)), left("mem"),
             left(text_bar(d.used_memory, d.total_memory, options_.bar_width)),
             right(std::to_string(d.used_memory) + "/" + std::to_string(d.total_memory) + " MiB"),
             left("cores"),
             right(std::to_string(d.used_cores) + "/" + std::to_string(d.total_cores) + " %"),
             left("slots"),
             right(std::to_string(d.used_slots) + "/" + std::to_string(d.total_slots))});
    }
    lines(t.render(paint_), "      ");
  }

  const Plan& plan_;
  const TableOptions& options_;
  Painter paint_;
  std::string out_;
};

// ---------------------------------------------------------------------------------------------
// JSON (docs/plan-json.md)
// ---------------------------------------------------------------------------------------------

using model::JsonWriter;

void strings(JsonWriter& w, const std::vector<std::string>& items) {
  w.begin_array();
  for (const auto& s : items) w.string(s);
  w.end_array();
}

// std::map keeps its keys sorted by bytes, which is the order the schema promises.
void string_map(JsonWriter& w, const std::map<std::string, std::string, std::less<>>& m) {
  w.begin_object();
  for (const auto& [k, v] : m) w.key(k).string(v);
  w.end_object();
}

void json_group(JsonWriter& w, const GroupEvaluation& g) {
  w.begin_object();
  w.key("name").string(g.name);
  w.key("minSize").number(g.min_size);
  w.key("maxSize").number(g.max_size);
  w.key("targetSize").number(g.target_size);
  w.key("members").number(g.members);
  w.key("templateSource");
  if (g.template_source) {
    w.string(template_source_word(g.template_source));
  } else {
    w.null();
  }
  w.key("templateNode").string(g.template_node);
  w.key("sampleNode").string(g.sample_node);
  w.key("deviceSource").string(g.device_source);
  w.key("deviceProfile").string(g.device_profile);
  w.key("skipReason").string(g.skip_reason);
  w.key("schedulablePods");
  strings(w, g.schedulable_pods);
  w.key("rejectedPods");
  string_map(w, g.rejected_pods);
  w.key("estimatedNodes");
  if (g.estimated_nodes) {
    w.number(*g.estimated_nodes);
  } else {
    w.null();
  }
  w.key("estimatedPods");
  strings(w, g.estimated_pods);
  w.key("unplaced").begin_array();
  for (const auto& u : g.unplaced) {
    w.begin_object().key("pod").string(u.pod).key("reason").string(u.reason).end_object();
  }
  w.end_array();
  w.key("similarGroups");
  strings(w, g.similar_groups);
  w.key("option").boolean(g.option);
  w.key("chosen").boolean(g.chosen);
  w.key("expanderNote").string(g.expander_note);
  w.end_object();
}

void json_pod(JsonWriter& w, const PodOutcome& p) {
  w.begin_object();
  w.key("pod").string(p.pod);
  w.key("state").string(scaleup::to_string(p.state));
  w.key("node").string(p.node);
  w.key("allocations");
  string_map(w, p.allocations);
  w.key("reason").string(p.reason);
  w.key("groupReasons");
  string_map(w, p.group_reasons);
  w.end_object();
}

void json_scale_ups(JsonWriter& w, const std::vector<ScaleUp>& scale_ups) {
  w.begin_array();
  for (const ScaleUp& s : scale_ups) {
    w.begin_object();
    w.key("group").string(s.group);
    w.key("currentSize").number(s.current_size);
    w.key("newSize").number(s.new_size);
    w.key("delta").number(s.delta());
    w.end_object();
  }
  w.end_array();
}

void json_optional(JsonWriter& w, const std::optional<int64_t>& n) {
  if (n) {
    w.number(*n);
  } else {
    w.null();
  }
}

void json_unpatched_ca(JsonWriter& w, const UnpatchedCaPlan& u) {
  w.begin_object();
  w.key("decision").string(scaleup::to_string(u.decision));
  w.key("summary").string(u.summary);
  w.key("scaleUps");
  json_scale_ups(w, u.scale_ups);
  w.key("groups").begin_array();
  for (const auto& g : u.groups) {
    w.begin_object();
    w.key("name").string(g.name);
    w.key("estimatedNodes");
    json_optional(w, g.estimated_nodes);
    w.key("unpatchedEstimatedNodes");
    json_optional(w, g.unpatched_estimated_nodes);
    w.key("newNodes").number(g.new_nodes);
    w.key("unpatchedNewNodes").number(g.unpatched_new_nodes);
    w.end_object();
  }
  w.end_array();
  w.key("leftPending").begin_array();
  for (const auto& l : u.left_pending) {
    w.begin_object().key("pod").string(l.pod).key("reason").string(l.reason).end_object();
  }
  w.end_array();
  w.end_object();
}

void json_node(JsonWriter& w, const PlannedNode& n) {
  w.begin_object();
  w.key("name").string(n.name);
  w.key("group").string(n.group);
  w.key("pods");
  strings(w, n.pods);
  w.key("cpuRequestedMilli").number(n.cpu_requested_milli);
  w.key("cpuAllocatableMilli").number(n.cpu_allocatable_milli);
  w.key("memoryRequestedBytes").number(n.memory_requested);
  w.key("memoryAllocatableBytes").number(n.memory_allocatable);
  w.key("devices").begin_array();
  for (const DeviceUse& d : n.devices) {
    w.begin_object();
    w.key("id").string(d.id);
    w.key("type").string(d.type);
    w.key("usedMemoryMiB").number(d.used_memory);
    w.key("totalMemoryMiB").number(d.total_memory);
    w.key("usedCores").number(d.used_cores);
    w.key("totalCores").number(d.total_cores);
    w.key("usedSlots").number(d.used_slots);
    w.key("totalSlots").number(d.total_slots);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// ---------------------------------------------------------------------------------------------
// HTML
// ---------------------------------------------------------------------------------------------

// Text for HTML element content and quoted attribute values alike.
std::string html(std::string_view s) {
  const std::string text = printable(s);
  std::string out;
  out.reserve(text.size() + 16);
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Class names come only from the fixed words of to_string() and group_status(); spaces become
// dashes so "no option" is one class.
std::string css_class(std::string_view word) {
  std::string out(word);
  std::replace(out.begin(), out.end(), ' ', '-');
  return out;
}

constexpr std::string_view kStyle = R"css(
:root{--fg:#1f2328;--muted:#59636e;--bg:#fff;--card:#f6f8fa;--line:#d1d9e0;--track:#e3e8ee;
--mem:#2f6fde;--cores:#1a7f37;--ok:#1a7f37;--warn:#9a6700;--bad:#cf222e;--info:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;
--card:#151b23;--line:#3d444d;--track:#262c36;--mem:#4493f8;--cores:#3fb950;--ok:#3fb950;
--warn:#d29922;--bad:#f85149;--info:#4493f8}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1200px;padding:24px;font:14px/1.5 system-ui,-apple-system,
"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:28px 0 10px;
border-bottom:1px solid var(--line);padding-bottom:4px}h3{font-size:15px;margin:0 0 8px}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.decision{font-size:16px;padding:12px 16px;border-radius:8px;border-left:6px solid var(--info);
background:var(--card);margin:0 0 12px}
.decision[data-decision=scale-up]{border-color:var(--ok)}
.decision[data-decision=no-scale-up-possible]{border-color:var(--bad)}
.meta{color:var(--muted);margin:4px 0}
table{border-collapse:collapse;width:100%;margin:6px 0}
th,td{text-align:left;vertical-align:top;padding:6px 8px;border-bottom:1px solid var(--line)}
th{font-weight:600;color:var(--muted);font-size:12.5px}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.compact{width:auto}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;
border:1px solid currentColor;white-space:nowrap}
.scale-up,.chosen,.triggers-scale-up{color:var(--ok)}
.no-scale-up-possible,.no-scale-up-helps,.blocked,.rejects-all{color:var(--bad)}
.awaits-evaluation,.skipped,.option{color:var(--warn)}
.fits-existing-node,.no-scale-up-needed{color:var(--info)}
.ignored,.not-needed,.no-option{color:var(--muted)}
tr.chosen-row td{background:var(--card)}
ul.reasons{margin:4px 0 0;padding-left:18px;color:var(--muted)}
ul.warnings li{color:var(--warn)}
details summary{cursor:pointer;color:var(--muted)}
.nodes{display:grid;grid-template-columns:1fr;gap:16px}
.node{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px}
.node h3 small{font-weight:400;color:var(--muted)}
.res{display:grid;grid-template-columns:70px minmax(120px,360px) auto;gap:4px 12px;
align-items:center;margin-bottom:10px}
.meter{height:10px;background:var(--track);border-radius:5px;overflow:hidden}
.meter span{display:block;height:100%;background:var(--mem)}
svg.device text{font-size:10px;fill:var(--muted)}
svg.device .track{fill:var(--track)}svg.device .mem{fill:var(--mem)}
svg.device .cores{fill:var(--cores)}
.node table{width:auto}.node table td,.node table th{padding:4px 14px 4px 6px;white-space:nowrap}
.node ul.pods{margin:4px 0 0;padding-left:18px}
.alloc{color:var(--muted)}
footer{margin-top:32px;color:var(--muted);font-size:12px}
)css";

class HtmlWriter {
 public:
  explicit HtmlWriter(const Plan& plan) : plan_(plan) {}

  std::string run() {
    const std::string decision(scaleup::to_string(plan_.decision));
    out_ += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out_ += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out_ += "<title>hamisim plan: " + html(plan_.summary.empty() ? decision : plan_.summary) +
            "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
    header();
    warnings();
    unpatched_ca();
    groups();
    pods();
    new_nodes();
    out_ += "<footer>hamisim plan &middot; apiVersion " + std::string(kPlanApiVersion) +
            "</footer>\n</body>\n</html>\n";
    return std::move(out_);
  }

 private:
  void badge(std::string_view word) {
    out_ += "<span class=\"badge " + css_class(word) + "\">" + html(word) + "</span>";
  }

  void header() {
    const std::string_view decision = scaleup::to_string(plan_.decision);
    out_ += "<h1>Scale-up plan</h1>\n<p class=\"decision\" data-decision=\"" + css_class(decision) +
            "\">";
    badge(decision);
    out_ += " " + html(plan_.summary) + "</p>\n";
    if (!plan_.scale_ups.empty()) {
      out_ +=
          "<table class=\"compact\"><thead><tr><th>node group</th><th class=\"num\">current</th>"
          "<th class=\"num\">new</th><th class=\"num\">add</th></tr></thead><tbody>\n";
      for (const ScaleUp& s : plan_.scale_ups) {
        out_ += "<tr><td>" + html(s.group) + "</td><td class=\"num\">" +
                std::to_string(s.current_size) + "</td><td class=\"num\">" +
                std::to_string(s.new_size) + "</td><td class=\"num scale-up\">" +
                (s.delta() >= 0 ? "+" : "") + std::to_string(s.delta()) + "</td></tr>\n";
      }
      out_ += "</tbody></table>\n";
    }
    out_ += "<p class=\"meta\">Snapshot: " + plural(plan_.cluster_nodes, "node", "nodes") + ", " +
            plural(plan_.cluster_pods, "pod", "pods") + " &middot; device stage: <code>" +
            html(plan_.device_stage) + "</code></p>\n";
  }

  void warnings() {
    if (plan_.warnings.empty()) return;
    out_ += "<h2>Warnings</h2>\n<ul class=\"warnings\">\n";
    for (const auto& w : plan_.warnings) out_ += "<li>" + html(w) + "</li>\n";
    out_ += "</ul>\n";
  }

  // Issue #33: what a CA that does not send SimulatedPods decides instead.
  void unpatched_ca() {
    if (!plan_.unpatched_ca) return;
    const UnpatchedCaPlan& u = *plan_.unpatched_ca;
    const std::string_view decision = scaleup::to_string(u.decision);
    out_ +=
        "<h2 id=\"unpatched-ca\">Compared with a Cluster Autoscaler that does not send "
        "SimulatedPods</h2>\n<p class=\"decision\" data-decision=\"" +
        css_class(decision) + "\">its decision: ";
    badge(decision);
    out_ += " " + html(u.summary) + "</p>\n";
    auto nodes = [](const std::optional<int64_t>& n) {
      return n ? plural(*n, "node", "nodes") : std::string("-");
    };
    out_ +=
        "<table class=\"compact\"><thead><tr><th>node group</th><th>estimate</th>"
        "<th>its estimate</th><th class=\"num\">adds</th><th class=\"num\">it adds</th></tr>"
        "</thead><tbody>\n";
    for (const auto& g : u.groups) {
      out_ += "<tr><td>" + html(g.name) + "</td><td>" + nodes(g.estimated_nodes) + "</td><td>" +
              nodes(g.unpatched_estimated_nodes) + "</td><td class=\"num\">" +
              std::to_string(g.new_nodes) + "</td><td class=\"num\">" +
              std::to_string(g.unpatched_new_nodes) + "</td></tr>\n";
    }
    out_ += "</tbody></table>\n";
    if (u.left_pending.empty()) {
      out_ += "<p class=\"meta\">Left pending by its decision: none.</p>\n";
      return;
    }
    out_ += "<p>Left pending by its decision: " +
            plural(static_cast<int64_t>(u.left_pending.size()), "pod", "pods") + "</p>";
    std::vector<std::pair<std::string, std::string>> rows;
    for (const auto& l : u.left_pending) rows.emplace_back(l.pod, l.reason);
    pod_reason_list(rows);
    out_ += "\n";
  }

  void pod_reason_list(const std::vector<std::pair<std::string, std::string>>& rows) {
    out_ += "<ul class=\"reasons\">";
    for (const auto& [pod, why] : rows) {
      out_ += "<li><span class=\"mono\">" + html(pod) + "</span>: " + html(why) + "</li>";
    }
    out_ += "</ul>";
  }

  void groups() {
    out_ += "<h2>Node groups</h2>\n";
    if (plan_.groups.empty()) {
      out_ += "<p class=\"meta\">none</p>\n";
      return;
    }
    out_ +=
        "<table><thead><tr><th>node group</th><th class=\"num\">min</th><th class=\"num\">max"
        "</th><th class=\"num\">target</th><th class=\"num\">members</th><th>template</th>"
        "<th>devices</th><th>status</th><th>estimate</th><th>details</th></tr></thead><tbody>\n";
    for (const GroupEvaluation& g : plan_.groups) {
      const std::string_view status = group_status(g);
      out_ += g.chosen ? "<tr class=\"chosen-row\">" : "<tr>";
      out_ += "<td><strong>" + html(g.name) + "</strong></td>";
      for (int64_t v : {g.min_size, g.max_size, g.target_size, g.members}) {
        out_ += "<td class=\"num\">" + std::to_string(v) + "</td>";
      }
      out_ += "<td>" + std::string(template_source_word(g.template_source));
      if (!g.template_node.empty()) out_ += "<br><code>" + html(g.template_node) + "</code>";
      if (!g.sample_node.empty()) out_ += "<br>from <code>" + html(g.sample_node) + "</code>";
      out_ += "</td><td>" + (g.device_source.empty() ? std::string("-") : html(g.device_source));
      if (!g.device_profile.empty())
        out_ += "<br>profile <code>" + html(g.device_profile) + "</code>";
      out_ += "</td><td>";
      badge(status);
      out_ += "</td><td>";
      if (g.estimated_nodes) {
        out_ += plural(*g.estimated_nodes, "node", "nodes") + ", " +
                plural(static_cast<int64_t>(g.estimated_pods.size()), "pod", "pods");
      }
      out_ += "</td><td>";
      if (!g.skip_reason.empty())
        out_ += "<div class=\"skipped\">" + html(g.skip_reason) + "</div>";
      if (!g.schedulable_pods.empty()) {
        out_ += "<div>fits: ";
        for (size_t i = 0; i < g.schedulable_pods.size(); ++i) {
          out_ += (i ? ", " : "") + std::string("<span class=\"mono\">") +
                  html(g.schedulable_pods[i]) + "</span>";
        }
        out_ += "</div>";
      }
      if (!g.rejected_pods.empty()) {
        out_ +=
            "<details><summary>" +
            plural(static_cast<int64_t>(g.rejected_pods.size()), "pod rejected", "pods rejected") +
            "</summary>";
        pod_reason_list({g.rejected_pods.begin(), g.rejected_pods.end()});
        out_ += "</details>";
      }
      if (!g.unplaced.empty()) {
        std::vector<std::pair<std::string, std::string>> rows;
        for (const auto& u : g.unplaced) rows.emplace_back(u.pod, u.reason);
        out_ += "<details><summary>" +
                plural(static_cast<int64_t>(rows.size()), "pod not placed", "pods not placed") +
                "</summary>";
        pod_reason_list(rows);
        out_ += "</details>";
      }
      if (!g.expander_note.empty()) out_ += "<div>expander: " + html(g.expander_note) + "</div>";
      if (!g.similar_groups.empty()) {
        out_ += "<div>similar: ";
        for (size_t i = 0; i < g.similar_groups.size(); ++i) {
          out_ += (i ? ", " : "") + html(g.similar_groups[i]);
        }
        out_ += "</div>";
      }
      out_ += "</td></tr>\n";
    }
    out_ += "</tbody></table>\n";
  }

  void pods() {
    out_ += "<h2>Pending pods</h2>\n";
    if (plan_.pods.empty()) {
      out_ += "<p class=\"meta\">none</p>\n";
      return;
    }
    out_ +=
        "<table><thead><tr><th>pod</th><th>state</th><th>node</th><th>reason</th></tr></thead>"
        "<tbody>\n";
    for (const PodOutcome& p : plan_.pods) {
      out_ += "<tr><td class=\"mono\">" + html(p.pod) + "</td><td>";
      badge(scaleup::to_string(p.state));
      out_ += "</td><td class=\"mono\">" + html(p.node) + "</td><td>" + html(p.reason);
      if (!p.group_reasons.empty()) {
        pod_reason_list({p.group_reasons.begin(), p.group_reasons.end()});
      }
      out_ += "</td></tr>\n";
    }
    out_ += "</tbody></table>\n";
  }

  void meter(std::string_view label, int64_t used, int64_t total, const std::string& text) {
    char width[16];
    std::snprintf(width, sizeof width, "%.1f", 100.0 * fraction(used, total));
    out_ += "<span>" + std::string(label) +
            "</span><div class=\"meter\"><span style=\"width:" + width +
            "%\"></span></div><span class=\"num\">" + text + "</span>";
  }

  // One small SVG per device: a memory bar and a cores bar on the same scale.
  void device_svg(const DeviceUse& d) {
    constexpr double kBar = 170;
    char buf[512];
    std::snprintf(
        buf, sizeof buf,
        "<svg class=\"device\" width=\"210\" height=\"32\" viewBox=\"0 0 210 32\" role=\"img\">"
        "<text x=\"0\" y=\"11\">mem</text>"
        "<rect class=\"track\" x=\"38\" y=\"3\" width=\"%.0f\" height=\"10\" rx=\"3\"/>"
        "<rect class=\"mem\" x=\"38\" y=\"3\" width=\"%.1f\" height=\"10\" rx=\"3\"/>"
        "<text x=\"0\" y=\"27\">cores</text>"
        "<rect class=\"track\" x=\"38\" y=\"19\" width=\"%.0f\" height=\"10\" rx=\"3\"/>"
        "<rect class=\"cores\" x=\"38\" y=\"19\" width=\"%.1f\" height=\"10\" rx=\"3\"/>",
        kBar, kBar * fraction(d.used_memory, d.total_memory), kBar,
        kBar * fraction(d.used_cores, d.total_cores));
    out_ += buf;
    out_ += "<title>" + html(d.id) + ": memory " + std::to_string(d.used_memory) + " of " +
            std::to_string(d.total_memory) + " MiB, cores " + std::to_string(d.used_cores) +
            " of " + std::to_string(d.total_cores) + " %</title></svg>";
  }

  void new_nodes() {
    if (plan_.new_nodes.empty()) return;
    std::map<std::string_view, const PodOutcome*> outcome;
    for (const PodOutcome& p : plan_.pods) outcome.emplace(p.pod, &p);
    out_ += "<h2>New nodes</h2>\n<div class=\"nodes\">\n";
    for (const PlannedNode& n : plan_.new_nodes) {
      out_ += "<section class=\"node\"><h3><code>" + html(n.name) + "</code> <small>group " +
              html(n.group) + "</small></h3>\n<div class=\"res\">";
      meter("cpu", n.cpu_requested_milli, n.cpu_allocatable_milli,
            format_cores(n.cpu_requested_milli) + " / " + format_cores(n.cpu_allocatable_milli) +
                " cores");
      meter("memory", n.memory_requested, n.memory_allocatable,
            format_bytes(n.memory_requested) + " / " + format_bytes(n.memory_allocatable));
      out_ += "</div>\n";
      if (n.devices.empty()) {
        out_ += "<p class=\"meta\">No devices described by the template.</p>\n";
      } else {
        out_ +=
            "<table><thead><tr><th>device</th><th>type</th><th>usage</th><th class=\"num\">"
            "memory</th><th class=\"num\">cores</th><th class=\"num\">slots</th></tr></thead>"
            "<tbody>\n";
        for (const DeviceUse& d : n.devices) {
          out_ += "<tr><td class=\"mono\">" + html(d.id) + "</td><td>" + html(d.type) + "</td><td>";
          device_svg(d);
          out_ += "</td><td class=\"num\">" + std::to_string(d.used_memory) + " / " +
                  std::to_string(d.total_memory) + " MiB</td><td class=\"num\">" +
                  std::to_string(d.used_cores) + " / " + std::to_string(d.total_cores) +
                  " %</td><td class=\"num\">" + std::to_string(d.used_slots) + " / " +
                  std::to_string(d.total_slots) + "</td></tr>\n";
        }
        out_ += "</tbody></table>\n";
      }
      out_ += "<div>" + plural(static_cast<int64_t>(n.pods.size()), "pod", "pods") +
              "</div><ul class=\"pods\">";
      for (const std::string& pod : n.pods) {
        out_ += "<li><span class=\"mono\">" + html(pod) + "</span>";
        // The allocation says which device slice the pod got; folded, as the values are long.
        if (auto it = outcome.find(pod); it != outcome.end() && !it->second->allocations.empty()) {
          out_ += "<details><summary>allocation</summary><ul class=\"reasons\">";
          for (const auto& [k, v] : it->second->allocations) {
            out_ += "<li class=\"mono\">" + html(k) + ": " + html(v) + "</li>";
          }
          out_ += "</ul></details>";
        }
        out_ += "</li>";
      }
      out_ += "</ul></section>\n";
    }
    out_ += "</div>\n";
  }

  const Plan& plan_;
  std::string out_;
};

}  // namespace

std::string render_table(const Plan& plan, const TableOptions& options) {
  return TableWriter(plan, options).run();
}

std::string render_json(const Plan& plan) {
  JsonWriter w;
  w.begin_object();
  w.key("apiVersion").string(kPlanApiVersion);
  w.key("kind").string(kPlanKind);
  w.key("decision").string(scaleup::to_string(plan.decision));
  w.key("summary").string(plan.summary);
  w.key("scaleUps");
  json_scale_ups(w, plan.scale_ups);
  w.key("warnings");
  strings(w, plan.warnings);
  w.key("extenderFailed").boolean(!plan.extender_failures.empty());
  w.key("extenderFailures");
  strings(w, plan.extender_failures);
  w.key("clusterNodes").number(plan.cluster_nodes);
  w.key("clusterPods").number(plan.cluster_pods);
  w.key("deviceStage").string(plan.device_stage);
  w.key("groups").begin_array();
  for (const GroupEvaluation& g : plan.groups) json_group(w, g);
  w.end_array();
  w.key("pods").begin_array();
  for (const PodOutcome& p : plan.pods) json_pod(w, p);
  w.end_array();
  w.key("newNodes").begin_array();
  for (const PlannedNode& n : plan.new_nodes) json_node(w, n);
  w.end_array();
  w.key("unpatchedCa");
  if (plan.unpatched_ca) {
    json_unpatched_ca(w, *plan.unpatched_ca);
  } else {
    w.null();
  }
  w.end_object();
  std::string out = w.take();
  out += '\n';
  return out;
}

std::string render_html(const Plan& plan) {
  return HtmlWriter(plan).run();
}

}  // namespace hamisim::planner::report
