// time.ParseDuration and Duration.String.

#include "go/duration.h"

#include <gtest/gtest.h>

namespace hamisim::go {
namespace {

using namespace std::chrono;
using namespace std::chrono_literals;

TEST(Duration, ParsesGoDurations) {
  EXPECT_EQ(*parse_duration("5m"), minutes(5));
  EXPECT_EQ(*parse_duration("28s"), seconds(28));
  EXPECT_EQ(*parse_duration("1m30s"), seconds(90));
  EXPECT_EQ(*parse_duration("1.5s"), milliseconds(1500));
  EXPECT_EQ(*parse_duration("300ms"), milliseconds(300));
  EXPECT_EQ(*parse_duration("1500us"), microseconds(1500));
  EXPECT_EQ(*parse_duration("1500\xC2\xB5s"), microseconds(1500));  // µ (micro sign)
  EXPECT_EQ(*parse_duration("1500\xCE\xBCs"), microseconds(1500));  // μ (Greek mu)
  EXPECT_EQ(*parse_duration("10ns"), nanoseconds(10));
  EXPECT_EQ(*parse_duration("0"), nanoseconds(0));
  EXPECT_EQ(*parse_duration("-0"), nanoseconds(0));
  EXPECT_EQ(*parse_duration("1h"), hours(1));
  EXPECT_EQ(*parse_duration("-1.5h"), -minutes(90));
  EXPECT_EQ(*parse_duration("+2h45m"), minutes(165));
  EXPECT_EQ(*parse_duration("1.001s"), milliseconds(1001));
  EXPECT_EQ(*parse_duration("1.ms1s"), milliseconds(1001));
  EXPECT_EQ(*parse_duration(".5m"), seconds(30));
  EXPECT_EQ(*parse_duration("2562047h47m16.854775807s"), nanoseconds(INT64_MAX));
  for (const char* bad : {"", "5", "m", "5x", "5 m", "1e3s", "99999999999h", ".s", "1.5", "-", "+",
                          "5S", "2562047h47m16.854775808s"}) {
    EXPECT_FALSE(parse_duration(bad).has_value()) << bad;
  }
  EXPECT_EQ(invalid_duration_text("5 m"), "time: invalid duration \"5 m\"");
}

TEST(Duration, FormatsAsDurationString) {
  EXPECT_EQ(format_duration(nanoseconds(0)), "0s");
  EXPECT_EQ(format_duration(nanoseconds(10)), "10ns");
  EXPECT_EQ(format_duration(nanoseconds(1200)), "1.2\xC2\xB5s");
  EXPECT_EQ(format_duration(milliseconds(300)), "300ms");
  EXPECT_EQ(format_duration(milliseconds(1500)), "1.5s");
  EXPECT_EQ(format_duration(seconds(28)), "28s");
  EXPECT_EQ(format_duration(minutes(5)), "5m0s");
  EXPECT_EQ(format_duration(seconds(90)), "1m30s");
  EXPECT_EQ(format_duration(hours(1)), "1h0m0s");
  EXPECT_EQ(format_duration(-milliseconds(1500)), "-1.5s");
  EXPECT_EQ(format_duration(nanoseconds(INT64_MIN)), "-2562047h47m16.854775808s");
}

TEST(Duration, WhatFormatsParsesBack) {
  for (int64_t ns : {int64_t{1}, int64_t{999}, int64_t{1001}, int64_t{1234567}, int64_t{1001000000},
                     int64_t{3723004005006}, INT64_MAX}) {
    EXPECT_EQ(parse_duration(format_duration(nanoseconds(ns))), nanoseconds(ns)) << ns;
  }
}

// The cases the scheduler configuration's httpTimeout was tested with.
TEST(GoDuration, ParsesGoSyntax) {
  struct Case {
    const char* text;
    std::chrono::nanoseconds want;
  } cases[] = {
      {"5s", 5s},
      {"1m30s", 90s},
      {"500ms", 500ms},
      {"0", 0ns},
      {"0s", 0ns},
      {"1.5h", 90min},
      {"-2s", -2s},
      {"+3ms", 3ms},
      {"300us", 300us},
      {"1\xC2\xB5s", 1us},
      {"1\xCE\xBCs", 1us},
      {"10ns", 10ns},
      {".5s", 500ms},
      {"1.s", 1s},
      {"1h2m3s4ms", 1h + 2min + 3s + 4ms},
      {"2562047h47m16.854775807s", std::chrono::nanoseconds(INT64_MAX)},
  };
  for (const auto& c : cases) {
    auto d = parse_duration(c.text);
    ASSERT_TRUE(d) << c.text;
    EXPECT_EQ(d->count(), c.want.count()) << c.text;
  }
}

TEST(GoDuration, RejectsWhatGoRejects) {
  for (const char* text : {"", "5", "s", ".s", "30 seconds", "1d", "5S", "-", "1.2.3s", " 5s",
                           "9223372036854775808ns", "2562048h"}) {
    EXPECT_FALSE(parse_duration(text)) << text;
  }
}

TEST(GoDuration, FormatsLikeGo) {
  EXPECT_EQ(format_duration(0ns), "0s");
  EXPECT_EQ(format_duration(5s), "5s");
  EXPECT_EQ(format_duration(90s), "1m30s");
  EXPECT_EQ(format_duration(500ms), "500ms");
  EXPECT_EQ(format_duration(1500ms), "1.5s");
  EXPECT_EQ(format_duration(2h), "2h0m0s");
  EXPECT_EQ(format_duration(1500ns), "1.5\xC2\xB5s");
  EXPECT_EQ(format_duration(-2s), "-2s");
}

}  // namespace
}  // namespace hamisim::go
