#include "server/extender_service.h"

#include <spdlog/spdlog.h>

#include "model/decode.h"
#include "model/json_writer.h"
#include "server/process_metrics.h"
#include "webhook/admission.h"

namespace hamisim::server {

// Request bodies are decoded where HttpServer put them.
static_assert(kBodyPadding >= model::kJsonPadding);

namespace {

HttpResponse filter_reply(std::string body, bool is_error) {
  HttpResponse r = HttpResponse::json(200, std::move(body));
  if (is_error) r.outcome = "error";
  return r;
}

std::string echo_node_names(const std::vector<std::string>& names) {
  extender::ExtenderFilterResult r;
  r.node_names.emplace(names.begin(), names.end());
  return extender::encode_filter_result(r);
}

constexpr std::string_view kNoLiveSource =
    "no live cluster source (start with --kubeconfig, --in-cluster, --live or --cluster-snapshot)";

}  // namespace

ExtenderService::ExtenderService(const engine::Engine& engine, MetricsRegistry& metrics,
                                 ExtenderServiceOptions options)
    : registry_(engine.registry()),
      policy_(engine.policy()),
      simulation_(engine),
      options_(std::move(options)),
      fit_outcomes_(metrics),
      profile_notes_(metrics.counter(
          "hamisim_profile_warnings_total",
          "Template nodes answered with a warning about their device description (a warm sample "
          "diverging from its profile, a profile that real nodes do not match), by profile",
          {"profile"})),
      webhook_outcomes_(metrics.counter("hamisim_webhook_admissions_total",
                                        "Admission reviews answered, by outcome", {"outcome"})),
      unsent_placements_(metrics.counter(
          "hamisim_simulated_pods_missing_total",
          "Simulation requests that asked about a Cluster Autoscaler template copy again for "
          "another pod without SimulatedPods after it was answered Fits: the caller does not send "
          "the pods it placed, and its node counts are too low (docs/ca-side.md)",
          {"route"})) {
  export_hami_build_info(metrics);
}

std::vector<Route> ExtenderService::routes() {
  auto bind_to = [this](HttpResponse (ExtenderService::*fn)(const HttpRequest&)) {
    return [this, fn](const HttpRequest& r) { return (this->*fn)(r); };
  };
  return {
      {"POST", "/filter-simulation", AuthGroup::kSimulation,
       bind_to(&ExtenderService::filter_simulation)},
      {"POST", "/filter", AuthGroup::kLive, bind_to(&ExtenderService::filter)},
      {"POST", "/bind", AuthGroup::kLive, bind_to(&ExtenderService::bind)},
      {"POST", "/webhook", AuthGroup::kWebhook, bind_to(&ExtenderService::webhook)},
      {"GET", "/healthz", AuthGroup::kNone, bind_to(&ExtenderService::healthz)},
      {"GET", "/readyz", AuthGroup::kNone, bind_to(&ExtenderService::readyz)},
  };
}

void ExtenderService::record(std::string_view route, const SimulationResult& result,
                             const HttpRequest& request) {
  for (const NodeOutcome& o : result.outcomes) {
    if (o.notes > 0) profile_notes_.labels({o.profile}).inc();
    fit_outcomes_.record(route, o.fit_class, o.reason);
  }
  if (!result.unsent_placements_node.empty()) report_unsent_placements(route, result, request);
}

void ExtenderService::report_unsent_placements(std::string_view route,
                                               const SimulationResult& result,
                                               const HttpRequest& request) {
  unsent_placements_.labels({route}).inc();
  const uint64_t since = unsent_since_warning_.fetch_add(1, std::memory_order_relaxed) + 1;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t last = last_unsent_warning_.load(std::memory_order_relaxed);
  const int64_t interval =
      std::chrono::duration_cast<std::chrono::nanoseconds>(kUnsentPlacementsLogInterval).count();
  if (last != 0 && now - last < interval) return;
  // One thread wins the right to log for this interval.
  if (!last_unsent_warning_.compare_exchange_strong(last, now, std::memory_order_relaxed)) return;
  unsent_since_warning_.fetch_sub(since, std::memory_order_relaxed);
  spdlog::warn(
      "simulation caller {} ({}) does not send SimulatedPods: on {} it asked about template "
      "copy {} again for another pod without the pods it placed there after it was answered "
      "Fits ({} such request(s) since the last warning). Its node counts are too low when "
      "device memory or cores bound the packing: the Cluster Autoscaler build must send "
      "SimulatedPods, see docs/ca-side.md",
      request.client_identity.empty() ? std::string_view("without a client certificate")
                                      : std::string_view(request.client_identity),
      request.remote_address, route, result.unsent_placements_node, since);
}

HttpResponse ExtenderService::filter_simulation(const HttpRequest& request) {
  SimulationResult result = simulation_.filter(request.body, SimulationFilter::NodeTexts::kLeftOut,
                                               request.client_identity);
  record("/filter-simulation", result, request);
  HttpResponse response = filter_reply(std::move(result.body), result.invalid_request);
  // The Nodes sent back go out from the request's bytes (HttpResponse::pieces).
  if (result.insertions.empty()) return response;
  auto add = [&](bool of_request, size_t offset, size_t size) {
    if (size > 0) response.pieces.push_back({of_request, offset, size});
  };
  size_t from = 0;
  for (const SimulationResult::Insertion& insertion : result.insertions) {
    add(false, from, insertion.at - from);
    add(true, static_cast<size_t>(insertion.text.data() - request.body.data()),
        insertion.text.size());
    from = insertion.at;
  }
  add(false, from, response.body.size() - from);
  return response;
}

HttpResponse ExtenderService::filter(const HttpRequest& request) {
  auto args = simulation_.decode(request.body);
  if (!args) {
    return filter_reply(extender::encode_filter_error(std::string(extender::kInvalidRequest) +
                                                      args.error().message),
                        true);
  }
  if (!args->pod) {
    return filter_reply(extender::encode_filter_error(std::string(extender::kInvalidRequest) +
                                                      "extender args missing pod"),
                        true);
  }
  if (args->nodes_present) {
    if (options_.reject_legacy_nodes_filter) {
      return filter_reply(extender::encode_filter_error(
                              std::string(extender::kInvalidRequest) +
                              "Nodes is not accepted by /filter (--legacy-nodes-filter=reject); "
                              "Cluster Autoscaler must call /filter-simulation"),
                          true);
    }
    SimulationResult result =
        simulation_.filter(*args, /*require_no_node_names=*/true, request.client_identity);
    record("/filter", result, request);
    return filter_reply(std::move(result.body), result.invalid_request);
  }
  // Live request (NodeNames). A pod without managed devices passes every node without
  // needing any cluster state; anything else needs the live source. Prepared as HAMi's filter
  // prepares it, without the simulation engine's quantity checks (spec §5.4 validates simulation
  // requests), and decided by live::LiveScheduler on the live managers' state.
  auto prepared = fit::prepare_pod(*args->pod, registry_, policy_);
  if (!prepared) {
    return filter_reply(extender::encode_filter_error(std::string(extender::kInvalidRequest) +
                                                      "Pod: " + prepared.error().message),
                        true);
  }
  if (!prepared->requests_devices()) return filter_reply(echo_node_names(args->node_names), false);
  if (options_.live == nullptr) {
    return filter_reply(extender::encode_filter_error(std::string(extender::kNotReady) +
                                                      std::string(kNoLiveSource)),
                        true);
  }
  // A null NodeNames is an empty list (HAMi dereferenced it and crashed).
  LiveFilterAnswer answer = options_.live->filter(*prepared, args->node_names);
  return filter_reply(std::move(answer.body), answer.is_error);
}

HttpResponse ExtenderService::bind(const HttpRequest& request) {
  auto args = extender::decode_binding_args(request.body);
  if (!args) {
    return filter_reply(extender::encode_binding_result(std::string(extender::kInvalidRequest) +
                                                        args.error().message),
                        true);
  }
  if (options_.live == nullptr) {
    return filter_reply(extender::encode_binding_result(std::string(extender::kNotReady) +
                                                        std::string(kNoLiveSource)),
                        true);
  }
  if (args->pod_name.empty() || args->node.empty()) {
    return filter_reply(extender::encode_binding_result(std::string(extender::kInvalidRequest) +
                                                        "PodName and Node are required"),
                        true);
  }
  const std::string error = options_.live->bind(*args);
  return filter_reply(extender::encode_binding_result(error), !error.empty());
}

HttpResponse ExtenderService::webhook(const HttpRequest& request) {
  webhook::QuotaCheck quota;
  if (options_.live != nullptr) {
    quota = [live = options_.live](const model::Pod& pod) {
      return live->admission_quota_check(pod);
    };
  }
  webhook::AdmissionResult result = webhook::handle_admission(
      request.body, request.content_type, registry_,
      {options_.scheduler_name, options_.force_overwrite_default_scheduler}, quota);
  webhook_outcomes_.labels({result.outcome}).inc();
  HttpResponse r = HttpResponse::json(result.http_status, std::move(result.body));
  if (result.outcome == "error") r.outcome = "error";
  return r;
}

HttpResponse ExtenderService::healthz(const HttpRequest&) {
  HttpResponse r;
  r.content_type = "text/plain; charset=utf-8";
  r.body = "ok\n";
  return r;
}

HttpResponse ExtenderService::readyz(const HttpRequest&) {
  // Simulation is ready once configuration is loaded, which happened before the server
  // started. Live is ready once its source synced, leader or follower (HAMi answers 200 on
  // both, so a rolling update can start the new replica while the old one leads); a service
  // without a live source is simulation-only ("all" then means simulation).
  const bool simulation_ready = !registry_.backends().empty();
  LiveRoutesReadiness live{.detail = std::string(kNoLiveSource)};
  if (options_.live != nullptr) live = options_.live->readiness();
  bool ready = true;
  if (options_.readyz_scope == "simulation" || options_.readyz_scope == "all")
    ready &= simulation_ready;
  if (options_.readyz_scope == "live" ||
      (options_.readyz_scope == "all" && options_.live != nullptr)) {
    ready &= live.ready;
  }
  model::JsonWriter w;
  w.begin_object();
  w.key("ready").boolean(ready);
  w.key("scope").string(options_.readyz_scope);
  w.key("components").begin_object();
  w.key("simulation").begin_object();
  w.key("state").string(simulation_ready ? "ready" : "not ready");
  w.key("detail").string(std::to_string(registry_.backends().size()) + " device backend(s) loaded");
  w.end_object();
  w.key("live").begin_object();
  w.key("state").string(options_.live == nullptr ? "not configured"
                        : live.ready             ? "ready"
                                                 : "not ready");
  w.key("detail").string(live.detail);
  if (options_.live != nullptr) {
    // Leadership is its own signal: a ready follower does not filter until it leads.
    w.key("leader").boolean(live.leading);
    w.key("filtering").boolean(live.filtering);
  }
  w.end_object();
  w.end_object();
  w.end_object();
  return HttpResponse::json(ready ? 200 : 503, w.take());
}

}  // namespace hamisim::server
