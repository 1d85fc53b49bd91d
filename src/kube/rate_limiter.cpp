#include "kube/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace hamisim::kube {

TokenBucket::TokenBucket(double qps, int burst, Now now)
    : qps_(qps), burst_(std::max(burst, 1)), now_(std::move(now)), tokens_(burst_), last_(now_()) {}

void TokenBucket::refill(Clock::time_point now) {
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

std::optional<TokenBucket::Clock::duration> TokenBucket::reserve(Clock::duration max_wait) {
  if (qps_ <= 0) return Clock::duration::zero();
  std::lock_guard lock(mu_);
  refill(now_());
  if (tokens_ >= 1) {
    tokens_ -= 1;
    return Clock::duration::zero();
  }
  const double seconds = (1 - tokens_) / qps_;
  const auto wait = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::min(seconds, 1e9)));
  if (wait > max_wait) return std::nullopt;
  tokens_ -= 1;
  return wait;
}

double TokenBucket::available() {
  std::lock_guard lock(mu_);
  refill(now_());
  return tokens_;
}

}  // namespace hamisim::kube
