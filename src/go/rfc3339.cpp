#include "go/rfc3339.h"

#include <ctime>

namespace hamisim::go {
namespace {

// Parses exactly `n` digits at text[pos].
bool digits(std::string_view text, size_t pos, size_t n, int& out) {
  if (pos + n > text.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    out = out * 10 + (text[i] - '0');
  }
  return true;
}

void two(std::string& out, int v) {
  out += static_cast<char>('0' + v / 10 % 10);
  out += static_cast<char>('0' + v % 10);
}

// "YYYY-MM-DDTHH:MM:SS" of a broken-down time.
std::string date_time(const std::tm& tm) {
  std::string out;
  out.reserve(25);
  const int year = tm.tm_year + 1900;
  two(out, year / 100);
  two(out, year % 100);
  out += '-';
  two(out, tm.tm_mon + 1);
  out += '-';
  two(out, tm.tm_mday);
  out += 'T';
  two(out, tm.tm_hour);
  out += ':';
  two(out, tm.tm_min);
  out += ':';
  two(out, tm.tm_sec);
  return out;
}

}  // namespace

// H. Hinnant's days_from_civil: pure arithmetic.
int64_t unix_seconds_of(int year, int month, int day, int hour, int minute, int second) {
  const unsigned m = static_cast<unsigned>(month);
  const long long y = year - (m <= 2 ? 1 : 0);
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const long long yoe = y - era * 400;
  const long long doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + day - 1;
  const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const long long days = era * 146097 + doe - 719468;
  return days * 86400 + hour * 3600LL + minute * 60LL + second;
}

std::string format_rfc3339_utc(WallTime t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return date_time(tm) + "Z";
}

std::string format_rfc3339_local(WallTime t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&secs, &tm);
  std::string out = date_time(tm);
  const long off = tm.tm_gmtoff;
  if (off == 0) return out + "Z";
  const long a = off < 0 ? -off : off;
  out += off < 0 ? '-' : '+';
  two(out, static_cast<int>(a / 3600));
  out += ':';
  two(out, static_cast<int>(a % 3600 / 60));
  return out;
}

std::optional<Rfc3339Time> parse_rfc3339(std::string_view t) {
  int year, month, day, hour, minute, second;
  if (t.size() < 20 || !digits(t, 0, 4, year) || t[4] != '-' || !digits(t, 5, 2, month) ||
      t[7] != '-' || !digits(t, 8, 2, day) || (t[10] != 'T' && t[10] != 't') ||
      !digits(t, 11, 2, hour) || t[13] != ':' || !digits(t, 14, 2, minute) || t[16] != ':' ||
      !digits(t, 17, 2, second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  size_t pos = 19;
  int64_t nanos = 0;
  if (pos < t.size() && t[pos] == '.') {
    ++pos;
    int64_t scale = 100000000;
    const size_t start = pos;
    while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9') {
      nanos += (t[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  int64_t offset = 0;
  const std::string_view zone = t.substr(pos);
  if (zone != "Z" && zone != "z") {
    int h, m;
    if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || zone[3] != ':' ||
        !digits(zone, 1, 2, h) || !digits(zone, 4, 2, m) || h > 23 || m > 59) {
      return std::nullopt;
    }
    offset = (zone[0] == '-' ? -1 : 1) * (h * 3600LL + m * 60LL);
  }
  Rfc3339Time out;
  out.unix_seconds = unix_seconds_of(year, month, day, hour, minute, second) - offset;
  out.nanos = static_cast<int32_t>(nanos);
  out.year = year;
  return out;
}

}  // namespace hamisim::go
