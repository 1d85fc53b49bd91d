#include "cli/serve_command.h"

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <chrono>

#include "fit/device_config.h"
#include "fit/inventory.h"
#include "profile/device_profiles.h"
#include "profile/profile_inventory.h"
#include "server/extender_service.h"
#include "server/http_server.h"
#include "server/logging.h"
#include "server/metrics.h"
#include "server/plan_api.h"

namespace hamisim::cli {
namespace {

std::chrono::milliseconds seconds(double s) {
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
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
  app.add_option("--max-inflight-webhook", o.max_inflight_webhook,
                 "Concurrent webhook requests (429 beyond)")
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
  app.add_option("--log-format", o.log_format, "text or json")->capture_default_str();
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  app.add_option("--device-config-file", o.device_config_path, "HAMi device-config.yaml");
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
}

int run_serve(const ServeOptions& o) {
  auto format = server::parse_log_format(o.log_format);
  if (!format) {
    std::fprintf(stderr, "hamisim serve: --log-format: %s\n", format.error().message.c_str());
    return 2;
  }
  if (Status s = server::init_logging(*format, o.log_level); !s) {
    std::fprintf(stderr, "hamisim serve: --log-level: %s\n", s.error().message.c_str());
    return 2;
  }
  fit::DeviceConfig config;
  if (!o.device_config_path.empty()) {
    auto loaded = fit::load_device_config(o.device_config_path);
    if (!loaded) {
      spdlog::error("--device-config-file: {}", loaded.error().message);
      return 2;
    }
    config = std::move(loaded).value();
    for (const auto& section : config.ignored_sections) {
      spdlog::warn("device config section \"{}\" is not supported yet and is ignored", section);
    }
  }
  const auto shared_registry =
      std::make_shared<const device::DeviceRegistry>(fit::build_registry(config));
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
  const profile::ProfileInventoryProvider inventory(registry, profiles);
  server::MetricsRegistry metrics;
  server::ExtenderServiceOptions service_options;
  service_options.reject_legacy_nodes_filter = o.legacy_nodes_filter == "reject";
  service_options.readyz_scope = o.readyz_scope;
  server::ExtenderService service(registry, inventory, fit::FitPolicy{o.gpu_policy, o.node_policy},
                                  metrics, service_options);

  server::ServerConfig sc;
  sc.listen = o.listen;
  sc.metrics_listen = o.metrics_listen;
  sc.insecure_http = o.insecure_http;
  sc.tls_cert = o.tls_cert;
  sc.tls_key = o.tls_key;
  sc.client_ca = o.client_ca;
  sc.allow_live_clients = o.allow_live_clients;
  sc.allow_simulation_clients = o.allow_simulation_clients;
  sc.allow_webhook_clients = o.allow_webhook_clients;
  sc.max_body_bytes = o.max_body_bytes;
  sc.max_inflight_live = o.max_inflight_live;
  sc.max_inflight_simulation = o.max_inflight_simulation;
  sc.max_inflight_webhook = o.max_inflight_webhook;
  sc.header_timeout = seconds(o.header_timeout_s);
  sc.body_timeout = seconds(o.body_timeout_s);
  sc.idle_timeout = seconds(o.idle_timeout_s);
  sc.threads = o.threads;

  // The what-if API plans in process with the same registry and profiles as the filters.
  auto planning = planner::scaleup::Planning::create(shared_registry, profiles, std::nullopt,
                                                     fit::FitPolicy{o.gpu_policy, o.node_policy});
  if (!planning) {
    spdlog::error("cannot set up the planner: {}", planning.error().message);
    return 2;
  }
  server::PlanApi plan_api(std::move(planning).value());
  std::vector<server::Route> routes = service.routes();
  for (auto& r : plan_api.routes()) routes.push_back(std::move(r));

  auto server = server::HttpServer::create(sc, std::move(routes), &metrics);
  if (!server) {
    spdlog::error("cannot start: {}", server.error().message);
    return 2;
  }
  (*server)->shutdown_on_signals(seconds(o.shutdown_grace_s));
  (*server)->start();
  spdlog::info("hamisim serve: listening on {} (port {}), metrics on {}, {} device backend(s)",
               o.listen, (*server)->port(), o.metrics_listen, registry.backends().size());
  (*server)->wait();
  spdlog::info("hamisim serve: stopped");
  return 0;
}

}  // namespace hamisim::cli
