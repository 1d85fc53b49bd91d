#pragma once
// HAMi's own metric families (reference hami-dropin.md §6), with HAMi's names, HELP strings,
// labels, units and values, so HAMi's ServiceMonitor, dashboards and alerts work unchanged:
// the per-device families (leader only, as HAMi), the quota families and the per-container
// families, computed at each scrape from the live managers' snapshots. With `legacy`, HAMi's
// --legacy-metrics names are emitted as well. hami_build_info, which a simulation-only server
// exports too, is export_hami_build_info (process_metrics.h).
//
// Every series but hami_build_info carries zone="vGPU"; all are gauges.

#include "live/live_scheduler.h"
#include "server/metrics.h"

namespace hamisim::server {

// `live` must outlive the registry's scrapes.
void export_hami_metrics(const live::LiveScheduler& live, MetricsRegistry& metrics, bool legacy);

}  // namespace hamisim::server
