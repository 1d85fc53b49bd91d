#pragma once
// One line per interval for a warning a client can trigger at will (a client reconnecting in
// a loop to a listener at its connection cap wrote 126,700 lines, 14.6 MB, in 5 s): the first
// occurrence is logged at once, the rest of the interval only counted, and the next line says
// how many were left out. Thread-safe; lock-free.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

namespace hamisim::log {

class RateLimit {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RateLimit(Clock::duration interval) : interval_(interval.count()) {}

  // nullopt: stay silent (counted). Otherwise log now; the value is how many occurrences were
  // left out since the previous line.
  std::optional<uint64_t> admit(Clock::time_point now = Clock::now()) {
    const int64_t t = now.time_since_epoch().count();
    int64_t last = last_.load(std::memory_order_relaxed);
    if (last != kNever && t - last < interval_) {
      suppressed_.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
    // One thread wins the line of this interval; the others count.
    if (!last_.compare_exchange_strong(last, t, std::memory_order_relaxed)) {
      suppressed_.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
    return suppressed_.exchange(0, std::memory_order_relaxed);
  }

 private:
  static constexpr int64_t kNever = INT64_MIN;
  const int64_t interval_;
  std::atomic<int64_t> last_{kNever};
  std::atomic<uint64_t> suppressed_{0};
};

}  // namespace hamisim::log
