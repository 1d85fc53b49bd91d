#pragma once
// The HTTP(S) server of `hamisim serve`: transport, TLS/mTLS, auth groups, limits, metrics and
// request logs. It knows nothing about scheduling; routes are registered by their owners.
//
// Beast/Asio stay behind the pimpl so that route code compiles without them.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/result.h"

namespace spdlog {
class logger;
}

namespace hamisim::server {

class MetricsRegistry;

// Who may call a route (spec §4.1, §4.3). kNone routes (health, readiness) are open to any
// client that passed the TLS handshake and are not subject to in-flight limits.
enum class AuthGroup { kNone, kLive, kSimulation, kWebhook };
std::string_view to_string(AuthGroup g);  // "none" | "live" | "simulation" | "webhook"

using HeaderList = std::vector<std::pair<std::string, std::string>>;

inline constexpr size_t kBodyPadding = 64;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path without the query
  std::string query;   // after '?', undecoded; empty when absent
  // Followed by at least kBodyPadding bytes of spare capacity, so that JSON parsers that read
  // past the end of their input (simdjson) decode it where it is.
  std::string body;
  std::string content_type;
  HeaderList headers;  // as received
  // Identity of the verified client certificate: the allow-list entry that matched, otherwise
  // the subject CN (or first DNS SAN when there is no CN). Empty without a client certificate.
  std::string client_identity;
  std::vector<std::string> client_identities;  // subject CN first, then DNS SANs
  std::string request_id;                      // X-Request-Id as received, or generated
  std::string remote_address;                  // "ip:port"
  bool peer_is_loopback = false;               // 127.0.0.0/8, ::1, or ::ffff:127.x.y.z
  // Set once the server gives up on this request (the shutdown grace period is over, or the
  // server is being destroyed): a long handler polls it and stops early; its answer is
  // dropped. Never null for requests the server dispatches.
  const std::atomic<bool>* abandoned = nullptr;
  bool is_abandoned() const { return abandoned != nullptr && abandoned->load(); }

  // First header with this name (case-insensitive), empty if absent.
  std::string_view header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // When not empty, the body sent is these pieces in order instead of `body`: each is a range
  // of `body` or of the request's body, which the server keeps until the response is written.
  // A handler answers with parts of the request this way without copying them (the simulation
  // filter sends back the Nodes it was given). A range out of bounds is a 500.
  struct Piece {
    bool of_request = false;  // a range of the request's body, else of `body`
    size_t offset = 0;
    size_t size = 0;
  };
  std::vector<Piece> pieces;
  HeaderList headers;  // extra headers; Content-Length, Connection are set by the server
  // Label for hamisim_http_request_duration_seconds; derived from the status when empty
  // ("ok", "client_error", "forbidden", "overloaded", "server_error"). Routes set it to tell
  // apart e.g. an HTTP 200 carrying an `Error` ("error") from a real success.
  std::string outcome;

  static HttpResponse json(int status, std::string body);
  // {"Error":"<message>"}, message JSON-escaped.
  static HttpResponse error(int status, std::string_view message);
};

// Runs on a server worker thread, concurrently with other requests (of the same route too), so
// it must be thread-safe. It should be CPU-bound and quick: a blocked handler holds a worker.
// Long computations belong on a `heavy` route (below).
// An exception becomes a 500 `{"Error":"internal: <what>"}`; it never reaches the caller.
using Handler = std::function<HttpResponse(const HttpRequest&)>;

struct Route {
  std::string method;  // exact, upper case; a GET route also answers HEAD, without the body
  std::string path;    // exact match on the path
  AuthGroup group = AuthGroup::kNone;
  Handler handler;
  // A long computation (a whole plan, an estimate of thousands of pods): runs on the server's
  // separate compute threads (ServerConfig::heavy_threads), never on the threads that read,
  // write and answer the other routes, so health probes, metrics and the live verbs answer
  // while it runs. Admitted within ServerConfig::max_inflight_heavy, queued ones included.
  bool heavy = false;
};

struct ServerConfig {
  // "host:port" or "[v6]:port"; host is an IP literal, "localhost", or empty (all interfaces).
  // Port 0 picks an ephemeral port (see HttpServer::port()). The IPv4 wildcard (empty, "*",
  // "0.0.0.0") listens dual-stack where the kernel has IPv6, as Go's net.Listen does, so an
  // IPv6 pod IP is served too; "[::]" likewise.
  std::string listen = "127.0.0.1:8443";
  // A second address with the same routes, TLS, peer checks and connection budget as
  // `listen`; empty: none. HAMi after v2.10 moved /filter and /bind to a listener of their own
  // (--extender-bind), where its chart's kube-scheduler calls them.
  std::string extender_listen;
  // Plain HTTP /metrics listener; empty disables it.
  std::string metrics_listen = "127.0.0.1:9395";

  // Plain HTTP is allowed only when asked for or on a loopback address; otherwise tls_cert
  // and tls_key are required.
  bool insecure_http = false;
  std::string tls_cert, tls_key;  // PEM; reloaded when they change
  std::string client_ca;          // PEM bundle; makes client certificates mandatory
  // Certificate identities (CN or DNS SAN) allowed per group; empty = any verified client.
  // A non-empty list requires client_ca.
  std::vector<std::string> allow_live_clients, allow_simulation_clients, allow_webhook_clients;
  // The live verbs (/filter, /bind) act on the cluster: when set, they answer only peers on
  // loopback (kube-scheduler in the same pod) or clients with a verified certificate; any other
  // peer gets 403. HAMi's chart binds its one listener to 0.0.0.0:443 for the webhook, and its
  // Service exposes that port as a NodePort: without this anyone reaching a node could bind pods.
  bool live_routes_loopback_or_certificate = false;
  // How often (at most) new connections check the TLS files for changes.
  std::chrono::milliseconds tls_reload_interval{1000};

  size_t max_body_bytes = 4 << 20;
  size_t max_header_bytes = 16 << 10;
  // Requests per group beyond which 429 is returned; <= 0 means unlimited. A request counts
  // from the moment it is read until its answer is ready to be written, waiting included.
  int max_inflight_live = 256;
  int max_inflight_simulation = 64;
  int max_inflight_webhook = 64;
  // Body bytes of simulation-group requests (/filter-simulation, /v1/*) from the moment their
  // header announces them (Content-Length; a chunked body once read) until the answer is
  // written; beyond, 429 at once, before the body is read, and the connection is closed.
  // <= 0: unlimited.
  int64_t max_inflight_simulation_bytes = int64_t(64) << 20;
  // Heavy requests (Route::heavy) computing or waiting for a compute thread; beyond: 429.
  int max_inflight_heavy = 4;
  int heavy_threads = 1;  // compute threads for heavy routes
  // Compute threads for the other simulation routes (/filter-simulation); 0 = one per core.
  int simulation_threads = 0;
  // How much lower the compute threads' scheduling priority is than the request threads'
  // (a nice increment, 0-19): on a saturated machine the live verbs and the probes, which run
  // on the request threads, get the CPU first.
  int compute_nice = 10;
  // Open connections per listener; a new one beyond is closed at once. The metrics listener
  // has its own budget, so idle keep-alive clients of the main listener cannot lock out
  // kubelet's probes and Prometheus.
  int max_connections = 10000;
  int max_metrics_connections = 64;

  std::chrono::milliseconds header_timeout{std::chrono::seconds(10)};  // also TLS handshake
  std::chrono::milliseconds body_timeout{std::chrono::seconds(30)};    // body read, response write
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(90)};  // between keep-alive requests

  int threads = 0;  // worker threads; 0 = hardware_concurrency

  std::shared_ptr<spdlog::logger> logger;  // null = spdlog's default logger
};

class HttpServer {
 public:
  // Validates the configuration, loads TLS material and binds the listeners (so port() is
  // known and "address in use" is reported here). `metrics` may be null: the server then keeps
  // a private registry. A non-null registry must outlive the server.
  static Result<std::unique_ptr<HttpServer>> create(ServerConfig config, std::vector<Route> routes,
                                                    MetricsRegistry* metrics = nullptr);
  ~HttpServer();  // shuts down with no grace if still running
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const;           // bound port of `listen`
  uint16_t extender_port() const;  // bound port of `extender_listen`, 0 if none
  uint16_t metrics_port() const;   // bound port of `metrics_listen`, 0 if disabled
  MetricsRegistry& metrics();

  // Starts the worker threads and begins accepting. Call once.
  void start();

  // Stops accepting, closes idle keep-alive connections, lets in-flight requests finish (their
  // responses carry `Connection: close`), and after `grace` closes whatever remains: a request
  // still unanswered then gets its connection closed, never a partial answer, and heavy
  // handlers see HttpRequest::abandoned.
  // Non-blocking, idempotent, callable from any thread, including a handler.
  void request_shutdown(std::chrono::milliseconds grace);
  // Blocks until every connection is closed and the worker threads have exited.
  void wait();
  // request_shutdown(grace) + wait(). Not from a handler.
  void shutdown(std::chrono::milliseconds grace);

  // SIGTERM and SIGINT trigger request_shutdown(grace); SIGHUP, SIGUSR1 and SIGUSR2 are
  // logged and ignored instead of ending the process. Call before start().
  void shutdown_on_signals(std::chrono::milliseconds grace);

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hamisim::server
