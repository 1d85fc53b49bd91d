#pragma once
// Periodic device-profile reconciliation inside `serve` with a live source (spec §7.4): every
// interval, the real nodes each profile describes are compared with it; the result feeds the
// profiles' onMismatch policies in later simulations, a gauge per profile, a log line and a
// Warning Event per node when its mismatch first appears or changes.
//
// Under DRA (a profile with `dra:`), each pass also lists the cluster's ResourceSlices and
// compares every such node's slices with the profile's in Cluster Autoscaler's categories
// (dra/template_compare.h), exported as hamisim_dra_template_mismatch{node_group, driver,
// mismatch_type} (docs/dra.md, "Template versus reality").

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dra/objects.h"
#include "engine/engine.h"
#include "live/live_scheduler.h"
#include "profile/reconcile.h"
#include "server/metrics.h"

namespace hamisim::cli {

// The cluster's ResourceSlices now (serve: a paged LIST through the live source's client,
// cli/resource_slice_list.h). `cancel` is set when the reconciler stops, so a LIST in flight
// does not hold up shutdown for the client's request timeout.
using SliceLister =
    std::function<Result<std::vector<dra::ResourceSlice>>(const std::atomic<bool>& cancel)>;

class ProfileReconciler {
 public:
  // `list_slices` may be empty (a source with no API server behind it): the DRA comparison
  // is then never made.
  ProfileReconciler(const device::DeviceRegistry& registry,
                    std::shared_ptr<const profile::DeviceProfiles> profiles, engine::Engine& engine,
                    live::LiveScheduler& live, server::MetricsRegistry& metrics,
                    std::chrono::milliseconds interval, SliceLister list_slices = {});
  ~ProfileReconciler();  // stops

  void start();
  void stop();
  // One pass now (also the first pass of the loop).
  void run_once();

 private:
  // The slices for this pass, or null when no profile has a DRA form or the LIST failed (a
  // failure is logged when it starts or its cause changes, not every pass).
  std::optional<std::vector<dra::ResourceSlice>> slices_for_pass();
  // Replaces every series of hamisim_dra_template_mismatch with this pass's counts; none when
  // the slices are not known (`compared` false).
  void export_dra(const std::vector<profile::NodeCheck>& checks, bool compared);

  const device::DeviceRegistry& registry_;
  std::shared_ptr<const profile::DeviceProfiles> profiles_;
  engine::Engine& engine_;
  live::LiveScheduler& live_;
  server::GaugeFamily& mismatching_;
  server::SnapshotFamily& dra_mismatch_;
  const std::chrono::milliseconds interval_;
  SliceLister list_slices_;
  const bool any_dra_profile_;
  std::map<std::string, std::string> reported_;  // node -> mismatch text last reported
  std::optional<std::string> slice_error_;       // the failing LIST's error, last pass
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> cancel_{false};
  std::thread thread_;
};

}  // namespace hamisim::cli
