#include "server/plan_api.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>

#include "dra/decode.h"
#include "go/duration.h"
#include "model/decode.h"
#include "model/json_writer.h"
#include "planner/extender/scheduler_config.h"
#include "planner/modes/compare_modes.h"
#include "planner/report/report.h"

namespace hamisim::server {

namespace json = boost::json;

namespace {

HttpResponse error_response(int status, std::string_view cls, const std::string& message) {
  std::string body = "{\"error\":";
  model::append_go_json_string(body, std::string(cls) + message);
  body += "}";
  HttpResponse r = HttpResponse::json(status, std::move(body));
  r.outcome = status >= 500 ? "server_error" : "client_error";
  return r;
}

HttpResponse invalid(const std::string& message) {
  return error_response(400, "invalid request: ", message);
}

Result<json::object> parse_body(const HttpRequest& request) {
  json::error_code ec;
  json::value v = json::parse(request.body, ec);
  if (ec) return make_error("body is not JSON: " + ec.message());
  if (!v.is_object()) return make_error("body must be a JSON object");
  return std::move(v.as_object());
}

// Objects embedded in the request are decoded by the model's own decoders, so they follow
// exactly the rules of every other input (Go field rules, precise errors).
Result<std::vector<model::Pod>> pods_at(const json::object& body, std::string_view key) {
  const json::value* v = body.if_contains(key);
  if (v == nullptr || v->is_null()) return std::vector<model::Pod>{};
  if (!v->is_array()) return make_error(std::string(key) + ": must be a list of Pods");
  std::vector<model::Pod> out;
  const json::array& items = v->as_array();
  out.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    auto pod = model::decode_pod_json(json::serialize(items[i]));
    if (!pod) {
      return make_error(std::string(key) + "[" + std::to_string(i) + "]: " + pod.error().message);
    }
    out.push_back(std::move(pod).value());
  }
  return out;
}

Result<int64_t> int_at(const json::object& o, std::string_view key, int64_t fallback) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return fallback;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64() && v->as_uint64() <= static_cast<uint64_t>(INT64_MAX)) {
    return static_cast<int64_t>(v->as_uint64());
  }
  return make_error(std::string(key) + ": must be an integer");
}

Result<bool> bool_at(const json::object& o, std::string_view key, bool fallback) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return fallback;
  if (!v->is_bool()) return make_error(std::string(key) + ": must be true or false");
  return v->as_bool();
}

Result<std::optional<std::string>> string_at(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return std::optional<std::string>{};
  if (!v->is_string()) return make_error(std::string(key) + ": must be a string");
  return std::optional<std::string>(std::string(v->as_string()));
}

// `compare_modes`: options.compareModes (plan_comparing_modes; not a PlannerOptions field, since
// the planner below planner/modes does not act on it).
Status read_options(const json::object& body, planner::scaleup::PlannerOptions& o,
                    bool& compare_modes) {
  const json::value* v = body.if_contains("options");
  if (v == nullptr || v->is_null()) return ok_status();
  if (!v->is_object()) return make_error("options: must be an object");
  const json::object& opts = v->as_object();
  static constexpr std::string_view kKnown[] = {"expander",
                                                "priorityConfig",
                                                "maxNodesTotal",
                                                "maxNodesPerScaleup",
                                                "maxNodegroupBinpackingDuration",
                                                "maxBinpackingTime",
                                                "balanceSimilarNodeGroups",
                                                "fastpathBinpackingEnabled",
                                                "expendablePodsPriorityCutoff",
                                                "seed",
                                                "compareUnpatchedCa",
                                                "compareModes"};
  for (const auto& kv : opts) {
    if (std::find(std::begin(kKnown), std::end(kKnown), kv.key()) == std::end(kKnown)) {
      return make_error("options." + std::string(kv.key()) + ": unknown option");
    }
  }
  auto fail = [](const Error& e) { return make_error("options." + e.message); };
  if (auto s = string_at(opts, "expander"); !s)
    return fail(s.error());
  else if (*s)
    o.expander = **s;
  if (auto s = string_at(opts, "priorityConfig"); !s)
    return fail(s.error());
  else if (*s)
    o.priority_config = **s;
  if (auto n = int_at(opts, "maxNodesTotal", o.max_nodes_total); !n)
    return fail(n.error());
  else
    o.max_nodes_total = *n;
  if (auto n = int_at(opts, "maxNodesPerScaleup", o.max_nodes_per_scaleup); !n || *n < 0) {
    return make_error("options.maxNodesPerScaleup: must be a non-negative integer");
  } else {
    o.max_nodes_per_scaleup = *n;
  }
  for (auto [key, target] :
       {std::pair{"maxNodegroupBinpackingDuration", &o.max_nodegroup_binpacking_duration},
        std::pair{"maxBinpackingTime", &o.max_binpacking_time}}) {
    auto s = string_at(opts, key);
    if (!s) return fail(s.error());
    if (!*s) continue;
    auto d = go::parse_duration(**s);
    if (!d || d->count() < 0) {
      return make_error("options." + std::string(key) + ": must be a non-negative duration");
    }
    *target = *d;
  }
  if (auto b = bool_at(opts, "balanceSimilarNodeGroups", false); !b)
    return fail(b.error());
  else
    o.balance_similar_node_groups = *b;
  if (auto b = bool_at(opts, "fastpathBinpackingEnabled", false); !b)
    return fail(b.error());
  else
    o.fastpath_binpacking = *b;
  auto cutoff = int_at(opts, "expendablePodsPriorityCutoff", o.expendable_pods_priority_cutoff);
  if (!cutoff || *cutoff < INT32_MIN || *cutoff > INT32_MAX) {
    return make_error("options.expendablePodsPriorityCutoff: must be a 32-bit integer");
  }
  o.expendable_pods_priority_cutoff = static_cast<int32_t>(*cutoff);
  if (auto n = int_at(opts, "seed", 0); !n)
    return fail(n.error());
  else
    o.seed = static_cast<uint64_t>(*n);
  if (auto b = bool_at(opts, "compareUnpatchedCa", false); !b)
    return fail(b.error());
  else
    o.compare_unpatched_ca = *b;
  if (auto b = bool_at(opts, "compareModes", false); !b)
    return fail(b.error());
  else
    compare_modes = *b;
  return ok_status();
}

}  // namespace

std::vector<Route> PlanApi::routes() {
  return {
      {"POST", "/v1/estimate", AuthGroup::kSimulation,
       [this](const HttpRequest& r) { return estimate(r); }, /*heavy=*/true},
      {"POST", "/v1/plan", AuthGroup::kSimulation, [this](const HttpRequest& r) { return plan(r); },
       /*heavy=*/true},
  };
}

std::function<bool()> PlanApi::stop_condition(const HttpRequest& request) const {
  const auto deadline = std::chrono::steady_clock::now() + options_.max_request_time;
  return [&request, deadline] {
    return request.is_abandoned() || std::chrono::steady_clock::now() > deadline;
  };
}

HttpResponse PlanApi::too_long() const {
  return error_response(
      503, "overloaded: ",
      fmt::format("the request ran past the server's limit of {} ms (serve --max-plan-time); "
                  "send fewer pods or nodes, or split the request",
                  options_.max_request_time.count()));
}

HttpResponse PlanApi::estimate(const HttpRequest& request) const {
  auto body = parse_body(request);
  if (!body) return invalid(body.error().message);
  planner::scaleup::EstimateRequest req;
  const json::value* t = body->if_contains("template");
  if (t == nullptr || !t->is_object()) return invalid("template: a Node object is required");
  auto node = model::decode_node_json(json::serialize(*t));
  if (!node) return invalid("template: " + node.error().message);
  if (node->metadata.name.empty()) return invalid("template: metadata.name is required");
  req.template_node = std::move(node).value();
  auto pods = pods_at(*body, "pods");
  if (!pods) return invalid(pods.error().message);
  req.pods = std::move(pods).value();
  auto existing = pods_at(*body, "existingPods");
  if (!existing) return invalid(existing.error().message);
  req.existing_pods = std::move(existing).value();
  auto max_nodes = int_at(*body, "maxNodes", 0);
  if (!max_nodes || *max_nodes < 0) return invalid("maxNodes: must be a non-negative integer");
  req.max_nodes = *max_nodes;
  req.max_duration =
      std::min<std::chrono::nanoseconds>(req.max_duration, options_.max_request_time);
  const auto stop = stop_condition(request);
  req.cancelled = stop;

  auto result = planning_->estimate(req);
  if (!result) return stop() ? too_long() : error_response(500, "", result.error().message);
  model::JsonWriter w;
  w.begin_object();
  w.key("nodeCount").number(result->node_count);
  w.key("placements").begin_array();
  for (const auto& p : result->placements) {
    w.begin_object().key("pod").string(p.pod).key("node").string(p.node);
    w.key("allocations").begin_object();
    for (const auto& [k, v] : p.allocations) w.key(k).string(v);
    w.end_object().end_object();
  }
  w.end_array();
  w.key("unplaced").begin_array();
  for (const auto& u : result->unplaced) {
    w.begin_object().key("pod").string(u.pod).key("reason").string(u.reason).end_object();
  }
  w.end_array();
  w.key("warnings").begin_array();
  for (const auto& m : result->warnings) w.string(m);
  w.end_array();
  w.end_object();
  return HttpResponse::json(200, w.str());
}

HttpResponse PlanApi::plan(const HttpRequest& request) const {
  auto body = parse_body(request);
  if (!body) return invalid(body.error().message);
  planner::scaleup::PlanInput input;
  const json::value* cluster = body->if_contains("cluster");
  if (cluster == nullptr || cluster->is_null()) {
    return invalid(
        "cluster: a List of Nodes, Pods, ResourceQuotas and DRA objects (resource.k8s.io) is "
        "required");
  }
  auto objects = model::decode_objects_json(json::serialize(*cluster), {.dra = true});
  if (!objects) return invalid("cluster: " + objects.error().message);
  dra::Objects dra_objects;
  if (Status s = dra::decode_objects(objects->dra_objects, dra_objects); !s) {
    return invalid("cluster: " + s.error().message);
  }
  input.dra = planner::framework::DraCluster::make_if_any(std::move(dra_objects));
  input.nodes = std::move(objects->nodes);
  input.pods = std::move(objects->pods);
  input.quotas = std::move(objects->quotas);
  if (body->contains("pendingPods")) {
    auto pending = pods_at(*body, "pendingPods");
    if (!pending) return invalid(pending.error().message);
    input.pending = std::move(pending).value();
  }
  const json::value* groups = body->if_contains("nodeGroups");
  if (groups == nullptr || !groups->is_object()) {
    return invalid("nodeGroups: a NodeGroups document is required");
  }
  // JSON is YAML: the node groups parser reads the document as the file would be read.
  auto parsed = planner::nodegroups::parse_node_groups(json::serialize(*groups), "nodeGroups");
  if (!parsed) return invalid(parsed.error().message);
  input.node_groups = std::move(parsed).value();
  planner::scaleup::PlannerOptions options;
  bool compare_modes = false;
  if (Status s = read_options(*body, options, compare_modes); !s) {
    return invalid(s.error().message);
  }
  // The request's budgets never exceed the server's; a per-group duration of 0 ("none") is
  // the server's too.
  const std::chrono::nanoseconds cap = options_.max_request_time;
  options.max_binpacking_time = std::min(options.max_binpacking_time, cap);
  auto& per_group = options.max_nodegroup_binpacking_duration;
  if (per_group.count() == 0 || per_group > cap) per_group = cap;

  const auto stop = stop_condition(request);
  auto plan = compare_modes
                  ? planner::modes::plan_comparing_modes(*planning_, input, options, {}, stop)
                  : planning_->plan(input, options, {}, stop);
  if (!plan) {
    if (stop()) return too_long();
    const bool internal = plan.error().message.rfind("internal", 0) == 0;
    return internal ? error_response(500, "", plan.error().message) : invalid(plan.error().message);
  }
  return HttpResponse::json(200, planner::report::render_json(*plan));
}

}  // namespace hamisim::server
