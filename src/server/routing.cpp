#include "server/routing.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "server/http_text.h"
#include "server/server_impl.h"

namespace hamisim::server {

Result<RouteTable> RouteTable::build(std::vector<Route> routes) {
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

const Route* HttpServer::Impl::find_route(const RouteTable& table, std::string_view method,
                                          std::string_view target) {
  auto it = table.by_path.find(target);
  if (it == table.by_path.end()) return nullptr;
  const Route* get = nullptr;
  for (size_t i : it->second) {
    if (table.routes[i].method == method) return &table.routes[i];
    if (table.routes[i].method == "GET") get = &table.routes[i];
  }
  return method == "HEAD" ? get : nullptr;
}

HttpResponse HttpServer::Impl::simulation_overloaded() const {
  HttpResponse r = HttpResponse::error(
      429, fmt::format("overloaded: more than {} bytes of simulation request bodies in flight "
                       "(--max-inflight-simulation-bytes)",
                       config.max_inflight_simulation_bytes));
  r.headers.emplace_back("Retry-After", "1");
  return r;
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

}  // namespace hamisim::server
