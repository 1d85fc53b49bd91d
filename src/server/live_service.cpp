#include "server/live_service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <map>

#include "device/allocation.h"
#include "log/structured.h"
#include "model/json_writer.h"
#include "server/hami_metrics.h"

namespace hamisim::server {
namespace {

// Gauges of the live state (spec §9), refreshed when /metrics is scraped. Base units: memory
// in bytes, compute in whole devices (HAMi's core percent / 100).
void export_live_metrics(const live::LiveScheduler& live, MetricsRegistry& metrics) {
  auto& nodes = metrics.gauge("hamisim_live_nodes", "Nodes with registered devices");
  auto& devices = metrics.gauge("hamisim_live_devices", "Registered devices, all vendors");
  auto& memory = metrics.gauge(
      "hamisim_live_device_memory_bytes",
      "Device memory in bytes: registered (total) and held by pods (allocated)", {"state"});
  auto& cores = metrics.gauge(
      "hamisim_live_device_core_ratio",
      "Device compute in whole devices (1 = all cores of one device; HAMi's core percent / 100): "
      "registered (total) and held by pods (allocated)",
      {"state"});
  auto& pods = metrics.gauge("hamisim_live_pod_allocations", "Pods holding device allocations");
  auto& ready = metrics.gauge("hamisim_live_ready", "1 while the live path is ready");
  auto& leader = metrics.gauge(
      "hamisim_live_leader",
      "1 while this replica leads (its kube-scheduler holds the Lease, or no --leader-elect)");
  auto& leadership = metrics.snapshot(
      "hamisim_live_leadership_changes_total",
      "Leadership changes seen in the kube-scheduler Lease, by change (started, stopped)",
      MetricType::kCounter, {"change"});
  auto& passes = metrics.snapshot("hamisim_live_registration_passes_total",
                                  "Registration passes run while leading", MetricType::kCounter);
  auto& contention =
      metrics.snapshot("hamisim_live_node_lock_contention_total",
                       "Node lock attempts in /bind that found the node locked by another pod",
                       MetricType::kCounter);
  auto& retries =
      metrics.snapshot("hamisim_live_node_lock_retries_total",
                       "Node lock attempts repeated by PodGroup binds waiting for a locked node "
                       "(--node-lock-retry-timeout)",
                       MetricType::kCounter);
  constexpr double kMiB = 1048576.0;
  metrics.add_collector([&, l = &live] {
    const auto table = l->nodes().snapshot();
    int64_t device_count = 0, memory_total = 0, cores_total = 0;
    for (const auto& [name, node] : *table) {
      for (const auto& d : node->description.devices) {
        ++device_count;
        memory_total += d.devmem;
        cores_total += d.devcore;
      }
    }
    const live::PodManager::Totals held = l->pods().totals();
    nodes.labels({}).set(static_cast<double>(table->size()));
    devices.labels({}).set(static_cast<double>(device_count));
    memory.labels({"total"}).set(static_cast<double>(memory_total) * kMiB);
    memory.labels({"allocated"}).set(static_cast<double>(held.memory) * kMiB);
    cores.labels({"total"}).set(static_cast<double>(cores_total) / 100.0);
    cores.labels({"allocated"}).set(static_cast<double>(held.cores) / 100.0);
    pods.labels({}).set(static_cast<double>(held.pods));
    ready.labels({}).set(l->readiness().ready ? 1 : 0);
    leader.labels({}).set(l->leading() ? 1 : 0);
    const live::LiveStats stats = l->stats();
    leadership.replace({{{"started"}, static_cast<double>(stats.started_leading)},
                        {{"stopped"}, static_cast<double>(stats.stopped_leading)}});
    passes.replace({{{}, static_cast<double>(stats.registration_passes)}});
    contention.replace({{{}, static_cast<double>(stats.node_lock_contention)}});
    retries.replace({{{}, static_cast<double>(stats.node_lock_retries)}});
  });
}

// One line per live /filter, with HAMi's message where it does the same thing ("Scheduling pod
// to node", V0), so operators grep for what they know.
void log_filter_decision(const fit::PreparedPod& pod, const std::vector<std::string>& names,
                         const live::LiveFilterResult& result) {
  const model::ObjectMeta& meta = pod.pod->metadata;
  if (log::v_enabled(4)) {
    // HAMi's V4 NodeUnfitPod, one per node that does not fit (HAMi's chart runs -v=4).
    for (const auto& [node, reason] : result.failed_nodes) {
      log::v(
          4, "NodeUnfitPod",
          {{"pod", meta.name}, {"namespace", meta.namespace_}, {"node", node}, {"reason", reason}});
    }
  }
  switch (result.kind) {
    case live::LiveFilterResult::Kind::kChosen:
      log::info("Scheduling pod to node", {{"pod", meta.name},
                                           {"namespace", meta.namespace_},
                                           {"node", result.node},
                                           {"result", "scheduled"},
                                           {"candidates", names.size()}});
      return;
    case live::LiveFilterResult::Kind::kError:
      log::error("Filter error for pod", {{"pod", meta.name},
                                          {"namespace", meta.namespace_},
                                          {"result", "error"},
                                          {"reason", result.error}});
      return;
    case live::LiveFilterResult::Kind::kNoFit:
      break;
  }
  if (!log::enabled(spdlog::level::info)) return;
  // Nodes per reason name ("2 nodes CardInsufficientMemory, 1 nodes node unregistered"), as
  // HAMi's FilteringFailed events count them; bounded however many nodes were asked about.
  std::map<std::string, size_t, std::less<>> by_reason;
  for (const auto& [node, reason] : result.failed_nodes) {
    auto parsed = device::parse_reasons(reason);
    if (parsed.empty()) ++by_reason[reason];
    for (const auto& [name, count] : parsed) ++by_reason[name];
  }
  std::string summary;
  for (const auto& [reason, count] : by_reason) {
    if (!summary.empty()) summary += ", ";
    summary += fmt::format("{} nodes {}", count, reason);
  }
  log::info("No node fits pod", {{"pod", meta.name},
                                 {"namespace", meta.namespace_},
                                 {"result", "unschedulable"},
                                 {"reason", summary},
                                 {"candidates", names.size()}});
}

}  // namespace

LiveService::LiveService(live::LiveScheduler& live, MetricsRegistry& metrics, bool legacy_metrics)
    : live_(live), fit_outcomes_(metrics) {
  export_live_metrics(live_, metrics);
  export_hami_metrics(live_, metrics, legacy_metrics);
}

LiveFilterAnswer LiveService::filter(const fit::PreparedPod& pod,
                                     const std::vector<std::string>& names) {
  live::LiveFilterResult result = live_.filter(pod, names);
  log_filter_decision(pod, names, result);
  if (result.kind == live::LiveFilterResult::Kind::kError) {
    return {extender::encode_filter_error(result.error), true};
  }
  for (const auto& [node, reason] : result.failed_nodes) {
    fit_outcomes_.record("/filter",
                         reason == fit::kNodeUnregistered ? fit::FitClass::kNoDeviceDescription
                                                          : fit::classify_failure(reason),
                         reason);
  }
  extender::ExtenderFilterResult answer;
  if (result.kind == live::LiveFilterResult::Kind::kChosen) {
    fit_outcomes_.record("/filter", fit::FitClass::kFits, "");
    // Exactly one node, and no FailedNodes on success (HAMi's shape).
    answer.node_names.emplace(1, result.node);
  } else {
    answer.failed_nodes.emplace();
    answer.failed_nodes->reserve(result.failed_nodes.size());
    for (const auto& [node, reason] : result.failed_nodes)
      answer.failed_nodes->push_back({node, reason});  // in name order, each once
  }
  return {extender::encode_filter_result(answer), false};
}

std::string LiveService::bind(const extender::ExtenderBindingArgs& args) {
  // HAMi's V0 anchors around a bind, which operators grep for.
  log::info("Attempting to bind pod to node",
            {{"pod", args.pod_name}, {"namespace", args.pod_namespace}, {"node", args.node}});
  const std::string error =
      live_.bind({args.pod_name, args.pod_namespace, args.pod_uid, args.node});
  if (error.empty()) {
    log::info("Successfully bound pod to node", {{"pod", args.pod_name},
                                                 {"namespace", args.pod_namespace},
                                                 {"node", args.node},
                                                 {"result", "bound"}});
  } else {
    log::error("Bind error for pod", {{"pod", args.pod_name},
                                      {"namespace", args.pod_namespace},
                                      {"node", args.node},
                                      {"result", "error"},
                                      {"reason", error}});
  }
  return error;
}

std::optional<std::string> LiveService::admission_quota_check(const model::Pod& pod) const {
  return live_.admission_quota_check(pod);
}

LiveRoutesReadiness LiveService::readiness() const {
  const live::LiveReadiness r = live_.readiness();
  return {.ready = r.ready, .leading = r.leading, .filtering = r.filtering, .detail = r.detail};
}

}  // namespace hamisim::server
