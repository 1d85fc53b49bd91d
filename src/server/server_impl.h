#pragma once
// The state behind HttpServer (private to hamisim_server_core; Asio lives here, never in
// http_server.h). Its parts are defined where their job is: configuration, listeners, start and
// shutdown in http_server.cpp; accepting and serving connections in connection.cpp; admission
// and handler calls in routing.cpp; TLS material in tls_context.cpp.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "log/rate_limit.h"
#include "server/compute_pool.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/routing.h"
#include "server/tls_context.h"

namespace hamisim::server {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using error_code = boost::system::error_code;

// What the server keeps of an open connection, to stop it.
class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  // All three post to the connection's strand.
  virtual void notify_stopping() = 0;
  virtual void force_close() = 0;
  // Closes the connection if it still waits for a request (see waiting_since); otherwise
  // tells the server it stays (HttpServer::Impl::eviction_failed).
  virtual void evict() = 0;

  // When the connection began to wait for the first byte of a request (a fresh connection,
  // its TLS handshake included, or a keep-alive one between requests), in steady-clock ticks;
  // kBusy while it reads, handles or answers one. Written on the connection's strand, read by
  // the accepting thread: a listener at its cap closes the connection that has waited longest
  // to make room (add_connection).
  static constexpr int64_t kBusy = INT64_MAX;
  std::atomic<int64_t> waiting_since{kBusy};
};

struct HttpServer::Impl {
  struct Listener {
    Listener(net::strand<net::io_context::executor_type> ex, bool is_metrics)
        : acceptor(ex), retry(ex), metrics(is_metrics) {}
    tcp::acceptor acceptor;
    net::steady_timer retry;
    bool metrics;
  };

  // A request's route, or the answer that turns it away (404, 405, 403, 429).
  struct Admission {
    const Route* route = nullptr;  // null: `response` is the answer
    HttpResponse response;
    std::string_view route_label;
    InflightSlot group_slot, heavy_slot;  // held until the response is written
  };

  // Declaration order matters: the io_context (declared last) is destroyed first, and the
  // connections its pending handlers still own reach back into the members above it.
  ServerConfig config;
  std::shared_ptr<spdlog::logger> log;
  std::unique_ptr<MetricsRegistry> owned_metrics;
  MetricsRegistry* metrics = nullptr;
  RouteTable routes;
  RouteTable metrics_routes;

  CounterFamily* requests_total = nullptr;
  HistogramFamily* request_duration = nullptr;
  Counter* handshake_failures = nullptr;
  Counter* tls_reload_ok = nullptr;
  Counter* tls_reload_failed = nullptr;
  Gauge* open_connections = nullptr;
  std::array<Gauge*, 4> inflight_gauge{};
  std::array<std::atomic<int>, 4> inflight{};
  std::array<int, 4> inflight_limit{};
  std::atomic<int> inflight_heavy{0};
  std::atomic<int64_t> inflight_simulation_bytes{0};
  // Set when the shutdown grace period is over: unfinished heavy handlers stop (see
  // HttpRequest::abandoned) and their connections are closed.
  std::atomic<bool> abandoned{false};
  std::array<const std::vector<std::string>*, 4> allow{};

  std::optional<TlsProvider> tls;

  uint64_t request_id_nonce = 0;
  std::atomic<uint64_t> request_counter{0};

  struct OpenConnection {
    std::weak_ptr<ConnectionBase> connection;
    bool metrics_listener = false;
    bool evicting = false;  // asked to close to make room; not counted against the cap
  };
  std::mutex conns_mu;
  std::unordered_map<uint64_t, OpenConnection> conns;  // guarded by conns_mu
  // Per listener (main, metrics), guarded by conns_mu: connections open, and of those, asked
  // to close to make room for a new one.
  std::array<size_t, 2> open_per_listener{};
  std::array<size_t, 2> evicting_per_listener{};
  // The warning that a listener is at its cap and a new connection had to be dropped: a client
  // reconnecting in a loop triggers it at will.
  log::RateLimit connection_limit_warnings{std::chrono::seconds(10)};
  uint64_t next_conn_id = 0;     // guarded by conns_mu
  bool stopping_locked = false;  // guarded by conns_mu
  std::atomic<bool> stopping{false};
  std::atomic<bool> threads_done{false};

  // Request-body storage that connections keep between requests beyond the small amount each
  // may keep (Connection::keep_body_storage), in bytes of capacity: at most kKeptLargeBodies.
  static constexpr size_t kKeptLargeBodies = size_t(32) << 20;
  std::atomic<size_t> kept_large_bodies{0};
  bool charge_kept_body(size_t capacity) {
    if (kept_large_bodies.fetch_add(capacity) + capacity <= kKeptLargeBodies) return true;
    kept_large_bodies.fetch_sub(capacity);
    return false;
  }

  std::vector<std::thread> threads;
  std::atomic<bool> started{false};
  std::mutex wait_mu;
  uint16_t bound_port = 0;
  uint16_t bound_extender_port = 0;
  uint16_t bound_metrics_port = 0;

  net::io_context ioc;
  // The metrics listener's own: kubelet's probes and Prometheus are accepted, read and answered
  // on a thread of their own (probe_thread), so neither CPU-heavy requests nor a flood of
  // connections on the main listener can queue them behind other work. Declared after `ioc`:
  // destroyed before it, after the listeners.
  net::io_context probe_ioc{1};
  net::strand<net::io_context::executor_type> control{net::make_strand(ioc)};
  std::vector<std::unique_ptr<Listener>> listeners;
  std::optional<net::signal_set> signals;
  net::steady_timer grace_timer{control};
  // After a burst of large simulation requests glibc keeps their freed memory in its arenas
  // (an idle server held 398 MB after one). Once no simulation body has been in flight for a
  // second, the free memory goes back to the system (return_memory_when_idle).
  net::steady_timer trim_timer{control};
  std::atomic<bool> trim_armed{false};
  // Keeps the worker threads in the io_context from start() until shutdown has closed the
  // listeners. Without it a shutdown requested before the first accept was posted could find
  // the workers gone (nothing to wait for), its close never ran, and connections waiting in
  // the kernel's accept queue were neither served nor closed.
  std::optional<net::executor_work_guard<net::io_context::executor_type>> running;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> probe_running;
  std::thread probe_thread;  // runs probe_ioc while there is a metrics listener
  // Run the handlers of heavy routes and of the other simulation routes, at a lower priority
  // than the request threads; declared after the io_context, so destroyed before it: the
  // connections their pending work holds reach back into the io_context and the members above.
  std::optional<ComputePool> heavy_pool;
  std::optional<ComputePool> simulation_pool;

  Status init(ServerConfig cfg, std::vector<Route> user_routes, MetricsRegistry* registry);
  // `flag` names the address's flag in errors.
  Result<uint16_t> bind(const tcp::endpoint& ep, bool is_metrics, std::string_view flag);
  void do_accept(Listener& l);
  void on_accept(Listener& l, error_code ec, tcp::socket socket);
  void run_worker(net::io_context& context);
  void begin_shutdown(std::chrono::milliseconds grace);
  void wait_for_signal(std::chrono::milliseconds grace);

  // Connection registry.
  std::optional<uint64_t> add_connection(const std::shared_ptr<ConnectionBase>& c,
                                         bool metrics_listener);
  void remove_connection(uint64_t id);
  // The connection `id`, asked to make room, had begun a request meanwhile: it counts again.
  void eviction_failed(uint64_t id);

  Admission admit(const RouteTable& table, HttpRequest& req);
  // The route `method` `target` names in `table` (GET's for HEAD), or null.
  static const Route* find_route(const RouteTable& table, std::string_view method,
                                 std::string_view target);
  // The body of a simulation request, `bytes` long, counted against
  // max_inflight_simulation_bytes; not acquired: answer 429 (simulation_overloaded()).
  InflightBytes admit_simulation_body(int64_t bytes) {
    return InflightBytes(inflight_simulation_bytes, config.max_inflight_simulation_bytes, bytes);
  }
  HttpResponse simulation_overloaded() const;
  HttpResponse call(const Route& route, const HttpRequest& req);
  std::string next_request_id() {
    return fmt::format("{:016x}{:08x}", request_id_nonce,
                       request_counter.fetch_add(1, std::memory_order_relaxed) + 1);
  }
  void record(std::string_view route, int status, std::string_view outcome, double seconds);
  // A large simulation request was answered: returns free memory to the system once none has
  // been in flight for a second. Any thread.
  void return_memory_when_idle();
  void wait_to_return_memory();  // on `control`
};

}  // namespace hamisim::server
