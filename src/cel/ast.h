#pragma once
// The checked syntax tree of a selector and the values it evaluates to. Internal to
// hamisim_cel: the parser builds and type-checks it once, the evaluator walks it.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cel/selector.h"
#include "model/quantity.h"

namespace hamisim::cel::detail {

// CEL types of the subset. kDyn: known only at run time (attribute values are `dyn`).
enum class Type : uint8_t {
  kDyn,
  kBool,
  kInt,
  kString,
  kQuantity,
  kSemver,
  kList,
  kDevice,      // the `device` object
  kAttrRoot,    // device.attributes: map(string, map(string, dyn)); unknown domain: empty map
  kCapRoot,     // device.capacity: map(string, map(string, Quantity))
  kAttrDomain,  // device.attributes[<domain>]: map(string, dyn)
  kCapDomain,   // device.capacity[<domain>]: map(string, Quantity)
};

std::string_view type_name(Type t);
inline bool is_map(Type t) {
  return t == Type::kAttrRoot || t == Type::kCapRoot || t == Type::kAttrDomain ||
         t == Type::kCapDomain;
}

// A run-time value. Strings, semvers and lists are views into the syntax tree (literals) or
// the device; `owner` keeps the few values built at run time (semver() of a non-literal
// string, lists with non-constant elements) alive.
struct Value {
  Type type = Type::kBool;
  bool b = false;
  int64_t i = 0;
  std::string_view s;  // kString; the domain of kAttrDomain / kCapDomain
  model::Quantity q;
  const Semver* semver = nullptr;
  const std::vector<Value>* list = nullptr;
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
  static Value of_string(std::string_view v) {
    Value r;
    r.type = Type::kString;
    r.s = v;
    return r;
  }
};

enum class Op : uint8_t {
  kConst,   // a literal or a folded constant: `constant`
  kList,    // list literal with run-time elements: kids
  kDevice,  // the `device` variable
  kVar,     // a cel.bind variable: `slot` frames up
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
};

struct Node {
  Op op = Op::kConst;
  Type type = Type::kDyn;  // static type
  Type elem = Type::kDyn;  // kList: element type
  size_t pos = 0;          // byte offset in the expression
  int depth = 1;           // height of the subtree
  Fn fn = Fn::kSize;       // kCall
  int slot = 0;            // kVar
  std::string name;        // kSelect / kHas field, kBind / kVar name, string literal
  std::vector<std::unique_ptr<Node>> kids;
  // kConst: the value; or, for quantity()/semver() of a bad literal, the run-time error.
  Value constant;
  std::string constant_error;
  bool constant_is_error = false;
  Semver semver_storage;            // semver("...") folded
  std::vector<Value> list_storage;  // constant list literal
};

struct Program {
  std::string expression;
  std::unique_ptr<Node> root;
};

// Parses and checks; errors are the full compile-error message.
Result<std::unique_ptr<Node>> parse(std::string_view expression);

// Evaluates the root of a checked tree.
Result<Value> evaluate(const Node& root, const Device& device);

}  // namespace hamisim::cel::detail
