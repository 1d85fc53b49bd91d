#pragma once
// Extenders for the planner's extender tests, served over loopback by the real HTTP server:
// a scriptable one (any handler per path, every request recorded) and the real `hamisim serve`
// extender routes.

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/registry.h"
#include "fit/description.h"
#include "server/extender_service.h"
#include "server/http_server.h"
#include "server/metrics.h"

namespace hamisim::extender::testing {

struct RecordedRequest {
  std::string path;
  std::string body;
  std::string content_type;
  std::string host;
};

// A test extender: POST routes with scripted handlers; every request is recorded.
class ScriptedExtender {
 public:
  using Script = std::function<server::HttpResponse(const server::HttpRequest&)>;
  // `config` may carry TLS settings; listen/metrics are overridden (ephemeral loopback port).
  explicit ScriptedExtender(std::vector<std::pair<std::string, Script>> routes,
                            server::ServerConfig config = {});
  ~ScriptedExtender();

  uint16_t port() const { return server_->port(); }
  std::string url(const std::string& scheme = "http") const;
  std::vector<RecordedRequest> requests() const;
  int calls() const { return calls_.load(); }

 private:
  mutable std::mutex mu_;
  std::vector<RecordedRequest> requests_;
  std::atomic<int> calls_{0};
  std::unique_ptr<server::HttpServer> server_;
};

// The real extender routes of `hamisim serve` (simulation path included) on loopback.
class LiveService {
 public:
  explicit LiveService(server::ServerConfig config = {});
  ~LiveService();
  uint16_t port() const { return server_->port(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }

 private:
  device::DeviceRegistry registry_;
  engine::Engine engine_;
  server::MetricsRegistry metrics_;
  server::ExtenderService service_;
  std::unique_ptr<server::HttpServer> server_;
};

// An ExtenderFilterResult body keeping `keep` (as Node objects {"metadata":{"name":..}}).
std::string nodes_result(const std::vector<std::string>& keep,
                         const std::string& failed_json = "null",
                         const std::string& unresolvable_json = "null");

// Names of the items of the NodeList sent in an ExtenderArgs body.
std::vector<std::string> sent_node_names(const std::string& args_body);

}  // namespace hamisim::extender::testing
