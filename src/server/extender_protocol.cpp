#include "server/extender_protocol.h"

#include <simdjson.h>

#include "model/simdjson_util.h"

#include <optional>
#include <set>
#include <utility>

#include "model/decode.h"
#include "model/json_writer.h"
#include "server/decoded_cache.h"

namespace hamisim::server {
namespace {

namespace od = simdjson::ondemand;

static_assert(model::kJsonPadding >= simdjson::SIMDJSON_PADDING);

bool key_is(std::string_view key, std::string_view name) {
  if (key.size() != name.size()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    char a = key[i], b = name[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = static_cast<char>(b - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

std::string json_error(std::string_view where, simdjson::error_code code) {
  return std::string(where) + ": malformed JSON (" + simdjson::error_message(code) + ")";
}

using model::json::type_name;

// How the Pod, each Node and each simulated pod are decoded. In place: from the body's own
// document as it is iterated, so their bytes go through simdjson's first stage once. From their
// own bytes: each item is skipped in the body to find its end, then parsed again as a document
// of its own. Whatever the first way accepts, the second decodes to the same objects (the
// in-place decoders refuse the malformed JSON on which they could differ); their errors differ
// (a truncated item fails wherever its decoder stopped instead of being named malformed JSON
// by the skip), so a body the first way rejects is decoded again the second way, whose errors
// are the ones callers have always been given. A Pod or Nodes looked up in a cache are always
// taken the second way: their bytes are what they are looked up by.
enum class Items { kInPlace, kOwnBytes };

Status check_object(od::value& v, std::string_view where) {
  od::json_type t;
  if (auto e = v.type().get(t)) return make_error(json_error(where, e));
  if (t != od::json_type::object) {
    return make_error(std::string(where) + ": expected an object, got " +
                      std::string(type_name(t)));
  }
  return ok_status();
}

// Raw text of an object value (a view into the padded buffer), or an error.
Result<std::string_view> raw_object(od::value& v, std::string_view where) {
  if (Status s = check_object(v, where); !s) return s.error();
  od::object o;
  if (auto e = v.get_object().get(o)) return make_error(json_error(where, e));
  std::string_view raw;
  if (auto e = o.raw_json().get(raw)) return make_error(json_error(where, e));
  return raw;
}

// Decodes the object `v` into `out`, a fresh Pod.
Status decode_pod(od::value& v, std::string_view where, Items how, model::Pod& out) {
  if (how == Items::kInPlace) {
    if (Status s = check_object(v, where); !s) return s;
    return model::json::decode_pod(v, where, out);
  }
  auto raw = raw_object(v, where);
  if (!raw) return raw.error();
  auto pod = model::decode_pod_json_in_buffer(*raw, where);
  if (!pod) return pod.error();
  out = std::move(pod).value();
  return ok_status();
}

// The body's "Pod"; with a cache, looked up by its bytes first and decoded from them on a miss.
Status decode_args_pod(od::value& v, Items how, PodCache* cache,
                       std::shared_ptr<const model::Pod>& out) {
  if (cache == nullptr) {
    auto pod = std::make_shared<model::Pod>();
    if (Status s = decode_pod(v, "Pod", how, *pod); !s) return s;
    out = std::move(pod);
    return ok_status();
  }
  auto raw = raw_object(v, "Pod");
  if (!raw) return raw.error();
  auto cached = cache->get(*raw, "Pod");
  if (!cached) return cached.error();
  out = std::move(cached).value();
  return ok_status();
}

// Decodes the object `v` into `out`, a fresh node; `out.raw` is what raw_object returns (the
// object and the whitespace after it) either way. With a cache the node is looked up by those
// bytes first, and decoded from them on a miss.
Status decode_node(od::value& v, std::string_view where, Items how, NodeCache* cache,
                   ExtenderNode& out) {
  if (how == Items::kInPlace && cache == nullptr) {
    if (Status s = check_object(v, where); !s) return s;
    const char* start = v.raw_json_token().data();
    model::Node node;
    if (Status s = model::json::decode_node(v, where, node); !s) return s;
    const char* end = nullptr;
    if (auto e = v.current_location().get(end)) return make_error(json_error(where, e));
    out.decoded = std::make_shared<const fit::KeyedNode>(std::move(node));
    out.raw = std::string_view(start, static_cast<size_t>(end - start));
    return ok_status();
  }
  auto raw = raw_object(v, where);
  if (!raw) return raw.error();
  out.raw = *raw;
  if (cache != nullptr) {
    auto cached = cache->get(*raw, where);
    if (!cached) return cached.error();
    out.decoded = std::move(cached).value();
    return ok_status();
  }
  auto node = model::decode_node_json_in_buffer(*raw, where);
  if (!node) return node.error();
  out.decoded = std::make_shared<const fit::KeyedNode>(std::move(node).value());
  return ok_status();
}

Status decode_nodes(od::value& v, Items how, NodeCache* cache, ExtenderArgs& args) {
  od::json_type t;
  if (auto e = v.type().get(t)) return make_error(json_error("Nodes", e));
  if (t == od::json_type::null) return ok_status();
  if (t != od::json_type::object) {
    return make_error("Nodes: expected a NodeList object, got " + std::string(type_name(t)));
  }
  args.nodes_present = true;
  od::object list;
  if (auto e = v.get_object().get(list)) return make_error(json_error("Nodes", e));
  for (auto field : list) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return make_error(json_error("Nodes", e));
    if (!key_is(key, "items")) continue;
    args.nodes.clear();  // the last duplicate key wins
    od::value items = field.value();
    od::json_type it;
    if (auto e = items.type().get(it)) return make_error(json_error("Nodes.items", e));
    if (it == od::json_type::null) continue;
    if (it != od::json_type::array) {
      return make_error("Nodes.items: expected a list of Node objects, got " +
                        std::string(type_name(it)));
    }
    od::array arr;
    if (auto e = items.get_array().get(arr)) return make_error(json_error("Nodes.items", e));
    size_t index = 0;
    for (auto element : arr) {
      const std::string where = "Nodes.items[" + std::to_string(index) + "]";
      od::value item;
      if (auto e = element.get(item)) return make_error(json_error(where, e));
      if (Status s = decode_node(item, where, how, cache, args.nodes.emplace_back()); !s) return s;
      ++index;
    }
  }
  return ok_status();
}

Status decode_node_names(od::value& v, ExtenderArgs& args) {
  od::json_type t;
  if (auto e = v.type().get(t)) return make_error(json_error("NodeNames", e));
  if (t == od::json_type::null) return ok_status();
  if (t != od::json_type::array) {
    return make_error("NodeNames: expected a list of strings, got " + std::string(type_name(t)));
  }
  args.node_names_present = true;
  args.node_names.clear();
  od::array arr;
  if (auto e = v.get_array().get(arr)) return make_error(json_error("NodeNames", e));
  size_t index = 0;
  for (auto element : arr) {
    std::string_view name;
    if (element.get_string().get(name)) {
      return make_error("NodeNames[" + std::to_string(index) + "]: expected a string");
    }
    args.node_names.emplace_back(name);
    ++index;
  }
  return ok_status();
}

Status decode_simulated_pods(od::value& v, Items how, ExtenderArgs& args) {
  od::json_type t;
  if (auto e = v.type().get(t)) return make_error(json_error("SimulatedPods", e));
  if (t == od::json_type::null) return ok_status();
  if (t != od::json_type::object) {
    return make_error("SimulatedPods: expected an object of node name -> list of pods, got " +
                      std::string(type_name(t)));
  }
  args.simulated_pods.clear();
  od::object obj;
  if (auto e = v.get_object().get(obj)) return make_error(json_error("SimulatedPods", e));
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return make_error(json_error("SimulatedPods", e));
    std::string node(key);
    const std::string where = "SimulatedPods[" + node + "]";
    od::value pods = field.value();
    od::json_type pt;
    if (auto e = pods.type().get(pt)) return make_error(json_error(where, e));
    std::vector<model::Pod>& list = args.simulated_pods[node];
    list.clear();
    if (pt == od::json_type::null) continue;
    if (pt != od::json_type::array) {
      return make_error(where + ": expected a list of pods, got " + std::string(type_name(pt)));
    }
    od::array arr;
    if (auto e = pods.get_array().get(arr)) return make_error(json_error(where, e));
    size_t index = 0;
    for (auto element : arr) {
      const std::string item_where = where + "[" + std::to_string(index) + "]";
      od::value item;
      if (auto e = element.get(item)) return make_error(json_error(item_where, e));
      if (Status s = decode_pod(item, item_where, how, list.emplace_back()); !s) return s;
      ++index;
    }
  }
  return ok_status();
}

// `body` is followed by simdjson's padding.
template <class Fn>
Status for_each_top_level_field(od::parser& parser, std::string_view body, Fn&& fn) {
  od::document doc;
  if (auto e = parser.iterate(body.data(), body.size(), body.size() + simdjson::SIMDJSON_PADDING)
                   .get(doc)) {
    return make_error(json_error("body", e));
  }
  od::object obj;
  if (auto e = doc.get_object().get(obj)) {
    if (e == simdjson::INCORRECT_TYPE) return make_error("body: expected a JSON object");
    return make_error(json_error("body", e));
  }
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return make_error(json_error("body", e));
    od::value v;
    if (auto e = field.value().get(v)) return make_error(json_error(key, e));
    if (Status s = fn(key, v); !s) return s;
  }
  return ok_status();
}

std::shared_ptr<std::string> padded_copy(std::string_view body) {
  auto buffer = std::make_shared<std::string>();
  buffer->reserve(body.size() + simdjson::SIMDJSON_PADDING);
  buffer->append(body);
  buffer->append(simdjson::SIMDJSON_PADDING, '\0');
  return buffer;
}

od::parser& thread_parser() {
  // One parser per thread: parsers keep their buffers between requests and are not
  // thread-safe. Not shared state: each thread owns its own.
  thread_local od::parser parser;
  return parser;
}

Result<ExtenderArgs> decode_args(std::string_view body, Items how, DecodedObjects* cache) {
  ExtenderArgs args;
  Status s = for_each_top_level_field(
      thread_parser(), body, [&](std::string_view key, od::value& v) -> Status {
        if (key_is(key, "Pod")) {
          od::json_type t;
          if (auto e = v.type().get(t)) return make_error(json_error("Pod", e));
          if (t == od::json_type::null) {
            args.pod.reset();
            return ok_status();
          }
          return decode_args_pod(v, how, cache ? &cache->pods : nullptr, args.pod);
        }
        if (key_is(key, "Nodes"))
          return decode_nodes(v, how, cache ? &cache->nodes : nullptr, args);
        if (key_is(key, "NodeNames")) return decode_node_names(v, args);
        if (key_is(key, "SimulatedPods")) return decode_simulated_pods(v, how, args);
        return ok_status();  // unknown keys are ignored, as Go does
      });
  if (!s) return s.error();
  return args;
}

// Reads a body all of whose objects were decoded before, in the shape Cluster Autoscaler and
// kube-scheduler write it:
//   {"Pod":{...},"Nodes":{"metadata":{},"items":[{...},...]},"NodeNames":null}
// with the keys in any case and order, any JSON whitespace, and "SimulatedPods":null. Each
// object is taken from the cache by comparing the body with a kept text at the object's start
// (DecodedCache::find_at_start), so neither simdjson's first stage nor the skip to each
// object's end runs over its bytes. What it accepts is valid JSON (kept texts are strictly
// valid objects; the bytes between them are checked here) and decodes to what decode_args
// gives. Anything else
// (an object not kept, another key, a duplicate key, an escaped key, a non-null NodeNames or
// SimulatedPods) makes read() give nullopt, and decode_args decides.
class KeptBodyReader {
 public:
  KeptBodyReader(std::string_view body, DecodedObjects& cache) : body_(body), cache_(cache) {}

  std::optional<ExtenderArgs> read() {
    ExtenderArgs args;
    bool pod = false, nodes = false, node_names = false, simulated_pods = false;
    bool ok = members('{', '}', [&](std::string_view key) {
      if (key_is(key, "Pod")) return once(pod) && (null() || object(cache_.pods, args.pod));
      if (key_is(key, "Nodes")) return once(nodes) && (null() || node_list(args));
      if (key_is(key, "NodeNames")) return once(node_names) && null();
      if (key_is(key, "SimulatedPods")) return once(simulated_pods) && null();
      return false;
    });
    skip_space();
    if (!ok || at_ != body_.size()) return std::nullopt;
    return args;
  }

 private:
  bool node_list(ExtenderArgs& args) {
    args.nodes_present = true;
    bool metadata = false, items = false;
    return members('{', '}', [&](std::string_view key) {
      if (key_is(key, "metadata"))
        return once(metadata) && members('{', '}', [](auto) { return false; });
      if (!key_is(key, "items") || !once(items)) return false;
      if (null()) return true;
      return elements('[', ']', [&] {
        skip_space();
        const size_t start = at_;
        ExtenderNode& node = args.nodes.emplace_back();
        if (!object(cache_.nodes, node.decoded)) return false;
        skip_space();  // the raw text runs to the next token, as simdjson's raw_json() does
        node.raw = body_.substr(start, at_ - start);
        return true;
      });
    });
  }

  // False for a key seen before (duplicate keys are left to the full decoder).
  static bool once(bool& seen) { return !std::exchange(seen, true); }

  // `open` [member (, member)*] `close`; a member is a plain key, `:`, then what
  // `read_value(key)` reads.
  template <class ReadValue>
  bool members(char open, char close, ReadValue&& read_value) {
    return elements(open, close, [&] {
      std::string_view key;
      return string(key) && token(':') && read_value(key);
    });
  }

  // `open` [element (, element)*] `close`.
  template <class ReadElement>
  bool elements(char open, char close, ReadElement&& read_element) {
    if (!token(open)) return false;
    if (token(close)) return true;
    do {
      if (!read_element()) return false;
    } while (token(','));
    return token(close);
  }

  // A string of printable ASCII without escapes (every key this reader knows is one).
  bool string(std::string_view& out) {
    if (!token('"')) return false;
    const size_t start = at_;
    for (; at_ < body_.size(); ++at_) {
      const char c = body_[at_];
      if (c == '"') {
        out = body_.substr(start, at_ - start);
        ++at_;
        return true;
      }
      if (c == '\\' || c < 0x20 || c > 0x7e) return false;
    }
    return false;
  }

  bool null() {
    skip_space();
    if (body_.substr(at_, 4) != "null") return false;
    at_ += 4;
    return true;
  }

  template <class T>
  bool object(DecodedCache<T>& cache, std::shared_ptr<const T>& out) {
    skip_space();
    auto found = cache.find_at_start(body_.substr(at_));
    if (!found.entry) return false;
    out = std::move(found.entry);
    at_ += found.length;
    return true;
  }

  bool token(char c) {
    skip_space();
    if (at_ == body_.size() || body_[at_] != c) return false;
    ++at_;
    return true;
  }

  void skip_space() {
    while (at_ < body_.size() && model::is_json_space(body_[at_])) ++at_;
  }

  std::string_view body_;
  size_t at_ = 0;
  DecodedObjects& cache_;
};

}  // namespace

std::optional<ExtenderArgs> decode_kept_extender_args(std::string_view body,
                                                      DecodedObjects& cache) {
  return KeptBodyReader(body, cache).read();
}

Result<ExtenderArgs> decode_extender_args_in_buffer(std::string_view body, DecodedObjects* cache) {
  if (cache != nullptr) {
    if (auto kept = decode_kept_extender_args(body, *cache)) return std::move(*kept);
  }
  auto args = decode_args(body, Items::kInPlace, cache);
  if (!args) args = decode_args(body, Items::kOwnBytes, cache);
  return args;
}

Result<ExtenderArgs> decode_extender_args(std::string_view body, DecodedObjects* cache) {
  auto buffer = padded_copy(body);
  auto args =
      decode_extender_args_in_buffer(std::string_view(*buffer).substr(0, body.size()), cache);
  if (!args) return args.error();
  args->buffer = std::move(buffer);
  return args;
}

Result<ExtenderBindingArgs> decode_binding_args(std::string_view body) {
  ExtenderBindingArgs args;
  auto buffer = padded_copy(body);
  Status s = for_each_top_level_field(
      thread_parser(), std::string_view(*buffer).substr(0, body.size()),
      [&](std::string_view key, od::value& v) -> Status {
        std::string* target = nullptr;
        if (key_is(key, "PodName"))
          target = &args.pod_name;
        else if (key_is(key, "PodNamespace"))
          target = &args.pod_namespace;
        else if (key_is(key, "PodUID"))
          target = &args.pod_uid;
        else if (key_is(key, "Node"))
          target = &args.node;
        if (!target) return ok_status();
        od::json_type t;
        if (auto e = v.type().get(t)) return make_error(json_error(key, e));
        if (t == od::json_type::null) {
          target->clear();
          return ok_status();
        }
        std::string_view value;
        if (v.get_string().get(value)) {
          return make_error(std::string(key) + ": expected a string, got " +
                            std::string(type_name(t)));
        }
        *target = std::string(value);
        return ok_status();
      });
  if (!s) return s.error();
  return args;
}

std::string encode_filter_error(std::string_view error) {
  model::JsonWriter w;
  w.begin_object();
  w.key("Nodes").null();
  w.key("NodeNames").null();
  w.key("FailedNodes").null();
  w.key("FailedAndUnresolvableNodes").null();
  w.key("Error").string(error);
  w.end_object();
  return w.take();
}

std::string encode_binding_result(std::string_view error) {
  model::JsonWriter w;
  w.begin_object();
  w.key("Error").string(error);
  w.end_object();
  return w.take();
}

}  // namespace hamisim::server
