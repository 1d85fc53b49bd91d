// The live path over HTTP as `hamisim serve --cluster-snapshot examples/live` wires it: HAMi's
// exact /filter and /bind bytes for the seed's warm scenario, the webhook route, /readyz, and
// the shapes of every live error.

#include <gtest/gtest.h>

#include "fit/device_config.h"
#include "http_test_client.h"
#include "live/live_scheduler.h"
#include "model/decode.h"
#include "server/extender_service.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "state/snapshot_source.h"

namespace hamisim {
namespace {

using testing::ClientOptions;
using testing::http_request;

std::string example(const std::string& name) {
  auto text = model::read_file(std::string(HAMISIM_EXAMPLES_DIR) + "/live/" + name);
  EXPECT_TRUE(text) << text.error().message;
  return text.value_or("");
}

class LiveServe {
 public:
  explicit LiveServe(bool with_live = true)
      : source_(state::SnapshotSource::load({std::string(HAMISIM_EXAMPLES_DIR) + "/live"},
                                            {.play_device_plugin = true})
                    .value()),
        live_(registry_, *source_, {}),
        service_(engine_, metrics_,
                 {.live = with_live ? &live_ : nullptr, .scheduler_name = "hami-scheduler"}) {
    server::ServerConfig config;
    config.listen = "127.0.0.1:0";
    config.metrics_listen = "";
    server_ = server::HttpServer::create(std::move(config), service_.routes(), &metrics_).value();
    if (with_live) live_.start();
    server_->start();
  }
  ~LiveServe() {
    server_->shutdown(std::chrono::seconds(5));
    live_.stop();
  }
  testing::ClientResponse post(const std::string& path, const std::string& body) {
    ClientOptions o;
    o.port = server_->port();
    auto r = http_request(o, "POST", path, body, {{"Content-Type", "application/json"}});
    EXPECT_TRUE(r) << r.error().message;
    return r.value_or(testing::ClientResponse{});
  }
  testing::ClientResponse get(const std::string& path) {
    ClientOptions o;
    o.port = server_->port();
    auto r = http_request(o, "GET", path);
    EXPECT_TRUE(r) << r.error().message;
    return r.value_or(testing::ClientResponse{});
  }
  bool wait_ready() {
    for (int i = 0; i < 1000; ++i) {
      if (get("/readyz").status == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  state::SnapshotSource& source() { return *source_; }
  server::MetricsRegistry& metrics() { return metrics_; }

 private:
  device::DeviceRegistry registry_ = fit::build_registry({});
  engine::Engine engine_{registry_, nullptr};
  std::unique_ptr<state::SnapshotSource> source_;
  live::LiveScheduler live_;
  server::MetricsRegistry metrics_;
  server::ExtenderService service_;
  std::unique_ptr<server::HttpServer> server_;
};

TEST(LiveHttp, SeedWarmScenarioAnswersWithHamisBytes) {
  LiveServe s;
  ASSERT_TRUE(s.wait_ready());
  for (int n : {1, 2}) {
    auto f = s.post("/filter", example("filter-" + std::to_string(n) + ".json"));
    EXPECT_EQ(f.status, 200);
    EXPECT_EQ(
        f.body,
        R"({"Nodes":null,"NodeNames":["gpu-node-1"],"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":""})");
    auto b = s.post("/bind", example("bind-" + std::to_string(n) + ".json"));
    EXPECT_EQ(b.body, R"({"Error":""})");
  }
  auto f3 = s.post("/filter", example("filter-3.json"));
  EXPECT_EQ(
      f3.body,
      R"({"Nodes":null,"NodeNames":null,"FailedNodes":{"gpu-node-1":"2/2 CardInsufficientMemory"},"FailedAndUnresolvableNodes":null,"Error":""})");
  auto b3 = s.post("/bind", example("bind-3.json"));
  EXPECT_NE(b3.body.find("has no device allocation on node gpu-node-1"), std::string::npos)
      << b3.body;
  // What the device plugin reads, in the objects --snapshot-out writes.
  const std::string dump = s.source().store().dump_list();
  EXPECT_NE(dump.find(R"("hami.io/vgpu-devices-to-allocate":"GPU-K80-)"), std::string::npos);
  EXPECT_NE(dump.find(R"("hami.io/bind-phase":"success")"), std::string::npos);
}

TEST(LiveHttp, NullNodeNamesIsAnEmptyListAndPlainPodsAreEchoed) {
  LiveServe s;
  ASSERT_TRUE(s.wait_ready());
  const std::string gpu_pod =
      R"({"Pod":{"metadata":{"name":"workload-1","namespace":"default","uid":"5f0c7e2a-0000-4000-8000-000000000001"},"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},"NodeNames":null})";
  EXPECT_EQ(
      s.post("/filter", gpu_pod).body,
      R"({"Nodes":null,"NodeNames":null,"FailedNodes":{},"FailedAndUnresolvableNodes":null,"Error":""})");
  const std::string cpu_pod =
      R"({"Pod":{"metadata":{"name":"web","namespace":"default"},"spec":{"containers":[{"name":"m"}]}},"NodeNames":["a","b"]})";
  EXPECT_EQ(
      s.post("/filter", cpu_pod).body,
      R"({"Nodes":null,"NodeNames":["a","b"],"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":""})");
}

TEST(LiveHttp, ALiveFilterNeedsThePodsUid) {
  LiveServe s;
  ASSERT_TRUE(s.wait_ready());
  EXPECT_EQ(
      s.post(
           "/filter",
           R"({"Pod":{"metadata":{"name":"workload-1","namespace":"default"},"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},"NodeNames":["gpu-node-1"]})")
          .body,
      R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":"invalid request: Pod: metadata.name and metadata.uid are required"})");
}

TEST(LiveHttp, BindErrorsCarryTheirClass) {
  LiveServe s;
  ASSERT_TRUE(s.wait_ready());
  EXPECT_EQ(s.post("/bind",
                   R"({"PodName":"nope","PodNamespace":"default","PodUID":"","Node":"gpu-node-1"})")
                .body,
            R"({"Error":"invalid request: pod \"default/nope\" not found"})");
  EXPECT_EQ(
      s.post("/bind", R"({"PodName":"","PodNamespace":"default","PodUID":"","Node":""})").body,
      R"({"Error":"invalid request: PodName and Node are required"})");
  EXPECT_TRUE(s.post("/bind", "{").body.starts_with(R"({"Error":"invalid request: )"));
}

TEST(LiveHttp, WithoutALiveSourceTheLiveRoutesAreNotReady) {
  LiveServe s(/*with_live=*/false);
  EXPECT_EQ(
      s.post("/bind", example("bind-1.json")).body,
      R"x({"Error":"not ready: no live cluster source (start with --kubeconfig, --in-cluster, --live or --cluster-snapshot)"})x");
  auto ready = s.get("/readyz");
  EXPECT_EQ(ready.status, 200);  // scope "all" without a live source means simulation only
  EXPECT_NE(ready.body.find(R"("live":{"state":"not configured")"), std::string::npos);
}

TEST(LiveHttp, MetricsMirrorTheLiveState) {
  LiveServe s;
  ASSERT_TRUE(s.wait_ready());
  ASSERT_EQ(s.post("/filter", example("filter-1.json")).status, 200);
  const std::string m = s.metrics().render();
  EXPECT_NE(m.find("hamisim_live_nodes 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("hamisim_live_devices 2\n"), std::string::npos);
  EXPECT_NE(m.find("hamisim_live_device_memory_mib{state=\"total\"} 22882\n"), std::string::npos);
  EXPECT_NE(m.find("hamisim_live_device_memory_mib{state=\"allocated\"} 11000\n"),
            std::string::npos);
  EXPECT_NE(m.find("hamisim_live_device_cores{state=\"allocated\"} 100\n"), std::string::npos);
  EXPECT_NE(m.find("hamisim_live_pod_allocations 1\n"), std::string::npos);
  EXPECT_NE(m.find("hamisim_live_ready 1\n"), std::string::npos);
  EXPECT_NE(m.find(R"(hamisim_fit_outcomes_total{route="filter",class="Fits")"), std::string::npos)
      << m;
}

TEST(LiveHttp, ReadyzNamesTheLiveSource) {
  LiveServe s;
  ASSERT_TRUE(s.wait_ready());
  auto r = s.get("/readyz");
  EXPECT_NE(r.body.find(R"("live":{"state":"ready","detail":"leader; snapshot )"),
            std::string::npos)
      << r.body;
}

TEST(LiveHttp, WebhookPatchesADevicePod) {
  LiveServe s;
  const std::string review =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"default","operation":"CREATE","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w","namespace":"default"},"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpumem":"1000"}}}]}}}})";
  auto r = s.post("/webhook", review);
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find(R"("uid":"u-1")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("allowed":true)"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("patchType":"JSONPatch")"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace hamisim
