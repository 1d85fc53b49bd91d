// Tree-walking evaluation with CEL's run-time semantics: strict operators propagate the first
// error, `&&` / `||` absorb errors when the other operand decides, `==` across different types
// is false (except that Quantity and Semver refuse other types, as Kubernetes' types do).
#include <memory>
#include <string>
#include <variant>

#include "cel/ast.h"

namespace hamisim::cel::detail {
namespace {

// A cel.bind variable's value (or error), chained innermost first on the C++ stack.
struct Frame {
  const Frame* parent = nullptr;
  const Result<Value>* value = nullptr;
};

Error no_overload(std::string_view op, const Value& a) {
  return make_error("no such overload: '" + std::string(op) + "' applied to (" +
                    std::string(type_name(a.type)) + ")");
}
Error no_overload(std::string_view op, const Value& a, const Value& b) {
  return make_error("no such overload: '" + std::string(op) + "' applied to (" +
                    std::string(type_name(a.type)) + ", " + std::string(type_name(b.type)) + ")");
}

Value semver_value(const Semver* v) {
  Value r;
  r.type = Type::kSemver;
  r.semver = v;
  return r;
}

Value quantity_value(const model::Quantity& q) {
  Value r;
  r.type = Type::kQuantity;
  r.q = q;
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

// CEL's size() of a string counts code points.
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

// `a == b` as ref.Val.Equal does it, with `a` as the receiver.
Result<bool> equals(const Value& a, const Value& b) {
  if (a.type != b.type) {
    if (a.type == Type::kQuantity || a.type == Type::kSemver) return no_overload("_==_", a, b);
    return false;
  }
  switch (a.type) {
    case Type::kBool:
      return a.b == b.b;
    case Type::kInt:
      return a.i == b.i;
    case Type::kString:
      return a.s == b.s;
    case Type::kQuantity:
      return a.q == b.q;
    case Type::kSemver:
      return compare_semver(*a.semver, *b.semver) == 0;
    case Type::kList: {
      if (a.list->size() != b.list->size()) return false;
      std::optional<Error> first;
      for (size_t k = 0; k < a.list->size(); ++k) {
        auto e = equals((*a.list)[k], (*b.list)[k]);
        if (!e) {
          if (!first) first = e.error();
        } else if (!*e) {
          return false;
        }
      }
      if (first) return *first;
      return true;
    }
    default:
      return no_overload("_==_", a, b);
  }
}

// <0, 0, >0 for the ordered types (bool, int, string) of the same type.
Result<int> order(std::string_view op, const Value& a, const Value& b) {
  if (a.type != b.type) return no_overload(op, a, b);
  switch (a.type) {
    case Type::kBool:
      return static_cast<int>(a.b) - static_cast<int>(b.b);
    case Type::kInt:
      return a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
    case Type::kString:
      return sign_of(a.s.compare(b.s));
    default:
      return no_overload(op, a, b);
  }
}

class Evaluator {
 public:
  explicit Evaluator(const Device& device) : device_(device) {}

  Result<Value> eval(const Node& n, const Frame* frame) const {
    switch (n.op) {
      case Op::kConst:
        if (n.constant_is_error) return make_error(n.constant_error);
        return n.constant;
      case Op::kList:
        return list(n, frame);
      case Op::kDevice: {
        Value v;
        v.type = Type::kDevice;
        return v;
      }
      case Op::kVar: {
        // The parser resolved the variable to a cel.bind around it, so the frame exists.
        const Frame* f = frame;
        for (int k = 0; k < n.slot && f; ++k) f = f->parent;
        if (!f) return make_error("internal error: unbound variable " + n.name);
        return *f->value;
      }
      case Op::kSelect: {
        auto v = eval(*n.kids[0], frame);
        if (!v) return v;
        return field(*v, n.name);
      }
      case Op::kIndex: {
        auto v = eval(*n.kids[0], frame);
        if (!v) return v;
        auto key = eval(*n.kids[1], frame);
        if (!key) return key;
        if (key->type != Type::kString) return no_overload("_[_]", *v, *key);
        return field(*v, key->s);
      }
      case Op::kHas: {
        auto v = eval(*n.kids[0], frame);
        if (!v) return v;
        return Value::of_bool(contains_key(*v, n.name));
      }
      case Op::kNot: {
        auto v = eval(*n.kids[0], frame);
        if (!v) return v;
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
      default:
        return binary_or_call(n, frame);
    }
  }

 private:
  Result<Value> list(const Node& n, const Frame* frame) const {
    auto values = std::make_shared<std::vector<Value>>();
    values->reserve(n.kids.size());
    for (const auto& k : n.kids) {
      auto v = eval(*k, frame);
      if (!v) return v;
      values->push_back(std::move(v).value());
    }
    Value r;
    r.type = Type::kList;
    r.list = values.get();
    r.owner = std::move(values);
    return r;
  }

  // CEL's commutative logic: any operand that decides the result wins over errors in the
  // others; otherwise the first error (or non-bool operand) in order is the result.
  Result<Value> logic(const Node& n, const Frame* frame, bool decisive) const {
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

  bool contains_key(const Value& map, std::string_view key) const {
    if (map.type == Type::kAttrDomain) return device_.attribute(map.s, key) != nullptr;
    if (map.type == Type::kCapDomain) return device_.capacity(map.s, key) != nullptr;
    return false;
  }

  // `v.name` and `v["name"]`.
  Result<Value> field(const Value& v, std::string_view name) const {
    Value r;
    switch (v.type) {
      case Type::kDevice:
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
        // An unknown domain is an empty map, never an error.
        r.type = v.type == Type::kAttrRoot ? Type::kAttrDomain : Type::kCapDomain;
        r.s = name;
        return r;
      case Type::kAttrDomain:
        if (const Attribute* a = device_.attribute(v.s, name)) return attribute_value(*a);
        return make_error("no such key: " + std::string(name));
      case Type::kCapDomain:
        if (const model::Quantity* q = device_.capacity(v.s, name)) return quantity_value(*q);
        return make_error("no such key: " + std::string(name));
      default:
        return make_error("no such overload: field selection '" + std::string(name) + "' on " +
                          std::string(type_name(v.type)));
    }
  }

  Result<Value> binary_or_call(const Node& n, const Frame* frame) const {
    // Strict operators and functions: every argument is evaluated in order and the first
    // error is the result. At most three arguments (a receiver and one argument).
    Value args[2];
    const size_t count = n.kids.size();
    for (size_t k = 0; k < count && k < 2; ++k) {
      auto v = eval(*n.kids[k], frame);
      if (!v) return v;
      args[k] = std::move(v).value();
    }
    const Value& a = args[0];
    const Value& b = args[1];
    switch (n.op) {
      case Op::kEq:
      case Op::kNe: {
        auto e = equals(a, b);
        if (!e) return e.error();
        return Value::of_bool(*e == (n.op == Op::kEq));
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
      case Op::kCall:
        return call(n.fn, a, b);
      default:
        return make_error("internal error: unknown operation");
    }
  }

  Result<Value> in(const Value& x, const Value& container) const {
    if (container.type == Type::kList) {
      // cel-go's list Contains: `x.Equal(element)` for each element; an element that refuses
      // the comparison (a Quantity or Semver `x` against another type) counts as not equal.
      for (const Value& e : *container.list) {
        auto eq = equals(x, e);
        if (eq && *eq) return Value::of_bool(true);
      }
      return Value::of_bool(false);
    }
    if (container.type == Type::kAttrDomain || container.type == Type::kCapDomain) {
      if (x.type != Type::kString) return no_overload("@in", x, container);
      return Value::of_bool(contains_key(container, x.s));
    }
    return no_overload("@in", x, container);
  }

  static Result<Value> call(Fn fn, const Value& a, const Value& b) {
    switch (fn) {
      case Fn::kSize:
        if (a.type == Type::kString) return Value::of_int(code_points(a.s));
        if (a.type == Type::kList) return Value::of_int(static_cast<int64_t>(a.list->size()));
        return no_overload("size", a);
      case Fn::kQuantity: {
        if (a.type != Type::kString) return no_overload("quantity", a);
        auto q = model::Quantity::parse(a.s);
        if (!q) return q.error();
        return quantity_value(*q);
      }
      case Fn::kSemver: {
        if (a.type != Type::kString) return no_overload("semver", a);
        auto v = parse_semver(a.s);
        if (!v) return v.error();
        auto owned = std::make_shared<const Semver>(std::move(v).value());
        Value r = semver_value(owned.get());
        r.owner = std::move(owned);
        return r;
      }
      case Fn::kIsQuantity:
        if (a.type != Type::kString) return no_overload("isQuantity", a);
        return Value::of_bool(model::Quantity::parse(a.s).ok());
      case Fn::kIsSemver:
        if (a.type != Type::kString) return no_overload("isSemver", a);
        return Value::of_bool(parse_semver(a.s).ok());
      case Fn::kCompareTo:
      case Fn::kIsGreaterThan:
      case Fn::kIsLessThan: {
        const std::string_view name = fn == Fn::kCompareTo       ? "compareTo"
                                      : fn == Fn::kIsGreaterThan ? "isGreaterThan"
                                                                 : "isLessThan";
        int c = 0;
        if (a.type == Type::kQuantity && b.type == Type::kQuantity) {
          c = a.q < b.q ? -1 : (b.q < a.q ? 1 : 0);
        } else if (a.type == Type::kSemver && b.type == Type::kSemver) {
          c = compare_semver(*a.semver, *b.semver);
        } else {
          return no_overload(name, a, b);
        }
        if (fn == Fn::kCompareTo) return Value::of_int(c);
        return Value::of_bool(fn == Fn::kIsGreaterThan ? c > 0 : c < 0);
      }
      case Fn::kMajor:
      case Fn::kMinor:
      case Fn::kPatch: {
        if (a.type != Type::kSemver) {
          return no_overload(fn == Fn::kMajor ? "major" : (fn == Fn::kMinor ? "minor" : "patch"),
                             a);
        }
        const uint64_t v = fn == Fn::kMajor
                               ? a.semver->major
                               : (fn == Fn::kMinor ? a.semver->minor : a.semver->patch);
        return Value::of_int(static_cast<int64_t>(v));  // Go's int64(uint64) conversion
      }
      case Fn::kStartsWith:
      case Fn::kEndsWith:
      case Fn::kContains: {
        const std::string_view name = fn == Fn::kStartsWith ? "startsWith"
                                      : fn == Fn::kEndsWith ? "endsWith"
                                                            : "contains";
        if (a.type != Type::kString || b.type != Type::kString) return no_overload(name, a, b);
        if (fn == Fn::kStartsWith) return Value::of_bool(a.s.starts_with(b.s));
        if (fn == Fn::kEndsWith) return Value::of_bool(a.s.ends_with(b.s));
        return Value::of_bool(a.s.find(b.s) != std::string_view::npos);
      }
    }
    return make_error("internal error: unknown function");
  }

  const Device& device_;
};

}  // namespace

Result<Value> evaluate(const Node& root, const Device& device) {
  return Evaluator(device).eval(root, nullptr);
}

}  // namespace hamisim::cel::detail
