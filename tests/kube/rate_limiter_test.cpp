#include "kube/rate_limiter.h"

#include <gtest/gtest.h>

#include "kube/client.h"

namespace hamisim::kube {
namespace {

using namespace std::chrono_literals;
using Clock = TokenBucket::Clock;

struct FakeClock {
  Clock::time_point now{};
  TokenBucket::Now fn() {
    return [this] { return now; };
  }
};

TEST(TokenBucket, BurstThenSustainedRate) {
  FakeClock clock;
  TokenBucket bucket(10, 3, clock.fn());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bucket.reserve(), Clock::duration::zero());
  // The 4th waits one token's worth (100 ms), the 5th two.
  EXPECT_EQ(bucket.reserve(), std::chrono::duration_cast<Clock::duration>(100ms));
  EXPECT_EQ(bucket.reserve(), std::chrono::duration_cast<Clock::duration>(200ms));
  EXPECT_DOUBLE_EQ(bucket.available(), -2);
  clock.now += 300ms;  // pays back the two reservations and earns one
  EXPECT_NEAR(bucket.available(), 1, 1e-9);
  EXPECT_EQ(bucket.reserve(), Clock::duration::zero());
}

TEST(TokenBucket, RefillIsCappedAtBurst) {
  FakeClock clock;
  TokenBucket bucket(100, 5, clock.fn());
  clock.now += 1h;
  EXPECT_DOUBLE_EQ(bucket.available(), 5);
}

TEST(TokenBucket, ReserveWithinMaxWaitTakesNothingOtherwise) {
  FakeClock clock;
  TokenBucket bucket(1, 1, clock.fn());
  EXPECT_EQ(bucket.reserve(0ms), Clock::duration::zero());
  EXPECT_EQ(bucket.reserve(500ms), std::nullopt);  // would need 1 s
  EXPECT_DOUBLE_EQ(bucket.available(), 0);         // nothing was taken
  EXPECT_EQ(bucket.reserve(1s), std::chrono::duration_cast<Clock::duration>(1s));
}

TEST(TokenBucket, ZeroQpsIsUnlimited) {
  FakeClock clock;
  TokenBucket bucket(0, 1, clock.fn());
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(bucket.reserve(0ms), Clock::duration::zero());
}

TEST(TokenBucket, DefaultsAllowTwoHundredPodsPerSecond) {
  ClientOptions defaults;
  // About 3 writes per pod plus events: 200 pods/s needs well over 600 requests in a burst
  // second and a sustained rate above 200 * 1.5.
  EXPECT_GE(defaults.qps, 300);
  EXPECT_GE(defaults.burst, 600);
  FakeClock clock;
  TokenBucket bucket(defaults.qps, defaults.burst, clock.fn());
  int immediate = 0;
  for (int i = 0; i < 600; ++i) immediate += bucket.reserve(0ms).has_value();
  EXPECT_EQ(immediate, 600);
}

TEST(RetryPolicy, BackoffGrowsAndIsCapped) {
  RetryPolicy p;
  p.initial = 100ms;
  p.factor = 2;
  p.max_delay = 1s;
  p.jitter = 0.5;
  EXPECT_EQ(backoff_delay(p, 0, 0), 100ms);
  EXPECT_EQ(backoff_delay(p, 1, 0), 200ms);
  EXPECT_EQ(backoff_delay(p, 3, 0), 800ms);
  EXPECT_EQ(backoff_delay(p, 10, 0), 1s);
  EXPECT_EQ(backoff_delay(p, 0, 1), 150ms);
  EXPECT_EQ(backoff_delay(p, 10, 1), 1500ms);
}

TEST(RetryPolicy, RetriesOnlyUnavailable) {
  RetryPolicy p;
  p.max_attempts = 4;
  p.initial = 1ms;
  p.max_delay = 1ms;
  int calls = 0;
  auto r = retry_unavailable<int>(p, [&]() -> state::ApiResult<int> {
    ++calls;
    return state::ApiError{state::ApiCode::kUnavailable, "down"};
  });
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(r.code(), state::ApiCode::kUnavailable);
  calls = 0;
  auto c = retry_unavailable<int>(p, [&]() -> state::ApiResult<int> {
    ++calls;
    return state::ApiError{state::ApiCode::kConflict, "conflict"};
  });
  EXPECT_EQ(calls, 1);
  calls = 0;
  auto ok = retry_unavailable<int>(p, [&]() -> state::ApiResult<int> {
    if (++calls < 3) return state::ApiError{state::ApiCode::kUnavailable, "down"};
    return 7;
  });
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 7);
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace hamisim::kube
