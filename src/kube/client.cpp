#include "kube/client.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cmath>
#include <fstream>
#include <mutex>
#include <optional>
#include <vector>

#include "kube/exec_credential.h"
#include "kube/rate_limiter.h"
#include "model/decode.h"

namespace hamisim::kube {

namespace od = simdjson::ondemand;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;
using Clock = std::chrono::steady_clock;
using state::ApiCode;
using state::ApiError;
using state::ApiResult;
using state::ApiStatus;

// ---- helpers ----------------------------------------------------------------------------

state::ApiCode code_for_status(int status) {
  switch (status) {
    case 404:
      return ApiCode::kNotFound;
    case 409:
      return ApiCode::kConflict;
    case 410:
      return ApiCode::kGone;
    case 400:
    case 422:
      return ApiCode::kInvalid;
    case 401:
    case 403:
      return ApiCode::kForbidden;
    case 429:
      return ApiCode::kUnavailable;
    default:
      break;
  }
  if (status >= 500 && status <= 599) return ApiCode::kUnavailable;
  return ApiCode::kOther;
}

std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int retry, double unit_random) {
  double ms = double(policy.initial.count()) * std::pow(policy.factor, std::max(retry, 0));
  ms = std::min(ms, double(policy.max_delay.count()));
  ms += ms * policy.jitter * std::clamp(unit_random, 0.0, 1.0);
  return std::chrono::milliseconds(int64_t(ms));
}

namespace {

std::string openssl_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

bool is_ip_literal(const std::string& host) {
  error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

}  // namespace

std::string url_escape(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += char(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

namespace {

// Printable, bounded excerpt of an untrusted body for an error message.
std::string excerpt(std::string_view body) {
  std::string out;
  for (char c : body.substr(0, 200)) {
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  }
  if (body.size() > 200) out += "...";
  return out;
}

struct StatusInfo {
  int code = 0;
  std::string reason;
  std::string message;
};

// A metav1.Status, leniently: missing fields stay empty.
std::optional<StatusInfo> parse_status(std::string_view json) {
  simdjson::padded_string padded(json);
  od::parser parser;
  od::document doc;
  if (parser.iterate(padded).get(doc)) return std::nullopt;
  od::object obj;
  if (doc.get_object().get(obj)) return std::nullopt;
  StatusInfo info;
  bool is_status = false;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return std::nullopt;
    od::value v;
    if (field.value().get(v)) return std::nullopt;
    if (key == "kind") {
      std::string_view kind;
      if (!v.get_string().get(kind)) is_status = kind == "Status";
    } else if (key == "code") {
      int64_t code = 0;
      if (!v.get_int64().get(code) && code >= 0 && code < 1000) info.code = int(code);
    } else if (key == "reason") {
      std::string_view s;
      if (!v.get_string().get(s)) info.reason = std::string(s.substr(0, 1000));
    } else if (key == "message") {
      std::string_view s;
      if (!v.get_string().get(s)) info.message = std::string(s.substr(0, 4000));
    }
  }
  if (!is_status && info.code == 0 && info.message.empty()) return std::nullopt;
  return info;
}

ApiError http_error(std::string_view verb, std::string_view what, int status,
                    std::string_view body) {
  std::string reason(http::obsolete_reason(static_cast<http::status>(status)));
  std::string message = std::string(verb) + " " + std::string(what) + ": " +
                        std::to_string(status) + (reason.empty() ? "" : " " + reason);
  if (auto st = parse_status(body); st && !st->message.empty()) {
    message += ": " + st->message;
  } else if (!body.empty()) {
    message += ": " + excerpt(body);
  }
  return ApiError{code_for_status(status), std::move(message)};
}

}  // namespace

RequestKind request_kind(std::string_view verb, std::string_view path) {
  path = path.substr(0, path.find('?'));
  std::vector<std::string_view> seg;
  while (!path.empty()) {
    if (path.front() == '/') {
      path.remove_prefix(1);
      continue;
    }
    const size_t slash = path.find('/');
    seg.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash);
  }
  size_t i = 0;
  if (seg.size() >= 2 && seg[0] == "api") {
    i = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    i = 3;
  }
  if (i + 2 < seg.size() && seg[i] == "namespaces") i += 2;  // namespaced: skip NS
  RequestKind out{std::string(verb), "unknown"};
  if (i > 0 && i < seg.size()) {
    out.resource = std::string(seg[i]);
    if (i + 2 < seg.size()) out.resource += "/" + std::string(seg[i + 2]);
    if (verb == "GET" && i + 1 >= seg.size()) out.verb = "LIST";
  }
  return out;
}

Result<ListMeta> list_meta(std::string_view body) {
  simdjson::padded_string padded(body);
  od::parser parser;
  od::document doc;
  auto fail = [](std::string_view where, simdjson::error_code e) {
    return make_error(std::string(where) + ": " + simdjson::error_message(e));
  };
  if (auto e = parser.iterate(padded).get(doc)) return fail("list", e);
  od::object obj;
  if (auto e = doc.get_object().get(obj)) return fail("list", e);
  ListMeta meta;
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return fail("list", e);
    if (key != "metadata") continue;
    od::object m;
    if (auto e = field.value().get_object().get(m)) return fail("metadata", e);
    for (auto mf : m) {
      std::string_view mkey;
      if (auto e = mf.unescaped_key().get(mkey)) return fail("metadata", e);
      if (mkey == "resourceVersion" || mkey == "continue") {
        std::string_view s;
        if (auto e = mf.value().get_string().get(s))
          return fail("metadata." + std::string(mkey), e);
        (mkey == "continue" ? meta.continue_token : meta.resource_version) = std::string(s);
      } else if (mkey == "remainingItemCount") {
        int64_t n = 0;
        if (auto e = mf.value().get_int64().get(n)) return fail("metadata.remainingItemCount", e);
        meta.remaining_item_count = n;
      }
    }
  }
  return meta;
}

Result<std::string> for_each_list_item(std::string_view body,
                                       const std::function<Status(std::string_view)>& on_item) {
  simdjson::padded_string padded(body);
  od::parser parser;
  od::document doc;
  auto fail = [](std::string_view where, simdjson::error_code e) {
    return make_error(std::string(where) + ": " + simdjson::error_message(e));
  };
  if (auto e = parser.iterate(padded).get(doc)) return fail("list", e);
  od::object obj;
  if (auto e = doc.get_object().get(obj)) return fail("list", e);
  std::string rv;
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return fail("list", e);
    od::value v;
    if (auto e = field.value().get(v)) return fail(key, e);
    if (key == "metadata") {
      od::object meta;
      if (auto e = v.get_object().get(meta)) return fail("metadata", e);
      for (auto mf : meta) {
        std::string_view mkey;
        if (auto e = mf.unescaped_key().get(mkey)) return fail("metadata", e);
        if (mkey != "resourceVersion") continue;
        std::string_view s;
        if (auto e = mf.value().get_string().get(s)) return fail("metadata.resourceVersion", e);
        rv = std::string(s);
      }
    } else if (key == "items") {
      od::json_type t;
      if (auto e = v.type().get(t)) return fail("items", e);
      if (t == od::json_type::null) continue;
      od::array arr;
      if (auto e = v.get_array().get(arr)) return fail("items", e);
      size_t i = 0;
      for (auto element : arr) {
        const std::string where = "items[" + std::to_string(i++) + "]";
        od::object item;
        if (auto e = element.get_object().get(item)) return fail(where, e);
        std::string_view raw;
        if (auto e = item.raw_json().get(raw)) return fail(where, e);
        if (Status s = on_item(raw); !s) return make_error(where + ": " + s.error().message);
      }
    }
  }
  return rv;
}

// ---- transport --------------------------------------------------------------------------

namespace {

struct Connection {
  net::io_context ioc;
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  // The exec credential whose client certificate this connection presented (null: none).
  std::shared_ptr<const ExecCredential> tls_credential;

  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *plain; }

  // Runs one asynchronous operation to completion on this thread. With `cancel`, polls it
  // and aborts the operation when it is set.
  template <class Start>
  error_code run(Start&& start, const std::atomic<bool>* cancel) {
    error_code result = net::error::would_block;
    bool done = false;
    start([&](error_code ec, auto&&...) {
      result = ec;
      done = true;
    });
    ioc.restart();
    while (!done) {
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
        lowest().cancel();
        error_code ignored;
        lowest().socket().close(ignored);
        while (!done && ioc.run_one() > 0) {
        }
        return net::error::operation_aborted;
      }
      if (cancel != nullptr) {
        ioc.run_one_for(std::chrono::milliseconds(50));
      } else if (ioc.run_one() == 0) {
        break;
      }
    }
    return result;
  }
  template <class F>
  error_code with_stream(F&& f) {
    if (tls) return f(*tls);
    return f(*plain);
  }
  void close() {
    error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().socket().close(ignored);
  }
};

bool cancelled(const std::atomic<bool>* cancel) {
  return cancel != nullptr && cancel->load(std::memory_order_relaxed);
}

}  // namespace

struct KubeClient::Impl {
  KubeConfig config;
  ServerUrl url;
  ClientOptions options;
  std::optional<ssl::context> ctx;
  std::string verify_name, sni;
  bool verify = true;
  std::unique_ptr<TokenBucket> limiter;

  mutable std::mutex mu;
  std::vector<std::unique_ptr<Connection>> idle;
  ClientStats stats;

  std::mutex token_mu;
  std::string token;
  Clock::time_point token_read{};
  bool token_loaded = false;

  std::unique_ptr<ExecAuthenticator> exec;  // when the user has an exec plugin and no token
  std::optional<ProxyUrl> proxy;
  std::string target_prefix;  // "http://host:port" for absolute-form requests via a proxy

  using Credential = std::shared_ptr<const ExecCredential>;
  // The exec credential for the next request (null without a plugin).
  Result<Credential> credential();
  // A credential holding a client certificate, which connections must present.
  static const Credential& cert_of(const Credential& c) {
    static const Credential kNone;
    return c && !c->client_cert_pem.empty() ? c : kNone;
  }
  void warn(std::string_view line) const {
    if (options.log_warning) {
      options.log_warning(line);
    } else {
      spdlog::warn("{}", line);
    }
  }
  void observe(std::string_view verb, std::string_view path, int status, Clock::time_point start) {
    if (!options.observer) return;
    const RequestKind k = request_kind(verb, path);
    options.observer->request_done(k.verb, k.resource,
                                   status > 0 ? std::to_string(status) : std::string("<error>"),
                                   std::chrono::duration<double>(Clock::now() - start).count());
  }

  Result<std::unique_ptr<Connection>> connect(Clock::time_point deadline,
                                              const std::atomic<bool>* cancel,
                                              const Credential& cred);
  std::string authorization(const Credential& cred);
  template <class Req>
  void prepare(Req& req, const Credential& cred);

  struct Outcome {
    error_code ec;
    std::string stage;
    bool nothing_received = false;
    int status = 0;
    std::string body;
    bool keep_alive = false;
  };
  Outcome exchange(Connection& c, const Request& request, Clock::time_point deadline,
                   const Credential& cred);
};

Result<KubeClient::Impl::Credential> KubeClient::Impl::credential() {
  if (!exec) return Credential();
  auto c = exec->get();
  if (!c) return c.error();
  return std::move(*c);
}

std::string KubeClient::Impl::authorization(const Credential& cred) {
  if (!config.token_file.empty()) {
    std::lock_guard lock(token_mu);
    const auto now = Clock::now();
    if (!token_loaded || now - token_read >= options.token_refresh) {
      std::ifstream in(config.token_file, std::ios::binary);
      std::string content;
      if (in) {
        content.resize(64 << 10);
        in.read(content.data(), std::streamsize(content.size()));
        content.resize(size_t(in.gcount()));
        while (!content.empty() &&
               (content.back() == '\n' || content.back() == '\r' || content.back() == ' ')) {
          content.pop_back();
        }
      }
      // A failed read keeps the last good token (the file is being rotated).
      if (!content.empty() || !token_loaded) token = std::move(content);
      token_loaded = true;
      token_read = now;
    }
    if (!token.empty()) return "Bearer " + token;
  }
  if (!config.token.empty()) return "Bearer " + config.token;
  if (cred && !cred->token.empty()) return "Bearer " + cred->token;
  if (!config.username.empty()) {
    return "Basic " + encode_base64(config.username + ":" + config.password);
  }
  return {};
}

template <class Req>
void KubeClient::Impl::prepare(Req& req, const Credential& cred) {
  req.set(http::field::host, url.host_header);
  req.set(http::field::user_agent, options.user_agent);
  req.set(http::field::accept, "application/json");
  if (!url.tls && proxy && !proxy->authorization.empty()) {
    req.set(http::field::proxy_authorization, proxy->authorization);
  }
  if (std::string auth = authorization(cred); !auth.empty()) {
    req.set(http::field::authorization, auth);
  }
}

Result<std::unique_ptr<Connection>> KubeClient::Impl::connect(Clock::time_point deadline,
                                                              const std::atomic<bool>* cancel,
                                                              const Credential& cred) {
  auto c = std::make_unique<Connection>();
  {
    std::lock_guard lock(mu);
    ++stats.connections_opened;
  }
  // Through a proxy the TCP connection goes to the proxy; the server's name is never resolved
  // here (the proxy does it).
  const std::string& dial_host = proxy ? proxy->host : url.host;
  const uint16_t dial_port = proxy ? proxy->port : url.port;
  const std::string dial_name =
      proxy ? "proxy " + dial_host + ":" + std::to_string(dial_port) : url.host_header;
  std::vector<tcp::endpoint> endpoints;
  if (is_ip_literal(dial_host)) {
    endpoints.emplace_back(net::ip::make_address(dial_host), dial_port);
  } else {
    tcp::resolver resolver(c->ioc);
    tcp::resolver::results_type results;
    error_code rec = net::error::would_block;
    bool done = false;
    resolver.async_resolve(dial_host, std::to_string(dial_port),
                           [&](error_code ec, tcp::resolver::results_type r) {
                             rec = ec;
                             results = std::move(r);
                             done = true;
                           });
    while (!done && Clock::now() < deadline && !cancelled(cancel)) {
      c->ioc.run_one_for(std::chrono::milliseconds(50));
    }
    if (!done) {
      resolver.cancel();
      c->ioc.run();
      return make_error("dial tcp: lookup " + dial_host + ": timeout");
    }
    if (rec) return make_error("dial tcp: lookup " + dial_host + ": " + rec.message());
    for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  }
  if (ctx) {
    c->tls.emplace(c->ioc, *ctx);
    SSL* handle = c->tls->native_handle();
    if (!sni.empty()) SSL_set_tlsext_host_name(handle, sni.c_str());
    if (verify && !verify_name.empty()) {
      X509_VERIFY_PARAM* param = SSL_get0_param(handle);
      if (is_ip_literal(verify_name)) {
        X509_VERIFY_PARAM_set1_ip_asc(param, verify_name.c_str());
      } else {
        X509_VERIFY_PARAM_set1_host(param, verify_name.c_str(), 0);
      }
    }
    if (const Credential& with_cert = cert_of(cred)) {
      // The exec plugin's client certificate, on this connection only (it rotates).
      BIO* cert_bio = BIO_new_mem_buf(with_cert->client_cert_pem.data(),
                                      int(with_cert->client_cert_pem.size()));
      BIO* key_bio =
          BIO_new_mem_buf(with_cert->client_key_pem.data(), int(with_cert->client_key_pem.size()));
      X509* x509 = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
      EVP_PKEY* pkey = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
      const bool ok = x509 != nullptr && pkey != nullptr &&
                      SSL_use_certificate(handle, x509) == 1 &&
                      SSL_use_PrivateKey(handle, pkey) == 1 && SSL_check_private_key(handle) == 1;
      X509_free(x509);
      EVP_PKEY_free(pkey);
      BIO_free(cert_bio);
      BIO_free(key_bio);
      if (!ok) {
        return make_error("exec plugin of user \"" + exec->config().user +
                          "\": client certificate or key unusable: " + openssl_errors());
      }
      c->tls_credential = with_cert;
    }
  } else {
    c->plain.emplace(c->ioc);
  }
  c->lowest().expires_at(deadline);
  error_code ec =
      c->run([&](auto&& cb) { c->lowest().async_connect(endpoints, std::move(cb)); }, cancel);
  if (ec == beast::error::timeout) return make_error("dial tcp " + dial_name + ": i/o timeout");
  if (ec) return make_error("dial tcp " + dial_name + ": " + ec.message());
  c->lowest().socket().set_option(tcp::no_delay(true), ec);
  if (proxy && c->tls) {
    // HTTP CONNECT: the proxy opens a tunnel to the server, TLS runs inside it.
    http::request<http::empty_body> connect_req{http::verb::connect,
                                                url.host + ":" + std::to_string(url.port), 11};
    if (url.host.find(':') != std::string::npos) {
      connect_req.target("[" + url.host + "]:" + std::to_string(url.port));
    }
    connect_req.set(http::field::host, connect_req.target());
    connect_req.set(http::field::user_agent, options.user_agent);
    if (!proxy->authorization.empty()) {
      connect_req.set(http::field::proxy_authorization, proxy->authorization);
    }
    ec = c->run([&](auto&& cb) { http::async_write(c->lowest(), connect_req, std::move(cb)); },
                cancel);
    if (ec) return make_error(dial_name + ": CONNECT: " + ec.message());
    http::response_parser<http::empty_body> parser;
    parser.skip(true);  // a CONNECT response has no body
    beast::flat_buffer buf;
    ec =
        c->run([&](auto&& cb) { http::async_read_header(c->lowest(), buf, parser, std::move(cb)); },
               cancel);
    if (ec) return make_error(dial_name + ": CONNECT: " + ec.message());
    const int status = int(parser.get().result_int());
    if (status < 200 || status > 299) {
      return make_error(dial_name + ": CONNECT " + std::string(connect_req.target()) + ": " +
                        std::to_string(status) + " " + std::string(parser.get().reason()));
    }
    if (buf.size() != 0) return make_error(dial_name + ": CONNECT: data before the TLS handshake");
  }
  if (c->tls) {
    ec =
        c->run([&](auto&& cb) { c->tls->async_handshake(ssl::stream_base::client, std::move(cb)); },
               cancel);
    if (ec) {
      std::string why = ec == beast::error::timeout ? std::string("i/o timeout") : ec.message();
      const long verify_result = SSL_get_verify_result(c->tls->native_handle());
      if (verify && verify_result != X509_V_OK) {
        why += " (certificate verification: " +
               std::string(X509_verify_cert_error_string(verify_result)) + ")";
      }
      return make_error("TLS handshake with " + url.host_header + ": " + why);
    }
  }
  return c;
}

KubeClient::Impl::Outcome KubeClient::Impl::exchange(Connection& c, const Request& request,
                                                     Clock::time_point deadline,
                                                     const Credential& cred) {
  Outcome out;
  http::verb verb = http::string_to_verb(request.verb);
  http::request<http::string_body> req{verb, target_prefix + url.prefix + request.path, 11};
  prepare(req, cred);
  if (!request.body.empty() || verb == http::verb::post || verb == http::verb::patch) {
    req.set(http::field::content_type,
            request.content_type.empty() ? "application/json" : request.content_type);
    req.body() = request.body;
  }
  req.keep_alive(true);
  req.prepare_payload();
  c.lowest().expires_at(deadline);
  out.ec = c.with_stream([&](auto& s) {
    return c.run([&](auto&& cb) { http::async_write(s, req, std::move(cb)); }, request.cancel);
  });
  if (out.ec) {
    out.stage = "write";
    out.nothing_received = true;
    return out;
  }
  http::response_parser<http::string_body> parser;
  parser.body_limit(options.max_response_bytes);
  parser.header_limit(64 << 10);
  out.ec = c.with_stream([&](auto& s) {
    return c.run([&](auto&& cb) { http::async_read(s, c.buffer, parser, std::move(cb)); },
                 request.cancel);
  });
  if (out.ec) {
    out.stage = "read";
    out.nothing_received = !parser.got_some();
    return out;
  }
  auto& msg = parser.get();
  out.status = static_cast<int>(msg.result_int());
  out.body = std::move(msg.body());
  out.keep_alive = msg.keep_alive() && !parser.need_eof();
  return out;
}

KubeClient::KubeClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KubeClient::~KubeClient() = default;

Result<std::unique_ptr<KubeClient>> KubeClient::create(const KubeConfig& config,
                                                       ClientOptions options) {
  auto impl = std::make_unique<Impl>();
  auto url = parse_server_url(config.server);
  if (!url) return make_error("server: " + url.error().message);
  impl->url = std::move(*url);
  impl->config = config;
  impl->options = options;
  impl->limiter = std::make_unique<TokenBucket>(options.qps, options.burst);
  if (!config.proxy_url.empty()) {
    auto proxy = parse_proxy_url(config.proxy_url);
    if (!proxy) return make_error(config.proxy_source + ": " + proxy.error().message);
    impl->proxy = std::move(*proxy);
    if (!impl->url.tls) impl->target_prefix = "http://" + impl->url.host_header;
  }
  if (config.exec && config.token.empty() && config.token_file.empty()) {
    Impl* im = impl.get();
    ExecRunOptions run;
    run.timeout = options.exec_timeout;
    const std::string who = "exec plugin " + config.exec->command + ": ";
    impl->exec = std::make_unique<ExecAuthenticator>(
        *config.exec, run, [im, who](std::string_view line) { im->warn(who + std::string(line)); },
        [im](std::string_view status) {
          {
            std::lock_guard lock(im->mu);
            ++im->stats.exec_plugin_runs;
          }
          if (im->options.observer) im->options.observer->exec_plugin_ran(status);
        });
  }
  if (impl->url.tls) {
    impl->ctx.emplace(ssl::context::tls_client);
    ssl::context& ctx = *impl->ctx;
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                    ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
    error_code ec;
    impl->verify = !config.insecure_skip_tls_verify;
    if (!impl->verify) {
      ctx.set_verify_mode(ssl::verify_none);
    } else {
      ctx.set_verify_mode(ssl::verify_peer);
      if (!config.ca_pem.empty()) {
        ctx.add_certificate_authority(net::buffer(config.ca_pem), ec);
        if (ec) {
          return make_error("certificate authority: not a valid PEM certificate: " + ec.message() +
                            " " + openssl_errors());
        }
      } else {
        ctx.set_default_verify_paths(ec);
        if (ec) return make_error("system trust store: " + ec.message());
      }
    }
    if (!config.client_cert_pem.empty()) {
      ctx.use_certificate_chain(net::buffer(config.client_cert_pem), ec);
      if (ec) return make_error("client certificate: " + ec.message() + " " + openssl_errors());
      ctx.use_private_key(net::buffer(config.client_key_pem), ssl::context::pem, ec);
      if (ec) return make_error("client key: " + ec.message() + " " + openssl_errors());
      if (SSL_CTX_check_private_key(ctx.native_handle()) != 1) {
        return make_error("client key does not match the client certificate");
      }
    }
    impl->verify_name = config.tls_server_name.empty() ? impl->url.host : config.tls_server_name;
    if (!config.tls_server_name.empty()) {
      impl->sni = config.tls_server_name;
    } else if (!is_ip_literal(impl->url.host)) {
      impl->sni = impl->url.host;
    }
  }
  return std::unique_ptr<KubeClient>(new KubeClient(std::move(impl)));
}

const std::string& KubeClient::server() const {
  return impl_->config.server;
}

ClientStats KubeClient::stats() const {
  std::lock_guard lock(impl_->mu);
  return impl_->stats;
}

ApiResult<std::string> KubeClient::call(const Request& request) {
  Impl& im = *impl_;
  const std::string& what = request.what.empty() ? request.path : request.what;
  const std::string prefix = request.verb + " " + what + ": ";
  if (http::string_to_verb(request.verb) == http::verb::unknown) {
    return ApiError{ApiCode::kInvalid, prefix + "unknown HTTP verb"};
  }
  const auto timeout = request.timeout.value_or(im.options.request_timeout);
  const auto started = Clock::now();
  const auto deadline = started + timeout;
  if (cancelled(request.cancel)) return ApiError{ApiCode::kUnavailable, prefix + "cancelled"};

  // Client-side rate limit.
  auto wait = im.limiter->reserve(deadline - Clock::now());
  if (!wait) {
    return ApiError{ApiCode::kUnavailable,
                    prefix + "client rate limiter: the wait would exceed the request timeout"};
  }
  if (im.options.observer) {
    im.options.observer->rate_limiter_waited(request_kind(request.verb, request.path).verb,
                                             std::chrono::duration<double>(*wait).count());
  }
  if (*wait > Clock::duration::zero()) {
    {
      std::lock_guard lock(im.mu);
      ++im.stats.rate_limited;
    }
    const auto until = Clock::now() + *wait;
    while (Clock::now() < until) {
      if (cancelled(request.cancel)) return ApiError{ApiCode::kUnavailable, prefix + "cancelled"};
      std::this_thread::sleep_for(
          std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(50)));
    }
  }
  {
    std::lock_guard lock(im.mu);
    ++im.stats.requests;
  }
  const auto request_started = Clock::now();
  auto failed = [&](ApiError e) -> ApiResult<std::string> {
    im.observe(request.verb, request.path, 0, request_started);
    return e;
  };

  Impl::Outcome outcome;
  // A 401 with an exec credential runs the plugin again and sends the request once more.
  for (int auth_try = 0;; ++auth_try) {
    auto cred = im.credential();
    if (!cred) return failed(ApiError{ApiCode::kUnavailable, prefix + cred.error().message});
    const Impl::Credential& tls_cred = Impl::cert_of(*cred);
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<Connection> conn;
      bool reused = false;
      {
        std::lock_guard lock(im.mu);
        while (attempt == 0 && !im.idle.empty() && !conn) {
          conn = std::move(im.idle.back());
          im.idle.pop_back();
          if (conn->tls_credential != tls_cred) {
            conn->close();  // made with a client certificate that has been replaced
            conn.reset();
          }
        }
        reused = conn != nullptr;
      }
      if (!conn) {
        if (Clock::now() >= deadline) {
          return failed(
              ApiError{ApiCode::kUnavailable,
                       prefix + "timeout after " + std::to_string(timeout.count()) + "ms"});
        }
        auto fresh = im.connect(deadline, request.cancel, *cred);
        if (!fresh) {
          if (cancelled(request.cancel)) {
            return failed(ApiError{ApiCode::kUnavailable, prefix + "cancelled"});
          }
          return failed(ApiError{ApiCode::kUnavailable, prefix + fresh.error().message});
        }
        conn = std::move(*fresh);
      }
      outcome = im.exchange(*conn, request, deadline, *cred);
      if (!outcome.ec) {
        if (outcome.keep_alive) {
          std::lock_guard lock(im.mu);
          if (im.idle.size() < im.options.max_idle_connections) {
            im.idle.push_back(std::move(conn));
          }
        }
        if (conn) conn->close();
        break;
      }
      conn->close();
      if (cancelled(request.cancel)) {
        return failed(ApiError{ApiCode::kUnavailable, prefix + "cancelled"});
      }
      if (outcome.ec == beast::error::timeout || Clock::now() >= deadline) {
        return failed(ApiError{ApiCode::kUnavailable,
                               prefix + "timeout after " + std::to_string(timeout.count()) + "ms"});
      }
      // A kept-alive connection the server closed while it sat idle: once more on a new one.
      if (reused && outcome.nothing_received) continue;
      if (outcome.ec == http::error::body_limit) {
        return failed(ApiError{ApiCode::kOther, prefix + "response larger than " +
                                                    std::to_string(im.options.max_response_bytes) +
                                                    " bytes"});
      }
      return failed(
          ApiError{ApiCode::kUnavailable, prefix + outcome.stage + ": " + outcome.ec.message()});
    }
    im.observe(request.verb, request.path, outcome.status, request_started);
    if (outcome.status == 401 && im.exec) {
      im.exec->invalidate(*cred);
      if (auth_try == 0) continue;
    }
    break;
  }
  if (outcome.status < 200 || outcome.status > 299) {
    return http_error(request.verb, what, outcome.status, outcome.body);
  }
  return std::move(outcome.body);
}

ApiResult<std::string> KubeClient::get(std::string path, std::string what,
                                       const std::atomic<bool>* cancel) {
  Request r;
  r.verb = "GET";
  r.path = std::move(path);
  r.what = std::move(what);
  r.cancel = cancel;
  return call(r);
}

ApiResult<std::string> KubeClient::merge_patch(std::string path, std::string body,
                                               std::string what) {
  Request r;
  r.verb = "PATCH";
  r.path = std::move(path);
  r.body = std::move(body);
  r.content_type = "application/merge-patch+json";
  r.what = std::move(what);
  return call(r);
}

ApiResult<std::string> KubeClient::post(std::string path, std::string body, std::string what) {
  Request r;
  r.verb = "POST";
  r.path = std::move(path);
  r.body = std::move(body);
  r.what = std::move(what);
  return call(r);
}

ApiResult<ListPages> KubeClient::list(const std::string& path, const std::string& what,
                                      const std::atomic<bool>* cancel) {
  Impl& im = *impl_;
  const std::string name = what.empty() ? path : what;
  const char sep = path.find('?') == std::string::npos ? '?' : '&';
  ListPages out;
  std::string continue_token;
  for (;;) {
    std::string target = path;
    if (im.options.list_page_size > 0) {
      target += sep + std::string("limit=") + std::to_string(im.options.list_page_size);
      if (!continue_token.empty()) target += "&continue=" + url_escape(continue_token);
    }
    auto body = get(target, name, cancel);
    if (!body && body.code() == ApiCode::kGone && !continue_token.empty()) {
      // client-go's pager: the continue token expired between pages; list again, whole.
      {
        std::lock_guard lock(im.mu);
        ++im.stats.list_fallbacks;
      }
      auto whole = get(path, name, cancel);
      if (!whole) return whole.error();
      auto meta = list_meta(*whole);
      if (!meta) return ApiError{ApiCode::kOther, "LIST " + name + ": " + meta.error().message};
      out.pages.clear();
      out.pages.push_back(std::move(*whole));
      out.resource_version = meta->resource_version;
      out.fell_back = true;
      return out;
    }
    if (!body) return body.error();
    auto meta = list_meta(*body);
    if (!meta) return ApiError{ApiCode::kOther, "LIST " + name + ": " + meta.error().message};
    {
      std::lock_guard lock(im.mu);
      ++im.stats.list_pages;
    }
    out.pages.push_back(std::move(*body));
    out.resource_version = meta->resource_version;
    if (meta->continue_token.empty() || im.options.list_page_size <= 0) return out;
    if (meta->continue_token == continue_token) {
      return ApiError{ApiCode::kOther, "LIST " + name + ": the server repeated a continue token"};
    }
    continue_token = std::move(meta->continue_token);
  }
}

ClientObserver* KubeClient::observer() const {
  return impl_->options.observer.get();
}

// ---- watch ------------------------------------------------------------------------------

namespace {

// One line of a watch stream.
ApiStatus handle_watch_line(std::string_view line, const std::string& prefix,
                            const std::function<bool(const WatchEventView&)>& on_event,
                            bool& stop) {
  simdjson::padded_string padded(line);
  od::parser parser;
  od::document doc;
  auto bad = [&](std::string_view why) {
    return ApiError{ApiCode::kOther, prefix + "malformed watch event: " + std::string(why)};
  };
  if (auto e = parser.iterate(padded).get(doc)) return bad(simdjson::error_message(e));
  od::object obj;
  if (auto e = doc.get_object().get(obj)) return bad(simdjson::error_message(e));
  std::string_view type, object;
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return bad(simdjson::error_message(e));
    if (key == "type") {
      if (field.value().get_string().get(type)) return bad("type: not a string");
    } else if (key == "object") {
      od::object o;
      if (field.value().get_object().get(o)) return bad("object: not an object");
      if (auto e = o.raw_json().get(object)) return bad(simdjson::error_message(e));
    }
  }
  if (type.empty()) return bad("no type");
  if (type == "ERROR") {
    auto st = parse_status(object);
    const int code = st && st->code != 0 ? st->code : 500;
    std::string message = prefix + "watch error " + std::to_string(code);
    if (st && !st->reason.empty()) message += " " + st->reason;
    if (st && !st->message.empty()) message += ": " + st->message;
    return ApiError{code_for_status(code), std::move(message)};
  }
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED" && type != "BOOKMARK") {
    return bad("unknown type " + excerpt(type));
  }
  if (object.empty()) return bad("no object");
  if (!on_event(WatchEventView{type, object})) stop = true;
  return state::Done{};
}

}  // namespace

ApiStatus KubeClient::watch(const WatchRequest& request,
                            const std::function<bool(const WatchEventView&)>& on_event,
                            const std::atomic<bool>* cancel) {
  Impl& im = *impl_;
  const std::string what = request.what.empty() ? request.path : request.what;
  const std::string prefix = "WATCH " + what + ": ";
  std::string target = request.path + "?watch=1";
  if (!request.resource_version.empty()) {
    target += "&resourceVersion=" + url_escape(request.resource_version);
  }
  if (request.bookmarks) target += "&allowWatchBookmarks=true";
  if (request.timeout_seconds > 0) {
    target += "&timeoutSeconds=" + std::to_string(request.timeout_seconds);
  }
  if (!request.field_selector.empty()) {
    target += "&fieldSelector=" + url_escape(request.field_selector);
  }
  {
    std::lock_guard lock(im.mu);
    ++im.stats.watches;
  }
  // The server ends the stream after timeoutSeconds; a silent connection beyond that (plus
  // slack for bookmarks and clock skew) is dead.
  const auto stream_limit =
      std::chrono::seconds(std::max(request.timeout_seconds, 1)) + std::chrono::seconds(30);
  auto deadline =
      Clock::now() + std::min<Clock::duration>(stream_limit, im.options.request_timeout);
  const auto started = Clock::now();
  auto cred = im.credential();
  if (!cred) {
    im.observe("WATCH", request.path, 0, started);
    return ApiError{ApiCode::kUnavailable, prefix + cred.error().message};
  }
  auto conn_result = im.connect(deadline, cancel, *cred);
  if (!conn_result) {
    im.observe("WATCH", request.path, 0, started);
    if (cancelled(cancel)) return ApiError{ApiCode::kUnavailable, prefix + "cancelled"};
    return ApiError{ApiCode::kUnavailable, prefix + conn_result.error().message};
  }
  Connection& c = **conn_result;
  struct Closer {
    Connection& c;
    ~Closer() { c.close(); }
  } closer{c};

  http::request<http::empty_body> req{http::verb::get, im.target_prefix + im.url.prefix + target,
                                      11};
  im.prepare(req, *cred);
  req.keep_alive(false);
  c.lowest().expires_at(deadline);
  error_code ec = c.with_stream([&](auto& s) {
    return c.run([&](auto&& cb) { http::async_write(s, req, std::move(cb)); }, cancel);
  });
  if (cancelled(cancel)) return ApiError{ApiCode::kUnavailable, prefix + "cancelled"};
  if (ec) return ApiError{ApiCode::kUnavailable, prefix + "write: " + ec.message()};

  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  parser.header_limit(64 << 10);
  ec = c.with_stream([&](auto& s) {
    return c.run([&](auto&& cb) { http::async_read_header(s, c.buffer, parser, std::move(cb)); },
                 cancel);
  });
  if (cancelled(cancel)) return ApiError{ApiCode::kUnavailable, prefix + "cancelled"};
  if (ec) {
    im.observe("WATCH", request.path, 0, started);
    return ApiError{ApiCode::kUnavailable, prefix + "read: " + ec.message()};
  }
  const int status = static_cast<int>(parser.get().result_int());
  im.observe("WATCH", request.path, status, started);
  if (status == 401 && im.exec) im.exec->invalidate(*cred);  // the next watch runs the plugin
  deadline = Clock::now() + stream_limit;

  std::vector<char> chunk(64 << 10);
  std::string pending;  // bytes of the current line
  const size_t line_limit = status == 200 ? im.options.max_watch_event_bytes : size_t(1) << 20;
  bool stop = false;
  while (!parser.is_done() && !stop) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    c.lowest().expires_at(deadline);
    ec = c.with_stream([&](auto& s) {
      return c.run([&](auto&& cb) { http::async_read_some(s, c.buffer, parser, std::move(cb)); },
                   cancel);
    });
    if (ec == http::error::need_buffer) ec = {};
    if (cancelled(cancel)) return ApiError{ApiCode::kUnavailable, prefix + "cancelled"};
    if (ec == beast::error::timeout) {
      return ApiError{ApiCode::kUnavailable, prefix + "stream silent beyond its timeout"};
    }
    if (ec && ec != http::error::end_of_stream) {
      return ApiError{ApiCode::kUnavailable, prefix + "read: " + ec.message()};
    }
    const size_t n = chunk.size() - parser.get().body().size;
    if (status != 200) {
      if (pending.size() + n > line_limit) break;
      pending.append(chunk.data(), n);
      if (ec) break;
      continue;
    }
    size_t start = 0;
    for (size_t i = 0; i < n && !stop; ++i) {
      if (chunk[i] != '\n') continue;
      pending.append(chunk.data() + start, i - start);
      start = i + 1;
      if (pending.find_first_not_of(" \t\r") != std::string::npos) {
        {
          std::lock_guard lock(im.mu);
          ++im.stats.watch_events;
        }
        ApiStatus s = handle_watch_line(pending, prefix, on_event, stop);
        if (!s) return s;
      }
      pending.clear();
    }
    if (stop) break;
    pending.append(chunk.data() + start, n - start);
    if (pending.size() > line_limit) {
      return ApiError{ApiCode::kOther,
                      prefix + "watch event larger than " + std::to_string(line_limit) + " bytes"};
    }
    if (ec) break;  // end of stream
  }
  if (status != 200) return http_error("WATCH", what, status, pending);
  if (stop) return state::Done{};
  if (!parser.is_done()) {
    return ApiError{ApiCode::kUnavailable, prefix + "stream ended early"};
  }
  // A final event without a trailing newline.
  if (pending.find_first_not_of(" \t\r") != std::string::npos) {
    ApiStatus s = handle_watch_line(pending, prefix, on_event, stop);
    if (!s) return s;
  }
  return state::Done{};
}

}  // namespace hamisim::kube
