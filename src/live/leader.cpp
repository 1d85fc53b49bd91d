#include "live/leader.h"

#include <fmt/format.h>

namespace hamisim::live {

bool LeaderTracker::holds(const std::string& holder) const {
  return !options_.identity.empty() && holder.starts_with(options_.identity);
}

int LeaderTracker::on_lease(state::EventType type, const state::Lease& lease,
                            Clock::time_point now) {
  if (!options_.enabled || lease.namespace_ != options_.lease_namespace ||
      lease.name != options_.lease_name) {
    return 0;
  }
  std::lock_guard lock(mutex_);
  const bool held_before = lease_.has_value() && holds(lease_->holder_identity);
  if (type == state::EventType::kDeleted) {
    lease_.reset();
    return held_before ? -1 : 0;
  }
  lease_ = lease;
  observed_ = now;
  const bool held_now = holds(lease.holder_identity);
  if (held_now && !held_before) return 1;
  if (!held_now && held_before) return -1;
  return 0;
}

bool LeaderTracker::is_leader(Clock::time_point now) const {
  if (!options_.enabled) return true;
  std::lock_guard lock(mutex_);
  return lease_.has_value() && holds(lease_->holder_identity) &&
         now < observed_ + std::chrono::seconds(lease_->lease_duration_seconds);
}

std::string LeaderTracker::describe(Clock::time_point now) const {
  if (!options_.enabled) return "leader awareness off";
  std::lock_guard lock(mutex_);
  if (!lease_) {
    return fmt::format("no Lease {}/{} observed", options_.lease_namespace, options_.lease_name);
  }
  const auto left = std::chrono::duration_cast<std::chrono::seconds>(
      observed_ + std::chrono::seconds(lease_->lease_duration_seconds) - now);
  return fmt::format(
      "Lease {}/{} held by \"{}\" ({}), {}", options_.lease_namespace, options_.lease_name,
      lease_->holder_identity, holds(lease_->holder_identity) ? "us" : "not us",
      left.count() > 0
          ? fmt::format("renewed {}s ago", lease_->lease_duration_seconds - left.count())
          : std::string("expired"));
}

}  // namespace hamisim::live
