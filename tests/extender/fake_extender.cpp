#include "fake_extender.h"

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>
#include <boost/json.hpp>

#include <stdexcept>

#include "device/catalog/device_config.h"

namespace hamisim::extender::testing {

namespace {
std::unique_ptr<server::HttpServer> start(server::ServerConfig config,
                                          std::vector<server::Route> routes,
                                          server::MetricsRegistry* metrics) {
  config.listen = "127.0.0.1:0";
  config.metrics_listen = "";
  config.threads = 2;
  // Shutdown chatter of dozens of short-lived servers would bury the test output.
  if (!config.logger)
    config.logger = std::make_shared<spdlog::logger>(
        "test-extender", std::make_shared<spdlog::sinks::null_sink_mt>());
  auto server = server::HttpServer::create(std::move(config), std::move(routes), metrics);
  if (!server) throw std::runtime_error(server.error().message);
  (*server)->start();
  return std::move(*server);
}
}  // namespace

ScriptedExtender::ScriptedExtender(std::vector<std::pair<std::string, Script>> routes,
                                   server::ServerConfig config) {
  std::vector<server::Route> server_routes;
  for (auto& [path, script] : routes) {
    server_routes.push_back(
        {"POST", path, server::AuthGroup::kSimulation,
         [this, script = std::move(script)](const server::HttpRequest& request) {
           {
             std::lock_guard lock(mu_);
             requests_.push_back({request.target, request.body, request.content_type,
                                  std::string(request.header("Host"))});
           }
           ++calls_;
           return script(request);
         }});
  }
  server_ = start(std::move(config), std::move(server_routes), nullptr);
}

ScriptedExtender::~ScriptedExtender() {
  server_->shutdown(std::chrono::milliseconds(100));
}

std::string ScriptedExtender::url(const std::string& scheme) const {
  return scheme + "://127.0.0.1:" + std::to_string(port());
}

std::vector<RecordedRequest> ScriptedExtender::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

LiveService::LiveService(server::ServerConfig config)
    : registry_(device::build_registry({})),
      engine_(registry_, nullptr),
      service_(engine_, metrics_, {}) {
  server_ = start(std::move(config), service_.routes(), &metrics_);
}

LiveService::~LiveService() {
  server_->shutdown(std::chrono::seconds(5));
}

std::string nodes_result(const std::vector<std::string>& keep, const std::string& failed_json,
                         const std::string& unresolvable_json) {
  std::string items;
  for (const auto& name : keep) {
    if (!items.empty()) items += ",";
    items += "{\"metadata\":{\"name\":\"" + name + "\"}}";
  }
  return "{\"Nodes\":{\"metadata\":{},\"items\":[" + items +
         "]},\"NodeNames\":null,\"FailedNodes\":" + failed_json +
         ",\"FailedAndUnresolvableNodes\":" + unresolvable_json + ",\"Error\":\"\"}";
}

std::vector<std::string> sent_node_names(const std::string& args_body) {
  std::vector<std::string> names;
  auto doc = boost::json::parse(args_body).as_object();
  const auto& nodes = doc.at("Nodes");
  if (nodes.is_null()) return names;
  for (const auto& item : nodes.as_object().at("items").as_array()) {
    names.emplace_back(item.at("metadata").at("name").as_string());
  }
  return names;
}

}  // namespace hamisim::extender::testing
