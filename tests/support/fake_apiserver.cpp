#include "fake_apiserver.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <cctype>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "model/base64.h"
#include "model/json_writer.h"

namespace hamisim::testing {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;
using Clock = std::chrono::steady_clock;
using state::ApiCode;
using state::Kind;

// Named, not anonymous: FakeApiServer::Impl holds these types; GCC warns
// (-Wsubobject-linkage) when they come from an anonymous namespace. Named for this file, so
// unity batches see no clash.
namespace fake_apiserver_detail {

std::string reason_for(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "Unknown";
  }
}

// A Status's `details`: the object an error is about, as the real server names it
// ({"name":"p1","kind":"pods"}, with "group" outside the core group). An answer about no
// object carries none; a 415 carries an empty one, as the real server's does.
struct Details {
  bool present = false;
  std::string name{}, group{}, kind{};
};

std::string status_json(int code, std::string_view message, std::string reason = {},
                        const Details& details = {}) {
  if (reason.empty()) reason = reason_for(code);
  model::JsonWriter w;
  w.begin_object();
  w.key("kind").string("Status");
  w.key("apiVersion").string("v1");
  w.key("metadata").begin_object().end_object();
  w.key("status").string("Failure");
  w.key("message").string(message);
  w.key("reason").string(reason);
  if (details.present) {
    w.key("details").begin_object();
    if (!details.name.empty()) w.key("name").string(details.name);
    if (!details.group.empty()) w.key("group").string(details.group);
    if (!details.kind.empty()) w.key("kind").string(details.kind);
    w.end_object();
  }
  w.key("code").number(code);
  w.end_object();
  return w.take();
}

// Kubernetes' validation of metadata keys and label values (IsQualifiedName, IsValidLabelValue):
// a name part of at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric,
// with an optional DNS-subdomain prefix and '/'.
bool valid_name_part(std::string_view n) {
  if (n.empty() || n.size() > 63) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(n.front()) || !alnum(n.back())) return false;
  return std::all_of(n.begin(), n.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool valid_qualified_name(std::string_view key) {
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos) return valid_name_part(key);
  const std::string_view prefix = key.substr(0, slash);
  if (prefix.empty() || prefix.size() > 253) return false;
  for (char c : prefix) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.')) {
      return false;
    }
  }
  return valid_name_part(key.substr(slash + 1));
}

bool valid_label_value(std::string_view v) {
  return v.empty() || valid_name_part(v);
}

// What the real server's validation refuses in a merge patch's metadata (422), or "".
std::string invalid_metadata(const boost::json::object& patch) {
  auto* meta = patch.if_contains("metadata");
  if (meta == nullptr || !meta->is_object()) return {};
  for (const char* field : {"annotations", "labels"}) {
    auto* m = meta->as_object().if_contains(field);
    if (m == nullptr || !m->is_object()) continue;
    const bool labels = std::string_view(field) == "labels";
    for (const auto& [key, value] : m->as_object()) {
      if (!valid_qualified_name(key)) {
        return "metadata." + std::string(field) + ": Invalid value: \"" + std::string(key) +
               "\": name part must consist of alphanumeric characters, '-', '_' or '.'";
      }
      if (labels && value.is_string() && !valid_label_value(value.as_string())) {
        return "metadata.labels: Invalid value: \"" + std::string(value.as_string()) +
               "\": a valid label must be an empty string or consist of at most 63 "
               "alphanumeric characters, '-', '_' or '.'";
      }
    }
  }
  return {};
}

int http_status_for(ApiCode code) {
  switch (code) {
    case ApiCode::kNotFound:
      return 404;
    case ApiCode::kConflict:
      return 409;
    case ApiCode::kGone:
      return 410;
    case ApiCode::kInvalid:
      return 422;
    case ApiCode::kForbidden:
      return 403;
    case ApiCode::kUnavailable:
      return 503;
    case ApiCode::kOther:
      return 500;
  }
  return 500;
}

std::string api_version_of(Kind kind) {
  return kind == Kind::kLease ? "coordination.k8s.io/v1" : "v1";
}

std::string url_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
      };
      const int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += char(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i] == '+' ? ' ' : s[i];
  }
  return out;
}

std::map<std::string, std::string> parse_query(std::string_view q) {
  std::map<std::string, std::string> out;
  while (!q.empty()) {
    const size_t amp = q.find('&');
    std::string_view part = q.substr(0, amp);
    const size_t eq = part.find('=');
    out[url_decode(part.substr(0, eq))] =
        eq == std::string_view::npos ? std::string() : url_decode(part.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return out;
}

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    const size_t j = path.find('/', i);
    out.emplace_back(path.substr(i, j - i));
    if (j == std::string_view::npos) break;
    i = j;
  }
  return out;
}

std::optional<Kind> kind_for(std::string_view resource, bool core) {
  if (core) {
    if (resource == "nodes") return Kind::kNode;
    if (resource == "pods") return Kind::kPod;
    if (resource == "resourcequotas") return Kind::kResourceQuota;
    if (resource == "events") return Kind::kEvent;
    return std::nullopt;
  }
  if (resource == "leases") return Kind::kLease;
  return std::nullopt;
}

struct Target {
  Kind kind = Kind::kNode;
  std::string namespace_;
  std::string name;
  std::string subresource;
  std::string resource;  // as in the path: "pods", "leases"
  std::string group;     // "" for the core group
  // resource.k8s.io/v1 resourceslices, kept apart from the store (serve_resource_slices);
  // `kind` does not apply.
  bool resource_slices = false;
};

// Maps a path onto a resource, or an error message (404).
std::optional<Target> route(std::string_view path) {
  const auto seg = split_path(path);
  if (seg.size() >= 4 && seg.size() <= 5 && seg[0] == "apis" && seg[1] == "resource.k8s.io" &&
      seg[2] == "v1" && seg[3] == "resourceslices") {
    Target t;
    t.resource_slices = true;
    if (seg.size() == 5) t.name = seg[4];
    return t;
  }
  size_t i = 0;
  bool core = false;
  if (seg.size() >= 2 && seg[0] == "api" && seg[1] == "v1") {
    core = true;
    i = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis" && seg[1] == "coordination.k8s.io" &&
             seg[2] == "v1") {
    i = 3;
  } else {
    return std::nullopt;
  }
  Target t;
  if (i + 1 < seg.size() && seg[i] == "namespaces") {
    t.namespace_ = seg[i + 1];
    i += 2;
  }
  if (i >= seg.size()) return std::nullopt;
  auto kind = kind_for(seg[i], core);
  if (!kind) return std::nullopt;
  t.kind = *kind;
  t.resource = std::string(seg[i]);
  if (!core) t.group = "coordination.k8s.io";
  if (!state::namespaced(t.kind) && !t.namespace_.empty()) return std::nullopt;
  ++i;
  if (i < seg.size()) t.name = seg[i++];
  if (i < seg.size()) t.subresource = seg[i++];
  if (i < seg.size()) return std::nullopt;
  if (!t.subresource.empty() && !(t.kind == Kind::kPod && t.subresource == "binding")) {
    return std::nullopt;
  }
  if (state::namespaced(t.kind) && !t.name.empty() && t.namespace_.empty()) return std::nullopt;
  return t;
}

struct Response {
  int status = 200;
  std::string body;
};

Response error_response(int code, std::string_view message, std::string reason = {},
                        const Details& details = {}) {
  return Response{code, status_json(code, message, std::move(reason), details)};
}

Response from_api_error(const state::ApiError& e, const Details& details = {}) {
  const int code = http_status_for(e.code);
  std::string reason;
  if (code == 409 && e.message.find("already exists") != std::string::npos) {
    reason = "AlreadyExists";
  }
  return error_response(code, e.message, reason, details);
}

// One object of a collection, as a LIST pages it.
struct ListItem {
  std::string_view namespace_, name, json;
};

// A LIST answer of `listing` (ordered by namespace, then name; the collection's version now is
// `current_rv`) as the real server pages it: `limit` items per page, a continue token naming
// the list's resourceVersion and the last key, remainingItemCount without selectors, and 410
// Expired when `version_kept` says the token's version has been compacted away.
Response list_response(const std::vector<ListItem>& listing, uint64_t current_rv,
                       std::string_view kind, std::string_view api_version,
                       const std::map<std::string, std::string>& query,
                       const std::string& field_name,
                       const std::function<bool(uint64_t)>& version_kept) {
  if (auto m = query.find("resourceVersionMatch"); m != query.end() && m->second == "Exact") {
    auto rv = query.find("resourceVersion");
    if (rv == query.end() || rv->second != std::to_string(current_rv)) {
      return error_response(410, "The resourceVersion for the provided list is too old.");
    }
  }
  int64_t limit = 0;
  if (auto l = query.find("limit"); l != query.end()) {
    try {
      limit = std::max<int64_t>(0, std::stoll(l->second));
    } catch (...) {
    }
  }
  uint64_t list_rv = current_rv;
  std::string after_ns, after_name;
  bool after = false;
  if (auto c = query.find("continue"); c != query.end() && !c->second.empty()) {
    std::string decoded;
    json::error_code ec;
    json::value token;
    if (model::decode_base64(c->second, decoded)) token = json::parse(decoded, ec);
    const json::object* o = token.is_object() ? &token.as_object() : nullptr;
    if (o == nullptr || !o->contains("rv") || !(*o).at("rv").is_int64() || !o->contains("ns") ||
        !o->contains("name") || !(*o).at("ns").is_string() || !(*o).at("name").is_string()) {
      return error_response(400, "continue key is not valid: " + c->second, "BadRequest");
    }
    list_rv = uint64_t(o->at("rv").as_int64());
    after_ns = std::string(o->at("ns").as_string());
    after_name = std::string(o->at("name").as_string());
    after = true;
    if (!version_kept(list_rv)) {
      return error_response(
          410,
          "The provided continue parameter is too old to display a consistent list result. You "
          "can start a new list without the continue parameter, or use the continue token in "
          "this response to retrieve the remainder of the results. Continuing with the "
          "provided token results in an inconsistent list - objects that were created, "
          "modified, or deleted between the time the first chunk was returned and now may "
          "show up in the list.",
          "Expired");
    }
  }
  std::vector<const ListItem*> items;
  for (const auto& item : listing) {
    if (!field_name.empty() && item.name != field_name) continue;
    if (after && std::tie(item.namespace_, item.name) <= std::tie(after_ns, after_name)) continue;
    items.push_back(&item);
  }
  std::string next;
  int64_t remaining = 0;
  if (limit > 0 && int64_t(items.size()) > limit) {
    remaining = int64_t(items.size()) - limit;
    items.resize(size_t(limit));
    json::object token;
    token["rv"] = int64_t(list_rv);
    token["ns"] = items.back()->namespace_;
    token["name"] = items.back()->name;
    next = model::encode_base64(json::serialize(token));
  }
  std::string body = R"({"kind":")" + std::string(kind) + R"(List","apiVersion":")" +
                     std::string(api_version) + R"(","metadata":{"resourceVersion":")" +
                     std::to_string(list_rv) + "\"";
  if (!next.empty()) {
    body += R"(,"continue":")" + next + "\"";
    if (field_name.empty()) body += R"(,"remainingItemCount":)" + std::to_string(remaining);
  }
  body += R"(},"items":[)";
  bool first = true;
  for (const auto* item : items) {
    if (!first) body += ',';
    first = false;
    body += item->json;
  }
  body += "]}";
  return Response{200, std::move(body)};
}

struct FailRule {
  std::string verb, prefix;
  int remaining = 0;
  int status = 500;
};

}  // namespace fake_apiserver_detail
using namespace fake_apiserver_detail;

struct FakeApiServer::Impl {
  state::ObjectStore& store;
  FakeApiServerOptions options;

  net::io_context ioc;
  std::optional<tcp::acceptor> acceptor;
  std::optional<ssl::context> ctx;
  std::thread accept_thread;
  uint16_t port = 0;
  std::atomic<bool> stopping{false};

  mutable std::mutex mu;
  std::vector<std::thread> connections;
  std::map<uint64_t, int> open_fds;  // connection id -> fd
  uint64_t next_id = 0;
  std::vector<FailRule> rules;
  std::chrono::milliseconds delay{0};
  std::condition_variable delay_changed;  // a delayed response re-reads `delay` (set_delay)
  std::string token;
  std::map<std::pair<std::string, std::string>, int> counts;
  std::vector<std::string> log;
  int watches_open = 0;
  int watches_total = 0;
  std::atomic<uint64_t> drop_generation{0};
  std::function<void(const std::string&)> list_hook;
  // serve_resource_slices: name -> JSON, and the version their LISTs carry. Unset: the group is
  // not served.
  std::optional<std::map<std::string, std::string>> resource_slices;
  uint64_t resource_slices_rv = 0;
  // The last listing of each kind and namespace, reused while the store has not changed since
  // (it is then exactly what a new listing would be): a paged LIST of 150,000 pods would
  // otherwise copy every object's JSON once per page of 500 (bench/run-all's readiness run).
  std::map<std::pair<state::Kind, std::string>, std::shared_ptr<const state::ObjectStore::Listing>>
      listings;

  Impl(state::ObjectStore& s, FakeApiServerOptions o) : store(s), options(std::move(o)) {
    token = options.bearer_token;
  }

  void do_accept();
  // A slow API server: the response waits until `delay` has passed since the request
  // arrived. Lowering the delay releases the requests that have waited that long, as a
  // recovering server answers those it holds, and stop() releases them all.
  void wait_out_delay() {
    const auto arrived = std::chrono::steady_clock::now();
    std::unique_lock lock(mu);
    while (!stopping && std::chrono::steady_clock::now() < arrived + delay) {
      delay_changed.wait_until(lock, arrived + delay);
    }
  }
  void serve(tcp::socket socket, uint64_t id);
  template <class Stream>
  void serve_stream(Stream& stream, bool cert_verified, uint64_t id);
  template <class Stream>
  void watch(Stream& stream, const Target& t, std::map<std::string, std::string>& query,
             const std::string& field_name);
  Response handle(const http::request<http::string_body>& req, const Target& t,
                  const std::map<std::string, std::string>& query, const std::string& field_name);
  Response handle_resource_slices(const http::request<http::string_body>& req, const Target& t,
                                  const std::map<std::string, std::string>& query,
                                  const std::string& field_name);
  std::optional<Response> injected_failure(const std::string& verb, const std::string& path);
};

void FakeApiServer::Impl::do_accept() {
  acceptor->async_accept([this](error_code ec, tcp::socket socket) {
    if (ec || stopping) return;
    std::lock_guard lock(mu);
    const uint64_t id = next_id++;
    open_fds[id] = socket.native_handle();
    connections.emplace_back([this, id](tcp::socket s) { serve(std::move(s), id); },
                             std::move(socket));
    do_accept();
  });
}

void FakeApiServer::Impl::serve(tcp::socket socket, uint64_t id) {
  error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  if (!ctx) {
    serve_stream(socket, false, id);
  } else {
    ssl::stream<tcp::socket&> tls(socket, *ctx);
    tls.handshake(ssl::stream_base::server, ec);
    if (ec) return;
    bool verified = false;
    if (X509* peer = SSL_get1_peer_certificate(tls.native_handle())) {
      verified = SSL_get_verify_result(tls.native_handle()) == X509_V_OK;
      X509_free(peer);
    }
    serve_stream(tls, verified, id);
  }
  {
    // Forget the descriptor before closing it, so stop() never shuts down a reused one.
    std::lock_guard lock(mu);
    open_fds.erase(id);
  }
  error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

std::optional<Response> FakeApiServer::Impl::injected_failure(const std::string& verb,
                                                              const std::string& path) {
  std::lock_guard lock(mu);
  for (FailRule& r : rules) {
    if (r.remaining > 0 && r.verb == verb && path.starts_with(r.prefix)) {
      --r.remaining;
      return error_response(r.status, "injected failure " + std::to_string(r.status));
    }
  }
  return std::nullopt;
}

template <class Stream>
void FakeApiServer::Impl::serve_stream(Stream& stream, bool cert_verified, uint64_t id) {
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(64u << 20);
    error_code ec;
    http::read(stream, buffer, parser, ec);
    if (ec || stopping) return;
    auto& req = parser.get();
    std::string target(req.target());
    // Absolute-form targets (requests through a proxy), as net/http accepts them.
    for (const char* scheme : {"http://", "https://"}) {
      if (target.starts_with(scheme)) {
        const size_t slash = target.find('/', std::strlen(scheme));
        target = slash == std::string::npos ? "/" : target.substr(slash);
      }
    }
    const size_t qpos = target.find('?');
    const std::string path = target.substr(0, qpos);
    auto query = parse_query(qpos == std::string::npos ? std::string_view()
                                                       : std::string_view(target).substr(qpos + 1));
    auto t = route(path);
    if (t && t->resource_slices) {
      std::lock_guard lock(mu);
      if (!resource_slices) t.reset();  // as on a cluster without DRA: 404
    }
    const bool is_watch =
        query.count("watch") && (query["watch"] == "1" || query["watch"] == "true");
    std::string verb(req.method_string());
    if (verb == "GET" && t && (t->name.empty() || is_watch)) verb = is_watch ? "WATCH" : "LIST";
    {
      std::lock_guard lock(mu);
      ++counts[{verb, path}];
      log.push_back(verb + " " + target);
    }

    Response resp;
    bool authorized = true;
    {
      std::lock_guard lock(mu);
      if (!token.empty() && !cert_verified) {
        authorized = req[http::field::authorization] == "Bearer " + token;
      }
    }
    std::string field_name;
    if (auto fs = query.find("fieldSelector"); fs != query.end() && !fs->second.empty()) {
      if (fs->second.starts_with("metadata.name=")) {
        field_name = fs->second.substr(14);
      } else {
        field_name = "\x01";  // unsupported
      }
    }
    if (!authorized) {
      resp = error_response(401, "Unauthorized", "Unauthorized");
    } else if (!t) {
      resp = error_response(404, "the server could not find the requested resource");
    } else if (field_name == "\x01") {
      resp = error_response(400, "field label not supported: " + query["fieldSelector"]);
    } else if (auto failure = injected_failure(verb, path)) {
      resp = *failure;
    } else if (verb == "WATCH" && t->resource_slices) {
      resp = error_response(405, "the fake API server does not watch ResourceSlices",
                            "MethodNotAllowed");
    } else if (verb == "WATCH") {
      watch(stream, *t, query, field_name);
      return;  // watch connections are not reused
    } else {
      wait_out_delay();
      resp = handle(req, *t, query, field_name);
    }
    http::response<http::string_body> res{static_cast<http::status>(resp.status), 11};
    res.set(http::field::content_type, "application/json");
    res.body() = std::move(resp.body);
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    http::write(stream, res, ec);
    if (ec || !req.keep_alive() || stopping) return;
  }
}

Response FakeApiServer::Impl::handle(const http::request<http::string_body>& req, const Target& t,
                                     const std::map<std::string, std::string>& query,
                                     const std::string& field_name) {
  const auto method = req.method();
  if (t.resource_slices) return handle_resource_slices(req, t, query, field_name);
  if (method == http::verb::get && t.name.empty()) {
    std::function<void(const std::string&)> hook;
    {
      std::lock_guard lock(mu);
      hook = list_hook;
    }
    if (hook) hook(std::string(req.target()));
    std::shared_ptr<const state::ObjectStore::Listing> cached;
    const auto key = std::make_pair(t.kind, t.namespace_);
    {
      std::lock_guard lock(mu);
      if (auto c = listings.find(key);
          c != listings.end() && c->second->resource_version == store.resource_version()) {
        cached = c->second;
      }
    }
    if (!cached) {
      cached =
          std::make_shared<const state::ObjectStore::Listing>(store.list(t.kind, t.namespace_));
      std::lock_guard lock(mu);
      listings[key] = cached;
    }
    const auto& listing = *cached;
    std::vector<ListItem> items;
    items.reserve(listing.items.size());
    for (const auto& item : listing.items) items.push_back({item.namespace_, item.name, item.json});
    return list_response(items, listing.resource_version, state::to_string(t.kind),
                         api_version_of(t.kind), query, field_name, [&](uint64_t rv) {
                           return bool(store.changes_since(t.kind, rv, t.namespace_));
                         });
  }
  const Details named{true, t.name, t.group, t.resource};
  if (method == http::verb::get) {
    auto got = store.get(t.kind, t.namespace_, t.name);
    if (!got) return from_api_error(got.error(), named);
    return Response{200, got->json};
  }
  if (method == http::verb::patch && !t.name.empty() && t.subresource.empty()) {
    if (req[http::field::content_type] != "application/merge-patch+json") {
      return error_response(415,
                            "the body of the request was in an unknown format - accepted "
                            "media types include: application/merge-patch+json",
                            {}, Details{true});
    }
    json::error_code ec;
    json::value patch = json::parse(req.body(), ec);
    if (ec) return error_response(400, "invalid JSON patch");
    if (patch.is_object()) {
      if (auto why = invalid_metadata(patch.as_object()); !why.empty()) {
        return error_response(
            422, t.name + " is invalid: " + why, {},
            Details{true, t.name, t.group, std::string(state::to_string(t.kind))});
      }
    }
    auto patched = store.merge_patch(t.kind, t.namespace_, t.name, req.body());
    if (!patched) return from_api_error(patched.error(), named);
    return Response{200, patched->json};
  }
  if (method == http::verb::post && t.subresource == "binding") {
    json::error_code ec;
    json::value body = json::parse(req.body(), ec);
    if (ec || !body.is_object())
      return error_response(400, "binding: the body is not a JSON object");
    std::string uid, node;
    if (auto* meta = body.as_object().if_contains("metadata"); meta && meta->is_object()) {
      if (auto* u = meta->as_object().if_contains("uid"); u && u->is_string()) {
        uid = std::string(u->as_string());
      }
    }
    if (auto* target = body.as_object().if_contains("target"); target && target->is_object()) {
      if (auto* n = target->as_object().if_contains("name"); n && n->is_string()) {
        node = std::string(n->as_string());
      }
    }
    // The real server answers a binding without a target with 500 and no reason.
    if (node.empty()) {
      return Response{500, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                           R"("message":"target.name: Required value","code":500})"};
    }
    auto bound = store.bind(t.namespace_, t.name, uid, node);
    if (!bound) {
      // A UID precondition fails on the pod; a pod already bound on the binding.
      const bool precondition = bound.error().message.find("Precondition") != std::string::npos;
      return from_api_error(bound.error(),
                            Details{true, t.name, "", precondition ? "pods" : "pods/binding"});
    }
    return Response{
        201, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201})"};
  }
  if (method == http::verb::post && t.name.empty() && t.kind == Kind::kEvent) {
    // The real server returns every field of core/v1 Event, the unset ones as null or "".
    json::error_code ec;
    json::value event = json::parse(req.body(), ec);
    if (ec || !event.is_object()) return error_response(400, "the body is not a JSON object");
    auto& e = event.as_object();
    for (const char* key : {"eventTime", "firstTimestamp", "lastTimestamp"}) {
      if (!e.contains(key)) e[key] = nullptr;
    }
    for (const char* key : {"reportingComponent", "reportingInstance"}) {
      if (!e.contains(key)) e[key] = "";
    }
    auto created = store.create(t.kind, json::serialize(event), t.namespace_);
    if (!created) return from_api_error(created.error());
    return Response{201, created->json};
  }
  return error_response(405, "the server does not allow this method on the requested resource",
                        "MethodNotAllowed");
}

Response FakeApiServer::Impl::handle_resource_slices(
    const http::request<http::string_body>& req, const Target& t,
    const std::map<std::string, std::string>& query, const std::string& field_name) {
  if (req.method() != http::verb::get) {
    return error_response(405, "the fake API server serves ResourceSlices read-only",
                          "MethodNotAllowed");
  }
  std::map<std::string, std::string> slices;
  uint64_t rv = 0;
  {
    std::lock_guard lock(mu);
    if (resource_slices) slices = *resource_slices;
    rv = resource_slices_rv;
  }
  if (!t.name.empty()) {
    auto it = slices.find(t.name);
    if (it == slices.end()) {
      return error_response(404, "resourceslices.resource.k8s.io \"" + t.name + "\" not found");
    }
    return Response{200, it->second};
  }
  std::function<void(const std::string&)> hook;
  {
    std::lock_guard lock(mu);
    hook = list_hook;
  }
  if (hook) hook(std::string(req.target()));
  std::vector<ListItem> items;
  for (const auto& [name, json] : slices) items.push_back({{}, name, json});
  // The slices do not change once served, so every continue token stays good.
  return list_response(items, rv, "ResourceSlice", "resource.k8s.io/v1", query, field_name,
                       [](uint64_t) { return true; });
}

template <class Stream>
void FakeApiServer::Impl::watch(Stream& stream, const Target& t,
                                std::map<std::string, std::string>& query,
                                const std::string& field_name) {
  uint64_t rv = 0;
  bool initial = false;
  const std::string rv_text = query["resourceVersion"];
  if (rv_text.empty() || rv_text == "0") {
    initial = true;
  } else {
    try {
      size_t used = 0;
      rv = std::stoull(rv_text, &used);
      if (used != rv_text.size()) throw std::invalid_argument("rv");
    } catch (...) {
      // As the real server: 500, a Status without a reason.
      Response r{500, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                      R"("message":"invalid resource version","code":500})"};
      http::response<http::string_body> res{http::status::internal_server_error, 11};
      res.set(http::field::content_type, "application/json");
      res.body() = r.body;
      res.keep_alive(false);
      res.prepare_payload();
      error_code ec;
      http::write(stream, res, ec);
      return;
    }
  }
  int timeout = options.max_watch_timeout_seconds;
  if (auto it = query.find("timeoutSeconds"); it != query.end()) {
    try {
      timeout = std::clamp(std::stoi(it->second), 1, options.max_watch_timeout_seconds);
    } catch (...) {
    }
  }
  const bool bookmarks = query["allowWatchBookmarks"] == "true";
  const auto deadline = Clock::now() + std::chrono::seconds(timeout);
  const uint64_t generation = drop_generation.load();
  {
    std::lock_guard lock(mu);
    ++watches_open;
    ++watches_total;
  }
  struct Count {
    Impl& im;
    ~Count() {
      std::lock_guard lock(im.mu);
      --im.watches_open;
    }
  } count{*this};

  http::response<http::empty_body> res{http::status::ok, 11};
  res.set(http::field::content_type, "application/json");
  res.chunked(true);
  res.keep_alive(false);
  http::response_serializer<http::empty_body> sr{res};
  error_code ec;
  http::write_header(stream, sr, ec);
  if (ec) return;

  auto send = [&](std::string_view type, std::string_view object) {
    std::string line =
        R"({"type":")" + std::string(type) + R"(","object":)" + std::string(object) + "}\n";
    net::write(stream, http::make_chunk(net::buffer(line)), ec);
    return !ec;
  };
  if (initial) {
    auto listing = store.list(t.kind, t.namespace_);
    for (const auto& item : listing.items) {
      if (!field_name.empty() && item.name != field_name) continue;
      if (!send("ADDED", item.json)) return;
    }
    rv = listing.resource_version;
  }
  auto next_bookmark = Clock::now() + options.bookmark_interval;
  for (;;) {
    if (stopping || drop_generation.load() != generation) return;  // abrupt: no last chunk
    if (Clock::now() >= deadline) break;
    const uint64_t before = store.resource_version();
    auto changes = store.changes_since(t.kind, rv, t.namespace_);
    if (!changes) {
      send("ERROR", status_json(410, changes.error().message, "Expired"));
      break;
    }
    for (const auto& e : *changes) {
      if (!field_name.empty() && e.object.name != field_name) continue;
      if (!send(state::to_string(e.type), e.object.json)) return;
    }
    if (!changes->empty()) rv = std::max(rv, changes->back().object.resource_version);
    rv = std::max(rv, before);
    if (bookmarks && Clock::now() >= next_bookmark) {
      const std::string object = R"({"kind":")" + std::string(state::to_string(t.kind)) +
                                 R"(","apiVersion":")" + api_version_of(t.kind) +
                                 R"(","metadata":{"resourceVersion":")" + std::to_string(rv) +
                                 R"("}})";
      if (!send("BOOKMARK", object)) return;
      next_bookmark = Clock::now() + options.bookmark_interval;
    }
    auto wake = std::min(deadline, next_bookmark);
    if (!bookmarks) wake = std::min(deadline, Clock::now() + std::chrono::milliseconds(500));
    store.wait_for_change(rv, wake);
  }
  net::write(stream, http::make_chunk_last(), ec);
}

FakeApiServer::FakeApiServer(state::ObjectStore& store, FakeApiServerOptions options)
    : impl_(std::make_unique<Impl>(store, std::move(options))) {}

FakeApiServer::~FakeApiServer() {
  stop();
}

Status FakeApiServer::start() {
  Impl& im = *impl_;
  if (im.options.tls) {
    im.ctx.emplace(ssl::context::tls_server);
    error_code ec;
    im.ctx->use_certificate_chain_file(im.options.cert_file, ec);
    if (ec) return make_error("server certificate: " + ec.message());
    im.ctx->use_private_key_file(im.options.key_file, ssl::context::pem, ec);
    if (ec) return make_error("server key: " + ec.message());
    if (!im.options.client_ca_file.empty()) {
      im.ctx->load_verify_file(im.options.client_ca_file, ec);
      if (ec) return make_error("client CA: " + ec.message());
      auto mode = ssl::verify_peer;
      if (im.options.require_client_cert) mode |= ssl::verify_fail_if_no_peer_cert;
      im.ctx->set_verify_mode(mode);
    }
  }
  error_code ec;
  im.acceptor.emplace(im.ioc);
  tcp::endpoint ep(net::ip::make_address("127.0.0.1"), 0);
  im.acceptor->open(ep.protocol(), ec);
  if (!ec) im.acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) im.acceptor->bind(ep, ec);
  if (!ec) im.acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) return make_error("listen: " + ec.message());
  im.port = im.acceptor->local_endpoint().port();
  im.do_accept();
  im.accept_thread = std::thread([&im] { im.ioc.run(); });
  return ok_status();
}

void FakeApiServer::stop() {
  Impl& im = *impl_;
  if (im.stopping.exchange(true)) return;
  if (im.accept_thread.joinable()) {
    net::post(im.ioc, [&im] {
      error_code ignored;
      if (im.acceptor) im.acceptor->close(ignored);
    });
    im.accept_thread.join();
  }
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(im.mu);
    for (const auto& [id, fd] : im.open_fds) ::shutdown(fd, SHUT_RDWR);
    threads = std::move(im.connections);
  }
  im.delay_changed.notify_all();
  im.store.wake_all();
  for (auto& t : threads) t.join();
}

uint16_t FakeApiServer::port() const {
  return impl_->port;
}

std::string FakeApiServer::url() const {
  return std::string(impl_->options.tls ? "https" : "http") +
         "://127.0.0.1:" + std::to_string(impl_->port);
}

void FakeApiServer::drop_watches() {
  impl_->drop_generation.fetch_add(1);
  impl_->store.wake_all();
}

void FakeApiServer::fail_next(std::string verb, std::string path_prefix, int count, int status) {
  std::lock_guard lock(impl_->mu);
  impl_->rules.push_back(FailRule{std::move(verb), std::move(path_prefix), count, status});
}

void FakeApiServer::clear_failures() {
  std::lock_guard lock(impl_->mu);
  impl_->rules.clear();
}

void FakeApiServer::set_delay(std::chrono::milliseconds delay) {
  {
    std::lock_guard lock(impl_->mu);
    impl_->delay = delay;
  }
  impl_->delay_changed.notify_all();
}

Status FakeApiServer::serve_resource_slices(const std::vector<std::string>& slices) {
  std::map<std::string, std::string> by_name;
  for (size_t i = 0; i < slices.size(); ++i) {
    json::error_code ec;
    const json::value v = json::parse(slices[i], ec);
    const json::value* name = nullptr;
    if (!ec && v.is_object()) {
      if (const auto* meta = v.as_object().if_contains("metadata"); meta && meta->is_object()) {
        name = meta->as_object().if_contains("name");
      }
    }
    if (name == nullptr || !name->is_string() || name->as_string().empty()) {
      return make_error("slices[" + std::to_string(i) + "]: not an object with metadata.name");
    }
    if (!by_name.emplace(std::string(name->as_string()), slices[i]).second) {
      return make_error("slices[" + std::to_string(i) + "]: name used twice");
    }
  }
  std::lock_guard lock(impl_->mu);
  impl_->resource_slices = std::move(by_name);
  impl_->resource_slices_rv = impl_->store.resource_version();
  return Ok{};
}

void FakeApiServer::set_list_hook(std::function<void(const std::string&)> hook) {
  std::lock_guard lock(impl_->mu);
  impl_->list_hook = std::move(hook);
}

void FakeApiServer::set_bearer_token(std::string token) {
  std::lock_guard lock(impl_->mu);
  impl_->token = std::move(token);
}

int FakeApiServer::request_count(std::string_view verb, std::string_view path) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->counts.find({std::string(verb), std::string(path)});
  return it == impl_->counts.end() ? 0 : it->second;
}

int FakeApiServer::open_watches() const {
  std::lock_guard lock(impl_->mu);
  return impl_->watches_open;
}

int FakeApiServer::watches_started() const {
  std::lock_guard lock(impl_->mu);
  return impl_->watches_total;
}

std::vector<std::string> FakeApiServer::request_log() const {
  std::lock_guard lock(impl_->mu);
  return impl_->log;
}

}  // namespace hamisim::testing
