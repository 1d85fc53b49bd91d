// The live path over HTTP as `hamisim serve --cluster-snapshot examples/live` wires it: HAMi's
// exact /filter and /bind bytes for the seed's warm scenario, the webhook route, /readyz, and
// the shapes of every live error.

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "device/catalog/device_config.h"
#include "go/rfc3339.h"
#include "http_test_client.h"
#include "live/live_scheduler.h"
#include "live/time_format.h"
#include "log/structured.h"
#include "model/decode.h"
#include "server/extender_service.h"
#include "server/http_server.h"
#include "server/live_service.h"
#include "server/logging.h"
#include "server/metrics.h"
#include "server/process_metrics.h"
#include "state/snapshot_source.h"
#include "test_paths.h"

namespace hamisim {
namespace {

using testing::ClientOptions;
using testing::http_request;

std::string example(const std::string& name) {
  auto text = model::read_file(std::string(hamisim::testing::examples_dir()) + "/live/" + name);
  EXPECT_TRUE(text) << text.error().message;
  return text.value_or("");
}

struct LiveServeOptions {
  bool legacy_metrics = false;
  bool metrics_listener = false;
  // A replica whose kube-scheduler does not hold the Lease (none is ever seen).
  bool follower = false;
  // Cluster snapshot files; empty: examples/live.
  std::string snapshot{};
};

live::LiveOptions live_options(const LiveServeOptions& o) {
  live::LiveOptions lo;
  if (o.follower) {
    lo.leader = {.enabled = true,
                 .lease_namespace = "kube-system",
                 .lease_name = "hami-scheduler",
                 .identity = "not-the-holder"};
  }
  return lo;
}

class LiveServe {
 public:
  explicit LiveServe(bool with_live = true, LiveServeOptions o = {})
      : source_(state::SnapshotSource::load(
                    {o.snapshot.empty() ? std::string(hamisim::testing::examples_dir()) + "/live"
                                        : o.snapshot},
                    {.play_device_plugin = true})
                    .value()),
        live_(registry_, *source_, live_options(o)),
        live_service_(with_live
                          ? std::make_unique<server::LiveService>(live_, metrics_, o.legacy_metrics)
                          : nullptr),
        service_(engine_, metrics_,
                 {.live = live_service_.get(), .scheduler_name = "hami-scheduler"}) {
    server::ServerConfig config;
    config.listen = "127.0.0.1:0";
    config.metrics_listen = o.metrics_listener ? "127.0.0.1:0" : "";
    server_ = server::HttpServer::create(std::move(config), service_.routes(), &metrics_).value();
    with_live_ = with_live;
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
  // Ready, and (with a live path) answering /filter: a follower is ready too, so a test
  // that filters waits for the first registration pass as well.
  bool wait_ready() {
    for (int i = 0; i < 1000; ++i) {
      if (get("/readyz").status == 200 && (!with_live_ || live_.readiness().filtering)) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  // GET /metrics on the metrics listener, as Prometheus scrapes it.
  testing::ClientResponse scrape() {
    ClientOptions o;
    o.port = server_->metrics_port();
    auto r = http_request(o, "GET", "/metrics");
    EXPECT_TRUE(r) << r.error().message;
    return r.value_or(testing::ClientResponse{});
  }
  bool wait_synced() {
    for (int i = 0; i < 1000 && !live_.synced(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return live_.synced();
  }
  state::SnapshotSource& source() { return *source_; }
  live::LiveScheduler& live() { return live_; }
  server::MetricsRegistry& metrics() { return metrics_; }

 private:
  device::DeviceRegistry registry_ = device::build_registry({});
  engine::Engine engine_{registry_, nullptr};
  std::unique_ptr<state::SnapshotSource> source_;
  live::LiveScheduler live_;
  server::MetricsRegistry metrics_;
  std::unique_ptr<server::LiveService> live_service_;
  server::ExtenderService service_;
  std::unique_ptr<server::HttpServer> server_;
  bool with_live_ = true;
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

TEST(LiveHttp, MetricsMirrorTheLiveStateInBaseUnits) {
  LiveServe s;
  ASSERT_TRUE(s.wait_ready());
  ASSERT_EQ(s.post("/filter", example("filter-1.json")).status, 200);
  const std::string m = s.metrics().render();
  EXPECT_NE(m.find("hamisim_live_nodes 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("hamisim_live_devices 2\n"), std::string::npos);
  // 22882 MiB and 11000 MiB, in bytes; cores in whole devices (100 % of one device = 1).
  EXPECT_NE(m.find("hamisim_live_device_memory_bytes{state=\"total\"} 2.3993516032e+10\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("hamisim_live_device_memory_bytes{state=\"allocated\"} 1.1534336e+10\n"),
            std::string::npos);
  EXPECT_NE(m.find("hamisim_live_device_core_ratio{state=\"total\"} 2\n"), std::string::npos);
  EXPECT_NE(m.find("hamisim_live_device_core_ratio{state=\"allocated\"} 1\n"), std::string::npos);
  EXPECT_EQ(m.find("_mib"), std::string::npos);
  EXPECT_NE(m.find("hamisim_live_pod_allocations 1\n"), std::string::npos);
  EXPECT_NE(m.find("hamisim_live_ready 1\n"), std::string::npos);
  EXPECT_NE(m.find("hamisim_live_leader 1\n"), std::string::npos);
  EXPECT_NE(m.find("hamisim_live_registration_passes_total "), std::string::npos);
  EXPECT_NE(m.find("hamisim_live_node_lock_contention_total 0\n"), std::string::npos);
  EXPECT_NE(m.find("hamisim_live_node_lock_retries_total 0\n"), std::string::npos);
  EXPECT_NE(m.find("hamisim_live_leadership_changes_total{change=\"started\"} 0\n"),
            std::string::npos);
  EXPECT_NE(m.find(R"(hamisim_fit_outcomes_total{route="/filter",class="Fits")"), std::string::npos)
      << m;
}

// One spelling of the route label in every family: the route's path.
TEST(LiveHttp, EveryFamilySpellsTheRouteLabelAsThePath) {
  LiveServe s;
  ASSERT_TRUE(s.wait_ready());
  ASSERT_EQ(s.post("/filter", example("filter-1.json")).status, 200);
  const std::string m = s.metrics().render();
  EXPECT_NE(m.find(R"(hamisim_http_requests_total{route="/filter",)"), std::string::npos) << m;
  EXPECT_NE(m.find(R"(hamisim_fit_outcomes_total{route="/filter",)"), std::string::npos) << m;
  EXPECT_EQ(m.find(R"(route="filter)"), std::string::npos) << m;
}

// An extender error is an HTTP 200 with an Error: counted as outcome="error".
TEST(LiveHttp, ExtenderErrorsAnsweredWith200AreCountedAsErrors) {
  LiveServe s(/*with_live=*/false);
  ASSERT_EQ(s.post("/bind", example("bind-1.json")).status, 200);
  const std::string m = s.metrics().render();
  EXPECT_NE(m.find(R"(hamisim_http_requests_total{route="/bind",code="200",outcome="error"} 1)"),
            std::string::npos)
      << m;
}

// HAMi's families (reference hami-dropin.md §6.3) after the seed's first filter and bind:
// one K80 pair on gpu-node-1, workload-1 holding 11000 MiB and 100 % cores of one device.
TEST(LiveHttp, HamiFamiliesCarryHamisNamesLabelsAndValues) {
  LiveServe s(true, {.metrics_listener = true});
  ASSERT_TRUE(s.wait_ready());
  ASSERT_EQ(s.post("/filter", example("filter-1.json")).status, 200);
  ASSERT_EQ(s.post("/bind", example("bind-1.json")).body, R"({"Error":""})");
  const auto r = s.scrape();
  ASSERT_EQ(r.status, 200);
  const std::string& m = r.body;
  // Which device got the pod is the policy's choice: find it from the container series.
  const std::string vgpu = "hami_vgpu_memory_allocated_bytes{container_index=\"0\",device_uuid=\"";
  const size_t at = m.find(vgpu);
  ASSERT_NE(at, std::string::npos) << m;
  const std::string uuid =
      m.substr(at + vgpu.size(), m.find('"', at + vgpu.size()) - at - vgpu.size());
  const std::string other = uuid == "GPU-K80-0" ? "GPU-K80-1" : "GPU-K80-0";
  const std::string index = uuid.substr(uuid.size() - 1);
  auto dev = [&](const std::string& u) {
    return "device_index=\"" + u.substr(u.size() - 1) +
           "\",device_type=\"NVIDIA-Tesla K80\",device_uuid=\"" + u +
           "\",node=\"gpu-node-1\",zone=\"vGPU\"}";
  };
  for (const std::string& line : std::vector<std::string>{
           "# HELP hami_gpu_memory_limit_bytes Device memory limit for a certain GPU\n"
           "# TYPE hami_gpu_memory_limit_bytes gauge\n",
           "hami_gpu_memory_limit_bytes{" + dev(uuid) + " 1.1996758016e+10\n",
           "hami_gpu_core_limit_ratio{" + dev(uuid) + " 100\n",
           "hami_gpu_memory_allocated_bytes{device_cores=\"100\"," + dev(uuid) + " 1.1534336e+10\n",
           "hami_gpu_memory_allocated_bytes{device_cores=\"100\"," + dev(other) + " 0\n",
           "hami_gpu_shared_count{" + dev(uuid) + " 1\n",
           "hami_gpu_core_allocated_ratio{" + dev(uuid) + " 100\n",
           "hami_node_gpu_overview{device_cores=\"100\",device_index=\"" + index +
               "\",device_memory_limit=\"11441\",device_type=\"NVIDIA-Tesla K80\",device_uuid=\"" +
               uuid + "\",node=\"gpu-node-1\",zone=\"vGPU\"} 1.1534336e+10\n",
           "hami_node_gpu_memory_allocated_ratio{" + dev(uuid) + " 0.9614544183200769\n",
           "hami_vgpu_memory_allocated_bytes{container_index=\"0\",device_uuid=\"" + uuid +
               "\",namespace=\"default\",node=\"gpu-node-1\",pod=\"workload-1\",zone=\"vGPU\"} "
               "1.1534336e+10\n",
           "hami_vgpu_core_allocated_ratio{container_index=\"0\",device_uuid=\"" + uuid +
               "\",namespace=\"default\",node=\"gpu-node-1\",pod=\"workload-1\",zone=\"vGPU\"} "
               "100\n",
           "# TYPE hami_build_info gauge\nhami_build_info{build_date=\"",
       }) {
    EXPECT_NE(m.find(line), std::string::npos) << line << "\n" << m;
  }
  // Without --legacy-metrics, none of the legacy names.
  for (const char* legacy : {"GPUDeviceMemoryLimit", "nodeGPUOverview", "vGPUMemoryAllocated"}) {
    EXPECT_EQ(m.find(legacy), std::string::npos) << legacy;
  }
}

// Quotas: an entry per (namespace, resource) with a limit and the usage of the pods there.
TEST(LiveHttp, HamiQuotaFamiliesShowLimitAndUsage) {
  LiveServe s;
  ASSERT_TRUE(s.wait_ready());
  model::ResourceQuota quota;
  quota.metadata.name = "gpu";
  quota.metadata.namespace_ = "default";
  quota.spec.hard["limits.nvidia.com/gpumem"] = model::Quantity::parse("20000").value();
  s.live().on_quota(state::EventType::kAdded, quota);
  ASSERT_EQ(s.post("/filter", example("filter-1.json")).status, 200);
  const std::string m = s.metrics().render();
  EXPECT_NE(m.find("# HELP hami_resource_quota_used resourcequota usage for a certain device\n"
                   "# TYPE hami_resource_quota_used gauge\n"),
            std::string::npos);
  EXPECT_NE(m.find("hami_resource_quota_used{limit=\"20000\",namespace=\"default\",quota_name="
                   "\"nvidia.com/gpumem\",zone=\"vGPU\"} 11000\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("hami_resource_quota_limit{namespace=\"default\",quota_name=\"nvidia.com/"
                   "gpumem\",zone=\"vGPU\"} 20000\n"),
            std::string::npos)
      << m;
  // A resource without a limit: usage with limit "0", and no limit series.
  EXPECT_NE(m.find("hami_resource_quota_used{limit=\"0\",namespace=\"default\",quota_name="
                   "\"nvidia.com/gpucores\",zone=\"vGPU\"} 100\n"),
            std::string::npos)
      << m;
  EXPECT_EQ(
      m.find("hami_resource_quota_limit{namespace=\"default\",quota_name=\"nvidia.com/gpucores"),
      std::string::npos);
}

TEST(LiveHttp, LegacyMetricsAddHamisLegacyNamesBesideTheCurrentOnes) {
  LiveServe s(true, {.legacy_metrics = true});
  ASSERT_TRUE(s.wait_ready());
  ASSERT_EQ(s.post("/filter", example("filter-1.json")).status, 200);
  const std::string m = s.metrics().render();
  for (const char* line : {
           "# HELP GPUDeviceMemoryLimit Device memory limit for a certain GPU\n",
           "GPUDeviceMemoryLimit{deviceidx=\"0\",devicetype=\"NVIDIA-Tesla K80\",deviceuuid=\"GPU-"
           "K80-0\",nodeid=\"gpu-node-1\",zone=\"vGPU\"} 1.1996758016e+10\n",
           "# HELP GPUDeviceCoreLimit Device memory core limit for a certain GPU\n",
           "GPUDeviceMemoryAllocated{devicecores=\"100\",deviceidx=\"0\",",
           "GPUDeviceSharedNum{deviceidx=\"0\",", "GPUDeviceCoreAllocated{deviceidx=\"0\",",
           "nodeGPUOverview{devicecores=\"100\",deviceidx=\"0\",devicememorylimit=\"11441\",",
           "nodeGPUMemoryPercentage{deviceidx=\"0\",deviceuuid=\"GPU-K80-0\",nodeid=\"gpu-node-1\","
           "zone=\"vGPU\"} ",
           "QuotaUsed{limit=\"0\",quotaName=\"nvidia.com/gpumem\",quotanamespace=\"default\","
           "zone=\"vGPU\"} 11000\n",
           "vGPUMemoryAllocated{containeridx=\"0\",deviceuuid=\"GPU-K80-",
           "vGPUCoreAllocated{containeridx=\"0\",deviceuuid=\"GPU-K80-",
           "hami_gpu_memory_limit_bytes{",  // the current names stay
       }) {
    EXPECT_NE(m.find(line), std::string::npos) << line << "\n" << m;
  }
  EXPECT_NE(m.find("nodename=\"gpu-node-1\",podname=\"workload-1\",podnamespace=\"default\""),
            std::string::npos);
}

// HAMi computes node-level series in the leader's registration pass: a follower exports none,
// but still its build info.
TEST(LiveHttp, NodeLevelHamiSeriesComeOnlyFromTheLeader) {
  LiveServe s(true, {.follower = true});
  ASSERT_TRUE(s.wait_synced());
  const std::string m = s.metrics().render();
  EXPECT_EQ(m.find("hami_gpu_memory_limit_bytes"), std::string::npos) << m;
  EXPECT_EQ(m.find("hami_node_gpu_overview"), std::string::npos) << m;
  EXPECT_NE(m.find("hami_build_info{"), std::string::npos) << m;
  EXPECT_NE(m.find("hamisim_live_leader 0\n"), std::string::npos) << m;
}

// Every family of a real scrape passes `promtool check metrics`; the only lint findings
// allowed are HAMi's own names, kept for parity (hami_gpu_shared_count ends in _count; the
// legacy names are camelCase).
TEST(LiveHttp, AScrapePassesPromtoolCheckMetrics) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool is not installed (Debian: apt-get install prometheus)";
  }
  LiveServe s(true, {.legacy_metrics = true, .metrics_listener = true});
  server::export_build_info(s.metrics());
  server::export_process_metrics(s.metrics());
  ASSERT_TRUE(s.wait_ready());
  ASSERT_EQ(s.post("/filter", example("filter-1.json")).status, 200);
  ASSERT_EQ(s.post("/bind", example("bind-1.json")).status, 200);
  (void)s.post("/filter", example("filter-3.json"));
  (void)s.scrape();  // so that the next scrape has /metrics requests too
  const auto r = s.scrape();
  ASSERT_EQ(r.status, 200);
  const std::string path = ::testing::TempDir() + "/hamisim-scrape.prom";
  std::ofstream(path) << r.body;
  const std::string out_path = path + ".out";
  const int status =
      std::system(("promtool check metrics < '" + path + "' > '" + out_path + "' 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  std::ifstream in(out_path);
  std::string line;
  std::vector<std::string> findings;
  while (std::getline(in, line)) {
    if (!line.empty()) findings.push_back(line);
  }
  // promtool exits 1 on a malformed exposition and 3 on lint findings.
  EXPECT_NE(WEXITSTATUS(status), 1) << r.body;
  const std::vector<std::string> hami_names = {
      "hami_gpu_shared_count ",   "GPUDeviceCoreAllocated ",
      "GPUDeviceCoreLimit ",      "GPUDeviceMemoryAllocated ",
      "GPUDeviceMemoryLimit ",    "GPUDeviceSharedNum ",
      "nodeGPUMemoryPercentage ", "nodeGPUOverview ",
      "nodeGPUMigInstance ",      "QuotaUsed ",
      "vGPUCoreAllocated ",       "vGPUMemoryAllocated "};
  for (const std::string& finding : findings) {
    const bool hami = std::any_of(hami_names.begin(), hami_names.end(),
                                  [&](const std::string& n) { return finding.starts_with(n); });
    EXPECT_TRUE(hami) << "promtool: " << finding;
  }
  EXPECT_NE(r.body.find("\nprocess_cpu_seconds_total "), std::string::npos);
  EXPECT_NE(r.body.find("\nhamisim_build_info{"), std::string::npos);
  std::remove(path.c_str());
  std::remove(out_path.c_str());
}

// One line per live /filter and /bind, with HAMi's messages, the pod, node, result and
// reason as fields (JSON: one key each).
TEST(LiveHttp, EachLiveFilterAndBindLogsItsDecision) {
  std::ostringstream out;
  auto old = spdlog::default_logger();
  {
    auto logger = std::make_shared<spdlog::logger>(
        "hamisim", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
    logger->set_formatter(server::make_json_formatter());
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
    LiveServe s;
    EXPECT_TRUE(s.wait_ready());
    EXPECT_EQ(s.post("/filter", example("filter-1.json")).status, 200);
    EXPECT_EQ(s.post("/bind", example("bind-1.json")).body, R"({"Error":""})");
    EXPECT_EQ(s.post("/filter", example("filter-2.json")).status, 200);
    (void)s.post("/filter", example("filter-3.json"));
    (void)s.post("/bind",
                 R"({"PodName":"nope","PodNamespace":"default","PodUID":"","Node":"gpu-node-1"})");
  }
  spdlog::set_default_logger(old);
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  auto find = [&](const std::string& msg, const std::vector<std::string>& parts) {
    for (const auto& line : lines) {
      if (line.find("\"msg\":\"" + msg + "\"") == std::string::npos) continue;
      if (std::all_of(parts.begin(), parts.end(),
                      [&](const std::string& p) { return line.find(p) != std::string::npos; })) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(find("Scheduling pod to node", {R"("pod":"workload-1")", R"("namespace":"default")",
                                              R"("node":"gpu-node-1")", R"("result":"scheduled")"}))
      << out.str();
  EXPECT_TRUE(
      find("Attempting to bind pod to node", {R"("pod":"workload-1")", R"("node":"gpu-node-1")"}));
  EXPECT_TRUE(find("Node lock set", {R"("node":"gpu-node-1")", R"("podName":"workload-1")"}));
  EXPECT_TRUE(find("Successfully bound pod to node",
                   {R"("pod":"workload-1")", R"("node":"gpu-node-1")", R"("result":"bound")"}));
  EXPECT_TRUE(find("No node fits pod", {R"("pod":"workload-3")", R"("result":"unschedulable")",
                                        R"("reason":"1 nodes CardInsufficientMemory")"}))
      << out.str();
  EXPECT_TRUE(
      find("Bind error for pod", {R"("pod":"nope")", R"("result":"error")",
                                  R"("reason":"invalid request: pod \"default/nope\" not found")"}))
      << out.str();
}

// HAMi's chart runs -v=4, where HAMi logs one NodeUnfitPod line per node that does not fit;
// at the default -v=0 there is none.
TEST(LiveHttp, PerNodeLinesAppearFromVerbosityFour) {
  auto old = spdlog::default_logger();
  for (int v : {0, 4}) {
    std::ostringstream out;
    auto logger = std::make_shared<spdlog::logger>(
        "hamisim", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
    logger->set_formatter(server::make_klog_formatter());
    spdlog::set_default_logger(logger);
    log::set_verbosity(v);
    {
      LiveServe s;
      EXPECT_TRUE(s.wait_ready());
      EXPECT_EQ(s.post("/filter", example("filter-1.json")).status, 200);
      EXPECT_EQ(s.post("/bind", example("bind-1.json")).body, R"({"Error":""})");
      EXPECT_EQ(s.post("/filter", example("filter-2.json")).status, 200);
      EXPECT_EQ(s.post("/bind", example("bind-2.json")).body, R"({"Error":""})");
      (void)s.post("/filter", example("filter-3.json"));
    }
    spdlog::set_default_logger(old);
    log::set_verbosity(0);
    const std::string text = out.str();
    const bool shown =
        text.find(R"("NodeUnfitPod" pod="workload-3" namespace="default" )"
                  R"(node="gpu-node-1" reason="2/2 CardInsufficientMemory")") != std::string::npos;
    EXPECT_EQ(shown, v >= 4) << "-v=" << v << "\n" << text;
  }
}

// A bind that finds the node locked by another pod is counted.
TEST(LiveHttp, NodeLockContentionIsCounted) {
  LiveServe s;
  ASSERT_TRUE(s.wait_ready());
  ASSERT_EQ(s.post("/filter", example("filter-1.json")).status, 200);
  // workload-2 exists in the seed, so its fresh lock is neither expired nor orphaned.
  ASSERT_TRUE(s.source().patch_node_annotations(
      "gpu-node-1",
      {{"hami.io/mutex.lock",
        go::format_rfc3339_local(std::chrono::system_clock::now()) + ",default,workload-2"}},
      ""));
  const auto b = s.post("/bind", example("bind-1.json"));
  EXPECT_NE(b.body.find("node lock contention"), std::string::npos) << b.body;
  const std::string m = s.metrics().render();
  EXPECT_NE(m.find("hamisim_live_node_lock_contention_total 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find(R"(hamisim_http_requests_total{route="/bind",code="200",outcome="error"} 1)"),
            std::string::npos)
      << m;
}

// A follower whose kube-scheduler takes the Lease starts leading: counted, and HAMi's
// per-device series appear after its first registration pass.
TEST(LiveHttp, LeadershipIsExportedAndNodeSeriesFollowIt) {
  LiveServe s(true, {.follower = true});
  ASSERT_TRUE(s.wait_synced());
  EXPECT_EQ(s.metrics().render().find("hami_gpu_memory_limit_bytes"), std::string::npos);
  const uint64_t passes = s.live().registration_passes();
  s.live().on_lease(state::EventType::kAdded,
                    {"kube-system", "hami-scheduler", "1", "not-the-holder_3f2a", 3600});
  for (int i = 0; i < 1000 && s.live().registration_passes() == passes; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string m = s.metrics().render();
  EXPECT_NE(m.find("hamisim_live_leader 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("hamisim_live_leadership_changes_total{change=\"started\"} 1\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("hami_gpu_memory_limit_bytes{device_index=\"0\""), std::string::npos) << m;
}

// HAMi normalises the cores of AMD devices (type starting with AMD) to a percentage of the
// device in the current families, and keeps the raw figures in the legacy ones. HAMi decides
// "AMD" by the type's prefix alone; the type also names NVIDIA here so that the NVIDIA backend
// places the pod on it.
TEST(LiveHttp, HamiCoreFamiliesNormaliseAmdDevices) {
  const std::string path = ::testing::TempDir() + "/hamisim-amd-snapshot.yaml";
  std::ofstream(path) << R"(apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Node
    metadata:
      name: amd-node
      annotations:
        hami.io/node-nvidia-register: '[{"id":"GPU-AMD-0","count":10,"devmem":16384,"devcore":64,"type":"AMD-NVIDIA-MOCK","mode":"hami-core","health":true}]'
    status:
      capacity: {nvidia.com/gpu: "10"}
      allocatable: {nvidia.com/gpu: "10"}
  - apiVersion: v1
    kind: Pod
    metadata: {name: p, namespace: default, uid: 00000000-0000-4000-8000-0000000000a1}
    spec:
      schedulerName: hami-scheduler
      containers:
        - name: m
          resources:
            limits: {nvidia.com/gpu: "1", nvidia.com/gpumem: "1024", nvidia.com/gpucores: "32"}
)";
  {
    LiveServe s(true, {.legacy_metrics = true, .snapshot = path});
    ASSERT_TRUE(s.wait_ready());
    const auto f = s.post(
        "/filter",
        R"({"Pod":{"metadata":{"name":"p","namespace":"default","uid":"00000000-0000-4000-8000-0000000000a1"},"spec":{"schedulerName":"hami-scheduler","containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem":"1024","nvidia.com/gpucores":"32"}}}]}},"NodeNames":["amd-node"]})");
    ASSERT_NE(f.body.find(R"("NodeNames":["amd-node"])"), std::string::npos) << f.body;
    const std::string m = s.metrics().render();
    const std::string dev =
        R"({device_index="0",device_type="AMD-NVIDIA-MOCK",device_uuid="GPU-AMD-0",node="amd-node",zone="vGPU"} )";
    const std::string ldev =
        R"({deviceidx="0",devicetype="AMD-NVIDIA-MOCK",deviceuuid="GPU-AMD-0",nodeid="amd-node",zone="vGPU"} )";
    const std::string pod =
        R"({container_index="0",device_uuid="GPU-AMD-0",namespace="default",node="amd-node",pod="p",zone="vGPU"} )";
    for (const std::string& line : std::vector<std::string>{
             "hami_gpu_core_limit_ratio" + dev + "100\n",
             "hami_gpu_core_allocated_ratio" + dev + "50\n",
             "hami_vgpu_core_allocated_ratio" + pod + "50\n",
             "GPUDeviceCoreLimit" + ldev + "64\n",
             "GPUDeviceCoreAllocated" + ldev + "32\n",
             R"(hami_gpu_memory_allocated_bytes{device_cores="64",)",
         }) {
      EXPECT_NE(m.find(line), std::string::npos) << line << "\n" << m;
    }
  }
  std::remove(path.c_str());
}

// A realised MIG instance (its UUID and GPU and compute instance ids written by the device
// plugin) on a device in MIG mode: one hami_node_gpu_mig_instance_info series, and HAMi's
// legacy nodeGPUMigInstance with migname <profile>-<GPU instance id>.
TEST(LiveHttp, HamiMigFamilyShowsRealisedInstances) {
  const std::string path = ::testing::TempDir() + "/hamisim-mig-snapshot.yaml";
  std::ofstream(path) << R"(apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Node
    metadata:
      name: mig-node
      annotations:
        hami.io/node-nvidia-register: '[{"id":"GPU-M1","count":7,"devmem":40960,"devcore":100,"type":"NVIDIA-A100","mode":"mig","health":true}]'
    status:
      capacity: {nvidia.com/gpu: "7"}
      allocatable: {nvidia.com/gpu: "7"}
  - apiVersion: v1
    kind: Pod
    metadata:
      name: m
      namespace: default
      uid: 00000000-0000-4000-8000-0000000000b1
      annotations:
        hami.io/vgpu-node: mig-node
        hami.io/vgpu-devices-allocated: "GPU-M1,NVIDIA,10240,28:;"
        hami.io/vgpu-mig-allocations: '[{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-M1","profile":"2g.10gb","placement":{"start":0,"size":2},"migUUID":"MIG-1","gpuInstanceID":3,"computeInstanceID":0},{"containerIndex":0,"deviceIndex":1,"gpuUUID":"GPU-M1","profile":"1g.5gb","placement":{"start":6,"size":1}}]'
    spec:
      nodeName: mig-node
      containers:
        - name: c
          resources:
            limits: {nvidia.com/gpu: "1"}
    status: {phase: Running}
)";
  {
    LiveServe s(true, {.legacy_metrics = true, .snapshot = path});
    ASSERT_TRUE(s.wait_ready());
    const std::string m = s.metrics().render();
    EXPECT_NE(m.find(R"(hami_node_gpu_mig_instance_info{compute_instance_id="0",device_index="0",)"
                     R"(device_uuid="GPU-M1",gpu_instance_id="3",mig_uuid="MIG-1",node="mig-node",)"
                     R"(placement_size="2",placement_start="0",profile="2g.10gb",zone="vGPU"} 1)"
                     "\n"),
              std::string::npos)
        << m;
    // The instance the device plugin has not realised yet has no series.
    EXPECT_EQ(m.find(R"(profile="1g.5gb")"), std::string::npos) << m;
    EXPECT_NE(m.find(R"(nodeGPUMigInstance{deviceidx="0",deviceuuid="GPU-M1",migname="2g.10gb-3",)"
                     R"(nodeid="mig-node",zone="vGPU"} 1)"
                     "\n"),
              std::string::npos)
        << m;
  }
  std::remove(path.c_str());
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
