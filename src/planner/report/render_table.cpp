#include "planner/report/report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/json_writer.h"
#include "planner/report/report_text.h"

namespace hamisim::planner::report {

namespace {

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

std::string percent_text(int64_t used, int64_t total) {
  if (total <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%",
                100.0 * static_cast<double>(used) / static_cast<double>(total));
  return buf;
}

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
    mode_comparison();
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
         "; device stage: " + (plan_.device_stage.empty() ? "-" : printable(plan_.device_stage)) +
         (plan_.expander.empty() ? "" : "; expander: " + printable(plan_.expander)));
    // The pending pods in one line: how many ended in each state.
    std::string counts;
    for (const auto& [state, n] : state_counts(plan_)) {
      counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " +
                paint_(std::string(scaleup::to_string(state)), state_style(state));
    }
    if (!counts.empty()) line("Pending pods: " + counts);
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
    group_counts(u.groups, "its estimate", "it adds");
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

  // Each node group's estimate and new nodes in this plan and in the other plan's columns.
  void group_counts(const std::vector<scaleup::GroupCounts>& groups,
                    std::string_view other_estimate, std::string_view other_adds) {
    auto nodes = [](const std::optional<int64_t>& n) {
      return n ? plural(*n, "node", "nodes") : std::string("-");
    };
    auto added = [](int64_t n) { return (n > 0 ? "+" : "") + std::to_string(n); };
    Columns t;
    t.add({left("node group"), left("estimate"), left(std::string(other_estimate)), left("adds"),
           left(std::string(other_adds))});
    for (const auto& g : groups) {
      const bool differs =
          g.estimated_nodes != g.other_estimated_nodes || g.new_nodes != g.other_new_nodes;
      const std::string_view style = differs ? ansi::kYellow : std::string_view{};
      t.add({left(printable(g.name)), left(nodes(g.estimated_nodes)),
             left(nodes(g.other_estimated_nodes), style), left(added(g.new_nodes)),
             left(added(g.other_new_nodes), style)});
    }
    lines(t.render(paint_), "  ");
  }

  // `plan --compare-modes`: the same workload in HAMi's DRA mode.
  void mode_comparison() {
    if (!plan_.mode_comparison) return;
    const scaleup::ModeComparison& m = *plan_.mode_comparison;
    line();
    line(paint_("Compared with HAMi's DRA mode", ansi::kBold));
    line("  converted: " + plural(m.nodes_converted, "node", "nodes") + ", " +
         plural(m.profiles_converted, "device profile", "device profiles") + ", " +
         plural(m.pending_pods_converted, "pending pod", "pending pods") + ", " +
         plural(m.running_pods_converted, "running pod", "running pods"));
    line("  DRA mode's decision: " + paint_(m.summary.empty()
                                                ? std::string(scaleup::to_string(m.decision))
                                                : printable(m.summary),
                                            decision_style(m.decision)));
    group_counts(m.groups, "DRA estimate", "DRA adds");
    const int64_t differ = static_cast<int64_t>(m.pods.size());
    line("  pending pods: " + plural(m.same_outcome, "pod", "pods") + " the same in both modes, " +
         plural(differ, "pod", "pods") + " differ");
    if (!m.pods.empty()) {
      Columns p;
      p.add({left("pod"), left("device-plugin mode"), left("DRA mode"), left("why")});
      auto where = [](std::optional<PodOutcome::State> s, const std::string& node) {
        if (!s) return std::string("refused");
        return std::string(scaleup::to_string(*s)) + (node.empty() ? "" : " " + node);
      };
      for (const auto& d : m.pods) {
        p.add({left(printable(d.pod)), left(where(d.state, d.node), state_style(d.state)),
               left(printable(where(d.dra_state, d.dra_node)),
                    d.dra_state ? state_style(*d.dra_state) : ansi::kRed),
               left(printable(d.why))});
      }
      lines(p.render(paint_), "    ");
    }
    line("  not modelled in DRA mode:");
    for (const auto& n : m.not_modelled) line("    - " + printable(n));
    for (const auto& w : m.warnings) {
      line("  " + paint_("! DRA mode: " + printable(w), ansi::kYellow));
    }
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
    if (!g.schedulable_pods.empty()) {
      detail("fits", printable(first_of(g.schedulable_pods, list_limit())));
    }
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
      const size_t shown = std::min(rows.size(), list_limit());
      for (size_t i = 0; i < shown; ++i) {
        r.add({left(i == 0 ? std::string(label) : std::string()), left(printable(rows[i].first)),
               left(printable(rows[i].second), ansi::kRed)});
      }
      if (shown < rows.size()) {
        r.add({left(""), left("and " + std::to_string(rows.size() - shown) + " more"),
               left("(--verbose lists them)")});
      }
      lines(r.render(paint_), "      ");
    };
    reasons("rejects", rejected_with_details(g));
    std::vector<std::pair<std::string, std::string>> unplaced;
    for (const auto& u : g.unplaced) unplaced.emplace_back(u.pod, u.reason);
    reasons("unplaced", unplaced);
  }

  // Without --verbose, pods of one owner with one outcome and one explanation are one row
  // ("Deployment/web: 40 pods"), with the first pod names under it; a row of one pod reads as
  // that pod.
  void pods() {
    heading("Pending pods", plan_.pods.size());
    if (plan_.pods.empty()) {
      line("  none");
      return;
    }
    std::vector<PodRow> rows;
    if (options_.verbose) {
      for (const PodOutcome& p : plan_.pods) rows.push_back({p.owner, p.state, &p, {&p}});
    } else {
      rows = pod_rows(plan_);
    }
    Columns t;
    for (const PodRow& r : rows) {
      const PodOutcome& p = *r.first;
      std::string where;
      if (r.pods.size() == 1 && !p.node.empty()) where = "on " + printable(p.node);
      if (r.pods.size() > 1 && !p.node.empty()) where = "on " + nodes_of(r);
      std::string reason = printable(p.reason);
      if (!where.empty() && !reason.empty()) where += ": ";
      const std::string who = r.pods.size() == 1
                                  ? printable(p.pod)
                                  : (r.owner.empty() ? std::string() : printable(r.owner) + ": ") +
                                        plural(static_cast<int64_t>(r.pods.size()), "pod", "pods");
      t.add({left(who), left(std::string(scaleup::to_string(p.state)), state_style(p.state)),
             left(where + reason)});
    }
    const std::vector<std::string> lines_out = t.render(paint_);
    // Pod names and group reasons go under the reason column, indented one step, the group
    // names aligned among themselves.
    const std::string reason_indent(2 + t.column_start(2) + 2, ' ');
    for (size_t i = 0; i < lines_out.size(); ++i) {
      line("  " + lines_out[i]);
      const PodRow& r = rows[i];
      if (r.pods.size() > 1) {
        std::vector<std::string> names;
        for (const PodOutcome* p : r.pods) names.push_back(p->pod);
        line(reason_indent + printable(first_of(names, list_limit())));
      }
      if (r.first->group_reasons.empty()) continue;
      Columns g;
      for (const auto& [group, why] : r.first->group_reasons) {
        g.add({left(printable(group) + ":"), left(printable(why), ansi::kRed)});
      }
      lines(g.render(paint_), reason_indent);
    }
  }

  // "3 new nodes" or the one node the pods of a row landed on.
  static std::string nodes_of(const PodRow& r) {
    std::set<std::string_view> nodes;
    for (const PodOutcome* p : r.pods) nodes.insert(p->node);
    if (nodes.size() == 1) return printable(*nodes.begin());
    return std::to_string(nodes.size()) + " nodes";
  }

  // How many names a list shows without --verbose.
  size_t list_limit() const { return options_.verbose ? SIZE_MAX : 5; }

  // Without --verbose, nodes packed identically are one entry ("12 × this packing").
  void new_nodes() {
    if (plan_.new_nodes.empty()) return;
    heading("New nodes", plan_.new_nodes.size());
    std::vector<PackingGroup> groups;
    if (options_.verbose) {
      for (const PlannedNode& n : plan_.new_nodes) groups.push_back({&n, {&n}});
    } else {
      groups = packing_groups(plan_);
    }
    for (const PackingGroup& pg : groups) {
      const PlannedNode& n = *pg.first;
      const std::string each = pg.nodes.size() > 1 ? " each" : "";
      line("  " +
           paint_(pg.nodes.size() > 1 ? std::to_string(pg.nodes.size()) + " × this packing"
                                      : printable(n.name),
                  ansi::kBold) +
           "  (group " + printable(n.group) + ", " +
           plural(static_cast<int64_t>(n.pods.size()), "pod", "pods") + each + ")");
      Columns d({kLabelWidth});
      if (pg.nodes.size() > 1) {
        std::vector<std::string> names;
        for (const PlannedNode* m : pg.nodes) names.push_back(m->name);
        d.add({left("nodes"), left(printable(first_of(names, list_limit())))});
      }
      const size_t shown = std::min(n.pods.size(), list_limit());
      for (size_t i = 0; i < shown; ++i) {
        d.add({left(i == 0 ? "pods" : ""), left(printable(n.pods[i]))});
      }
      if (shown < n.pods.size()) {
        d.add({left(""), left("and " + std::to_string(n.pods.size() - shown) + " more")});
      }
      if (n.pods.empty()) d.add({left("pods"), left("none")});
      d.add({left("cpu"), left(format_cores(n.cpu_requested_milli) + " / " +
                               format_cores(n.cpu_allocatable_milli) + " cores  " +
                               percent_text(n.cpu_requested_milli, n.cpu_allocatable_milli))});
      d.add({left("memory"),
             left(format_bytes(n.memory_requested) + " / " + format_bytes(n.memory_allocatable) +
                  "  " + percent_text(n.memory_requested, n.memory_allocatable))});
      if (n.devices.empty() && n.dra_devices.empty()) {
        d.add({left("devices"), left("none described by the template")});
      }
      lines(d.render(paint_), "      ");
      if (!n.devices.empty()) device_lines(n.devices);
      if (!n.dra_devices.empty()) dra_device_lines(n.dra_devices);
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

  // "hami-gpu-0  cores [bar] 75 / 100  memory [bar] 60 GiB / 80 GiB  3 claims: a, b, c".
  void dra_device_lines(const std::vector<scaleup::DraDeviceUse>& devices) {
    Columns t;
    for (const auto& d : devices) {
      std::vector<Cell> row{left(printable(d.device))};
      for (const auto& c : d.capacity) {
        row.push_back(left(printable(c.name)));
        row.push_back(left(text_bar(c.consumed.value(), c.total.value(), options_.bar_width)));
        row.push_back(right(capacity_usage(c)));
      }
      row.push_back(left(d.claims.empty()
                             ? "no claims"
                             : plural(static_cast<int64_t>(d.claims.size()), "claim", "claims") +
                                   ": " + printable(claims_text(d.claims, 3))));
      t.add(std::move(row));
    }
    lines(t.render(paint_), "      ");
  }

  const Plan& plan_;
  const TableOptions& options_;
  Painter paint_;
  std::string out_;
};

}  // namespace

std::string render_table(const Plan& plan, const TableOptions& options) {
  return TableWriter(plan, options).run();
}

}  // namespace hamisim::planner::report
