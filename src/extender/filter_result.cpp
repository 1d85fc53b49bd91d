#include "extender/extender_protocol.h"

#include <simdjson.h>

#include <optional>

#include "go/json_key.h"
#include "model/json_writer.h"

// ExtenderFilterResult both ways: the servers' answers encoded, an extender's answer decoded
// (keys as Go's encoding/json matches them).
namespace hamisim::extender {

namespace od = simdjson::ondemand;

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

// [string]; null leaves the list empty.
Status read_string_list(od::value& v, std::string_view where, std::vector<std::string>& out) {
  auto t = type_of(v, where);
  if (!t) return t.error();
  out.clear();
  if (*t == od::json_type::null) return ok_status();
  if (*t != od::json_type::array) {
    return make_error(std::string(where) + ": expected a list of strings, got " + type_words(*t));
  }
  od::array arr;
  if (auto e = v.get_array().get(arr)) return make_error(json_problem(where, e));
  size_t i = 0;
  for (auto element : arr) {
    const std::string at = std::string(where) + "[" + std::to_string(i++) + "]";
    od::value item;
    if (auto e = element.get(item)) return make_error(json_problem(at, e));
    auto s = read_string(item, at);
    if (!s) return s.error();
    out.push_back(std::move(*s));
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

// A decoded result as Go holds it, owning its texts; the result's views point into it.
struct Decoded {
  std::string body;  // the body with simdjson's padding: Nodes' texts point into it
  std::optional<std::vector<std::pair<std::string, std::string_view>>> nodes;  // name, text
  std::optional<std::vector<std::string>> node_names;
  std::optional<NodeReasons> failed_nodes;
  std::optional<NodeReasons> failed_and_unresolvable_nodes;
  std::string error;
  std::optional<std::map<std::string, Annotations, std::less<>>> allocations;
  std::optional<std::map<std::string, NodeDiagnostic, std::less<>>> diagnostics;
};

// Nodes: null is Go's nil NodeList; items null is an empty list.
Status decode_nodes(od::value& v, const char* buffer_end, Decoded& out) {
  auto t = type_of(v, "Nodes");
  if (!t) return t.error();
  if (*t == od::json_type::null) {
    out.nodes.reset();
    return ok_status();
  }
  if (*t != od::json_type::object) {
    return make_error(std::string("Nodes: expected a NodeList object, got ") + type_words(*t));
  }
  out.nodes.emplace();
  od::object obj;
  if (auto e = v.get_object().get(obj)) return make_error(json_problem("Nodes", e));
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return make_error(json_problem("Nodes", e));
    if (!go::json_key_matches(key, "items")) continue;
    od::value items = field.value();
    auto it = type_of(items, "Nodes.items");
    if (!it) return it.error();
    out.nodes->clear();
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
        out.nodes->emplace_back(std::string(), "null");
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
      out.nodes->emplace_back(std::move(*name), raw);
    }
  }
  return ok_status();
}

Status decode_node_names(od::value& v, Decoded& out) {
  auto t = type_of(v, "NodeNames");
  if (!t) return t.error();
  out.node_names.reset();
  if (*t == od::json_type::null) return ok_status();
  if (*t != od::json_type::array) {
    return make_error(std::string("NodeNames: expected a list of strings, got ") + type_words(*t));
  }
  out.node_names.emplace();
  od::array arr;
  if (auto e = v.get_array().get(arr)) return make_error(json_problem("NodeNames", e));
  size_t i = 0;
  for (auto element : arr) {
    const std::string where = "NodeNames[" + std::to_string(i++) + "]";
    od::value item;
    if (auto e = element.get(item)) return make_error(json_problem(where, e));
    auto s = read_string(item, where);
    if (!s) return s.error();
    out.node_names->push_back(std::move(*s));
  }
  return ok_status();
}

// A FailedNodesMap: null leaves it as it was; an object adds its entries (Go decodes into the
// map it has).
Status decode_reasons(od::value& v, std::string_view where, std::optional<NodeReasons>& out) {
  auto t = type_of(v, where);
  if (!t) return t.error();
  if (*t == od::json_type::null) return ok_status();
  if (!out) out.emplace();
  return read_string_map(v, where, *out);
}

Status decode_allocations(od::value& v, Decoded& out) {
  auto t = type_of(v, "Allocations");
  if (!t) return t.error();
  if (*t == od::json_type::null) return ok_status();
  if (*t != od::json_type::object) {
    return make_error(std::string("Allocations: expected an object, got ") + type_words(*t));
  }
  if (!out.allocations) out.allocations.emplace();
  od::object obj;
  if (auto e = v.get_object().get(obj)) return make_error(json_problem("Allocations", e));
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return make_error(json_problem("Allocations", e));
    const std::string node(key);
    od::value value = field.value();
    if (Status s = read_string_map(value, "Allocations[" + node + "]", (*out.allocations)[node]);
        !s)
      return s;
  }
  return ok_status();
}

Status decode_diagnostics(od::value& v, Decoded& out) {
  auto t = type_of(v, "Diagnostics");
  if (!t) return t.error();
  if (*t == od::json_type::null) return ok_status();
  if (*t != od::json_type::object) {
    return make_error(std::string("Diagnostics: expected an object, got ") + type_words(*t));
  }
  if (!out.diagnostics) out.diagnostics.emplace();
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
    NodeDiagnostic& d = (*out.diagnostics)[node];
    od::object dobj;
    if (auto e = value.get_object().get(dobj)) return make_error(json_problem(where, e));
    for (auto dfield : dobj) {
      std::string_view dkey;
      if (auto e = dfield.unescaped_key().get(dkey)) return make_error(json_problem(where, e));
      od::value dv = dfield.value();
      if (go::json_key_matches(dkey, "Notes")) {
        if (Status s = read_string_list(dv, where + "." + std::string(dkey), d.notes); !s) return s;
        continue;
      }
      std::string* target = go::json_key_matches(dkey, "Class")          ? &d.fit_class
                            : go::json_key_matches(dkey, "Reason")       ? &d.reason
                            : go::json_key_matches(dkey, "DeviceSource") ? &d.device_source
                            : go::json_key_matches(dkey, "Profile")      ? &d.profile
                                                                         : nullptr;
      if (target == nullptr) continue;
      auto s = read_string(dv, where + "." + std::string(dkey));
      if (!s) return s.error();
      *target = std::move(*s);
    }
  }
  return ok_status();
}

std::optional<std::vector<NodeReason>> reason_views(const std::optional<NodeReasons>& reasons) {
  if (!reasons) return std::nullopt;
  std::vector<NodeReason> out;
  out.reserve(reasons->size());
  for (const auto& [node, reason] : *reasons) out.push_back({node, reason});
  return out;
}

// The result's views of what `d` holds.
ExtenderFilterResult views_of(std::shared_ptr<const Decoded> d) {
  ExtenderFilterResult r;
  if (d->nodes) {
    r.nodes.emplace();
    r.nodes->reserve(d->nodes->size());
    for (const auto& [name, json] : *d->nodes) r.nodes->push_back({name, json});
  }
  if (d->node_names) r.node_names.emplace(d->node_names->begin(), d->node_names->end());
  r.failed_nodes = reason_views(d->failed_nodes);
  r.failed_and_unresolvable_nodes = reason_views(d->failed_and_unresolvable_nodes);
  r.error = d->error;
  if (d->allocations) {
    r.allocations.emplace();
    for (const auto& [node, annotations] : *d->allocations) {
      NodeAllocation& a = r.allocations->emplace_back();
      a.node = node;
      a.annotations.assign(annotations.begin(), annotations.end());
    }
  }
  if (d->diagnostics) {
    r.diagnostics.emplace();
    for (const auto& [node, diag] : *d->diagnostics) {
      r.diagnostics->push_back({node,
                                {diag.fit_class,
                                 diag.reason,
                                 diag.device_source,
                                 diag.profile,
                                 {diag.notes.begin(), diag.notes.end()}}});
    }
  }
  r.storage = std::move(d);
  return r;
}

void write_reasons(model::JsonWriter& w, std::string_view key,
                   const std::optional<std::vector<NodeReason>>& reasons) {
  w.key(key);
  if (!reasons) {
    w.null();
    return;
  }
  w.begin_object();
  for (const NodeReason& r : *reasons) w.key(r.node).string(r.reason);
  w.end_object();
}

}  // namespace

std::string encode_filter_result(const ExtenderFilterResult& result,
                                 std::vector<TextInsertion>* insertions) {
  model::JsonWriter w;
  size_t bytes = 256;
  if (result.nodes) {
    for (const NodeText& n : *result.nodes) bytes += (insertions ? 0 : n.json.size()) + 1;
  }
  if (result.diagnostics) bytes += 256 * result.diagnostics->size();
  w.reserve(bytes);
  w.begin_object();
  w.key("Nodes");
  if (result.nodes) {
    w.begin_object();
    w.key("metadata").begin_object().end_object();
    w.key("items").begin_array();
    for (const NodeText& n : *result.nodes) {
      if (insertions == nullptr) {
        w.raw(n.json);
      } else {
        w.raw({});  // the separator
        insertions->push_back({w.str().size(), n.json});
      }
    }
    w.end_array().end_object();
  } else {
    w.null();
  }
  w.key("NodeNames");
  if (result.node_names) {
    w.begin_array();
    for (std::string_view n : *result.node_names) w.string(n);
    w.end_array();
  } else {
    w.null();
  }
  write_reasons(w, "FailedNodes", result.failed_nodes);
  write_reasons(w, "FailedAndUnresolvableNodes", result.failed_and_unresolvable_nodes);
  w.key("Error").string(result.error);
  if (result.allocations) {
    w.key("Allocations").begin_object();
    for (const NodeAllocation& a : *result.allocations) {
      w.key(a.node).begin_object();
      for (const auto& [k, v] : a.annotations) w.key(k).string(v);
      w.end_object();
    }
    w.end_object();
  }
  if (result.diagnostics) {
    w.key("Diagnostics").begin_object();
    for (const auto& [node, d] : *result.diagnostics) {
      w.key(node).begin_object();
      w.key("Class").string(d.fit_class);
      w.key("Reason").string(d.reason);
      w.key("DeviceSource").string(d.device_source);
      w.key("Profile").string(d.profile);
      w.key("Notes").begin_array();
      for (std::string_view n : d.notes) w.string(n);
      w.end_array();
      w.end_object();
    }
    w.end_object();
  }
  w.end_object();
  return w.take();
}

std::string encode_filter_error(std::string_view error) {
  ExtenderFilterResult result;
  result.error = error;
  return encode_filter_result(result);
}

Result<ExtenderFilterResult> decode_filter_result(std::string_view body) {
  auto out = std::make_shared<Decoded>();
  out->body.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  out->body.append(body);
  out->body.append(simdjson::SIMDJSON_PADDING, '\0');
  const char* buffer_end = out->body.data() + out->body.size();
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(out->body.data(), body.size(), out->body.size()).get(doc))
    return make_error(simdjson::error_message(e));
  od::json_type t;
  if (auto e = doc.type().get(t)) return make_error(simdjson::error_message(e));
  // Go: decoding null into the struct is a no-op.
  if (t == od::json_type::null) return views_of(std::move(out));
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
      s = decode_nodes(v, buffer_end, *out);
    } else if (go::json_key_matches(key, "NodeNames")) {
      s = decode_node_names(v, *out);
    } else if (go::json_key_matches(key, "FailedNodes")) {
      s = decode_reasons(v, "FailedNodes", out->failed_nodes);
    } else if (go::json_key_matches(key, "FailedAndUnresolvableNodes")) {
      s = decode_reasons(v, "FailedAndUnresolvableNodes", out->failed_and_unresolvable_nodes);
    } else if (go::json_key_matches(key, "Error")) {
      auto e = read_string(v, "Error");
      if (!e) return e.error();
      out->error = std::move(*e);
    } else if (go::json_key_matches(key, "Allocations")) {
      s = decode_allocations(v, *out);
    } else if (go::json_key_matches(key, "Diagnostics")) {
      s = decode_diagnostics(v, *out);
    }
    if (!s) return s.error();
  }
  return views_of(std::move(out));
}

}  // namespace hamisim::extender
