#include "cli/profile_reconciler.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "profile/reconcile.h"

namespace hamisim::cli {

ProfileReconciler::ProfileReconciler(const device::DeviceRegistry& registry,
                                     std::shared_ptr<const profile::DeviceProfiles> profiles,
                                     engine::Engine& engine, live::LiveScheduler& live,
                                     server::MetricsRegistry& metrics,
                                     std::chrono::milliseconds interval)
    : registry_(registry),
      profiles_(std::move(profiles)),
      engine_(engine),
      live_(live),
      mismatching_(metrics.gauge("hamisim_profile_mismatching_nodes",
                                 "Real nodes whose registration differs from their device profile, "
                                 "by profile (last reconciliation)",
                                 {"profile"})),
      interval_(interval) {}

ProfileReconciler::~ProfileReconciler() {
  stop();
}

void ProfileReconciler::start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      // The first pass waits for the source's initial lists.
      const bool synced = live_.synced();
      lock.unlock();
      if (synced) run_once();
      lock.lock();
      wake_.wait_for(lock, synced ? interval_ : std::chrono::milliseconds(500),
                     [this] { return stopping_; });
    }
  });
}

void ProfileReconciler::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProfileReconciler::run_once() {
  const std::vector<model::Node> nodes = live_.observed_nodes();
  const profile::ReconcileReport report = profile::reconcile(*profiles_, nodes, registry_);
  engine_.set_observations(std::make_shared<const profile::ProfileObservations>(
      profile::observe(*profiles_, nodes, registry_)));

  std::map<std::string, int> per_profile;
  for (const auto& p : profiles_->profiles) per_profile[p.name] = 0;
  std::map<std::string, std::string> now;
  for (const auto& c : report.checks) {
    if (c.mismatches.empty() && c.error.empty()) continue;
    ++per_profile[c.profile];
    std::string text = c.error.empty() ? fmt::format("{}", fmt::join(c.mismatches, "; ")) : c.error;
    auto previous = reported_.find(c.node);
    const bool changed = previous == reported_.end() || previous->second != text;
    if (changed)
      spdlog::warn("node {} does not match device profile {}: {}", c.node, c.profile, text);
    // Only the leader files Events, so replicas do not repeat each other.
    if (changed && live_.leading()) {
      live_.record_event({.namespace_ = "default",
                          .pod_name = c.node,
                          .pod_uid = "",
                          .type = "Warning",
                          .reason = "DeviceProfileMismatch",
                          .message = fmt::format("registration differs from device profile {}: {}",
                                                 c.profile, text),
                          .kind = "Node"});
    }
    now.emplace(c.node, std::move(text));
  }
  reported_ = std::move(now);
  for (const auto& [name, count] : per_profile) mismatching_.labels({name}).set(count);
}

}  // namespace hamisim::cli
