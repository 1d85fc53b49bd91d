#include "cli/kube_client_metrics.h"

#include "server/metrics.h"

namespace hamisim::cli {
namespace {

// Rate-limiter waits are zero or short; API calls are milliseconds to seconds.
constexpr double kWaitBuckets[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
constexpr double kRequestBuckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                      1,     2.5,  5,     10,   15,  30,   60};

class KubeClientMetrics final : public kube::ClientObserver {
 public:
  explicit KubeClientMetrics(server::MetricsRegistry& m)
      : requests_(m.counter("hamisim_kube_client_requests_total",
                            "Kubernetes API requests by verb, resource and HTTP status code "
                            "(<error>: no response)",
                            {"verb", "resource", "code"})),
        latency_(m.histogram("hamisim_kube_client_request_duration_seconds",
                             "Kubernetes API request latency (watches: until the headers)",
                             {"verb", "resource"}, kRequestBuckets)),
        waits_(m.histogram("hamisim_kube_client_rate_limiter_wait_seconds",
                           "Time requests waited for the client-side rate limiter (--kube-qps, "
                           "--kube-burst)",
                           {"verb"}, kWaitBuckets)),
        exec_(m.counter("hamisim_kube_client_exec_plugin_calls_total",
                        "Runs of the kubeconfig's exec credential plugin by outcome", {"status"})),
        restarts_(m.counter("hamisim_kube_client_watch_restarts_total",
                            "Watches re-opened, by resource and reason (timeout: the server "
                            "ended it; expired: 410, relisted; error)",
                            {"resource", "reason"})),
        dropped_(m.counter("hamisim_kube_client_events_dropped_total",
                           "Kubernetes Events dropped because the send queue was full")
                     .labels({})) {}

  void request_done(std::string_view verb, std::string_view resource, std::string_view code,
                    double seconds) override {
    requests_.labels({verb, resource, code}).inc();
    latency_.labels({verb, resource}).observe(seconds);
  }
  void rate_limiter_waited(std::string_view verb, double seconds) override {
    waits_.labels({verb}).observe(seconds);
  }
  void exec_plugin_ran(std::string_view status) override { exec_.labels({status}).inc(); }
  void watch_restarted(std::string_view resource, std::string_view reason) override {
    restarts_.labels({resource, reason}).inc();
  }
  void event_dropped() override { dropped_.inc(); }

 private:
  server::CounterFamily& requests_;
  server::HistogramFamily& latency_;
  server::HistogramFamily& waits_;
  server::CounterFamily& exec_;
  server::CounterFamily& restarts_;
  server::Counter& dropped_;
};

}  // namespace

std::shared_ptr<kube::ClientObserver> make_kube_client_metrics(server::MetricsRegistry& metrics) {
  return std::make_shared<KubeClientMetrics>(metrics);
}

}  // namespace hamisim::cli
