#include "extender/http_extender.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "extender/extender_url.h"
#include "go/duration.h"
#include "go/json_key.h"
#include "http/client_transport.h"
#include "model/json_writer.h"

namespace hamisim::extender {

namespace od = simdjson::ondemand;

// ---- interest ---------------------------------------------------------------------------

bool is_interested(const model::Pod& pod, const std::set<std::string, std::less<>>& managed) {
  if (managed.empty()) return true;
  auto names_any = [&](const model::ResourceList& list) {
    for (const auto& [name, quantity] : list) {
      if (managed.count(name)) return true;
    }
    return false;
  };
  for (const auto* containers : {&pod.spec.containers, &pod.spec.init_containers}) {
    for (const model::Container& c : *containers) {
      if (names_any(c.resources.requests) || names_any(c.resources.limits)) return true;
    }
  }
  return false;
}

// ---- request encoding -------------------------------------------------------------------

std::string encode_filter_args(const FilterRequest& request, bool node_cache_capable) {
  model::JsonWriter w;
  size_t bytes = request.pod_json.size() + 128;
  for (const auto& n : request.nodes) bytes += n.json.size() + n.name.size() + 4;
  w.reserve(bytes);
  w.begin_object();
  w.key("Pod");
  if (request.pod_json.empty()) {
    w.null();
  } else {
    w.raw(request.pod_json);
  }
  if (node_cache_capable) {
    w.key("Nodes").null();
    w.key("NodeNames").begin_array();
    for (const auto& n : request.nodes) w.string(n.name);
    w.end_array();
  } else {
    w.key("Nodes").begin_object();
    w.key("metadata").begin_object().end_object();
    w.key("items").begin_array();
    for (const auto& n : request.nodes) w.raw(n.json);
    w.end_array().end_object();
    w.key("NodeNames").null();
  }
  if (request.simulated_pods != nullptr && !request.simulated_pods->empty()) {
    w.key("SimulatedPods").begin_object();
    for (const auto& [node, pods] : *request.simulated_pods) {  // sorted, as Go writes maps
      w.key(node).begin_array();
      for (const auto& pod : pods) w.raw(pod);
      w.end_array();
    }
    w.end_object();
  }
  w.end_object();
  return w.take();
}

// ---- response decoding ------------------------------------------------------------------

namespace {

std::string json_problem(std::string_view where, simdjson::error_code e) {
  return std::string(where) + ": " + simdjson::error_message(e);
}

// How an answer's unexpected JSON type is named in its error ("got a list").
const char* type_words(od::json_type t) {
  switch (t) {
    case od::json_type::array:
      return "a list";
    case od::json_type::object:
      return "an object";
    case od::json_type::number:
      return "a number";
    case od::json_type::string:
      return "a string";
    case od::json_type::boolean:
      return "a boolean";
    case od::json_type::null:
      return "null";
  }
  return "?";
}

Result<od::json_type> type_of(od::value& v, std::string_view where) {
  od::json_type t;
  if (auto e = v.type().get(t)) return make_error(json_problem(where, e));
  return t;
}

// A string, or "" for null (Go leaves the zero value).
Result<std::string> read_string(od::value& v, std::string_view where) {
  auto t = type_of(v, where);
  if (!t) return t.error();
  if (*t == od::json_type::null) return std::string();
  if (*t != od::json_type::string) {
    return make_error(std::string(where) + ": expected a string, got " + type_words(*t));
  }
  std::string_view s;
  if (auto e = v.get_string().get(s)) return make_error(json_problem(where, e));
  return std::string(s);
}

// {string: string}; null leaves the map alone. Duplicate keys: the last wins (Go).
Status read_string_map(od::value& v, std::string_view where,
                       std::map<std::string, std::string, std::less<>>& out) {
  auto t = type_of(v, where);
  if (!t) return t.error();
  if (*t == od::json_type::null) return ok_status();
  if (*t != od::json_type::object) {
    return make_error(std::string(where) + ": expected an object, got " + type_words(*t));
  }
  od::object obj;
  if (auto e = v.get_object().get(obj)) return make_error(json_problem(where, e));
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return make_error(json_problem(where, e));
    const std::string k(key);
    od::value value = field.value();
    auto s = read_string(value, std::string(where) + "[" + k + "]");
    if (!s) return s.error();
    out[k] = std::move(*s);
  }
  return ok_status();
}

// metadata.name of a Node object (keys case-insensitive), read with its own parser from a view
// inside a padded buffer.
Result<std::string> node_name(std::string_view raw, size_t capacity, std::string_view where) {
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(raw.data(), raw.size(), capacity).get(doc)) {
    return make_error(json_problem(where, e));
  }
  od::object obj;
  if (auto e = doc.get_object().get(obj)) return make_error(json_problem(where, e));
  std::string name;
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return make_error(json_problem(where, e));
    if (!go::json_key_matches(key, "metadata")) continue;
    od::value meta = field.value();
    auto t = type_of(meta, where);
    if (!t) return t.error();
    if (*t == od::json_type::null) continue;
    if (*t != od::json_type::object) {
      return make_error(std::string(where) + ".metadata: expected an object");
    }
    od::object mobj;
    if (auto e = meta.get_object().get(mobj)) return make_error(json_problem(where, e));
    for (auto mfield : mobj) {
      std::string_view mkey;
      if (auto e = mfield.unescaped_key().get(mkey)) return make_error(json_problem(where, e));
      if (!go::json_key_matches(mkey, "name")) continue;
      od::value nv = mfield.value();
      auto s = read_string(nv, std::string(where) + ".metadata.name");
      if (!s) return s.error();
      name = std::move(*s);
    }
  }
  return name;
}

struct RawResult {
  bool nodes_present = false;
  std::vector<std::string> node_items;  // raw JSON
  std::vector<std::string> node_item_names;
  bool node_names_present = false;
  std::vector<std::string> node_names;
  std::string error;
  FilterResult result;  // failure maps and extensions
};

Status decode_nodes(od::value& v, const char* buffer_end, RawResult& out) {
  auto t = type_of(v, "Nodes");
  if (!t) return t.error();
  if (*t == od::json_type::null) {
    out.nodes_present = false;
    out.node_items.clear();
    out.node_item_names.clear();
    return ok_status();
  }
  if (*t != od::json_type::object) {
    return make_error(std::string("Nodes: expected a NodeList object, got ") + type_words(*t));
  }
  out.nodes_present = true;
  od::object obj;
  if (auto e = v.get_object().get(obj)) return make_error(json_problem("Nodes", e));
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return make_error(json_problem("Nodes", e));
    if (!go::json_key_matches(key, "items")) continue;
    od::value items = field.value();
    auto it = type_of(items, "Nodes.items");
    if (!it) return it.error();
    out.node_items.clear();
    out.node_item_names.clear();
    if (*it == od::json_type::null) continue;
    if (*it != od::json_type::array) {
      return make_error(std::string("Nodes.items: expected a list, got ") + type_words(*it));
    }
    od::array arr;
    if (auto e = items.get_array().get(arr)) return make_error(json_problem("Nodes.items", e));
    size_t i = 0;
    for (auto element : arr) {
      const std::string where = "Nodes.items[" + std::to_string(i++) + "]";
      od::value item;
      if (auto e = element.get(item)) return make_error(json_problem(where, e));
      auto itype = type_of(item, where);
      if (!itype) return itype.error();
      if (*itype == od::json_type::null) {  // a zero Node: no name
        out.node_items.emplace_back("null");
        out.node_item_names.emplace_back();
        continue;
      }
      if (*itype != od::json_type::object) {
        return make_error(where + ": expected a Node object, got " + type_words(*itype));
      }
      od::object node;
      std::string_view raw;
      if (auto e = item.get_object().get(node)) return make_error(json_problem(where, e));
      if (auto e = node.raw_json().get(raw)) return make_error(json_problem(where, e));
      auto name = node_name(raw, static_cast<size_t>(buffer_end - raw.data()), where);
      if (!name) return name.error();
      out.node_items.emplace_back(raw);
      out.node_item_names.push_back(std::move(*name));
    }
  }
  return ok_status();
}

Status decode_node_names(od::value& v, RawResult& out) {
  auto t = type_of(v, "NodeNames");
  if (!t) return t.error();
  out.node_names.clear();
  out.node_names_present = false;
  if (*t == od::json_type::null) return ok_status();
  if (*t != od::json_type::array) {
    return make_error(std::string("NodeNames: expected a list of strings, got ") + type_words(*t));
  }
  out.node_names_present = true;
  od::array arr;
  if (auto e = v.get_array().get(arr)) return make_error(json_problem("NodeNames", e));
  size_t i = 0;
  for (auto element : arr) {
    const std::string where = "NodeNames[" + std::to_string(i++) + "]";
    od::value item;
    if (auto e = element.get(item)) return make_error(json_problem(where, e));
    auto s = read_string(item, where);
    if (!s) return s.error();
    out.node_names.push_back(std::move(*s));
  }
  return ok_status();
}

Status decode_allocations(od::value& v, FilterResult& out) {
  auto t = type_of(v, "Allocations");
  if (!t) return t.error();
  if (*t == od::json_type::null) return ok_status();
  if (*t != od::json_type::object) {
    return make_error(std::string("Allocations: expected an object, got ") + type_words(*t));
  }
  od::object obj;
  if (auto e = v.get_object().get(obj)) return make_error(json_problem("Allocations", e));
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return make_error(json_problem("Allocations", e));
    const std::string node(key);
    od::value value = field.value();
    if (Status s = read_string_map(value, "Allocations[" + node + "]", out.allocations[node]); !s)
      return s;
  }
  return ok_status();
}

Status decode_diagnostics(od::value& v, FilterResult& out) {
  auto t = type_of(v, "Diagnostics");
  if (!t) return t.error();
  if (*t == od::json_type::null) return ok_status();
  if (*t != od::json_type::object) {
    return make_error(std::string("Diagnostics: expected an object, got ") + type_words(*t));
  }
  od::object obj;
  if (auto e = v.get_object().get(obj)) return make_error(json_problem("Diagnostics", e));
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return make_error(json_problem("Diagnostics", e));
    const std::string node(key);
    const std::string where = "Diagnostics[" + node + "]";
    od::value value = field.value();
    auto vt = type_of(value, where);
    if (!vt) return vt.error();
    if (*vt == od::json_type::null) continue;
    if (*vt != od::json_type::object) {
      return make_error(where + ": expected an object, got " + type_words(*vt));
    }
    NodeDiagnostic& d = out.diagnostics[node];
    od::object dobj;
    if (auto e = value.get_object().get(dobj)) return make_error(json_problem(where, e));
    for (auto dfield : dobj) {
      std::string_view dkey;
      if (auto e = dfield.unescaped_key().get(dkey)) return make_error(json_problem(where, e));
      std::string* target = go::json_key_matches(dkey, "Class")          ? &d.fit_class
                            : go::json_key_matches(dkey, "Reason")       ? &d.reason
                            : go::json_key_matches(dkey, "DeviceSource") ? &d.device_source
                            : go::json_key_matches(dkey, "Profile")      ? &d.profile
                                                                         : nullptr;
      if (target == nullptr) continue;
      od::value dv = dfield.value();
      auto s = read_string(dv, where + "." + std::string(dkey));
      if (!s) return s.error();
      *target = std::move(*s);
    }
  }
  return ok_status();
}

Result<RawResult> decode_raw(std::string_view body) {
  RawResult out;
  simdjson::padded_string padded(body);
  const char* buffer_end = padded.data() + padded.size() + simdjson::SIMDJSON_PADDING;
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(padded).get(doc)) return make_error(simdjson::error_message(e));
  od::json_type t;
  if (auto e = doc.type().get(t)) return make_error(simdjson::error_message(e));
  if (t == od::json_type::null) return out;  // Go: decoding null into the struct is a no-op
  if (t != od::json_type::object) {
    return make_error(std::string("expected an ExtenderFilterResult object, got ") + type_words(t));
  }
  od::object obj;
  if (auto e = doc.get_object().get(obj)) return make_error(simdjson::error_message(e));
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return make_error(simdjson::error_message(e));
    od::value v;
    if (auto e = field.value().get(v)) return make_error(json_problem(key, e));
    Status s = ok_status();
    if (go::json_key_matches(key, "Nodes")) {
      s = decode_nodes(v, buffer_end, out);
    } else if (go::json_key_matches(key, "NodeNames")) {
      s = decode_node_names(v, out);
    } else if (go::json_key_matches(key, "FailedNodes")) {
      s = read_string_map(v, "FailedNodes", out.result.failed_nodes);
    } else if (go::json_key_matches(key, "FailedAndUnresolvableNodes")) {
      s = read_string_map(v, "FailedAndUnresolvableNodes",
                          out.result.failed_and_unresolvable_nodes);
    } else if (go::json_key_matches(key, "Error")) {
      auto e = read_string(v, "Error");
      if (!e) return e.error();
      out.error = std::move(*e);
    } else if (go::json_key_matches(key, "Allocations")) {
      s = decode_allocations(v, out.result);
    } else if (go::json_key_matches(key, "Diagnostics")) {
      s = decode_diagnostics(v, out.result);
    }
    if (!s) return s.error();
  }
  return out;
}

}  // namespace

namespace {

// HTTPExtender.Filter's steps 4-7 on a decoded body.
Result<FilterResult> apply_result_rules(RawResult&& raw, const FilterRequest& request,
                                        bool node_cache_capable, std::string_view extender_name) {
  if (!raw.error.empty()) return make_error(raw.error);
  FilterResult result = std::move(raw.result);
  result.called = true;
  std::set<std::string, std::less<>> seen;
  if (node_cache_capable && raw.node_names_present) {
    for (const std::string& name : raw.node_names) {
      const bool known = std::any_of(request.nodes.begin(), request.nodes.end(),
                                     [&](const CandidateNode& n) { return n.name == name; });
      if (!known) {
        return make_error("extender \"" + std::string(extender_name) +
                          "\" claims a filtered node \"" + name +
                          "\" which is not found in the input node list");
      }
      if (seen.insert(name).second) result.passed.push_back(name);
    }
  } else if (raw.nodes_present) {
    for (size_t i = 0; i < raw.node_items.size(); ++i) {
      if (!seen.insert(raw.node_item_names[i]).second) continue;
      result.passed.push_back(raw.node_item_names[i]);
      result.passed_json.push_back(std::move(raw.node_items[i]));
    }
  }
  return result;
}

}  // namespace

Result<FilterResult> decode_filter_result(std::string_view body, const FilterRequest& request,
                                          bool node_cache_capable, std::string_view extender_name) {
  auto raw = decode_raw(body);
  if (!raw) return raw.error();
  return apply_result_rules(std::move(*raw), request, node_cache_capable, extender_name);
}

// ---- the client -------------------------------------------------------------------------

struct HttpExtender::Impl {
  std::unique_ptr<http::ClientTransport> transport;
  std::string target;
};

namespace {

// kube-scheduler's makeTransport: TLS from tlsConfig, *Data winning over *File.
Result<http::TlsSettings> tls_settings(const ExtenderTlsConfig& tls, bool insecure) {
  http::TlsSettings out;
  if (insecure) {
    out.skip_verification();
  } else if (!tls.ca_data.empty()) {
    if (auto s = out.trust_pem(tls.ca_data); !s) {
      return make_error("tlsConfig.caData: " + s.error().message + " " +
                        http::take_openssl_errors());
    }
  } else if (!tls.ca_file.empty()) {
    if (auto s = out.trust_file(tls.ca_file); !s) {
      return make_error("tlsConfig.caFile " + tls.ca_file + ": " + s.error().message + " " +
                        http::take_openssl_errors());
    }
  } else if (auto s = out.trust_system(); !s) {
    return make_error("system trust store: " + s.error().message);
  }
  const bool cert = !tls.cert_data.empty() || !tls.cert_file.empty();
  const bool key = !tls.key_data.empty() || !tls.key_file.empty();
  if (cert != key) {
    return make_error(cert ? "tlsConfig: a client certificate needs a key"
                           : "tlsConfig: a client key needs a certificate");
  }
  if (cert) {
    if (!tls.cert_data.empty()) {
      if (auto s = out.use_certificate_chain_pem(tls.cert_data); !s) {
        return make_error("tlsConfig.certData: " + s.error().message);
      }
    } else if (auto s = out.use_certificate_chain_file(tls.cert_file); !s) {
      return make_error("tlsConfig.certFile " + tls.cert_file + ": " + s.error().message);
    }
    if (!tls.key_data.empty()) {
      if (auto s = out.use_private_key_pem(tls.key_data); !s) {
        return make_error("tlsConfig.keyData: " + s.error().message);
      }
    } else if (auto s = out.use_private_key_file(tls.key_file); !s) {
      return make_error("tlsConfig.keyFile " + tls.key_file + ": " + s.error().message);
    }
    if (!out.private_key_matches()) {
      return make_error("tlsConfig: the client key does not match the certificate");
    }
  }
  out.set_server_name(tls.server_name);
  return out;
}

}  // namespace

HttpExtender::HttpExtender(ExtenderConfig config, std::unique_ptr<Impl> impl)
    : config_(std::move(config)), impl_(std::move(impl)) {}
HttpExtender::~HttpExtender() = default;

Result<std::unique_ptr<HttpExtender>> HttpExtender::create(const ExtenderConfig& config) {
  if (config.url_prefix.empty()) return make_error("urlPrefix is required");
  const std::string filter_url = join_extender_url(config.url_prefix, config.filter_verb);
  auto url = parse_extender_url(filter_url);
  if (!url) return url.error();

  std::vector<std::string> warnings;
  bool skipped = false;
  std::optional<http::TlsSettings> tls;
  if (url->scheme == "https") {
    ExtenderTlsConfig tls_config = config.tls_config.value_or(ExtenderTlsConfig{});
    const bool has_ca = !tls_config.ca_file.empty() || !tls_config.ca_data.empty();
    bool insecure = tls_config.insecure;
    if (config.enable_https && !has_ca && !insecure) {
      insecure = true;
      warnings.push_back(
          "enableHTTPS without caFile or caData: the server certificate is not verified");
    } else if (tls_config.insecure) {
      warnings.push_back("tlsConfig.insecure: the server certificate is not verified");
    }
    if (insecure && has_ca) {
      return make_error(
          "specifying a root certificates file with the insecure flag is not allowed");
    }
    skipped = insecure;
    auto settings = tls_settings(tls_config, insecure);
    if (!settings) return settings.error();
    tls = std::move(*settings);
  }

  auto impl = std::make_unique<Impl>();
  impl->target = url->target;
  http::TransportOptions options;
  options.max_response_bytes = size_t(256) << 20;
  impl->transport = std::make_unique<http::ClientTransport>(
      http::Endpoint{url->host, url->port, url->host_header}, std::nullopt, std::move(tls),
      std::move(options));
  auto ext = std::unique_ptr<HttpExtender>(new HttpExtender(config, std::move(impl)));
  ext->filter_url_ = filter_url;
  for (const auto& r : config.managed_resources) ext->managed_.insert(r.name);
  ext->verification_skipped_ = skipped;
  ext->warnings_ = std::move(warnings);
  return ext;
}

bool HttpExtender::is_interested(const model::Pod& pod) const {
  return extender::is_interested(pod, managed_);
}

HttpExtenderStats HttpExtender::stats() const {
  const http::TransportStats s = impl_->transport->stats();
  return HttpExtenderStats{s.exchanges, s.connections_opened};
}

Result<FilterResult> HttpExtender::filter(const FilterRequest& request) const {
  if (!config_.is_filter()) {
    FilterResult unchanged;
    for (const auto& n : request.nodes) unchanged.passed.emplace_back(n.name);
    return unchanged;
  }
  const auto deadline = http::Clock::now() + std::chrono::duration_cast<http::Clock::duration>(
                                                 config_.effective_timeout());
  const std::string body = encode_filter_args(request, config_.node_cache_capable);
  const std::string post = "Post \"" + filter_url_ + "\": ";

  http::Request wire;
  wire.method = "POST";
  wire.target = impl_->target;
  wire.content_type = "application/json";
  wire.body = body;
  http::RoundTrip trip = impl_->transport->round_trip(wire, deadline);
  if (!trip.ok()) {
    const http::Failure& f = trip.failure;
    // Go's http.Client reports any failure past its deadline as the client's timeout.
    if (f.why == http::Failure::Why::kTimeout ||
        (f.stage == http::Failure::Stage::kConnect && http::Clock::now() >= deadline)) {
      return make_error(post + "timeout after " + go::format_duration(config_.effective_timeout()) +
                        " (Client.Timeout exceeded)");
    }
    return make_error(post + f.message);
  }
  if (trip.response->status != 200) {
    return make_error("failed " + config_.filter_verb + " with extender at URL " + filter_url_ +
                      ", code " + std::to_string(trip.response->status));
  }
  auto raw = decode_raw(trip.response->body);
  if (!raw) {
    return make_error("failed to decode filter response from extender at URL " + filter_url_ +
                      ": " + raw.error().message);
  }
  return apply_result_rules(std::move(*raw), request, config_.node_cache_capable, name());
}

}  // namespace hamisim::extender
