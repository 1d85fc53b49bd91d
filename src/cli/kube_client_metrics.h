#pragma once
// The Kubernetes client's measurements (kube::ClientObserver) as Prometheus families of the
// server's registry:
//   hamisim_kube_client_requests_total{verb,resource,code}
//   hamisim_kube_client_request_duration_seconds{verb,resource}
//   hamisim_kube_client_rate_limiter_wait_seconds{verb}
//   hamisim_kube_client_exec_plugin_calls_total{status}
//   hamisim_kube_client_watch_restarts_total{resource,reason}
//   hamisim_kube_client_events_dropped_total

#include <memory>

#include "kube/client.h"

namespace hamisim::server {
class MetricsRegistry;
}

namespace hamisim::cli {

// Registers the families (at zero where they have no labels) and returns the observer that
// feeds them; `metrics` must outlive it.
std::shared_ptr<kube::ClientObserver> make_kube_client_metrics(server::MetricsRegistry& metrics);

}  // namespace hamisim::cli
