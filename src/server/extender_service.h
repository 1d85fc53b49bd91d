#pragma once
// The extender routes of `hamisim serve` (spec §4.1): /filter-simulation, /filter, /bind,
// /webhook, /healthz, /readyz. The simulation answers are made here, over the simulation
// filter; /filter with NodeNames, /bind, the webhook's quota check and the live half of /readyz
// go to a LiveRoutes when one is configured (LiveService), and answer `not ready:` without one.
// Only the wire format lives here; the decisions are in src/fit and src/live.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "device/registry.h"
#include "fit/node_fit.h"
#include "server/fit_outcomes.h"
#include "server/http_server.h"
#include "server/live_routes.h"
#include "server/metrics.h"
#include "server/simulation_filter.h"

namespace hamisim::server {

struct ExtenderServiceOptions {
  // `/filter` requests carrying Nodes: served by the simulation path (HAMi >= #2046
  // compatibility) unless rejected.
  bool reject_legacy_nodes_filter = false;
  // Which paths decide /readyz's status: "simulation", "live" or "all".
  std::string readyz_scope = "all";
  // The live path; null in a simulation-only service (live routes answer `not ready:`).
  LiveRoutes* live = nullptr;
  // /webhook: --scheduler-name and --force-overwrite-default-scheduler.
  std::string scheduler_name;
  bool force_overwrite_default_scheduler = true;
};

class ExtenderService {
 public:
  // `engine` answers /filter-simulation and /filter with Nodes; its registry and policy serve
  // the live routes.
  ExtenderService(const engine::Engine& engine, MetricsRegistry& metrics,
                  ExtenderServiceOptions options);

  std::vector<Route> routes();

  HttpResponse filter_simulation(const HttpRequest& request);
  HttpResponse filter(const HttpRequest& request);
  HttpResponse bind(const HttpRequest& request);
  HttpResponse webhook(const HttpRequest& request);
  HttpResponse healthz(const HttpRequest& request);
  HttpResponse readyz(const HttpRequest& request);

 private:
  void record(std::string_view route, const SimulationResult& result, const HttpRequest& request);
  // A caller that does not send SimulatedPods (SimulatedPodsWatch): counted, and logged at most
  // once per kUnsentPlacementsLogInterval.
  void report_unsent_placements(std::string_view route, const SimulationResult& result,
                                const HttpRequest& request);

  const device::DeviceRegistry& registry_;
  const fit::FitPolicy& policy_;
  SimulationFilter simulation_;
  ExtenderServiceOptions options_;
  FitOutcomes fit_outcomes_;
  CounterFamily& profile_notes_;
  CounterFamily& webhook_outcomes_;
  CounterFamily& unsent_placements_;
  std::atomic<int64_t> last_unsent_warning_{0};  // steady clock, ns; 0: never
  std::atomic<uint64_t> unsent_since_warning_{0};
};

inline constexpr std::chrono::seconds kUnsentPlacementsLogInterval{60};

}  // namespace hamisim::server
