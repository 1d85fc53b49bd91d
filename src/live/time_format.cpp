#include "live/time_format.h"

#include <fmt/format.h>

#include "go/rfc3339.h"

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

// timegm without timegm: glibc's timegm and mktime write process-wide state on every call
// (timegm's offset cache; mktime re-reads TZ and reallocates it) under locks TSan cannot see,
// so concurrent callers (binds parsing node locks, two registration passes) are reported as
// data races.
std::time_t utc_seconds(const std::tm& tm) {
  return static_cast<std::time_t>(go::unix_seconds_of(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                                                      tm.tm_hour, tm.tm_min, tm.tm_sec));
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

std::optional<WallTime> parse_rfc3339(std::string_view text) {
  const auto t = go::parse_rfc3339(text);
  // Years outside what system_clock's nanoseconds hold (1678-2262) would overflow; no lock
  // written by a running cluster is that far off. HAMi writes whole seconds.
  if (!t || t->year < 1900 || t->year > 2200) return std::nullopt;
  return std::chrono::system_clock::from_time_t(static_cast<std::time_t>(t->unix_seconds));
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

std::string unix_seconds(WallTime t) {
  return std::to_string(
      std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
}

}  // namespace hamisim::live
