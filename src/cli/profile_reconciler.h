#pragma once
// Periodic device-profile reconciliation inside `serve` with a live source (spec §7.4): every
// interval, the real nodes each profile describes are compared with it; the result feeds the
// profiles' onMismatch policies in later simulations, a gauge per profile, a log line and a
// Warning Event per node when its mismatch first appears or changes.

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "engine/engine.h"
#include "live/live_scheduler.h"
#include "server/metrics.h"

namespace hamisim::cli {

class ProfileReconciler {
 public:
  ProfileReconciler(const device::DeviceRegistry& registry,
                    std::shared_ptr<const profile::DeviceProfiles> profiles, engine::Engine& engine,
                    live::LiveScheduler& live, server::MetricsRegistry& metrics,
                    std::chrono::milliseconds interval);
  ~ProfileReconciler();  // stops

  void start();
  void stop();
  // One pass now (also the first pass of the loop).
  void run_once();

 private:
  const device::DeviceRegistry& registry_;
  std::shared_ptr<const profile::DeviceProfiles> profiles_;
  engine::Engine& engine_;
  live::LiveScheduler& live_;
  server::GaugeFamily& mismatching_;
  const std::chrono::milliseconds interval_;
  std::map<std::string, std::string> reported_;  // node -> mismatch text last reported
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hamisim::cli
