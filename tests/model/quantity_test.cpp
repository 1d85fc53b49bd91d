#include "model/quantity.h"

#include <gtest/gtest.h>

#include <limits>

namespace hamisim::model {
namespace {

constexpr __int128 kNano = 1;
constexpr __int128 kUnit = 1'000'000'000;

__int128 nanos_of(std::string_view text) {
  auto q = Quantity::parse(text);
  EXPECT_TRUE(q.ok()) << text << ": " << (q.ok() ? "" : q.error().message);
  return q.ok() ? q->nanos() : -12345;
}

struct ParseCase {
  const char* text;
  __int128 nanos;
};

class QuantityParsesTest : public ::testing::TestWithParam<ParseCase> {};

TEST_P(QuantityParsesTest, ToExactNanoUnits) {
  const auto& c = GetParam();
  EXPECT_TRUE(nanos_of(c.text) == c.nanos) << c.text;
}

INSTANTIATE_TEST_SUITE_P(
    KubernetesGrammar, QuantityParsesTest,
    ::testing::Values(
        ParseCase{"0", 0}, ParseCase{"1", kUnit}, ParseCase{"+1", kUnit}, ParseCase{"-1", -kUnit},
        ParseCase{"007", 7 * kUnit}, ParseCase{"1.5", 1'500'000'000}, ParseCase{".5", kUnit / 2},
        ParseCase{"5.", 5 * kUnit}, ParseCase{"1.G", kUnit* kUnit}, ParseCase{"100m", 100'000'000},
        ParseCase{"1n", kNano}, ParseCase{"1u", 1000}, ParseCase{"1k", 1000 * kUnit},
        ParseCase{"1M", 1'000'000 * kUnit}, ParseCase{"1G", kUnit* kUnit},
        ParseCase{"1T", kUnit * 1000 * kUnit}, ParseCase{"9P", kUnit * 9'000'000'000'000'000},
        ParseCase{"0.001E", kUnit* kUnit * 1'000'000}, ParseCase{"1Ki", 1024 * kUnit},
        ParseCase{"1Mi", 1048576 * kUnit}, ParseCase{"16Gi", 17179869184 * kUnit},
        ParseCase{"2Ti", (__int128{2} << 40) * kUnit},
        ParseCase{"1Pi", (__int128{1} << 50) * kUnit}, ParseCase{"0.5Ki", 512 * kUnit},
        ParseCase{"1.5Gi", 1610612736 * kUnit}, ParseCase{"0.1Ki", 102'400'000'000},
        ParseCase{"1e3", 1000 * kUnit}, ParseCase{"1E3", 1000 * kUnit},
        ParseCase{"1e+3", 1000 * kUnit}, ParseCase{"1E-3", 1'000'000},
        ParseCase{"1.5e3", 1500 * kUnit}, ParseCase{"-1.5e-9", -2},
        ParseCase{"12e-1", 1'200'000'000},
        // Sub-nano precision rounds the magnitude up, as Kubernetes' inf.RoundUp does.
        ParseCase{"0.1n", 1}, ParseCase{"-0.1n", -1}, ParseCase{"1.0000000001", kUnit + 1},
        ParseCase{"0.0000000001", 1}, ParseCase{"1e-20", 1}, ParseCase{"1e-99999", 1},
        ParseCase{"1.5n", 2}, ParseCase{"0.3333333333333333333333Ki", 341'333'333'334},
        // Kubernetes scans a missing number as zero.
        ParseCase{"+", 0}, ParseCase{"-", 0}, ParseCase{".", 0}, ParseCase{"k", 0},
        ParseCase{"Mi", 0}, ParseCase{"E", 0}, ParseCase{"0e99999999", 0}, ParseCase{"000.000", 0},
        // The largest accepted magnitude: int64 max in milli-units.
        ParseCase{"9223372036854775807m",
                  __int128{std::numeric_limits<int64_t>::max()} * 1'000'000},
        ParseCase{"-9223372036854775807m",
                  -__int128{std::numeric_limits<int64_t>::max()} * 1'000'000}));

class QuantityRejectsTest : public ::testing::TestWithParam<const char*> {};

TEST_P(QuantityRejectsTest, WithAnErrorNamingTheText) {
  const std::string text = GetParam();
  auto q = Quantity::parse(text);
  ASSERT_FALSE(q.ok()) << text;
  EXPECT_NE(q.error().message.find("\"" + text + "\""), std::string::npos) << q.error().message;
}

INSTANTIATE_TEST_SUITE_P(BadSyntax, QuantityRejectsTest,
                         ::testing::Values("", "1.2.3", "1Kb", " 1", "1 ", "0x10", "1e", "--1",
                                           "1K", "1ki", "1mi", "1i", "1b", "abc", "1e3.5", "1Ee3",
                                           "1e+", "e", "1E3E", "1m-3", "1 Gi", "1,5", "++1",
                                           "1e9223372036854775808"));

INSTANTIATE_TEST_SUITE_P(TooLarge, QuantityRejectsTest,
                         ::testing::Values("10P", "1E", "1Ei", "9223372036854775808m", "1e100",
                                           "-1e100", "99999999999999999999999999999999999999",
                                           "8Ei", "1e9223372036854775807"));

TEST(QuantityTest, TooLargeErrorSaysSo) {
  auto q = Quantity::parse("1e30");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().message.find("too large"), std::string::npos) << q.error().message;
}

TEST(QuantityTest, ErrorEscapesNonPrintableBytes) {
  auto q = Quantity::parse("1\n\xe2\x88\x9e");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().message.find(R"("1\x0a\xe2\x88\x9e")"), std::string::npos)
      << q.error().message;
}

TEST(QuantityTest, ErrorShortensHugeText) {
  const std::string text(10000, '1');
  auto q = Quantity::parse(text + "x");
  ASSERT_FALSE(q.ok());
  EXPECT_LT(q.error().message.size(), 200u);
}

TEST(QuantityTest, LongDigitStringsParseExactly) {
  // Many fraction digits only decide the rounding.
  EXPECT_TRUE(nanos_of("1." + std::string(5000, '0') + "1") == kUnit + 1);
  EXPECT_TRUE(nanos_of("1." + std::string(5000, '0')) == kUnit);
  EXPECT_TRUE(nanos_of(std::string(5000, '0') + "42") == 42 * kUnit);
  EXPECT_TRUE(nanos_of("0." + std::string(5000, '0') + "1Ki") == 1);
}

TEST(QuantityTest, AsInt64OnlyForWholeNumbers) {
  auto as_int = [](const char* text) { return Quantity::parse(text)->as_int64(); };
  EXPECT_EQ(as_int("1.5"), std::nullopt);
  EXPECT_EQ(as_int("100m"), std::nullopt);
  EXPECT_EQ(as_int("1n"), std::nullopt);
  EXPECT_EQ(as_int("1k"), 1000);
  EXPECT_EQ(as_int("1Ki"), 1024);
  EXPECT_EQ(as_int("16Gi"), 17179869184);
  EXPECT_EQ(as_int("1000m"), 1);
  EXPECT_EQ(as_int("-5"), -5);
  EXPECT_EQ(as_int("0"), 0);
  EXPECT_EQ(as_int("9P"), 9'000'000'000'000'000);
  EXPECT_EQ(Quantity::from_int(std::numeric_limits<int64_t>::max()).as_int64(),
            std::numeric_limits<int64_t>::max());
}

TEST(QuantityTest, ValueRoundsUpAwayFromZero) {
  EXPECT_EQ(Quantity::parse("100m")->value(), 1);
  EXPECT_EQ(Quantity::parse("1.5")->value(), 2);
  EXPECT_EQ(Quantity::parse("1")->value(), 1);
  EXPECT_EQ(Quantity::parse("1n")->value(), 1);
  EXPECT_EQ(Quantity::parse("0")->value(), 0);
  EXPECT_EQ(Quantity::parse("-1.5")->value(), -2);
  EXPECT_EQ(Quantity::parse("16Gi")->value(), 17179869184);
}

TEST(QuantityTest, MilliValueRoundsUp) {
  EXPECT_EQ(Quantity::parse("100m")->milli_value(), 100);
  EXPECT_EQ(Quantity::parse("1n")->milli_value(), 1);
  EXPECT_EQ(Quantity::parse("1.5m")->milli_value(), 2);
  EXPECT_EQ(Quantity::parse("2")->milli_value(), 2000);
  EXPECT_EQ(Quantity::parse("-1.5m")->milli_value(), -2);
  EXPECT_EQ(Quantity::parse("9223372036854775807m")->milli_value(),
            std::numeric_limits<int64_t>::max());
}

TEST(QuantityTest, ViewsSaturateBeyondInt64) {
  const auto big = Quantity::from_int(std::numeric_limits<int64_t>::max());
  EXPECT_EQ(big.milli_value(), std::numeric_limits<int64_t>::max());
  const auto small = Quantity::from_int(std::numeric_limits<int64_t>::min());
  EXPECT_EQ(small.milli_value(), std::numeric_limits<int64_t>::min());
}

TEST(QuantityTest, FromIntAndFromMilli) {
  EXPECT_EQ(Quantity::from_int(3), *Quantity::parse("3"));
  EXPECT_EQ(Quantity::from_milli(1500), *Quantity::parse("1.5"));
  EXPECT_EQ(Quantity::from_milli(-250), *Quantity::parse("-250m"));
}

TEST(QuantityTest, ToStringIsReadable) {
  EXPECT_EQ(Quantity::parse("1")->to_string(), "1");
  EXPECT_EQ(Quantity::parse("16Gi")->to_string(), "17179869184");
  EXPECT_EQ(Quantity::parse("100m")->to_string(), "100m");
  EXPECT_EQ(Quantity::parse("1.5")->to_string(), "1500m");
  EXPECT_EQ(Quantity::parse("1n")->to_string(), "1n");
  EXPECT_EQ(Quantity::parse("-2.5u")->to_string(), "-2500n");
  EXPECT_EQ(Quantity().to_string(), "0");
}

TEST(QuantityTest, ComparisonAndSign) {
  EXPECT_LT(*Quantity::parse("999m"), *Quantity::parse("1"));
  EXPECT_EQ(*Quantity::parse("1Ki"), *Quantity::parse("1024"));
  EXPECT_EQ(*Quantity::parse("1e3"), *Quantity::parse("1k"));
  EXPECT_TRUE(Quantity::parse("0m")->is_zero());
  EXPECT_EQ(Quantity::parse("-3")->sign(), -1);
  EXPECT_EQ(Quantity::parse("3")->sign(), 1);
  EXPECT_EQ(Quantity().sign(), 0);
}

TEST(QuantityTest, AdditionAndSubtraction) {
  Quantity q = *Quantity::parse("1");
  q += *Quantity::parse("500m");
  EXPECT_EQ(q.milli_value(), 1500);
  q -= *Quantity::parse("2");
  EXPECT_EQ(q.milli_value(), -500);
  EXPECT_EQ((*Quantity::parse("1Gi") + *Quantity::parse("1Gi")).value(), 2147483648);
  EXPECT_EQ((*Quantity::parse("1") - *Quantity::parse("1")), Quantity());
}

TEST(QuantityTest, AdditionSaturatesInsteadOfOverflowing) {
  Quantity q = Quantity::from_int(std::numeric_limits<int64_t>::max());
  for (int i = 0; i < 50; ++i) q += q;
  EXPECT_GT(q.nanos(), 0);
  EXPECT_EQ(q.value(), std::numeric_limits<int64_t>::max());
  const __int128 top = q.nanos();
  q += Quantity::from_int(1);
  EXPECT_TRUE(q.nanos() == top);

  Quantity n = Quantity::from_int(std::numeric_limits<int64_t>::min());
  for (int i = 0; i < 50; ++i) n += n;
  EXPECT_EQ(n.sign(), -1);
  EXPECT_EQ(n.value(), std::numeric_limits<int64_t>::min());
  n -= Quantity::from_int(1);
  EXPECT_EQ(n.sign(), -1);
  Quantity m = Quantity::from_int(std::numeric_limits<int64_t>::max());
  for (int i = 0; i < 50; ++i) m += m;
  m -= n;  // max - min saturates at max
  EXPECT_TRUE(m.nanos() == top);
}

}  // namespace
}  // namespace hamisim::model
