#include "planner/report/report.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/json_writer.h"
#include "planner/report/report_text.h"

namespace hamisim::planner::report {

namespace {

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
table.devices td+td+td{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.alloc{color:var(--muted)}
footer{margin-top:32px;color:var(--muted);font-size:12px}
footer dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:6px 0}
footer dd{margin:0;overflow-wrap:anywhere}
.names{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;
color:var(--muted);margin:4px 0}
td.mono,code{overflow-wrap:normal;word-break:keep-all}
nav{font-size:13px;margin:4px 0 8px}nav a{margin-right:12px;color:var(--info)}
svg.chart text{font-size:11px;fill:var(--fg)}svg.chart .axis{fill:var(--muted)}
svg.chart .nodes{fill:var(--ok)}svg.chart .pods{fill:var(--mem)}svg.chart .track{fill:var(--track)}
.count{font-weight:600;margin-right:4px}
.tools{position:sticky;top:0;z-index:1;display:flex;flex-wrap:wrap;gap:8px;align-items:center;
padding:8px 0;background:var(--bg);border-bottom:1px solid var(--line)}
.tools input,.tools select{font:inherit;padding:3px 6px;color:var(--fg);background:var(--bg);
border:1px solid var(--line);border-radius:6px}.tools input{min-width:260px}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th[data-dir=asc]::after{content:" \25B2"}table.sortable th[data-dir=desc]::after{content:" \25BC"}
.legend{color:var(--muted);font-size:12.5px;margin:4px 0 10px}
.legend .key{display:inline-block;width:11px;height:11px;vertical-align:-1px;margin:0 4px 0 10px}
.legend .key.mem{background:var(--mem)}.legend .key.cores{background:var(--cores)}
.legend .key.track{background:var(--track)}
[hidden]{display:none!important}
@media print{body{max-width:none;padding:0;font-size:12px}nav,.tools{display:none}
details:not([open])>:not(summary){display:none}.node,tr{break-inside:avoid}
h2{break-after:avoid}}
)css";

// Search, the filters and sortable tables: plain JavaScript in the page, no external asset. An
// element marked data-filter is shown when it contains the search text (its folded parts
// included) and its data-groups / data-outcomes name the group and outcome chosen.
constexpr std::string_view kScript = R"js(
(function () {
  "use strict";
  var search = document.getElementById("search");
  var group = document.getElementById("group-filter");
  var outcome = document.getElementById("outcome-filter");
  var shown = document.getElementById("shown");
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-filter]"));
  function has(list, word) {
    return (" " + (list || "") + " ").indexOf(" " + word + " ") >= 0;
  }
  function apply() {
    var text = search.value.trim().toLowerCase(), g = group.value, o = outcome.value, n = 0;
    items.forEach(function (el) {
      var ok = (!text || el.textContent.toLowerCase().indexOf(text) >= 0) &&
               (!g || has(el.getAttribute("data-groups"), g)) &&
               (!o || has(el.getAttribute("data-outcomes"), o));
      el.hidden = !ok;
      if (ok) n++;
    });
    shown.textContent = text || g || o ? n + " of " + items.length + " shown" : "";
  }
  search.addEventListener("input", apply);
  group.addEventListener("change", apply);
  outcome.addEventListener("change", apply);
  function key(row, i, numeric) {
    var cell = row.cells[i], text = cell ? cell.textContent.trim() : "";
    var number = parseFloat(text.replace(/[^0-9.+-].*$/, ""));
    return numeric && !isNaN(number) ? number : text.toLowerCase();
  }
  function sort(table, th, i) {
    var dir = th.getAttribute("data-dir") === "asc" ? "desc" : "asc";
    Array.prototype.forEach.call(table.querySelectorAll("th"), function (h) {
      h.removeAttribute("data-dir");
    });
    th.setAttribute("data-dir", dir);
    var numeric = th.classList.contains("num"), body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a, i, numeric), y = key(b, i, numeric);
      var r = typeof x === "number" && typeof y === "number" ? x - y
                                                             : String(x).localeCompare(String(y));
      return dir === "asc" ? r : -r;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.tabIndex = 0;
      th.title = "sort";
      th.addEventListener("click", function () { sort(table, th, i); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter") sort(table, th, i);
      });
    });
  });
  document.documentElement.setAttribute("data-ready", "true");
})();
)js";

class HtmlWriter {
 public:
  HtmlWriter(const Plan& plan, const Provenance* provenance)
      : plan_(plan), provenance_(provenance) {}

  std::string run() {
    const std::string decision(scaleup::to_string(plan_.decision));
    out_ += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out_ += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out_ += "<title>hamisim plan: " + html(plan_.summary.empty() ? decision : plan_.summary) +
            "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
    header();
    related();
    tools();
    summary();
    warnings();
    unpatched_ca();
    mode_comparison();
    groups();
    pods();
    new_nodes();
    footer();
    out_ += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
    return std::move(out_);
  }

 private:
  // For the filters: which node groups and outcomes each pod, node group and new node has to
  // do with (a pod: the group of the new node it landed on and the groups that rejected it).
  void related() {
    for (size_t i = 0; i < plan_.groups.size(); ++i) group_index_.emplace(plan_.groups[i].name, i);
    std::map<std::string_view, std::string_view> node_group;
    for (const PlannedNode& n : plan_.new_nodes) node_group.emplace(n.name, n.group);
    for (const GroupEvaluation& g : plan_.groups) {
      for (const auto* list : {&g.schedulable_pods, &g.estimated_pods}) {
        for (const auto& pod : *list) pod_groups_[pod].insert(g.name);
      }
      for (const auto& [pod, why] : g.rejected_pods) pod_groups_[pod].insert(g.name);
    }
    for (const PodOutcome& p : plan_.pods) {
      std::set<std::string>& groups = pod_groups_[p.pod];
      if (auto it = node_group.find(p.node); it != node_group.end()) {
        groups.emplace(it->second);
      }
      for (const auto& [g, why] : p.group_reasons) groups.emplace(g);
    }
    for (const PodOutcome& p : plan_.pods) {
      const std::string state = std::to_string(static_cast<int>(p.state));
      for (const auto& g : pod_groups_[p.pod]) group_outcomes_[g].insert(state);
    }
  }

  static std::string words(const std::set<std::string>& set) {
    std::string out;
    for (const auto& w : set) out += (out.empty() ? "" : " ") + w;
    return out;
  }

  // The attributes of an element the filters show or hide. Groups and outcomes are written as
  // their numbers (a group's index in the plan, an outcome's state), which the filters' options
  // carry as values: a 500-node report names a dozen groups on hundreds of rows.
  std::string filter_attributes(const std::set<std::string>& groups,
                                const std::set<std::string>& outcomes) const {
    std::set<size_t> indices;
    for (const auto& g : groups) {
      if (auto it = group_index_.find(g); it != group_index_.end()) indices.insert(it->second);
    }
    std::string out = " data-filter data-groups=\"";
    bool first = true;
    for (size_t i : indices) {
      out += (first ? "" : " ") + std::to_string(i);
      first = false;
    }
    return out + "\" data-outcomes=\"" + words(outcomes) + "\"";
  }

  // Search and filters over node groups, pending pods and new nodes.
  void tools() {
    out_ +=
        "<div class=\"tools\" id=\"tools\"><input type=\"search\" id=\"search\" "
        "placeholder=\"search pods, node groups, nodes, reasons\" aria-label=\"search\">"
        "<select id=\"group-filter\" aria-label=\"node group\"><option value=\"\">every "
        "node group</option>";
    for (size_t i = 0; i < plan_.groups.size(); ++i) {
      out_ +=
          "<option value=\"" + std::to_string(i) + "\">" + html(plan_.groups[i].name) + "</option>";
    }
    out_ +=
        "</select><select id=\"outcome-filter\" aria-label=\"outcome\"><option value=\"\">"
        "every outcome</option>";
    for (const auto& [state, n] : state_counts(plan_)) {
      out_ += "<option value=\"" + std::to_string(static_cast<int>(state)) + "\">" +
              html(scaleup::to_string(state)) + " (" + std::to_string(n) + ")</option>";
    }
    out_ += "</select><span id=\"shown\" class=\"meta\"></span></div>\n";
  }

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

  // Where each section starts, so a long report can be walked.
  void nav() {
    out_ += "<nav><a href=\"#summary\">summary</a>";
    if (!plan_.warnings.empty()) out_ += "<a href=\"#warnings\">warnings</a>";
    if (plan_.unpatched_ca) out_ += "<a href=\"#unpatched-ca\">unpatched CA</a>";
    if (plan_.mode_comparison) out_ += "<a href=\"#mode-comparison\">DRA mode</a>";
    out_ += "<a href=\"#groups\">node groups</a><a href=\"#pods\">pending pods</a>";
    if (!plan_.new_nodes.empty()) out_ += "<a href=\"#new-nodes\">new nodes</a>";
    out_ += "<a href=\"#provenance\">provenance</a></nav>\n";
  }

  // What the report says in one screen: the pending pods per state (a bar), each node group in
  // one line, and the options side by side (a chart of nodes and pods per option).
  void summary() {
    nav();
    out_ += "<h2 id=\"summary\">Summary</h2>\n";
    const auto counts = state_counts(plan_);
    int64_t total = 0;
    for (const auto& [state, n] : counts) total += n;
    out_ += "<p>Pending pods: ";
    if (counts.empty()) out_ += "none";
    for (const auto& [state, n] : counts) {
      out_ += "<span class=\"count\">" + std::to_string(n) + "</span>";
      badge(scaleup::to_string(state));
      out_ += " ";
    }
    out_ += "</p>\n";
    if (total > 0) {
      // One stacked bar, a segment per state in the states' colours.
      constexpr double kWidth = 600;
      out_ +=
          "<svg class=\"chart\" width=\"600\" height=\"14\" viewBox=\"0 0 600 14\" role=\"img\">";
      double x = 0;
      for (const auto& [state, n] : counts) {
        const double w = kWidth * static_cast<double>(n) / static_cast<double>(total);
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"14\" class=\"", x, w);
        out_ += buf + css_class(scaleup::to_string(state)) +
                "\" style=\"fill:currentColor\"><title>" + std::to_string(n) + " " +
                std::string(scaleup::to_string(state)) + "</title></rect>";
        x += w;
      }
      out_ += "</svg>\n";
    }
    if (!plan_.groups.empty()) {
      out_ += "<table class=\"compact\"><tbody>\n";
      for (const GroupEvaluation& g : plan_.groups) {
        out_ += "<tr><td><strong>" + html(g.name) + "</strong></td><td>";
        badge(group_status(g));
        out_ += "</td><td>" + html(group_line(g)) + "</td></tr>\n";
      }
      out_ += "</tbody></table>\n";
    }
    options_chart();
    if (!plan_.expander.empty()) {
      out_ += "<p class=\"meta\">Expander: <code>" + html(plan_.expander) +
              "</code>; each option's scores are those of this chain.</p>\n";
    }
  }

  // Nodes and pods of every expansion option, two bars per group on one scale each.
  void options_chart() {
    std::vector<const GroupEvaluation*> options;
    int64_t max_nodes = 1, max_pods = 1;
    for (const GroupEvaluation& g : plan_.groups) {
      if (!g.option || !g.estimated_nodes) continue;
      options.push_back(&g);
      max_nodes = std::max(max_nodes, *g.estimated_nodes);
      max_pods = std::max(max_pods, static_cast<int64_t>(g.estimated_pods.size()));
    }
    if (options.size() < 2) return;
    constexpr int kRow = 34, kLabel = 160, kBar = 360;
    const int height = static_cast<int>(options.size()) * kRow + 18;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "<svg class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                  "role=\"img\"><title>nodes and pods per option</title>"
                  "<text class=\"axis\" x=\"%d\" y=\"11\">nodes (green) and pods (blue) per "
                  "option</text>",
                  kLabel + kBar + 120, height, kLabel + kBar + 120, height, kLabel);
    out_ += buf;
    for (size_t i = 0; i < options.size(); ++i) {
      const GroupEvaluation& g = *options[i];
      const int y = 18 + static_cast<int>(i) * kRow;
      const auto pods = static_cast<int64_t>(g.estimated_pods.size());
      const double wn = kBar * static_cast<double>(*g.estimated_nodes) / max_nodes;
      const double wp = kBar * static_cast<double>(pods) / max_pods;
      std::snprintf(buf, sizeof buf,
                    "<rect class=\"nodes\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"12\"/>"
                    "<text x=\"%.1f\" y=\"%d\">%lld %s</text>"
                    "<rect class=\"pods\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"12\"/>"
                    "<text x=\"%.1f\" y=\"%d\">%lld %s</text>",
                    kLabel, y, wn, kLabel + wn + 4, y + 10,
                    static_cast<long long>(*g.estimated_nodes),
                    *g.estimated_nodes == 1 ? "node" : "nodes", kLabel, y + 14, wp, kLabel + wp + 4,
                    y + 24, static_cast<long long>(pods), pods == 1 ? "pod" : "pods");
      out_ += "<text x=\"0\" y=\"" + std::to_string(y + 16) + "\">" +
              html(g.name.size() > 24 ? g.name.substr(0, 23) + "…" : g.name) +
              (g.chosen ? " (chosen)" : "") + "</text>" + buf;
    }
    out_ += "</svg>\n";
  }

  // Where the report came from: hamisim's version, when, the inputs (with digests) and the
  // command line, so a shared report can be traced back.
  void footer() {
    out_ += "<footer id=\"provenance\">hamisim plan &middot; apiVersion " +
            std::string(kPlanApiVersion);
    if (provenance_ != nullptr) {
      out_ += "<dl><dt>version</dt><dd>" + html(provenance_->version) + "</dd><dt>made</dt><dd>" +
              html(provenance_->time) + "</dd>";
      for (const auto& in : provenance_->inputs) {
        out_ += "<dt>" + html(in.flag) + "</dt><dd><code>" + html(in.path) + "</code>" +
                (in.sha256.empty() ? std::string() : " sha256:" + html(in.sha256)) + "</dd>";
      }
      out_ += "<dt>command</dt><dd><code>" + html(provenance_->command) + "</code></dd></dl>";
    }
    out_ += "</footer>\n";
  }

  void warnings() {
    if (plan_.warnings.empty()) return;
    out_ += "<h2 id=\"warnings\">Warnings</h2>\n<ul class=\"warnings\">\n";
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
    group_counts(u.groups, "its estimate", "it adds");
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

  // Each node group's estimate and new nodes in this plan and in the other plan's columns.
  void group_counts(const std::vector<scaleup::GroupCounts>& groups,
                    std::string_view other_estimate, std::string_view other_adds) {
    auto nodes = [](const std::optional<int64_t>& n) {
      return n ? plural(*n, "node", "nodes") : std::string("-");
    };
    out_ += "<table class=\"compact\"><thead><tr><th>node group</th><th>estimate</th><th>" +
            html(other_estimate) + "</th><th class=\"num\">adds</th><th class=\"num\">" +
            html(other_adds) + "</th></tr></thead><tbody>\n";
    for (const auto& g : groups) {
      out_ += "<tr><td>" + html(g.name) + "</td><td>" + nodes(g.estimated_nodes) + "</td><td>" +
              nodes(g.other_estimated_nodes) + "</td><td class=\"num\">" +
              std::to_string(g.new_nodes) + "</td><td class=\"num\">" +
              std::to_string(g.other_new_nodes) + "</td></tr>\n";
    }
    out_ += "</tbody></table>\n";
  }

  // `plan --compare-modes`: the same workload in HAMi's DRA mode.
  void mode_comparison() {
    if (!plan_.mode_comparison) return;
    const scaleup::ModeComparison& m = *plan_.mode_comparison;
    const std::string_view decision = scaleup::to_string(m.decision);
    out_ +=
        "<h2 id=\"mode-comparison\">Compared with HAMi's DRA mode</h2>\n<p class=\"meta\">"
        "converted: " +
        plural(m.nodes_converted, "node", "nodes") + ", " +
        plural(m.profiles_converted, "device profile", "device profiles") + ", " +
        plural(m.pending_pods_converted, "pending pod", "pending pods") + ", " +
        plural(m.running_pods_converted, "running pod", "running pods") +
        "</p>\n<p class=\"decision\" data-decision=\"" + css_class(decision) +
        "\">DRA mode's decision: ";
    badge(decision);
    out_ += " " + html(m.summary) + "</p>\n";
    group_counts(m.groups, "DRA estimate", "DRA adds");
    out_ += "<p>Pending pods: " + plural(m.same_outcome, "pod", "pods") +
            " the same in both modes, " +
            plural(static_cast<int64_t>(m.pods.size()), "pod", "pods") + " differ.</p>\n";
    if (!m.pods.empty()) {
      out_ +=
          "<table class=\"compact\"><thead><tr><th>pod</th><th>device-plugin mode</th>"
          "<th>DRA mode</th><th>why</th></tr></thead><tbody>\n";
      auto cell = [this](std::optional<PodOutcome::State> s, const std::string& node) {
        const std::string_view word = s ? scaleup::to_string(*s) : std::string_view("refused");
        out_ += "<td>";
        badge(word);
        if (!node.empty()) out_ += " <span class=\"mono\">" + html(node) + "</span>";
        out_ += "</td>";
      };
      for (const auto& d : m.pods) {
        out_ += "<tr><td class=\"mono\">" + html(d.pod) + "</td>";
        cell(d.state, d.node);
        cell(d.dra_state, d.dra_node);
        out_ += "<td>" + html(d.why) + "</td></tr>\n";
      }
      out_ += "</tbody></table>\n";
    }
    out_ += "<p>Not modelled in DRA mode:</p>\n<ul class=\"reasons\">";
    for (const auto& n : m.not_modelled) out_ += "<li>" + html(n) + "</li>";
    out_ += "</ul>\n";
    if (!m.warnings.empty()) {
      out_ += "<ul class=\"warnings\">";
      for (const auto& w : m.warnings) out_ += "<li>DRA mode: " + html(w) + "</li>";
      out_ += "</ul>\n";
    }
  }

  void pod_reason_list(const std::vector<std::pair<std::string, std::string>>& rows) {
    out_ += "<ul class=\"reasons\">";
    for (const auto& [pod, why] : rows) {
      out_ += "<li><span class=\"mono\">" + html(pod) + "</span>: " + html(why) + "</li>";
    }
    out_ += "</ul>";
  }

  void groups() {
    out_ += "<h2 id=\"groups\">Node groups</h2>\n";
    if (plan_.groups.empty()) {
      out_ += "<p class=\"meta\">none</p>\n";
      return;
    }
    out_ +=
        "<table class=\"sortable\"><thead><tr><th>node group</th><th class=\"num\">min</th><th "
        "class=\"num\">max"
        "</th><th class=\"num\">target</th><th class=\"num\">members</th><th>template</th>"
        "<th>devices</th><th>status</th><th>estimate</th><th>details</th></tr></thead><tbody>\n";
    for (const GroupEvaluation& g : plan_.groups) {
      const std::string_view status = group_status(g);
      out_ += std::string(g.chosen ? "<tr class=\"chosen-row\"" : "<tr") +
              filter_attributes({g.name}, group_outcomes_[g.name]) + ">";
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
        out_ += "<div>fits: <span class=\"mono\">" + html(first_of(g.schedulable_pods, 3)) +
                "</span></div>";
      }
      if (!g.rejected_pods.empty()) {
        out_ +=
            "<details><summary>" +
            plural(static_cast<int64_t>(g.rejected_pods.size()), "pod rejected", "pods rejected") +
            "</summary>";
        // The template is the same for every pod, so what its GPUs have free ends every pod's
        // numbers alike: said once under the list, the pods keep what they ask.
        std::vector<std::pair<std::string, std::string>> rows;
        std::string common;
        bool shared = !g.rejected_details.empty();
        for (const auto& [pod, detail] : g.rejected_details) {
          const size_t cut = detail.find("; ");
          const std::string rest =
              cut == std::string::npos ? std::string() : detail.substr(cut + 2);
          if (rest.empty() || (!common.empty() && rest != common)) shared = false;
          common = rest;
        }
        for (const auto& [pod, why] : g.rejected_pods) {
          const auto d = g.rejected_details.find(pod);
          if (d == g.rejected_details.end()) {
            rows.emplace_back(pod, why);
          } else {
            rows.emplace_back(
                pod, why + " (" + (shared ? d->second.substr(0, d->second.find("; ")) : d->second) +
                         ")");
          }
        }
        pod_reason_list(rows);
        if (shared) out_ += "<div class=\"note\">the template's GPUs: " + html(common) + "</div>";
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

  // One row per owner (bare pods together): how many pods and their outcomes in counts, the
  // first reason a pod of it was not placed; folded under it, a line per outcome and
  // explanation with the pods' names.
  void pods() {
    out_ += "<h2 id=\"pods\">Pending pods</h2>\n";
    if (plan_.pods.empty()) {
      out_ += "<p class=\"meta\">none</p>\n";
      return;
    }
    std::vector<std::pair<std::string_view, std::vector<const PodRow*>>> owners;
    const std::vector<PodRow> rows = pod_rows(plan_);
    for (const PodRow& r : rows) {
      auto it = std::find_if(owners.begin(), owners.end(),
                             [&](const auto& o) { return o.first == r.owner; });
      if (it == owners.end()) it = owners.insert(owners.end(), {r.owner, {}});
      it->second.push_back(&r);
    }
    out_ +=
        "<table class=\"sortable\"><thead><tr><th>owner</th><th "
        "class=\"num\">pods</th><th>outcome</th>"
        "<th>why not placed</th></tr></thead><tbody>\n";
    for (const auto& [owner, its] : owners) {
      std::map<PodOutcome::State, int64_t> counts;
      int64_t total = 0;
      const PodRow* unplaced = nullptr;
      for (const PodRow* r : its) {
        counts[r->state] += static_cast<int64_t>(r->pods.size());
        total += static_cast<int64_t>(r->pods.size());
        if (!unplaced && r->first->node.empty()) unplaced = r;
      }
      std::set<std::string> groups, outcomes;
      for (const PodRow* r : its) {
        for (const PodOutcome* q : r->pods) {
          const auto& g = pod_groups_[q->pod];
          groups.insert(g.begin(), g.end());
          outcomes.insert(std::to_string(static_cast<int>(q->state)));
        }
      }
      // A few owners are shown unfolded; many, folded (they would fill pages).
      out_ += "<tr" + filter_attributes(groups, outcomes) + ">";
      out_ += std::string("<td><details") + (owners.size() <= 5 ? " open" : "") + "><summary>" +
              (owner.empty() ? std::string("(no owner)") : html(owner)) + "</summary>";
      for (const PodRow* r : its) pod_row_detail(*r);
      out_ += "</details></td><td class=\"num\">" + std::to_string(total) + "</td><td>";
      for (const auto& [state, n] : counts) {
        out_ += "<span class=\"count\">" + std::to_string(n) + "</span>";
        badge(scaleup::to_string(state));
        out_ += " ";
      }
      out_ += "</td><td>";
      if (unplaced) out_ += html(unplaced->first->reason);
      out_ += "</td></tr>\n";
    }
    out_ += "</tbody></table>\n";
  }

  // One outcome of an owner's pods: the state, where they landed or why not, and the names.
  void pod_row_detail(const PodRow& r) {
    const PodOutcome& p = *r.first;
    out_ += "<div>";
    badge(scaleup::to_string(p.state));
    std::set<std::string_view> nodes;
    for (const PodOutcome* q : r.pods) {
      if (!q->node.empty()) nodes.insert(q->node);
    }
    out_ += " " + plural(static_cast<int64_t>(r.pods.size()), "pod", "pods");
    if (nodes.size() == 1) out_ += " on <code>" + html(*nodes.begin()) + "</code>";
    if (nodes.size() > 1) out_ += " on " + std::to_string(nodes.size()) + " nodes";
    if (!p.reason.empty()) out_ += ": " + html(p.reason);
    if (!p.group_reasons.empty()) pod_reason_list({p.group_reasons.begin(), p.group_reasons.end()});
    std::vector<std::string_view> names;
    for (const PodOutcome* q : r.pods) names.push_back(q->pod);
    out_ += "<p class=\"names\">" + html(compressed_names(names)) + "</p></div>";
  }

  void meter(std::string_view label, int64_t used, int64_t total, const std::string& text) {
    char width[16];
    std::snprintf(width, sizeof width, "%.1f", 100.0 * fraction(used, total));
    out_ += "<span>" + std::string(label) +
            "</span><div class=\"meter\"><span style=\"width:" + width +
            "%\"></span></div><span class=\"num\">" + text + "</span>";
  }

  // The node's DRA devices: each capacity as a meter, and the claims with a share on it.
  void dra_devices(const std::vector<scaleup::DraDeviceUse>& devices) {
    out_ +=
        "<table><thead><tr><th>device</th><th>consumed capacity</th><th>claims</th></tr>"
        "</thead><tbody>\n";
    for (const auto& d : devices) {
      out_ += "<tr><td class=\"mono\">" + html(d.device) + "</td><td><div class=\"res\">";
      for (const auto& c : d.capacity) {
        meter(html(c.name), c.consumed.value(), c.total.value(), html(capacity_usage(c)));
      }
      out_ += "</div></td><td>";
      if (d.claims.empty()) {
        out_ += "none";
      } else {
        out_ += "<details><summary>" +
                plural(static_cast<int64_t>(d.claims.size()), "claim", "claims") +
                "</summary><ul class=\"reasons\">";
        for (const auto& c : d.claims) out_ += "<li class=\"mono\">" + html(c) + "</li>";
        out_ += "</ul></details>";
      }
      out_ += "</td></tr>\n";
    }
    out_ += "</tbody></table>\n";
  }

  // The node's devices side by side in one small SVG: per device a memory column (blue) and a
  // cores column (green), filled from the bottom; each column's title has its position and
  // numbers (the device table under it has the ids).
  void device_strip(const std::vector<DeviceUse>& devices) {
    constexpr int kCol = 26, kHeight = 48;
    const int width = kCol * static_cast<int>(devices.size());
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "<svg class=\"device\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                  "role=\"img\"><rect class=\"track\" x=\"0\" y=\"0\" width=\"%d\" "
                  "height=\"%d\"/>",
                  width, kHeight, width, kHeight, width, kHeight);
    out_ += buf;
    for (size_t i = 0; i < devices.size(); ++i) {
      const DeviceUse& d = devices[i];
      const double m = kHeight * fraction(d.used_memory, d.total_memory);
      const double c = kHeight * fraction(d.used_cores, d.total_cores);
      const int x = static_cast<int>(i) * kCol;
      std::snprintf(buf, sizeof buf,
                    "<g><title>%zu: %d/%d MiB, %d/%d %% cores, %d/%d slots</title>"
                    "<rect class=\"mem\" x=\"%d\" y=\"%.1f\" width=\"11\" height=\"%.1f\"/>"
                    "<rect class=\"cores\" x=\"%d\" y=\"%.1f\" width=\"11\" "
                    "height=\"%.1f\"/></g>",
                    i, static_cast<int>(d.used_memory), static_cast<int>(d.total_memory),
                    static_cast<int>(d.used_cores), static_cast<int>(d.total_cores),
                    static_cast<int>(d.used_slots), static_cast<int>(d.total_slots), x + 1,
                    kHeight - m, m, x + 13, kHeight - c, c);
      out_ += buf;
    }
    out_ += "</svg>";
  }

  // Memory fill of every GPU of the new nodes, in tenths: how full the scale-up packs them.
  void fill_chart() {
    std::array<int64_t, 11> bins{};  // 0-9 %, 10-19 %, ... 90-99 %, 100 %
    int64_t devices = 0;
    for (const PlannedNode& n : plan_.new_nodes) {
      for (const DeviceUse& d : n.devices) {
        ++bins[static_cast<size_t>(std::min(10.0, 10 * fraction(d.used_memory, d.total_memory)))];
        ++devices;
      }
    }
    if (devices == 0) return;
    const int64_t most = *std::max_element(bins.begin(), bins.end());
    constexpr int kCol = 40, kHeight = 70;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "<svg class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                  "role=\"img\"><title>GPU memory fill of the new nodes</title>",
                  kCol * 11, kHeight + 30, kCol * 11, kHeight + 30);
    out_ += "<p class=\"meta\">GPU memory fill of the new nodes (" +
            plural(devices, "GPU", "GPUs") + "):</p>" + buf;
    for (size_t i = 0; i < bins.size(); ++i) {
      const double h = kHeight * static_cast<double>(bins[i]) / static_cast<double>(most);
      std::snprintf(buf, sizeof buf,
                    "<rect class=\"pods\" x=\"%zu\" y=\"%.1f\" width=\"%d\" height=\"%.1f\"/>"
                    "<text x=\"%zu\" y=\"%.1f\">%lld</text><text class=\"axis\" x=\"%zu\" "
                    "y=\"%d\">%s</text>",
                    i * kCol + 4, 14 + kHeight - h, kCol - 8, h, i * kCol + 6, 12 + kHeight - h,
                    static_cast<long long>(bins[i]), i * kCol + 6, kHeight + 28,
                    i == 10 ? "100%" : (std::to_string(i * 10) + "%").c_str());
      out_ += buf;
    }
    out_ += "</svg>\n";
  }

  // One card per distinct packing ("92 × this packing"), its nodes and pods folded.
  void new_nodes() {
    if (plan_.new_nodes.empty()) return;
    std::map<std::string_view, const PodOutcome*> outcome;
    for (const PodOutcome& p : plan_.pods) outcome.emplace(p.pod, &p);
    out_ += "<h2 id=\"new-nodes\">New nodes</h2>\n";
    fill_chart();
    out_ +=
        "<p class=\"legend\">Each GPU of a node is a pair of bars, in the order of the device "
        "table, as full as it is used:<span class=\"key mem\"></span>memory"
        "<span class=\"key cores\"></span>cores<span class=\"key track\"></span>free "
        "(hover a pair for its numbers)</p>\n";
    out_ += "<div class=\"nodes\">\n";
    const std::vector<PackingGroup> packings = packing_groups(plan_);
    // A few cards show their devices and pods unfolded; many, folded.
    const std::string details = packings.size() <= 3 ? "<details open>" : "<details>";
    for (const PackingGroup& pg : packings) {
      const PlannedNode& n = *pg.first;
      std::set<std::string> outcomes;
      for (const std::string& pod : n.pods) {
        if (auto it = outcome.find(pod); it != outcome.end()) {
          outcomes.insert(std::to_string(static_cast<int>(it->second->state)));
        }
      }
      out_ += "<section class=\"node\"" + filter_attributes({n.group}, outcomes) + "><h3>";
      if (pg.nodes.size() == 1) {
        out_ += "<code>" + html(n.name) + "</code>";
      } else {
        out_ += std::to_string(pg.nodes.size()) + " &times; this packing";
      }
      out_ += " <small>group " + html(n.group) + ", " +
              plural(static_cast<int64_t>(n.pods.size()), "pod", "pods") +
              (pg.nodes.size() > 1 ? " each" : "") + "</small></h3>\n";
      if (pg.nodes.size() > 1) {
        out_ += "<details><summary>" +
                plural(static_cast<int64_t>(pg.nodes.size()), "node", "nodes") +
                "</summary><p class=\"names\">";
        std::vector<std::string_view> names;
        for (const PlannedNode* m : pg.nodes) names.push_back(m->name);
        out_ += html(compressed_names(names)) + "</p></details>\n";
      }
      out_ += "<div class=\"res\">";
      meter("cpu", n.cpu_requested_milli, n.cpu_allocatable_milli,
            format_cores(n.cpu_requested_milli) + " / " + format_cores(n.cpu_allocatable_milli) +
                " cores");
      meter("memory", n.memory_requested, n.memory_allocatable,
            format_bytes(n.memory_requested) + " / " + format_bytes(n.memory_allocatable));
      out_ += "</div>\n";
      if (!n.dra_devices.empty()) dra_devices(n.dra_devices);
      if (n.devices.empty() && n.dra_devices.empty()) {
        out_ += "<p class=\"meta\">No devices described by the template.</p>\n";
      } else if (!n.devices.empty()) {
        // The picture first; the numbers per device folded under it.
        device_strip(n.devices);
        out_ += details +
                "<summary>devices</summary><table class=\"sortable "
                "devices\"><thead><tr><th>device</th><th>type</th>"
                "<th class=\"num\">memory MiB</th><th class=\"num\">cores %</th>"
                "<th class=\"num\">slots</th></tr></thead><tbody>\n";
        for (const DeviceUse& d : n.devices) {
          // The numbers' alignment comes from the table's class (table.devices), not from each
          // cell's: a 500-node report has thousands of these cells.
          out_ +=
              "<tr><td class=\"mono\">" + html(d.id) + "</td><td>" + html(d.type) + "</td><td>" +
              std::to_string(d.used_memory) + " / " + std::to_string(d.total_memory) + "</td><td>" +
              std::to_string(d.used_cores) + " / " + std::to_string(d.total_cores) + "</td><td>" +
              std::to_string(d.used_slots) + " / " + std::to_string(d.total_slots) + "</td></tr>\n";
        }
        out_ += "</tbody></table></details>\n";
      }
      // The pods by name, folded; with few pods, each with the allocation it would get (which
      // device slice), itself folded as the values are long.
      out_ += details + "<summary>" + plural(static_cast<int64_t>(n.pods.size()), "pod", "pods") +
              (pg.nodes.size() > 1 ? " on <code>" + html(n.name) + "</code>" : std::string()) +
              "</summary>";
      if (n.pods.size() > 10) {
        out_ +=
            "<p class=\"names\">" + html(compressed_names({n.pods.begin(), n.pods.end()})) + "</p>";
      } else {
        out_ += "<ul class=\"pods\">";
        for (const std::string& pod : n.pods) {
          out_ += "<li><span class=\"mono\">" + html(pod) + "</span>";
          if (auto it = outcome.find(pod);
              it != outcome.end() && !it->second->allocations.empty()) {
            out_ += "<ul class=\"reasons\">";
            for (const auto& [k, v] : it->second->allocations) {
              out_ += "<li class=\"mono\">" + html(k) + ": " + html(v) + "</li>";
            }
            out_ += "</ul>";
          }
          out_ += "</li>";
        }
        out_ += "</ul>";
      }
      out_ += "</details></section>\n";
    }
    out_ += "</div>\n";
  }

  const Plan& plan_;
  const Provenance* provenance_;
  std::string out_;
  std::map<std::string, std::set<std::string>, std::less<>> pod_groups_;
  std::map<std::string, std::set<std::string>, std::less<>> group_outcomes_;
  std::map<std::string, size_t, std::less<>> group_index_;
};

}  // namespace

std::string render_html(const Plan& plan, const Provenance* provenance) {
  return HtmlWriter(plan, provenance).run();
}

}  // namespace hamisim::planner::report
