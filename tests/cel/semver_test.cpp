#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cel/selector.h"

namespace hamisim::cel {
namespace {

TEST(ParseSemver, AcceptsStrictSemver) {
  auto v = parse_semver("1.22.333-rc.1+build.5");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->major, 1u);
  EXPECT_EQ(v->minor, 22u);
  EXPECT_EQ(v->patch, 333u);
  EXPECT_EQ(v->prerelease, "rc.1");
  EXPECT_EQ(v->build, "build.5");
  EXPECT_TRUE(parse_semver("0.0.0").ok());
  EXPECT_TRUE(parse_semver("1.0.0-alpha-1.x-y").ok());
  EXPECT_TRUE(parse_semver("1.0.0+001").ok());  // build identifiers may have leading zeros
  EXPECT_TRUE(parse_semver("1.0.0-0a").ok());   // alphanumeric: leading zero allowed
  EXPECT_TRUE(parse_semver("18446744073709551615.0.0").ok());
}

TEST(ParseSemver, RejectsWhatTheDraRegexRejects) {
  for (const char* bad : {"",          "1",          "1.2",
                          "1.2.3.4",   "v1.2.3",     "01.2.3",
                          "1.02.3",    "1.2.03",     "1.2.3-",
                          "1.2.3+",    "1.2.3-01",   "1.2.3-a..b",
                          "1.2.3-a_b", "1.2.3+a..b", " 1.2.3",
                          "1.2.3 ",    "1.2.x",      "-1.2.3",
                          "+1.2.3",    "1.2.3-rc+",  "18446744073709551616.0.0",
                          "1..3"}) {
    auto v = parse_semver(bad);
    EXPECT_FALSE(v.ok()) << bad;
    if (!v.ok()) {
      EXPECT_NE(v.error().message.find("invalid semantic version"), std::string::npos);
    }
  }
}

TEST(CompareSemver, FollowsSemver2Precedence) {
  // The example chain of semver.org §11, plus core-version ordering.
  const std::vector<std::string> ordered = {
      "0.9.9",      "1.0.0-alpha",  "1.0.0-alpha.1", "1.0.0-alpha.beta",
      "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1",
      "1.0.0",      "1.0.1",        "1.1.0",         "1.10.0",
      "2.0.0"};
  for (size_t i = 0; i < ordered.size(); ++i) {
    for (size_t j = 0; j < ordered.size(); ++j) {
      const int want = i < j ? -1 : (i > j ? 1 : 0);
      EXPECT_EQ(compare_semver(parse_semver(ordered[i]).value(), parse_semver(ordered[j]).value()),
                want)
          << ordered[i] << " vs " << ordered[j];
    }
  }
}

TEST(CompareSemver, IgnoresBuildMetadataAndComparesLongNumbersByValue) {
  EXPECT_EQ(compare_semver(parse_semver("1.0.0+a").value(), parse_semver("1.0.0+b").value()), 0);
  EXPECT_EQ(compare_semver(parse_semver("1.0.0-9999999999999999999").value(),
                           parse_semver("1.0.0-10000000000000000000").value()),
            -1);
  EXPECT_FALSE(parse_semver("1.0.0-18446744073709551616").ok());  // above uint64, as blang/semver
  EXPECT_TRUE(parse_semver("1.0.0-18446744073709551616a").ok());  // alphanumeric: any length
  EXPECT_EQ(compare_semver(parse_semver("1.0.0-9").value(), parse_semver("1.0.0-10").value()), -1);
  EXPECT_EQ(compare_semver(parse_semver("1.0.0-a").value(), parse_semver("1.0.0-B").value()), 1);
}

}  // namespace
}  // namespace hamisim::cel
