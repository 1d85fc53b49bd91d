// encoding/json's string escaping and its key folding.

#include <gtest/gtest.h>

#include "go/json_key.h"
#include "go/json_string.h"

namespace hamisim::go {
namespace {

std::string json(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

TEST(JsonString, EscapesAsJsonMarshal) {
  EXPECT_EQ(json("plain"), "\"plain\"");
  EXPECT_EQ(json("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(json("\x01\x1f"), "\"\\u0001\\u001f\"");
  EXPECT_EQ(json("<a>&"), "\"\\u003ca\\u003e\\u0026\"");
  EXPECT_EQ(json("\xE2\x80\xA8\xE2\x80\xA9"), "\"\\u2028\\u2029\"");
  EXPECT_EQ(json("\x7f"), "\"\x7f\"");
  EXPECT_EQ(json("a\xFFz"), "\"a\\ufffdz\"");
  EXPECT_EQ(json("\xC3\xA9"), "\"\xC3\xA9\"");
}

TEST(JsonKey, MatchesExactlyOrAfterGoFolding) {
  EXPECT_TRUE(json_key_matches("name", "name"));
  EXPECT_TRUE(json_key_matches("NAME", "name"));
  EXPECT_TRUE(json_key_matches("nAmE", "Name"));
  EXPECT_FALSE(json_key_matches("names", "name"));
  EXPECT_FALSE(json_key_matches("nam", "name"));
  EXPECT_FALSE(json_key_matches("", "name"));
  EXPECT_TRUE(json_key_matches("", ""));
}

TEST(JsonKey, TheFourNonAsciiRunesThatFoldOntoAsciiLetters) {
  EXPECT_TRUE(
      json_key_matches("\xC4\xB0"
                       "d",
                       "id"));  // U+0130 İ
  EXPECT_TRUE(
      json_key_matches("\xC4\xB1"
                       "d",
                       "id"));  // U+0131 ı
  EXPECT_TRUE(
      json_key_matches("\xC5\xBF"
                       "core",
                       "score"));  // U+017F ſ
  EXPECT_TRUE(
      json_key_matches("\xE2\x84\xAA"
                       "ind",
                       "kind"));  // U+212A Kelvin sign
  EXPECT_FALSE(
      json_key_matches("\xC3\xAF"
                       "d",
                       "id"));  // ï folds to no ASCII letter
  EXPECT_FALSE(
      json_key_matches("\xC4"
                       "d",
                       "id"));  // invalid UTF-8
  EXPECT_FALSE(
      json_key_matches("\xC4\xB0"
                       "d",
                       "sd"));
}

}  // namespace
}  // namespace hamisim::go
