#pragma once
// The extender routes of `hamisim serve` (spec §4.1): /filter-simulation, /filter, /bind,
// /webhook, /healthz, /readyz, wired to the simulation filter and (when configured) the live
// cluster state.

#include <string>
#include <vector>

#include "device/registry.h"
#include "fit/inventory.h"
#include "fit/node_fit.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/simulation_filter.h"

namespace hamisim::server {

struct ExtenderServiceOptions {
  // `/filter` requests carrying Nodes: served by the simulation path (HAMi >= #2046
  // compatibility) unless rejected.
  bool reject_legacy_nodes_filter = false;
  // Which paths decide /readyz's status: "simulation", "live" or "all".
  std::string readyz_scope = "all";
};

class ExtenderService {
 public:
  ExtenderService(const device::DeviceRegistry& registry, const fit::InventoryProvider& inventory,
                  fit::FitPolicy policy, MetricsRegistry& metrics, ExtenderServiceOptions options);

  std::vector<Route> routes();

  HttpResponse filter_simulation(const HttpRequest& request);
  HttpResponse filter(const HttpRequest& request);
  HttpResponse bind(const HttpRequest& request);
  HttpResponse webhook(const HttpRequest& request);
  HttpResponse healthz(const HttpRequest& request);
  HttpResponse readyz(const HttpRequest& request);

 private:
  void record(std::string_view route, const SimulationResult& result);

  const device::DeviceRegistry& registry_;
  fit::FitPolicy policy_;
  SimulationFilter simulation_;
  ExtenderServiceOptions options_;
  CounterFamily& fit_outcomes_;
  CounterFamily& profile_notes_;
};

}  // namespace hamisim::server
