#pragma once
// Go's time.RFC3339 texts: how Kubernetes writes times (metav1.Time, UTC, whole seconds) and
// how HAMi writes its lock annotations (time.Now().Format(time.RFC3339), local time).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hamisim::go {

using WallTime = std::chrono::system_clock::time_point;

// "2026-05-01T02:00:00Z": UTC, whole seconds (metav1.Time's MarshalJSON).
std::string format_rfc3339_utc(WallTime t);
// "2026-05-01T10:00:00+08:00" ("...Z" where the offset is 0): the process's local time zone,
// whole seconds (time.Now().Format(time.RFC3339)).
std::string format_rfc3339_local(WallTime t);

// An RFC 3339 time as written: seconds since the Unix epoch and the fraction's nanoseconds.
struct Rfc3339Time {
  int64_t unix_seconds = 0;
  int32_t nanos = 0;  // 0..999999999; digits beyond nanoseconds are dropped
  int year = 0;
};
// "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)", 'T' and 'Z' in either case; month, day, hour,
// minute, second (up to 60) and offset (hours up to 23) in range. Calendar arithmetic is done
// here, not with timegm or mktime (they write process-wide state that races under TSan).
std::optional<Rfc3339Time> parse_rfc3339(std::string_view text);

// Seconds since the epoch of a UTC calendar date and time (no range checks).
int64_t unix_seconds_of(int year, int month, int day, int hour, int minute, int second);

}  // namespace hamisim::go
