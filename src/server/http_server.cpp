#include "server/http_server.h"

#include "model/json_writer.h"

#include <sys/stat.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <spdlog/spdlog.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "log/structured.h"
#include "server/metrics.h"

namespace hamisim::server {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using error_code = boost::system::error_code;

// ---------------------------------------------------------------------------------------------
// Small public helpers

std::string_view to_string(AuthGroup g) {
  switch (g) {
    case AuthGroup::kNone:
      return "none";
    case AuthGroup::kLive:
      return "live";
    case AuthGroup::kSimulation:
      return "simulation";
    case AuthGroup::kWebhook:
      return "webhook";
  }
  return "unknown";
}

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view to_sv(boost::core::string_view s) {
  return {s.data(), s.size()};
}

}  // namespace

std::string_view HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return v;
  }
  return {};
}

HttpResponse HttpResponse::json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse HttpResponse::error(int status, std::string_view message) {
  std::string body = R"({"Error":)";
  model::append_go_json_string(body, message);  // adds the quotes
  body += "}";
  return json(status, std::move(body));
}

// ---------------------------------------------------------------------------------------------
// Configuration helpers

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

// What identifies a version of a file well enough to notice a replacement (Kubernetes Secret
// volumes swap a symlink; editors rewrite in place).
struct FileStamp {
  bool exists = false;
  int64_t mtime_ns = 0;
  int64_t size = 0;
  uint64_t inode = 0;
  bool operator==(const FileStamp&) const = default;
};

FileStamp stamp_of(const std::string& path) {
  FileStamp f;
  if (path.empty()) return f;
  struct stat st = {};
  if (::stat(path.c_str(), &st) != 0) return f;
  f.exists = true;
  f.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  f.size = st.st_size;
  f.inode = st.st_ino;
  return f;
}

std::string openssl_error_text(const error_code& ec) {
  std::string msg = ec.message();
  unsigned long e;
  char buf[256];
  while ((e = ERR_get_error()) != 0) {
    ERR_error_string_n(e, buf, sizeof buf);
    msg += "; ";
    msg += buf;
  }
  return msg;
}

// Mozilla "intermediate" TLS 1.2 suites; TLS 1.3 suites are OpenSSL's defaults.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

Result<std::shared_ptr<ssl::context>> build_tls_context(const ServerConfig& c) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use | ssl::context::no_compression,
                   ec);
  if (ec || SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_cipher_list(native, kTls12Ciphers) != 1) {
    return make_error("tls: cannot configure protocol versions: " + openssl_error_text(ec));
  }
  ctx->use_certificate_chain_file(c.tls_cert, ec);
  if (ec) {
    return make_error(
        fmt::format("tls: loading certificate {}: {}", c.tls_cert, openssl_error_text(ec)));
  }
  ctx->use_private_key_file(c.tls_key, ssl::context::pem, ec);
  if (ec) {
    return make_error(
        fmt::format("tls: loading private key {}: {}", c.tls_key, openssl_error_text(ec)));
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    return make_error(fmt::format("tls: private key {} does not match certificate {}: {}",
                                  c.tls_key, c.tls_cert, openssl_error_text({})));
  }
  if (!c.client_ca.empty()) {
    ctx->load_verify_file(c.client_ca, ec);
    if (ec) {
      return make_error(
          fmt::format("tls: loading client CA {}: {}", c.client_ca, openssl_error_text(ec)));
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(c.client_ca.c_str());
    if (names == nullptr) {
      return make_error(fmt::format("tls: client CA {} holds no certificate: {}", c.client_ca,
                                    openssl_error_text({})));
    }
    SSL_CTX_set_client_CA_list(native, names);  // takes ownership
    ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    // Needed for session resumption when client certificates are verified.
    static constexpr unsigned char kSessionContext[] = "hamisim";
    SSL_CTX_set_session_id_context(native, kSessionContext, sizeof kSessionContext - 1);
  }
  ERR_clear_error();
  return ctx;
}

// Subject CN(s) first, then DNS SANs, of the verified peer certificate. Values with control
// characters (or embedded NULs) are dropped: they could not be listed in an allow list anyway.
std::vector<std::string> peer_identities(SSL* ssl) {
  std::vector<std::string> out;
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return out;
  auto add = [&](const unsigned char* data, int len) {
    if (data == nullptr || len <= 0) return;
    std::string_view v(reinterpret_cast<const char*>(data), size_t(len));
    if (std::any_of(v.begin(), v.end(), [](unsigned char ch) { return ch < 0x20 || ch == 0x7f; }))
      return;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.emplace_back(v);
  };
  X509_NAME* subject = X509_get_subject_name(cert);
  for (int idx = -1; (idx = X509_NAME_get_index_by_NID(subject, NID_commonName, idx)) >= 0;) {
    ASN1_STRING* s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, idx));
    unsigned char* utf8 = nullptr;
    int len = ASN1_STRING_to_UTF8(&utf8, s);
    if (len > 0) add(utf8, len);
    OPENSSL_free(utf8);
  }
  auto* sans =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (sans != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* gn = sk_GENERAL_NAME_value(sans, i);
      if (gn->type == GEN_DNS) {
        add(ASN1_STRING_get0_data(gn->d.dNSName), ASN1_STRING_length(gn->d.dNSName));
      }
    }
    GENERAL_NAMES_free(sans);
  }
  return out;
}

std::string_view outcome_of(int status) {
  if (status < 400) return "ok";
  if (status == 403) return "forbidden";
  if (status == 429) return "overloaded";
  if (status < 500) return "client_error";
  return "server_error";
}

bool valid_request_id(std::string_view id) {
  return !id.empty() && id.size() <= 128 &&
         std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

bool valid_header_text(std::string_view s) {
  return s.find_first_of("\r\n") == std::string_view::npos && s.find('\0') == s.npos;
}

// Completion condition for net::async_read/async_write: asio's transfer_all() asks for at most
// 64 KiB per system call, so a 600 KB body took ten reads and the response ten writes; this
// lets every call move all that is left (the kernel still decides how much it takes).
struct TransferAllAtOnce {
  size_t operator()(const error_code& ec, size_t) const {
    return ec ? 0 : std::numeric_limits<size_t>::max();
  }
};

bool valid_method(std::string_view m) {
  return !m.empty() && std::all_of(m.begin(), m.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// TLS material with reload

namespace {

class TlsProvider {
 public:
  TlsProvider(const ServerConfig& config, spdlog::logger& log, Counter& reload_ok,
              Counter& reload_failed)
      : config_(config), log_(log), reload_ok_(reload_ok), reload_failed_(reload_failed) {}

  Status load() {
    Stamps stamps = stat_all();
    auto ctx = build_tls_context(config_);
    if (!ctx) return ctx.error();
    ctx_ = std::move(ctx.value());
    loaded_ = stamps;
    last_check_ = Clock::now();
    return ok_status();
  }

  // The context for a new connection; re-reads the files when they changed since the last
  // check, at most once per reload interval. A broken new file keeps the old context.
  std::shared_ptr<ssl::context> current() {
    std::lock_guard lock(mu_);
    auto now = Clock::now();
    if (now - last_check_ < config_.tls_reload_interval) return ctx_;
    last_check_ = now;
    Stamps stamps = stat_all();
    if (stamps == loaded_ || (failed_ && stamps == *failed_)) return ctx_;
    auto ctx = build_tls_context(config_);
    if (ctx) {
      ctx_ = std::move(ctx.value());
      loaded_ = stamps;
      failed_.reset();
      reload_ok_.inc();
      log_.info("tls: reloaded certificate {} and key {}", config_.tls_cert, config_.tls_key);
    } else {
      failed_ = stamps;
      reload_failed_.inc();
      log_.error("{}; keeping the previous certificate", ctx.error().message);
    }
    return ctx_;
  }

 private:
  using Stamps = std::array<FileStamp, 3>;
  Stamps stat_all() const {
    return {stamp_of(config_.tls_cert), stamp_of(config_.tls_key), stamp_of(config_.client_ca)};
  }

  const ServerConfig& config_;
  spdlog::logger& log_;
  Counter& reload_ok_;
  Counter& reload_failed_;
  std::mutex mu_;
  std::shared_ptr<ssl::context> ctx_;
  Stamps loaded_;
  std::optional<Stamps> failed_;
  Clock::time_point last_check_;
};

struct RouteTable {
  std::vector<Route> routes;
  std::map<std::string, std::vector<size_t>, std::less<>> by_path;
  std::map<std::string, std::string, std::less<>> allow_header;  // path -> "GET, POST"

  static Result<RouteTable> build(std::vector<Route> routes) {
    RouteTable t;
    t.routes = std::move(routes);
    for (size_t i = 0; i < t.routes.size(); ++i) {
      const Route& r = t.routes[i];
      if (!valid_method(r.method)) return make_error(fmt::format("route {}: bad method", r.path));
      if (!r.path.starts_with('/')) {
        return make_error(fmt::format("route {}: path must start with /", r.path));
      }
      if (!r.handler) return make_error(fmt::format("route {} {}: no handler", r.method, r.path));
      auto& idx = t.by_path[r.path];
      for (size_t j : idx) {
        if (t.routes[j].method == r.method) {
          return make_error(fmt::format("route {} {} registered twice", r.method, r.path));
        }
      }
      idx.push_back(i);
    }
    for (const auto& [path, idx] : t.by_path) {
      std::vector<std::string> methods;
      for (size_t j : idx) methods.push_back(t.routes[j].method);
      // A GET route answers HEAD too (RFC 9110 §9.3.2), unless HEAD has a route of its own.
      if (std::count(methods.begin(), methods.end(), "GET") > 0 &&
          std::count(methods.begin(), methods.end(), "HEAD") == 0) {
        methods.push_back("HEAD");
      }
      std::sort(methods.begin(), methods.end());
      t.allow_header[path] = fmt::format("{}", fmt::join(methods, ", "));
    }
    return t;
  }

  // Metric label for a path: the route's own path, or "other" so that arbitrary request paths
  // never become label values.
  std::string_view label_for(std::string_view path) const {
    auto it = by_path.find(path);
    return it == by_path.end() ? std::string_view("other") : std::string_view(it->first);
  }
};

// One admitted request of a limited kind (an auth group, or heavy routes), held from the moment
// the request is read until its response is written, so that requests waiting for a thread
// count too. Movable, so the connection can hold it while a compute thread works.
class InflightSlot {
 public:
  InflightSlot() = default;
  InflightSlot(std::atomic<int>& counter, int limit, Gauge* gauge) : gauge_(gauge) {
    int prev = counter.fetch_add(1, std::memory_order_acq_rel);
    if (limit > 0 && prev >= limit) {
      counter.fetch_sub(1, std::memory_order_acq_rel);
      return;
    }
    counter_ = &counter;
    if (gauge_) gauge_->add(1);
  }
  InflightSlot(InflightSlot&& o) noexcept
      : counter_(std::exchange(o.counter_, nullptr)), gauge_(o.gauge_) {}
  InflightSlot& operator=(InflightSlot&& o) noexcept {
    if (this != &o) {
      release();
      counter_ = std::exchange(o.counter_, nullptr);
      gauge_ = o.gauge_;
    }
    return *this;
  }
  ~InflightSlot() { release(); }
  bool acquired() const { return counter_ != nullptr; }
  void release() {
    if (counter_ == nullptr) return;
    std::exchange(counter_, nullptr)->fetch_sub(1, std::memory_order_acq_rel);
    if (gauge_) gauge_->sub(1);
  }

 private:
  std::atomic<int>* counter_ = nullptr;  // null when not acquired or released
  Gauge* gauge_ = nullptr;
};

// A plan frees hundreds of MB of small objects, which glibc keeps in its arenas unless asked:
// an idle server would hold the peak of its largest plan. Heavy requests are rare enough to
// pay for the walk.
void return_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  // Both post to the connection's strand.
  virtual void notify_stopping() = 0;
  virtual void force_close() = 0;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Server state

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
  };
  std::mutex conns_mu;
  std::unordered_map<uint64_t, OpenConnection> conns;  // guarded by conns_mu
  std::array<size_t, 2> open_per_listener{};           // main, metrics; guarded by conns_mu
  uint64_t next_conn_id = 0;                           // guarded by conns_mu
  bool stopping_locked = false;                        // guarded by conns_mu
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
  uint16_t bound_metrics_port = 0;

  net::io_context ioc;
  net::strand<net::io_context::executor_type> control{net::make_strand(ioc)};
  std::vector<std::unique_ptr<Listener>> listeners;
  std::optional<net::signal_set> signals;
  net::steady_timer grace_timer{control};
  // Keeps the worker threads in the io_context from start() until shutdown has closed the
  // listeners. Without it a shutdown requested before the first accept was posted could find
  // the workers gone (nothing to wait for), its close never ran, and connections waiting in
  // the kernel's accept queue were neither served nor closed.
  std::optional<net::executor_work_guard<net::io_context::executor_type>> running;
  // Runs heavy routes' handlers; declared after the io_context, so destroyed before it: the
  // connections its pending work holds reach back into the io_context and the members above.
  std::optional<net::thread_pool> heavy_pool;

  Status init(ServerConfig cfg, std::vector<Route> user_routes, MetricsRegistry* registry);
  Result<uint16_t> bind(const tcp::endpoint& ep, bool is_metrics);
  void do_accept(Listener& l);
  void on_accept(Listener& l, error_code ec, tcp::socket socket);
  void run_worker();
  void begin_shutdown(std::chrono::milliseconds grace);
  void wait_for_signal(std::chrono::milliseconds grace);

  // Connection registry.
  std::optional<uint64_t> add_connection(const std::shared_ptr<ConnectionBase>& c,
                                         bool metrics_listener);
  void remove_connection(uint64_t id);

  Admission admit(const RouteTable& table, HttpRequest& req);
  HttpResponse call(const Route& route, const HttpRequest& req);
  std::string next_request_id() {
    return fmt::format("{:016x}{:08x}", request_id_nonce,
                       request_counter.fetch_add(1, std::memory_order_relaxed) + 1);
  }
  void record(std::string_view route, int status, std::string_view outcome, double seconds);
};

// ---------------------------------------------------------------------------------------------
// One connection: TLS handshake, then request after request on its strand.

namespace {

template <class Stream>
class Connection final : public ConnectionBase,
                         public std::enable_shared_from_this<Connection<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  Connection(HttpServer::Impl& server, tcp::socket&& socket, const RouteTable& table,
             std::shared_ptr<ssl::context> tls_ctx)
      : server_(server),
        table_(table),
        tls_ctx_(std::move(tls_ctx)),
        stream_(make_stream(std::move(socket))) {
    error_code ec;
    auto ep = lowest().socket().remote_endpoint(ec);
    if (!ec) {
      net::ip::address a = ep.address();
      if (a.is_v6() && a.to_v6().is_v4_mapped()) {
        a = net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6());
      }
      remote_ = a.is_v6() ? fmt::format("[{}]:{}", a.to_string(), ep.port())
                          : fmt::format("{}:{}", a.to_string(), ep.port());
      peer_is_loopback_ = a.is_loopback();
    }
  }

  ~Connection() override {
    release_body_charge();
    if (id_) server_.remove_connection(*id_);
  }

  void set_id(uint64_t id) { id_ = id; }
  auto executor() { return lowest().get_executor(); }

  void start() {
    if constexpr (kTls) {
      state_ = State::kHandshake;
      lowest().expires_after(cfg().header_timeout);
      stream_.async_handshake(
          ssl::stream_base::server,
          [self = this->shared_from_this()](error_code ec) { self->on_handshake(ec); });
    } else {
      read_next();
    }
  }

  void notify_stopping() override {
    net::post(lowest().get_executor(), [self = this->shared_from_this()] {
      if (self->state_ == State::kHandshake || self->state_ == State::kIdle) self->close_now();
    });
  }

  void force_close() override {
    net::post(lowest().get_executor(), [self = this->shared_from_this()] { self->close_now(); });
  }

 private:
  enum class State { kHandshake, kIdle, kReading, kHandling, kWriting, kClosing };
  // Bytes asked for per read while waiting for a request header; whatever of the body arrives
  // with it is taken from the buffer, the rest is read straight into body_.
  static constexpr size_t kReadChunk = 16384;
  // Capacity of the body string any connection keeps between requests (a one-template
  // ExtenderArgs is ~12 KB); larger ones are kept within the server's kKeptLargeBodies.
  static constexpr size_t kKeptBodyCapacity = size_t(64) << 10;

  Stream make_stream(tcp::socket&& socket) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *tls_ctx_);
    } else {
      return Stream(std::move(socket));
    }
  }

  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }
  const ServerConfig& cfg() const { return server_.config; }
  spdlog::logger& log() { return *server_.log; }

  void on_handshake(error_code ec) {
    if (ec) {
      server_.handshake_failures->inc();
      log().debug("tls handshake from {} failed: {}", remote_, ec.message());
      return close_now();
    }
    if constexpr (kTls) identities_ = peer_identities(stream_.native_handle());
    read_next();
  }

  // Waits for the first byte of the next request under the idle timeout (the header timeout
  // for a fresh connection), so that header and idle limits stay separate.
  void read_next() {
    if (server_.stopping.load()) return close_now();
    parser_.emplace();
    direct_body_ = false;
    parser_->body_limit(cfg().max_body_bytes);
    parser_->header_limit(
        static_cast<uint32_t>(std::min<size_t>(cfg().max_header_bytes, UINT32_MAX)));
    continue_sent_ = false;
    if (buffer_.size() > 0) return read_header();
    state_ = State::kIdle;
    lowest().expires_after(first_request_ ? cfg().header_timeout : cfg().idle_timeout);
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = this->shared_from_this()](error_code ec, size_t n) {
                              if (ec) return self->close_now();
                              self->buffer_.commit(n);
                              self->read_header();
                            });
  }

  void read_header() {
    state_ = State::kReading;
    first_request_ = false;
    started_ = Clock::now();
    lowest().expires_after(cfg().header_timeout);
    parse_header();
  }

  // Feeds the buffered bytes to the parser (which stops at the end of the header and enforces
  // the header limit, and the body limit against Content-Length); reads more while the header
  // is incomplete. Replaces http::async_read_header, whose errors are the same except for the
  // end of input (eof here, end_of_stream/partial_message there): all of them just close.
  void parse_header() {
    error_code ec;
    buffer_.consume(parser_->put(buffer_.data(), ec));
    if (ec != http::error::need_more) return on_header(ec);
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = this->shared_from_this()](error_code ec, size_t n) {
                              if (ec) return self->on_read_error(ec);
                              self->buffer_.commit(n);
                              self->parse_header();
                            });
  }

  void on_header(error_code ec) {
    if (ec) return on_read_error(ec);
    auto& msg = parser_->get();
    // RFC 9112 §6.3: a request whose transfer coding does not end in chunked has no reliable
    // length; framing it by Content-Length would let a second request be smuggled in its body.
    if (msg.count(http::field::transfer_encoding) > 0 && !parser_->chunked()) {
      return send_error(400, "invalid request: Transfer-Encoding must end with chunked");
    }
    if (msg.version() >= 11 && msg.count(http::field::host) == 0) {  // RFC 9112 §3.2
      return send_error(400, "invalid request: an HTTP/1.1 request needs a Host header");
    }
    if (parser_->is_done()) return handle_request();
    if (iequals(to_sv(msg[http::field::expect]), "100-continue")) {
      continue_sent_ = true;
      continue_res_ = {};
      continue_res_.version(11);
      continue_res_.result(http::status::continue_);
      lowest().expires_after(cfg().body_timeout);
      return http::async_write(stream_, continue_res_,
                               [self = this->shared_from_this()](error_code ec, size_t) {
                                 if (ec) return self->close_now();
                                 self->read_body();
                               });
    }
    read_body();
  }

  void read_body() {
    lowest().expires_after(cfg().body_timeout);
    if (parser_->chunked() || !parser_->content_length()) {
      parser_->eager(true);
      return read_chunked_body();
    }
    // Content-Length (already checked against the body limit by the parser): the bytes that
    // came with the header are copied, the rest is read in as few reads as the kernel allows
    // into the connection's body string, never past the end of this request (pipelining).
    const size_t length = *parser_->content_length();
    const size_t buffered = std::min(length, buffer_.size());
    direct_body_ = true;
    release_body_charge();  // the storage is in use now, not kept
    body_.reserve(length + kBodyPadding);
    body_.resize(length);  // fills only beyond the previous request's size
    std::memcpy(body_.data(), buffer_.data().data(), buffered);
    buffer_.consume(buffered);
    if (buffered == length) return handle_request();
    net::async_read(stream_, net::buffer(body_.data() + buffered, length - buffered),
                    TransferAllAtOnce{}, [self = this->shared_from_this()](error_code ec, size_t) {
                      if (ec) return self->on_read_error(ec);
                      self->handle_request();
                    });
  }

  // A chunked body, fed to the parser as it arrives. The parser takes chunk data whole, so
  // what it leaves unread is a chunk line or trailer waiting for its CRLF: one that holds a
  // bare LF never gets it (Beast would wait out the body timeout), so it is refused at once
  // (RFC 9112 §7.1), and such lines are bounded like a header.
  void read_chunked_body() {
    if (buffer_.size() > 0) {
      error_code ec;
      buffer_.consume(parser_->put(buffer_.data(), ec));
      if (ec && ec != http::error::need_more) return on_read_error(ec);
      if (parser_->is_done()) return handle_request();
      const std::string_view pending(static_cast<const char*>(buffer_.data().data()),
                                     buffer_.size());
      for (size_t lf = pending.find('\n'); lf != std::string_view::npos;
           lf = pending.find('\n', lf + 1)) {
        if (lf == 0 || pending[lf - 1] != '\r') {
          return send_error(400, "invalid request: malformed HTTP: a chunk line ends without CR");
        }
      }
      if (pending.size() > cfg().max_header_bytes) {
        return send_error(400, "invalid request: malformed HTTP: chunk line too long");
      }
    }
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = this->shared_from_this()](error_code ec, size_t n) {
                              if (ec) return self->on_read_error(ec);
                              self->buffer_.commit(n);
                              self->read_chunked_body();
                            });
  }

  void on_read_error(error_code ec) {
    if (ec == http::error::body_limit) {
      return send_error(
          413, fmt::format("invalid request: body exceeds {} bytes", cfg().max_body_bytes));
    }
    if (ec == http::error::header_limit) {
      return send_error(431, "invalid request: request header too large");
    }
    if (ec.category() ==
            http::make_error_code(http::error::end_of_stream).category() &&  // http parse errors
        ec != http::error::end_of_stream &&
        ec != http::error::partial_message && ec != http::error::need_more &&
        ec != http::error::need_buffer) {
      return send_error(400, fmt::format("invalid request: malformed HTTP: {}", ec.message()));
    }
    // Timeouts, the peer going away, and cancellation by shutdown just close.
    if (ec == beast::error::timeout) log().debug("connection {}: {} timed out", remote_, phase());
    close_now();
  }

  std::string_view phase() const {
    switch (state_) {
      case State::kHandshake:
        return "tls handshake";
      case State::kIdle:
        return "idle keep-alive";
      case State::kReading:
        return parser_ && parser_->is_header_done() ? "body read" : "header read";
      default:
        return "write";
    }
  }

  // A response to a request that could not be read completely: the rest of the input is
  // discarded, never buffered, and the connection is closed after the response.
  void send_error(int status, std::string_view message) {
    HttpResponse res = HttpResponse::error(status, message);
    std::string_view path, method;
    std::string request_id;
    if (parser_) {
      // The request line and the fields read before an error are in the message even when
      // the header was refused (a Content-Length over the limit is refused at its end).
      const auto& msg = parser_->get();
      std::string_view target = to_sv(msg.target());
      path = target.substr(0, target.find('?'));
      method = to_sv(msg.method_string());
      std::string_view rid = to_sv(msg["X-Request-Id"]);
      if (valid_request_id(rid)) request_id = rid;
      if (request_id.empty() && !parser_->is_header_done()) request_id = raw_request_id();
    }
    if (request_id.empty()) request_id = server_.next_request_id();
    send(std::move(res), table_.label_for(path), method, path, request_id, "", false, 11, true);
  }

  // X-Request-Id from the buffered bytes of a header the parser refused before it stored
  // that field (too large, or a malformed line before it); empty when none is whole there.
  std::string raw_request_id() const {
    std::string_view raw(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    raw = raw.substr(0, std::min(raw.size(), cfg().max_header_bytes));
    if (size_t end = raw.find("\r\n\r\n"); end != std::string_view::npos) {
      raw = raw.substr(0, end + 2);
    }
    constexpr std::string_view kName = "x-request-id:";
    for (size_t lf = raw.find('\n'); lf != std::string_view::npos; lf = raw.find('\n', lf + 1)) {
      std::string_view line = raw.substr(lf + 1);
      const size_t end = line.find_first_of("\r\n");
      if (end == std::string_view::npos || !iequals(line.substr(0, kName.size()), kName)) continue;
      std::string_view value = line.substr(kName.size(), end - kName.size());
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
        value.remove_prefix(1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
        value.remove_suffix(1);
      if (valid_request_id(value)) return std::string(value);
    }
    return {};
  }

  void handle_request() {
    state_ = State::kHandling;
    auto& msg = parser_->get();
    HttpRequest req;
    req.method = to_sv(msg.method_string());
    std::string_view target = to_sv(msg.target());
    auto q = target.find('?');
    req.target = target.substr(0, q);
    if (q != std::string_view::npos) req.query = target.substr(q + 1);
    req.content_type = to_sv(msg[http::field::content_type]);
    req.headers.reserve(std::distance(msg.begin(), msg.end()));
    for (const auto& f : msg) req.headers.emplace_back(to_sv(f.name_string()), to_sv(f.value()));
    std::string_view rid = to_sv(msg["X-Request-Id"]);
    req.request_id = valid_request_id(rid) ? std::string(rid) : server_.next_request_id();
    req.client_identities = identities_;
    if (!identities_.empty()) req.client_identity = identities_.front();
    req.remote_address = remote_;
    req.peer_is_loopback = peer_is_loopback_;
    req.body = direct_body_ ? std::move(body_) : std::move(msg.body());
    direct_body_ = false;
    req.body.reserve(req.body.size() + kBodyPadding);  // a chunked body: copied once here
    req.abandoned = &server_.abandoned;
    const bool keep_alive = msg.keep_alive();
    const unsigned version = msg.version();

    auto admission = server_.admit(table_, req);
    group_slot_ = std::move(admission.group_slot);
    heavy_slot_ = std::move(admission.heavy_slot);
    if (admission.route == nullptr) {
      return answer(std::move(req), std::move(admission.response), admission.route_label,
                    keep_alive, version);
    }
    if (!admission.route->heavy) {
      HttpResponse res = server_.call(*admission.route, req);
      return answer(std::move(req), std::move(res), admission.route_label, keep_alive, version);
    }
    // A compute thread runs the handler; this connection's strand is free meanwhile (the
    // grace period can close it), and the work guard keeps the I/O threads up for the answer.
    net::post(*server_.heavy_pool,
              [self = this->shared_from_this(), work = net::make_work_guard(server_.ioc),
               route = admission.route, label = admission.route_label, keep_alive, version,
               req = std::move(req)]() mutable {
                HttpResponse res = self->server_.call(*route, req);
                auto ex = self->executor();
                net::post(ex, [self = std::move(self), req = std::move(req), res = std::move(res),
                               label, keep_alive, version]() mutable {
                  self->answer(std::move(req), std::move(res), label, keep_alive, version);
                });
              });
  }

  void answer(HttpRequest req, HttpResponse res, std::string_view route, bool keep_alive,
              unsigned version) {
    in_body_ = std::move(req.body);  // the response may point into it
    if (closed_ || req.is_abandoned()) {
      // Too late (the grace period is over): close, never send a partial or stale answer.
      release_slots();
      return close_now();
    }
    send(std::move(res), route, req.method, req.target, req.request_id, req.client_identity,
         keep_alive, version, false);
  }

  void release_slots() {
    group_slot_.release();
    heavy_slot_.release();
  }

  void send(HttpResponse r, std::string_view route, std::string_view method, std::string_view path,
            const std::string& request_id, std::string_view identity, bool keep_alive,
            unsigned version, bool unread_input) {
    bool keep = keep_alive && !unread_input && !server_.stopping.load();
    size_t body_size = 0;
    try {
      body_size = checked_body_size(r);
      write_head(r.status, version == 10 ? 10 : 11, r.content_type, r.headers, request_id, keep,
                 body_size, path);
      out_body_ = std::move(r.body);
      out_pieces_ = std::move(r.pieces);
    } catch (const std::exception& e) {
      r.status = 500;
      r.outcome.clear();
      out_body_ = HttpResponse::error(500, fmt::format("internal: {}", e.what())).body;
      out_pieces_.clear();
      body_size = out_body_.size();
      write_head(500, 11, "application/json", {}, {}, keep, body_size, path);
    }

    // The answer to HEAD is the head GET would send, Content-Length included, and no body
    // (RFC 9110 §9.3.2), whatever its status.
    const bool head_only = method == "HEAD";
    double seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    std::string_view outcome = r.outcome.empty() ? outcome_of(r.status) : r.outcome;
    server_.record(route, r.status, outcome, seconds);
    if (log().should_log(spdlog::level::debug)) {
      hamisim::log::write(log(), spdlog::level::debug, "http request",
                          {{"id", request_id},
                           {"method", method},
                           {"path", path},
                           {"status", r.status},
                           {"outcome", outcome},
                           {"duration_us", static_cast<int64_t>(seconds * 1e6)},
                           {"bytes_out", head_only ? size_t{0} : body_size},
                           {"client", identity.empty() ? std::string_view("-") : identity},
                           {"remote", remote_}},
                          std::source_location::current());
    }

    state_ = State::kWriting;
    lowest().expires_after(cfg().body_timeout);
    // Head and body in one gathered write; the body is not copied.
    out_buffers_.clear();
    out_buffers_.push_back(net::buffer(head_));
    if (head_only) {
      // the head alone
    } else if (out_pieces_.empty()) {
      out_buffers_.push_back(net::buffer(out_body_));
    } else {
      for (const HttpResponse::Piece& p : out_pieces_) {
        const std::string& of = p.of_request ? in_body_ : out_body_;
        // No empty buffers: over TLS an empty buffer first in line ends the write (see below).
        if (p.size > 0) out_buffers_.push_back(net::buffer(of.data() + p.offset, p.size));
      }
    }
    // The answer is complete: the request stops counting against the limits now, before the
    // client can have it and send its next request.
    const bool heavy = heavy_slot_.acquired();
    release_slots();
    auto written = [self = this->shared_from_this(), keep, heavy](error_code ec, size_t) {
      std::string().swap(self->out_body_);
      self->out_pieces_.clear();
      if (heavy) {
        // Its request and answer (megabytes) go back to the system too, not to the next
        // keep-alive request.
        std::string().swap(self->in_body_);
        return_free_memory();
      }
      self->keep_body_storage(std::exchange(self->in_body_, std::string()));
      if (ec) return self->close_now();
      if (keep) return self->read_next();
      self->linger_close();
    };
    // A buffer sequence that skips the buffers already written: with TLS, asio's fixed-size
    // sequences pass an empty first buffer once the head is written, which Beast's flat_stream
    // (inside ssl_stream) turns into a zero-byte write that ends the operation unsent.
    net::async_write(stream_, out_buffers_, TransferAllAtOnce{}, std::move(written));
  }

  // The size of the body `r` sends; throws when a piece lies outside its text.
  size_t checked_body_size(const HttpResponse& r) const {
    if (r.pieces.empty()) return r.body.size();
    size_t total = 0;
    for (const HttpResponse::Piece& p : r.pieces) {
      const size_t of = p.of_request ? in_body_.size() : r.body.size();
      if (p.offset > of || p.size > of - p.offset) {
        throw std::out_of_range("response piece out of range");
      }
      total += p.size;
    }
    return total;
  }

  // Keeps `storage` for the next request's body, so that keep-alive requests neither allocate
  // nor zero-fill it again: up to kKeptBodyCapacity on any connection, more while all
  // connections together keep at most the server's kKeptLargeBodies of such storage.
  void keep_body_storage(std::string storage) {
    const size_t capacity = storage.capacity();
    if (capacity <= body_.capacity()) return;  // `body_` is as good (a chunked body came)
    release_body_charge();
    body_ = std::string();
    if (capacity > kKeptBodyCapacity) {
      if (!server_.charge_kept_body(capacity)) return;
      body_charge_ = capacity;
    }
    body_ = std::move(storage);
  }

  void release_body_charge() {
    if (body_charge_ == 0) return;
    server_.kept_large_bodies.fetch_sub(body_charge_);
    body_charge_ = 0;
  }

  // The status line and header fields into head_, byte for byte what Beast's serializer wrote
  // for the http::response<string_body> this server used to build, without its per-field
  // allocations and buffer-sequence machinery: the status line with Beast's reason phrase;
  // Content-Type; the route's headers, a name set again replacing the earlier field, values
  // trimmed of spaces and tabs; X-Request-Id (none when empty); Connection as Beast's
  // keep_alive() set it; Content-Length. Throws where Beast threw: a status over 999, a field
  // name or value over 65533 bytes, a body on a 1xx/204/304 response (Beast's throw came
  // after the caller's catch and dropped the connection; it is a 500 now). Content-Length,
  // Connection and Transfer-Encoding belong to the server (http_server.h): a route's own are
  // dropped.
  void write_head(int status, unsigned version, std::string_view content_type,
                  const HeaderList& headers, std::string_view request_id, bool keep,
                  size_t body_size, std::string_view path) {
    const auto code = static_cast<unsigned>(status);
    if (code > 999) throw std::invalid_argument("invalid status-code");
    if (body_size > 0 && (code / 100 == 1 || code == 204 || code == 304)) {
      throw std::invalid_argument("invalid response body");
    }
    fields_.clear();
    auto set = [&](std::string_view name, std::string_view value) {
      if (name.size() + 2 > UINT16_MAX) throw std::length_error("field name too large");
      if (value.size() + 2 > UINT16_MAX) throw std::length_error("field value too large");
      auto ows = [](char c) { return c == ' ' || c == '\t'; };
      while (!value.empty() && ows(value.front())) value.remove_prefix(1);
      while (!value.empty() && ows(value.back())) value.remove_suffix(1);
      std::erase_if(fields_, [&](const auto& f) { return iequals(f.first, name); });
      fields_.emplace_back(name, value);
    };
    if (!content_type.empty() && valid_header_text(content_type)) {
      set("Content-Type", content_type);
    }
    for (const auto& [k, v] : headers) {
      if (k.empty() || !valid_header_text(k) || !valid_header_text(v)) {
        log().warn("dropping an invalid response header on {}", path);
        continue;
      }
      if (iequals(k, "Content-Length") || iequals(k, "Connection") ||
          iequals(k, "Transfer-Encoding")) {
        continue;
      }
      set(k, v);
    }
    if (!request_id.empty()) set("X-Request-Id", request_id);
    if (version == 11 && !keep) set("Connection", "close");
    if (version == 10 && keep) set("Connection", "keep-alive");
    char length[24];
    auto [length_end, length_ec] = std::to_chars(length, length + sizeof length, body_size);
    set("Content-Length", std::string_view(length, size_t(length_end - length)));

    std::string_view reason = to_sv(http::obsolete_reason(static_cast<http::status>(code)));
    size_t size = 13 + reason.size() + 2 + 2;
    for (const auto& [name, value] : fields_) size += name.size() + 2 + value.size() + 2;
    head_.clear();
    head_.reserve(size);
    head_ += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
    head_ += char('0' + code / 100);
    head_ += char('0' + code / 10 % 10);
    head_ += char('0' + code % 10);
    head_ += ' ';
    head_ += reason;
    head_ += "\r\n";
    for (const auto& [name, value] : fields_) {
      head_ += name;
      head_ += ": ";
      head_ += value;
      head_ += "\r\n";
    }
    head_ += "\r\n";
  }

  // Closing right after a response while the client may still be sending would make the
  // kernel answer with RST, which can destroy the response before the client reads it. So
  // half-close, discard what still arrives for a short while, then close.
  void linger_close() {
    state_ = State::kClosing;
    error_code ec;
    lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return close_now();
    lowest().expires_after(
        std::min<std::chrono::milliseconds>(cfg().body_timeout, std::chrono::seconds(2)));
    drain();
  }

  void drain() {
    if (!drain_buf_) drain_buf_ = std::make_unique<char[]>(kReadChunk);
    lowest().async_read_some(net::buffer(drain_buf_.get(), kReadChunk),
                             [self = this->shared_from_this()](error_code ec, size_t) {
                               if (ec) return self->close_now();
                               self->drain();
                             });
  }

  void close_now() {
    if (closed_) return;
    closed_ = true;
    state_ = State::kClosing;
    error_code ec;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    lowest().close();
  }

  HttpServer::Impl& server_;
  const RouteTable& table_;
  std::shared_ptr<ssl::context> tls_ctx_;  // outlives the stream that uses it
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string body_;        // a Content-Length body, read past the parser (storage kept between)
  size_t body_charge_ = 0;  // body_'s capacity charged to the server's kKeptLargeBodies
  bool direct_body_ = false;
  std::string in_body_;   // the body of the request being answered, until written
  std::string head_;      // response status line and fields
  std::string out_body_;  // response body being written
  std::vector<HttpResponse::Piece> out_pieces_;  // and its pieces, when gathered
  std::vector<net::const_buffer> out_buffers_;
  std::vector<std::pair<std::string_view, std::string_view>> fields_;  // write_head's scratch
  http::response<http::empty_body> continue_res_;
  std::unique_ptr<char[]> drain_buf_;
  std::vector<std::string> identities_;
  std::string remote_;
  bool peer_is_loopback_ = false;
  std::optional<uint64_t> id_;
  InflightSlot group_slot_, heavy_slot_;  // of the request being answered
  Clock::time_point started_ = Clock::now();
  State state_ = State::kIdle;
  bool first_request_ = true;
  bool continue_sent_ = false;
  bool closed_ = false;
};

using PlainConnection = Connection<beast::tcp_stream>;
using TlsConnection = Connection<beast::ssl_stream<beast::tcp_stream>>;

}  // namespace

// ---------------------------------------------------------------------------------------------
// HttpServer::Impl

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
  if (!tls_enabled && !config.insecure_http && !ep->address().is_loopback()) {
    return make_error(fmt::format(
        "refusing plain HTTP on non-loopback address {}: set --tls-cert and --tls-key, or "
        "--insecure-http",
        config.listen));
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

  auto port = bind(ep.value(), false);
  if (!port) return port.error();
  bound_port = port.value();
  if (metrics_ep) {
    auto mport = bind(*metrics_ep, true);
    if (!mport) return mport.error();
    bound_metrics_port = mport.value();
  }
  return ok_status();
}

Result<uint16_t> HttpServer::Impl::bind(const tcp::endpoint& ep, bool is_metrics) {
  auto l = std::make_unique<Listener>(control, is_metrics);
  error_code ec;
  auto fail = [&](std::string_view what) {
    return make_error(fmt::format("listen on {}:{} ({}): {}: {}", ep.address().to_string(),
                                  ep.port(), is_metrics ? "--metrics-listen" : "--listen", what,
                                  ec.message()));
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

void HttpServer::Impl::do_accept(Listener& l) {
  l.acceptor.async_accept(net::make_strand(ioc), [this, &l](error_code ec, tcp::socket socket) {
    on_accept(l, ec, std::move(socket));
  });
}

void HttpServer::Impl::on_accept(Listener& l, error_code ec, tcp::socket socket) {
  if (stopping.load() || !l.acceptor.is_open()) return;
  if (ec) {
    // Out of descriptors and the like: back off instead of spinning.
    log->warn("accept failed: {}", ec.message());
    l.retry.expires_after(std::chrono::milliseconds(100));
    l.retry.async_wait([this, &l](error_code wec) {
      if (!wec && !stopping.load()) do_accept(l);
    });
    return;
  }
  error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  auto launch = [this, &l](auto conn) {
    auto id = add_connection(conn, l.metrics);
    if (!id) return;  // shutting down or over the connection limit: closed on return
    conn->set_id(*id);
    net::post(conn->executor(), [conn] { conn->start(); });
  };
  if (l.metrics) {
    launch(std::make_shared<PlainConnection>(*this, std::move(socket), metrics_routes, nullptr));
  } else if (tls) {
    launch(std::make_shared<TlsConnection>(*this, std::move(socket), routes, tls->current()));
  } else {
    launch(std::make_shared<PlainConnection>(*this, std::move(socket), routes, nullptr));
  }
  do_accept(l);
}

std::optional<uint64_t> HttpServer::Impl::add_connection(const std::shared_ptr<ConnectionBase>& c,
                                                         bool metrics_listener) {
  std::lock_guard lock(conns_mu);
  if (stopping_locked) return std::nullopt;
  const int limit = metrics_listener ? config.max_metrics_connections : config.max_connections;
  size_t& open = open_per_listener[metrics_listener ? 1 : 0];
  if (limit > 0 && open >= size_t(limit)) {
    log->warn("connection limit {} of the {} listener reached, dropping a new connection", limit,
              metrics_listener ? "metrics" : "main");
    return std::nullopt;
  }
  uint64_t id = ++next_conn_id;
  conns.emplace(id, OpenConnection{c, metrics_listener});
  ++open;
  open_connections->add(1);
  return id;
}

void HttpServer::Impl::remove_connection(uint64_t id) {
  bool last = false;
  {
    std::lock_guard lock(conns_mu);
    auto it = conns.find(id);
    if (it == conns.end()) return;
    --open_per_listener[it->second.metrics_listener ? 1 : 0];
    conns.erase(it);
    last = stopping_locked && conns.empty();
  }
  open_connections->sub(1);
  if (last && !threads_done.load()) {
    net::post(control, [this] { grace_timer.cancel(); });
  }
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
      l->acceptor.close(ec);
      l->retry.cancel();
    }
    if (signals) signals->cancel(ec);
    running.reset();
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

void HttpServer::Impl::run_worker() {
  for (;;) {
    try {
      ioc.run();
      return;
    } catch (const std::exception& e) {
      // Nothing we post throws; if something does, keep the worker alive.
      log->error("http worker: unexpected exception: {}", e.what());
    } catch (...) {
      log->error("http worker: unexpected exception");
    }
  }
}

HttpServer::Impl::Admission HttpServer::Impl::admit(const RouteTable& table, HttpRequest& req) {
  Admission a;
  auto it = table.by_path.find(req.target);
  if (it == table.by_path.end()) {
    a.response =
        HttpResponse::error(404, fmt::format("invalid request: no route for {}", req.target));
    a.route_label = "other";
    return a;
  }
  a.route_label = it->first;
  const Route* route = nullptr;
  for (size_t i : it->second) {
    if (table.routes[i].method == req.method) route = &table.routes[i];
  }
  if (route == nullptr && req.method == "HEAD") {
    // Answered as GET; the connection sends the head only (Connection::send).
    for (size_t i : it->second) {
      if (table.routes[i].method == "GET") route = &table.routes[i];
    }
  }
  if (route == nullptr) {
    a.response = HttpResponse::error(
        405, fmt::format("invalid request: method {} not allowed on {}", req.method, req.target));
    a.response.headers.emplace_back("Allow", table.allow_header.find(req.target)->second);
    return a;
  }

  size_t g = size_t(route->group);
  if (route->group == AuthGroup::kLive && config.live_routes_loopback_or_certificate &&
      !req.peer_is_loopback && req.client_identities.empty()) {
    a.response = HttpResponse::error(
        403, fmt::format("forbidden: {} acts on the cluster and answers only loopback peers (the "
                         "kube-scheduler next to it) or clients with a verified certificate "
                         "(--client-ca); {} has neither",
                         req.target, req.remote_address));
    return a;
  }
  if (route->group != AuthGroup::kNone && allow[g] != nullptr && !allow[g]->empty()) {
    const std::string* match = nullptr;
    for (const auto& id : req.client_identities) {
      if (std::find(allow[g]->begin(), allow[g]->end(), id) != allow[g]->end()) {
        match = &id;
        break;
      }
    }
    if (match == nullptr) {
      std::string who = req.client_identity.empty() ? "(anonymous)" : req.client_identity;
      a.response = HttpResponse::error(
          403, fmt::format("forbidden: client {} is not allowed to call {} routes", who,
                           to_string(route->group)));
      return a;
    }
    req.client_identity = *match;
  }

  auto overloaded = [&](int limit, std::string_view what) {
    a.response = HttpResponse::error(
        429, fmt::format("overloaded: more than {} {} requests in flight", limit, what));
    a.response.headers.emplace_back("Retry-After", "1");
    a.group_slot.release();
    return std::move(a);
  };
  if (route->group != AuthGroup::kNone) {
    a.group_slot = InflightSlot(inflight[g], inflight_limit[g], inflight_gauge[g]);
    if (!a.group_slot.acquired()) return overloaded(inflight_limit[g], to_string(route->group));
  }
  if (route->heavy) {
    a.heavy_slot = InflightSlot(inflight_heavy, config.max_inflight_heavy, nullptr);
    if (!a.heavy_slot.acquired()) return overloaded(config.max_inflight_heavy, "heavy (plan)");
  }
  a.route = route;
  return a;
}

HttpResponse HttpServer::Impl::call(const Route& route, const HttpRequest& req) {
  try {
    return route.handler(req);
  } catch (const std::exception& e) {
    log->error("handler {} {} (request {}) threw: {}", req.method, req.target, req.request_id,
               e.what());
    return HttpResponse::error(500, fmt::format("internal: {}", e.what()));
  } catch (...) {
    log->error("handler {} {} (request {}) threw a non-standard exception", req.method, req.target,
               req.request_id);
    return HttpResponse::error(500, "internal: unknown exception");
  }
}

void HttpServer::Impl::record(std::string_view route, int status, std::string_view outcome,
                              double seconds) {
  char code[12];
  auto [end, ec] = std::to_chars(code, code + sizeof code, status);
  std::string_view code_sv(code, end - code);
  requests_total->labels({route, code_sv, outcome}).inc();
  request_duration->labels({route, outcome}).observe(seconds);
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
uint16_t HttpServer::metrics_port() const {
  return impl_->bound_metrics_port;
}
MetricsRegistry& HttpServer::metrics() {
  return *impl_->metrics;
}

void HttpServer::start() {
  if (impl_->started.exchange(true)) return;
  impl_->running.emplace(impl_->ioc.get_executor());
  net::post(impl_->control, [impl = impl_.get()] {
    if (impl->stopping.load()) return;
    for (auto& l : impl->listeners) impl->do_accept(*l);
  });
  int n = impl_->config.threads > 0 ? impl_->config.threads
                                    : int(std::max(1u, std::thread::hardware_concurrency()));
  impl_->heavy_pool.emplace(size_t(std::max(1, impl_->config.heavy_threads)));
  impl_->threads.reserve(n);
  for (int i = 0; i < n; ++i)
    impl_->threads.emplace_back([impl = impl_.get()] { impl->run_worker(); });
}

void HttpServer::request_shutdown(std::chrono::milliseconds grace) {
  impl_->begin_shutdown(grace);
}

void HttpServer::wait() {
  std::lock_guard lock(impl_->wait_mu);
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
  // Heavy work still queued or running was abandoned with the connections: the I/O threads
  // waited for each answer (work guards), so the pool is idle or finishing here.
  if (impl_->heavy_pool) impl_->heavy_pool->join();
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
