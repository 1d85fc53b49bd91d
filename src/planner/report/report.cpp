#include "planner/report/report_text.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string_view>

#include "go/quote.h"
#include "model/json_writer.h"

namespace hamisim::planner::report {

// ---------------------------------------------------------------------------------------------
// Text shared by the three renderers
// ---------------------------------------------------------------------------------------------

namespace {
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
}  // namespace

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
std::string format_capacity(std::string_view name, const model::Quantity& q) {
  return name.ends_with("memory") ? format_bytes(q.value()) : q.to_string();
}

std::string capacity_usage(const scaleup::DraDeviceUse::Capacity& c) {
  return format_capacity(c.name, c.consumed) + " / " + format_capacity(c.name, c.total);
}

std::string claims_text(const std::vector<std::string>& claims, size_t shown) {
  std::string out;
  for (size_t i = 0; i < claims.size() && i < shown; ++i) out += (i ? ", " : "") + claims[i];
  if (claims.size() > shown) out += " +" + std::to_string(claims.size() - shown) + " more";
  return out;
}

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

std::vector<std::pair<PodOutcome::State, int64_t>> state_counts(const Plan& plan) {
  using State = PodOutcome::State;
  std::map<State, int64_t> n;
  for (const PodOutcome& p : plan.pods) ++n[p.state];
  std::vector<std::pair<State, int64_t>> out;
  for (State s : {State::kFitsExistingNode, State::kTriggersScaleUp, State::kAwaitsEvaluation,
                  State::kNoScaleUpHelps, State::kBlocked, State::kIgnored}) {
    if (auto it = n.find(s); it != n.end()) out.emplace_back(s, it->second);
  }
  return out;
}

std::vector<PodRow> pod_rows(const Plan& plan) {
  std::vector<PodRow> rows;
  std::map<std::string, size_t, std::less<>> index;  // row key -> index into rows
  for (const PodOutcome& p : plan.pods) {
    std::string key = p.owner + '\0' + std::to_string(static_cast<int>(p.state)) + '\0' + p.reason;
    for (const auto& [group, reason] : p.group_reasons) key += '\0' + group + '\0' + reason;
    auto [it, added] = index.try_emplace(std::move(key), rows.size());
    if (added) rows.push_back({p.owner, p.state, &p, {}});
    rows[it->second].pods.push_back(&p);
  }
  return rows;
}

namespace {

// What makes two new nodes' pictures the same.
std::string packing_key(const PlannedNode& n) {
  std::string k = n.group + '\0' + std::to_string(n.pods.size()) + '\0' +
                  std::to_string(n.cpu_requested_milli) + '/' +
                  std::to_string(n.cpu_allocatable_milli) + '\0' +
                  std::to_string(n.memory_requested) + '/' + std::to_string(n.memory_allocatable);
  for (const DeviceUse& d : n.devices) {
    k += '\0' + d.type + ':' + std::to_string(d.used_memory) + '/' +
         std::to_string(d.total_memory) + ':' + std::to_string(d.used_cores) + '/' +
         std::to_string(d.total_cores) + ':' + std::to_string(d.used_slots) + '/' +
         std::to_string(d.total_slots);
  }
  for (const auto& d : n.dra_devices) {
    k += '\0' + d.driver + '/' + d.device + ':' + std::to_string(d.claims.size());
    for (const auto& c : d.capacity) {
      k += ':' + c.name + '=' + c.consumed.to_string() + '/' + c.total.to_string();
    }
  }
  return k;
}

}  // namespace

std::vector<PackingGroup> packing_groups(const Plan& plan) {
  std::vector<PackingGroup> out;
  std::map<std::string, size_t, std::less<>> index;
  for (const PlannedNode& n : plan.new_nodes) {
    auto [it, added] = index.try_emplace(packing_key(n), out.size());
    if (added) out.push_back({&n, {}});
    out[it->second].nodes.push_back(&n);
  }
  return out;
}

std::optional<std::pair<std::string, int64_t>> dominant_rejection(const GroupEvaluation& g) {
  std::map<std::string_view, int64_t> n;
  for (const auto& [pod, reason] : g.rejected_pods) ++n[reason];
  std::optional<std::pair<std::string, int64_t>> best;
  for (const auto& [reason, count] : n) {
    if (!best || count > best->second) best.emplace(std::string(reason), count);
  }
  return best;
}

std::string group_line(const GroupEvaluation& g) {
  if (!g.skip_reason.empty()) return "skipped: " + g.skip_reason;
  std::string out;
  if (g.estimated_nodes) {
    out = plural(*g.estimated_nodes, "node", "nodes") + " for " +
          plural(static_cast<int64_t>(g.estimated_pods.size()), "pod", "pods");
    if (!g.expander_note.empty()) out += "; " + g.expander_note;
  }
  if (auto r = dominant_rejection(g)) {
    const auto total = static_cast<int64_t>(g.rejected_pods.size());
    out += (out.empty() ? "" : "; ") + std::string("rejects ") +
           plural(total, "pod group", "pod groups") +
           (total > r->second ? ", " + std::to_string(r->second) + " of them" : std::string()) +
           ": " + r->first;
  }
  return out.empty() ? std::string(group_status(g)) : out;
}

std::string compressed_names(const std::vector<std::string_view>& names) {
  // The part of a name up to its last separator: a pod's owner, a node's template.
  auto stem = [](std::string_view n) {
    const size_t cut = n.find_last_of("-/.");
    return cut == std::string_view::npos ? std::string_view() : n.substr(0, cut + 1);
  };
  std::string out;
  for (size_t i = 0; i < names.size();) {
    const std::string_view key = stem(names[i]);
    size_t j = i + 1;
    while (j < names.size() && stem(names[j]) == key) ++j;
    out += i ? ", " : "";
    if (j - i >= 3 && key.size() >= 8) {
      out += std::string(key) + "{";
      for (size_t k = i; k < j; ++k)
        out += (k > i ? ", " : "") + std::string(names[k].substr(key.size()));
      out += "}";
    } else {
      for (size_t k = i; k < j; ++k) out += (k > i ? ", " : "") + std::string(names[k]);
    }
    i = j;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> rejected_with_details(const GroupEvaluation& g) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [pod, why] : g.rejected_pods) {
    const auto detail = g.rejected_details.find(pod);
    out.emplace_back(pod,
                     detail == g.rejected_details.end() ? why : why + " (" + detail->second + ")");
  }
  return out;
}

std::string first_of(const std::vector<std::string>& items, size_t shown) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < shown; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > shown) out += " and " + std::to_string(items.size() - shown) + " more";
  return out;
}

}  // namespace hamisim::planner::report
