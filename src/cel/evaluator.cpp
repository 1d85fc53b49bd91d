// Tree-walking evaluation with CEL's run-time semantics (cel-go as Kubernetes 1.37 configures
// it): strict operators propagate the first error, `&&` / `||` and the all/exists macros absorb
// errors when another operand decides, `==` across different types is false except between
// numbers, which compare by value (and Quantity and Semver refuse other types, as Kubernetes'
// types do). The run-time cost is counted as cel-go counts it, closely enough that an evaluation
// far past Kubernetes' limit fails as it does there (docs/cel.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "cel/ast.h"
#include "go/utf8.h"

namespace hamisim::cel::detail {
namespace {

// A bound variable's value (or error), chained innermost first on the C++ stack.
struct Frame {
  const Frame* parent = nullptr;
  const Result<Value>* value = nullptr;
};

std::string runtime_type_name(const Value& v) {
  switch (v.type) {
    case Type::kList:
      return "list";
    case Type::kMap:
    case Type::kAttrRoot:
    case Type::kCapRoot:
    case Type::kAttrDomain:
    case Type::kCapDomain:
      return "map";
    default:
      return std::string(type_name(v.type));
  }
}

Error no_overload(std::string_view op, const Value& a) {
  return make_error("no such overload: '" + std::string(op) + "' applied to (" +
                    runtime_type_name(a) + ")");
}
Error no_overload(std::string_view op, const Value& a, const Value& b) {
  return make_error("no such overload: '" + std::string(op) + "' applied to (" +
                    runtime_type_name(a) + ", " + runtime_type_name(b) + ")");
}

Value semver_value(const Semver* v) {
  Value r;
  r.type = Type::kSemver;
  r.semver = v;
  return r;
}

Value owned_semver(Semver v) {
  auto owned = std::make_shared<const Semver>(std::move(v));
  Value r = semver_value(owned.get());
  r.owner = std::move(owned);
  return r;
}

// A quantity from a device or arithmetic: an int64 amount of scale 0 when it is a whole
// number (the API server's canonical form), otherwise a decimal.
Value quantity_value(const model::Quantity& q) {
  Value r;
  r.type = Type::kQuantity;
  r.q = q;
  r.q_dec = !q.as_int64().has_value();
  return r;
}

// quantity("...") with Kubernetes' representation of the literal.
Value parsed_quantity(const model::Quantity& q, std::string_view text) {
  Value r = quantity_value(q);
  r.q_dec = quantity_is_decimal(text, &r.q_scale);
  return r;
}

Value attribute_value(const Attribute& a) {
  struct Visitor {
    Value operator()(bool b) const { return Value::of_bool(b); }
    Value operator()(int64_t i) const { return Value::of_int(i); }
    Value operator()(const std::string& s) const { return Value::of_string(s); }
    Value operator()(const Semver& v) const { return semver_value(&v); }
  };
  return std::visit(Visitor{}, a);
}

// The code points of a string (CEL's string functions index by code point).
std::vector<std::string_view> runes(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    size_t n = go::decode_utf8_rune(s, i, &cp);
    if (n == 0) n = 1;
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

int64_t code_points(std::string_view s) {
  int64_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

int sign_of(int c) {
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// Numbers of different types compare by value (cel-go's heterogeneous comparisons).
int compare_numbers(const Value& a, const Value& b) {
  auto three = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (a.type == b.type) {
    if (a.type == Type::kInt) return three(a.i, b.i);
    if (a.type == Type::kUint) return three(a.u, b.u);
    return three(a.d, b.d);
  }
  if (a.type == Type::kDouble || b.type == Type::kDouble) {
    const Value& d = a.type == Type::kDouble ? a : b;
    const Value& o = a.type == Type::kDouble ? b : a;
    // An int or uint against a double: compare exactly through long double where the double is
    // in range, otherwise the double decides.
    int c;
    const long double x = d.d;
    if (o.type == Type::kInt) {
      if (x < -9223372036854775808.0L) {
        c = -1;
      } else if (x >= 9223372036854775808.0L) {
        c = 1;
      } else {
        const long double t = std::trunc(x);
        const int64_t ti = static_cast<int64_t>(t);
        c = ti < o.i ? -1 : (ti > o.i ? 1 : (x > t ? 1 : (x < t ? -1 : 0)));
      }
    } else {
      if (x < 0) {
        c = -1;
      } else if (x >= 18446744073709551616.0L) {
        c = 1;
      } else {
        const long double t = std::trunc(x);
        const uint64_t tu = static_cast<uint64_t>(t);
        c = tu < o.u ? -1 : (tu > o.u ? 1 : (x > t ? 1 : 0));
      }
    }
    return &d == &a ? c : -c;
  }
  // int against uint
  if (a.type == Type::kInt) return a.i < 0 ? -1 : three(static_cast<uint64_t>(a.i), b.u);
  return b.i < 0 ? 1 : three(a.u, static_cast<uint64_t>(b.i));
}

class Evaluator {
 public:
  explicit Evaluator(const Device& device) : device_(device) {}

  uint64_t cost() const { return cost_; }

  Result<Value> eval(const Node& n, const Frame* frame) {
    if (cost_ > Selector::kCostLimit) {
      return make_error("operation cancelled: actual cost limit exceeded");
    }
    switch (n.op) {
      case Op::kConst:
        if (n.constant_is_error) return make_error(n.constant_error);
        return n.constant;
      case Op::kList:
        return list(n, frame);
      case Op::kMap:
        return map(n, frame);
      case Op::kDevice: {
        ++cost_;
        Value v;
        v.type = Type::kDevice;
        return v;
      }
      case Op::kVar: {
        ++cost_;
        // The parser resolved the variable to a cel.bind or macro around it.
        const Frame* f = frame;
        for (int k = 0; k < n.slot && f; ++k) f = f->parent;
        if (!f) return make_error("internal error: unbound variable " + n.name);
        return *f->value;
      }
      case Op::kSelect: {
        auto v = eval(*n.kids[0], frame);
        if (!v) return v;
        ++cost_;
        return field(*v, Value::of_string(n.name));
      }
      case Op::kIndex: {
        auto v = eval(*n.kids[0], frame);
        if (!v) return v;
        auto key = eval(*n.kids[1], frame);
        if (!key) return key;
        ++cost_;
        return index(*v, *key);
      }
      case Op::kHas: {
        auto v = eval(*n.kids[0], frame);
        if (!v) return v;
        return has(*v, n.name);
      }
      case Op::kNot: {
        auto v = eval(*n.kids[0], frame);
        if (!v) return v;
        ++cost_;
        if (v->type != Type::kBool) return no_overload("!_", *v);
        return Value::of_bool(!v->b);
      }
      case Op::kAnd:
        return logic(n, frame, false);
      case Op::kOr:
        return logic(n, frame, true);
      case Op::kCond: {
        auto c = eval(*n.kids[0], frame);
        if (!c) return c;
        if (c->type != Type::kBool) return no_overload("_?_:_", *c);
        return eval(*n.kids[c->b ? 1 : 2], frame);
      }
      case Op::kBind: {
        const Result<Value> init = eval(*n.kids[0], frame);
        const Frame inner{frame, &init};
        return eval(*n.kids[1], &inner);
      }
      case Op::kComprehension:
        return comprehension(n, frame);
      case Op::kOptSelect:
      case Op::kOptIndex:
        return optional_member(n, frame);
      default:
        return strict(n, frame);
    }
  }

 private:
  Result<Value> list(const Node& n, const Frame* frame) {
    cost_ += 10;
    ValueList values;
    values.reserve(n.kids.size());
    for (const auto& k : n.kids) {
      auto v = eval(*k, frame);
      if (!v) return v;
      values.push_back(std::move(v).value());
    }
    return Value::of_list(std::move(values));
  }

  Result<Value> map(const Node& n, const Frame* frame) {
    cost_ += 30;
    ValueMap entries;
    for (size_t i = 0; i < n.kids.size(); i += 2) {
      auto k = eval(*n.kids[i], frame);
      if (!k) return k;
      auto v = eval(*n.kids[i + 1], frame);
      if (!v) return v;
      for (const auto& [key, value] : entries) {
        auto same = equals(key, *k);
        if (same && *same) {
          return make_error("Failed with repeated key");
        }
      }
      entries.emplace_back(std::move(k).value(), std::move(v).value());
    }
    return Value::of_map(std::move(entries));
  }

  // CEL's commutative logic: any operand that decides the result wins over errors in the
  // others; otherwise the first error (or non-bool operand) in order is the result.
  Result<Value> logic(const Node& n, const Frame* frame, bool decisive) {
    std::optional<Result<Value>> first_error;
    for (const auto& k : n.kids) {
      auto v = eval(*k, frame);
      if (v && v->type == Type::kBool) {
        if (v->b == decisive) return Value::of_bool(decisive);
        continue;
      }
      if (!first_error) {
        if (v) {
          first_error = Result<Value>(no_overload(decisive ? "_||_" : "_&&_", *v));
        } else {
          first_error = std::move(v);
        }
      }
    }
    if (first_error) return std::move(*first_error);
    return Value::of_bool(!decisive);
  }

  Result<Value> optional_member(const Node& n, const Frame* frame) {
    auto v = eval(*n.kids[0], frame);
    if (!v) return v;
    Value key = Value::of_string(n.name);
    if (n.op == Op::kOptIndex) {
      auto k = eval(*n.kids[1], frame);
      if (!k) return k;
      key = std::move(k).value();
    }
    ++cost_;
    Value target = *v;
    if (target.type == Type::kOptional) {
      if (target.list->empty()) return target;  // none stays none
      target = (*target.list)[0];
    }
    if (target.type == Type::kList) {
      if (key.type != Type::kInt) return no_overload("_[?_]", target, key);
      if (key.i < 0 || key.i >= static_cast<int64_t>(target.list->size())) {
        return Value::of_optional(std::nullopt);
      }
      return Value::of_optional((*target.list)[static_cast<size_t>(key.i)]);
    }
    if (target.type == Type::kDevice || target.type == Type::kAttrRoot ||
        target.type == Type::kCapRoot || (is_map(target.type) && contains_key(target, key))) {
      auto f = field(target, key);
      if (!f) return f;
      return Value::of_optional(std::move(f).value());
    }
    return Value::of_optional(std::nullopt);
  }

  // The keys of a map value, in iteration order (device maps: sorted, which Kubernetes leaves
  // to Go's map order).
  std::vector<Value> keys(const Value& m) const {
    std::vector<Value> out;
    if (m.type == Type::kMap) {
      for (const auto& [k, v] : *m.map) out.push_back(k);
      return out;
    }
    const Device::Names names = (m.type == Type::kAttrRoot || m.type == Type::kAttrDomain)
                                    ? device_.attribute_names()
                                    : device_.capacity_names();
    std::vector<std::string_view> ks;
    for (const auto& [domain, id] : names) {
      if (m.type == Type::kAttrRoot || m.type == Type::kCapRoot) {
        ks.push_back(domain);
      } else if (domain == m.s) {
        ks.push_back(id);
      }
    }
    std::sort(ks.begin(), ks.end());
    ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
    for (auto k : ks) out.push_back(Value::of_string(k));
    return out;
  }

  bool contains_key(const Value& m, const Value& key) const {
    switch (m.type) {
      case Type::kMap:
        return std::any_of(m.map->begin(), m.map->end(), [&](const auto& e) {
          auto same = equals(e.first, key);
          return same && *same;
        });
      case Type::kAttrDomain:
        return key.type == Type::kString && device_.attribute(m.s, key.s) != nullptr;
      case Type::kCapDomain:
        return key.type == Type::kString && device_.capacity(m.s, key.s) != nullptr;
      case Type::kAttrRoot:
      case Type::kCapRoot: {
        if (key.type != Type::kString) return false;
        const Device::Names names =
            m.type == Type::kAttrRoot ? device_.attribute_names() : device_.capacity_names();
        return std::any_of(names.begin(), names.end(),
                           [&](const auto& n) { return n.first == key.s; });
      }
      default:
        return false;
    }
  }

  Result<Value> has(const Value& v, std::string_view name) const {
    // device.attributes and device.capacity have every domain (an unknown one is empty).
    if (v.type == Type::kDevice || v.type == Type::kAttrRoot || v.type == Type::kCapRoot) {
      return Value::of_bool(true);
    }
    if (is_map(v.type)) return Value::of_bool(contains_key(v, Value::of_string(name)));
    return make_error("invalid type for field selection.");
  }

  // `v.name` and `v[key]` on a map.
  Result<Value> field(const Value& v, const Value& key) const {
    Value r;
    const std::string_view name = key.s;
    switch (v.type) {
      case Type::kDevice:
        if (key.type != Type::kString) return make_error("no such key");
        if (name == "driver") return Value::of_string(device_.driver());
        if (name == "allowMultipleAllocations") {
          return Value::of_bool(device_.allow_multiple_allocations());
        }
        if (name == "attributes") {
          r.type = Type::kAttrRoot;
          return r;
        }
        if (name == "capacity") {
          r.type = Type::kCapRoot;
          return r;
        }
        return make_error("no such key: " + std::string(name));
      case Type::kAttrRoot:
      case Type::kCapRoot:
        if (key.type != Type::kString) return no_overload("_[_]", v, key);
        // An unknown domain is an empty map, never an error.
        r.type = v.type == Type::kAttrRoot ? Type::kAttrDomain : Type::kCapDomain;
        r.s = name;
        r.owner = key.owner;
        return r;
      case Type::kAttrDomain:
        if (key.type != Type::kString) return no_overload("_[_]", v, key);
        if (const Attribute* a = device_.attribute(v.s, name)) return attribute_value(*a);
        return make_error("no such key: " + std::string(name));
      case Type::kCapDomain:
        if (key.type != Type::kString) return no_overload("_[_]", v, key);
        if (const model::Quantity* q = device_.capacity(v.s, name)) return quantity_value(*q);
        return make_error("no such key: " + std::string(name));
      case Type::kMap:
        for (const auto& [k, value] : *v.map) {
          auto same = equals(k, key);
          if (same && *same) return value;
        }
        return make_error("no such key: " + to_display(key));
      default:
        return make_error("no such overload: field selection on " + runtime_type_name(v));
    }
  }

  static std::string to_display(const Value& v) {
    switch (v.type) {
      case Type::kString:
        return std::string(v.s);
      case Type::kInt:
        return std::to_string(v.i);
      case Type::kUint:
        return std::to_string(v.u);
      case Type::kBool:
        return v.b ? "true" : "false";
      default:
        return runtime_type_name(v);
    }
  }

  Result<Value> index(const Value& v, const Value& key) const {
    if (v.type == Type::kList) {
      int64_t i = 0;
      if (key.type == Type::kInt) {
        i = key.i;
      } else if (key.type == Type::kUint && key.u <= static_cast<uint64_t>(INT64_MAX)) {
        i = static_cast<int64_t>(key.u);
      } else if (key.type == Type::kDouble && std::trunc(key.d) == key.d &&
                 std::fabs(key.d) < 9.2e18) {
        i = static_cast<int64_t>(key.d);
      } else {
        return no_overload("_[_]", v, key);
      }
      if (i < 0 || i >= static_cast<int64_t>(v.list->size())) {
        return make_error("index '" + std::to_string(i) + "' out of range in list size '" +
                          std::to_string(v.list->size()) + "'");
      }
      return (*v.list)[static_cast<size_t>(i)];
    }
    if (is_map(v.type) || v.type == Type::kDevice) return field(v, key);
    return no_overload("_[_]", v, key);
  }

  // A map value as a plain map (device maps materialized), for equality.
  ValueMap entries(const Value& m) const {
    if (m.type == Type::kMap) return *m.map;
    ValueMap out;
    for (const Value& k : keys(m)) {
      auto v = field(m, k);
      if (v) out.emplace_back(k, std::move(v).value());
    }
    return out;
  }

 public:
  // `a == b` as ref.Val.Equal does it, with `a` as the receiver.
  Result<bool> equals(const Value& a, const Value& b) const {
    if (a.type == Type::kNull || b.type == Type::kNull) return a.type == b.type;
    if (is_number(a.type) && is_number(b.type)) {
      if ((a.type == Type::kDouble && std::isnan(a.d)) ||
          (b.type == Type::kDouble && std::isnan(b.d))) {
        return false;
      }
      return compare_numbers(a, b) == 0;
    }
    if (a.type == Type::kOptional && b.type == Type::kOptional) {
      if (a.list->size() != b.list->size()) return false;
      if (a.list->empty()) return true;
      return equals((*a.list)[0], (*b.list)[0]);
    }
    const bool a_map = is_map(a.type), b_map = is_map(b.type);
    if (a.type != b.type && !(a_map && b_map)) {
      if (a.type == Type::kQuantity || a.type == Type::kSemver) return no_overload("_==_", a, b);
      return false;
    }
    switch (a.type) {
      case Type::kBool:
        return a.b == b.b;
      case Type::kString:
        return a.s == b.s;
      case Type::kQuantity:
        return a.q == b.q;
      case Type::kSemver:
        return compare_semver(*a.semver, *b.semver) == 0;
      case Type::kList: {
        // cel-go: unequal sizes or an element pair that is false decide; errors do not.
        if (a.list->size() != b.list->size()) return false;
        for (size_t k = 0; k < a.list->size(); ++k) {
          auto e = equals((*a.list)[k], (*b.list)[k]);
          if (e && !*e) return false;
        }
        return true;
      }
      case Type::kDevice:
        return true;
      default: {
        const ValueMap x = entries(a), y = entries(b);
        if (x.size() != y.size()) return false;
        for (const auto& [k, v] : x) {
          const Value* other = nullptr;
          for (const auto& [k2, v2] : y) {
            auto same = equals(k, k2);
            if (same && *same) other = &v2;
          }
          if (!other) return false;
          auto e = equals(v, *other);
          if (e && !*e) return false;
        }
        return true;
      }
    }
  }

 private:
  // <0, 0, >0 for the ordered types (bool, numbers, string).
  static Result<int> order(std::string_view op, const Value& a, const Value& b) {
    if (is_number(a.type) && is_number(b.type)) {
      if ((a.type == Type::kDouble && std::isnan(a.d)) ||
          (b.type == Type::kDouble && std::isnan(b.d))) {
        return make_error("NaN values cannot be ordered");
      }
      return compare_numbers(a, b);
    }
    if (a.type != b.type) return no_overload(op, a, b);
    switch (a.type) {
      case Type::kBool:
        return static_cast<int>(a.b) - static_cast<int>(b.b);
      case Type::kString:
        return sign_of(a.s.compare(b.s));
      default:
        return no_overload(op, a, b);
    }
  }

  // The comprehension macros, with cel-go's loop conditions and accumulator steps.
  Result<Value> comprehension(const Node& n, const Frame* frame) {
    auto range = eval(*n.kids[0], frame);
    if (!range) return range;
    ++cost_;
    const Value& r = *range;
    std::vector<std::pair<Value, Value>> items;  // (index or key, element or value)
    if (r.type == Type::kList) {
      for (size_t i = 0; i < r.list->size(); ++i) {
        items.emplace_back(Value::of_int(static_cast<int64_t>(i)), (*r.list)[i]);
      }
    } else if (is_map(r.type)) {
      for (Value& k : keys(r)) {
        Value v;
        if (n.vars == 2) {
          auto fv = field(r, k);
          if (!fv) return fv;
          v = std::move(fv).value();
        }
        items.emplace_back(std::move(k), std::move(v));
      }
    } else {
      return make_error("cannot range over " + runtime_type_name(r));
    }
    const bool list_range = r.type == Type::kList;
    Result<Value> accu = Value::of_bool(n.macro == Macro::kAll);
    int64_t count = 0;
    ValueList out;
    ValueMap out_map;
    for (const auto& [k, v] : items) {
      if (cost_ > Selector::kCostLimit) {
        return make_error("operation cancelled: actual cost limit exceeded");
      }
      const Result<Value> first = n.vars == 1 ? (list_range ? v : k) : k;
      const Result<Value> second = v;
      const Frame f1{frame, &first};
      const Frame f2{&f1, &second};
      const Frame* inner = n.vars == 1 ? &f1 : &f2;
      cost_ += n.macro == Macro::kExists ? 4 : 3;
      switch (n.macro) {
        case Macro::kAll:
        case Macro::kExists: {
          const bool decisive = n.macro == Macro::kExists;
          // Loop condition: stop once the accumulator is the deciding value.
          if (accu && accu->type == Type::kBool && accu->b == decisive) break;
          auto p = eval(*n.kids[1], inner);
          accu = combine(std::move(accu), std::move(p), decisive);
          break;
        }
        case Macro::kExistsOne: {
          auto p = eval(*n.kids[1], inner);
          if (!p) return p;
          if (p->type != Type::kBool) return no_overload("_?_:_", *p);
          if (p->b) ++count;
          break;
        }
        case Macro::kMap:
        case Macro::kFilter:
        case Macro::kTransformList:
        case Macro::kTransformMap: {
          // kids: the range, a predicate (filter, or the three-argument forms), a transform.
          const bool filtered = n.macro == Macro::kFilter || n.kids.size() == 3;
          if (filtered) {
            auto p = eval(*n.kids[1], inner);
            if (!p) return p;
            if (p->type != Type::kBool) return no_overload("_?_:_", *p);
            if (!p->b) break;
          }
          cost_ += 10;
          if (n.macro == Macro::kFilter) {
            out.push_back(list_range ? v : k);
            break;
          }
          auto t = eval(*n.kids.back(), inner);
          if (!t) return t;
          if (n.macro == Macro::kTransformMap) {
            out_map.emplace_back(k, std::move(t).value());
          } else {
            out.push_back(std::move(t).value());
          }
          break;
        }
      }
    }
    switch (n.macro) {
      case Macro::kAll:
      case Macro::kExists:
        return accu;
      case Macro::kExistsOne:
        return Value::of_bool(count == 1);
      case Macro::kTransformMap:
        return Value::of_map(std::move(out_map));
      default:
        return Value::of_list(std::move(out));
    }
  }

  // `accu && p` (or `||` when decisive is true) with CEL's commutative error semantics.
  static Result<Value> combine(Result<Value> accu, Result<Value> p, bool decisive) {
    auto is = [&](const Result<Value>& v, bool b) {
      return v && v->type == Type::kBool && v->b == b;
    };
    if (is(accu, decisive) || is(p, decisive)) return Value::of_bool(decisive);
    if (is(accu, !decisive) && is(p, !decisive)) return Value::of_bool(!decisive);
    const std::string_view op = decisive ? "_||_" : "_&&_";
    if (!accu) return accu;
    if (accu->type != Type::kBool) return no_overload(op, *accu);
    if (!p) return p;
    return no_overload(op, *p);
  }

  Result<Value> strict(const Node& n, const Frame* frame) {
    // Strict operators and functions: every argument is evaluated in order and the first
    // error is the result.
    Value args[4];
    const size_t count = n.kids.size();
    if (count > 4) return make_error("internal error: too many arguments");
    for (size_t k = 0; k < count; ++k) {
      auto v = eval(*n.kids[k], frame);
      if (!v) return v;
      args[k] = std::move(v).value();
    }
    ++cost_;
    const Value& a = args[0];
    const Value& b = args[1];
    switch (n.op) {
      case Op::kEq: {
        auto e = equals(a, b);
        if (!e) return e.error();
        return Value::of_bool(*e);
      }
      case Op::kNe: {
        // cel-go's `!=` is "not Equal() == true": a comparison the types refuse is unequal.
        auto e = equals(a, b);
        return Value::of_bool(!e || !*e);
      }
      case Op::kLt:
      case Op::kLe:
      case Op::kGt:
      case Op::kGe: {
        static constexpr std::string_view names[] = {"_<_", "_<=_", "_>_", "_>=_"};
        const std::string_view name = names[static_cast<int>(n.op) - static_cast<int>(Op::kLt)];
        auto c = order(name, a, b);
        if (!c) return c.error();
        switch (n.op) {
          case Op::kLt:
            return Value::of_bool(*c < 0);
          case Op::kLe:
            return Value::of_bool(*c <= 0);
          case Op::kGt:
            return Value::of_bool(*c > 0);
          default:
            return Value::of_bool(*c >= 0);
        }
      }
      case Op::kIn:
        return in(a, b);
      case Op::kAdd:
      case Op::kSub:
      case Op::kMul:
      case Op::kDiv:
      case Op::kMod:
        if (n.op == Op::kAdd && ((a.type == Type::kString && b.type == Type::kString) ||
                                 (a.type == Type::kList && b.type == Type::kList))) {
          // Concatenation costs by the size of its result, charged before it is built: a
          // chain of cel.bind doublings stops at the cost limit, not in the allocator.
          const size_t size =
              a.type == Type::kString ? a.s.size() + b.s.size() : a.list->size() + b.list->size();
          if (Result<bool> ok = charge(size / 10); !ok) return ok.error();
        }
        return arithmetic(n.op, a, b);
      case Op::kNeg:
        if (a.type == Type::kInt) {
          if (a.i == INT64_MIN) return make_error("integer overflow");
          return Value::of_int(-a.i);
        }
        if (a.type == Type::kDouble) return Value::of_double(-a.d);
        return no_overload("-_", a);
      case Op::kCall:
        return call(n, args, count);
      default:
        return make_error("internal error: unknown operation");
    }
  }

  static Result<Value> arithmetic(Op op, const Value& a, const Value& b) {
    static constexpr std::string_view names[] = {"_+_", "_-_", "_*_", "_/_", "_%_"};
    const std::string_view name = names[static_cast<int>(op) - static_cast<int>(Op::kAdd)];
    if (a.type != b.type) return no_overload(name, a, b);
    switch (a.type) {
      case Type::kInt: {
        int64_t r = 0;
        switch (op) {
          case Op::kAdd:
            if (__builtin_add_overflow(a.i, b.i, &r)) return make_error("integer overflow");
            return Value::of_int(r);
          case Op::kSub:
            if (__builtin_sub_overflow(a.i, b.i, &r)) return make_error("integer overflow");
            return Value::of_int(r);
          case Op::kMul:
            if (__builtin_mul_overflow(a.i, b.i, &r)) return make_error("integer overflow");
            return Value::of_int(r);
          case Op::kDiv:
            if (b.i == 0) return make_error("division by zero");
            if (a.i == INT64_MIN && b.i == -1) return make_error("integer overflow");
            return Value::of_int(a.i / b.i);
          default:
            if (b.i == 0) return make_error("modulus by zero");
            if (a.i == INT64_MIN && b.i == -1) return make_error("integer overflow");
            return Value::of_int(a.i % b.i);
        }
      }
      case Type::kUint: {
        uint64_t r = 0;
        switch (op) {
          case Op::kAdd:
            if (__builtin_add_overflow(a.u, b.u, &r)) {
              return make_error("unsigned integer overflow");
            }
            return Value::of_uint(r);
          case Op::kSub:
            if (__builtin_sub_overflow(a.u, b.u, &r)) {
              return make_error("unsigned integer overflow");
            }
            return Value::of_uint(r);
          case Op::kMul:
            if (__builtin_mul_overflow(a.u, b.u, &r)) {
              return make_error("unsigned integer overflow");
            }
            return Value::of_uint(r);
          case Op::kDiv:
            if (b.u == 0) return make_error("division by zero");
            return Value::of_uint(a.u / b.u);
          default:
            if (b.u == 0) return make_error("modulus by zero");
            return Value::of_uint(a.u % b.u);
        }
      }
      case Type::kDouble:
        switch (op) {
          case Op::kAdd:
            return Value::of_double(a.d + b.d);
          case Op::kSub:
            return Value::of_double(a.d - b.d);
          case Op::kMul:
            return Value::of_double(a.d * b.d);
          case Op::kDiv:
            return Value::of_double(a.d / b.d);
          default:
            return no_overload(name, a, b);
        }
      case Type::kString:
        if (op != Op::kAdd) return no_overload(name, a, b);
        return Value::of_owned_string(std::string(a.s) + std::string(b.s));
      case Type::kList: {
        if (op != Op::kAdd) return no_overload(name, a, b);
        ValueList r(*a.list);
        r.insert(r.end(), b.list->begin(), b.list->end());
        return Value::of_list(std::move(r));
      }
      default:
        return no_overload(name, a, b);
    }
  }

  Result<Value> in(const Value& x, const Value& container) {
    if (container.type == Type::kList) {
      cost_ += container.list->size() / 10;
      // cel-go's list Contains: `x.Equal(element)` for each element; an element that refuses
      // the comparison (a Quantity or Semver `x` against another type) counts as not equal.
      for (const Value& e : *container.list) {
        auto eq = equals(x, e);
        if (eq && *eq) return Value::of_bool(true);
      }
      return Value::of_bool(false);
    }
    if (container.type == Type::kMap) return Value::of_bool(contains_key(container, x));
    if (is_map(container.type)) {
      if (x.type != Type::kString) return no_overload("@in", x, container);
      return Value::of_bool(contains_key(container, x));
    }
    return no_overload("@in", x, container);
  }

  static const char* fn_name(Fn fn);

  // Cost of a string function: a tenth of the receiver's length, as Kubernetes estimates
  // traversals.
  void traversal(std::string_view s) { cost_ += (s.size() + 9) / 10; }

  // Adds `units` of cost; an error, before the work is done, when that passes the limit.
  Result<bool> charge(uint64_t units) {
    cost_ += units;
    if (cost_ > Selector::kCostLimit) {
      return make_error("operation cancelled: actual cost limit exceeded");
    }
    return true;
  }

  Result<Value> call(const Node& n, const Value* args, size_t count);

  const Device& device_;
  uint64_t cost_ = 0;
};

// The regular expression of a call: the one compiled from a literal, or compiled now.
Result<std::shared_ptr<const void>> regex_of(const Node& n, const Value& pattern) {
  if (n.regex) return n.regex;
  std::string error;
  auto re = compile_regex(pattern.s, &error);
  if (!re) return make_error(error);
  return re;
}

}  // namespace

// The regex operations, in regex.cpp (RE2).
bool regex_matches(const void* re, std::string_view text);
std::optional<std::string_view> regex_find(const void* re, std::string_view text);
std::vector<std::string_view> regex_find_all(const void* re, std::string_view text, int64_t n);

namespace {

// Go's strings.SplitN (n < 0: all).
std::vector<std::string_view> split_n(std::string_view s, std::string_view sep, int64_t n) {
  std::vector<std::string_view> out;
  if (n == 0) return out;
  if (sep.empty()) {
    auto rs = runes(s);
    if (n < 0 || static_cast<size_t>(n) >= rs.size()) return rs;
    for (int64_t i = 0; i < n - 1; ++i) out.push_back(rs[static_cast<size_t>(i)]);
    size_t offset = 0;
    for (int64_t i = 0; i < n - 1; ++i) offset += rs[static_cast<size_t>(i)].size();
    out.push_back(s.substr(offset));
    return out;
  }
  size_t start = 0;
  while (n < 0 || static_cast<int64_t>(out.size()) < n - 1) {
    const size_t at = s.find(sep, start);
    if (at == std::string_view::npos) break;
    out.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  out.push_back(s.substr(start));
  return out;
}

// Go's strings.Replace (n < 0: all).
std::string replace_n(std::string_view s, std::string_view old, std::string_view with, int64_t n) {
  if (n == 0 || (old == with)) return std::string(s);
  std::string out;
  int64_t done = 0;
  if (old.empty()) {
    auto rs = runes(s);
    size_t i = 0;
    for (; i <= rs.size(); ++i) {
      if (n >= 0 && done >= n) break;
      out += with;
      ++done;
      if (i < rs.size()) out += rs[i];
    }
    for (; i < rs.size(); ++i) out += rs[i];
    return out;
  }
  size_t start = 0;
  while (n < 0 || done < n) {
    const size_t at = s.find(old, start);
    if (at == std::string_view::npos) break;
    out += s.substr(start, at - start);
    out += with;
    start = at + old.size();
    ++done;
  }
  out += s.substr(start);
  return out;
}

// Go's strconv.FormatFloat(d, 'g', -1, 64), as string(double) prints.
std::string format_double(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buf[64];
  // The shortest digits that round-trip, in scientific form: d.ddddde±XX.
  int prec = 0;
  for (prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string sci(buf);
  const size_t e = sci.find('e');
  const int exp = std::atoi(sci.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (std::isdigit(static_cast<unsigned char>(sci[i]))) digits += sci[i];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const bool neg = d < 0 || (d == 0 && std::signbit(d));
  std::string out = neg ? "-" : "";
  // Go's 'g' with the shortest precision switches to an exponent from 1e+06 and below 1e-04.
  if (exp < -4 || exp >= 6) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return out + ebuf;
  }
  if (exp < 0) {
    return out + "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  }
  if (static_cast<int>(digits.size()) <= exp + 1) {
    return out + digits + std::string(static_cast<size_t>(exp + 1) - digits.size(), '0');
  }
  return out + digits.substr(0, static_cast<size_t>(exp + 1)) + "." +
         digits.substr(static_cast<size_t>(exp + 1));
}

// Go's strconv.ParseFloat for double(string): no surrounding space, Inf/NaN spelled as Go
// accepts them.
std::optional<double> parse_go_float(std::string_view s) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front())) ||
      std::isspace(static_cast<unsigned char>(s.back()))) {
    return std::nullopt;
  }
  std::string text(s);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  if (errno == ERANGE && std::isinf(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_go_int(std::string_view s) {
  if (s.empty()) return std::nullopt;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    i = 1;
  }
  if (i == s.size()) return std::nullopt;
  unsigned __int128 v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
    if (v > (static_cast<unsigned __int128>(1) << 63)) return std::nullopt;
  }
  if (!neg && v > static_cast<unsigned __int128>(INT64_MAX)) return std::nullopt;
  return neg ? static_cast<int64_t>(0 - static_cast<uint64_t>(v)) : static_cast<int64_t>(v);
}

std::optional<uint64_t> parse_go_uint(std::string_view s) {
  if (s.empty()) return std::nullopt;
  unsigned __int128 v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v > std::numeric_limits<uint64_t>::max()) return std::nullopt;
  }
  return static_cast<uint64_t>(v);
}

// Kubernetes' semver(s, true): no "v", no leading zeros, missing minor and patch added.
Result<Semver> normalize_and_parse(std::string_view in) {
  std::string s(in);
  if (s.starts_with("v")) s.erase(0, 1);
  std::vector<std::string> parts;
  {
    size_t start = 0;
    while (parts.size() < 2) {
      const size_t dot = s.find('.', start);
      if (dot == std::string::npos) break;
      parts.push_back(s.substr(start, dot - start));
      start = dot + 1;
    }
    parts.push_back(s.substr(start));
  }
  for (auto& p : parts) {
    if (p.size() > 1) {
      const size_t nz = p.find_first_not_of('0');
      p = nz == std::string::npos ? "" : p.substr(nz);
      if (p.empty() || !(p[0] >= '0' && p[0] <= '9')) p = "0" + p;
    }
  }
  if (parts.size() < 3) {
    if (parts.back().find_first_of("+-") != std::string::npos) {
      return make_error("short version cannot contain PreRelease/Build meta data");
    }
    while (parts.size() < 3) parts.push_back("0");
  }
  return parse_semver(parts[0] + "." + parts[1] + "." + parts[2]);
}

}  // namespace

bool quantity_is_decimal(std::string_view s, int32_t* scale) {
  *scale = 0;
  if (s == "0") return false;
  size_t pos = 0;
  if (pos < s.size() && (s[pos] == '-' || s[pos] == '+')) ++pos;
  while (pos < s.size() && s[pos] == '0') ++pos;
  size_t num_start = pos;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
  size_t num = pos - num_start;
  if (num == 0) num = 1;  // "0"
  size_t denom = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    const size_t d0 = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    denom = pos - d0;
  }
  const std::string_view suffix = s.substr(pos);
  int exponent = 0;
  bool binary = false;
  static constexpr std::pair<std::string_view, int> kDecimal[] = {
      {"", 0},  {"n", -9}, {"u", -6}, {"m", -3}, {"k", 3},
      {"M", 6}, {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static constexpr std::pair<std::string_view, int> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  bool found = false;
  for (const auto& [suf, e] : kDecimal) {
    if (suffix == suf) exponent = e, found = true;
  }
  for (const auto& [suf, e] : kBinary) {
    if (suffix == suf) exponent = e, binary = true, found = true;
  }
  if (!found && suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    exponent = std::atoi(std::string(suffix.substr(1)).c_str());
  }
  int precision = 0;
  int32_t sc = 0;
  if (binary) {
    if (denom != 0) return true;
    precision =
        15 - static_cast<int>(num) - static_cast<int>(static_cast<float>(exponent) * 3 / 10) - 1;
  } else {
    sc = exponent;
    precision = 18 - static_cast<int>(num + denom);
  }
  if (precision < 0) return true;
  sc -= static_cast<int32_t>(denom);
  if (sc < -9) return true;
  // The value must also fit an int64 (the caller's Quantity says whether it does).
  *scale = sc;
  return false;
}

namespace {

// Go's strconv.Quote-like quoting of cel-go's strings.quote.
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

}  // namespace

Result<Value> Evaluator::call(const Node& n, const Value* args, size_t count) {
  const Value& a = args[0];
  const Value& b = args[1];
  const Value& c = args[2];
  auto bad = [&]() -> Error {
    std::string what = "no such overload: '" + std::string(fn_name(n.fn)) + "' applied to (";
    for (size_t k = 0; k < count; ++k) {
      if (k) what += ", ";
      what += runtime_type_name(args[k]);
    }
    return make_error(what + ")");
  };
  auto is = [&](const Value& v, Type t) { return v.type == t; };
  switch (n.fn) {
    case Fn::kSize:
      if (is(a, Type::kString)) return Value::of_int(code_points(a.s));
      if (is(a, Type::kList)) return Value::of_int(static_cast<int64_t>(a.list->size()));
      if (is_map(a.type)) return Value::of_int(static_cast<int64_t>(keys(a).size()));
      return bad();
    case Fn::kQuantity: {
      if (!is(a, Type::kString)) return bad();
      auto q = model::Quantity::parse(a.s);
      if (!q) return q.error();
      return parsed_quantity(*q, a.s);
    }
    case Fn::kSemver:
    case Fn::kIsSemver: {
      if (!is(a, Type::kString) || (count == 2 && !is(b, Type::kBool))) return bad();
      auto v = count == 2 && b.b ? normalize_and_parse(a.s) : parse_semver(a.s);
      if (n.fn == Fn::kIsSemver) return Value::of_bool(v.ok());
      if (!v) return v.error();
      return owned_semver(std::move(v).value());
    }
    case Fn::kIsQuantity:
      if (!is(a, Type::kString)) return bad();
      return Value::of_bool(model::Quantity::parse(a.s).ok());
    case Fn::kCompareTo:
    case Fn::kIsGreaterThan:
    case Fn::kIsLessThan: {
      int r = 0;
      if (is(a, Type::kQuantity) && is(b, Type::kQuantity)) {
        r = a.q < b.q ? -1 : (b.q < a.q ? 1 : 0);
      } else if (is(a, Type::kSemver) && is(b, Type::kSemver)) {
        r = compare_semver(*a.semver, *b.semver);
      } else {
        return bad();
      }
      if (n.fn == Fn::kCompareTo) return Value::of_int(r);
      return Value::of_bool(n.fn == Fn::kIsGreaterThan ? r > 0 : r < 0);
    }
    case Fn::kMajor:
    case Fn::kMinor:
    case Fn::kPatch: {
      if (!is(a, Type::kSemver)) return bad();
      const uint64_t v = n.fn == Fn::kMajor
                             ? a.semver->major
                             : (n.fn == Fn::kMinor ? a.semver->minor : a.semver->patch);
      return Value::of_int(static_cast<int64_t>(v));  // Go's int64(uint64) conversion
    }
    case Fn::kStartsWith:
    case Fn::kEndsWith:
    case Fn::kContains:
      if (!is(a, Type::kString) || !is(b, Type::kString)) return bad();
      traversal(a.s);
      if (n.fn == Fn::kStartsWith) return Value::of_bool(a.s.starts_with(b.s));
      if (n.fn == Fn::kEndsWith) return Value::of_bool(a.s.ends_with(b.s));
      return Value::of_bool(a.s.find(b.s) != std::string_view::npos);
    case Fn::kToInt:
      switch (a.type) {
        case Type::kInt:
          return a;
        case Type::kUint:
          if (a.u > static_cast<uint64_t>(INT64_MAX)) return make_error("integer overflow");
          return Value::of_int(static_cast<int64_t>(a.u));
        case Type::kDouble:
          if (!(a.d > -9223372036854775809.0 && a.d < 9223372036854775807.0)) {
            return make_error("integer overflow");
          }
          return Value::of_int(static_cast<int64_t>(a.d));
        case Type::kString: {
          auto v = parse_go_int(a.s);
          if (!v) return make_error("cannot convert string '" + std::string(a.s) + "' to int");
          return Value::of_int(*v);
        }
        default:
          return bad();
      }
    case Fn::kToUint:
      switch (a.type) {
        case Type::kUint:
          return a;
        case Type::kInt:
          if (a.i < 0) return make_error("unsigned integer overflow");
          return Value::of_uint(static_cast<uint64_t>(a.i));
        case Type::kDouble:
          if (!(a.d > -1.0 && a.d < 18446744073709551616.0)) {
            return make_error("unsigned integer overflow");
          }
          return Value::of_uint(static_cast<uint64_t>(a.d));
        case Type::kString: {
          auto v = parse_go_uint(a.s);
          if (!v) return make_error("cannot convert string '" + std::string(a.s) + "' to uint");
          return Value::of_uint(*v);
        }
        default:
          return bad();
      }
    case Fn::kToDouble:
      switch (a.type) {
        case Type::kDouble:
          return a;
        case Type::kInt:
          return Value::of_double(static_cast<double>(a.i));
        case Type::kUint:
          return Value::of_double(static_cast<double>(a.u));
        case Type::kString: {
          auto v = parse_go_float(a.s);
          if (!v) return make_error("cannot convert string '" + std::string(a.s) + "' to double");
          return Value::of_double(*v);
        }
        default:
          return bad();
      }
    case Fn::kToString:
      switch (a.type) {
        case Type::kString:
          return a;
        case Type::kInt:
          return Value::of_owned_string(std::to_string(a.i));
        case Type::kUint:
          return Value::of_owned_string(std::to_string(a.u));
        case Type::kDouble:
          return Value::of_owned_string(format_double(a.d));
        case Type::kBool:
          return Value::of_string(a.b ? "true" : "false");
        default:
          return bad();
      }
    case Fn::kToBool:
      if (is(a, Type::kBool)) return a;
      if (is(a, Type::kString)) {
        static constexpr std::string_view yes[] = {"1", "t", "T", "TRUE", "true", "True"};
        static constexpr std::string_view no[] = {"0", "f", "F", "FALSE", "false", "False"};
        for (auto y : yes) {
          if (a.s == y) return Value::of_bool(true);
        }
        for (auto f : no) {
          if (a.s == f) return Value::of_bool(false);
        }
        return make_error("type conversion error from 'string' to 'bool'");
      }
      return bad();
    case Fn::kDyn:
      return a;
    case Fn::kMatches:
    case Fn::kFind:
    case Fn::kFindAll: {
      if (!is(a, Type::kString) || !is(b, Type::kString) || (count == 3 && !is(c, Type::kInt))) {
        return bad();
      }
      traversal(a.s);
      auto re = regex_of(n, b);
      if (!re) return re.error();
      if (n.fn == Fn::kMatches) return Value::of_bool(regex_matches(re->get(), a.s));
      if (n.fn == Fn::kFind) {
        auto m = regex_find(re->get(), a.s);
        return Value::of_owned_string(m ? std::string(*m) : std::string());
      }
      ValueList out;
      for (auto m : regex_find_all(re->get(), a.s, count == 3 ? c.i : -1)) {
        out.push_back(Value::of_owned_string(std::string(m)));
      }
      return Value::of_list(std::move(out));
    }
    case Fn::kCharAt: {
      if (!is(a, Type::kString) || !is(b, Type::kInt)) return bad();
      auto rs = runes(a.s);
      if (b.i < 0 || b.i > static_cast<int64_t>(rs.size())) {
        return make_error("index out of range: " + std::to_string(b.i));
      }
      if (b.i == static_cast<int64_t>(rs.size())) return Value::of_string("");
      return Value::of_owned_string(std::string(rs[static_cast<size_t>(b.i)]));
    }
    case Fn::kIndexOf:
    case Fn::kLastIndexOf: {
      const bool last = n.fn == Fn::kLastIndexOf;
      if (is(a, Type::kList) && count == 2) {
        const int64_t size = static_cast<int64_t>(a.list->size());
        for (int64_t k = 0; k < size; ++k) {
          const int64_t i = last ? size - 1 - k : k;
          auto e = equals((*a.list)[static_cast<size_t>(i)], b);
          if (e && *e) return Value::of_int(i);
        }
        return Value::of_int(-1);
      }
      if (!is(a, Type::kString) || !is(b, Type::kString) || (count == 3 && !is(c, Type::kInt))) {
        return bad();
      }
      traversal(a.s);
      // cel-go v0.29's indexOf and lastIndexOf: a negative offset is an error, one past the
      // end finds nothing.
      auto rs = runes(a.s);
      auto sub = runes(b.s);
      const int64_t size = static_cast<int64_t>(rs.size());
      const int64_t subsize = static_cast<int64_t>(sub.size());
      if (last && count == 2) {
        if (b.s.empty()) return Value::of_int(size);
        if (a.s.size() < b.s.size()) return Value::of_int(-1);
      }
      int64_t off = count == 3 ? c.i : (last ? size - 1 : 0);
      if (off < 0) return make_error("index out of range: " + std::to_string(off));
      if (b.s.empty()) return Value::of_int(off > size ? size : off);
      if (off >= size) return Value::of_int(-1);
      if (!last) {
        for (int64_t i = off; i < size - (subsize - 1); ++i) {
          if (std::equal(sub.begin(), sub.end(), rs.begin() + i)) return Value::of_int(i);
        }
        return Value::of_int(-1);
      }
      if (off > size - subsize) off = size - subsize;
      for (int64_t i = off; i >= 0; --i) {
        if (std::equal(sub.begin(), sub.end(), rs.begin() + i)) return Value::of_int(i);
      }
      return Value::of_int(-1);
    }
    case Fn::kLowerAscii:
    case Fn::kUpperAscii: {
      if (!is(a, Type::kString)) return bad();
      traversal(a.s);
      std::string s(a.s);
      for (char& ch : s) {
        if (n.fn == Fn::kLowerAscii && ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch + 32);
        if (n.fn == Fn::kUpperAscii && ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 32);
      }
      return Value::of_owned_string(std::move(s));
    }
    case Fn::kTrim:
      if (!is(a, Type::kString)) return bad();
      traversal(a.s);
      return Value::of_owned_string(std::string(go::trim_space(a.s)));
    case Fn::kReplace:
      if (!is(a, Type::kString) || !is(b, Type::kString) || !is(c, Type::kString) ||
          (count == 4 && !is(args[3], Type::kInt))) {
        return bad();
      }
      traversal(a.s);
      {
        // The result's size, charged before it is built (an empty `old` inserts `new` at
        // every code point).
        const int64_t limit = count == 4 ? args[3].i : -1;
        uint64_t hits = 0;
        if (b.s.empty()) {
          hits = static_cast<uint64_t>(code_points(a.s)) + 1;
        } else {
          for (size_t at = a.s.find(b.s); at != std::string_view::npos;
               at = a.s.find(b.s, at + b.s.size())) {
            ++hits;
          }
        }
        if (limit >= 0) hits = std::min<uint64_t>(hits, static_cast<uint64_t>(limit));
        if (Result<bool> ok = charge(hits * c.s.size() / 10); !ok) return ok.error();
      }
      return Value::of_owned_string(replace_n(a.s, b.s, c.s, count == 4 ? args[3].i : -1));
    case Fn::kSplit: {
      if (!is(a, Type::kString) || !is(b, Type::kString) || (count == 3 && !is(c, Type::kInt))) {
        return bad();
      }
      traversal(a.s);
      ValueList out;
      for (auto part : split_n(a.s, b.s, count == 3 ? c.i : -1)) {
        out.push_back(Value::of_owned_string(std::string(part)));
      }
      return Value::of_list(std::move(out));
    }
    case Fn::kSubstring: {
      if (!is(a, Type::kString) || !is(b, Type::kInt) || (count == 3 && !is(c, Type::kInt))) {
        return bad();
      }
      auto rs = runes(a.s);
      const int64_t size = static_cast<int64_t>(rs.size());
      const int64_t start = b.i;
      const int64_t end = count == 3 ? c.i : size;
      if (start < 0 || start > size)
        return make_error("index out of range: " + std::to_string(start));
      if (count == 3) {
        if (end < 0 || end > size) return make_error("index out of range: " + std::to_string(end));
        if (start > end) {
          return make_error("invalid substring range. start: " + std::to_string(start) +
                            ", end: " + std::to_string(end));
        }
      }
      std::string s;
      for (int64_t i = start; i < end; ++i) s += rs[static_cast<size_t>(i)];
      return Value::of_owned_string(std::move(s));
    }
    case Fn::kJoin: {
      if (!is(a, Type::kList) || (count == 2 && !is(b, Type::kString))) return bad();
      std::string s;
      for (size_t k = 0; k < a.list->size(); ++k) {
        const Value& e = (*a.list)[k];
        if (!is(e, Type::kString)) return bad();
        if (k && count == 2) s += b.s;
        s += e.s;
      }
      return Value::of_owned_string(std::move(s));
    }
    case Fn::kQuote:
      if (!is(a, Type::kString)) return bad();
      return Value::of_owned_string(quote(a.s));
    case Fn::kIsInteger:
    case Fn::kAsInteger: {
      // Kubernetes' Quantity.AsInt64: only an int64 amount of scale >= 0 that fits.
      if (!is(a, Type::kQuantity)) return bad();
      std::optional<int64_t> v;
      if (!a.q_dec && a.q_scale >= 0) v = a.q.as_int64();
      if (n.fn == Fn::kIsInteger) return Value::of_bool(v.has_value());
      if (!v) return make_error("cannot convert value to integer");
      return Value::of_int(*v);
    }
    case Fn::kAsApproximateFloat:
      if (!is(a, Type::kQuantity)) return bad();
      return Value::of_double(static_cast<double>(static_cast<long double>(a.q.nanos()) / 1e9L));
    case Fn::kQuantityAdd:
    case Fn::kQuantitySub: {
      if (!is(a, Type::kQuantity)) return bad();
      Value other;
      if (is(b, Type::kQuantity)) {
        other = b;
      } else if (is(b, Type::kInt)) {
        other = quantity_value(model::Quantity::from_int(b.i));
        other.q_dec = false;
      } else {
        return bad();
      }
      Value r = quantity_value(n.fn == Fn::kQuantityAdd ? a.q + other.q : a.q - other.q);
      // int64 amounts add at the smaller scale; anything else is a decimal.
      r.q_dec = a.q_dec || other.q_dec;
      r.q_scale = std::min(a.q_scale, other.q_scale);
      return r;
    }
    case Fn::kSetsContains:
    case Fn::kSetsEquivalent:
    case Fn::kSetsIntersects: {
      if (!is(a, Type::kList) || !is(b, Type::kList)) return bad();
      if (Result<bool> ok = charge(a.list->size() * b.list->size() / 10); !ok) return ok.error();
      auto member = [&](const Value& x, const ValueList& l) {
        return std::any_of(l.begin(), l.end(), [&](const Value& e) {
          auto eq = equals(x, e);
          return eq && *eq;
        });
      };
      auto all_in = [&](const ValueList& xs, const ValueList& l) {
        return std::all_of(xs.begin(), xs.end(), [&](const Value& x) { return member(x, l); });
      };
      if (n.fn == Fn::kSetsContains) return Value::of_bool(all_in(*b.list, *a.list));
      if (n.fn == Fn::kSetsEquivalent) {
        return Value::of_bool(all_in(*b.list, *a.list) && all_in(*a.list, *b.list));
      }
      return Value::of_bool(std::any_of(b.list->begin(), b.list->end(),
                                        [&](const Value& x) { return member(x, *a.list); }));
    }
    case Fn::kIsSorted:
    case Fn::kMin:
    case Fn::kMax: {
      if (!is(a, Type::kList)) return bad();
      cost_ += a.list->size();
      const Value* best = nullptr;
      for (const Value& e : *a.list) {
        if (!best) {
          best = &e;
          continue;
        }
        auto r = order(fn_name(n.fn), *best, e);
        if (!r) return r.error();
        if (n.fn == Fn::kIsSorted) {
          if (*r > 0) return Value::of_bool(false);
          best = &e;
        } else if ((n.fn == Fn::kMin && *r > 0) || (n.fn == Fn::kMax && *r < 0)) {
          best = &e;
        }
      }
      if (n.fn == Fn::kIsSorted) return Value::of_bool(true);
      if (!best) return make_error(std::string(fn_name(n.fn)) + " called on empty list");
      return *best;
    }
    case Fn::kSum: {
      if (!is(a, Type::kList)) return bad();
      cost_ += a.list->size();
      Value acc = n.type == Type::kUint     ? Value::of_uint(0)
                  : n.type == Type::kDouble ? Value::of_double(0)
                                            : Value::of_int(0);
      for (const Value& e : *a.list) {
        auto s = arithmetic(Op::kAdd, acc, e);
        if (!s) return s;
        acc = std::move(s).value();
      }
      return acc;
    }
    case Fn::kRange: {
      if (!is(a, Type::kInt)) return bad();
      if (Result<bool> ok = charge(a.i > 0 ? static_cast<uint64_t>(a.i) : 0); !ok) {
        return ok.error();
      }
      ValueList out;
      for (int64_t i = 0; i < a.i; ++i) out.push_back(Value::of_int(i));
      return Value::of_list(std::move(out));
    }
    case Fn::kSlice: {
      if (!is(a, Type::kList) || !is(b, Type::kInt) || !is(c, Type::kInt)) return bad();
      const int64_t size = static_cast<int64_t>(a.list->size());
      if (b.i < 0 || c.i < 0) {
        return make_error("cannot slice(" + std::to_string(b.i) + ", " + std::to_string(c.i) +
                          "), negative indexes not supported");
      }
      if (b.i > c.i) {
        return make_error("cannot slice(" + std::to_string(b.i) + ", " + std::to_string(c.i) +
                          "), start index must be less than or equal to end index");
      }
      if (c.i > size) {
        return make_error("cannot slice(" + std::to_string(b.i) + ", " + std::to_string(c.i) +
                          "), list is length " + std::to_string(size));
      }
      return Value::of_list(ValueList(a.list->begin() + b.i, a.list->begin() + c.i));
    }
    case Fn::kFlatten: {
      if (!is(a, Type::kList) || (count == 2 && !is(b, Type::kInt))) return bad();
      const int64_t depth = count == 2 ? b.i : 1;
      if (depth < 0) return make_error("level must be non-negative");
      ValueList out;
      auto flatten = [&](auto& self, const ValueList& l, int64_t d) -> void {
        for (const Value& e : l) {
          if (e.type == Type::kList && d > 0) {
            self(self, *e.list, d - 1);
          } else {
            out.push_back(e);
          }
        }
      };
      flatten(flatten, *a.list, depth);
      return Value::of_list(std::move(out));
    }
    case Fn::kDistinct: {
      if (!is(a, Type::kList)) return bad();
      if (Result<bool> ok = charge(a.list->size() * a.list->size() / 10); !ok) return ok.error();
      ValueList out;
      for (const Value& e : *a.list) {
        const bool seen = std::any_of(out.begin(), out.end(), [&](const Value& o) {
          auto eq = equals(o, e);
          return eq && *eq;
        });
        if (!seen) out.push_back(e);
      }
      return Value::of_list(std::move(out));
    }
    case Fn::kReverse: {
      if (!is(a, Type::kList)) return bad();
      return Value::of_list(ValueList(a.list->rbegin(), a.list->rend()));
    }
    case Fn::kSort: {
      if (!is(a, Type::kList)) return bad();
      if (Result<bool> ok = charge(a.list->size()); !ok) return ok.error();
      ValueList out(*a.list);
      for (size_t k = 1; k < out.size(); ++k) {
        if (out[k].type != out[0].type ||
            !(is_number(out[0].type) || out[0].type == Type::kString ||
              out[0].type == Type::kBool)) {
          return make_error("list elements must have the same type");
        }
      }
      std::stable_sort(out.begin(), out.end(), [](const Value& x, const Value& y) {
        auto r = order("sort", x, y);
        return r && *r < 0;
      });
      return Value::of_list(std::move(out));
    }
    case Fn::kOptOf:
      return Value::of_optional(a);
    case Fn::kOptNone:
      return Value::of_optional(std::nullopt);
    case Fn::kOptOfNonZero: {
      bool zero = false;
      switch (a.type) {
        case Type::kNull:
          zero = true;
          break;
        case Type::kBool:
          zero = !a.b;
          break;
        case Type::kInt:
          zero = a.i == 0;
          break;
        case Type::kUint:
          zero = a.u == 0;
          break;
        case Type::kDouble:
          zero = a.d == 0;
          break;
        case Type::kString:
          zero = a.s.empty();
          break;
        case Type::kList:
          zero = a.list->empty();
          break;
        case Type::kMap:
          zero = a.map->empty();
          break;
        default:
          break;
      }
      return Value::of_optional(zero ? std::nullopt : std::optional<Value>(a));
    }
    case Fn::kOptHasValue:
    case Fn::kOptValue:
    case Fn::kOptOrValue:
    case Fn::kOptOr: {
      if (!is(a, Type::kOptional)) return bad();
      const bool has = !a.list->empty();
      if (n.fn == Fn::kOptHasValue) return Value::of_bool(has);
      if (n.fn == Fn::kOptValue) {
        if (!has) return make_error("optional.none() dereference");
        return (*a.list)[0];
      }
      if (n.fn == Fn::kOptOrValue) return has ? (*a.list)[0] : b;
      if (!is(b, Type::kOptional)) return bad();
      return has ? a : b;
    }
  }
  return make_error("internal error: unknown function");
}

const char* Evaluator::fn_name(Fn fn) {
  switch (fn) {
    case Fn::kSize:
      return "size";
    case Fn::kQuantity:
      return "quantity";
    case Fn::kSemver:
      return "semver";
    case Fn::kIsQuantity:
      return "isQuantity";
    case Fn::kIsSemver:
      return "isSemver";
    case Fn::kCompareTo:
      return "compareTo";
    case Fn::kIsGreaterThan:
      return "isGreaterThan";
    case Fn::kIsLessThan:
      return "isLessThan";
    case Fn::kMajor:
      return "major";
    case Fn::kMinor:
      return "minor";
    case Fn::kPatch:
      return "patch";
    case Fn::kStartsWith:
      return "startsWith";
    case Fn::kEndsWith:
      return "endsWith";
    case Fn::kContains:
      return "contains";
    case Fn::kToInt:
      return "int";
    case Fn::kToUint:
      return "uint";
    case Fn::kToDouble:
      return "double";
    case Fn::kToString:
      return "string";
    case Fn::kToBool:
      return "bool";
    case Fn::kDyn:
      return "dyn";
    case Fn::kMatches:
      return "matches";
    case Fn::kFind:
      return "find";
    case Fn::kFindAll:
      return "findAll";
    case Fn::kCharAt:
      return "charAt";
    case Fn::kIndexOf:
      return "indexOf";
    case Fn::kLastIndexOf:
      return "lastIndexOf";
    case Fn::kLowerAscii:
      return "lowerAscii";
    case Fn::kUpperAscii:
      return "upperAscii";
    case Fn::kReplace:
      return "replace";
    case Fn::kSplit:
      return "split";
    case Fn::kSubstring:
      return "substring";
    case Fn::kTrim:
      return "trim";
    case Fn::kJoin:
      return "join";
    case Fn::kQuote:
      return "strings.quote";
    case Fn::kIsInteger:
      return "isInteger";
    case Fn::kAsInteger:
      return "asInteger";
    case Fn::kAsApproximateFloat:
      return "asApproximateFloat";
    case Fn::kQuantityAdd:
      return "add";
    case Fn::kQuantitySub:
      return "sub";
    case Fn::kSetsContains:
      return "sets.contains";
    case Fn::kSetsEquivalent:
      return "sets.equivalent";
    case Fn::kSetsIntersects:
      return "sets.intersects";
    case Fn::kIsSorted:
      return "isSorted";
    case Fn::kSum:
      return "sum";
    case Fn::kMin:
      return "min";
    case Fn::kMax:
      return "max";
    case Fn::kRange:
      return "lists.range";
    case Fn::kSlice:
      return "slice";
    case Fn::kFlatten:
      return "flatten";
    case Fn::kDistinct:
      return "distinct";
    case Fn::kReverse:
      return "reverse";
    case Fn::kSort:
      return "sort";
    case Fn::kOptOf:
      return "optional.of";
    case Fn::kOptOfNonZero:
      return "optional.ofNonZeroValue";
    case Fn::kOptNone:
      return "optional.none";
    case Fn::kOptHasValue:
      return "hasValue";
    case Fn::kOptValue:
      return "value";
    case Fn::kOptOrValue:
      return "orValue";
    case Fn::kOptOr:
      return "or";
  }
  return "?";
}

Result<Value> evaluate(const Node& root, const Device& device, uint64_t* cost) {
  Evaluator e(device);
  auto r = e.eval(root, nullptr);
  if (cost) *cost = e.cost();
  if (r && e.cost() > Selector::kCostLimit) {
    return make_error("operation cancelled: actual cost limit exceeded");
  }
  return r;
}

}  // namespace hamisim::cel::detail
