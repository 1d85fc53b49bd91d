// strconv.Quote, as Go error texts and klog lines show strings.

#include "go/quote.h"

#include <gtest/gtest.h>

namespace hamisim::go {
namespace {

TEST(Quote, EscapesAsStrconvQuote) {
  EXPECT_EQ(quote(""), "\"\"");
  EXPECT_EQ(quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(quote("\a\b\f\n\r\t\v"), "\"\\a\\b\\f\\n\\r\\t\\v\"");
  EXPECT_EQ(quote(std::string_view("\x00\x1f\x7f", 3)), "\"\\x00\\x1f\\x7f\"");
  EXPECT_EQ(quote("gpu-\xC3\xA9"), "\"gpu-\xC3\xA9\"");                // printable: kept
  EXPECT_EQ(quote("\xC2\x85\xC2\xA0"), "\"\\u0085\\u00a0\"");          // C1 and NBSP: escaped
  EXPECT_EQ(quote("\xE2\x80\x8B\xEF\xBB\xBF"), "\"\\u200b\\ufeff\"");  // invisible
  EXPECT_EQ(quote("\xF0\x9F\x98\x80"), "\"\xF0\x9F\x98\x80\"");        // above the BMP: kept
  EXPECT_EQ(quote("a\xFFz"), "\"a\\xffz\"");                           // invalid UTF-8 byte
}

TEST(Quote, AppendsToWhatIsThere) {
  std::string out = "key=";
  append_quoted(out, "v 1");
  EXPECT_EQ(out, "key=\"v 1\"");
}

}  // namespace
}  // namespace hamisim::go
