#include "log/rate_limit.h"

#include <gtest/gtest.h>

namespace hamisim::log {
namespace {

using namespace std::chrono_literals;
using Clock = RateLimit::Clock;

TEST(RateLimit, TheFirstOccurrenceIsLoggedAndTheRestOfTheIntervalCounted) {
  RateLimit limit(10s);
  const Clock::time_point t0{};
  ASSERT_EQ(limit.admit(t0), std::optional<uint64_t>(0));
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(limit.admit(t0 + i * 1s), std::nullopt);
  EXPECT_EQ(limit.admit(t0 + 9999ms), std::nullopt);
  // The next interval's line says how many were left out.
  EXPECT_EQ(limit.admit(t0 + 10s), std::optional<uint64_t>(6));
  EXPECT_EQ(limit.admit(t0 + 11s), std::nullopt);
  EXPECT_EQ(limit.admit(t0 + 30s), std::optional<uint64_t>(1));
  EXPECT_EQ(limit.admit(t0 + 45s), std::optional<uint64_t>(0));
}

}  // namespace
}  // namespace hamisim::log
