#include "cli/profile_reconciler.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

namespace hamisim::cli {
namespace {

// Cluster Autoscaler's mismatch_type values, in the order of the counts below. CA reserves
// `unknown`; here it counts nodes whose pools of the driver are changing and so could not be
// compared (docs/dra.md, "Template versus reality").
constexpr std::array<std::string_view, 4> kMismatchTypes = {"missing", "extra", "mismatch",
                                                            "unknown"};

}  // namespace

ProfileReconciler::ProfileReconciler(const device::DeviceRegistry& registry,
                                     std::shared_ptr<const profile::DeviceProfiles> profiles,
                                     engine::Engine& engine, live::LiveScheduler& live,
                                     server::MetricsRegistry& metrics,
                                     std::chrono::milliseconds interval, SliceLister list_slices)
    : registry_(registry),
      profiles_(std::move(profiles)),
      engine_(engine),
      live_(live),
      mismatching_(metrics.gauge("hamisim_profile_mismatching_nodes",
                                 "Real nodes whose registration or ResourceSlices differ from "
                                 "their device profile, by profile (last reconciliation)",
                                 {"profile"})),
      // A snapshot family, replaced whole by each pass: node groups and drivers come and go,
      // and a pass that could not list the slices must leave no series behind, which a plain
      // gauge (series live forever) cannot do.
      dra_mismatch_(metrics.snapshot(
          "hamisim_dra_template_mismatch",
          "Real nodes of a node group whose ResourceSlices of a driver differ from their device "
          "profile's, by Cluster Autoscaler's mismatch type (unknown: the node's pools are "
          "changing); last reconciliation, none when the slices could not be listed",
          server::MetricType::kGauge, {"node_group", "driver", "mismatch_type"})),
      interval_(interval),
      list_slices_(std::move(list_slices)),
      any_dra_profile_(
          std::any_of(profiles_->profiles.begin(), profiles_->profiles.end(),
                      [](const profile::DeviceProfile& p) { return !p.dra_slices.empty(); })) {}

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
  cancel_ = true;
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<std::vector<dra::ResourceSlice>> ProfileReconciler::slices_for_pass() {
  // Without a DRA profile nothing would be compared: no LIST, so a cluster without DRA is
  // never asked for what it does not serve.
  if (!any_dra_profile_ || !list_slices_) return std::nullopt;
  auto listed = list_slices_(cancel_);
  if (cancel_) return std::nullopt;  // stopping: not a failure worth a line
  if (!listed) {
    // Once when the failure starts and again only when its cause changes: a cluster without
    // DRA answers 404 every pass, and one line says so.
    if (slice_error_ != listed.error().message) {
      spdlog::warn(
          "ResourceSlices not compared with device profiles: {} (hamisim_dra_template_mismatch "
          "has no series until a LIST succeeds)",
          listed.error().message);
    }
    slice_error_ = listed.error().message;
    return std::nullopt;
  }
  if (slice_error_) {
    spdlog::info("ResourceSlices listed again: comparing them with device profiles");
    slice_error_.reset();
  }
  return std::move(listed).value();
}

void ProfileReconciler::run_once() {
  const std::vector<model::Node> nodes = live_.observed_nodes();
  const std::optional<std::vector<dra::ResourceSlice>> slices = slices_for_pass();
  const profile::ReconcileReport report =
      profile::reconcile(*profiles_, nodes, registry_, slices ? &*slices : nullptr);
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
      live_.record_event(
          {.namespace_ = "default",
           .pod_name = c.node,
           .pod_uid = "",
           .type = "Warning",
           .reason = "DeviceProfileMismatch",
           .message = fmt::format("devices differ from device profile {}: {}", c.profile, text),
           .kind = "Node"});
    }
    now.emplace(c.node, std::move(text));
  }
  reported_ = std::move(now);
  for (const auto& [name, count] : per_profile) mismatching_.labels({name}).set(count);
  export_dra(report.checks, slices.has_value());
}

void ProfileReconciler::export_dra(const std::vector<profile::NodeCheck>& checks, bool compared) {
  std::vector<server::SnapshotFamily::Sample> samples;
  if (compared) {
    // (node group, driver) -> nodes per mismatch type. Every pair compared on some node gets
    // all four series, so a difference that went away reads 0 rather than vanishing.
    std::map<std::pair<std::string, std::string>, std::array<int64_t, kMismatchTypes.size()>> nodes;
    for (const auto& c : checks) {
      // A node whose group cannot be told stands in its profile's name: the profile is the
      // template that would be fixed (docs/dra.md).
      const std::string& group = c.node_group.empty() ? c.profile : c.node_group;
      for (const auto& d : c.dra) {
        auto& n = nodes[{group, d.driver}];  // value-initialized: zeros
        n[0] += d.missing > 0;
        n[1] += d.extra > 0;
        n[2] += d.mismatch > 0;
        n[3] += d.in_flux;
      }
    }
    for (const auto& [key, counts] : nodes) {
      for (size_t i = 0; i < kMismatchTypes.size(); ++i) {
        samples.push_back({.labels = {key.first, key.second, std::string(kMismatchTypes[i])},
                           .value = double(counts[i])});
      }
    }
  }
  dra_mismatch_.replace(std::move(samples));
}

}  // namespace hamisim::cli
