#include "go/duration.h"

#include <cstdint>
#include <limits>

namespace hamisim::go {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  auto invalid = [] { return std::nullopt; };
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return invalid();
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t total = 0;
  while (!s.empty()) {
    // Integer part.
    uint64_t v = 0;
    size_t i = 0;
    bool overflow = false;
    while (i < s.size() && is_digit(s[i])) {
      if (v > (kMax - (s[i] - '0')) / 10) overflow = true;
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
      ++i;
    }
    if (overflow) return invalid();
    const bool pre = i > 0;
    // Fraction.
    uint64_t f = 0;
    double scale = 1;
    bool post = false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      const size_t start = i;
      while (i < s.size() && is_digit(s[i])) {
        if (f <= (kMax - 9) / 10) {  // beyond this the digit cannot change the result
          f = f * 10 + static_cast<uint64_t>(s[i] - '0');
          scale *= 10;
        }
        ++i;
      }
      post = i > start;
    }
    if (!pre && !post) return invalid();
    // Unit.
    const size_t unit_start = i;
    while (i < s.size() && s[i] != '.' && !is_digit(s[i])) ++i;
    const std::string_view unit = s.substr(unit_start, i - unit_start);
    uint64_t factor = 0;
    if (unit == "ns") {
      factor = 1;
    } else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") {
      factor = 1000;
    } else if (unit == "ms") {
      factor = 1000 * 1000;
    } else if (unit == "s") {
      factor = 1000ULL * 1000 * 1000;
    } else if (unit == "m") {
      factor = 60ULL * 1000 * 1000 * 1000;
    } else if (unit == "h") {
      factor = 3600ULL * 1000 * 1000 * 1000;
    } else {
      return invalid();  // missing or unknown unit
    }
    if (v > kMax / factor) return invalid();
    v *= factor;
    if (f > 0) {
      v += static_cast<uint64_t>(static_cast<double>(f) * (static_cast<double>(factor) / scale));
      if (v > kMax) return invalid();
    }
    total += v;
    if (total > kMax) return invalid();
    s.remove_prefix(i);
  }
  const int64_t value = static_cast<int64_t>(total);
  return std::chrono::nanoseconds(negative ? -value : value);
}

std::string format_duration(std::chrono::nanoseconds d) {
  int64_t ns = d.count();
  if (ns == 0) return "0s";
  const bool negative = ns < 0;
  uint64_t u = negative ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  // Fixed-point number with `digits` decimals and no trailing zeros.
  auto fixed = [](uint64_t value, int digits) {
    std::string whole = std::to_string(value);
    if (digits == 0) return whole;
    while (static_cast<int>(whole.size()) <= digits) whole.insert(whole.begin(), '0');
    std::string frac = whole.substr(whole.size() - digits);
    whole.resize(whole.size() - digits);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    return frac.empty() ? whole : whole + "." + frac;
  };
  std::string out;
  if (u < 1000ULL * 1000 * 1000) {
    if (u < 1000) {
      out = std::to_string(u) + "ns";
    } else if (u < 1000 * 1000) {
      out = fixed(u, 3) + "\xC2\xB5s";
    } else {
      out = fixed(u, 6) + "ms";
    }
  } else {
    const uint64_t sec_ns = u % (60ULL * 1000 * 1000 * 1000);
    uint64_t minutes = u / (60ULL * 1000 * 1000 * 1000);
    out = fixed(sec_ns, 9) + "s";
    if (minutes > 0) {
      const uint64_t hours = minutes / 60;
      minutes %= 60;
      out = std::to_string(minutes) + "m" + out;
      if (hours > 0) out = std::to_string(hours) + "h" + out;
    }
  }
  return negative ? "-" + out : out;
}

std::string invalid_duration_text(std::string_view text) {
  return "time: invalid duration \"" + std::string(text) + "\"";
}

}  // namespace hamisim::go
