#pragma once
// Client-side rate limiting of API requests: a token bucket with a sustained rate (qps) and a
// burst, like client-go's flowcontrol limiter. Reservations may run the bucket negative, so
// callers queue up fairly in reservation order and each learns how long to wait.
//
// The clock is injectable so the logic is tested without sleeping. Thread-safe.

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>

namespace hamisim::kube {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;

  // qps <= 0 disables limiting. burst < 1 is treated as 1.
  TokenBucket(double qps, int burst, Now now = &Clock::now);

  // Takes one token and returns how long the caller must wait before using it (zero when one
  // was available), but only when that wait is at most `max_wait`; otherwise takes nothing and
  // returns nullopt.
  std::optional<Clock::duration> reserve(Clock::duration max_wait = Clock::duration::max());
  // Tokens available now (negative while reservations are outstanding).
  double available();

  double qps() const { return qps_; }
  int burst() const { return burst_; }

 private:
  void refill(Clock::time_point now);  // requires mu_

  const double qps_;
  const int burst_;
  const Now now_;
  std::mutex mu_;
  double tokens_;
  Clock::time_point last_;
};

}  // namespace hamisim::kube
