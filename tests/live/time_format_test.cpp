// The time texts HAMi writes: RFC 3339 lock times and handshake times (Go durations and the
// RFC 3339 grammar itself are tested in tests/go).

#include "live/time_format.h"

#include "go/rfc3339.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace hamisim::live {
namespace {

using namespace std::chrono;

TEST(TimeFormat, Rfc3339RoundTripsInLocalTime) {
  const WallTime t = system_clock::from_time_t(1777600000);  // whole seconds
  const std::string text = go::format_rfc3339_local(t);
  ASSERT_EQ(text.size() >= 20, true) << text;
  EXPECT_EQ(parse_rfc3339(text), t) << text;
}

TEST(TimeFormat, Rfc3339AcceptsOffsetsAndFractions) {
  const WallTime utc = system_clock::from_time_t(1777600800);  // 2026-05-01T02:00:00Z
  EXPECT_EQ(parse_rfc3339("2026-05-01T02:00:00Z"), utc);
  EXPECT_EQ(parse_rfc3339("2026-05-01T10:00:00+08:00"), utc);
  EXPECT_EQ(parse_rfc3339("2026-04-30T21:30:00-04:30"), utc);
  EXPECT_EQ(parse_rfc3339("2026-05-01T02:00:00.123456789Z"), utc);
}

TEST(TimeFormat, Rfc3339RejectsGarbage) {
  for (const char* bad :
       {"5026-05-01T10:00:00Z", "1066-10-14T09:00:00Z", "", "2026-05-01", "2026-05-01 02:00:00Z",
        "2026-13-01T02:00:00Z", "2026-05-01T02:00:00", "2026-05-01T02:00:00+0800",
        "2026-05-01T02:00:00.Z", "x026-05-01T02:00:00Z", "2026-05-01T02:00:00Z trailing"}) {
    EXPECT_FALSE(parse_rfc3339(bad).has_value()) << bad;
  }
}

TEST(TimeFormat, HandshakeTimeRoundTrips) {
  const WallTime t = system_clock::from_time_t(1777600000);
  const std::string text = format_handshake_time(t);
  EXPECT_EQ(text.size(), 19u);
  EXPECT_EQ(text[10], ' ');
  EXPECT_EQ(parse_handshake_time(text), t);
  EXPECT_FALSE(parse_handshake_time("2026-05-01T02:00:00").has_value());
  EXPECT_FALSE(parse_handshake_time("yesterday").has_value());
  EXPECT_FALSE(parse_handshake_time("5026-05-01 10:00:00").has_value());  // fuzzer: overflow
}

TEST(TimeFormat, Rfc3339AgreesWithGmtimeFrom1900To2100) {
  // parse_rfc3339 does its own calendar arithmetic (no timegm): every 37 hours, leap days and
  // dates before 1970 included.
  for (std::time_t s = -2208988800; s < 4102444800; s += 37 * 3600 + 61) {
    std::tm tm{};
    gmtime_r(&s, &tm);
    char text[64];
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    ASSERT_EQ(parse_rfc3339(text), system_clock::from_time_t(s)) << text;
  }
}

TEST(TimeFormat, HandshakeTimeAgreesWithMktimeAcrossDaylightSavingChanges) {
  // parse_handshake_time does not call mktime (it is not thread-safe as far as TSan can see);
  // it must read local time as mktime does, DST changes included.
  const char* old = std::getenv("TZ");
  const std::string saved = old ? old : "";
  for (const char* zone : {"Europe/Berlin", "America/New_York", "UTC"}) {
    setenv("TZ", zone, 1);
    tzset();
    for (std::time_t s = 1767225600; s < 1798761600; s += 1800) {  // 2026, every 30 min
      const std::string text = format_handshake_time(system_clock::from_time_t(s));
      std::tm tm{};
      ASSERT_EQ(std::sscanf(text.c_str(), "%d-%d-%d %d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                            &tm.tm_hour, &tm.tm_min, &tm.tm_sec),
                6);
      tm.tm_year -= 1900;
      tm.tm_mon -= 1;
      tm.tm_isdst = -1;
      const std::time_t want = std::mktime(&tm);
      EXPECT_EQ(parse_handshake_time(text), system_clock::from_time_t(want)) << zone << " " << text;
    }
  }
  if (old) {
    setenv("TZ", saved.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}

TEST(TimeFormat, UnixSeconds) {
  EXPECT_EQ(unix_seconds(system_clock::from_time_t(1777600000) + milliseconds(999)), "1777600000");
}

}  // namespace
}  // namespace hamisim::live
