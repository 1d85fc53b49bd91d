#pragma once
// HAMi's own metric families (reference hami-dropin.md §6), with HAMi's names, HELP strings,
// labels, units and values, so HAMi's ServiceMonitor, dashboards and alerts work unchanged:
// hami_build_info always; with a live path, the per-device families (leader only, as HAMi),
// the quota families and the per-container families, computed at each scrape from the live
// managers' snapshots. With `legacy`, HAMi's --legacy-metrics names are emitted as well.
//
// Every series but hami_build_info carries zone="vGPU"; all are gauges.

#include "live/live_scheduler.h"
#include "server/metrics.h"

namespace hamisim::server {

// `live` may be null (simulation-only serve: only hami_build_info). It must outlive the
// registry's scrapes.
void export_hami_metrics(const live::LiveScheduler* live, MetricsRegistry& metrics, bool legacy);

}  // namespace hamisim::server
