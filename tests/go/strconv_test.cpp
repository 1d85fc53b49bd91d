// Go's strconv rules: ParseInt/ParseUint/Atoi (base 10 and base 0) and ParseBool.

#include "go/strconv.h"

#include <gtest/gtest.h>

namespace hamisim::go {
namespace {

TEST(Strconv, ParseIntBase10) {
  int64_t v = 0;
  EXPECT_EQ(parse_int("42", 64, &v), NumError::kNone);
  EXPECT_EQ(v, 42);
  EXPECT_EQ(parse_int("-9223372036854775808", 64, &v), NumError::kNone);
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_EQ(parse_int("+7", 64, &v), NumError::kNone);
  EXPECT_EQ(v, 7);
  EXPECT_EQ(parse_int("010", 64, &v), NumError::kNone);  // base 10: leading zeros are fine
  EXPECT_EQ(v, 10);
  EXPECT_EQ(parse_int("9223372036854775808", 64, &v), NumError::kRange);
  EXPECT_EQ(parse_int("2147483648", 32, &v), NumError::kRange);
  EXPECT_EQ(parse_int("-2147483648", 32, &v), NumError::kNone);
  for (const char* bad : {"", "-", "1.0", "1e3", " 1", "0x10", "1_000"}) {
    EXPECT_EQ(parse_int(bad, 64, &v), NumError::kSyntax) << bad;
  }
}

TEST(Strconv, ParseUintReportsOverflowBeforeLaterSyntax) {
  uint64_t v = 0;
  EXPECT_EQ(parse_uint("18446744073709551615", 64, &v), NumError::kNone);
  EXPECT_EQ(parse_uint("18446744073709551616", 64, &v), NumError::kRange);
  EXPECT_EQ(parse_uint("99999999999999999999x", 64, &v), NumError::kRange);
  EXPECT_EQ(parse_uint("-1", 64, &v), NumError::kSyntax);
}

TEST(Strconv, ParseIntBase0AsPflagReadsIntegers) {
  int64_t v = 0;
  EXPECT_TRUE(parse_int_base0("0x1F", &v));
  EXPECT_EQ(v, 31);
  EXPECT_TRUE(parse_int_base0("0o17", &v));
  EXPECT_EQ(v, 15);
  EXPECT_TRUE(parse_int_base0("017", &v));
  EXPECT_EQ(v, 15);
  EXPECT_TRUE(parse_int_base0("0b101", &v));
  EXPECT_EQ(v, 5);
  EXPECT_TRUE(parse_int_base0("0x_1f", &v));
  EXPECT_EQ(v, 31);
  EXPECT_TRUE(parse_int_base0("-1_000", &v));
  EXPECT_EQ(v, -1000);
  for (const char* bad : {"", "_1", "1__2", "1_", "0x", "0x__1", "08", "abc"}) {
    EXPECT_FALSE(parse_int_base0(bad, &v)) << bad;
  }
}

TEST(Strconv, NumErrorText) {
  EXPECT_EQ(num_error_text("ParseInt", "x", NumError::kSyntax),
            "strconv.ParseInt: parsing \"x\": invalid syntax");
  EXPECT_EQ(num_error_text("Atoi", "99999999999999999999", NumError::kRange),
            "strconv.Atoi: parsing \"99999999999999999999\": value out of range");
}

TEST(Strconv, ParseBool) {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"}) {
    bool b = false;
    EXPECT_TRUE(parse_bool(t, &b)) << t;
    EXPECT_TRUE(b) << t;
  }
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"}) {
    bool b = true;
    EXPECT_TRUE(parse_bool(f, &b)) << f;
    EXPECT_FALSE(b) << f;
  }
  for (const char* bad : {"", "yes", "on", "tRUE", " true", "2"}) {
    bool b = false;
    EXPECT_FALSE(parse_bool(bad, &b)) << bad;
  }
}

}  // namespace
}  // namespace hamisim::go
