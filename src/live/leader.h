#pragma once
// Leader awareness (reference hami-scheduler-core.md §1.4): the extender does not campaign; it
// watches the Lease of the kube-scheduler it runs next to and is leader while that Lease is
// held by an identity starting with this pod's hostname and has not expired.

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "state/cluster_source.h"

namespace hamisim::live {

class LeaderTracker {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    bool enabled = false;  // --leader-elect; when off, always leader
    std::string lease_namespace;
    std::string lease_name;
    std::string identity;  // hostname; a holder identity starting with it is us
  };
  explicit LeaderTracker(Options options) : options_(std::move(options)) {}

  // Lease events (source thread). Returns +1 when we started leading, -1 when we stopped,
  // 0 otherwise (HAMi's OnStartedLeading / OnStoppedLeading).
  int on_lease(state::EventType type, const state::Lease& lease, Clock::time_point now);

  bool is_leader(Clock::time_point now) const;
  bool enabled() const { return options_.enabled; }
  // "holder gpu-sched-0_3f2a, expires in 12s", for /readyz.
  std::string describe(Clock::time_point now) const;

 private:
  bool holds(const std::string& holder) const;

  const Options options_;
  mutable std::mutex mutex_;
  std::optional<state::Lease> lease_;
  Clock::time_point observed_;
};

}  // namespace hamisim::live
