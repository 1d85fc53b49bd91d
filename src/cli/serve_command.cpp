#include "cli/serve_command.h"

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>

#include "cli/kube_client_metrics.h"
#include "cli/profile_reconciler.h"
#include "cli/resource_slice_list.h"
#ifdef HAMISIM_BENCH_ROUTES
#include "cli/bench_routes.h"
#endif
#include "device/catalog/device_config.h"
#include "engine/engine.h"
#include "fit/description.h"
#include "go/duration.h"
#include "kube/kube_config.h"
#include "kube/kube_source.h"
#include "live/live_scheduler.h"
#include "log/structured.h"
#include "profile/device_profiles.h"
#include "server/extender_service.h"
#include "server/http_server.h"
#include "server/live_service.h"
#include "server/logging.h"
#include "server/metrics.h"
#include "server/plan_api.h"
#include "server/process_metrics.h"
#include "state/snapshot_source.h"

namespace hamisim::cli {
namespace {

std::chrono::milliseconds seconds(double s) {
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
}

// The events' source component: HAMi uses --scheduler-name, which may be empty.
std::string event_component(const ServeOptions& o) {
  return o.scheduler_name.empty() ? "hami-scheduler" : o.scheduler_name;
}

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

// The cluster source the flags ask for, or null for a simulation-only service. Errors name
// the flag.
Result<std::unique_ptr<state::ClusterSource>> make_cluster_source(
    const ServeOptions& o, std::shared_ptr<kube::ClientObserver> observer) {
  const int chosen = int(!o.cluster_snapshot.empty()) + int(!o.kubeconfig.empty()) +
                     int(o.in_cluster) + int(o.live);
  if (chosen > 1) {
    return make_error("--cluster-snapshot, --kubeconfig, --in-cluster and --live are exclusive");
  }
  if (!o.snapshot_out.empty() && o.cluster_snapshot.empty()) {
    return make_error("--snapshot-out needs --cluster-snapshot");
  }
  if (o.snapshot_device_plugin && o.cluster_snapshot.empty()) {
    return make_error("--snapshot-device-plugin needs --cluster-snapshot");
  }
  if (!o.cluster_snapshot.empty()) {
    auto source = state::SnapshotSource::load(
        o.cluster_snapshot,
        {.play_device_plugin = o.snapshot_device_plugin, .scheduler_name = event_component(o)});
    if (!source) return make_error("--cluster-snapshot: " + source.error().message);
    return std::unique_ptr<state::ClusterSource>(std::move(source).value());
  }
  // A live source only when asked for: $KUBECONFIG alone never turns a simulation service live.
  if (o.kubeconfig.empty() && !o.in_cluster && !o.live && !o.hami_scheduler) {
    return std::unique_ptr<state::ClusterSource>();
  }
  const auto rules = kube::LoadingRules::from_process(o.kubeconfig, o.kube_context);
  Result<kube::KubeConfig> config = make_error("no client configuration");
  std::string flag;
  if (o.in_cluster) {
    config = kube::load_in_cluster_config(rules);
    flag = "--in-cluster: ";
  } else if (!o.kubeconfig.empty() || o.live) {
    config = kube::load_client_config(rules);
    flag = o.live ? "--live: " : "--kubeconfig: ";
  } else {
    // HAMi's scheduler (hami-dropin.md §3): $KUBECONFIG, else ~/.kube/config; when that
    // cannot be loaded, the pod's service account.
    config = kube::load_hami_client_config(rules);
  }
  if (!config) return make_error(flag + config.error().message);
  for (const auto& warning : config->warnings) spdlog::warn("{}", warning);
  spdlog::info("client configuration: {}", config->description);
  if (!config->proxy_url.empty()) {
    spdlog::info("Kubernetes API through the proxy from {}", config->proxy_source);
  }
  kube::ClientOptions client;
  client.observer = std::move(observer);
  client.qps = o.kube_qps;
  client.burst = o.kube_burst;
  if (o.kube_timeout_s > 0) client.request_timeout = std::chrono::seconds(o.kube_timeout_s);
  client.user_agent = "hamisim/" + event_component(o);
  kube::KubeSourceOptions source_options;
  source_options.scheduler_name = event_component(o);
  if (o.leader_elect) {
    source_options.lease_namespace = o.leader_elect_resource_namespace;
    source_options.lease_name = o.leader_elect_resource_name;
  }
  auto source = kube::KubeSource::create(*config, client, source_options);
  if (!source) return make_error("cluster source: " + source.error().message);
  return std::unique_ptr<state::ClusterSource>(std::move(source).value());
}

// A duration flag: Go's time.ParseDuration grammar, as every duration flag reads, not negative;
// kept to the millisecond the live path counts in.
Result<std::chrono::milliseconds> duration_flag(std::string_view text) {
  const auto d = go::parse_duration(text);
  if (!d || d->count() < 0) {
    return make_error("invalid duration \"" + std::string(text) +
                      "\" (use e.g. 5m, 28s, 1m30s, 300ms)");
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
}

Result<live::LiveOptions> live_options(const ServeOptions& o) {
  live::LiveOptions lo;
  lo.scheduler_name = event_component(o);
  lo.policy = fit::FitPolicy{o.gpu_policy, o.node_policy};
  auto timeout = duration_flag(o.node_lock_timeout);
  if (!timeout) return make_error("--node-lock-timeout: " + timeout.error().message);
  lo.node_lock_timeout = std::chrono::duration_cast<std::chrono::seconds>(*timeout);
  auto retry = duration_flag(o.node_lock_retry_timeout);
  if (!retry) return make_error("--node-lock-retry-timeout: " + retry.error().message);
  lo.node_lock_retry_timeout = *retry;
  lo.node_selector = o.node_label_selector;
  // HAMi's chart sets both from the downward API; they name this pod for the role labels.
  if (const char* pod = std::getenv("POD_NAME"); pod != nullptr && *pod != '\0') {
    const char* ns = std::getenv("POD_NAMESPACE");
    lo.role_labels = {.pod_name = pod, .pod_namespace = ns != nullptr ? ns : ""};
  }
  if (o.leader_elect) {
    if (o.leader_elect_resource_namespace.empty()) {
      return make_error(
          "--leader-elect needs --leader-elect-resource-namespace (where the kube-scheduler "
          "Lease is)");
    }
    if (o.leader_elect_resource_name.empty()) {
      return make_error(
          "--leader-elect needs --leader-elect-resource-name (the kube-scheduler "
          "Lease to observe)");
    }
    lo.leader = {
        .enabled = true,
        .lease_namespace = o.leader_elect_resource_namespace,
        .lease_name = o.leader_elect_resource_name,
        .identity = o.leader_elect_identity.empty() ? hostname() : o.leader_elect_identity};
    if (lo.leader.identity.empty()) return make_error("--leader-elect: the hostname is empty");
  }
  return lo;
}

}  // namespace

void add_serve_options(CLI::App& app, ServeOptions& o) {
  app.add_option("--listen", o.listen, "Address of the extender listener")->capture_default_str();
  app.add_option("--metrics-listen", o.metrics_listen,
                 "Address of the /metrics listener (empty: off)")
      ->capture_default_str();
  app.add_flag("--insecure-http", o.insecure_http,
               "Serve plain HTTP (required off loopback without TLS)");
  app.add_option("--tls-cert", o.tls_cert, "Server certificate (PEM), reloaded on change");
  app.add_option("--tls-key", o.tls_key, "Server key (PEM), reloaded on change");
  app.add_option("--client-ca", o.client_ca, "CA bundle; makes client certificates mandatory");
  app.add_option("--allow-live-clients", o.allow_live_clients,
                 "Client identities (CN or DNS SAN) allowed on /filter and /bind")
      ->delimiter(',');
  app.add_option("--allow-simulation-clients", o.allow_simulation_clients,
                 "Client identities allowed on the simulation routes")
      ->delimiter(',');
  app.add_option("--allow-webhook-clients", o.allow_webhook_clients,
                 "Client identities allowed on /webhook")
      ->delimiter(',');
  app.add_option("--max-body-bytes", o.max_body_bytes, "Largest request body (413 beyond)")
      ->capture_default_str();
  app.add_option("--max-inflight-live", o.max_inflight_live,
                 "Concurrent live requests (429 beyond)")
      ->capture_default_str();
  app.add_option("--max-inflight-simulation", o.max_inflight_simulation,
                 "Concurrent simulation requests (429 beyond)")
      ->capture_default_str();
  app.add_option(
         "--max-inflight-simulation-bytes", o.max_inflight_simulation_bytes,
         "Body bytes of simulation requests in flight (429 beyond, before the body is read)")
      ->capture_default_str();
  app.add_option("--max-inflight-webhook", o.max_inflight_webhook,
                 "Concurrent webhook requests (429 beyond)")
      ->capture_default_str();
  app.add_option("--max-inflight-plan", o.max_inflight_plan,
                 "/v1/plan and /v1/estimate requests computing or waiting (429 beyond)")
      ->capture_default_str();
  app.add_option("--plan-threads", o.plan_threads,
                 "Threads that compute /v1/plan and /v1/estimate, apart from the request threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--simulation-threads", o.simulation_threads,
                 "Threads that compute /filter-simulation, apart from the request threads (0: "
                 "one per core)")
      ->capture_default_str()
      ->check(CLI::Range(0, 256));
  app.add_option("--compute-nice", o.compute_nice,
                 "How much lower the plan and simulation threads' priority is than the request "
                 "threads' (nice increment), so the live verbs and probes get the CPU first")
      ->capture_default_str()
      ->check(CLI::Range(0, 19));
  app.add_option("--max-plan-time", o.max_plan_time_s,
                 "Seconds one /v1/plan or /v1/estimate may compute (503 beyond); caps the "
                 "request's own binpacking budgets")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 3600.0));
  app.add_option("--max-connections", o.max_connections,
                 "Open connections on the main listener (beyond: the longest idle one is closed)")
      ->capture_default_str();
  app.add_option("--max-metrics-connections", o.max_metrics_connections,
                 "Open connections on the metrics listener (probes, scrapes; its own thread)")
      ->capture_default_str();
  app.add_option("--header-timeout", o.header_timeout_s,
                 "Seconds to read request headers (and TLS handshake)")
      ->capture_default_str();
  app.add_option("--body-timeout", o.body_timeout_s, "Seconds to read a body / write a response")
      ->capture_default_str();
  app.add_option("--idle-timeout", o.idle_timeout_s, "Seconds a keep-alive connection may idle")
      ->capture_default_str();
  app.add_option("--shutdown-grace", o.shutdown_grace_s,
                 "Seconds in-flight requests get to finish after SIGTERM")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "Worker threads (0: one per core)")->capture_default_str();
  app.add_option("--log-format", o.log_format, "text, json or klog (klog's text format)")
      ->capture_default_str();
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  app.add_flag("--legacy-metrics", o.legacy_metrics,
               "Also export HAMi's legacy metric names (GPUDeviceMemoryLimit, ...)");
  add_device_flags(app, o.device, "HAMi device-config.yaml");
  app.add_option("--device-profiles", o.device_profiles_path,
                 "Device profiles of node groups (templates without registrations)");
  app.add_option("--gpu-scheduler-policy", o.gpu_policy, "Default GPU policy")
      ->capture_default_str();
  app.add_option("--node-scheduler-policy", o.node_policy, "Default node policy")
      ->capture_default_str();
  app.add_option("--legacy-nodes-filter", o.legacy_nodes_filter,
                 "/filter requests carrying Nodes: simulate or reject")
      ->check(CLI::IsMember({"simulate", "reject"}))
      ->capture_default_str();
  app.add_option("--readyz-scope", o.readyz_scope,
                 "Paths that decide /readyz: simulation, live, all")
      ->check(CLI::IsMember({"simulation", "live", "all"}))
      ->capture_default_str();

  // Live path. Without a cluster source the service is simulation-only.
  app.add_option("--kubeconfig", o.kubeconfig,
                 "Live path: the cluster's kubeconfig (list+watch Nodes, Pods, ResourceQuotas)");
  app.add_option("--context", o.kube_context, "Live path: kubeconfig context (default: current)");
  app.add_flag("--in-cluster", o.in_cluster,
               "Live path: use the pod's service account to reach the API server");
  app.add_flag("--live", o.live,
               "Live path: find the cluster as kubectl does ($KUBECONFIG, ~/.kube/config, else "
               "the pod's service account)");
  app.add_option("--cluster-snapshot", o.cluster_snapshot,
                 "Live path without a cluster: Kubernetes List files (JSON/YAML) or directories; "
                 "writes go to memory")
      ->expected(1, -1);
  app.add_option("--snapshot-out", o.snapshot_out,
                 "With --cluster-snapshot: write every object to this file on shutdown");
  app.add_flag("--snapshot-device-plugin", o.snapshot_device_plugin,
               "With --cluster-snapshot: play the device plugin after each bind (bind-phase "
               "success, node lock released)");
  app.add_option("--kube-qps", o.kube_qps, "API requests per second (not watches)")
      ->capture_default_str();
  app.add_option("--kube-burst", o.kube_burst, "API request burst")->capture_default_str();
  app.add_option("--scheduler-name", o.scheduler_name,
                 "Scheduler name the webhook writes into pods; events' source component");
  app.add_flag("--force-overwrite-default-scheduler", o.force_overwrite_default_scheduler,
               "Webhook: take over pods asking for default-scheduler (default true; "
               "--force-overwrite-default-scheduler=false turns it off)")
      ->capture_default_str();
  app.add_option("--node-lock-timeout", o.node_lock_timeout,
                 "Age after which a node lock is expired (Go duration)")
      ->capture_default_str();
  app.add_option("--node-lock-retry-timeout", o.node_lock_retry_timeout,
                 "How long a PodGroup member's bind waits for a locked node (0: no wait)")
      ->capture_default_str();
  app.add_flag("--leader-elect", o.leader_elect,
               "Serve the live path only while the co-located kube-scheduler holds its Lease");
  app.add_option("--leader-elect-resource-name", o.leader_elect_resource_name,
                 "The kube-scheduler Lease to observe");
  app.add_option("--leader-elect-resource-namespace", o.leader_elect_resource_namespace,
                 "Namespace of that Lease")
      ->capture_default_str();
  app.add_option("--leader-elect-identity", o.leader_elect_identity,
                 "Leader when the Lease holder starts with this (default: the hostname, which "
                 "kube-scheduler's identity starts with; set it under hostNetwork)");
  app.add_option("--profile-reconcile-interval", o.profile_reconcile_interval,
                 "With a live source and --device-profiles: how often real nodes are compared "
                 "with their profiles")
      ->capture_default_str();
}

int run_serve(const ServeOptions& o) {
  // Request and response bodies reach megabytes (50 template nodes are ~0.6 MB each way).
  // With glibc's defaults every such buffer is mmapped and unmapped, or the heap top trimmed,
  // once per request, and the page faults cost more than the filter itself
  // (docs/performance.md). Keeping freed memory in the process bounds RSS by the peak instead.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
  // glibc gives threads up to 8 arenas per core, and each keeps what it freed. With ~20 server
  // threads, a /metrics scrape of a large cluster (~120 MB of transient memory at 30,000 pods)
  // landed in a different arena each time, and RSS grew by that much per scrape until every
  // arena held one: 310 MB became 1.5 GB at 1,000 nodes, 4.9 GB at 5,000 (docs/performance.md).
  // One arena per core bounds that. An operator's own GLIBC_TUNABLES arena_max is kept.
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables == nullptr || std::strstr(tunables, "glibc.malloc.arena_max") == nullptr) {
    mallopt(M_ARENA_MAX, static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 2u, 8u)));
  }
  const char* component = o.component.c_str();
  auto format = server::parse_log_format(o.log_format);
  if (!format) {
    std::fprintf(stderr, "%s: --log-format: %s\n", component, format.error().message.c_str());
    return 2;
  }
  if (Status s = server::init_logging(*format, o.log_level, o.verbosity); !s) {
    std::fprintf(stderr, "%s: --log-level: %s\n", component, s.error().message.c_str());
    return 2;
  }
  for (const FlagNotes::Note& note : o.flag_notes.notes) {
    const std::string flag = "--" + note.flag;
    if (note.level == FlagNotes::kWarning) {
      log::warn("Flag accepted but not honoured",
                {{"flag", flag}, {"value", note.value}, {"reason", note.why}});
    } else {
      log::info("Flag accepted without effect",
                {{"flag", flag}, {"value", note.value}, {"reason", note.why}});
    }
  }
  auto loaded_config = load_device_flags(o.device);
  if (!loaded_config) {
    spdlog::error("{}", loaded_config.error().message);
    return 2;
  }
  const device::DeviceConfig& config = *loaded_config;
  for (const auto& section : config.ignored_sections) {
    spdlog::warn("device config section \"{}\" is unknown and is ignored", section);
  }
  const auto shared_registry =
      std::make_shared<const device::DeviceRegistry>(device::build_registry(config));
  const device::DeviceRegistry& registry = *shared_registry;
  auto profiles = std::make_shared<profile::DeviceProfiles>();
  if (!o.device_profiles_path.empty()) {
    auto loaded = profile::load_device_profiles(o.device_profiles_path, registry);
    if (!loaded) {
      spdlog::error("--device-profiles: {}", loaded.error().message);
      return 2;
    }
    *profiles = std::move(loaded).value();
    spdlog::info("loaded {} device profile(s) from {}", profiles->profiles.size(),
                 o.device_profiles_path);
  }
  // One engine answers every simulation route (/filter-simulation, /filter with Nodes,
  // /v1/plan, /v1/estimate), under the reconciler's observations.
  const auto simulation = std::make_shared<engine::Engine>(
      registry, profiles, fit::FitPolicy{o.gpu_policy, o.node_policy});

  server::MetricsRegistry metrics;
  auto source = make_cluster_source(o, make_kube_client_metrics(metrics));
  if (!source) {
    spdlog::error("{}", source.error().message);
    return 2;
  }
  if (!*source && o.leader_elect) {
    // Nothing would observe a Lease: the flag would be silently without effect.
    spdlog::error(
        "--leader-elect needs a cluster source (--kubeconfig, --in-cluster, --live or "
        "--cluster-snapshot): without one there is no live path to lead");
    return 2;
  }
  std::unique_ptr<live::LiveScheduler> live;
  if (*source) {
    auto lo = live_options(o);
    if (!lo) {
      spdlog::error("{}", lo.error().message);
      return 2;
    }
    if (!lo->role_labels.pod_name.empty()) {
      spdlog::info(
          "while leading, this pod ({}/{}) is labelled hami.io/scheduler-role=leader "
          "and the other hami-scheduler pods follower",
          lo->role_labels.pod_namespace, lo->role_labels.pod_name);
    }
    if (std::getenv("HAMI_NODELOCK_EXPIRE") != nullptr) {
      spdlog::info(
          "HAMI_NODELOCK_EXPIRE is set; as in HAMi v2.10, --node-lock-timeout ({}) "
          "decides",
          o.node_lock_timeout);
    }
    live = std::make_unique<live::LiveScheduler>(registry, **source, std::move(lo).value());
  }

  server::export_build_info(metrics);
  server::export_process_metrics(metrics);
  std::unique_ptr<server::LiveService> live_service;
  if (live) live_service = std::make_unique<server::LiveService>(*live, metrics, o.legacy_metrics);
  server::ExtenderServiceOptions service_options;
  service_options.reject_legacy_nodes_filter = o.legacy_nodes_filter == "reject";
  service_options.readyz_scope = o.readyz_scope;
  service_options.live = live_service.get();
  service_options.scheduler_name = o.scheduler_name;
  service_options.force_overwrite_default_scheduler = o.force_overwrite_default_scheduler;
  server::ExtenderService service(*simulation, metrics, service_options);

  server::ServerConfig sc;
  sc.listen = o.listen;
  sc.extender_listen = o.extender_listen;
  sc.metrics_listen = o.metrics_listen;
  sc.insecure_http = o.insecure_http;
  sc.tls_cert = o.tls_cert;
  sc.tls_key = o.tls_key;
  sc.client_ca = o.client_ca;
  sc.allow_live_clients = o.allow_live_clients;
  sc.allow_simulation_clients = o.allow_simulation_clients;
  sc.allow_webhook_clients = o.allow_webhook_clients;
  // With a live source /filter and /bind write to the cluster: never from the network
  // without a verified client certificate (docs/live.md, "Who can call what").
  sc.live_routes_loopback_or_certificate = live != nullptr;
  sc.max_body_bytes = o.max_body_bytes;
  sc.max_inflight_live = o.max_inflight_live;
  sc.max_inflight_simulation = o.max_inflight_simulation;
  sc.max_inflight_simulation_bytes = o.max_inflight_simulation_bytes;
  sc.max_inflight_webhook = o.max_inflight_webhook;
  sc.max_inflight_heavy = o.max_inflight_plan;
  sc.heavy_threads = o.plan_threads;
  sc.simulation_threads = o.simulation_threads;
  sc.compute_nice = o.compute_nice;
  sc.max_connections = o.max_connections;
  sc.max_metrics_connections = o.max_metrics_connections;
  sc.header_timeout = seconds(o.header_timeout_s);
  sc.body_timeout = seconds(o.body_timeout_s);
  sc.idle_timeout = seconds(o.idle_timeout_s);
  sc.threads = o.threads;
  if (live && sc.threads == 0) {
    // A bind may wait for a node lock (retries, PodGroup waits): extra workers keep such
    // waits from starving the other routes.
    sc.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) + 8;
  }

  // The what-if API plans in process with the filters' engine.
  auto planning = planner::scaleup::Planning::create(simulation, std::nullopt);
  if (!planning) {
    spdlog::error("cannot set up the planner: {}", planning.error().message);
    return 2;
  }
  server::PlanApiOptions plan_options;
  plan_options.max_request_time =
      std::chrono::milliseconds(static_cast<int64_t>(o.max_plan_time_s * 1000));
  server::PlanApi plan_api(std::move(planning).value(), plan_options);
  std::vector<server::Route> routes = service.routes();
  for (auto& r : plan_api.routes()) routes.push_back(std::move(r));
#ifdef HAMISIM_BENCH_ROUTES
  spdlog::warn("benchmark build: serving the no-op route POST /bench/noop");
  for (auto& r : bench_routes()) routes.push_back(std::move(r));
#endif

  auto server = server::HttpServer::create(sc, std::move(routes), &metrics);
  if (!server) {
    spdlog::error("cannot start: {}", server.error().message);
    return 2;
  }
  (*server)->shutdown_on_signals(seconds(o.shutdown_grace_s));
  std::unique_ptr<ProfileReconciler> reconciler;
  if (live) {
    spdlog::info("live path: {}", (*source)->describe());
    live->start();
    if (!profiles->profiles.empty()) {
      auto interval = duration_flag(o.profile_reconcile_interval);
      if (!interval || interval->count() <= 0) {
        spdlog::error("--profile-reconcile-interval: {}",
                      interval ? "must be positive" : interval.error().message);
        return 2;
      }
      // Under DRA the reconciler lists the cluster's ResourceSlices through the source's own
      // client (its credentials, rate limit and metrics). A snapshot has no API server, and
      // its store keeps no slices.
      SliceLister list_slices;
      if (auto* kube_source = dynamic_cast<kube::KubeSource*>(source->get())) {
        list_slices = [&client = kube_source->client()](const std::atomic<bool>& cancel) {
          return list_resource_slices(client, &cancel);
        };
      } else if (std::any_of(profiles->profiles.begin(), profiles->profiles.end(),
                             [](const auto& p) { return !p.dra_slices.empty(); })) {
        spdlog::warn(
            "device profiles with a DRA form: nodes' ResourceSlices are not compared with "
            "them (the cluster snapshot keeps no ResourceSlices)");
      }
      reconciler = std::make_unique<ProfileReconciler>(registry, profiles, *simulation, *live,
                                                       metrics, *interval, std::move(list_slices));
      reconciler->start();
    }
  }
  (*server)->start();
  if (!o.extender_listen.empty()) {
    // Before the listening line, which tests and scripts wait for.
    log::info(o.component + ": every route also on --extender-bind",
              {{"extender", o.extender_listen},
               {"extenderPort", static_cast<int>((*server)->extender_port())}});
  }
  // The message names the command as operators start it (`scheduler` under HAMi's chart);
  // the fields are the same for both.
  const std::string listening = o.component + ": listening";
  log::info(listening,
            {{"listen", o.listen},
             {"port", static_cast<int>((*server)->port())},
             {"metrics", o.metrics_listen.empty() ? std::string_view("off (--metrics-listen '')")
                                                  : std::string_view(o.metrics_listen)},
             {"metricsPort", static_cast<int>((*server)->metrics_port())},
             {"deviceBackends", registry.backends().size()}});
  (*server)->wait();
  int status = 0;
  if (reconciler) reconciler->stop();
  if (live) {
    live->stop();
    if (!o.snapshot_out.empty()) {
      auto* snapshot = static_cast<state::SnapshotSource*>(source->get());
      if (Status s = snapshot->write_snapshot(o.snapshot_out); !s) {
        spdlog::error("--snapshot-out: {}", s.error().message);
        status = 1;
      } else {
        spdlog::info("wrote the cluster snapshot to {}", o.snapshot_out);
      }
    }
  }
  spdlog::info("{}: stopped", o.component);
  return status;
}

}  // namespace hamisim::cli
