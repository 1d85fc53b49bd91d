// utf8.DecodeRune, unicode.IsSpace and strings.TrimSpace.

#include "go/utf8.h"

#include <gtest/gtest.h>

namespace hamisim::go {
namespace {

TEST(Utf8, DecodesValidRunesAndRefusesTheRest) {
  uint32_t r = 0;
  EXPECT_EQ(decode_utf8_rune("a", 0, &r), 1u);
  EXPECT_EQ(r, 'a');
  EXPECT_EQ(decode_utf8_rune("\xC4\xB0", 0, &r), 2u);
  EXPECT_EQ(r, 0x130u);
  EXPECT_EQ(decode_utf8_rune("\xE2\x84\xAA", 0, &r), 3u);
  EXPECT_EQ(r, 0x212Au);
  EXPECT_EQ(decode_utf8_rune("\xF0\x9F\x98\x80", 0, &r), 4u);
  EXPECT_EQ(r, 0x1F600u);
  for (std::string_view bad :
       {"\x80", "\xC0\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x84"}) {
    EXPECT_EQ(decode_utf8_rune(bad, 0, &r), 0u);
  }
}

TEST(Utf8, TrimSpaceTrimsUnicodeWhiteSpace) {
  EXPECT_EQ(trim_space(" \t\n a b \v\f\r"), "a b");
  EXPECT_EQ(trim_space("\xC2\xA0"
                       "x"
                       "\xE3\x80\x80"),
            "x");  // NBSP, ideographic space
  EXPECT_EQ(trim_space("\xE2\x80\x8B"
                       "x"),
            "\xE2\x80\x8B"
            "x");  // zero width: not a space
  EXPECT_EQ(trim_space("   "), "");
  EXPECT_TRUE(is_space(0x2000));
  EXPECT_TRUE(is_space(0x85));
  EXPECT_FALSE(is_space(0x200B));
}

}  // namespace
}  // namespace hamisim::go
