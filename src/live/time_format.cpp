#include "live/time_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <ctime>
#include <limits>

namespace hamisim::live {
namespace {

std::tm local_tm(std::time_t s) {
  std::tm tm{};
  localtime_r(&s, &tm);
  return tm;
}

std::tm local_tm(WallTime t) {
  return local_tm(std::chrono::system_clock::to_time_t(t));
}

// timegm without timegm (H. Hinnant's days_from_civil): pure arithmetic. glibc's timegm and
// mktime write process-wide state on every call (timegm's offset cache; mktime re-reads TZ
// and reallocates it) under locks TSan cannot see, so concurrent callers (binds parsing node
// locks, two registration passes) are reported as data races.
std::time_t utc_seconds(const std::tm& tm) {
  const unsigned m = static_cast<unsigned>(tm.tm_mon + 1);
  const long long y = tm.tm_year + 1900LL - (m <= 2 ? 1 : 0);
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const long long yoe = y - era * 400;
  const long long doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + tm.tm_mday - 1;
  const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const long long days = era * 146097 + doe - 719468;
  return static_cast<std::time_t>(days * 86400 + tm.tm_hour * 3600LL + tm.tm_min * 60LL +
                                  tm.tm_sec);
}

// mktime (tm_isdst = -1) without mktime: the fields read as UTC, shifted by the zone's offset
// in effect a day before or a day after (DST changes are further apart). An offset is right
// when the instant it gives has that offset; when both are (the repeated hour after a DST
// end) the earlier instant wins, as glibc's mktime chooses; when neither is (the hour skipped
// at a DST start) the offset before the change is used.
std::time_t local_seconds(const std::tm& tm) {
  const std::time_t as_utc = utc_seconds(tm);
  const long before = local_tm(as_utc - 86400).tm_gmtoff;
  const long after = local_tm(as_utc + 86400).tm_gmtoff;
  const std::time_t a = as_utc - before;
  const std::time_t b = as_utc - after;
  const bool a_ok = local_tm(a).tm_gmtoff == before;
  const bool b_ok = local_tm(b).tm_gmtoff == after;
  if (a_ok && b_ok) return std::min(a, b);
  if (b_ok) return b;
  return a;
}

// Parses exactly `n` digits at text[pos].
bool digits(std::string_view text, size_t pos, size_t n, int& out) {
  if (pos + n > text.size()) return false;
  auto [p, ec] = std::from_chars(text.data() + pos, text.data() + pos + n, out);
  return ec == std::errc() && p == text.data() + pos + n;
}

// Parses "YYYY-MM-DD?HH:MM:SS" (the separator at index 10 is checked by the caller).
bool date_time(std::string_view text, std::tm& tm) {
  int y, mo, d, h, mi, s;
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[13] != ':' || text[16] != ':' ||
      !digits(text, 0, 4, y) || !digits(text, 5, 2, mo) || !digits(text, 8, 2, d) ||
      !digits(text, 11, 2, h) || !digits(text, 14, 2, mi) || !digits(text, 17, 2, s)) {
    return false;
  }
  // Years outside what system_clock's nanoseconds hold (1678-2262) would overflow; no lock or
  // handshake written by a running cluster is that far off.
  if (y < 1900 || y > 2200) return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return false;
  tm = std::tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return true;
}

}  // namespace

std::string format_rfc3339_local(WallTime t) {
  const std::tm tm = local_tm(t);
  std::string out = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", tm.tm_year + 1900,
                                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  const long off = tm.tm_gmtoff;
  if (off == 0) return out + "Z";
  const long a = off < 0 ? -off : off;
  return out + fmt::format("{}{:02}:{:02}", off < 0 ? '-' : '+', a / 3600, a % 3600 / 60);
}

std::optional<WallTime> parse_rfc3339(std::string_view text) {
  std::tm tm;
  if (text.size() < 20 || (text[10] != 'T' && text[10] != 't') || !date_time(text, tm)) {
    return std::nullopt;
  }
  size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == start) return std::nullopt;
  }
  long offset = 0;
  const std::string_view zone = text.substr(pos);
  if (zone == "Z" || zone == "z") {
    offset = 0;
  } else {
    int h, m;
    if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || zone[3] != ':' ||
        !digits(zone, 1, 2, h) || !digits(zone, 4, 2, m) || h > 23 || m > 59) {
      return std::nullopt;
    }
    offset = (zone[0] == '-' ? -1 : 1) * (h * 3600L + m * 60L);
  }
  const std::time_t utc = utc_seconds(tm);
  return std::chrono::system_clock::from_time_t(utc - offset);
}

std::string format_handshake_time(WallTime t) {
  const std::tm tm = local_tm(t);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::optional<WallTime> parse_handshake_time(std::string_view text) {
  std::tm tm;
  if (text.size() != 19 || text[10] != ' ' || !date_time(text, tm)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(local_seconds(tm));
}

std::string format_go_duration(std::chrono::milliseconds d) {
  long long ms = d.count();
  if (ms == 0) return "0s";
  std::string sign = ms < 0 ? "-" : "";
  if (ms < 0) ms = -ms;
  if (ms < 1000) return fmt::format("{}{}ms", sign, ms);
  // Seconds with the fraction's trailing zeros trimmed, as Go prints them.
  std::string seconds = std::to_string(ms / 1000 % 60);
  if (ms % 1000 != 0) {
    std::string frac = fmt::format("{:03}", ms % 1000);
    while (frac.back() == '0') frac.pop_back();
    seconds += "." + frac;
  }
  const long long minutes = ms / 60000;
  if (minutes == 0) return sign + seconds + "s";
  if (minutes < 60) return fmt::format("{}{}m{}s", sign, minutes, seconds);
  return fmt::format("{}{}h{}m{}s", sign, minutes / 60, minutes % 60, seconds);
}

Result<std::chrono::milliseconds> parse_go_duration(std::string_view text) {
  auto bad = [&] {
    return make_error("invalid duration \"" + std::string(text) +
                      "\" (use e.g. 5m, 28s, 1m30s, 300ms)");
  };
  if (text == "0") return std::chrono::milliseconds(0);
  if (text.empty()) return bad();
  // Integer arithmetic in nanoseconds, as Go does: "1.001s" must be exactly 1001 ms.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t total_ns = 0;
  size_t pos = 0;
  auto is_digit = [&](size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  while (pos < text.size()) {
    int64_t whole = 0;
    const size_t whole_start = pos;
    for (; is_digit(pos); ++pos) {
      if (whole > (kMax - 9) / 10) return bad();
      whole = whole * 10 + (text[pos] - '0');
    }
    bool has_whole = pos > whole_start;
    int64_t frac = 0, scale = 1;
    bool has_frac = false;
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      for (; is_digit(pos); ++pos) {
        has_frac = true;
        if (scale < 1'000'000'000) {  // digits beyond nanoseconds cannot matter
          frac = frac * 10 + (text[pos] - '0');
          scale *= 10;
        }
      }
    }
    if (!has_whole && !has_frac) return bad();
    const size_t unit_start = pos;
    while (pos < text.size() && ((text[pos] >= 'a' && text[pos] <= 'z'))) ++pos;
    const std::string_view unit = text.substr(unit_start, pos - unit_start);
    int64_t unit_ns;
    if (unit == "h") {
      unit_ns = 3'600'000'000'000;
    } else if (unit == "m") {
      unit_ns = 60'000'000'000;
    } else if (unit == "s") {
      unit_ns = 1'000'000'000;
    } else if (unit == "ms") {
      unit_ns = 1'000'000;
    } else {
      return bad();
    }
    if (whole > kMax / unit_ns) return bad();
    // frac < scale <= 1e9 and unit_ns <= 3.6e12: frac * (unit_ns / scale) stays far below kMax.
    const int64_t part =
        whole * unit_ns + frac * (unit_ns / scale) + frac * (unit_ns % scale) / scale;
    if (part > kMax - total_ns) return bad();
    total_ns += part;
  }
  return std::chrono::milliseconds(total_ns / 1'000'000);
}

std::string unix_seconds(WallTime t) {
  return std::to_string(
      std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
}

}  // namespace hamisim::live
