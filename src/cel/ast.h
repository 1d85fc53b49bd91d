#pragma once
// The checked syntax tree of a selector and the values it evaluates to. Internal to
// hamisim_cel: the parser builds and type-checks it once, the evaluator walks it.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cel/selector.h"
#include "model/quantity.h"

namespace hamisim::cel::detail {

// CEL types of the subset. kDyn: known only at run time (attribute values are `dyn`).
enum class Type : uint8_t {
  kDyn,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kNull,
  kQuantity,
  kSemver,
  kList,        // list(elem)
  kMap,         // map(key, elem): map literals
  kOptional,    // optional_type(elem): `list` holds no value or one
  kDevice,      // the `device` object
  kAttrRoot,    // device.attributes: map(string, map(string, dyn)); unknown domain: empty map
  kCapRoot,     // device.capacity: map(string, map(string, Quantity))
  kAttrDomain,  // device.attributes[<domain>]: map(string, dyn)
  kCapDomain,   // device.capacity[<domain>]: map(string, Quantity)
};

std::string_view type_name(Type t);
inline bool is_map(Type t) {
  return t == Type::kMap || t == Type::kAttrRoot || t == Type::kCapRoot || t == Type::kAttrDomain ||
         t == Type::kCapDomain;
}
inline bool is_number(Type t) {
  return t == Type::kInt || t == Type::kUint || t == Type::kDouble;
}

struct Value;
using ValueList = std::vector<Value>;
using ValueMap = std::vector<std::pair<Value, Value>>;  // in insertion order, keys distinct

// A run-time value. Strings, semvers, lists and maps are views into the syntax tree (literals)
// or the device; `owner` keeps the values built at run time (semver() of a non-literal string,
// strings a function made, lists and maps with non-constant elements) alive.
struct Value {
  Type type = Type::kBool;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string_view s;  // kString; the domain of kAttrDomain / kCapDomain
  model::Quantity q;
  // How Kubernetes holds a Quantity, which its isInteger()/asInteger() look at: an int64 with a
  // decimal scale (q_scale), or an arbitrary-precision decimal (q_dec).
  int32_t q_scale = 0;
  bool q_dec = false;
  const Semver* semver = nullptr;
  const ValueList* list = nullptr;
  const ValueMap* map = nullptr;
  std::shared_ptr<const void> owner;

  static Value of_bool(bool v) {
    Value r;
    r.type = Type::kBool;
    r.b = v;
    return r;
  }
  static Value of_int(int64_t v) {
    Value r;
    r.type = Type::kInt;
    r.i = v;
    return r;
  }
  static Value of_uint(uint64_t v) {
    Value r;
    r.type = Type::kUint;
    r.u = v;
    return r;
  }
  static Value of_double(double v) {
    Value r;
    r.type = Type::kDouble;
    r.d = v;
    return r;
  }
  static Value of_string(std::string_view v) {
    Value r;
    r.type = Type::kString;
    r.s = v;
    return r;
  }
  // A string made at run time, which the value owns.
  static Value of_owned_string(std::string v) {
    auto owned = std::make_shared<const std::string>(std::move(v));
    Value r = of_string(*owned);
    r.owner = std::move(owned);
    return r;
  }
  static Value of_list(ValueList v) {
    auto owned = std::make_shared<const ValueList>(std::move(v));
    Value r;
    r.type = Type::kList;
    r.list = owned.get();
    r.owner = std::move(owned);
    return r;
  }
  // An optional: none, or one value.
  static Value of_optional(std::optional<Value> v) {
    ValueList l;
    if (v) l.push_back(std::move(*v));
    Value r = of_list(std::move(l));
    r.type = Type::kOptional;
    return r;
  }
  static Value of_map(ValueMap v) {
    auto owned = std::make_shared<const ValueMap>(std::move(v));
    Value r;
    r.type = Type::kMap;
    r.map = owned.get();
    r.owner = std::move(owned);
    return r;
  }
};

enum class Op : uint8_t {
  kConst,   // a literal or a folded constant: `constant`
  kList,    // list literal with run-time elements: kids
  kMap,     // map literal: kids are key, value, key, value, ...
  kDevice,  // the `device` variable
  kVar,     // a cel.bind or comprehension variable: `slot` frames up
  kSelect,  // kids[0].name
  kIndex,   // kids[0][kids[1]]
  kHas,     // has(kids[0].name)
  kNot,
  kAnd,  // n-ary
  kOr,   // n-ary
  kCond,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,
  kCall,  // fn(kids...) with the receiver first for methods
  kBind,  // cel.bind(name, kids[0], kids[1])
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kNeg,
  kComprehension,  // a macro over kids[0]: `macro` with `vars` variables, then kids[1..]
  kOptSelect,      // kids[0].?name
  kOptIndex,       // kids[0][?kids[1]]
};

// The comprehension macros (cel-spec's and cel-go's two-variable extension).
enum class Macro : uint8_t {
  kAll,            // all(x, p), all(i, v, p)
  kExists,         // exists(x, p), exists(i, v, p)
  kExistsOne,      // exists_one(x, p), existsOne(i, v, p)
  kMap,            // map(x, t), map(x, p, t)
  kFilter,         // filter(x, p)
  kTransformList,  // transformList(i, v, t), transformList(i, v, p, t)
  kTransformMap,   // transformMap(k, v, t), transformMap(k, v, p, t)
};

enum class Fn : uint8_t {
  kSize,
  kQuantity,
  kSemver,
  kIsQuantity,
  kIsSemver,
  kCompareTo,
  kIsGreaterThan,
  kIsLessThan,
  kMajor,
  kMinor,
  kPatch,
  kStartsWith,
  kEndsWith,
  kContains,
  // Type conversions.
  kToInt,
  kToUint,
  kToDouble,
  kToString,
  kToBool,
  kDyn,
  // Regular expressions (RE2): matches, and Kubernetes' regex library.
  kMatches,
  kFind,
  kFindAll,
  // cel-go's strings extension, version 2.
  kCharAt,
  kIndexOf,
  kLastIndexOf,
  kLowerAscii,
  kUpperAscii,
  kReplace,
  kSplit,
  kSubstring,
  kTrim,
  kJoin,
  kQuote,
  // Kubernetes' quantity library.
  kIsInteger,
  kAsInteger,
  kAsApproximateFloat,
  kQuantityAdd,
  kQuantitySub,
  // cel-go's sets extension.
  kSetsContains,
  kSetsEquivalent,
  kSetsIntersects,
  // Kubernetes' lists library and cel-go's lists extension.
  kIsSorted,
  kSum,
  kMin,
  kMax,
  kRange,
  kSlice,
  kFlatten,
  kDistinct,
  kReverse,
  kSort,
  // Optional types (cel-go's OptionalTypes).
  kOptOf,
  kOptOfNonZero,
  kOptNone,
  kOptHasValue,
  kOptValue,
  kOptOrValue,
  kOptOr,
};

struct Node {
  Op op = Op::kConst;
  Type type = Type::kDyn;     // static type
  Type elem = Type::kDyn;     // kList: element type; kMap: value type
  Type key = Type::kDyn;      // kMap: key type
  Macro macro = Macro::kAll;  // kComprehension
  int vars = 1;               // kComprehension: 1 or 2 variables
  size_t pos = 0;             // byte offset in the expression
  int depth = 1;              // height of the subtree
  Fn fn = Fn::kSize;          // kCall
  int slot = 0;               // kVar
  std::string name;           // kSelect / kHas field, kBind / kVar name, string literal
  std::vector<std::unique_ptr<Node>> kids;
  // kConst: the value; or, for quantity()/semver() of a bad literal, the run-time error.
  Value constant;
  std::string constant_error;
  bool constant_is_error = false;
  Semver semver_storage;              // semver("...") folded
  std::vector<Value> list_storage;    // constant list literal
  std::shared_ptr<const void> regex;  // matches/find/findAll of a literal pattern: its RE2
};

struct Program {
  std::string expression;
  std::unique_ptr<Node> root;
};

// Parses and checks; errors are the full compile-error message.
Result<std::unique_ptr<Node>> parse(std::string_view expression);

// Evaluates the root of a checked tree. `cost`, when given, receives CEL's run-time cost as the
// evaluation counted it; past Selector::kCostLimit the evaluation ends with Kubernetes' error.
Result<Value> evaluate(const Node& root, const Device& device, uint64_t* cost = nullptr);

// How Kubernetes' ParseQuantity holds the quantity `text` (already known to be valid): sets
// *scale and returns false for an int64 amount, returns true for a decimal.
bool quantity_is_decimal(std::string_view text, int32_t* scale);

// Regular expressions: RE2, whose syntax and semantics Go's regexp (cel-go's) follows.
// nullptr, with the error set, for a bad pattern.
std::shared_ptr<const void> compile_regex(std::string_view pattern, std::string* error);

}  // namespace hamisim::cel::detail
