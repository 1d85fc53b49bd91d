#include "kube/client.h"

#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <mutex>
#include <optional>
#include <vector>

#include "http/client_transport.h"
#include "kube/exec_credential.h"
#include "kube/rate_limiter.h"
#include "model/decode.h"

namespace hamisim::kube {

namespace od = simdjson::ondemand;
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
  const std::string reason = http::reason_phrase(status);
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

namespace {

// Reads a List body once: metadata.resourceVersion, with `full_meta` also continue and
// remainingItemCount, and with `on_item` each item's raw JSON (in the padded buffer).
Status walk_list(std::string_view body, ListMeta& meta, bool full_meta,
                 const std::function<Status(std::string_view)>* on_item) {
  simdjson::padded_string padded(body);
  od::parser parser;
  od::document doc;
  auto fail = [](std::string_view where, simdjson::error_code e) {
    return make_error(std::string(where) + ": " + simdjson::error_message(e));
  };
  if (auto e = parser.iterate(padded).get(doc)) return fail("list", e);
  od::object obj;
  if (auto e = doc.get_object().get(obj)) return fail("list", e);
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return fail("list", e);
    if (key == "metadata") {
      od::object m;
      if (auto e = field.value().get_object().get(m)) return fail("metadata", e);
      for (auto mf : m) {
        std::string_view mkey;
        if (auto e = mf.unescaped_key().get(mkey)) return fail("metadata", e);
        if (mkey == "resourceVersion" || (full_meta && mkey == "continue")) {
          std::string_view s;
          if (auto e = mf.value().get_string().get(s))
            return fail("metadata." + std::string(mkey), e);
          (mkey == "continue" ? meta.continue_token : meta.resource_version) = std::string(s);
        } else if (full_meta && mkey == "remainingItemCount") {
          int64_t n = 0;
          if (auto e = mf.value().get_int64().get(n)) return fail("metadata.remainingItemCount", e);
          meta.remaining_item_count = n;
        }
      }
    } else if (key == "items" && on_item != nullptr) {
      od::value v;
      if (auto e = field.value().get(v)) return fail(key, e);
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
        if (Status s = (*on_item)(raw); !s) return make_error(where + ": " + s.error().message);
      }
    }
  }
  return ok_status();
}

}  // namespace

Result<ListMeta> list_meta(std::string_view body) {
  ListMeta meta;
  if (Status s = walk_list(body, meta, true, nullptr); !s) return s.error();
  return meta;
}

Result<std::string> for_each_list_item(std::string_view body,
                                       const std::function<Status(std::string_view)>& on_item) {
  ListMeta meta;
  if (Status s = walk_list(body, meta, false, &on_item); !s) return s.error();
  return std::move(meta.resource_version);
}

// ---- the client -------------------------------------------------------------------------

namespace {

bool cancelled(const std::atomic<bool>* cancel) {
  return cancel != nullptr && cancel->load(std::memory_order_relaxed);
}

}  // namespace

struct KubeClient::Impl {
  KubeConfig config;
  ServerUrl url;
  ClientOptions options;
  std::unique_ptr<TokenBucket> limiter;
  std::unique_ptr<TokenBucket> event_limiter;
  std::unique_ptr<http::ClientTransport> transport;

  mutable std::mutex mu;
  ClientStats stats;

  std::mutex token_mu;
  std::string token;
  Clock::time_point token_read{};
  bool token_loaded = false;

  std::unique_ptr<ExecAuthenticator> exec;  // when the user has an exec plugin and no token

  using Credential = std::shared_ptr<const ExecCredential>;
  // The exec credential for the next request (null without a plugin).
  Result<Credential> credential();
  // The exec plugin's client certificate, which the request's connection must present
  // (it rotates, so it is set per connection); none when the credential holds none.
  std::optional<http::ConnectionCertificate> certificate(const Credential& c) const {
    if (!c || c->client_cert_pem.empty()) return std::nullopt;
    return http::ConnectionCertificate{c, c->client_cert_pem, c->client_key_pem,
                                       "exec plugin of user \"" + exec->config().user + "\""};
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

  std::string authorization(const Credential& cred);
  // The request on the wire: the server's path prefix, Accept and Authorization added.
  // `target` and `auth` must outlive the result.
  http::Request request(std::string_view verb, const std::string& target,
                        const std::string& auth) const {
    http::Request r;
    r.method = verb;
    r.target = target;
    r.headers.emplace_back("Accept", "application/json");
    if (!auth.empty()) r.headers.emplace_back("Authorization", auth);
    return r;
  }
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

KubeClient::KubeClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KubeClient::~KubeClient() = default;

namespace {

// The server's TLS as the kubeconfig describes it.
Result<http::TlsSettings> tls_settings(const KubeConfig& config) {
  http::TlsSettings tls;
  if (config.insecure_skip_tls_verify) {
    tls.skip_verification();
  } else if (!config.ca_pem.empty()) {
    if (auto s = tls.trust_pem(config.ca_pem); !s) {
      return make_error("certificate authority: not a valid PEM certificate: " + s.error().message +
                        " " + http::take_openssl_errors());
    }
  } else if (auto s = tls.trust_system(); !s) {
    return make_error("system trust store: " + s.error().message);
  }
  if (!config.client_cert_pem.empty()) {
    if (auto s = tls.use_certificate_chain_pem(config.client_cert_pem); !s) {
      return make_error("client certificate: " + s.error().message + " " +
                        http::take_openssl_errors());
    }
    if (auto s = tls.use_private_key_pem(config.client_key_pem); !s) {
      return make_error("client key: " + s.error().message + " " + http::take_openssl_errors());
    }
    if (!tls.private_key_matches()) {
      return make_error("client key does not match the client certificate");
    }
  }
  tls.set_server_name(config.tls_server_name);
  return tls;
}

}  // namespace

Result<std::unique_ptr<KubeClient>> KubeClient::create(const KubeConfig& config,
                                                       ClientOptions options) {
  auto impl = std::make_unique<Impl>();
  auto url = parse_server_url(config.server);
  if (!url) return make_error("server: " + url.error().message);
  impl->url = std::move(*url);
  impl->config = config;
  impl->options = options;
  impl->limiter = std::make_unique<TokenBucket>(options.qps, options.burst);
  impl->event_limiter = std::make_unique<TokenBucket>(options.qps, options.burst);
  std::optional<http::Proxy> proxy;
  if (!config.proxy_url.empty()) {
    auto parsed = parse_proxy_url(config.proxy_url);
    if (!parsed) return make_error(config.proxy_source + ": " + parsed.error().message);
    proxy = http::Proxy{parsed->host, parsed->port, parsed->authorization};
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
  std::optional<http::TlsSettings> tls;
  if (impl->url.tls) {
    auto settings = tls_settings(config);
    if (!settings) return settings.error();
    tls = std::move(*settings);
  }
  http::TransportOptions transport;
  transport.user_agent = options.user_agent;
  transport.max_idle_connections = options.max_idle_connections;
  transport.max_response_bytes = options.max_response_bytes;
  transport.max_header_bytes = 64 << 10;
  impl->transport = std::make_unique<http::ClientTransport>(
      http::Endpoint{impl->url.host, impl->url.port, impl->url.host_header}, std::move(proxy),
      std::move(tls), std::move(transport));
  return std::unique_ptr<KubeClient>(new KubeClient(std::move(impl)));
}

const std::string& KubeClient::server() const {
  return impl_->config.server;
}

ClientStats KubeClient::stats() const {
  ClientStats out;
  {
    std::lock_guard lock(impl_->mu);
    out = impl_->stats;
  }
  out.connections_opened = impl_->transport->stats().connections_opened;
  return out;
}

ApiResult<std::string> KubeClient::call(const Request& request) {
  Impl& im = *impl_;
  const std::string& what = request.what.empty() ? request.path : request.what;
  const std::string prefix = request.verb + " " + what + ": ";
  if (!http::is_known_method(request.verb)) {
    return ApiError{ApiCode::kInvalid, prefix + "unknown HTTP verb"};
  }
  const auto timeout = request.timeout.value_or(im.options.request_timeout);
  const auto started = Clock::now();
  const auto deadline = started + timeout;
  if (cancelled(request.cancel)) return ApiError{ApiCode::kUnavailable, prefix + "cancelled"};

  // Client-side rate limit.
  auto wait = (request.event ? im.event_limiter : im.limiter)->reserve(deadline - Clock::now());
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

  const std::string target = im.url.prefix + request.path;
  http::RoundTrip trip;
  // A 401 with an exec credential runs the plugin again and sends the request once more.
  for (int auth_try = 0;; ++auth_try) {
    auto cred = im.credential();
    if (!cred) return failed(ApiError{ApiCode::kUnavailable, prefix + cred.error().message});
    const std::string auth = im.authorization(*cred);
    http::Request wire = im.request(request.verb, target, auth);
    if (!request.body.empty() || request.verb == "POST" || request.verb == "PATCH") {
      wire.content_type = request.content_type.empty() ? std::string_view("application/json")
                                                       : std::string_view(request.content_type);
      wire.body = request.body;
    }
    const auto cert = im.certificate(*cred);
    trip = im.transport->round_trip(wire, deadline, request.cancel, cert ? &*cert : nullptr);
    if (!trip.ok()) {
      switch (trip.failure.why) {
        case http::Failure::Why::kCancelled:
          return failed(ApiError{ApiCode::kUnavailable, prefix + "cancelled"});
        case http::Failure::Why::kTimeout:
          return failed(
              ApiError{ApiCode::kUnavailable,
                       prefix + "timeout after " + std::to_string(timeout.count()) + "ms"});
        case http::Failure::Why::kBodyLimit:
          return failed(ApiError{ApiCode::kOther,
                                 prefix + "response larger than " +
                                     std::to_string(im.options.max_response_bytes) + " bytes"});
        case http::Failure::Why::kError:
          break;
      }
      return failed(ApiError{ApiCode::kUnavailable, prefix + trip.failure.message});
    }
    im.observe(request.verb, request.path, trip.response->status, request_started);
    if (trip.response->status == 401 && im.exec) {
      im.exec->invalidate(*cred);
      if (auth_try == 0) continue;
    }
    break;
  }
  const int status = trip.response->status;
  if (status < 200 || status > 299) {
    return http_error(request.verb, what, status, trip.response->body);
  }
  return std::move(trip.response->body);
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
  ListPages out;
  auto end = list_each_page(path, what, cancel, [&](std::string& body, bool restarted) {
    if (restarted) out.pages.clear();
    out.pages.push_back(std::move(body));
    return ok_status();
  });
  if (!end) return end.error();
  out.resource_version = std::move(end->resource_version);
  out.fell_back = end->fell_back;
  return out;
}

ApiResult<KubeClient::ListEnd> KubeClient::list_each_page(const std::string& path,
                                                          const std::string& what,
                                                          const std::atomic<bool>* cancel,
                                                          const PageHandler& on_page) {
  Impl& im = *impl_;
  const std::string name = what.empty() ? path : what;
  const char sep = path.find('?') == std::string::npos ? '?' : '&';
  auto hand_on = [&](std::string& body, bool restarted) -> ApiStatus {
    if (auto s = on_page(body, restarted); !s) {
      return ApiError{ApiCode::kOther, "LIST " + name + ": " + s.error().message};
    }
    return state::Done{};
  };
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
      if (auto s = hand_on(*whole, true); !s.ok()) return s.error();
      return ListEnd{std::move(meta->resource_version), true};
    }
    if (!body) return body.error();
    auto meta = list_meta(*body);
    if (!meta) return ApiError{ApiCode::kOther, "LIST " + name + ": " + meta.error().message};
    {
      std::lock_guard lock(im.mu);
      ++im.stats.list_pages;
    }
    if (auto s = hand_on(*body, false); !s.ok()) return s.error();
    if (meta->continue_token.empty() || im.options.list_page_size <= 0) {
      return ListEnd{std::move(meta->resource_version), false};
    }
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
  const std::string wire_target = im.url.prefix + target;
  const std::string auth = im.authorization(*cred);
  const auto cert = im.certificate(*cred);
  auto opened = im.transport->open_stream(im.request("GET", wire_target, auth), deadline, cancel,
                                          cert ? &*cert : nullptr);
  if (!opened.stream) {
    const http::Failure& f = opened.failure;
    if (f.stage == http::Failure::Stage::kConnect) im.observe("WATCH", request.path, 0, started);
    if (f.why == http::Failure::Why::kCancelled) {
      return ApiError{ApiCode::kUnavailable, prefix + "cancelled"};
    }
    if (f.stage == http::Failure::Stage::kRead) im.observe("WATCH", request.path, 0, started);
    return ApiError{ApiCode::kUnavailable, prefix + f.message};
  }
  http::ResponseStream& stream = *opened.stream;
  const int status = stream.status();
  im.observe("WATCH", request.path, status, started);
  if (status == 401 && im.exec) im.exec->invalidate(*cred);  // the next watch runs the plugin
  deadline = Clock::now() + stream_limit;

  std::vector<char> chunk(64 << 10);
  std::string pending;  // bytes of the current line
  const size_t line_limit = status == 200 ? im.options.max_watch_event_bytes : size_t(1) << 20;
  bool stop = false;
  while (!stream.done() && !stop) {
    const http::ResponseStream::Read read = stream.read_some(chunk, deadline, cancel);
    using Result = http::ResponseStream::Read::Result;
    if (read.result == Result::kCancelled) {
      return ApiError{ApiCode::kUnavailable, prefix + "cancelled"};
    }
    if (read.result == Result::kTimeout) {
      return ApiError{ApiCode::kUnavailable, prefix + "stream silent beyond its timeout"};
    }
    if (read.result == Result::kError)
      return ApiError{ApiCode::kUnavailable, prefix + read.message};
    const bool ended = read.result == Result::kEnd;
    const size_t n = read.bytes;
    if (status != 200) {
      if (pending.size() + n > line_limit) break;
      pending.append(chunk.data(), n);
      if (ended) break;
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
    if (ended) break;  // end of stream
  }
  if (status != 200) return http_error("WATCH", what, status, pending);
  if (stop) return state::Done{};
  if (!stream.done()) {
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
