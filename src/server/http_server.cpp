// HttpServer's lifecycle: configuration checks, the listeners (TLS or plain, and the plain
// metrics listener), the worker and compute threads, and the orderly shutdown.
#include "server/http_server.h"

#include <signal.h>

#include <algorithm>
#include <charconv>
#include <random>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>

#include "server/server_impl.h"

namespace hamisim::server {

namespace {

Result<tcp::endpoint> parse_listen(std::string_view s) {
  std::string_view host, port;
  if (s.starts_with('[')) {
    auto close = s.find("]:");
    if (close == std::string_view::npos) return make_error(fmt::format("bad listen address {}", s));
    host = s.substr(1, close - 1);
    port = s.substr(close + 2);
  } else {
    auto colon = s.rfind(':');
    if (colon == std::string_view::npos) {
      return make_error(fmt::format("bad listen address {}: want host:port", s));
    }
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return make_error(fmt::format("bad listen address {}: IPv6 hosts need [brackets]", s));
    }
  }
  uint16_t port_num = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), port_num);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size()) {
    return make_error(fmt::format("bad listen address {}: bad port", s));
  }
  net::ip::address addr;
  if (host.empty() || host == "*") {
    addr = net::ip::address_v4::any();
  } else if (host == "localhost") {
    addr = net::ip::address_v4::loopback();
  } else {
    error_code aec;
    addr = net::ip::make_address(std::string(host), aec);
    if (aec) return make_error(fmt::format("bad listen address {}: host must be an IP address", s));
  }
  return tcp::endpoint(addr, port_num);
}

}  // namespace

Status HttpServer::Impl::init(ServerConfig cfg, std::vector<Route> user_routes,
                              MetricsRegistry* registry) {
  config = std::move(cfg);
  log = config.logger ? config.logger : spdlog::default_logger();
  if (registry == nullptr) {
    owned_metrics = std::make_unique<MetricsRegistry>();
    registry = owned_metrics.get();
  }
  metrics = registry;

  auto ep = parse_listen(config.listen);
  if (!ep) return ep.error();
  std::optional<tcp::endpoint> extender_ep;
  if (!config.extender_listen.empty()) {
    auto eep = parse_listen(config.extender_listen);
    if (!eep) return make_error("--extender-bind: " + eep.error().message);
    extender_ep = eep.value();
  }
  std::optional<tcp::endpoint> metrics_ep;
  if (!config.metrics_listen.empty()) {
    auto mep = parse_listen(config.metrics_listen);
    if (!mep) return mep.error();
    metrics_ep = mep.value();
  }

  bool tls_enabled = !config.tls_cert.empty() || !config.tls_key.empty();
  if (tls_enabled && (config.tls_cert.empty() || config.tls_key.empty())) {
    return make_error(
        "tls: --tls-cert (--cert_file) and --tls-key (--key_file) must be given together");
  }
  for (const auto& [address, text] : {std::pair{std::optional(*ep), config.listen},
                                      std::pair{extender_ep, config.extender_listen}}) {
    if (address && !tls_enabled && !config.insecure_http && !address->address().is_loopback()) {
      return make_error(fmt::format(
          "refusing plain HTTP on non-loopback address {}: set --tls-cert and --tls-key, or "
          "--insecure-http",
          text));
    }
  }
  if (!config.client_ca.empty() && !tls_enabled) {
    return make_error("tls: --client-ca needs --tls-cert and --tls-key");
  }
  for (auto [list, flag] :
       {std::pair{&config.allow_live_clients, "--allow-live-clients"},
        std::pair{&config.allow_simulation_clients, "--allow-simulation-clients"},
        std::pair{&config.allow_webhook_clients, "--allow-webhook-clients"}}) {
    if (!list->empty() && config.client_ca.empty()) {
      return make_error(
          fmt::format("{} needs --client-ca (identities come from verified "
                      "client certificates)",
                      flag));
    }
  }
  if (config.max_body_bytes == 0) return make_error("--max-body-bytes must be positive");

  // Health probes are also served on the plain metrics listener: kubelet cannot present the
  // client certificate the main listener may require.
  std::vector<Route> probe_routes;
  for (const Route& r : user_routes) {
    if (r.group == AuthGroup::kNone && r.method == "GET") probe_routes.push_back(r);
  }
  auto table = RouteTable::build(std::move(user_routes));
  if (!table) return table.error();
  routes = std::move(table.value());

  requests_total =
      &metrics->counter("hamisim_http_requests_total",
                        "HTTP requests answered, by route, status code and outcome (an extender "
                        "answer of HTTP 200 carrying an Error is outcome error).",
                        {"route", "code", "outcome"});
  request_duration = &metrics->histogram(
      "hamisim_http_request_duration_seconds",
      "Time from the first byte of a request to its response, by route and outcome.",
      {"route", "outcome"});
  auto& inflight_family = metrics->gauge("hamisim_http_inflight_requests",
                                         "Requests being handled, by auth group.", {"group"});
  for (AuthGroup g : {AuthGroup::kLive, AuthGroup::kSimulation, AuthGroup::kWebhook}) {
    inflight_gauge[size_t(g)] = &inflight_family.labels({to_string(g)});
  }
  handshake_failures =
      &metrics->counter("hamisim_tls_handshake_failures_total", "Failed TLS handshakes.")
           .labels({});
  auto& reloads = metrics->counter("hamisim_tls_certificate_reloads_total",
                                   "TLS certificate reloads, by result.", {"result"});
  tls_reload_ok = &reloads.labels({"success"});
  tls_reload_failed = &reloads.labels({"error"});
  open_connections =
      &metrics->gauge("hamisim_http_open_connections", "Open client connections.").labels({});

  inflight_limit[size_t(AuthGroup::kLive)] = config.max_inflight_live;
  inflight_limit[size_t(AuthGroup::kSimulation)] = config.max_inflight_simulation;
  inflight_limit[size_t(AuthGroup::kWebhook)] = config.max_inflight_webhook;
  allow[size_t(AuthGroup::kLive)] = &config.allow_live_clients;
  allow[size_t(AuthGroup::kSimulation)] = &config.allow_simulation_clients;
  allow[size_t(AuthGroup::kWebhook)] = &config.allow_webhook_clients;

  if (metrics_ep) {
    probe_routes.push_back(Route{"GET", "/metrics", AuthGroup::kNone, [this](const HttpRequest&) {
                                   HttpResponse r;
                                   r.content_type = MetricsRegistry::kContentType;
                                   r.body = metrics->render();
                                   return r;
                                 }});
    auto mt = RouteTable::build(std::move(probe_routes));
    metrics_routes = std::move(mt.value());
  }

  if (tls_enabled) {
    tls.emplace(config, *log, *tls_reload_ok, *tls_reload_failed);
    if (auto st = tls->load(); !st) return st.error();
  }

  std::random_device rd;
  request_id_nonce = (uint64_t(rd()) << 32) ^ rd();

  auto port = bind(ep.value(), false, "--listen");
  if (!port) return port.error();
  bound_port = port.value();
  if (extender_ep) {
    auto eport = bind(*extender_ep, false, "--extender-bind");
    if (!eport) return eport.error();
    bound_extender_port = eport.value();
  }
  if (metrics_ep) {
    auto mport = bind(*metrics_ep, true, "--metrics-listen");
    if (!mport) return mport.error();
    bound_metrics_port = mport.value();
  }
  return ok_status();
}

Result<uint16_t> HttpServer::Impl::bind(const tcp::endpoint& ep, bool is_metrics,
                                        std::string_view flag) {
  auto l =
      std::make_unique<Listener>(is_metrics ? net::make_strand(probe_ioc) : control, is_metrics);
  error_code ec;
  auto fail = [&](std::string_view what) {
    return make_error(fmt::format("listen on {}:{} ({}): {}: {}", ep.address().to_string(),
                                  ep.port(), flag, what, ec.message()));
  };
  // The wildcard listens dual-stack where the kernel has IPv6 (Go's net.Listen does the same),
  // and on IPv4 alone where it has not.
  const bool wildcard = ep.address().is_unspecified();
  bool bound = false;
  if (wildcard) {
    const tcp::endpoint any6(net::ip::address_v6::any(), ep.port());
    error_code ec6;
    l->acceptor.open(tcp::v6(), ec6);
    if (!ec6) l->acceptor.set_option(net::ip::v6_only(false), ec6);
    if (!ec6) l->acceptor.set_option(net::socket_base::reuse_address(true), ec6);
    if (!ec6) l->acceptor.bind(any6, ec6);
    if (!ec6) {
      bound = true;
    } else if (ec6 == net::error::address_in_use) {
      ec = ec6;
      return fail("bind");
    } else if (l->acceptor.is_open()) {
      l->acceptor.close(ec6);
    }
  }
  if (!bound) {
    if (l->acceptor.open(ep.protocol(), ec); ec) return fail("open");
    if (l->acceptor.set_option(net::socket_base::reuse_address(true), ec); ec) {
      return fail("option");
    }
    if (l->acceptor.bind(ep, ec); ec) return fail("bind");
  }
  if (l->acceptor.listen(net::socket_base::max_listen_connections, ec); ec) return fail("listen");
  uint16_t port = l->acceptor.local_endpoint(ec).port();
  if (ec) return fail("local_endpoint");
  listeners.push_back(std::move(l));
  return port;
}

void HttpServer::Impl::begin_shutdown(std::chrono::milliseconds grace) {
  std::vector<std::shared_ptr<ConnectionBase>> live;
  {
    std::lock_guard lock(conns_mu);
    if (stopping_locked) return;
    stopping_locked = true;
    stopping.store(true);
    for (auto& [id, open] : conns) {
      if (auto c = open.connection.lock()) live.push_back(std::move(c));
    }
  }
  log->info("http server shutting down: {} open connections, grace {} ms", live.size(),
            grace.count());
  net::post(control, [this, grace, live = std::move(live)] {
    error_code ec;
    for (auto& l : listeners) {
      // On the listener's own strand (the metrics listener's is on probe_ioc).
      net::dispatch(l->acceptor.get_executor(), [l = l.get()] {
        error_code close_ec;
        l->acceptor.close(close_ec);
        l->retry.cancel();
      });
    }
    if (signals) signals->cancel(ec);
    trim_timer.cancel();
    running.reset();
    probe_running.reset();
    {
      std::lock_guard lock(conns_mu);
      if (conns.empty()) return;
    }
    grace_timer.expires_after(grace);
    grace_timer.async_wait([this](error_code wec) {
      if (wec) return;  // every connection finished in time
      std::vector<std::shared_ptr<ConnectionBase>> rest;
      {
        std::lock_guard lock(conns_mu);
        for (auto& [id, open] : conns) {
          if (auto c = open.connection.lock()) rest.push_back(std::move(c));
        }
      }
      abandoned.store(true);
      if (!rest.empty()) log->warn("grace period over, closing {} connections", rest.size());
      for (auto& c : rest) c->force_close();
    });
    for (auto& c : live) c->notify_stopping();
  });
}

void HttpServer::Impl::run_worker(net::io_context& context) {
  for (;;) {
    try {
      context.run();
      return;
    } catch (const std::exception& e) {
      // Nothing we post throws; if something does, keep the worker alive.
      log->error("http worker: unexpected exception: {}", e.what());
    } catch (...) {
      log->error("http worker: unexpected exception");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// HttpServer

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  if (!impl_) return;
  impl_->begin_shutdown(std::chrono::milliseconds(0));
  wait();
}

Result<std::unique_ptr<HttpServer>> HttpServer::create(ServerConfig config,
                                                       std::vector<Route> routes,
                                                       MetricsRegistry* metrics) {
  auto impl = std::make_unique<Impl>();
  if (auto st = impl->init(std::move(config), std::move(routes), metrics); !st) {
    return st.error();
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

uint16_t HttpServer::port() const {
  return impl_->bound_port;
}
uint16_t HttpServer::extender_port() const {
  return impl_->bound_extender_port;
}
uint16_t HttpServer::metrics_port() const {
  return impl_->bound_metrics_port;
}
MetricsRegistry& HttpServer::metrics() {
  return *impl_->metrics;
}

void HttpServer::start() {
  if (impl_->started.exchange(true)) return;
  impl_->running.emplace(impl_->ioc.get_executor());
  for (auto& l : impl_->listeners) {
    net::post(l->acceptor.get_executor(), [impl = impl_.get(), l = l.get()] {
      if (!impl->stopping.load()) impl->do_accept(*l);
    });
  }
  if (impl_->bound_metrics_port != 0) {
    impl_->probe_running.emplace(impl_->probe_ioc.get_executor());
    impl_->probe_thread = std::thread([impl = impl_.get()] { impl->run_worker(impl->probe_ioc); });
  }
  const int n = impl_->config.threads > 0 ? impl_->config.threads
                                          : int(std::max(1u, std::thread::hardware_concurrency()));
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  impl_->heavy_pool.emplace(impl_->config.heavy_threads, impl_->config.compute_nice,
                            "hamisim-plan");
  impl_->simulation_pool.emplace(
      impl_->config.simulation_threads > 0 ? impl_->config.simulation_threads : cores,
      impl_->config.compute_nice, "hamisim-sim");
  impl_->threads.reserve(n);
  for (int i = 0; i < n; ++i)
    impl_->threads.emplace_back([impl = impl_.get()] { impl->run_worker(impl->ioc); });
}

void HttpServer::request_shutdown(std::chrono::milliseconds grace) {
  impl_->begin_shutdown(grace);
}

void HttpServer::wait() {
  std::lock_guard lock(impl_->wait_mu);
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
  if (impl_->probe_thread.joinable()) impl_->probe_thread.join();
  // Compute work still queued or running was abandoned with the connections: the I/O threads
  // waited for each answer (work guards), so the pools are idle or finishing here.
  if (impl_->heavy_pool) impl_->heavy_pool->join();
  if (impl_->simulation_pool) impl_->simulation_pool->join();
  impl_->threads_done.store(true);
}

void HttpServer::shutdown(std::chrono::milliseconds grace) {
  request_shutdown(grace);
  wait();
}

void HttpServer::shutdown_on_signals(std::chrono::milliseconds grace) {
  Impl* impl = impl_.get();
  impl->signals.emplace(impl->control, SIGINT, SIGTERM);
  impl->signals->add(SIGHUP);
  impl->signals->add(SIGUSR1);
  impl->signals->add(SIGUSR2);
  impl->wait_for_signal(grace);
}

// SIGHUP and SIGUSR1/2 would end the process by default, skipping the orderly shutdown (and
// --snapshot-out). They are logged and ignored: TLS files are reloaded when they change, and
// other settings are flags, which need a restart.
void HttpServer::Impl::wait_for_signal(std::chrono::milliseconds grace) {
  signals->async_wait([this, grace](error_code ec, int signo) {
    if (ec) return;
    if (signo != SIGINT && signo != SIGTERM) {
      log->info("received signal {}: ignored (send SIGTERM to stop)", signo);
      return wait_for_signal(grace);
    }
    log->info("received signal {}, shutting down", signo);
    begin_shutdown(grace);
  });
}

}  // namespace hamisim::server
