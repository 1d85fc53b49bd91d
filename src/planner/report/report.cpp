#include "planner/report/report_text.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
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

}  // namespace hamisim::planner::report
