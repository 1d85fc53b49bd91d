#include "server/plan_api.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <boost/json.hpp>
#include <map>

#include "extender/scheduler_config.h"
#include "go/duration.h"
#include "model/decode.h"
#include "model/json_writer.h"
#include "model/strict_json.h"
#include "planner/modes/compare_modes.h"
#include "planner/report/report.h"
#include "planner/scaleup/plan_input.h"

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

namespace od = simdjson::ondemand;

// A request body read member by member: each member's value is kept as its own text (a view
// into the body), and the objects in it go to the decoders `hamisim plan` reads files with, so
// they follow exactly the same rules: a repeated key in a DRA object is refused, one in a Pod
// merged as Go merges it. (Parsing the body into a Boost.JSON value and serializing the parts
// again, as this file once did, dropped repeated keys before any decoder saw them: a
// ResourceSlice with two `driver`s was read with the last one.) The envelope itself is strict:
// a key given twice, at the top or in `options`, is an error, as it has no meaning.
class RawBody {
 public:
  RawBody() = default;
  RawBody(const RawBody&) = delete;  // the views point into it
  RawBody& operator=(const RawBody&) = delete;

  // Reads `body`, which must stay alive and unchanged while this is used.
  Status read(const std::string& body) {
    // The whole body is checked first (simdjson's On-Demand API validates only what it
    // reads), without building a document.
    if (Status s = model::check_strict_json(
            body, {.unique_keys = false, .finite_numbers = false, .max_depth = 1024});
        !s) {
      constexpr std::string_view kSyntax = "invalid JSON: ";
      const std::string& m = s.error().message;
      return make_error("body is not JSON: " +
                        (m.starts_with(kSyntax) ? m.substr(kSyntax.size()) : m));
    }
    // simdjson reads up to SIMDJSON_PADDING bytes past the end of its input. The server leaves
    // kBodyPadding spare bytes after a request body (http_server.h), so any view into it is
    // readable in place; a body from elsewhere (tests) is copied once.
    if (body.capacity() - body.size() >= simdjson::SIMDJSON_PADDING) {
      text_ = body;
      end_ = body.data() + body.capacity();
    } else {
      own_ = simdjson::padded_string(body);
      text_ = std::string_view(own_.data(), own_.size());
      end_ = own_.data() + own_.size() + simdjson::SIMDJSON_PADDING;
    }
    auto members = object_members(text_, "body");
    if (!members) return members.error();
    members_ = std::move(members).value();
    return ok_status();
  }

  // The text of a top-level member; nullopt when absent or null.
  std::optional<std::string_view> at(std::string_view key) const {
    auto it = members_.find(key);
    if (it == members_.end() || it->second == "null") return std::nullopt;
    return it->second;
  }

  // The members of the object `text` (a view into the body), each key once.
  Result<std::map<std::string, std::string_view, std::less<>>> object_members(
      std::string_view text, std::string_view where) {
    std::map<std::string, std::string_view, std::less<>> out;
    od::document doc;
    if (auto e = parser_.iterate(padded(text)).get(doc)) return fail(where, e);
    od::object o;
    if (doc.get_object().get(o)) return make_error(std::string(where) + ": must be an object");
    for (auto field : o) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return fail(where, e);
      std::string k(key);
      od::value v;
      if (auto e = field.value().get(v)) return fail(where, e);
      auto raw = raw_value(v, where);
      if (!raw) return raw.error();
      if (!out.emplace(k, *raw).second) {
        return make_error(std::string(where) + ": duplicate key \"" + k + "\"");
      }
    }
    return out;
  }

  // The items of the array `text` (a view into the body).
  Result<std::vector<std::string_view>> array_items(std::string_view text, std::string_view where) {
    std::vector<std::string_view> out;
    od::document doc;
    if (auto e = parser_.iterate(padded(text)).get(doc)) return fail(where, e);
    od::array a;
    if (doc.get_array().get(a)) return make_error(std::string(where) + ": must be a list");
    for (auto item : a) {
      od::value v;
      if (auto e = item.get(v)) return fail(where, e);
      auto raw = raw_value(v, where);
      if (!raw) return raw.error();
      out.push_back(*raw);
    }
    return out;
  }

 private:
  static Error fail(std::string_view where, simdjson::error_code e) {
    return make_error(std::string(where) + ": " + simdjson::error_message(e));
  }

  // A value's own text, without the white space simdjson's raw_json() runs on to.
  static Result<std::string_view> raw_value(od::value& v, std::string_view where) {
    od::json_type t;
    if (auto e = v.type().get(t)) return fail(where, e);
    std::string_view raw;
    if (t == od::json_type::object) {
      od::object o;
      if (auto e = v.get_object().get(o)) return fail(where, e);
      if (auto e = o.raw_json().get(raw)) return fail(where, e);
    } else if (t == od::json_type::array) {
      od::array a;
      if (auto e = v.get_array().get(a)) return fail(where, e);
      if (auto e = a.raw_json().get(raw)) return fail(where, e);
    } else {
      raw = v.raw_json_token();
    }
    while (!raw.empty() && model::is_json_space(raw.back())) raw.remove_suffix(1);
    return raw;
  }

  // A view into the body with the readable bytes after it.
  simdjson::padded_string_view padded(std::string_view text) const {
    return simdjson::padded_string_view(text.data(), text.size(), size_t(end_ - text.data()));
  }

  std::string_view text_;
  const char* end_ = nullptr;  // of the readable bytes after text_
  simdjson::padded_string own_;
  od::parser parser_;
  std::map<std::string, std::string_view, std::less<>> members_;
};

// Pods from the text of a list (a member of the body); `key` names it in errors.
Result<std::vector<model::Pod>> pods_in(RawBody& body, std::string_view key) {
  auto text = body.at(key);
  if (!text) return std::vector<model::Pod>{};
  auto items = body.array_items(*text, key);
  if (!items) return make_error(std::string(key) + ": must be a list of Pods");
  std::vector<model::Pod> out;
  out.reserve(items->size());
  for (size_t i = 0; i < items->size(); ++i) {
    auto pod = model::decode_pod_json((*items)[i]);
    if (!pod) {
      return make_error(std::string(key) + "[" + std::to_string(i) + "]: " + pod.error().message);
    }
    out.push_back(std::move(pod).value());
  }
  return out;
}

// `options` (an object of scalars): strict about repeated keys, then read as a Boost.JSON
// object.
Result<json::object> options_in(RawBody& body) {
  auto text = body.at("options");
  if (!text) return json::object();
  auto members = body.object_members(*text, "options");
  if (!members) return members.error();
  json::error_code ec;
  json::value v = json::parse(*text, ec);
  if (ec || !v.is_object()) return make_error("options: must be an object");
  return std::move(v.as_object());
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
Status read_options(const json::object& opts, planner::scaleup::PlannerOptions& o,
                    bool& compare_modes) {
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
  // CA reads a negative --max-nodes-total as "no limit", like 0; a negative limit is more
  // likely a mistake than a way to say that, so it is refused, as `hamisim plan` refuses it.
  if (auto n = int_at(opts, "maxNodesTotal", o.max_nodes_total); !n || *n < 0) {
    return make_error("options.maxNodesTotal: must be a non-negative integer (0: no limit)");
  } else {
    o.max_nodes_total = *n;
  }
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
    // A duration named in the request is CA's, on the wall clock (docs/api.md).
    o.binpacking_wall_clock = true;
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

std::function<bool()> PlanApi::stop_condition(const HttpRequest& request,
                                              std::chrono::steady_clock::time_point start) const {
  const auto deadline = start + options_.max_request_time;
  return [&request, deadline] {
    return request.is_abandoned() || std::chrono::steady_clock::now() > deadline;
  };
}

HttpResponse PlanApi::too_long(std::chrono::steady_clock::time_point start,
                               std::string_view done) const {
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  return error_response(
      503, "overloaded: ",
      fmt::format("the request ran past the server's limit of {} ms (serve --max-plan-time): "
                  "stopped after {} ms {}; send fewer pods or nodes, or split the request",
                  options_.max_request_time.count(), elapsed.count(), done));
}

HttpResponse PlanApi::estimate(const HttpRequest& request) const {
  RawBody body;
  if (Status s = body.read(request.body); !s) return invalid(s.error().message);
  planner::scaleup::EstimateRequest req;
  auto t = body.at("template");
  if (!t || !t->starts_with('{')) return invalid("template: a Node object is required");
  auto node = model::decode_node_json(*t);
  if (!node) return invalid("template: " + node.error().message);
  if (node->metadata.name.empty()) return invalid("template: metadata.name is required");
  req.template_node = std::move(node).value();
  auto pods = pods_in(body, "pods");
  if (!pods) return invalid(pods.error().message);
  req.pods = std::move(pods).value();
  auto existing = pods_in(body, "existingPods");
  if (!existing) return invalid(existing.error().message);
  req.existing_pods = std::move(existing).value();
  json::object scalars;
  if (auto n = body.at("maxNodes")) {
    json::error_code ec;
    scalars["maxNodes"] = json::parse(*n, ec);
  }
  auto max_nodes = int_at(scalars, "maxNodes", 0);
  if (!max_nodes || *max_nodes < 0) return invalid("maxNodes: must be a non-negative integer");
  req.max_nodes = *max_nodes;
  // CA's default binpacking duration, measured in work (planner WorkClock): the same request
  // gets the same answer on a quiet and on a saturated machine. No cap by max_request_time:
  // the deadline ends the request (503) rather than truncating its answer.
  const auto start = std::chrono::steady_clock::now();
  const auto stop = stop_condition(request, start);
  req.cancelled = stop;

  auto result = planning_->estimate(req);
  if (!result || stop()) {
    return stop() ? too_long(start, fmt::format("while packing {} pods", req.pods.size()))
                  : error_response(500, "", result.error().message);
  }
  model::JsonWriter w;
  w.begin_object();
  w.key("nodeCount").number(result->node_count);
  w.key("placements").begin_array();
  for (const auto& p : result->placements) {
    w.begin_object().key("pod").string(p.pod).key("node").string(p.node);
    w.key("allocations").begin_object();
    if (p.allocations) {
      for (const auto& [k, v] : *p.allocations) w.key(k).string(v);
    }
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
  RawBody body;
  if (Status s = body.read(request.body); !s) return invalid(s.error().message);
  planner::scaleup::PlanInputBuilder builder;
  auto cluster = body.at("cluster");
  if (!cluster) {
    return invalid(
        "cluster: a List of Nodes, Pods, ResourceQuotas and DRA objects (resource.k8s.io) is "
        "required");
  }
  auto objects = model::decode_objects_json(*cluster, {.dra = true});
  if (!objects) return invalid("cluster: " + objects.error().message);
  if (Status s = builder.add_cluster(std::move(objects).value()); !s) {
    return invalid("cluster: " + s.error().message);
  }
  if (body.at("pendingPods")) {
    auto pending = pods_in(body, "pendingPods");
    if (!pending) return invalid(pending.error().message);
    builder.set_pending(std::move(pending).value());
  }
  auto groups = body.at("nodeGroups");
  if (!groups || !groups->starts_with('{')) {
    return invalid("nodeGroups: a NodeGroups document is required");
  }
  // JSON is YAML: the node groups parser reads the document as the file would be read
  // (a repeated key is refused there).
  auto parsed = planner::nodegroups::parse_node_groups(*groups, "nodeGroups");
  if (!parsed) return invalid(parsed.error().message);
  builder.set_node_groups(std::move(parsed).value());
  const planner::scaleup::PlanInput input = std::move(builder).finish();
  planner::scaleup::PlannerOptions options;
  bool compare_modes = false;
  auto opts = options_in(body);
  if (!opts) return invalid(opts.error().message);
  if (Status s = read_options(*opts, options, compare_modes); !s) {
    return invalid(s.error().message);
  }
  // Budgets named by the request are CA's, on the wall clock, and never exceed the server's;
  // a per-group duration of 0 ("none") is the server's too. Left out, they are CA's defaults
  // measured in work (deterministic), and only the deadline ends the request.
  if (options.binpacking_wall_clock) {
    const std::chrono::nanoseconds cap = options_.max_request_time;
    options.max_binpacking_time = std::min(options.max_binpacking_time, cap);
    auto& per_group = options.max_nodegroup_binpacking_duration;
    if (per_group.count() == 0 || per_group > cap) per_group = cap;
  }

  const auto start = std::chrono::steady_clock::now();
  const auto stop = stop_condition(request, start);
  // What was done, for the answer when the deadline passes first.
  size_t groups_done = 0, groups_total = 0;
  auto progress = [&](size_t done, size_t total) {
    groups_done = done;
    groups_total = total;
  };
  auto plan = compare_modes
                  ? planner::modes::plan_comparing_modes(*planning_, input, options, progress, stop)
                  : planning_->plan(input, options, progress, stop);
  if (!plan || stop()) {
    if (stop()) {
      return too_long(start, groups_total == 0 ? "before estimating any node group"
                                               : fmt::format("with {} of {} node groups estimated",
                                                             groups_done, groups_total));
    }
    const bool internal = plan.error().message.rfind("internal", 0) == 0;
    return internal ? error_response(500, "", plan.error().message) : invalid(plan.error().message);
  }
  return HttpResponse::json(200, planner::report::render_json(*plan));
}

}  // namespace hamisim::server
