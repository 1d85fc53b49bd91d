#include "model/decode.h"

#include <simdjson.h>

#include "model/simdjson_util.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <set>

#include "go/json_key.h"
#include "go/quote.h"
#include "model/json_writer.h"
#include "model/names.h"

// Decoding rules, chosen to match Go's encoding/json decoding into the k8s.io/api types, which
// is what HAMi does:
//  - Object keys match field names as Go folds them (go/json_key.h); unknown keys are skipped.
//  - Decoding writes into the existing value, so with duplicate keys the last one wins for
//    scalars while objects merge field by field, maps merge entry by entry, and lists decode
//    element-wise into the existing elements and are then cut to the new length (Go's slice
//    reuse).
//  - null resets what Go would reset (pointers, maps, slices: our optionals, maps and vectors,
//    and the scalars that are pointers in Go such as securityContext.privileged) and leaves
//    plain Go values (strings, numbers, bools, structs) untouched. A null quantity is zero, as
//    Quantity.UnmarshalJSON makes it.
//  - Integers must be JSON integers in range ("1.0" is an error, as in Go). Quantities accept
//    strings (trimmed, as Quantity.UnmarshalJSON does) and JSON numbers.
//  - Only the first JSON value of the input is decoded; whatever follows it is ignored, like
//    Go's json.Decoder.Decode (the extender's request path) does. For files that is the one
//    document they hold.
//  - simdjson validates UTF-8 and the structure of the whole input, and fully checks every
//    value we read; content inside ignored values is only checked for structure. Ignored values
//    are skipped iteratively, so their nesting depth needs no limit; the values we read have
//    the fixed depth of the schema, so no input can make the decoder recurse deeply.
//  - Invalid UTF-8 is an error (Go would substitute U+FFFD).

namespace hamisim::model {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING);

// Documents larger than this get a parser of their own instead of the thread's cached one, so
// one huge file does not pin its buffers for the life of the thread.
constexpr size_t kMaxCachedParserBytes = size_t{16} << 20;
// A List item that is itself a List (a multi-document YAML file holding a NodeList) is
// decoded; deeper nesting of lists is an error.
constexpr int kMaxListNesting = 3;

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

using json::type_name;

// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

std::string shorten(std::string_view s) {
  constexpr size_t kMax = 40;
  return s.size() <= kMax ? std::string(s) : std::string(s.substr(0, kMax)) + "...";
}

// One step of the path to the value being decoded; rendered only when an error occurs.
struct PathSegment {
  enum class Kind : uint8_t { kField, kIndex, kKey };
  Kind kind;
  std::string_view text;  // field name or map key (the key lives in the parser's buffer)
  size_t index;
};

#define HAMISIM_TRY(expr)      \
  do {                         \
    if (!(expr)) return false; \
  } while (0)

// Matches `key` against a field name; on a match, decodes the value with the path extended.
#define HAMISIM_FIELD(NAME, ...)         \
  if (go::json_key_matches(key, NAME)) { \
    const auto scope_ = enter(NAME);     \
    return __VA_ARGS__;                  \
  }

// On-demand skips a value nobody reads (an unknown key's) by counting brackets from its first
// token. When, in malformed JSON, that token is a closing bracket, a comma, a colon or a key,
// the count ends elsewhere than where the object holding the value believes the value ends, so
// an object decoded inside a larger document can read on past its own bytes and succeed where
// the same bytes decoded as a document of their own fail. A decoder working inside a larger
// document (`in_place`) refuses such values: whatever it accepts decodes the same either way.
bool starts_a_value(od::value& v) {
  const std::string_view token = v.raw_json_token();
  switch (token.front()) {
    case '}':
    case ']':
    case ',':
    case ':':
      return false;
    case '"':
      return token.data()[token.size()] != ':';  // the next structural character (padded)
    default:
      return true;
  }
}

// Adds or replaces a map entry. Keys arrive sorted (Go and the API server write maps in key
// order), so one comparison with the last key usually shows the entry goes at the end, sparing
// the walk down the tree; any other order, and duplicates (the last one wins), take the
// general path.
template <class Map, class V>
void put(Map& out, std::string_view key, V&& value) {
  if (out.empty() || out.rbegin()->first < key) {
    out.emplace_hint(out.end(), key, std::forward<V>(value));
  } else {
    out.insert_or_assign(std::string(key), std::forward<V>(value));
  }
}

class Decoder {
 public:
  explicit Decoder(std::string_view prefix, bool in_place = false)
      : prefix_(prefix), in_place_(in_place) {
    path_.reserve(16);  // deeper than any path of the schema: one allocation per decoder
  }

  const std::string& error() const { return error_; }

  // ---- errors and paths ----

  bool fail(std::string_view message) {
    std::string out(prefix_);
    for (const auto& seg : path_) {
      switch (seg.kind) {
        case PathSegment::Kind::kField:
          if (!out.empty()) out += '.';
          out += seg.text;
          break;
        case PathSegment::Kind::kIndex:
          out += '[';
          out += std::to_string(seg.index);
          out += ']';
          break;
        case PathSegment::Kind::kKey:
          out += '[';
          out += seg.text;
          out += ']';
          break;
      }
    }
    if (!out.empty()) out += ": ";
    out += message;
    error_ = std::move(out);
    return false;
  }
  // An error whose message already carries its full path (from a nested decoder).
  bool fail_verbatim(std::string message) {
    error_ = std::move(message);
    return false;
  }
  bool fail_json(error_code e) {
    return fail(std::string("invalid JSON: ") + simdjson::error_message(e));
  }
  bool fail_type(std::string_view expected, od::json_type got) {
    return fail("expected " + std::string(expected) + ", got " + std::string(type_name(got)));
  }

  class Scope {
   public:
    explicit Scope(std::vector<PathSegment>& path) : path_(path) {}
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() { path_.pop_back(); }

   private:
    std::vector<PathSegment>& path_;
  };
  [[nodiscard]] Scope enter(std::string_view field) {
    path_.push_back({PathSegment::Kind::kField, field, 0});
    return Scope(path_);
  }
  [[nodiscard]] Scope enter_index(size_t i) {
    path_.push_back({PathSegment::Kind::kIndex, {}, i});
    return Scope(path_);
  }
  [[nodiscard]] Scope enter_key(std::string_view key) {
    path_.push_back({PathSegment::Kind::kKey, key, 0});
    return Scope(path_);
  }

  // ---- generic shapes ----

  bool type_of(od::value& v, od::json_type& t) {
    if (auto e = v.type().get(t)) return fail_json(e);
    if (t == od::json_type::null) {
      // type() only looks at the first byte; make sure it really is `null`.
      bool is_null = false;
      if (auto e = v.is_null().get(is_null)) return fail_json(e);
      if (!is_null) return fail("invalid JSON: not a valid literal");
    }
    return true;
  }

  // Calls f(key, value) for each member of an object.
  template <class F>
  bool members(od::value& v, F&& f) {
    od::object obj;
    if (auto e = v.get_object().get(obj)) return fail_json(e);
    for (auto member : obj) {
      od::field fld;
      if (auto e = std::move(member).get(fld)) return fail_json(e);
      std::string_view key;
      if (auto e = fld.unescaped_key().get(key)) return fail_json(e);
      od::value& val = fld.value();
      const int32_t depth = val.current_depth();
      HAMISIM_TRY(f(key, val));
      // A value nobody read is still open; the object's next step skips it.
      if (in_place_ && val.current_depth() >= depth && !starts_a_value(val)) {
        return fail_json(simdjson::TAPE_ERROR);
      }
    }
    return true;
  }

  // A Go struct value: null leaves it alone.
  template <class F>
  bool object(od::value& v, F&& f) {
    od::json_type t;
    HAMISIM_TRY(type_of(v, t));
    if (t == od::json_type::null) return true;
    if (t != od::json_type::object) return fail_type("an object", t);
    return members(v, f);
  }

  // A Go pointer to a struct: null resets it, an object decodes into the existing value.
  template <class T, class F>
  bool optional_object(od::value& v, std::optional<T>& out, F&& f) {
    od::json_type t;
    HAMISIM_TRY(type_of(v, t));
    if (t == od::json_type::null) {
      out.reset();
      return true;
    }
    if (t != od::json_type::object) return fail_type("an object", t);
    if (!out) out.emplace();
    T& target = *out;
    return members(v, [&](std::string_view key, od::value& val) { return f(key, val, target); });
  }

  // A Go slice: null empties it; elements decode into the existing ones (Go reuses them).
  template <class T, class F>
  bool list(od::value& v, std::vector<T>& out, F&& element) {
    od::json_type t;
    HAMISIM_TRY(type_of(v, t));
    if (t == od::json_type::null) {
      out.clear();
      return true;
    }
    if (t != od::json_type::array) return fail_type("an array", t);
    od::array arr;
    if (auto e = v.get_array().get(arr)) return fail_json(e);
    size_t i = 0;
    for (auto item : arr) {
      od::value el;
      if (auto e = std::move(item).get(el)) return fail_json(e);
      const auto scope = enter_index(i);
      if (i >= out.size()) out.emplace_back();
      HAMISIM_TRY(element(el, out[i]));
      ++i;
    }
    out.resize(i);
    return true;
  }

  // A Go map: null empties it; entries are added to (or replace those of) the existing map.
  template <class F>
  bool map(od::value& v, bool& was_null, F&& entry) {
    od::json_type t;
    HAMISIM_TRY(type_of(v, t));
    was_null = t == od::json_type::null;
    if (was_null) return true;
    if (t != od::json_type::object) return fail_type("an object", t);
    return members(v, [&](std::string_view key, od::value& val) {
      const auto scope = enter_key(key);
      return entry(key, val);
    });
  }

  // ---- scalars ----

  // Go string: null leaves it alone. With `null_clears`, a Go *string collapsed into a string.
  bool string(od::value& v, std::string& out, bool null_clears = false) {
    od::json_type t;
    HAMISIM_TRY(type_of(v, t));
    if (t == od::json_type::null) {
      if (null_clears) out.clear();
      return true;
    }
    if (t != od::json_type::string) return fail_type("a string", t);
    std::string_view s;
    if (auto e = v.get_string().get(s)) return fail_json(e);
    out.assign(s);
    return true;
  }

  bool optional_string(od::value& v, std::optional<std::string>& out) {
    od::json_type t;
    HAMISIM_TRY(type_of(v, t));
    if (t == od::json_type::null) {
      out.reset();
      return true;
    }
    if (!out) out.emplace();
    return string(v, *out);
  }

  bool boolean(od::value& v, bool& out, bool null_clears = false) {
    od::json_type t;
    HAMISIM_TRY(type_of(v, t));
    if (t == od::json_type::null) {
      if (null_clears) out = false;
      return true;
    }
    if (t != od::json_type::boolean) return fail_type("a boolean", t);
    if (auto e = v.get_bool().get(out)) return fail_json(e);
    return true;
  }

  template <class Int>
  bool integer(od::value& v, Int& out) {
    constexpr std::string_view kName = sizeof(Int) == 4 ? "an int32" : "an int64";
    od::json_type t;
    HAMISIM_TRY(type_of(v, t));
    if (t == od::json_type::null) return true;
    if (t != od::json_type::number) return fail_type(kName, t);
    const std::string_view token = trim(v.raw_json_token());
    int64_t n = 0;
    if (v.get_int64().get(n) != simdjson::SUCCESS || n < std::numeric_limits<Int>::min() ||
        n > std::numeric_limits<Int>::max()) {
      return fail("expected " + std::string(kName) + ", got number " + shorten(token));
    }
    out = static_cast<Int>(n);
    return true;
  }

  template <class Int>
  bool optional_integer(od::value& v, std::optional<Int>& out) {
    od::json_type t;
    HAMISIM_TRY(type_of(v, t));
    if (t == od::json_type::null) {
      out.reset();
      return true;
    }
    Int n = 0;
    HAMISIM_TRY(integer(v, n));
    out = n;
    return true;
  }

  bool quantity(od::value& v, Quantity& out) {
    od::json_type t;
    HAMISIM_TRY(type_of(v, t));
    std::string_view text;
    switch (t) {
      case od::json_type::null:
        out = Quantity();
        return true;
      case od::json_type::string:
        if (auto e = v.get_string().get(text)) return fail_json(e);
        text = trim(text);
        break;
      case od::json_type::number:
        // Kubernetes parses the literal's text, so "2", 0.5 and 1e3 all work.
        text = trim(v.raw_json_token());
        if (!is_json_number(text)) return fail("invalid JSON: bad number " + shorten(text));
        break;
      default:
        return fail_type("a quantity string", t);
    }
    auto q = Quantity::parse(text);
    if (!q) return fail(q.error().message);
    out = *q;
    return true;
  }

  bool string_map(od::value& v, StringMap& out) {
    bool was_null = false;
    HAMISIM_TRY(map(v, was_null, [&](std::string_view key, od::value& val) {
      std::string s;  // a fresh element per entry, as Go's map decoding does
      HAMISIM_TRY(string(val, s));
      put(out, key, std::move(s));
      return true;
    }));
    if (was_null) out.clear();
    return true;
  }

  bool resource_list(od::value& v, ResourceList& out) {
    bool was_null = false;
    HAMISIM_TRY(map(v, was_null, [&](std::string_view key, od::value& val) {
      Quantity q;
      HAMISIM_TRY(quantity(val, q));
      put(out, key, q);
      return true;
    }));
    if (was_null) out.clear();
    return true;
  }

  bool string_list(od::value& v, std::vector<std::string>& out) {
    return list(v, out, [&](od::value& el, std::string& s) { return string(el, s); });
  }

  // ---- Kubernetes types ----

  bool owner_reference(od::value& v, OwnerReference& r) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("apiVersion", string(val, r.api_version));
      HAMISIM_FIELD("kind", string(val, r.kind));
      HAMISIM_FIELD("name", string(val, r.name));
      HAMISIM_FIELD("uid", string(val, r.uid));
      HAMISIM_FIELD("controller", boolean(val, r.controller, /*null_clears=*/true));
      return true;
    });
  }

  bool metadata(od::value& v, ObjectMeta& m) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("name", string(val, m.name));
      HAMISIM_FIELD("generateName", string(val, m.generate_name));
      HAMISIM_FIELD("namespace", string(val, m.namespace_));
      HAMISIM_FIELD("uid", string(val, m.uid));
      HAMISIM_FIELD("resourceVersion", string(val, m.resource_version));
      // metav1.Time turns null into the zero time.
      HAMISIM_FIELD("creationTimestamp", string(val, m.creation_timestamp, /*null_clears=*/true));
      HAMISIM_FIELD("deletionTimestamp", optional_string(val, m.deletion_timestamp));
      HAMISIM_FIELD("labels", string_map(val, m.labels));
      HAMISIM_FIELD("annotations", string_map(val, m.annotations));
      HAMISIM_FIELD("ownerReferences",
                    list(val, m.owner_references,
                         [&](od::value& el, OwnerReference& r) { return owner_reference(el, r); }));
      return true;
    });
  }

  bool resources(od::value& v, ResourceRequirements& r) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("requests", resource_list(val, r.requests));
      HAMISIM_FIELD("limits", resource_list(val, r.limits));
      HAMISIM_FIELD("claims", list(val, r.claims, [&](od::value& el, ContainerResourceClaim& c) {
                      return object(el, [&](std::string_view key, od::value& val) {
                        HAMISIM_FIELD("name", string(val, c.name));
                        HAMISIM_FIELD("request", string(val, c.request));
                        return true;
                      });
                    }));
      return true;
    });
  }

  bool container_port(od::value& v, ContainerPort& p) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("containerPort", integer(val, p.container_port));
      HAMISIM_FIELD("hostPort", integer(val, p.host_port));
      HAMISIM_FIELD("protocol", string(val, p.protocol));
      HAMISIM_FIELD("hostIP", string(val, p.host_ip));
      return true;
    });
  }

  bool container(od::value& v, Container& c) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("name", string(val, c.name));
      HAMISIM_FIELD("image", string(val, c.image));
      HAMISIM_FIELD("resources", resources(val, c.resources));
      HAMISIM_FIELD("ports", list(val, c.ports, [&](od::value& el, ContainerPort& p) {
                      return container_port(el, p);
                    }));
      HAMISIM_FIELD("restartPolicy", optional_string(val, c.restart_policy));
      HAMISIM_FIELD("securityContext", security_context(val, c.privileged));
      return true;
    });
  }

  // securityContext is a pointer in Go: null drops everything we keep from it.
  bool security_context(od::value& v, bool& privileged) {
    od::json_type t;
    HAMISIM_TRY(type_of(v, t));
    if (t == od::json_type::null) {
      privileged = false;
      return true;
    }
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("privileged", boolean(val, privileged, /*null_clears=*/true));
      return true;
    });
  }

  bool toleration(od::value& v, Toleration& t) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("key", string(val, t.key));
      HAMISIM_FIELD("operator", string(val, t.op));
      HAMISIM_FIELD("value", string(val, t.value));
      HAMISIM_FIELD("effect", string(val, t.effect));
      HAMISIM_FIELD("tolerationSeconds", optional_integer(val, t.toleration_seconds));
      return true;
    });
  }

  bool taint(od::value& v, Taint& t) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("key", string(val, t.key));
      HAMISIM_FIELD("value", string(val, t.value));
      HAMISIM_FIELD("effect", string(val, t.effect));
      return true;
    });
  }

  template <class Requirement>
  bool requirement(od::value& v, Requirement& r) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("key", string(val, r.key));
      HAMISIM_FIELD("operator", string(val, r.op));
      HAMISIM_FIELD("values", string_list(val, r.values));
      return true;
    });
  }

  template <class Requirement>
  bool requirements(od::value& v, std::vector<Requirement>& out) {
    return list(v, out, [&](od::value& el, Requirement& r) { return requirement(el, r); });
  }

  bool label_selector_fields(std::string_view key, od::value& val, LabelSelector& s) {
    HAMISIM_FIELD("matchLabels", string_map(val, s.match_labels));
    HAMISIM_FIELD("matchExpressions", requirements(val, s.match_expressions));
    return true;
  }

  bool optional_label_selector(od::value& v, std::optional<LabelSelector>& out) {
    return optional_object(v, out, [&](std::string_view key, od::value& val, LabelSelector& s) {
      return label_selector_fields(key, val, s);
    });
  }

  bool node_selector_term(od::value& v, NodeSelectorTerm& term) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("matchExpressions", requirements(val, term.match_expressions));
      HAMISIM_FIELD("matchFields", requirements(val, term.match_fields));
      return true;
    });
  }

  bool node_affinity(od::value& v, std::optional<NodeAffinity>& out) {
    return optional_object(v, out, [&](std::string_view key, od::value& val, NodeAffinity& na) {
      HAMISIM_FIELD(
          "requiredDuringSchedulingIgnoredDuringExecution",
          optional_object(
              val, na.required, [&](std::string_view key, od::value& val, NodeSelector& ns) {
                HAMISIM_FIELD("nodeSelectorTerms",
                              list(val, ns.terms, [&](od::value& el, NodeSelectorTerm& t) {
                                return node_selector_term(el, t);
                              }));
                return true;
              }));
      HAMISIM_FIELD("preferredDuringSchedulingIgnoredDuringExecution",
                    list(val, na.preferred, [&](od::value& el, PreferredSchedulingTerm& p) {
                      return object(el, [&](std::string_view key, od::value& val) {
                        HAMISIM_FIELD("weight", integer(val, p.weight));
                        HAMISIM_FIELD("preference", node_selector_term(val, p.preference));
                        return true;
                      });
                    }));
      return true;
    });
  }

  bool pod_affinity_term(od::value& v, PodAffinityTerm& term) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("labelSelector", optional_label_selector(val, term.label_selector));
      HAMISIM_FIELD("namespaces", string_list(val, term.namespaces));
      HAMISIM_FIELD("namespaceSelector", optional_label_selector(val, term.namespace_selector));
      HAMISIM_FIELD("topologyKey", string(val, term.topology_key));
      return true;
    });
  }

  bool pod_affinity(od::value& v, std::optional<PodAffinity>& out) {
    return optional_object(v, out, [&](std::string_view key, od::value& val, PodAffinity& pa) {
      HAMISIM_FIELD("requiredDuringSchedulingIgnoredDuringExecution",
                    list(val, pa.required, [&](od::value& el, PodAffinityTerm& t) {
                      return pod_affinity_term(el, t);
                    }));
      HAMISIM_FIELD("preferredDuringSchedulingIgnoredDuringExecution",
                    list(val, pa.preferred, [&](od::value& el, WeightedPodAffinityTerm& w) {
                      return object(el, [&](std::string_view key, od::value& val) {
                        HAMISIM_FIELD("weight", integer(val, w.weight));
                        HAMISIM_FIELD("podAffinityTerm", pod_affinity_term(val, w.term));
                        return true;
                      });
                    }));
      return true;
    });
  }

  bool affinity(od::value& v, std::optional<Affinity>& out) {
    return optional_object(v, out, [&](std::string_view key, od::value& val, Affinity& a) {
      HAMISIM_FIELD("nodeAffinity", node_affinity(val, a.node_affinity));
      HAMISIM_FIELD("podAffinity", pod_affinity(val, a.pod_affinity));
      HAMISIM_FIELD("podAntiAffinity", pod_affinity(val, a.pod_anti_affinity));
      return true;
    });
  }

  bool topology_spread_constraint(od::value& v, TopologySpreadConstraint& c) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("maxSkew", integer(val, c.max_skew));
      HAMISIM_FIELD("topologyKey", string(val, c.topology_key));
      HAMISIM_FIELD("whenUnsatisfiable", string(val, c.when_unsatisfiable));
      HAMISIM_FIELD("labelSelector", optional_label_selector(val, c.label_selector));
      HAMISIM_FIELD("minDomains", optional_integer(val, c.min_domains));
      HAMISIM_FIELD("matchLabelKeys", string_list(val, c.match_label_keys));
      // Both policies are *string in Go.
      HAMISIM_FIELD("nodeAffinityPolicy", string(val, c.node_affinity_policy, true));
      HAMISIM_FIELD("nodeTaintsPolicy", string(val, c.node_taints_policy, true));
      return true;
    });
  }

  bool containers(od::value& v, std::vector<Container>& out) {
    return list(v, out, [&](od::value& el, Container& c) { return container(el, c); });
  }

  bool pod_spec(od::value& v, PodSpec& s) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("nodeName", string(val, s.node_name));
      HAMISIM_FIELD("schedulerName", string(val, s.scheduler_name));
      HAMISIM_FIELD("runtimeClassName", optional_string(val, s.runtime_class_name));
      HAMISIM_FIELD("priorityClassName", string(val, s.priority_class_name));
      HAMISIM_FIELD("priority", optional_integer(val, s.priority));
      HAMISIM_FIELD("initContainers", containers(val, s.init_containers));
      HAMISIM_FIELD("containers", containers(val, s.containers));
      HAMISIM_FIELD("nodeSelector", string_map(val, s.node_selector));
      HAMISIM_FIELD("affinity", affinity(val, s.affinity));
      HAMISIM_FIELD("tolerations", list(val, s.tolerations, [&](od::value& el, Toleration& t) {
                      return toleration(el, t);
                    }));
      HAMISIM_FIELD(
          "topologySpreadConstraints",
          list(val, s.topology_spread_constraints, [&](od::value& el, TopologySpreadConstraint& c) {
            return topology_spread_constraint(el, c);
          }));
      HAMISIM_FIELD("overhead", resource_list(val, s.overhead));
      HAMISIM_FIELD("hostNetwork", boolean(val, s.host_network));
      HAMISIM_FIELD("schedulingGroup", scheduling_group(val, s.scheduling_group_pod_group_name));
      HAMISIM_FIELD("resourceClaims",
                    list(val, s.resource_claims, [&](od::value& el, PodResourceClaim& c) {
                      return pod_resource_claim(el, c);
                    }));
      return true;
    });
  }

  bool pod_resource_claim(od::value& v, PodResourceClaim& c) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("name", string(val, c.name));
      HAMISIM_FIELD("resourceClaimName", optional_string(val, c.resource_claim_name));
      HAMISIM_FIELD("resourceClaimTemplateName",
                    optional_string(val, c.resource_claim_template_name));
      return true;
    });
  }

  // The API server's validation of spec.resourceClaims, the part placement depends on: a
  // claim's name is how containers and status.resourceClaimStatuses refer to it, and its one
  // source says which ResourceClaim to allocate. Checked once the whole pod is read, since a
  // repeated key may still change what an earlier one set.
  bool check_resource_claims(const PodSpec& s) {
    if (s.resource_claims.empty()) return true;
    const auto spec_scope = enter("spec");
    const auto claims_scope = enter("resourceClaims");
    std::set<std::string_view> names;
    for (size_t i = 0; i < s.resource_claims.size(); ++i) {
      const PodResourceClaim& c = s.resource_claims[i];
      const auto index_scope = enter_index(i);
      {
        const auto name_scope = enter("name");
        if (c.name.empty()) return fail("is required");
        if (!is_dns_label(c.name)) {
          return fail(go::quote(c.name) +
                      " is not a DNS label (lower case letters, digits and '-', at most 63)");
        }
        if (!names.insert(c.name).second) return fail(go::quote(c.name) + " is used twice");
      }
      if (c.resource_claim_name.has_value() == c.resource_claim_template_name.has_value()) {
        return fail("exactly one of resourceClaimName and resourceClaimTemplateName must be set");
      }
      const bool by_name = c.resource_claim_name.has_value();
      const std::string& object_name =
          by_name ? *c.resource_claim_name : *c.resource_claim_template_name;
      const auto source_scope = enter(by_name ? "resourceClaimName" : "resourceClaimTemplateName");
      if (!is_dns_subdomain(object_name)) {
        return fail(go::quote(object_name) +
                    " is not an object name (a DNS subdomain: lower case letters, digits, '-' "
                    "and '.', at most 253)");
      }
    }
    return true;
  }

  bool scheduling_group(od::value& v, std::string& pod_group_name) {
    od::json_type t;
    HAMISIM_TRY(type_of(v, t));
    if (t == od::json_type::null) {
      pod_group_name.clear();
      return true;
    }
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("podGroupName", string(val, pod_group_name, /*null_clears=*/true));
      return true;
    });
  }

  bool container_status(od::value& v, ContainerStatus& s) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("name", string(val, s.name));
      HAMISIM_FIELD("state", object(val, [&](std::string_view key, od::value& val) {
                      HAMISIM_FIELD(
                          "terminated",
                          optional_object(val, s.terminated,
                                          [&](std::string_view key, od::value& val,
                                              ContainerStateTerminated& term) {
                                            HAMISIM_FIELD("exitCode", integer(val, term.exit_code));
                                            HAMISIM_FIELD("reason", string(val, term.reason));
                                            return true;
                                          }));
                      return true;
                    }));
      return true;
    });
  }

  bool pod_status(od::value& v, PodStatus& s) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("phase", string(val, s.phase));
      HAMISIM_FIELD("initContainerStatuses",
                    list(val, s.init_container_statuses, [&](od::value& el, ContainerStatus& cs) {
                      return container_status(el, cs);
                    }));
      HAMISIM_FIELD(
          "resourceClaimStatuses",
          list(val, s.resource_claim_statuses, [&](od::value& el, PodResourceClaimStatus& cs) {
            return object(el, [&](std::string_view key, od::value& val) {
              HAMISIM_FIELD("name", string(val, cs.name));
              HAMISIM_FIELD("resourceClaimName", optional_string(val, cs.resource_claim_name));
              return true;
            });
          }));
      return true;
    });
  }

  bool pod(od::value& v, Pod& p) {
    HAMISIM_TRY(object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("metadata", metadata(val, p.metadata));
      HAMISIM_FIELD("spec", pod_spec(val, p.spec));
      HAMISIM_FIELD("status", pod_status(val, p.status));
      return true;
    }));
    return check_resource_claims(p.spec);
  }

  bool node(od::value& v, Node& n) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("metadata", metadata(val, n.metadata));
      HAMISIM_FIELD("spec", object(val, [&](std::string_view key, od::value& val) {
                      HAMISIM_FIELD("unschedulable", boolean(val, n.spec.unschedulable));
                      HAMISIM_FIELD("taints",
                                    list(val, n.spec.taints,
                                         [&](od::value& el, Taint& t) { return taint(el, t); }));
                      HAMISIM_FIELD("providerID", string(val, n.spec.provider_id));
                      return true;
                    }));
      HAMISIM_FIELD("status", object(val, [&](std::string_view key, od::value& val) {
                      HAMISIM_FIELD("capacity", resource_list(val, n.status.capacity));
                      HAMISIM_FIELD("allocatable", resource_list(val, n.status.allocatable));
                      HAMISIM_FIELD(
                          "conditions",
                          list(val, n.status.conditions, [&](od::value& el, NodeCondition& c) {
                            return object(el, [&](std::string_view key, od::value& val) {
                              HAMISIM_FIELD("type", string(val, c.type));
                              HAMISIM_FIELD("status", string(val, c.status));
                              return true;
                            });
                          }));
                      return true;
                    }));
      return true;
    });
  }

  bool resource_quota(od::value& v, ResourceQuota& q) {
    return object(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("metadata", metadata(val, q.metadata));
      HAMISIM_FIELD("spec", object(val, [&](std::string_view key, od::value& val) {
                      HAMISIM_FIELD("hard", resource_list(val, q.spec.hard));
                      return true;
                    }));
      HAMISIM_FIELD("status", object(val, [&](std::string_view key, od::value& val) {
                      HAMISIM_FIELD("hard", resource_list(val, q.status.hard));
                      HAMISIM_FIELD("used", resource_list(val, q.status.used));
                      return true;
                    }));
      return true;
    });
  }

  // The TypeMeta and list shape of an object: its kind and whether it has `items`.
  // apiVersion and metadata's name and namespace, as far as they are strings; anything else
  // in a skipped item is not ours to judge.
  bool identity(od::value& v, SkippedItem& out) {
    auto is = [](od::value& val, od::json_type want) {
      od::json_type t;
      return !val.type().get(t) && t == want;
    };
    auto text = [&](od::value& val, std::string& to) {
      std::string_view s;
      if (is(val, od::json_type::string) && !val.get_string().get(s)) to.assign(s);
    };
    return members(v, [&](std::string_view key, od::value& val) {
      if (go::json_key_matches(key, "apiVersion")) {
        text(val, out.api_version);
      } else if (go::json_key_matches(key, "metadata") && is(val, od::json_type::object)) {
        return members(val, [&](std::string_view k, od::value& m) {
          if (go::json_key_matches(k, "name")) text(m, out.name);
          if (go::json_key_matches(k, "namespace")) text(m, out.namespace_);
          return true;
        });
      }
      return true;
    });
  }

  bool type_meta(od::value& v, std::string& kind, int& items_keys) {
    return members(v, [&](std::string_view key, od::value& val) {
      HAMISIM_FIELD("kind", string(val, kind));
      if (go::json_key_matches(key, "items")) ++items_keys;
      return true;
    });
  }

 private:
  std::string_view prefix_;
  bool in_place_;
  std::vector<PathSegment> path_;
  std::string error_;
};

// ---- parsers and documents ----

// One parser per nesting level (a List's items are decoded while the List is being iterated),
// cached per thread: no state is shared between threads.
od::parser& cached_parser(int level) {
  thread_local std::array<std::unique_ptr<od::parser>, kMaxListNesting + 2> parsers;
  auto& p = parsers[static_cast<size_t>(level)];
  if (!p) p = std::make_unique<od::parser>();
  return *p;
}

// A document opened on `json` (which has kJsonPadding readable bytes past its end).
class OpenDocument {
 public:
  OpenDocument(std::string_view json, int level) : json_(json) {
    od::parser* parser = nullptr;
    if (json.size() > kMaxCachedParserBytes) {
      own_ = std::make_unique<od::parser>();
      parser = own_.get();
    } else {
      parser = &cached_parser(level);
    }
    error_ = parser->iterate(json.data(), json.size(), json.size() + kJsonPadding).get(doc_);
  }

  // The root value, which must be an object (or, when `allow_array`, an array).
  bool root(Decoder& d, od::value& out, od::json_type& type) {
    if (error_) return d.fail_json(error_);
    if (auto e = doc_.type().get(type)) return d.fail_json(e);
    if (type != od::json_type::object && type != od::json_type::array) {
      return d.fail_type("an object", type);
    }
    if (auto e = doc_.get_value().get(out)) return d.fail_json(e);
    return true;
  }
  void rewind() { doc_.rewind(); }

 private:
  std::string_view json_;
  std::unique_ptr<od::parser> own_;
  error_code error_ = simdjson::SUCCESS;
  od::document doc_;
};

template <class T, class Method>
Result<T> decode_single(std::string_view json, std::string_view path, Method method) {
  Decoder d(path);
  OpenDocument doc(json, 0);
  od::value root;
  od::json_type type;
  T out;
  if (!doc.root(d, root, type)) return make_error(d.error());
  if (type != od::json_type::object) {
    d.fail_type("an object", type);
    return make_error(d.error());
  }
  if (!(d.*method)(root, out)) return make_error(d.error());
  return out;
}

template <class T, class Method>
Status decode_value(od::value& v, std::string_view path, Method method, T& out) {
  Decoder d(path, /*in_place=*/true);
  if (!(d.*method)(v, out)) return make_error(d.error());
  return ok_status();
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The kind of the items of a typed list ("NodeList" -> "Node"), whose items carry no kind of
// their own when they come straight from the API server.
std::string item_kind_of(std::string_view list_kind) {
  if (ends_with(list_kind, "List") && list_kind != "List") {
    return std::string(list_kind.substr(0, list_kind.size() - 4));
  }
  return {};
}

bool is_dra_kind_name(std::string_view kind) {
  return kind == "ResourceSlice" || kind == "DeviceClass" || kind == "ResourceClaim" ||
         kind == "ResourceClaimTemplate" || kind == "DeviceTaintRule";
}

// What the items of a typed list lack: its item kind and, for a DRA list (ResourceSliceList),
// its apiVersion.
struct ItemDefaults {
  std::string kind;
  std::string api_version;
};

// The item as a document of its own, minified. Its bytes are checked as JSON first: the
// decoder checks only the structure of values it does not read, and the minifier would turn
// `[1 2]` into `[12]`. The kind and apiVersion an item takes from a typed list
// (ResourceSliceList) are written last, where they win as they did here when the item has
// empty ones of its own (a repeated key is left for the strict DRA decoder to refuse).
// `item` lies in a padded buffer.
bool raw_dra_object(Decoder& d, std::string_view item, const std::string& kind, bool add_kind,
                    const std::string& api_version, bool add_api_version, std::string& out) {
  thread_local simdjson::dom::parser cached_validator;
  std::unique_ptr<simdjson::dom::parser> own_validator;  // as OpenDocument: no huge cache
  if (item.size() > kMaxCachedParserBytes)
    own_validator = std::make_unique<simdjson::dom::parser>();
  simdjson::dom::parser& validator = own_validator ? *own_validator : cached_validator;
  simdjson::dom::element element;
  if (auto e =
          validator.parse(item.data(), item.size(), /*realloc_if_needed=*/false).get(element)) {
    return d.fail_json(e);
  }
  // simdjson's minifier may write whole blocks: room for a padding's worth more.
  out.assign(item.size() + simdjson::SIMDJSON_PADDING, '\0');
  size_t size = 0;
  if (auto e = simdjson::minify(item.data(), item.size(), out.data(), size)) {
    return d.fail_json(e);
  }
  out.resize(size);
  if (!add_kind && !add_api_version) return true;
  JsonWriter w;
  w.begin_object();
  if (add_kind) w.key("kind").string(kind);
  if (add_api_version) w.key("apiVersion").string(api_version);
  w.end_object();
  const std::string added = w.take();
  out.pop_back();  // the item's '}'
  if (out.size() > 1) out += ',';
  out.append(added, 1);  // after the added object's '{'
  return true;
}

Status decode_objects_into(std::string_view json, const ItemDefaults& defaults, int level,
                           const std::string& path, const DecodeKinds& kinds, ObjectSet& out);

// Decodes the array `items` (a List's items, or a top-level array); each item is decoded by a
// parser of the next level, straight from its bytes inside this document.
//
// With `uncounted` set, the items are counted first so that `out.pods` grows once: a cluster
// dump's 35,000 Pods of 1 KB each, moved at every doubling of the vector, were a tenth of its
// decoding and left a 66 MB array for 35 MB of pods. An array that cannot be counted leaves the
// document part-read: then `*uncounted` is set and false returned before anything is decoded,
// and decode_objects_into decodes the document again without counting (so a malformed document
// fails as it always did).
bool decode_items(Decoder& d, od::value& items, const ItemDefaults& defaults, int level,
                  const std::string& items_path, const DecodeKinds& kinds, ObjectSet& out,
                  bool* uncounted) {
  od::json_type t;
  HAMISIM_TRY(d.type_of(items, t));
  if (t == od::json_type::null) return true;
  if (t != od::json_type::array) return d.fail_type("an array", t);
  od::array arr;
  if (auto e = items.get_array().get(arr)) return d.fail_json(e);
  if (uncounted != nullptr && kinds.pods) {
    size_t count = 0;
    if (arr.count_elements().get(count) != simdjson::SUCCESS) {
      *uncounted = true;
      return false;
    }
    out.pods.reserve(out.pods.size() + count);
  }
  size_t i = 0;
  for (auto item : arr) {
    const auto scope = d.enter_index(i);
    od::value el;
    if (auto e = std::move(item).get(el)) return d.fail_json(e);
    HAMISIM_TRY(d.type_of(el, t));
    if (t == od::json_type::null) {
      ++out.skipped_items;
    } else if (t != od::json_type::object) {
      return d.fail_type("an object", t);
    } else {
      od::object obj;
      std::string_view raw;
      if (auto e = el.get_object().get(obj)) return d.fail_json(e);
      if (auto e = obj.raw_json().get(raw)) return d.fail_json(e);
      const std::string item_path = items_path + "[" + std::to_string(i) + "]";
      auto st = decode_objects_into(raw, defaults, level + 1, item_path, kinds, out);
      if (!st) return d.fail_verbatim(st.error().message);
    }
    ++i;
  }
  return true;
}

// One pass of decode_objects_into; `uncounted` as decode_items takes it (null: no counting).
Status decode_objects_pass(std::string_view json, const ItemDefaults& defaults, int level,
                           const std::string& path, const DecodeKinds& kinds, ObjectSet& out,
                           bool* uncounted) {
  Decoder d(path);
  if (level > kMaxListNesting) {
    d.fail("lists nested too deeply");
    return make_error(d.error());
  }
  OpenDocument doc(json, level);
  od::value root;
  od::json_type type;
  if (!doc.root(d, root, type)) return make_error(d.error());
  if (type == od::json_type::array) {
    if (!decode_items(d, root, defaults, level, path, kinds, out, uncounted)) {
      return make_error(d.error());
    }
    return ok_status();
  }

  std::string kind;
  int items_keys = 0;
  if (!d.type_meta(root, kind, items_keys)) return make_error(d.error());
  const bool own_kind = !kind.empty();
  if (!own_kind) kind = defaults.kind;
  doc.rewind();
  if (!doc.root(d, root, type)) return make_error(d.error());

  if (items_keys > 0 || ends_with(kind, "List")) {
    ItemDefaults item_defaults{item_kind_of(kind), {}};
    if (kinds.dra && is_dra_kind_name(item_defaults.kind)) {
      // A ResourceSliceList's items have neither kind nor apiVersion: both come from the list.
      SkippedItem list;
      if (!d.identity(root, list)) return make_error(d.error());
      item_defaults.api_version = std::move(list.api_version);
      doc.rewind();
      if (!doc.root(d, root, type)) return make_error(d.error());
    }
    const std::string items_path = path.empty() ? "items" : path + ".items";
    int seen = 0;
    const bool ok = d.members(root, [&](std::string_view key, od::value& val) {
      // Go keeps the last of duplicate keys.
      if (!go::json_key_matches(key, "items") || ++seen < items_keys) return true;
      const auto scope = d.enter("items");
      return decode_items(d, val, item_defaults, level, items_path, kinds, out, uncounted);
    });
    if (!ok) return make_error(d.error());
    return ok_status();
  }
  if (kind == "Pod" && kinds.pods) {
    Pod pod;
    if (!d.pod(root, pod)) return make_error(d.error());
    out.pods.push_back(std::move(pod));
  } else if (kind == "Node" && kinds.nodes) {
    Node node;
    if (!d.node(root, node)) return make_error(d.error());
    out.nodes.push_back(std::move(node));
    out.node_json.emplace_back(trim(json));
  } else if (kind == "ResourceQuota" && kinds.quotas) {
    ResourceQuota quota;
    if (!d.resource_quota(root, quota)) return make_error(d.error());
    out.quotas.push_back(std::move(quota));
  } else {
    SkippedItem item;
    item.path = path;
    item.kind = kind;
    if (!d.identity(root, item)) return make_error(d.error());
    const bool own_api_version = !item.api_version.empty();
    const std::string& api_version = own_api_version ? item.api_version : defaults.api_version;
    if (kinds.dra && is_dra_kind(api_version, kind)) {
      // Read again for the object's exact bytes (a lone document may have more after it).
      doc.rewind();
      if (!doc.root(d, root, type)) return make_error(d.error());
      od::object obj;
      std::string_view raw;
      if (auto e = root.get_object().get(obj)) {
        d.fail_json(e);
        return make_error(d.error());
      }
      if (auto e = obj.raw_json().get(raw)) {
        d.fail_json(e);
        return make_error(d.error());
      }
      RawObject object{path, kind, api_version, {}};
      if (!raw_dra_object(d, raw, kind, !own_kind, api_version, !own_api_version, object.json)) {
        return make_error(d.error());
      }
      out.dra_objects.push_back(std::move(object));
      return ok_status();
    }
    ++out.skipped_items;
    out.skipped.push_back(std::move(item));
  }
  return ok_status();
}

Status decode_objects_into(std::string_view json, const ItemDefaults& defaults, int level,
                           const std::string& path, const DecodeKinds& kinds, ObjectSet& out) {
  bool uncounted = false;
  Status st = decode_objects_pass(json, defaults, level, path, kinds, out, &uncounted);
  if (st || !uncounted) return st;
  // The items could not be counted (a malformed array), and nothing was decoded: decode the
  // document afresh, as it always was, for the error it always gave.
  return decode_objects_pass(json, defaults, level, path, kinds, out, nullptr);
}

}  // namespace

void ObjectSet::append(ObjectSet&& other) {
  auto move_all = [](auto& to, auto& from) {
    if (to.empty()) {
      to = std::move(from);
    } else {
      to.insert(to.end(), std::make_move_iterator(from.begin()),
                std::make_move_iterator(from.end()));
    }
    from.clear();
  };
  move_all(nodes, other.nodes);
  move_all(pods, other.pods);
  move_all(quotas, other.quotas);
  move_all(node_json, other.node_json);
  skipped_items += other.skipped_items;
  other.skipped_items = 0;
  move_all(skipped, other.skipped);
  move_all(dra_objects, other.dra_objects);
}

bool is_dra_kind(std::string_view api_version, std::string_view kind) {
  return (api_version == "resource.k8s.io/v1" || api_version == "resource.k8s.io/v1beta2" ||
          api_version == "resource.k8s.io/v1beta1" || api_version == "resource.k8s.io/v1alpha3") &&
         is_dra_kind_name(kind);
}

Result<Pod> decode_pod_json_in_buffer(std::string_view json, std::string_view path) {
  return decode_single<Pod>(json, path, &Decoder::pod);
}

Result<Node> decode_node_json_in_buffer(std::string_view json, std::string_view path) {
  return decode_single<Node>(json, path, &Decoder::node);
}

Status json::decode_pod(od::value& v, std::string_view path, Pod& out) {
  return decode_value(v, path, &Decoder::pod, out);
}

Status json::decode_node(od::value& v, std::string_view path, Node& out) {
  return decode_value(v, path, &Decoder::node, out);
}

Result<Pod> decode_pod_json(std::string_view json) {
  const simdjson::padded_string padded(json);
  return decode_pod_json_in_buffer(padded);
}

Result<Node> decode_node_json(std::string_view json) {
  const simdjson::padded_string padded(json);
  return decode_node_json_in_buffer(padded);
}

Result<ObjectSet> decode_objects_json_in_buffer(std::string_view json, const DecodeKinds& kinds) {
  ObjectSet out;
  auto st = decode_objects_into(json, ItemDefaults{}, 0, "", kinds, out);
  if (!st) return st.error();
  return out;
}

Result<ObjectSet> decode_objects_json(std::string_view json, const DecodeKinds& kinds) {
  const simdjson::padded_string padded(json);
  return decode_objects_json_in_buffer(padded, kinds);
}

}  // namespace hamisim::model
