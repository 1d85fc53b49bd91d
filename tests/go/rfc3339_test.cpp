// time.RFC3339: formatting in UTC and in local time, and parsing.

#include "go/rfc3339.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace hamisim::go {
namespace {

using std::chrono::system_clock;

TEST(Rfc3339, FormatsUtcWholeSeconds) {
  EXPECT_EQ(
      format_rfc3339_utc(system_clock::from_time_t(1777600800) + std::chrono::milliseconds(999)),
      "2026-05-01T02:00:00Z");
  EXPECT_EQ(format_rfc3339_utc(system_clock::from_time_t(0)), "1970-01-01T00:00:00Z");
}

TEST(Rfc3339, FormatsLocalTimeWithItsOffset) {
  const char* old = std::getenv("TZ");
  const std::string saved = old ? old : "";
  setenv("TZ", "Asia/Shanghai", 1);
  tzset();
  const std::string shanghai = format_rfc3339_local(system_clock::from_time_t(1777600800));
  setenv("TZ", "UTC", 1);
  tzset();
  const std::string utc = format_rfc3339_local(system_clock::from_time_t(1777600800));
  if (old) {
    setenv("TZ", saved.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
  EXPECT_EQ(shanghai, "2026-05-01T10:00:00+08:00");
  EXPECT_EQ(utc, "2026-05-01T02:00:00Z");
}

TEST(Rfc3339, ParsesOffsetsAndFractions) {
  const int64_t utc = 1777600800;  // 2026-05-01T02:00:00Z
  for (const char* text : {"2026-05-01T02:00:00Z", "2026-05-01t02:00:00z",
                           "2026-05-01T10:00:00+08:00", "2026-04-30T21:30:00-04:30"}) {
    const auto t = parse_rfc3339(text);
    ASSERT_TRUE(t.has_value()) << text;
    EXPECT_EQ(t->unix_seconds, utc) << text;
    EXPECT_EQ(t->nanos, 0) << text;
  }
  const auto frac = parse_rfc3339("2026-05-01T02:00:00.123456789123Z");
  ASSERT_TRUE(frac.has_value());
  EXPECT_EQ(frac->unix_seconds, utc);
  EXPECT_EQ(frac->nanos, 123456789);
  EXPECT_EQ(frac->year, 2026);
}

TEST(Rfc3339, RefusesWhatIsNotRfc3339) {
  for (const char* bad :
       {"", "2026-05-01", "2026-05-01 02:00:00Z", "2026-13-01T02:00:00Z", "2026-05-01T24:00:00Z",
        "2026-05-01T02:00:00", "2026-05-01T02:00:00+0800", "2026-05-01T02:00:00+24:00",
        "2026-05-01T02:00:00.Z", "x026-05-01T02:00:00Z", "2026-05-01T02:00:00Z trailing",
        "2026-05-01T-1:00:00Z"}) {
    EXPECT_FALSE(parse_rfc3339(bad).has_value()) << bad;
  }
}

TEST(Rfc3339, AgreesWithGmtime) {
  for (std::time_t s = -2208988800; s < 4102444800; s += 37 * 3600 + 61) {
    std::tm tm{};
    gmtime_r(&s, &tm);
    char text[64];
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    const auto t = parse_rfc3339(text);
    ASSERT_TRUE(t.has_value()) << text;
    ASSERT_EQ(t->unix_seconds, s) << text;
    ASSERT_EQ(format_rfc3339_utc(system_clock::from_time_t(s)), text);
  }
}

}  // namespace
}  // namespace hamisim::go
