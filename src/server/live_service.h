#pragma once
// The live half of the extender routes (spec §4.1, §4.4): /filter with NodeNames, /bind and the
// webhook's quota check answered by live::LiveScheduler, with HAMi's log lines, and the live
// path's metrics (hamisim_live_*, HAMi's own families) registered on construction. Its own
// library (hamisim_server_live), so that a simulation-only server does not link src/live.

#include <optional>
#include <string>
#include <vector>

#include "live/live_scheduler.h"
#include "server/fit_outcomes.h"
#include "server/live_routes.h"
#include "server/metrics.h"

namespace hamisim::server {

class LiveService final : public LiveRoutes {
 public:
  // `live` must outlive the service and every scrape of `metrics`. `legacy_metrics`
  // (--legacy-metrics): HAMi's legacy metric names besides the hami_* ones.
  LiveService(live::LiveScheduler& live, MetricsRegistry& metrics, bool legacy_metrics);

  LiveFilterAnswer filter(const fit::PreparedPod& pod,
                          const std::vector<std::string>& node_names) override;
  std::string bind(const extender::ExtenderBindingArgs& args) override;
  std::optional<std::string> admission_quota_check(const model::Pod& pod) const override;
  LiveRoutesReadiness readiness() const override;

 private:
  live::LiveScheduler& live_;
  FitOutcomes fit_outcomes_;
};

}  // namespace hamisim::server
