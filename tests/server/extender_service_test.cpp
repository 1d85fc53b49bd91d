// ExtenderService over the LiveRoutes interface: the live verbs reach whatever LiveRoutes is
// configured, and a simulation-only service (this test links no live path) answers them
// `not ready:`.

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "device/catalog/device_config.h"
#include "server/extender_service.h"
#include "server/live_routes.h"
#include "server/metrics.h"

namespace hamisim::server {
namespace {

namespace json = boost::json;

class FakeLive final : public LiveRoutes {
 public:
  LiveFilterAnswer filter(const fit::PreparedPod& pod,
                          const std::vector<std::string>& node_names) override {
    filtered_pod = pod.pod->metadata.name;
    filtered_nodes = node_names;
    return {R"({"Error":"from the fake"})", true};
  }
  std::string bind(const extender::ExtenderBindingArgs& args) override {
    bound = args;
    return bind_error;
  }
  std::optional<std::string> admission_quota_check(const model::Pod&) const override {
    return std::nullopt;
  }
  LiveRoutesReadiness readiness() const override { return state; }

  std::string filtered_pod;
  std::vector<std::string> filtered_nodes;
  std::optional<extender::ExtenderBindingArgs> bound;
  std::string bind_error;
  LiveRoutesReadiness state;
};

constexpr std::string_view kGpuPodArgs =
    R"({"Pod":{"metadata":{"name":"p","namespace":"default"},"spec":{"containers":[)"
    R"({"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},)"
    R"("NodeNames":["n1","n2"]})";
constexpr std::string_view kBindArgs =
    R"({"PodName":"p","PodNamespace":"default","PodUID":"u","Node":"n1"})";

HttpRequest post(std::string_view target, std::string_view body) {
  HttpRequest r;
  r.method = "POST";
  r.target = std::string(target);
  r.content_type = "application/json";
  r.body = std::string(body);
  return r;
}

class ExtenderServiceTest : public ::testing::Test {
 protected:
  ExtenderService make(LiveRoutes* live) {
    ExtenderServiceOptions options;
    options.live = live;
    return ExtenderService(engine_, metrics_, options);
  }

  device::DeviceRegistry registry_ = device::build_registry({});
  engine::Engine engine_{registry_, nullptr};
  MetricsRegistry metrics_;
};

TEST_F(ExtenderServiceTest, LiveVerbsGoToTheConfiguredLiveRoutes) {
  FakeLive live;
  ExtenderService service = make(&live);

  HttpResponse filtered = service.filter(post("/filter", kGpuPodArgs));
  EXPECT_EQ(filtered.body, R"({"Error":"from the fake"})");
  EXPECT_EQ(filtered.outcome, "error");
  EXPECT_EQ(live.filtered_pod, "p");
  EXPECT_EQ(live.filtered_nodes, (std::vector<std::string>{"n1", "n2"}));

  live.bind_error = "internal: no";
  HttpResponse bound = service.bind(post("/bind", kBindArgs));
  ASSERT_TRUE(live.bound.has_value());
  EXPECT_EQ(live.bound->pod_uid, "u");
  EXPECT_EQ(live.bound->node, "n1");
  EXPECT_EQ(json::parse(bound.body).as_object().at("Error").as_string(), "internal: no");
  EXPECT_EQ(bound.outcome, "error");
}

TEST_F(ExtenderServiceTest, ReadyzReportsTheLiveRoutesReadiness) {
  FakeLive live;
  live.state = {.ready = true, .leading = false, .filtering = false, .detail = "synced"};
  ExtenderService service = make(&live);
  HttpResponse r = service.readyz({});
  EXPECT_EQ(r.status, 200);
  const json::object answer = json::parse(r.body).as_object();
  const json::object& component = answer.at("components").at("live").as_object();
  EXPECT_EQ(component.at("state").as_string(), "ready");
  EXPECT_EQ(component.at("detail").as_string(), "synced");
  EXPECT_FALSE(component.at("leader").as_bool());

  live.state.ready = false;
  EXPECT_EQ(service.readyz({}).status, 503);
}

TEST_F(ExtenderServiceTest, WithoutLiveRoutesTheLiveVerbsAreNotReady) {
  ExtenderService service = make(nullptr);
  const std::string no_source =
      "not ready: no live cluster source (start with --kubeconfig, --in-cluster, --live or "
      "--cluster-snapshot)";
  EXPECT_EQ(json::parse(service.filter(post("/filter", kGpuPodArgs)).body).at("Error").as_string(),
            no_source);
  EXPECT_EQ(json::parse(service.bind(post("/bind", kBindArgs)).body).at("Error").as_string(),
            no_source);
  const json::value ready = json::parse(service.readyz({}).body);
  EXPECT_EQ(ready.at("components").at("live").at("state").as_string(), "not configured");
}

}  // namespace
}  // namespace hamisim::server
