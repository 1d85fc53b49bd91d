#include "extender/extender_protocol.h"

#include <simdjson.h>

#include "model/simdjson_util.h"

#include <optional>
#include <set>
#include <utility>

#include "extender/decoded_cache.h"
#include "go/json_key.h"
#include "model/decode.h"
#include "model/json_writer.h"

namespace hamisim::extender {
namespace {

namespace od = simdjson::ondemand;

static_assert(model::kJsonPadding >= simdjson::SIMDJSON_PADDING);

std::string json_error(std::string_view where, simdjson::error_code code) {
  return std::string(where) + ": malformed JSON (" + simdjson::error_message(code) + ")";
}

using model::json::type_name;

// Strictness. simdjson On-Demand validates what a decoder reads (the keys and values it
// visits, the commas and colons between them) but not what it skips: an ignored value, an
// ignored field inside a Pod or a Node, or anything after the top-level object is only
// counted through by its brackets, so `"x": tru`, `[1 2]` or a second document would pass.
// Each skipped stretch is therefore checked here, once: by simdjson's DOM parser (which
// validates everything) for an ignored value, for each Pod and Node text not already kept by
// the cache (kept texts are strictly valid), and for the SimulatedPods value as a whole.

// Whether `text`, inside a buffer with simdjson's padding after it, is one well-formed JSON
// value (whitespace around it allowed).
Status check_well_formed(std::string_view text, std::string_view where) {
  // A parser keeps buffers of ~14x the largest text it parsed: the thread's own is kept for
  // texts up to a Node's usual size, larger ones get a parser of their own.
  constexpr size_t kKeptCapacity = size_t(512) << 10;
  thread_local simdjson::dom::parser kept(kKeptCapacity);
  simdjson::dom::parser own;
  simdjson::dom::parser& parser = text.size() <= kKeptCapacity ? kept : own;
  simdjson::dom::element root;
  if (auto e = parser.parse(text.data(), text.size(), /*realloc_if_needed=*/false).get(root)) {
    return make_error(json_error(where, e));
  }
  return ok_status();
}

// The text of a value from `start` (its first byte) to where the iterator is now: just after
// the value once it was decoded or skipped, with the whitespace up to the next token. Empty
// when the document ends there: the object around the value is then cut short, which its own
// iteration reports.
Result<std::string_view> text_since(const char* start, od::value& v, std::string_view where) {
  const char* end = nullptr;
  if (auto e = v.current_location().get(end)) {
    if (e == simdjson::OUT_OF_BOUNDS) return std::string_view();
    return make_error(json_error(where, e));
  }
  return std::string_view(start, static_cast<size_t>(end - start));
}

// check_well_formed for a text_since (nothing to check when it is empty).
Status check_text_since(const char* start, od::value& v, std::string_view where) {
  auto text = text_since(start, v, where);
  if (!text) return text.error();
  if (text->empty()) return ok_status();
  return check_well_formed(*text, where);
}

// A value that was typed null by its first byte: it must be exactly `null`.
Status check_null(od::value& v, std::string_view where) {
  bool is_null = false;
  if (v.is_null().get(is_null) || !is_null) {
    return make_error(json_error(where, simdjson::N_ATOM_ERROR));
  }
  return ok_status();
}

// Skips a value nothing reads (an unknown key's), checking that it is well-formed.
Status skip_checked(od::value& v, std::string_view where) {
  od::json_type t;
  if (auto e = v.type().get(t)) return make_error(json_error(where, e));
  std::string_view text;
  if (t == od::json_type::object) {
    od::object o;
    if (auto e = v.get_object().get(o)) return make_error(json_error(where, e));
    if (auto e = o.raw_json().get(text)) return make_error(json_error(where, e));
  } else if (t == od::json_type::array) {
    od::array a;
    if (auto e = v.get_array().get(a)) return make_error(json_error(where, e));
    if (auto e = a.raw_json().get(text)) return make_error(json_error(where, e));
  } else {
    text = v.raw_json_token();  // a scalar: up to the next token
  }
  return check_well_formed(text, where);
}

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

// The object whose text is `raw`, from the cache (decoded and offered to it on a miss), and
// checked to be well-formed unless the cache holds it: it keeps only strictly valid texts
// (DecodedCache::get), so neither a hit nor a text it kept just now needs a check. An entry
// the cache holds is shared with it; one it did not keep was just made for this call and is
// ours alone, so a use count of 1 is the one case to check (the cache starting over
// meanwhile only makes a kept text checked once more).
template <class T>
Result<std::shared_ptr<const T>> get_checked(DecodedCache<T>& cache, std::string_view raw,
                                             std::string_view where) {
  auto entry = cache.get(raw, where);
  if (!entry) return entry.error();
  if (entry->use_count() == 1) {
    if (Status s = check_well_formed(raw, where); !s) return s.error();
  }
  return entry;
}

// The body's "Pod"; with a cache, looked up by its bytes first and decoded from them on a miss.
Status decode_args_pod(od::value& v, Items how, PodCache* cache,
                       std::shared_ptr<const model::Pod>& out) {
  if (cache == nullptr) {
    const char* start = v.raw_json_token().data();
    auto pod = std::make_shared<model::Pod>();
    if (Status s = decode_pod(v, "Pod", how, *pod); !s) return s;
    if (Status s = check_text_since(start, v, "Pod"); !s) return s;
    out = std::move(pod);
    return ok_status();
  }
  auto raw = raw_object(v, "Pod");
  if (!raw) return raw.error();
  auto cached = get_checked(*cache, *raw, "Pod");
  if (!cached) return cached.error();
  out = std::move(cached).value();
  return ok_status();
}

// Decodes the object `v` into `out`, a fresh node; `out.json` is what raw_object returns (the
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
    out.json = std::string_view(start, static_cast<size_t>(end - start));
    if (Status s = check_well_formed(out.json, where); !s) return s;
    out.decoded = std::make_shared<const fit::KeyedNode>(std::move(node));
    return ok_status();
  }
  auto raw = raw_object(v, where);
  if (!raw) return raw.error();
  out.json = *raw;
  if (cache != nullptr) {
    auto cached = get_checked(*cache, *raw, where);
    if (!cached) return cached.error();
    out.decoded = std::move(cached).value();
    return ok_status();
  }
  auto node = model::decode_node_json_in_buffer(*raw, where);
  if (!node) return node.error();
  if (Status s = check_well_formed(*raw, where); !s) return s;
  out.decoded = std::make_shared<const fit::KeyedNode>(std::move(node).value());
  return ok_status();
}

Status decode_nodes(od::value& v, Items how, NodeCache* cache, ExtenderArgs& args) {
  od::json_type t;
  if (auto e = v.type().get(t)) return make_error(json_error("Nodes", e));
  if (t == od::json_type::null) return check_null(v, "Nodes");
  if (t != od::json_type::object) {
    return make_error("Nodes: expected a NodeList object, got " + std::string(type_name(t)));
  }
  args.nodes_present = true;
  od::object list;
  if (auto e = v.get_object().get(list)) return make_error(json_error("Nodes", e));
  for (auto field : list) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return make_error(json_error("Nodes", e));
    od::value items = field.value();
    if (!go::json_key_matches(key, "items")) {
      if (Status s = skip_checked(items, "Nodes." + std::string(key)); !s) return s;
      continue;
    }
    args.nodes.clear();  // the last duplicate key wins
    od::json_type it;
    if (auto e = items.type().get(it)) return make_error(json_error("Nodes.items", e));
    if (it == od::json_type::null) {
      if (Status s = check_null(items, "Nodes.items"); !s) return s;
      continue;
    }
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
  if (t == od::json_type::null) return check_null(v, "NodeNames");
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

// The pods are decoded as they come, then the whole value's text is checked once (a check
// per pod would cost more than decoding these small objects).
Status decode_simulated_pods(od::value& v, Items how, ExtenderArgs& args) {
  const char* start = v.raw_json_token().data();
  od::json_type t;
  if (auto e = v.type().get(t)) return make_error(json_error("SimulatedPods", e));
  if (t == od::json_type::null) return check_null(v, "SimulatedPods");
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
    if (pt == od::json_type::null) {
      if (Status s = check_null(pods, where); !s) return s;
      continue;
    }
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
  return check_text_since(start, v, "SimulatedPods");
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
  // The object must be the whole document: On-Demand stops at its end, so a second document
  // (`{...}{...}`) or other bytes after it would pass unseen.
  const char* after = nullptr;
  if (doc.current_location().get(after) == simdjson::SUCCESS) {
    return make_error("body: malformed JSON (unexpected content after the top-level object)");
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
        if (go::json_key_matches(key, "Pod")) {
          od::json_type t;
          if (auto e = v.type().get(t)) return make_error(json_error("Pod", e));
          if (t == od::json_type::null) {
            args.pod.reset();
            return check_null(v, "Pod");
          }
          return decode_args_pod(v, how, cache ? &cache->pods : nullptr, args.pod);
        }
        if (go::json_key_matches(key, "Nodes"))
          return decode_nodes(v, how, cache ? &cache->nodes : nullptr, args);
        if (go::json_key_matches(key, "NodeNames")) return decode_node_names(v, args);
        if (go::json_key_matches(key, "SimulatedPods")) return decode_simulated_pods(v, how, args);
        return skip_checked(v, key);  // unknown keys are ignored, as Go does
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
      if (go::json_key_matches(key, "Pod"))
        return once(pod) && (null() || object(cache_.pods, args.pod));
      if (go::json_key_matches(key, "Nodes")) return once(nodes) && (null() || node_list(args));
      if (go::json_key_matches(key, "NodeNames")) return once(node_names) && null();
      if (go::json_key_matches(key, "SimulatedPods")) return once(simulated_pods) && null();
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
      if (go::json_key_matches(key, "metadata"))
        return once(metadata) && members('{', '}', [](auto) { return false; });
      if (!go::json_key_matches(key, "items") || !once(items)) return false;
      if (null()) return true;
      return elements('[', ']', [&] {
        skip_space();
        const size_t start = at_;
        ExtenderNode& node = args.nodes.emplace_back();
        if (!object(cache_.nodes, node.decoded)) return false;
        skip_space();  // the raw text runs to the next token, as simdjson's raw_json() does
        node.json = body_.substr(start, at_ - start);
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

namespace {
ExtenderArgs named(ExtenderArgs args) {
  for (ExtenderNode& n : args.nodes) n.name = n.node().metadata.name;
  return args;
}
}  // namespace

Result<ExtenderArgs> decode_extender_args_in_buffer(std::string_view body, DecodedObjects* cache) {
  if (cache != nullptr) {
    if (auto kept = decode_kept_extender_args(body, *cache)) return named(std::move(*kept));
  }
  auto args = decode_args(body, Items::kInPlace, cache);
  if (!args) args = decode_args(body, Items::kOwnBytes, cache);
  if (!args) return args;
  return named(std::move(*args));
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
        if (go::json_key_matches(key, "PodName"))
          target = &args.pod_name;
        else if (go::json_key_matches(key, "PodNamespace"))
          target = &args.pod_namespace;
        else if (go::json_key_matches(key, "PodUID"))
          target = &args.pod_uid;
        else if (go::json_key_matches(key, "Node"))
          target = &args.node;
        if (!target) return skip_checked(v, key);
        od::json_type t;
        if (auto e = v.type().get(t)) return make_error(json_error(key, e));
        if (t == od::json_type::null) {
          target->clear();
          return check_null(v, key);
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

std::string encode_extender_args(const ExtenderArgs& args, bool node_cache_capable) {
  model::JsonWriter w;
  size_t bytes = args.pod_json.size() + 128;
  for (const auto& n : args.nodes) bytes += n.json.size() + n.name.size() + 4;
  w.reserve(bytes);
  w.begin_object();
  w.key("Pod");
  if (args.pod_json.empty()) {
    w.null();
  } else {
    w.raw(args.pod_json);
  }
  if (node_cache_capable) {
    w.key("Nodes").null();
    w.key("NodeNames").begin_array();
    for (const auto& n : args.nodes) w.string(n.name);
    w.end_array();
  } else {
    w.key("Nodes").begin_object();
    w.key("metadata").begin_object().end_object();
    w.key("items").begin_array();
    for (const auto& n : args.nodes) w.raw(n.json);
    w.end_array().end_object();
    w.key("NodeNames").null();
  }
  if (args.simulated_pods_json != nullptr && !args.simulated_pods_json->empty()) {
    w.key("SimulatedPods").begin_object();
    for (const auto& [node, pods] : *args.simulated_pods_json) {  // sorted, as Go writes maps
      w.key(node).begin_array();
      for (const auto& pod : pods) w.raw(pod);
      w.end_array();
    }
    w.end_object();
  }
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

}  // namespace hamisim::extender
