#include "cli/kube_client_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/metrics.h"

namespace hamisim::cli {
namespace {

using ::testing::HasSubstr;

TEST(KubeClientMetrics, ObservationsBecomePrometheusSeries) {
  server::MetricsRegistry registry;
  auto observer = make_kube_client_metrics(registry);
  // Registered before anything happens: dropped events read 0, not absent.
  EXPECT_THAT(registry.render(), HasSubstr("hamisim_kube_client_events_dropped_total 0\n"));
  observer->request_done("LIST", "pods", "200", 0.02);
  observer->request_done("LIST", "pods", "200", 0.03);
  observer->request_done("POST", "pods/binding", "<error>", 1.5);
  observer->rate_limiter_waited("PATCH", 0.0);
  observer->exec_plugin_ran("success");
  observer->watch_restarted("nodes", "expired");
  observer->event_dropped();
  const std::string text = registry.render();
  EXPECT_THAT(text, HasSubstr("# TYPE hamisim_kube_client_requests_total counter\n"));
  EXPECT_THAT(
      text,
      HasSubstr(R"(hamisim_kube_client_requests_total{verb="LIST",resource="pods",code="200"} 2)"));
  EXPECT_THAT(
      text,
      HasSubstr(
          R"(hamisim_kube_client_requests_total{verb="POST",resource="pods/binding",code="<error>"} 1)"));
  EXPECT_THAT(
      text,
      HasSubstr(
          R"(hamisim_kube_client_request_duration_seconds_count{verb="LIST",resource="pods"} 2)"));
  EXPECT_THAT(text,
              HasSubstr(R"(hamisim_kube_client_rate_limiter_wait_seconds_count{verb="PATCH"} 1)"));
  EXPECT_THAT(text,
              HasSubstr(R"(hamisim_kube_client_exec_plugin_calls_total{status="success"} 1)"));
  EXPECT_THAT(
      text,
      HasSubstr(
          R"(hamisim_kube_client_watch_restarts_total{resource="nodes",reason="expired"} 1)"));
  EXPECT_THAT(text, HasSubstr("hamisim_kube_client_events_dropped_total 1\n"));
}

}  // namespace
}  // namespace hamisim::cli
