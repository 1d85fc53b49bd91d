#pragma once
// `hamisim serve` on loopback as the CLI wires it (the extender routes and the what-if API over
// one simulation engine), and CA's scheduler configuration pointing at it: for tests that plan
// in process and through the extender and compare.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "device/catalog/device_config.h"
#include "engine/engine.h"
#include "extender/scheduler_config.h"
#include "http_test_client.h"
#include "model/decode.h"
#include "planner/scaleup/planning.h"
#include "server/extender_service.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/plan_api.h"
#include "test_paths.h"

namespace hamisim::planner::scaleup::testing {

// The bundled example (examples/plan): its cluster, node groups and device profiles.
inline std::string read_example(const std::string& name) {
  auto text = model::read_file(std::string(hamisim::testing::examples_dir()) + "/plan/" + name);
  EXPECT_TRUE(text) << text.error().message;
  return text.value_or("");
}

struct Example {
  std::shared_ptr<const device::DeviceRegistry> registry =
      std::make_shared<const device::DeviceRegistry>(device::build_registry({}));
  std::shared_ptr<const profile::DeviceProfiles> profiles;
  PlanInput input;

  Example() {
    auto p =
        profile::parse_device_profiles(read_example("device-profiles.yaml"), "profiles", *registry);
    EXPECT_TRUE(p) << p.error().message;
    profiles = std::make_shared<const profile::DeviceProfiles>(std::move(p).value());
    auto objects = model::decode_objects(read_example("cluster.yaml"));
    EXPECT_TRUE(objects) << objects.error().message;
    input.nodes = objects->nodes;
    input.pods = objects->pods;
    auto groups = nodegroups::parse_node_groups(read_example("node-groups.yaml"), "groups");
    EXPECT_TRUE(groups) << groups.error().message;
    input.node_groups = std::move(groups).value();
  }
};

class Serve {
 public:
  Serve(std::shared_ptr<const device::DeviceRegistry> registry,
        std::shared_ptr<const profile::DeviceProfiles> profiles)
      : registry_(std::move(registry)),
        engine_(std::make_shared<engine::Engine>(*registry_, std::move(profiles))),
        service_(*engine_, metrics_, {}),
        api_(Planning::create(engine_, std::nullopt).value()) {
    server::ServerConfig config;
    config.listen = "127.0.0.1:0";
    config.metrics_listen = "";
    auto routes = service_.routes();
    for (auto& r : api_.routes()) routes.push_back(std::move(r));
    server_ = server::HttpServer::create(std::move(config), std::move(routes), &metrics_).value();
    server_->start();
  }
  ~Serve() { server_->shutdown(std::chrono::seconds(5)); }
  uint16_t port() const { return server_->port(); }
  server::MetricsRegistry& metrics() { return metrics_; }
  hamisim::testing::ClientOptions client() const {
    hamisim::testing::ClientOptions o;
    o.port = port();
    return o;
  }

 private:
  std::shared_ptr<const device::DeviceRegistry> registry_;
  std::shared_ptr<engine::Engine> engine_;  // one for every route, as serve wires it
  server::MetricsRegistry metrics_;
  server::ExtenderService service_;
  server::PlanApi api_;
  std::unique_ptr<server::HttpServer> server_;
};

// CA's scheduler configuration for hamisim, as deploy/ ships it but with a generous httpTimeout:
// a sanitizer build on a loaded machine may take more than the shipped 5 s for a large
// simulation, and no test here is about the timeout (a timing must not decide a verdict).
inline extender::SchedulerConfig ca_config(uint16_t port,
                                           const std::string& verb = "filter-simulation",
                                           bool ignorable = false) {
  const std::string text = R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles: [{schedulerName: default-scheduler}]
extenders:
  - urlPrefix: http://127.0.0.1:)" +
                           std::to_string(port) +
                           R"(
    filterVerb: )" + verb + R"(
    nodeCacheCapable: false
    ignorable: )" + (ignorable ? "true" : "false") +
                           R"(
    httpTimeout: 10m
    managedResources:
      - {name: nvidia.com/gpu, ignoredByScheduler: true}
      - {name: nvidia.com/gpumem, ignoredByScheduler: true}
      - {name: nvidia.com/gpucores, ignoredByScheduler: true}
)";
  auto config = extender::parse_scheduler_config(text, "ca-scheduler-config");
  EXPECT_TRUE(config) << config.error().message;
  return std::move(config).value();
}

}  // namespace hamisim::planner::scaleup::testing
