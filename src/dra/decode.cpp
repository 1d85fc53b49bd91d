#include "dra/decode.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <array>
#include <cstdint>
#include <set>
#include <string>

#include "dra/names.h"
#include "model/decode.h"
#include "model/simdjson_util.h"

namespace hamisim::dra {
namespace {

namespace od = simdjson::ondemand;
using model::json::type_name;

// API limits (../shared/reference/dra.md §1.9) that keep a decoded object bounded.
constexpr size_t kMaxDevicesPerSlice = 128;
constexpr size_t kMaxAttributesAndCapacities = 32;
constexpr size_t kMaxCounterSets = 8;
constexpr size_t kMaxCountersPerSet = 32;
constexpr size_t kMaxCounterConsumptions = 2;
constexpr size_t kMaxCompatibilityGroups = 8;
constexpr size_t kMaxTaints = 16;
constexpr size_t kMaxBindingConditions = 4;
constexpr size_t kMaxRequests = 32;
constexpr size_t kMaxConstraints = 32;
constexpr size_t kMaxSelectors = 32;
constexpr size_t kMaxSubRequests = 8;
constexpr size_t kMaxTolerations = 16;
constexpr size_t kMaxValidValues = 10;
constexpr size_t kMaxResults = 32;
constexpr size_t kMaxReservedFor = 256;
constexpr size_t kMaxAttributeValueBytes = 64;
constexpr size_t kMaxCelExpressionBytes = 10 * 1024;
constexpr size_t kMaxPoolNameBytes = 253;

// The API versions of resource.k8s.io and how their shapes differ.
enum class Version { kV1, kV1beta2, kV1beta1, kV1alpha3 };

std::optional<Version> version_of(std::string_view api_version) {
  if (api_version == "resource.k8s.io/v1") return Version::kV1;
  if (api_version == "resource.k8s.io/v1beta2") return Version::kV1beta2;
  if (api_version == "resource.k8s.io/v1beta1") return Version::kV1beta1;
  if (api_version == "resource.k8s.io/v1alpha3") return Version::kV1alpha3;
  return std::nullopt;
}

// v1beta1 and v1alpha3 wrap device fields in `basic` and write requests flat.
bool wrapped(Version v) {
  return v == Version::kV1beta1 || v == Version::kV1alpha3;
}

// Walks a JSON document strictly, keeping the path of the value being read for errors.
class Reader {
 public:
  explicit Reader(std::string_view prefix) : path_(prefix) {}

  std::string take_error() { return std::move(error_); }

  // Path scopes: a field (".name"), an index ("[3]") or a map key ("[memory]").
  class Scope {
   public:
    Scope(Reader& r, size_t len) : r_(r), len_(len) {}
    ~Scope() { r_.path_.resize(len_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Reader& r_;
    size_t len_;
  };
  [[nodiscard]] Scope field(std::string_view name) {
    const size_t len = path_.size();
    if (!path_.empty()) path_ += '.';
    path_ += name;
    return Scope(*this, len);
  }
  [[nodiscard]] Scope index(size_t i) {
    const size_t len = path_.size();
    path_ += fmt::format("[{}]", i);
    return Scope(*this, len);
  }
  [[nodiscard]] Scope key(std::string_view k) {
    const size_t len = path_.size();
    path_ += '[';
    path_ += k;
    path_ += ']';
    return Scope(*this, len);
  }

  bool fail(std::string_view message) {
    if (error_.empty())
      error_ = path_.empty() ? std::string(message) : path_ + ": " + std::string(message);
    return false;
  }
  bool fail_json(simdjson::error_code e) {
    return fail(fmt::format("malformed JSON ({})", simdjson::error_message(e)));
  }
  bool fail_type(std::string_view expected, od::json_type got) {
    return fail(fmt::format("expected {}, got {}", expected, type_name(got)));
  }

  bool type(od::value& v, od::json_type& t) {
    if (auto e = v.type().get(t)) return fail_json(e);
    return true;
  }
  // True when the value is JSON null: the field is unset, as Go's decoder leaves it.
  bool is_null(od::value& v, bool& null) {
    od::json_type t{};
    if (!type(v, t)) return false;
    null = t == od::json_type::null;
    return true;
  }
  // True when the caller is done with the value: it is null, an unset field (`result` true),
  // or its type could not be read (`result` false). The idiom:
  //   if (bool ok; r.done_if_null(v, ok)) return ok;
  bool done_if_null(od::value& v, bool& result) {
    bool null = false;
    result = is_null(v, null);
    return !result || null;
  }

  // Reads the value's type, which must be `want` or null (`present` false): the preamble of
  // every reader below.
  bool typed(od::value& v, od::json_type want, std::string_view expected, bool& present) {
    od::json_type t{};
    if (!type(v, t)) return false;
    present = t != od::json_type::null;
    if (present && t != want) return fail_type(expected, t);
    return true;
  }

  // The members of an object whose fields are `names`: `f(i, value)` for the field names[i].
  // A field not in `names` is an error unless `ignored` lists it (then it is skipped); a
  // repeated field is an error. Null is an empty object.
  template <size_t N, class F>
  bool object(od::value& v, const std::array<std::string_view, N>& names, F&& f,
              std::initializer_list<std::string_view> ignored = {}) {
    static_assert(N <= 64);
    bool present = false;
    if (!typed(v, od::json_type::object, "an object", present)) return false;
    if (!present) return true;
    od::object obj;
    if (auto e = v.get_object().get(obj)) return fail_json(e);
    uint64_t seen = 0;
    std::set<std::string, std::less<>> seen_ignored;
    for (auto member : obj) {
      std::string_view key;
      if (auto e = member.unescaped_key().get(key)) return fail_json(e);
      size_t i = 0;
      while (i < N && names[i] != key) ++i;
      if (i == N) {
        bool skip = false;
        for (auto name : ignored) skip = skip || name == key;
        if (!skip) return fail(fmt::format("unknown field \"{}\"", key));
        if (!seen_ignored.emplace(key).second)
          return fail(fmt::format("repeated field \"{}\"", key));
        continue;
      }
      if (seen & (uint64_t{1} << i)) return fail(fmt::format("repeated field \"{}\"", key));
      seen |= uint64_t{1} << i;
      od::value val;
      if (auto e = member.value().get(val)) return fail_json(e);
      const auto scope = field(names[i]);
      if (!f(i, val)) return false;
    }
    return true;
  }

  // A JSON object used as a map: `f(key, value)` for each entry, keys unique and at most
  // `max` of them. Null is an empty map.
  template <class F>
  bool map(od::value& v, size_t max, F&& f) {
    bool present = false;
    if (!typed(v, od::json_type::object, "an object", present)) return false;
    if (!present) return true;
    od::object obj;
    if (auto e = v.get_object().get(obj)) return fail_json(e);
    std::set<std::string, std::less<>> keys;
    for (auto member : obj) {
      std::string_view key;
      if (auto e = member.unescaped_key().get(key)) return fail_json(e);
      if (!keys.emplace(key).second) return fail(fmt::format("repeated key \"{}\"", key));
      if (keys.size() > max) return fail(fmt::format("more than {} entries", max));
      od::value val;
      if (auto e = member.value().get(val)) return fail_json(e);
      const auto scope = this->key(key);
      if (!f(std::string(key), val)) return false;
    }
    return true;
  }

  // A JSON array of at most `max` elements: `f(value)` for each. Null is an empty list.
  template <class F>
  bool list(od::value& v, size_t max, F&& f) {
    bool present = false;
    if (!typed(v, od::json_type::array, "an array", present)) return false;
    if (!present) return true;
    od::array arr;
    if (auto e = v.get_array().get(arr)) return fail_json(e);
    size_t i = 0;
    for (auto element : arr) {
      if (i == max) return fail(fmt::format("more than {} entries", max));
      od::value el;
      if (auto e = std::move(element).get(el)) return fail_json(e);
      const auto scope = index(i);
      if (!f(el)) return false;
      ++i;
    }
    return true;
  }

  bool string(od::value& v, std::string& out) {
    bool present = false;
    if (!typed(v, od::json_type::string, "a string", present)) return false;
    if (!present) return true;
    std::string_view s;
    if (auto e = v.get_string().get(s)) return fail_json(e);
    out.assign(s);
    return true;
  }
  bool optional_string(od::value& v, std::optional<std::string>& out) {
    out.reset();
    if (bool ok; done_if_null(v, ok)) return ok;
    return string(v, out.emplace());
  }
  bool strings(od::value& v, size_t max, std::vector<std::string>& out) {
    out.clear();
    return list(v, max, [&](od::value& el) { return string(el, out.emplace_back()); });
  }
  bool boolean(od::value& v, bool& out) {
    bool present = false;
    if (!typed(v, od::json_type::boolean, "a boolean", present)) return false;
    if (!present) return true;
    if (auto e = v.get_bool().get(out)) return fail_json(e);
    return true;
  }
  bool int64(od::value& v, int64_t& out) {
    bool present = false;
    if (!typed(v, od::json_type::number, "an integer", present)) return false;
    if (!present) return true;
    if (v.get_int64().get(out)) {
      std::string_view raw = v.raw_json_token();
      return fail(fmt::format("{} is not a 64-bit integer", raw));
    }
    return true;
  }
  // A quantity as a JSON string ("80Gi") or number (100), as Quantity.UnmarshalJSON reads it.
  bool quantity(od::value& v, Quantity& out) {
    od::json_type t{};
    if (!type(v, t)) return false;
    std::string_view text;
    if (t == od::json_type::string) {
      if (auto e = v.get_string().get(text)) return fail_json(e);
    } else if (t == od::json_type::number) {
      text = v.raw_json_token();
      while (!text.empty() && model::is_json_space(text.back())) text.remove_suffix(1);
    } else {
      return fail_type("a quantity", t);
    }
    auto q = Quantity::parse(text);
    if (!q) return fail(q.error().message);
    out = *q;
    return true;
  }
  bool optional_quantity(od::value& v, std::optional<Quantity>& out) {
    out.reset();
    if (bool ok; done_if_null(v, ok)) return ok;
    return quantity(v, out.emplace());
  }

 private:
  std::string path_;
  std::string error_;
};

// ---- checks of values --------------------------------------------------------------------

bool check_dns_label(Reader& r, std::string_view s) {
  if (!is_dns_label(s)) {
    return r.fail(fmt::format(
        "\"{}\" is not a DNS label (lower case letters, digits and '-', at most 63)", s));
  }
  return true;
}
bool check_qualified_name(Reader& r, std::string_view s) {
  if (!is_qualified_name(s)) {
    return r.fail(fmt::format(
        "\"{}\" is not a qualified name (an identifier of at most 32 characters, optionally "
        "after a DNS domain and '/')",
        s));
  }
  return true;
}
bool check_fully_qualified_name(Reader& r, std::string_view s) {
  if (!is_qualified_name(s) || s.find('/') == std::string_view::npos) {
    return r.fail(fmt::format("\"{}\" is not a fully qualified name (<domain>/<identifier>)", s));
  }
  return true;
}
bool check_cel(Reader& r, std::string_view expression) {
  if (expression.empty()) return r.fail("the CEL expression is empty");
  if (expression.size() > kMaxCelExpressionBytes) {
    return r.fail(fmt::format("the CEL expression is {} bytes, more than {}", expression.size(),
                              kMaxCelExpressionBytes));
  }
  return true;
}

// ---- shared parts ------------------------------------------------------------------------

bool decode_string_map(Reader& r, od::value& v, model::StringMap& out) {
  return r.map(v, SIZE_MAX, [&](std::string key, od::value& val) {
    std::string s;
    if (!r.string(val, s)) return false;
    out[std::move(key)] = std::move(s);
    return true;
  });
}

bool decode_metadata(Reader& r, od::value& v, model::ObjectMeta& m) {
  static constexpr std::array<std::string_view, 10> kFields = {"name",
                                                               "generateName",
                                                               "namespace",
                                                               "uid",
                                                               "resourceVersion",
                                                               "labels",
                                                               "annotations",
                                                               "creationTimestamp",
                                                               "deletionTimestamp",
                                                               "ownerReferences"};
  // The rest of ObjectMeta is the API server's bookkeeping: nothing placement reads.
  return r.object(
      v, kFields,
      [&](size_t i, od::value& val) {
        switch (i) {
          case 0:
            return r.string(val, m.name);
          case 1:
            return r.string(val, m.generate_name);
          case 2:
            return r.string(val, m.namespace_);
          case 3:
            return r.string(val, m.uid);
          case 4:
            return r.string(val, m.resource_version);
          case 5:
            return decode_string_map(r, val, m.labels);
          case 6:
            return decode_string_map(r, val, m.annotations);
          case 7:
            return r.string(val, m.creation_timestamp);
          case 8:
            return r.optional_string(val, m.deletion_timestamp);
          default:
            return r.list(val, SIZE_MAX, [&](od::value& el) {
              static constexpr std::array<std::string_view, 5> kRef = {"apiVersion", "kind", "name",
                                                                       "uid", "controller"};
              auto& ref = m.owner_references.emplace_back();
              return r.object(el, kRef,
                              [&](size_t j, od::value& f) {
                                switch (j) {
                                  case 0:
                                    return r.string(f, ref.api_version);
                                  case 1:
                                    return r.string(f, ref.kind);
                                  case 2:
                                    return r.string(f, ref.name);
                                  case 3:
                                    return r.string(f, ref.uid);
                                  default:
                                    return r.boolean(f, ref.controller);
                                }
                              },
                              {"blockOwnerDeletion"});
            });
        }
      },
      {"generation", "finalizers", "managedFields", "selfLink", "deletionGracePeriodSeconds"});
}

bool decode_requirement(Reader& r, od::value& v, model::NodeSelectorRequirement& req) {
  static constexpr std::array<std::string_view, 3> kFields = {"key", "operator", "values"};
  if (!r.object(v, kFields, [&](size_t i, od::value& val) {
        switch (i) {
          case 0:
            return r.string(val, req.key);
          case 1:
            return r.string(val, req.op);
          default:
            return r.strings(val, SIZE_MAX, req.values);
        }
      })) {
    return false;
  }
  static constexpr std::array<std::string_view, 6> kOps = {"In",           "NotIn", "Exists",
                                                           "DoesNotExist", "Gt",    "Lt"};
  for (auto op : kOps) {
    if (req.op == op) return true;
  }
  const auto scope = r.field("operator");
  return r.fail(
      fmt::format("unknown operator \"{}\" (In, NotIn, Exists, DoesNotExist, Gt, Lt)", req.op));
}

bool decode_node_selector(Reader& r, od::value& v, model::NodeSelector& ns) {
  static constexpr std::array<std::string_view, 1> kFields = {"nodeSelectorTerms"};
  return r.object(v, kFields, [&](size_t, od::value& val) {
    return r.list(val, SIZE_MAX, [&](od::value& el) {
      static constexpr std::array<std::string_view, 2> kTerm = {"matchExpressions", "matchFields"};
      auto& term = ns.terms.emplace_back();
      return r.object(el, kTerm, [&](size_t i, od::value& f) {
        auto& reqs = i == 0 ? term.match_expressions : term.match_fields;
        return r.list(f, SIZE_MAX,
                      [&](od::value& e) { return decode_requirement(r, e, reqs.emplace_back()); });
      });
    });
  });
}

// ---- ResourceSlice -------------------------------------------------------------------------

bool decode_attribute(Reader& r, od::value& v, cel::Attribute& out) {
  static constexpr std::array<std::string_view, 4> kFields = {"int", "bool", "string", "version"};
  int members = 0;
  const bool ok =
      r.object(v, kFields,
               [&](size_t i, od::value& val) {
                 if (bool ok; r.done_if_null(val, ok)) return ok;
                 ++members;
                 switch (i) {
                   case 0: {
                     int64_t n = 0;
                     if (!r.int64(val, n)) return false;
                     out = n;
                     return true;
                   }
                   case 1: {
                     bool b = false;
                     if (!r.boolean(val, b)) return false;
                     out = b;
                     return true;
                   }
                   case 2: {
                     std::string s;
                     if (!r.string(val, s)) return false;
                     if (s.size() > kMaxAttributeValueBytes) {
                       return r.fail(fmt::format("{} bytes, more than {}", s.size(),
                                                 kMaxAttributeValueBytes));
                     }
                     out = std::move(s);
                     return true;
                   }
                   default: {
                     std::string s;
                     if (!r.string(val, s)) return false;
                     if (s.size() > kMaxAttributeValueBytes) {
                       return r.fail(fmt::format("{} bytes, more than {}", s.size(),
                                                 kMaxAttributeValueBytes));
                     }
                     auto version = cel::parse_semver(s);
                     if (!version) return r.fail(version.error().message);
                     out = std::move(version).value();
                     return true;
                   }
                 }
               },
               // List-typed attributes (DRAListTypeAttributes, alpha in 1.36, off by default).
               {});
  if (!ok) return false;
  if (members != 1) {
    return r.fail(
        "exactly one of int, bool, string and version must be set (list attributes are not "
        "supported: docs/dra.md)");
  }
  return true;
}

bool decode_range(Reader& r, od::value& v, CapacityRange& range) {
  static constexpr std::array<std::string_view, 3> kFields = {"min", "max", "step"};
  bool has_min = false;
  if (!r.object(v, kFields, [&](size_t i, od::value& val) {
        switch (i) {
          case 0:
            has_min = true;
            return r.quantity(val, range.min);
          case 1:
            return r.optional_quantity(val, range.max);
          default:
            return r.optional_quantity(val, range.step);
        }
      })) {
    return false;
  }
  if (!has_min) return r.fail("min is required");
  return true;
}

// The policy's own rules ([VAL] validateRequestPolicy), given the capacity's value.
bool check_policy(Reader& r, const CapacityRequestPolicy& p, const Quantity& value) {
  if (!p.valid_values.empty() && p.valid_range) {
    return r.fail("validValues and validRange are mutually exclusive");
  }
  if ((!p.valid_values.empty() || p.valid_range) && !p.default_value) {
    return r.fail("default is required with validValues or validRange");
  }
  if (!p.valid_values.empty()) {
    for (size_t i = 0; i < p.valid_values.size(); ++i) {
      if (i > 0 && !(p.valid_values[i - 1] < p.valid_values[i])) {
        return r.fail("validValues must be in ascending order without repeats");
      }
      if (p.valid_values[i] > value) {
        return r.fail(fmt::format("validValues[{}] {} is more than the capacity {}", i,
                                  p.valid_values[i].to_string(), value.to_string()));
      }
    }
    bool listed = false;
    for (const auto& q : p.valid_values) listed = listed || q == *p.default_value;
    if (!listed) return r.fail("default must be one of validValues");
  }
  if (p.valid_range) {
    const auto& range = *p.valid_range;
    if (range.min > value) return r.fail("validRange.min is more than the capacity");
    if (*p.default_value < range.min) return r.fail("default is less than validRange.min");
    if (range.max) {
      if (*range.max < range.min || *range.max > value) {
        return r.fail("validRange.max must be between validRange.min and the capacity");
      }
      if (*p.default_value > *range.max) return r.fail("default is more than validRange.max");
    }
    if (range.step) {
      // The API checks steps with Quantity.Value() integers; so does the allocator.
      const int64_t step = range.step->value();
      if (step <= 0) return r.fail("validRange.step must be positive");
      if (range.min + *range.step > value) {
        return r.fail("validRange.min + validRange.step is more than the capacity");
      }
      const int64_t min = range.min.value();
      if ((p.default_value->value() - min) % step != 0) {
        return r.fail("default - validRange.min is not a multiple of validRange.step");
      }
      if (range.max && (range.max->value() - min) % step != 0) {
        return r.fail("validRange.max - validRange.min is not a multiple of validRange.step");
      }
    }
  }
  return true;
}

bool decode_capacity(Reader& r, od::value& v, Version version, DeviceCapacity& cap) {
  od::json_type t{};
  if (!r.type(v, t)) return false;
  if (version == Version::kV1alpha3 && t != od::json_type::object) return r.quantity(v, cap.value);
  static constexpr std::array<std::string_view, 2> kFields = {"value", "requestPolicy"};
  bool has_value = false;
  if (!r.object(v, kFields, [&](size_t i, od::value& val) {
        if (i == 0) {
          has_value = true;
          return r.quantity(val, cap.value);
        }
        if (bool ok; r.done_if_null(val, ok)) return ok;
        auto& p = cap.request_policy.emplace();
        static constexpr std::array<std::string_view, 3> kPolicy = {"default", "validValues",
                                                                    "validRange"};
        if (!r.object(val, kPolicy, [&](size_t j, od::value& f) {
              switch (j) {
                case 0:
                  return r.optional_quantity(f, p.default_value);
                case 1:
                  return r.list(f, kMaxValidValues, [&](od::value& el) {
                    return r.quantity(el, p.valid_values.emplace_back());
                  });
                default: {
                  if (bool ok; r.done_if_null(f, ok)) return ok;
                  return decode_range(r, f, p.valid_range.emplace());
                }
              }
            })) {
          return false;
        }
        return true;
      })) {
    return false;
  }
  if (!has_value) return r.fail("value is required");
  // The policy is checked against the value once both are read: JSON objects are unordered,
  // and `kubectl get -o json` prints requestPolicy before value (its keys sorted).
  if (cap.request_policy) {
    auto scope = r.field("requestPolicy");
    return check_policy(r, *cap.request_policy, cap.value);
  }
  return true;
}

bool decode_counters(Reader& r, od::value& v, Counters& out) {
  return r.map(v, kMaxCountersPerSet, [&](std::string name, od::value& val) {
    if (!check_dns_label(r, name)) return false;
    static constexpr std::array<std::string_view, 1> kFields = {"value"};
    bool has_value = false;
    Quantity q;
    if (!r.object(val, kFields, [&](size_t, od::value& f) {
          has_value = true;
          return r.quantity(f, q);
        })) {
      return false;
    }
    if (!has_value) return r.fail("value is required");
    out.emplace(std::move(name), q);
    return true;
  });
}

bool decode_taint(Reader& r, od::value& v, DeviceTaint& taint) {
  static constexpr std::array<std::string_view, 3> kFields = {"key", "value", "effect"};
  if (!r.object(v, kFields,
                [&](size_t i, od::value& val) {
                  switch (i) {
                    case 0:
                      return r.string(val, taint.key);
                    case 1:
                      return r.string(val, taint.value);
                    default:
                      return r.string(val, taint.effect);
                  }
                },
                {"timeAdded"})) {
    return false;
  }
  if (taint.key.empty()) return r.fail("key is required");
  if (taint.effect.empty()) return r.fail("effect is required");
  return true;
}

// A DeviceTaintRule's spec: the device selector's driver, pool and device, and the taint.
bool decode_taint_rule_spec(Reader& r, od::value& v, DeviceTaintRule& rule) {
  static constexpr std::array<std::string_view, 2> kFields = {"deviceSelector", "taint"};
  bool has_taint = false;
  if (!r.object(v, kFields, [&](size_t i, od::value& val) {
        if (i == 1) {
          has_taint = true;
          return decode_taint(r, val, rule.taint);
        }
        static constexpr std::array<std::string_view, 3> kSelector = {"driver", "pool", "device"};
        bool present = false;
        if (!r.typed(val, od::json_type::object, "an object", present)) return false;
        rule.has_selector = present;
        return r.object(val, kSelector, [&](size_t j, od::value& f) {
          std::optional<std::string>& field =
              j == 0 ? rule.driver : (j == 1 ? rule.pool : rule.device);
          bool set = false;
          if (!r.typed(f, od::json_type::string, "a string", set)) return false;
          if (!set) return true;
          return r.string(f, field.emplace());
        });
      })) {
    return false;
  }
  if (!has_taint) return r.fail("taint is required");
  return true;
}

// The node fields a slice and (with perDeviceNodeSelection) a device share; `i` indexes
// {nodeName, nodeSelector, allNodes}.
bool decode_scope_field(Reader& r, size_t i, od::value& v, NodeScope& scope) {
  if (bool ok; r.done_if_null(v, ok)) return ok;
  switch (i) {
    case 0:
      if (!r.optional_string(v, scope.node_name)) return false;
      if (scope.node_name->empty()) return r.fail("must not be empty");
      return true;
    case 1:
      return decode_node_selector(r, v, scope.node_selector.emplace());
    default:
      if (!r.boolean(v, scope.all_nodes)) return false;
      if (!scope.all_nodes) return r.fail("may only be true");
      return true;
  }
}

int scope_members(const NodeScope& s) {
  return (s.node_name ? 1 : 0) + (s.node_selector ? 1 : 0) + (s.all_nodes ? 1 : 0);
}

// A device's fields other than its name; in v1beta1 and v1alpha3 they sit under `basic`.
constexpr std::array<std::string_view, 12> kDeviceBody = {"attributes",
                                                          "capacity",
                                                          "consumesCounters",
                                                          "nodeName",
                                                          "nodeSelector",
                                                          "allNodes",
                                                          "taints",
                                                          "bindsToNode",
                                                          "bindingConditions",
                                                          "bindingFailureConditions",
                                                          "allowMultipleAllocations",
                                                          "nodeAllocatableResources"};

bool decode_device_field(Reader& r, size_t i, od::value& val, Version version, Device& d) {
  switch (i) {
    case 0:
      return r.map(val, kMaxAttributesAndCapacities, [&](std::string name, od::value& a) {
        if (!check_qualified_name(r, name)) return false;
        return decode_attribute(r, a, d.attributes[std::move(name)]);
      });
    case 1:
      return r.map(val, kMaxAttributesAndCapacities, [&](std::string name, od::value& c) {
        if (!check_qualified_name(r, name)) return false;
        return decode_capacity(r, c, version, d.capacity[std::move(name)]);
      });
    case 2:
      return r.list(val, kMaxCounterConsumptions, [&](od::value& el) {
        static constexpr std::array<std::string_view, 3> kUse = {"counterSet", "counters",
                                                                 "compatibilityGroups"};
        auto& use = d.consumes_counters.emplace_back();
        if (!r.object(el, kUse, [&](size_t j, od::value& f) {
              if (j == 2) {
                return r.list(f, kMaxCompatibilityGroups, [&](od::value& g) {
                  return r.string(g, use.compatibility_groups.emplace_back());
                });
              }
              return j == 0 ? r.string(f, use.counter_set) : decode_counters(r, f, use.counters);
            })) {
          return false;
        }
        if (use.counter_set.empty()) return r.fail("counterSet is required");
        return true;
      });
    case 3:
    case 4:
    case 5: {
      // Allowed only with the slice's perDeviceNodeSelection, which decode_slice_spec checks
      // once the whole slice is read.
      if (bool ok; r.done_if_null(val, ok)) return ok;
      if (!d.node_scope) d.node_scope.emplace();
      return decode_scope_field(r, i - 3, val, *d.node_scope);
    }
    case 6:
      return r.list(val, kMaxTaints,
                    [&](od::value& el) { return decode_taint(r, el, d.taints.emplace_back()); });
    case 7:
      return r.boolean(val, d.binds_to_node);
    case 8:
      return r.strings(val, kMaxBindingConditions, d.binding_conditions);
    case 9:
      return r.strings(val, kMaxBindingConditions, d.binding_failure_conditions);
    case 10:
      return r.boolean(val, d.allow_multiple_allocations);
    default:
      return true;  // node allocatable mappings (alpha): no effect on device placement
  }
}

bool decode_device(Reader& r, od::value& v, Version version, Device& d) {
  bool ok = false;
  if (wrapped(version)) {
    static constexpr std::array<std::string_view, 2> kDevice = {"name", "basic"};
    ok = r.object(v, kDevice, [&](size_t i, od::value& val) {
      if (i == 0) return r.string(val, d.name);
      return r.object(val, kDeviceBody, [&](size_t j, od::value& f) {
        return decode_device_field(r, j, f, version, d);
      });
    });
  } else {
    static constexpr auto kDevice = [] {
      std::array<std::string_view, kDeviceBody.size() + 1> names{"name"};
      for (size_t i = 0; i < kDeviceBody.size(); ++i) names[i + 1] = kDeviceBody[i];
      return names;
    }();
    ok = r.object(v, kDevice, [&](size_t i, od::value& val) {
      return i == 0 ? r.string(val, d.name) : decode_device_field(r, i - 1, val, version, d);
    });
  }
  if (!ok) return false;
  if (!check_dns_label(r, d.name)) return false;
  if (d.attributes.size() + d.capacity.size() > kMaxAttributesAndCapacities) {
    return r.fail(
        fmt::format("more than {} attributes and capacities", kMaxAttributesAndCapacities));
  }
  for (const auto& [name, cap] : d.capacity) {
    if (cap.request_policy && !d.allow_multiple_allocations) {
      return r.fail(
          fmt::format("capacity[{}].requestPolicy needs allowMultipleAllocations: true", name));
    }
  }
  return true;
}

bool decode_slice_spec(Reader& r, od::value& v, Version version, ResourceSlice& s) {
  static constexpr std::array<std::string_view, 8> kFields = {
      "driver",  "pool",          "nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection",
      "devices", "sharedCounters"};
  bool has_pool = false;
  std::set<std::string, std::less<>> device_names;
  if (!r.object(
          v, kFields,
          [&](size_t i, od::value& val) {
            switch (i) {
              case 0:
                return r.string(val, s.driver);
              case 1: {
                has_pool = true;
                static constexpr std::array<std::string_view, 3> kPool = {"name", "generation",
                                                                          "resourceSliceCount"};
                return r.object(val, kPool, [&](size_t j, od::value& f) {
                  switch (j) {
                    case 0:
                      return r.string(f, s.pool.name);
                    case 1:
                      return r.int64(f, s.pool.generation);
                    default:
                      return r.int64(f, s.pool.resource_slice_count);
                  }
                });
              }
              case 2:
              case 3:
              case 4:
                return decode_scope_field(r, i - 2, val, s.scope);
              case 5: {
                if (bool ok; r.done_if_null(val, ok)) return ok;
                if (!r.boolean(val, s.per_device_node_selection)) return false;
                if (!s.per_device_node_selection) return r.fail("may only be true");
                return true;
              }
              case 6:
                return r.list(val, kMaxDevicesPerSlice, [&](od::value& el) {
                  auto& d = s.devices.emplace_back();
                  if (!decode_device(r, el, version, d)) return false;
                  if (!device_names.insert(d.name).second) {
                    return r.fail(
                        fmt::format("device name \"{}\" is used twice in the slice", d.name));
                  }
                  return true;
                });
              default:
                return r.list(val, kMaxCounterSets, [&](od::value& el) {
                  static constexpr std::array<std::string_view, 2> kSet = {"name", "counters"};
                  auto& set = s.shared_counters.emplace_back();
                  if (!r.object(el, kSet, [&](size_t j, od::value& f) {
                        return j == 0 ? r.string(f, set.name) : decode_counters(r, f, set.counters);
                      })) {
                    return false;
                  }
                  return check_dns_label(r, set.name);
                });
            }
          },
          {"partitionTypeAttribute", "skipNodeOperations"})) {
    return false;
  }
  if (s.driver.empty()) {
    const auto scope = r.field("driver");
    return r.fail("is required");
  }
  if (!is_dns_subdomain(s.driver, 63)) {
    const auto scope = r.field("driver");
    return r.fail(fmt::format("\"{}\" is not a DNS subdomain of at most 63 characters", s.driver));
  }
  if (!has_pool || s.pool.name.empty()) {
    const auto scope = r.field("pool.name");
    return r.fail("is required");
  }
  if (!is_pool_name(s.pool.name, kMaxPoolNameBytes)) {
    const auto scope = r.field("pool.name");
    return r.fail(
        fmt::format("\"{}\" is not one or more DNS subdomains separated by '/'", s.pool.name));
  }
  if (s.pool.generation < 0) {
    const auto scope = r.field("pool.generation");
    return r.fail("must not be negative");
  }
  if (s.pool.resource_slice_count <= 0) {
    const auto scope = r.field("pool.resourceSliceCount");
    return r.fail("must be greater than zero");
  }
  const int members = scope_members(s.scope) + (s.per_device_node_selection ? 1 : 0);
  if (members != 1) {
    return r.fail(
        "exactly one of nodeName, nodeSelector, allNodes and perDeviceNodeSelection must be set");
  }
  if (s.scope.node_selector && s.scope.node_selector->terms.size() != 1) {
    const auto scope = r.field("nodeSelector");
    return r.fail("must have exactly one nodeSelectorTerms entry");
  }
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const auto& d = s.devices[i];
    const auto scope = r.field("devices");
    const auto index = r.index(i);
    if (!s.per_device_node_selection && d.node_scope) {
      return r.fail(
          "nodeName, nodeSelector and allNodes may only be set when the slice sets "
          "perDeviceNodeSelection");
    }
    if (s.per_device_node_selection && (!d.node_scope || scope_members(*d.node_scope) != 1)) {
      return r.fail(
          "exactly one of nodeName, nodeSelector and allNodes must be set (the slice "
          "sets perDeviceNodeSelection)");
    }
  }
  // Devices and sharedCounters in one slice: invalid from 1.35, the only layout in 1.34.
  // Both are read.
  return true;
}

// ---- DeviceClass ---------------------------------------------------------------------------

bool decode_selectors(Reader& r, od::value& v, std::vector<std::string>& out) {
  return r.list(v, kMaxSelectors, [&](od::value& el) {
    static constexpr std::array<std::string_view, 1> kSelector = {"cel"};
    bool has_cel = false;
    auto& expression = out.emplace_back();
    if (!r.object(el, kSelector, [&](size_t, od::value& c) {
          static constexpr std::array<std::string_view, 1> kCel = {"expression"};
          has_cel = true;
          return r.object(c, kCel, [&](size_t, od::value& e) { return r.string(e, expression); });
        })) {
      return false;
    }
    if (!has_cel) return r.fail("cel is required");
    const auto scope = r.field("cel.expression");
    return check_cel(r, expression);
  });
}

bool decode_class_spec(Reader& r, od::value& v, DeviceClass& c) {
  static constexpr std::array<std::string_view, 3> kFields = {"selectors", "config",
                                                              "extendedResourceName"};
  return r.object(v, kFields, [&](size_t i, od::value& val) {
    switch (i) {
      case 0:
        return decode_selectors(r, val, c.selectors);
      case 1:
        return true;  // opaque driver configuration: copied into results, not allocated on
      default:
        return r.optional_string(val, c.extended_resource_name);
    }
  });
}

// ---- ResourceClaim -------------------------------------------------------------------------

bool decode_toleration(Reader& r, od::value& v, DeviceToleration& t) {
  static constexpr std::array<std::string_view, 5> kFields = {"key", "operator", "value", "effect",
                                                              "tolerationSeconds"};
  if (!r.object(v, kFields, [&](size_t i, od::value& val) {
        switch (i) {
          case 0:
            return r.string(val, t.key);
          case 1:
            return r.string(val, t.op);
          case 2:
            return r.string(val, t.value);
          case 3:
            return r.string(val, t.effect);
          default: {
            if (bool ok; r.done_if_null(val, ok)) return ok;
            return r.int64(val, t.toleration_seconds.emplace());
          }
        }
      })) {
    return false;
  }
  if (t.op.empty()) t.op = "Equal";
  if (t.op != "Equal" && t.op != "Exists") {
    return r.fail(fmt::format("operator \"{}\" is neither Equal nor Exists", t.op));
  }
  if (t.key.empty() && t.op != "Exists") return r.fail("an empty key needs operator Exists");
  if (t.op == "Exists" && !t.value.empty()) return r.fail("operator Exists takes no value");
  if (!t.effect.empty() && t.effect != "NoSchedule" && t.effect != "NoExecute") {
    return r.fail(fmt::format("effect \"{}\" is neither NoSchedule nor NoExecute", t.effect));
  }
  return true;
}

// The fields of an ExactDeviceRequest (`exactly`, a subrequest, or a v1beta1 request written
// flat); `i` indexes kExactFields.
constexpr std::array<std::string_view, 7> kExactFields = {
    "deviceClassName", "selectors",   "allocationMode", "count",
    "adminAccess",     "tolerations", "capacity"};

bool decode_exact_field(Reader& r, size_t i, od::value& val, ExactDeviceRequest& req,
                        bool& count_set, std::string& mode) {
  switch (i) {
    case 0:
      return r.string(val, req.device_class_name);
    case 1:
      return decode_selectors(r, val, req.selectors);
    case 2:
      return r.string(val, mode);
    case 3: {
      bool null = false;
      if (!r.is_null(val, null)) return false;
      count_set = !null;
      return r.int64(val, req.count);
    }
    case 4:
      return r.boolean(val, req.admin_access);
    case 5:
      return r.list(val, kMaxTolerations, [&](od::value& el) {
        return decode_toleration(r, el, req.tolerations.emplace_back());
      });
    default: {
      static constexpr std::array<std::string_view, 1> kCapacity = {"requests"};
      return r.object(val, kCapacity, [&](size_t, od::value& reqs) {
        return r.map(reqs, kMaxAttributesAndCapacities, [&](std::string name, od::value& q) {
          if (!check_qualified_name(r, name)) return false;
          Quantity amount;
          if (!r.quantity(q, amount)) return false;
          if (amount.sign() < 0) return r.fail("must not be negative");
          req.capacity_requests.emplace(std::move(name), amount);
          return true;
        });
      });
    }
  }
}

// Defaults and rules once all fields of one exact request are read.
bool finish_exact(Reader& r, ExactDeviceRequest& req, bool count_set, const std::string& mode,
                  bool subrequest) {
  if (req.device_class_name.empty()) return r.fail("deviceClassName is required");
  if (mode.empty() || mode == "ExactCount") {
    req.allocation_mode = AllocationMode::kExactCount;
    if (!count_set || req.count == 0) req.count = 1;
    if (req.count < 0) return r.fail(fmt::format("count {} must be greater than zero", req.count));
  } else if (mode == "All") {
    req.allocation_mode = AllocationMode::kAll;
    if (count_set && req.count != 0) return r.fail("count must be 0 with allocationMode All");
    req.count = 0;
  } else {
    return r.fail(fmt::format("allocationMode \"{}\" is neither ExactCount nor All", mode));
  }
  if (subrequest && req.admin_access) return r.fail("adminAccess is not allowed in a subrequest");
  return true;
}

bool decode_subrequest(Reader& r, od::value& v, DeviceSubRequest& sub) {
  static constexpr std::array<std::string_view, 8> kFields = {
      "name",  "deviceClassName", "selectors",   "allocationMode",
      "count", "adminAccess",     "tolerations", "capacity"};
  bool count_set = false;
  std::string mode;
  if (!r.object(v, kFields, [&](size_t i, od::value& val) {
        if (i == 0) return r.string(val, sub.name);
        if (i == 5) return r.fail("subrequests cannot ask for admin access");
        return decode_exact_field(r, i - 1, val, sub.request, count_set, mode);
      })) {
    return false;
  }
  if (!check_dns_label(r, sub.name)) return false;
  return finish_exact(r, sub.request, count_set, mode, true);
}

bool decode_request(Reader& r, od::value& v, Version version, DeviceRequest& req) {
  // v1 and v1beta2: {name, exactly, firstAvailable}. v1beta1 and v1alpha3: the exact fields
  // flat beside name and firstAvailable.
  static constexpr std::array<std::string_view, 10> kFields = {
      "name",           "exactly", "firstAvailable", "deviceClassName", "selectors",
      "allocationMode", "count",   "adminAccess",    "tolerations",     "capacity"};
  bool count_set = false;
  bool flat = false;
  std::string mode;
  ExactDeviceRequest flat_request;
  if (!r.object(v, kFields, [&](size_t i, od::value& val) {
        switch (i) {
          case 0:
            return r.string(val, req.name);
          case 1: {
            if (wrapped(version))
              return r.fail("not in this API version (its request fields are flat)");
            if (bool ok; r.done_if_null(val, ok)) return ok;
            auto& exact = req.exactly.emplace();
            bool exact_count_set = false;
            std::string exact_mode;
            if (!r.object(val, kExactFields, [&](size_t j, od::value& f) {
                  return decode_exact_field(r, j, f, exact, exact_count_set, exact_mode);
                })) {
              return false;
            }
            return finish_exact(r, exact, exact_count_set, exact_mode, false);
          }
          case 2:
            return r.list(val, kMaxSubRequests, [&](od::value& el) {
              return decode_subrequest(r, el, req.first_available.emplace_back());
            });
          default:
            if (!wrapped(version)) {
              return r.fail("belongs under exactly in this API version");
            }
            flat = true;
            return decode_exact_field(r, i - 3, val, flat_request, count_set, mode);
        }
      })) {
    return false;
  }
  if (!check_dns_label(r, req.name)) return false;
  if (flat || (wrapped(version) && req.first_available.empty())) {
    if (!finish_exact(r, flat_request, count_set, mode, false)) return false;
    req.exactly = std::move(flat_request);
  }
  if (req.exactly.has_value() == !req.first_available.empty()) {
    return r.fail("exactly one of exactly and firstAvailable must be set");
  }
  std::set<std::string, std::less<>> names;
  for (const auto& sub : req.first_available) {
    if (!names.insert(sub.name).second) {
      return r.fail(fmt::format("subrequest name \"{}\" is used twice", sub.name));
    }
  }
  return true;
}

bool decode_claim_spec(Reader& r, od::value& v, Version version, ResourceClaimSpec& spec) {
  static constexpr std::array<std::string_view, 1> kSpec = {"devices"};
  return r.object(v, kSpec, [&](size_t, od::value& devices) {
    static constexpr std::array<std::string_view, 3> kDevices = {"requests", "constraints",
                                                                 "config"};
    if (!r.object(devices, kDevices, [&](size_t i, od::value& val) {
          switch (i) {
            case 0:
              return r.list(val, kMaxRequests, [&](od::value& el) {
                return decode_request(r, el, version, spec.requests.emplace_back());
              });
            case 1:
              return r.list(val, kMaxConstraints, [&](od::value& el) {
                static constexpr std::array<std::string_view, 3> kConstraint = {
                    "requests", "matchAttribute", "distinctAttribute"};
                auto& c = spec.constraints.emplace_back();
                if (!r.object(el, kConstraint, [&](size_t j, od::value& f) {
                      switch (j) {
                        case 0:
                          return r.strings(f, kMaxRequests, c.requests);
                        case 1:
                          return r.optional_string(f, c.match_attribute);
                        default:
                          return r.optional_string(f, c.distinct_attribute);
                      }
                    })) {
                  return false;
                }
                if (c.match_attribute.has_value() == c.distinct_attribute.has_value()) {
                  return r.fail("exactly one of matchAttribute and distinctAttribute must be set");
                }
                return check_fully_qualified_name(
                    r, c.match_attribute ? *c.match_attribute : *c.distinct_attribute);
              });
            default:
              return true;  // opaque configuration: not allocated on
          }
        })) {
      return false;
    }
    // Names are unique, and constraints name requests of this claim.
    std::set<std::string, std::less<>> names;
    for (const auto& req : spec.requests) {
      if (!names.insert(req.name).second) {
        const auto scope = r.field("requests");
        return r.fail(fmt::format("request name \"{}\" is used twice", req.name));
      }
      for (const auto& sub : req.first_available) names.insert(req.name + "/" + sub.name);
    }
    for (size_t i = 0; i < spec.constraints.size(); ++i) {
      for (const auto& name : spec.constraints[i].requests) {
        if (!names.contains(name)) {
          const auto scope = r.field("constraints");
          const auto index = r.index(i);
          return r.fail(
              fmt::format("requests names \"{}\", which is not a request of this claim", name));
        }
      }
    }
    return true;
  });
}

bool decode_result(Reader& r, od::value& v, DeviceRequestAllocationResult& res) {
  static constexpr std::array<std::string_view, 8> kFields = {
      "request", "driver",           "pool",       "device", "adminAccess",
      "shareID", "consumedCapacity", "tolerations"};
  if (!r.object(v, kFields,
                [&](size_t i, od::value& val) {
                  switch (i) {
                    case 0:
                      return r.string(val, res.request);
                    case 1:
                      return r.string(val, res.driver);
                    case 2:
                      return r.string(val, res.pool);
                    case 3:
                      return r.string(val, res.device);
                    case 4:
                      return r.boolean(val, res.admin_access);
                    case 5:
                      return r.optional_string(val, res.share_id);
                    case 6:
                      return r.map(val, kMaxAttributesAndCapacities,
                                   [&](std::string name, od::value& q) {
                                     return r.quantity(q, res.consumed_capacity[std::move(name)]);
                                   });
                    default:
                      return r.list(val, kMaxTolerations, [&](od::value& el) {
                        return decode_toleration(r, el, res.tolerations.emplace_back());
                      });
                  }
                },
                {"bindingConditions", "bindingFailureConditions"})) {
    return false;
  }
  if (res.request.empty() || res.driver.empty() || res.pool.empty() || res.device.empty()) {
    return r.fail("request, driver, pool and device are required");
  }
  return true;
}

bool decode_claim_status(Reader& r, od::value& v, ResourceClaimStatus& st) {
  static constexpr std::array<std::string_view, 3> kFields = {"allocation", "reservedFor",
                                                              "devices"};
  return r.object(v, kFields, [&](size_t i, od::value& val) {
    switch (i) {
      case 0: {
        if (bool ok; r.done_if_null(val, ok)) return ok;
        auto& a = st.allocation.emplace();
        static constexpr std::array<std::string_view, 2> kAllocation = {"devices", "nodeSelector"};
        return r.object(val, kAllocation,
                        [&](size_t j, od::value& f) {
                          if (j == 1) {
                            if (bool ok; r.done_if_null(f, ok)) return ok;
                            return decode_node_selector(r, f, a.node_selector.emplace());
                          }
                          static constexpr std::array<std::string_view, 2> kDevices = {"results",
                                                                                       "config"};
                          return r.object(f, kDevices, [&](size_t k, od::value& d) {
                            if (k == 1)
                              return true;  // configuration copied from the class and claim
                            return r.list(d, kMaxResults, [&](od::value& el) {
                              return decode_result(r, el, a.results.emplace_back());
                            });
                          });
                        },
                        {"allocationTimestamp"});
      }
      case 1:
        return r.list(val, kMaxReservedFor, [&](od::value& el) {
          static constexpr std::array<std::string_view, 4> kRef = {"apiGroup", "resource", "name",
                                                                   "uid"};
          auto& ref = st.reserved_for.emplace_back();
          return r.object(el, kRef, [&](size_t j, od::value& f) {
            switch (j) {
              case 0:
                return r.string(f, ref.api_group);
              case 1:
                return r.string(f, ref.resource);
              case 2:
                return r.string(f, ref.name);
              default:
                return r.string(f, ref.uid);
            }
          });
        });
      default:
        return true;  // what drivers report about prepared devices: not placement
    }
  });
}

// ---- objects -------------------------------------------------------------------------------

enum class Kind { kSlice, kClass, kClaim, kTemplate, kTaintRule };

std::optional<Kind> kind_of(std::string_view kind) {
  if (kind == "ResourceSlice") return Kind::kSlice;
  if (kind == "DeviceClass") return Kind::kClass;
  if (kind == "ResourceClaim") return Kind::kClaim;
  if (kind == "ResourceClaimTemplate") return Kind::kTemplate;
  if (kind == "DeviceTaintRule") return Kind::kTaintRule;
  return std::nullopt;
}

// Reads apiVersion and kind first (they may come anywhere in the object).
bool type_meta(Reader& r, od::document& doc, std::string& api_version, std::string& kind) {
  od::object obj;
  od::json_type t{};
  if (auto e = doc.type().get(t)) return r.fail_json(e);
  if (t != od::json_type::object) return r.fail_type("an object", t);
  if (auto e = doc.get_object().get(obj)) return r.fail_json(e);
  for (auto member : obj) {
    std::string_view key;
    if (auto e = member.unescaped_key().get(key)) return r.fail_json(e);
    if (key != "apiVersion" && key != "kind") continue;
    od::value val;
    if (auto e = member.value().get(val)) return r.fail_json(e);
    const auto scope = r.field(key);
    if (!r.string(val, key == "kind" ? kind : api_version)) return false;
  }
  return true;
}

template <class T>
bool decode_into(Reader& r, od::value& root, Version version, T& out) {
  static constexpr std::array<std::string_view, 5> kFields = {"apiVersion", "kind", "metadata",
                                                              "spec", "status"};
  bool has_spec = false;
  if (!r.object(root, kFields, [&](size_t i, od::value& val) {
        switch (i) {
          case 0:
          case 1:
            return true;  // read by type_meta
          case 2:
            return decode_metadata(r, val, out.metadata);
          case 3:
            has_spec = true;
            if constexpr (std::is_same_v<T, ResourceSlice>) {
              return decode_slice_spec(r, val, version, out);
            } else if constexpr (std::is_same_v<T, DeviceClass>) {
              return decode_class_spec(r, val, out);
            } else if constexpr (std::is_same_v<T, ResourceClaim>) {
              return decode_claim_spec(r, val, version, out.spec);
            } else if constexpr (std::is_same_v<T, DeviceTaintRule>) {
              return decode_taint_rule_spec(r, val, out);
            } else {
              static constexpr std::array<std::string_view, 2> kTemplate = {"metadata", "spec"};
              return r.object(val, kTemplate, [&](size_t j, od::value& f) {
                if (j == 1) return decode_claim_spec(r, f, version, out.spec);
                static constexpr std::array<std::string_view, 2> kMeta = {"labels", "annotations"};
                return r.object(f, kMeta, [&](size_t k, od::value& m) {
                  return decode_string_map(r, m, k == 0 ? out.claim_labels : out.claim_annotations);
                });
              });
            }
          default:
            if constexpr (std::is_same_v<T, ResourceClaim>) {
              return decode_claim_status(r, val, out.status);
            } else if constexpr (std::is_same_v<T, DeviceTaintRule>) {
              return true;  // conditions about eviction, which placement does not read
            } else {
              return r.fail("this kind has no status");
            }
        }
      })) {
    return false;
  }
  if (!has_spec) return r.fail("spec is required");
  if (out.metadata.name.empty() && out.metadata.generate_name.empty()) {
    return r.fail("metadata.name is required");
  }
  return true;
}

// Parses `json` and hands its version, kind and root value to `f(reader, version, kind,
// root)`, which decodes it.
template <class F>
Status with_object(std::string_view json, std::string_view path, F&& f) {
  Reader r(path);
  simdjson::padded_string padded(json);
  od::parser parser;
  od::document doc;
  std::string api_version, kind;
  od::value root;
  if (auto e = parser.iterate(padded).get(doc)) {
    r.fail_json(e);
  } else if (type_meta(r, doc, api_version, kind)) {
    const auto version = version_of(api_version);
    const auto k = kind_of(kind);
    if (!version || !k) {
      r.fail(fmt::format("not a resource.k8s.io object (apiVersion \"{}\", kind \"{}\")",
                         api_version, kind));
    } else if (doc.rewind(); auto e = doc.get_value().get(root)) {
      r.fail_json(e);
    } else {
      f(r, *version, *k, root);
    }
  }
  std::string error = r.take_error();
  if (!error.empty()) return make_error(std::move(error));
  return ok_status();
}

template <class T>
Result<T> decode_as(std::string_view json, Kind want, std::string_view want_name) {
  T out;
  auto st = with_object(json, "", [&](Reader& r, Version version, Kind kind, od::value& root) {
    if (kind != want) return r.fail(fmt::format("expected kind {}", want_name));
    return decode_into(r, root, version, out);
  });
  if (!st) return st.error();
  return out;
}

}  // namespace

bool is_dra_kind(std::string_view api_version, std::string_view kind) {
  return model::is_dra_kind(api_version, kind);  // the one list of kinds and versions
}

Status decode_objects(const std::vector<model::RawObject>& items, Objects& out) {
  for (const model::RawObject& item : items) {
    if (Status s = decode_object(item.json, item.path, out); !s) return s;
  }
  apply_device_taint_rules(out);
  return ok_status();
}

void apply_device_taint_rules(Objects& objects) {
  // As kube-scheduler's ResourceSlice tracker patches the slices the allocator sees: a rule
  // without a selector applies to nothing; each unset field of the selector matches anything.
  for (ResourceSlice& slice : objects.slices) {
    for (const DeviceTaintRule& rule : objects.taint_rules) {
      if (!rule.has_selector) continue;
      if (rule.driver && *rule.driver != slice.driver) continue;
      if (rule.pool && *rule.pool != slice.pool.name) continue;
      for (Device& device : slice.devices) {
        if (rule.device && *rule.device != device.name) continue;
        device.taints.push_back(rule.taint);
      }
    }
  }
}

Status decode_object(std::string_view json, std::string_view path, Objects& out) {
  return with_object(json, path, [&](Reader& r, Version version, Kind kind, od::value& root) {
    // Decoded into a fresh object, appended only when whole.
    auto append = [&](auto& list) {
      typename std::remove_reference_t<decltype(list)>::value_type object;
      if (!decode_into(r, root, version, object)) return false;
      list.push_back(std::move(object));
      return true;
    };
    switch (kind) {
      case Kind::kSlice:
        return append(out.slices);
      case Kind::kClass:
        return append(out.classes);
      case Kind::kClaim:
        return append(out.claims);
      case Kind::kTemplate:
        return append(out.claim_templates);
      case Kind::kTaintRule:
        return append(out.taint_rules);
    }
    return true;
  });
}

Result<ResourceSlice> decode_resource_slice(std::string_view json) {
  return decode_as<ResourceSlice>(json, Kind::kSlice, "ResourceSlice");
}
Result<DeviceClass> decode_device_class(std::string_view json) {
  return decode_as<DeviceClass>(json, Kind::kClass, "DeviceClass");
}
Result<ResourceClaim> decode_resource_claim(std::string_view json) {
  return decode_as<ResourceClaim>(json, Kind::kClaim, "ResourceClaim");
}
Result<ResourceClaimTemplate> decode_resource_claim_template(std::string_view json) {
  return decode_as<ResourceClaimTemplate>(json, Kind::kTemplate, "ResourceClaimTemplate");
}

}  // namespace hamisim::dra
