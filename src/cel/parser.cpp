// Recursive-descent parser for CEL's grammar (cel-spec langdef.md, precedence from lowest:
// ?:, ||, &&, relations and `in`, arithmetic, unary ! and -, member access), type-checking
// each node as it is built so that errors carry the column of the construct at fault.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "cel/ast.h"
#include "cel/lexer.h"
#include "go/quote.h"
#include "go/utf8.h"

namespace hamisim::cel::detail {

std::string_view type_name(Type t) {
  switch (t) {
    case Type::kDyn:
      return "dyn";
    case Type::kBool:
      return "bool";
    case Type::kInt:
      return "int";
    case Type::kUint:
      return "uint";
    case Type::kDouble:
      return "double";
    case Type::kString:
      return "string";
    case Type::kNull:
      return "null_type";
    case Type::kQuantity:
      return "Quantity";
    case Type::kSemver:
      return "Semver";
    case Type::kList:
      return "list";
    case Type::kMap:
      return "map";
    case Type::kOptional:
      return "optional_type";
    case Type::kDevice:
      return "device";
    case Type::kAttrRoot:
      return "map(string, map(string, dyn))";
    case Type::kCapRoot:
      return "map(string, map(string, Quantity))";
    case Type::kAttrDomain:
      return "map(string, dyn)";
    case Type::kCapDomain:
      return "map(string, Quantity)";
  }
  return "?";
}

namespace {

// Deepest nesting accepted, both of the parser's recursion and of the tree it builds; real
// selectors nest a handful of levels.
constexpr int kMaxDepth = 100;

constexpr std::array<std::string_view, 21> kReserved = {
    "true",     "false",   "null",      "in",       "as",  "break",  "const",
    "continue", "else",    "for",       "function", "if",  "import", "let",
    "loop",     "package", "namespace", "return",   "var", "void",   "while"};

bool is_reserved(std::string_view s) {
  return std::find(kReserved.begin(), kReserved.end(), s) != kReserved.end();
}

bool known(Type t) {
  return t != Type::kDyn;
}

struct PErr {
  std::string what;
  size_t pos = 0;
  bool unsupported = false;
};

using NodeP = std::unique_ptr<Node>;
using PR = Result<NodeP, PErr>;

PErr invalid(std::string what, size_t pos) {
  return PErr{std::move(what), pos, false};
}
PErr unsupported(std::string what, size_t pos) {
  return PErr{std::move(what), pos, true};
}

std::string overload(std::string_view op, Type a, Type b) {
  return "found no matching overload for '" + std::string(op) + "' applied to '(" +
         std::string(type_name(a)) + ", " + std::string(type_name(b)) + ")'";
}
std::string overload1(std::string_view op, Type a) {
  return "found no matching overload for '" + std::string(op) + "' applied to '(" +
         std::string(type_name(a)) + ")'";
}

NodeP node(Op op, Type type, size_t pos) {
  auto n = std::make_unique<Node>();
  n->op = op;
  n->type = type;
  n->pos = pos;
  return n;
}

// A static type as the checker tracks it: the type, and a list's element or a map's key and
// value type (one level: the elements of a list of lists are dyn to the checker).
struct SType {
  Type t = Type::kDyn;
  Type elem = Type::kDyn;
  Type key = Type::kDyn;
};

SType stype(const Node& n) {
  return SType{n.type, n.elem, n.key};
}

void set_stype(Node& n, SType s) {
  n.type = s.t;
  n.elem = s.elem;
  n.key = s.key;
}

// The key and value types a comprehension over `s` binds (a list: index and element).
bool range_types(SType s, SType* k, SType* v) {
  switch (s.t) {
    case Type::kList:
      *k = SType{Type::kInt};
      *v = SType{s.elem};
      return true;
    case Type::kMap:
      *k = SType{s.key};
      *v = SType{s.elem};
      return true;
    case Type::kAttrRoot:
      *k = SType{Type::kString};
      *v = SType{Type::kAttrDomain};
      return true;
    case Type::kCapRoot:
      *k = SType{Type::kString};
      *v = SType{Type::kCapDomain};
      return true;
    case Type::kAttrDomain:
      *k = SType{Type::kString};
      *v = SType{Type::kDyn};
      return true;
    case Type::kCapDomain:
      *k = SType{Type::kString};
      *v = SType{Type::kQuantity};
      return true;
    case Type::kDyn:
      *k = SType{};
      *v = SType{};
      return true;
    default:
      return false;
  }
}

// Whether values of static types a and b can meet in `==`, a list literal or `?:` (CEL's
// checker unifies them: the same type, or one of them dyn).
// device.attributes and device.capacity and their domains as the map types they are.
SType as_map(SType s) {
  switch (s.t) {
    case Type::kAttrRoot:
    case Type::kCapRoot:
      return SType{Type::kMap, Type::kMap, Type::kString};
    case Type::kAttrDomain:
      return SType{Type::kMap, Type::kDyn, Type::kString};
    case Type::kCapDomain:
      return SType{Type::kMap, Type::kQuantity, Type::kString};
    default:
      return s;
  }
}

bool unify(SType a, SType b) {
  a = as_map(a);
  b = as_map(b);
  if (!known(a.t) || !known(b.t)) return true;
  if (a.t != b.t) return false;
  if (a.t == Type::kList) return !known(a.elem) || !known(b.elem) || a.elem == b.elem;
  if (a.t == Type::kMap) {
    return (!known(a.elem) || !known(b.elem) || a.elem == b.elem) &&
           (!known(a.key) || !known(b.key) || a.key == b.key);
  }
  return true;
}

// One overload of a function: the receiver first for a method; kDyn takes any type.
struct Overload {
  std::vector<Type> params;
  Type result;
};

bool accepts(Type param, Type arg) {
  if (param == Type::kDyn || arg == Type::kDyn) return true;
  if (param == Type::kMap) return is_map(arg);
  return param == arg;
}

// The functions and methods, by name, and their overloads.
struct FnDef {
  std::string_view name;
  bool member;
  Fn fn;
  std::vector<Overload> overloads;
};

const std::vector<FnDef>& functions() {
  using T = Type;
  static const std::vector<FnDef> defs = {
      {"size",
       false,
       Fn::kSize,
       {{{T::kString}, T::kInt}, {{T::kList}, T::kInt}, {{T::kMap}, T::kInt}}},
      {"size",
       true,
       Fn::kSize,
       {{{T::kString}, T::kInt}, {{T::kList}, T::kInt}, {{T::kMap}, T::kInt}}},
      {"quantity", false, Fn::kQuantity, {{{T::kString}, T::kQuantity}}},
      {"isQuantity", false, Fn::kIsQuantity, {{{T::kString}, T::kBool}}},
      {"semver",
       false,
       Fn::kSemver,
       {{{T::kString}, T::kSemver}, {{T::kString, T::kBool}, T::kSemver}}},
      {"isSemver",
       false,
       Fn::kIsSemver,
       {{{T::kString}, T::kBool}, {{T::kString, T::kBool}, T::kBool}}},
      {"matches", false, Fn::kMatches, {{{T::kString, T::kString}, T::kBool}}},
      {"matches", true, Fn::kMatches, {{{T::kString, T::kString}, T::kBool}}},
      {"int",
       false,
       Fn::kToInt,
       {{{T::kInt}, T::kInt},
        {{T::kUint}, T::kInt},
        {{T::kDouble}, T::kInt},
        {{T::kString}, T::kInt}}},
      {"uint",
       false,
       Fn::kToUint,
       {{{T::kInt}, T::kUint},
        {{T::kUint}, T::kUint},
        {{T::kDouble}, T::kUint},
        {{T::kString}, T::kUint}}},
      {"double",
       false,
       Fn::kToDouble,
       {{{T::kInt}, T::kDouble},
        {{T::kUint}, T::kDouble},
        {{T::kDouble}, T::kDouble},
        {{T::kString}, T::kDouble}}},
      {"string",
       false,
       Fn::kToString,
       {{{T::kInt}, T::kString},
        {{T::kUint}, T::kString},
        {{T::kDouble}, T::kString},
        {{T::kString}, T::kString},
        {{T::kBool}, T::kString}}},
      {"bool", false, Fn::kToBool, {{{T::kBool}, T::kBool}, {{T::kString}, T::kBool}}},
      {"dyn", false, Fn::kDyn, {{{T::kDyn}, T::kDyn}}},
      {"startsWith", true, Fn::kStartsWith, {{{T::kString, T::kString}, T::kBool}}},
      {"endsWith", true, Fn::kEndsWith, {{{T::kString, T::kString}, T::kBool}}},
      {"contains", true, Fn::kContains, {{{T::kString, T::kString}, T::kBool}}},
      {"find", true, Fn::kFind, {{{T::kString, T::kString}, T::kString}}},
      {"findAll",
       true,
       Fn::kFindAll,
       {{{T::kString, T::kString}, T::kList}, {{T::kString, T::kString, T::kInt}, T::kList}}},
      {"charAt", true, Fn::kCharAt, {{{T::kString, T::kInt}, T::kString}}},
      {"indexOf",
       true,
       Fn::kIndexOf,
       {{{T::kString, T::kString}, T::kInt},
        {{T::kString, T::kString, T::kInt}, T::kInt},
        {{T::kList, T::kDyn}, T::kInt}}},
      {"lastIndexOf",
       true,
       Fn::kLastIndexOf,
       {{{T::kString, T::kString}, T::kInt},
        {{T::kString, T::kString, T::kInt}, T::kInt},
        {{T::kList, T::kDyn}, T::kInt}}},
      {"lowerAscii", true, Fn::kLowerAscii, {{{T::kString}, T::kString}}},
      {"upperAscii", true, Fn::kUpperAscii, {{{T::kString}, T::kString}}},
      {"trim", true, Fn::kTrim, {{{T::kString}, T::kString}}},
      {"replace",
       true,
       Fn::kReplace,
       {{{T::kString, T::kString, T::kString}, T::kString},
        {{T::kString, T::kString, T::kString, T::kInt}, T::kString}}},
      {"split",
       true,
       Fn::kSplit,
       {{{T::kString, T::kString}, T::kList}, {{T::kString, T::kString, T::kInt}, T::kList}}},
      {"substring",
       true,
       Fn::kSubstring,
       {{{T::kString, T::kInt}, T::kString}, {{T::kString, T::kInt, T::kInt}, T::kString}}},
      {"join", true, Fn::kJoin, {{{T::kList}, T::kString}, {{T::kList, T::kString}, T::kString}}},
      {"strings.quote", false, Fn::kQuote, {{{T::kString}, T::kString}}},
      {"compareTo",
       true,
       Fn::kCompareTo,
       {{{T::kQuantity, T::kQuantity}, T::kInt}, {{T::kSemver, T::kSemver}, T::kInt}}},
      {"isGreaterThan",
       true,
       Fn::kIsGreaterThan,
       {{{T::kQuantity, T::kQuantity}, T::kBool}, {{T::kSemver, T::kSemver}, T::kBool}}},
      {"isLessThan",
       true,
       Fn::kIsLessThan,
       {{{T::kQuantity, T::kQuantity}, T::kBool}, {{T::kSemver, T::kSemver}, T::kBool}}},
      {"major", true, Fn::kMajor, {{{T::kSemver}, T::kInt}}},
      {"minor", true, Fn::kMinor, {{{T::kSemver}, T::kInt}}},
      {"patch", true, Fn::kPatch, {{{T::kSemver}, T::kInt}}},
      {"isInteger", true, Fn::kIsInteger, {{{T::kQuantity}, T::kBool}}},
      {"asInteger", true, Fn::kAsInteger, {{{T::kQuantity}, T::kInt}}},
      {"asApproximateFloat", true, Fn::kAsApproximateFloat, {{{T::kQuantity}, T::kDouble}}},
      {"add",
       true,
       Fn::kQuantityAdd,
       {{{T::kQuantity, T::kQuantity}, T::kQuantity}, {{T::kQuantity, T::kInt}, T::kQuantity}}},
      {"sub",
       true,
       Fn::kQuantitySub,
       {{{T::kQuantity, T::kQuantity}, T::kQuantity}, {{T::kQuantity, T::kInt}, T::kQuantity}}},
      {"sets.contains", false, Fn::kSetsContains, {{{T::kList, T::kList}, T::kBool}}},
      {"sets.equivalent", false, Fn::kSetsEquivalent, {{{T::kList, T::kList}, T::kBool}}},
      {"sets.intersects", false, Fn::kSetsIntersects, {{{T::kList, T::kList}, T::kBool}}},
      {"isSorted", true, Fn::kIsSorted, {{{T::kList}, T::kBool}}},
      {"sum", true, Fn::kSum, {{{T::kList}, T::kDyn}}},
      {"min", true, Fn::kMin, {{{T::kList}, T::kDyn}}},
      {"max", true, Fn::kMax, {{{T::kList}, T::kDyn}}},
      {"lists.range", false, Fn::kRange, {{{T::kInt}, T::kList}}},
      {"slice", true, Fn::kSlice, {{{T::kList, T::kInt, T::kInt}, T::kList}}},
      {"flatten", true, Fn::kFlatten, {{{T::kList}, T::kList}, {{T::kList, T::kInt}, T::kList}}},
      {"distinct", true, Fn::kDistinct, {{{T::kList}, T::kList}}},
      {"reverse", true, Fn::kReverse, {{{T::kList}, T::kList}}},
      {"sort", true, Fn::kSort, {{{T::kList}, T::kList}}},
      {"optional.of", false, Fn::kOptOf, {{{T::kDyn}, T::kOptional}}},
      {"optional.ofNonZeroValue", false, Fn::kOptOfNonZero, {{{T::kDyn}, T::kOptional}}},
      {"optional.none", false, Fn::kOptNone, {{{}, T::kOptional}}},
      {"hasValue", true, Fn::kOptHasValue, {{{T::kOptional}, T::kBool}}},
      {"value", true, Fn::kOptValue, {{{T::kOptional}, T::kDyn}}},
      {"orValue", true, Fn::kOptOrValue, {{{T::kOptional, T::kDyn}, T::kDyn}}},
      {"or", true, Fn::kOptOr, {{{T::kOptional, T::kOptional}, T::kOptional}}},
  };
  return defs;
}

const FnDef* find_function(std::string_view name, bool member) {
  for (const auto& d : functions()) {
    if (d.name == name && d.member == member) return &d;
  }
  return nullptr;
}

// Whether the element type of a list is one that has an order (sort, min, isSorted, ...).
bool orderable(Type t) {
  return t == Type::kDyn || is_number(t) || t == Type::kString || t == Type::kBool;
}

// The device of constant folding, which looks at none.
class NoDevice final : public Device {
 public:
  std::string_view driver() const override { return {}; }
  bool allow_multiple_allocations() const override { return false; }
  const Attribute* attribute(std::string_view, std::string_view) const override { return nullptr; }
  const model::Quantity* capacity(std::string_view, std::string_view) const override {
    return nullptr;
  }
  Names attribute_names() const override { return {}; }
  Names capacity_names() const override { return {}; }
};

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : toks_(std::move(toks)) {}

  PR run() {
    auto e = expr();
    if (!e) return e;
    if (peek().kind != Tok::kEnd) return unexpected(peek());
    NodeP root = std::move(e).value();
    if (root->type != Type::kBool && root->type != Type::kDyn) {
      return invalid(
          "must evaluate to bool or the unknown type, not " + std::string(type_name(root->type)),
          root->pos);
    }
    return root;
  }

 private:
  const Token& peek(size_t k = 0) const {
    return idx_ + k < toks_.size() ? toks_[idx_ + k] : toks_.back();
  }
  Token& take() {
    Token& t = toks_[idx_];
    if (idx_ + 1 < toks_.size()) ++idx_;
    return t;
  }
  bool accept(Tok k) {
    if (peek().kind != k) return false;
    take();
    return true;
  }

  // The error for a token that cannot start or continue an expression here.
  PErr unexpected(const Token& t) const {
    switch (t.kind) {
      case Tok::kBytes:
        return unsupported("bytes literal", t.pos);
      case Tok::kLBracketQuestion:
        return unsupported("optional list element '[?'", t.pos);
      default:
        return invalid("unexpected " + std::string(token_name(t.kind)), t.pos);
    }
  }

  Result<Token*, PErr> expect(Tok k) {
    if (peek().kind != k) {
      if (peek().kind == Tok::kEnd || peek().kind == Tok::kIdent || peek().kind == Tok::kInt ||
          peek().kind == Tok::kString) {
        return invalid("expected " + std::string(token_name(k)) + ", found " +
                           std::string(token_name(peek().kind)),
                       peek().pos);
      }
      return unexpected(peek());
    }
    return &take();
  }

  // Sets the node's height; refuses trees deeper than kMaxDepth.
  PR finish(NodeP n) {
    int d = 0;
    for (const auto& k : n->kids) d = std::max(d, k->depth);
    n->depth = d + 1;
    if (n->depth > kMaxDepth) {
      return invalid("the expression nests deeper than " + std::to_string(kMaxDepth) + " levels",
                     n->pos);
    }
    return n;
  }

  PR expr() {
    if (++nesting_ > kMaxDepth) {
      return invalid("the expression nests deeper than " + std::to_string(kMaxDepth) + " levels",
                     peek().pos);
    }
    auto r = conditional();
    --nesting_;
    return r;
  }

  PR conditional() {
    auto c = logical(Tok::kOr);
    if (!c || peek().kind != Tok::kQuestion) return c;
    const size_t pos = take().pos;
    auto t = logical(Tok::kOr);
    if (!t) return t;
    if (auto colon = expect(Tok::kColon); !colon) return colon.error();
    auto f = expr();
    if (!f) return f;
    Type ct = (*c)->type;
    const SType tt = stype(**t), ft = stype(**f);
    if (ct != Type::kBool && ct != Type::kDyn) {
      return invalid("the condition of '?:' must be bool, not " + std::string(type_name(ct)),
                     (*c)->pos);
    }
    if (!unify(tt, ft)) {
      return invalid("the branches of '?:' have different types (" + std::string(type_name(tt.t)) +
                         " and " + std::string(type_name(ft.t)) + ")",
                     pos);
    }
    auto n = node(Op::kCond, Type::kDyn, pos);
    if (known(tt.t) && known(ft.t)) {
      set_stype(*n, tt);
      if (!known(tt.elem)) n->elem = ft.elem;
      if (!known(tt.key)) n->key = ft.key;
    }
    n->kids.push_back(std::move(c).value());
    n->kids.push_back(std::move(t).value());
    n->kids.push_back(std::move(f).value());
    return finish(std::move(n));
  }

  // `||` chains over `&&` chains over relations; each chain is one n-ary node.
  PR logical(Tok op) {
    auto first = op == Tok::kOr ? logical(Tok::kAnd) : relation();
    if (!first || peek().kind != op) return first;
    const std::string_view name = op == Tok::kOr ? "_||_" : "_&&_";
    auto n = node(op == Tok::kOr ? Op::kOr : Op::kAnd, Type::kBool, peek().pos);
    n->kids.push_back(std::move(first).value());
    while (peek().kind == op) {
      take();
      auto next = op == Tok::kOr ? logical(Tok::kAnd) : relation();
      if (!next) return next;
      n->kids.push_back(std::move(next).value());
    }
    for (const auto& k : n->kids) {
      if (k->type != Type::kBool && k->type != Type::kDyn) {
        return invalid(overload1(name, k->type) + " (operands must be bool)", k->pos);
      }
    }
    return finish(std::move(n));
  }

  static bool is_relop(Tok k) {
    return k == Tok::kEq || k == Tok::kNe || k == Tok::kLt || k == Tok::kLe || k == Tok::kGt ||
           k == Tok::kGe || (k == Tok::kIdent);
  }

  PR relation() {
    auto lhs = additive();
    if (!lhs) return lhs;
    while (true) {
      const Token& t = peek();
      if (t.kind == Tok::kIdent && t.text != "in") break;
      if (!is_relop(t.kind)) break;
      const Tok k = t.kind;
      const size_t pos = take().pos;
      auto rhs = additive();
      if (!rhs) return rhs;
      auto n = relational(k, pos, std::move(lhs).value(), std::move(rhs).value());
      if (!n) return n;
      lhs = std::move(n);
    }
    return lhs;
  }

  PR additive() {
    auto lhs = multiplicative();
    if (!lhs) return lhs;
    while (peek().kind == Tok::kPlus || peek().kind == Tok::kMinus) {
      const Tok k = peek().kind;
      const size_t pos = take().pos;
      auto rhs = multiplicative();
      if (!rhs) return rhs;
      auto n = arithmetic(k == Tok::kPlus ? Op::kAdd : Op::kSub, pos, std::move(lhs).value(),
                          std::move(rhs).value());
      if (!n) return n;
      lhs = std::move(n);
    }
    return lhs;
  }

  PR multiplicative() {
    auto lhs = unary();
    if (!lhs) return lhs;
    while (peek().kind == Tok::kStar || peek().kind == Tok::kSlash ||
           peek().kind == Tok::kPercent) {
      const Tok k = peek().kind;
      const size_t pos = take().pos;
      auto rhs = unary();
      if (!rhs) return rhs;
      const Op op = k == Tok::kStar ? Op::kMul : (k == Tok::kSlash ? Op::kDiv : Op::kMod);
      auto n = arithmetic(op, pos, std::move(lhs).value(), std::move(rhs).value());
      if (!n) return n;
      lhs = std::move(n);
    }
    return lhs;
  }

  // Binary arithmetic: both operands of one type (int, uint, double; `+` also on strings and
  // lists; `%` not on doubles), or dyn, checked again at run time.
  PR arithmetic(Op op, size_t pos, NodeP lhs, NodeP rhs) {
    static constexpr std::string_view names[] = {"_+_", "_-_", "_*_", "_/_", "_%_"};
    const std::string_view name = names[static_cast<int>(op) - static_cast<int>(Op::kAdd)];
    const SType l = stype(*lhs), r = stype(*rhs);
    auto allowed = [&](Type t) {
      if (t == Type::kDyn) return true;
      if (t == Type::kInt || t == Type::kUint) return true;
      if (t == Type::kDouble) return op != Op::kMod;
      if (t == Type::kString || t == Type::kList) return op == Op::kAdd;
      return false;
    };
    if (!allowed(l.t) || !allowed(r.t) || !unify(l, r))
      return invalid(overload(name, l.t, r.t), pos);
    auto n = node(op, Type::kDyn, pos);
    if (known(l.t)) {
      set_stype(*n, l);
      if (l.t == Type::kList && !known(l.elem)) n->elem = r.elem;
    } else if (known(r.t)) {
      set_stype(*n, r);
    }
    n->kids.push_back(std::move(lhs));
    n->kids.push_back(std::move(rhs));
    return finish(std::move(n));
  }

  PR relational(Tok k, size_t pos, NodeP lhs, NodeP rhs) {
    const Type l = lhs->type, r = rhs->type;
    // Each relational token, its operation and its name in CEL's overload messages.
    struct Relation {
      Tok token;
      Op op;
      std::string_view name;
    };
    static constexpr Relation kRelations[] = {
        {Tok::kEq, Op::kEq, "_==_"}, {Tok::kNe, Op::kNe, "_!=_"}, {Tok::kLt, Op::kLt, "_<_"},
        {Tok::kLe, Op::kLe, "_<=_"}, {Tok::kGt, Op::kGt, "_>_"},  {Tok::kGe, Op::kGe, "_>=_"}};
    Op op = Op::kIn;
    std::string_view name = "@in";
    for (const Relation& relation : kRelations) {
      if (relation.token == k) {
        op = relation.op;
        name = relation.name;
      }
    }
    if (op == Op::kEq || op == Op::kNe) {
      if (l == Type::kDevice || r == Type::kDevice) {
        return unsupported("comparing `device` with " + std::string(token_name(k)), pos);
      }
      if (!unify(stype(*lhs), stype(*rhs))) return invalid(overload(name, l, r), pos);
    } else if (op == Op::kIn) {
      if (r == Type::kList) {
        if (!unify(stype(*lhs), SType{rhs->elem})) {
          return invalid("found no matching overload for '@in' applied to '(" +
                             std::string(type_name(l)) + ", list(" +
                             std::string(type_name(rhs->elem)) + "))'",
                         pos);
        }
      } else if (r == Type::kMap) {
        if (!unify(stype(*lhs), SType{rhs->key})) return invalid(overload(name, l, r), pos);
      } else if (is_map(r)) {
        if (l != Type::kString && l != Type::kDyn) return invalid(overload(name, l, r), pos);
      } else if (r != Type::kDyn) {
        return invalid(overload(name, l, r), pos);
      }
    } else {
      auto ordered = [](Type t) {
        return t == Type::kDyn || is_number(t) || t == Type::kString || t == Type::kBool;
      };
      // CrossTypeNumericComparisons: int, uint and double order against each other.
      const bool numbers = is_number(l) && is_number(r);
      if (!ordered(l) || !ordered(r) || (known(l) && known(r) && l != r && !numbers)) {
        std::string what = overload(name, l, r);
        if (l == Type::kQuantity || l == Type::kSemver) {
          what += " (compare with compareTo, isGreaterThan or isLessThan)";
        }
        return invalid(std::move(what), pos);
      }
    }
    auto n = node(op, Type::kBool, pos);
    n->kids.push_back(std::move(lhs));
    n->kids.push_back(std::move(rhs));
    return finish(std::move(n));
  }

  PR unary() {
    const Token& t = peek();
    if (t.kind == Tok::kNot) {
      // '!'+ member: a run of negations applies to one member expression.
      std::vector<size_t> nots;
      while (peek().kind == Tok::kNot) nots.push_back(take().pos);
      auto m = member();
      if (!m) return m;
      NodeP cur = std::move(m).value();
      for (auto it = nots.rbegin(); it != nots.rend(); ++it) {
        if (cur->type != Type::kBool && cur->type != Type::kDyn) {
          return invalid(overload1("!_", cur->type), *it);
        }
        auto n = node(Op::kNot, Type::kBool, *it);
        n->kids.push_back(std::move(cur));
        auto f = finish(std::move(n));
        if (!f) return f;
        cur = std::move(f).value();
      }
      return cur;
    }
    if (t.kind == Tok::kMinus && peek(1).kind != Tok::kInt && peek(1).kind != Tok::kDouble) {
      // '-'+ member: arithmetic negation (a minus sign right before a number is part of the
      // literal, CEL's grammar).
      std::vector<size_t> minuses;
      while (peek().kind == Tok::kMinus && peek(1).kind != Tok::kInt &&
             peek(1).kind != Tok::kDouble) {
        minuses.push_back(take().pos);
      }
      auto m = member();
      if (!m) return m;
      NodeP cur = std::move(m).value();
      for (auto it = minuses.rbegin(); it != minuses.rend(); ++it) {
        const Type ty = cur->type;
        if (ty != Type::kInt && ty != Type::kDouble && ty != Type::kDyn) {
          return invalid(overload1("-_", ty), *it);
        }
        auto n = node(Op::kNeg, ty, *it);
        n->kids.push_back(std::move(cur));
        auto f = finish(std::move(n));
        if (!f) return f;
        cur = std::move(f).value();
      }
      return cur;
    }
    return member();
  }

  PR member() {
    auto p = primary();
    if (!p) return p;
    NodeP cur = std::move(p).value();
    while (true) {
      const Token& t = peek();
      if (t.kind == Tok::kDot) {
        take();
        auto name = expect(Tok::kIdent);
        if (!name) return name.error();
        Token& id = **name;
        if (peek().kind == Tok::kLParen) {
          auto c = method(std::move(cur), id);
          if (!c) return c;
          cur = std::move(c).value();
        } else {
          auto s = select(std::move(cur), id);
          if (!s) return s;
          cur = std::move(s).value();
        }
      } else if (t.kind == Tok::kLBracket) {
        const size_t pos = take().pos;
        auto key = expr();
        if (!key) return key;
        if (auto close = expect(Tok::kRBracket); !close) return close.error();
        auto ix = index(std::move(cur), std::move(key).value(), pos);
        if (!ix) return ix;
        cur = std::move(ix).value();
      } else if (t.kind == Tok::kDotQuestion) {
        take();
        auto name = expect(Tok::kIdent);
        if (!name) return name.error();
        auto s = optional_member(std::move(cur), **name, nullptr);
        if (!s) return s;
        cur = std::move(s).value();
      } else if (t.kind == Tok::kLBracketQuestion) {
        const Token& open = take();
        auto key = expr();
        if (!key) return key;
        if (auto close = expect(Tok::kRBracket); !close) return close.error();
        auto s = optional_member(std::move(cur), open, std::move(key).value());
        if (!s) return s;
        cur = std::move(s).value();
      } else if (t.kind == Tok::kLBrace) {
        return unsupported("message construction '{'", t.pos);
      } else {
        return cur;
      }
    }
  }

  // The type of `operand.f` and `operand[key]` for a map-like operand.
  static std::optional<SType> member_type(SType t) {
    switch (t.t) {
      case Type::kAttrRoot:
        return SType{Type::kAttrDomain};
      case Type::kCapRoot:
        return SType{Type::kCapDomain};
      case Type::kAttrDomain:
      case Type::kDyn:
        return SType{Type::kDyn};
      case Type::kCapDomain:
        return SType{Type::kQuantity};
      case Type::kMap:
        return SType{t.elem};
      default:
        return std::nullopt;
    }
  }

  // `operand.?name` (key == nullptr) and `operand[?key]`: an optional of what `.name` or
  // `[key]` would give, none where it would fail for want of the key; on an optional operand,
  // none stays none.
  PR optional_member(NodeP operand, const Token& at, NodeP key) {
    SType t = stype(*operand);
    if (t.t == Type::kOptional) t = SType{t.elem};
    SType result;
    if (t.t == Type::kDevice && !key) {
      const std::string_view f = at.text;
      if (f == "driver") {
        result.t = Type::kString;
      } else if (f == "allowMultipleAllocations") {
        result.t = Type::kBool;
      } else if (f == "attributes") {
        result.t = Type::kAttrRoot;
      } else if (f == "capacity") {
        result.t = Type::kCapRoot;
      } else {
        return invalid("undefined field '" + std::string(f) + "' of device", at.pos);
      }
    } else if (t.t == Type::kList && key) {
      if (key->type != Type::kInt && key->type != Type::kDyn) {
        return invalid(overload("_[?_]", t.t, key->type), key->pos);
      }
      result = SType{t.elem};
    } else if (auto m = member_type(t)) {
      result = *m;
    } else {
      return invalid("type '" + std::string(type_name(t.t)) + "' does not support " +
                         (key ? "optional indexing" : "optional field selection"),
                     at.pos);
    }
    if (result.t == Type::kList || result.t == Type::kMap || result.t == Type::kOptional) {
      result = SType{};  // one level of element types: the optional's is dyn
    }
    auto n = node(key ? Op::kOptIndex : Op::kOptSelect, Type::kOptional, at.pos);
    n->elem = result.t;
    if (!key) n->name = std::string(at.text);
    n->kids.push_back(std::move(operand));
    if (key) n->kids.push_back(std::move(key));
    return finish(std::move(n));
  }

  PR select(NodeP operand, const Token& id) {
    const SType t = stype(*operand);
    const std::string_view f = id.text;
    if (is_reserved(f)) return invalid("reserved identifier '" + std::string(f) + "'", id.pos);
    SType result;
    if (t.t == Type::kDevice) {
      if (f == "driver") {
        result.t = Type::kString;
      } else if (f == "allowMultipleAllocations") {
        result.t = Type::kBool;
      } else if (f == "attributes") {
        result.t = Type::kAttrRoot;
      } else if (f == "capacity") {
        result.t = Type::kCapRoot;
      } else {
        return invalid("undefined field '" + std::string(f) + "' of device", id.pos);
      }
    } else if (auto m = member_type(t)) {
      if (t.t == Type::kMap && known(t.key) && t.key != Type::kString) {
        return invalid("type '" + std::string(type_name(t.t)) +
                           "' with non-string keys does not support field selection",
                       id.pos);
      }
      result = *m;
    } else {
      return invalid("type '" + std::string(type_name(t.t)) + "' does not support field selection",
                     id.pos);
    }
    auto n = node(Op::kSelect, Type::kDyn, id.pos);
    set_stype(*n, result);
    n->name = std::string(f);
    n->kids.push_back(std::move(operand));
    return finish(std::move(n));
  }

  PR index(NodeP operand, NodeP key, size_t pos) {
    const SType t = stype(*operand);
    const Type k = key->type;
    SType result;
    if (t.t == Type::kList) {
      if (k != Type::kInt && k != Type::kDyn) return invalid(overload("_[_]", t.t, k), key->pos);
      result = SType{t.elem};
    } else if (auto m = member_type(t)) {
      const Type want =
          t.t == Type::kMap ? t.key : (t.t == Type::kDyn ? Type::kDyn : Type::kString);
      if (known(want) && known(k) && want != k) {
        return invalid(overload("_[_]", t.t, k), key->pos);
      }
      result = *m;
    } else {
      return invalid("type '" + std::string(type_name(t.t)) + "' does not support indexing", pos);
    }
    auto n = node(Op::kIndex, Type::kDyn, pos);
    set_stype(*n, result);
    n->kids.push_back(std::move(operand));
    n->kids.push_back(std::move(key));
    return finish(std::move(n));
  }

  Result<std::vector<NodeP>, PErr> args() {
    std::vector<NodeP> out;
    if (auto open = expect(Tok::kLParen); !open) return open.error();
    if (accept(Tok::kRParen)) return out;
    while (true) {
      auto a = expr();
      if (!a) return a.error();
      out.push_back(std::move(a).value());
      if (accept(Tok::kRParen)) return out;
      if (auto comma = expect(Tok::kComma); !comma) return comma.error();
    }
  }

  // The number of arguments of the call whose '(' is the next token.
  size_t count_args() const {
    int depth = 0;
    size_t commas = 0;
    bool any = false;
    for (size_t k = idx_; k < toks_.size(); ++k) {
      const Tok t = toks_[k].kind;
      if (t == Tok::kLParen || t == Tok::kLBracket || t == Tok::kLBrace ||
          t == Tok::kLBracketQuestion) {
        ++depth;
        if (depth == 1) continue;
      } else if (t == Tok::kRParen || t == Tok::kRBracket || t == Tok::kRBrace) {
        if (--depth == 0) break;
      } else if (t == Tok::kComma && depth == 1) {
        ++commas;
      } else if (t == Tok::kEnd) {
        break;
      }
      if (depth >= 1) any = true;
    }
    return any ? commas + 1 : 0;
  }

  static std::optional<Macro> macro_of(std::string_view m, size_t argc, int* vars) {
    *vars = 1;
    if (argc == 3 && (m == "all" || m == "exists" || m == "existsOne")) {
      *vars = 2;
      return m == "all" ? Macro::kAll : (m == "exists" ? Macro::kExists : Macro::kExistsOne);
    }
    if (argc == 2 && m == "all") return Macro::kAll;
    if (argc == 2 && m == "exists") return Macro::kExists;
    if (argc == 2 && m == "exists_one") return Macro::kExistsOne;
    if ((argc == 2 || argc == 3) && m == "map") return Macro::kMap;
    if (argc == 2 && m == "filter") return Macro::kFilter;
    if ((argc == 3 || argc == 4) && (m == "transformList" || m == "transformMap")) {
      *vars = 2;
      return m == "transformList" ? Macro::kTransformList : Macro::kTransformMap;
    }
    return std::nullopt;
  }

  PR comprehension(NodeP range, const Token& id, Macro macro, int vars, size_t argc) {
    take();  // (
    std::vector<std::string_view> names;
    for (int v = 0; v < vars; ++v) {
      const Token& var = peek();
      if (var.kind != Tok::kIdent || is_reserved(var.text) || peek(1).kind != Tok::kComma) {
        return invalid("argument must be a simple name", var.pos);
      }
      names.push_back(var.text);
      take();
      take();  // ,
    }
    if (vars == 2 && names[0] == names[1]) {
      return invalid("duplicate variable name '" + std::string(names[0]) + "'", id.pos);
    }
    const SType rt = stype(*range);
    SType k, v;
    if (!range_types(rt, &k, &v)) {
      return invalid("expression of type '" + std::string(type_name(rt.t)) +
                         "' cannot be range of a comprehension (must be list, map, or dynamic)",
                     range->pos);
    }
    if (vars == 1) {
      scopes_.push_back({names[0], rt.t == Type::kList ? v : k});
    } else {
      scopes_.push_back({names[0], k});
      scopes_.push_back({names[1], v});
    }
    auto n = node(Op::kComprehension, Type::kBool, id.pos);
    n->macro = macro;
    n->vars = vars;
    n->kids.push_back(std::move(range));
    const size_t body = argc - static_cast<size_t>(vars);
    for (size_t a = 0; a < body; ++a) {
      auto e = expr();
      if (!e) {
        scopes_.resize(scopes_.size() - static_cast<size_t>(vars));
        return e;
      }
      n->kids.push_back(std::move(e).value());
      if (a + 1 < body) {
        if (auto comma = expect(Tok::kComma); !comma) return comma.error();
      }
    }
    scopes_.resize(scopes_.size() - static_cast<size_t>(vars));
    if (auto close = expect(Tok::kRParen); !close) return close.error();
    // Predicates: every argument but a transform (the last of map and transform*).
    const bool transforms =
        macro == Macro::kMap || macro == Macro::kTransformList || macro == Macro::kTransformMap;
    const size_t predicates = transforms ? body - 1 : body;
    for (size_t a = 1; a <= predicates; ++a) {
      const Type t = n->kids[a]->type;
      if (t != Type::kBool && t != Type::kDyn) {
        return invalid("a predicate of '" + std::string(id.text) + "' must be bool, not " +
                           std::string(type_name(t)),
                       n->kids[a]->pos);
      }
    }
    switch (macro) {
      case Macro::kMap:
      case Macro::kTransformList:
        n->type = Type::kList;
        n->elem = n->kids.back()->type;
        break;
      case Macro::kFilter:
        n->type = Type::kList;
        n->elem = rt.t == Type::kList ? v.t : k.t;
        break;
      case Macro::kTransformMap:
        if (rt.t == Type::kList) {
          n->type = Type::kMap;
          n->key = Type::kInt;
        } else {
          n->type = Type::kMap;
          n->key = k.t;
        }
        n->elem = n->kids.back()->type;
        break;
      default:
        n->type = Type::kBool;
    }
    return finish(std::move(n));
  }

  PR method(NodeP target, const Token& id) {
    const std::string_view m = id.text;
    int vars = 1;
    const size_t argc = count_args();
    if (auto macro = macro_of(m, argc, &vars)) {
      return comprehension(std::move(target), id, *macro, vars, argc);
    }
    if (m == "all" || m == "exists" || m == "exists_one" || m == "existsOne" || m == "map" ||
        m == "filter" || m == "transformList" || m == "transformMap") {
      return invalid("macro '" + std::string(m) + "' takes other arguments", id.pos);
    }
    if (m == "transformMapEntry" || m == "sortBy" || m == "optMap" || m == "optFlatMap") {
      return unsupported("macro '" + std::string(m) + "'", id.pos);
    }
    const FnDef* def = find_function(m, true);
    if (!def) return unsupported("method '" + std::string(m) + "'", id.pos);
    auto a = args();
    if (!a) return a.error();
    std::vector<NodeP> list;
    list.push_back(std::move(target));
    for (auto& k : *a) list.push_back(std::move(k));
    return call(*def, std::move(list), id);
  }

  // Checks a call against the function's overloads and builds its node.
  PR call(const FnDef& def, std::vector<NodeP> list, const Token& id) {
    std::vector<Type> types;
    for (const auto& k : list) types.push_back(k->type);
    bool any = false;
    bool one_result = true;
    Type result = Type::kDyn;
    for (const Overload& o : def.overloads) {
      if (o.params.size() != types.size()) continue;
      bool ok = true;
      for (size_t k = 0; k < types.size(); ++k) ok = ok && accepts(o.params[k], types[k]);
      if (!ok) continue;
      if (any && o.result != result) one_result = false;
      any = true;
      result = o.result;
    }
    const size_t shown = def.member ? 1 : 0;
    if (!any) {
      std::string what =
          "found no matching overload for '" + std::string(def.name) + "' applied to '";
      if (def.member) what += std::string(type_name(types[0])) + ".";
      what += "(";
      for (size_t k = shown; k < types.size(); ++k) {
        if (k > shown) what += ", ";
        what += type_name(types[k]);
      }
      what += ")'";
      return invalid(std::move(what), id.pos);
    }
    auto n = node(Op::kCall, one_result ? result : Type::kDyn, id.pos);
    n->fn = def.fn;
    const Type recv_elem = list.empty() ? Type::kDyn : list[0]->elem;
    // The element types of what list functions return, and checks CEL's checker makes on them.
    switch (def.fn) {
      case Fn::kSplit:
        n->elem = Type::kString;
        break;
      case Fn::kOptOf:
      case Fn::kOptOfNonZero:
        n->elem = list[0]->type;
        break;
      case Fn::kOptValue:
        n->type = recv_elem;
        break;
      case Fn::kOptOrValue:
        if (!unify(SType{recv_elem}, stype(*list[1]))) {
          return invalid(overload("orValue", Type::kOptional, types[1]), id.pos);
        }
        n->type = recv_elem;  // optional(dyn).orValue(1) is dyn, as cel-go infers it
        break;
      case Fn::kOptOr:
        if (!unify(SType{recv_elem}, SType{list[1]->elem})) {
          return invalid(overload("or", Type::kOptional, Type::kOptional), id.pos);
        }
        n->elem = recv_elem;
        break;
      case Fn::kRange:
        n->elem = Type::kInt;
        break;
      case Fn::kSum:
        if (known(recv_elem) && !is_number(recv_elem)) {
          return invalid(overload1("sum", Type::kList) + " (a list of numbers)", id.pos);
        }
        n->type = recv_elem;
        break;
      case Fn::kMin:
      case Fn::kMax:
      case Fn::kIsSorted:
      case Fn::kSort:
        if (!orderable(recv_elem)) {
          return invalid(overload1(def.name, Type::kList) + " (elements without an order)", id.pos);
        }
        if (def.fn == Fn::kMin || def.fn == Fn::kMax) n->type = recv_elem;
        if (def.fn == Fn::kSort) n->elem = recv_elem;
        break;
      case Fn::kSlice:
      case Fn::kDistinct:
      case Fn::kReverse:
        n->elem = recv_elem;
        break;
      case Fn::kJoin:
        if (known(recv_elem) && recv_elem != Type::kString) {
          return invalid(overload1("join", Type::kList) + " (a list of strings)", id.pos);
        }
        break;
      case Fn::kIndexOf:
      case Fn::kLastIndexOf:
        if (types[0] == Type::kList && !unify(SType{recv_elem}, stype(*list[1]))) {
          return invalid(overload(def.name, Type::kList, types[1]), id.pos);
        }
        break;
      case Fn::kSetsContains:
      case Fn::kSetsEquivalent:
      case Fn::kSetsIntersects:
        if (!unify(SType{list[0]->elem}, SType{list[1]->elem})) {
          return invalid(
              overload(def.name, Type::kList, Type::kList) + " (lists of different element types)",
              id.pos);
        }
        break;
      case Fn::kMatches:
      case Fn::kFind:
      case Fn::kFindAll: {
        // ValidateRegexLiterals: a literal pattern must compile.
        if (def.fn == Fn::kFindAll) n->elem = Type::kString;
        const Node& pattern = *list[1];
        if (pattern.op == Op::kConst && pattern.constant.type == Type::kString) {
          std::string error;
          n->regex = compile_regex(pattern.constant.s, &error);
          if (!n->regex)
            return invalid("invalid " + std::string(def.name) + " argument", pattern.pos);
        }
        break;
      }
      default:
        break;
    }
    for (auto& k : list) n->kids.push_back(std::move(k));
    fold(*n);
    if (auto folded = fold_conversion(*n); !folded) return folded.error();
    return finish(std::move(n));
  }

  // cel-go computes a conversion (int(), uint(), double(), string(), bool(), dyn()) of a literal
  // when it builds the program, so a bad one is an error before any device is seen.
  static Result<bool, PErr> fold_conversion(Node& n) {
    const bool conversion = n.fn == Fn::kToInt || n.fn == Fn::kToUint || n.fn == Fn::kToDouble ||
                            n.fn == Fn::kToString || n.fn == Fn::kToBool || n.fn == Fn::kDyn;
    if (n.op != Op::kCall || !conversion || n.kids.size() != 1) return false;
    const Node& arg = *n.kids[0];
    if (arg.op != Op::kConst || arg.constant_is_error || arg.constant.type == Type::kList) {
      return false;
    }
    static const NoDevice none;
    auto v = evaluate(n, none);
    if (!v) return invalid("program instantiation failed: " + v.error().message, n.pos);
    n.constant = std::move(v).value();
    n.op = Op::kConst;  // the kids stay: the constant may be a view into a literal among them
    return true;
  }

  PR function(const Token& id, std::string_view name) {
    const FnDef* def = find_function(name, false);
    if (!def) return unsupported("function '" + std::string(name) + "'", id.pos);
    auto a = args();
    if (!a) return a.error();
    return call(*def, std::move(a).value(), id);
  }

  // quantity(), semver(), isQuantity() and isSemver() of a literal are computed once; a bad
  // literal stays a run-time error, as in Kubernetes.
  static void fold(Node& n) {
    if (n.kids.size() != 1) return;
    const Node& arg = *n.kids[0];
    if (arg.op != Op::kConst || arg.constant.type != Type::kString) return;
    const std::string_view s = arg.constant.s;
    switch (n.fn) {
      case Fn::kQuantity: {
        auto q = model::Quantity::parse(s);
        if (q) {
          n.constant.type = Type::kQuantity;
          n.constant.q = *q;
          n.constant.q_dec = quantity_is_decimal(s, &n.constant.q_scale);
        } else {
          n.constant_is_error = true;
          n.constant_error = q.error().message;
        }
        break;
      }
      case Fn::kSemver: {
        auto v = parse_semver(s);
        if (v) {
          n.semver_storage = std::move(v).value();
          n.constant.type = Type::kSemver;
          n.constant.semver = &n.semver_storage;
        } else {
          n.constant_is_error = true;
          n.constant_error = v.error().message;
        }
        break;
      }
      case Fn::kIsQuantity:
        n.constant = Value::of_bool(model::Quantity::parse(s).ok());
        break;
      case Fn::kIsSemver:
        n.constant = Value::of_bool(parse_semver(s).ok());
        break;
      default:
        return;
    }
    n.op = Op::kConst;
  }

  PR primary() {
    Token& t = take();
    switch (t.kind) {
      case Tok::kMinus: {
        // A minus sign directly before a number is part of the literal (CEL's grammar).
        if (peek().kind == Tok::kDouble) return double_literal(take(), true, t.pos);
        return int_literal(take(), true, t.pos);
      }
      case Tok::kInt:
        return int_literal(t, false, t.pos);
      case Tok::kUint:
        return uint_literal(t);
      case Tok::kDouble:
        return double_literal(t, false, t.pos);
      case Tok::kString: {
        auto n = node(Op::kConst, Type::kString, t.pos);
        n->name = std::move(t.text_value);
        n->constant = Value::of_string(n->name);
        return n;
      }
      case Tok::kLParen: {
        auto e = expr();
        if (!e) return e;
        if (auto close = expect(Tok::kRParen); !close) return close.error();
        return e;
      }
      case Tok::kLBracket:
        return list(t.pos);
      case Tok::kLBrace:
        return map(t.pos);
      case Tok::kDot:
        return unsupported("a leading '.' (qualified names)", t.pos);
      case Tok::kIdent:
        return identifier(t);
      default:
        return unexpected(t);
    }
  }

  PR int_literal(const Token& num, bool negative, size_t pos) {
    const uint64_t limit = static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0);
    if (num.int_overflow || num.int_value > limit) {
      return invalid("int literal out of range", pos);
    }
    auto n = node(Op::kConst, Type::kInt, pos);
    n->constant = Value::of_int(negative ? static_cast<int64_t>(0 - num.int_value)
                                         : static_cast<int64_t>(num.int_value));
    return n;
  }

  PR uint_literal(const Token& num) {
    std::string digits(num.text.substr(0, num.text.size() - 1));
    const bool hex =
        digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(digits.c_str() + (hex ? 2 : 0), &end, hex ? 16 : 10);
    if (errno == ERANGE || end == nullptr || *end != '\0') {
      return invalid("uint literal out of range", num.pos);
    }
    auto n = node(Op::kConst, Type::kUint, num.pos);
    n->constant = Value::of_uint(v);
    return n;
  }

  PR double_literal(const Token& num, bool negative, size_t pos) {
    std::string text(num.text);
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end == nullptr || *end != '\0') return invalid("invalid double literal", pos);
    auto n = node(Op::kConst, Type::kDouble, pos);
    n->constant = Value::of_double(negative ? -v : v);
    return n;
  }

  PR list(size_t pos) {
    auto n = node(Op::kList, Type::kList, pos);
    while (!accept(Tok::kRBracket)) {
      if (peek().kind == Tok::kQuestion)
        return unsupported("optional list element '?'", peek().pos);
      auto e = expr();
      if (!e) return e;
      n->kids.push_back(std::move(e).value());
      if (accept(Tok::kRBracket)) break;
      if (auto comma = expect(Tok::kComma); !comma) return comma.error();
    }
    // HomogeneousAggregateLiterals (cel-go's AST validator): every element has the first
    // element's type exactly; an attribute value (dyn) mixes with nothing else.
    bool constant = true;
    bool first = true;
    Type inner = Type::kDyn;
    for (const auto& k : n->kids) {
      const Type t = k->type;
      if (t == Type::kDevice) return unsupported("a list of `device`", k->pos);
      if (first) {
        n->elem = t;
        inner = k->elem;
        first = false;
      } else if (n->elem != t || ((t == Type::kList || t == Type::kMap) && k->elem != inner)) {
        return invalid("list elements must all have the same type (expected " +
                           std::string(type_name(n->elem)) + ", found " +
                           std::string(type_name(t)) + ")",
                       k->pos);
      }
      if (k->op != Op::kConst || k->constant_is_error) constant = false;
    }
    if (constant) {
      for (const auto& k : n->kids) n->list_storage.push_back(k->constant);
      n->op = Op::kConst;
      n->constant.type = Type::kList;
      n->constant.list = &n->list_storage;
    }
    return finish(std::move(n));
  }

  PR map(size_t pos) {
    auto n = node(Op::kMap, Type::kMap, pos);
    while (!accept(Tok::kRBrace)) {
      if (peek().kind == Tok::kQuestion) return unsupported("optional map entry '?'", peek().pos);
      auto k = expr();
      if (!k) return k;
      if (auto colon = expect(Tok::kColon); !colon) return colon.error();
      auto v = expr();
      if (!v) return v;
      const Type kt = (*k)->type;
      if (kt != Type::kInt && kt != Type::kUint && kt != Type::kString && kt != Type::kBool &&
          kt != Type::kDyn) {
        return invalid("unsupported map key type: " + std::string(type_name(kt)), (*k)->pos);
      }
      n->kids.push_back(std::move(k).value());
      n->kids.push_back(std::move(v).value());
      if (accept(Tok::kRBrace)) break;
      if (auto comma = expect(Tok::kComma); !comma) return comma.error();
    }
    for (size_t i = 0; i < n->kids.size(); i += 2) {
      const Type kt = n->kids[i]->type, vt = n->kids[i + 1]->type;
      if (vt == Type::kDevice) return unsupported("a map of `device`", n->kids[i + 1]->pos);
      if (i == 0) {
        n->key = kt;
        n->elem = vt;
      } else if (n->key != kt || n->elem != vt) {
        const bool key = n->key != kt;
        return invalid("map " + std::string(key ? "keys" : "values") +
                           " must all have the same type (expected " +
                           std::string(type_name(key ? n->key : n->elem)) + ", found " +
                           std::string(type_name(key ? kt : vt)) + ")",
                       n->kids[key ? i : i + 1]->pos);
      }
    }
    return finish(std::move(n));
  }

  PR identifier(Token& t) {
    const std::string_view id = t.text;
    if (id == "true" || id == "false") {
      auto n = node(Op::kConst, Type::kBool, t.pos);
      n->constant = Value::of_bool(id == "true");
      return n;
    }
    if (id == "null") {
      auto n = node(Op::kConst, Type::kNull, t.pos);
      n->constant.type = Type::kNull;
      return n;
    }
    if (is_reserved(id)) return invalid("reserved identifier '" + std::string(id) + "'", t.pos);
    if (id == "has" && peek().kind == Tok::kLParen) return has(t);
    if (peek().kind == Tok::kLParen) return function(t, id);
    // Bound variables shadow `device`.
    for (size_t k = scopes_.size(); k-- > 0;) {
      if (scopes_[k].first == id) {
        auto n = node(Op::kVar, Type::kDyn, t.pos);
        set_stype(*n, scopes_[k].second);
        n->slot = static_cast<int>(scopes_.size() - 1 - k);
        n->name = std::string(id);
        return n;
      }
    }
    if (id == "device") return node(Op::kDevice, Type::kDevice, t.pos);
    if (peek().kind == Tok::kDot && peek(1).kind == Tok::kIdent) {
      if (id == "cel" && peek(1).text == "bind" && peek(2).kind == Tok::kLParen) {
        take();
        take();
        return bind(t.pos);
      }
      if (peek(2).kind == Tok::kLParen) {
        take();
        const std::string name = std::string(id) + "." + std::string(take().text);
        return function(t, name);
      }
    }
    return invalid("undeclared reference to '" + std::string(id) + "'", t.pos);
  }

  PR has(const Token& id) {
    take();  // (
    auto arg = expr();
    if (!arg) return arg;
    if (auto close = expect(Tok::kRParen); !close) return close.error();
    NodeP a = std::move(arg).value();
    if (a->op != Op::kSelect) {
      return invalid("invalid argument to has() macro (it takes a field selection, x.f)", a->pos);
    }
    auto n = node(Op::kHas, Type::kBool, id.pos);
    n->name = std::move(a->name);
    n->kids.push_back(std::move(a->kids[0]));
    return finish(std::move(n));
  }

  PR bind(size_t pos) {
    take();  // (
    auto name = expect(Tok::kIdent);
    if (!name) return name.error();
    const Token& var = **name;
    if (is_reserved(var.text)) {
      return invalid("reserved identifier '" + std::string(var.text) + "'", var.pos);
    }
    if (auto comma = expect(Tok::kComma); !comma) return comma.error();
    auto init = expr();
    if (!init) return init;
    if (auto comma = expect(Tok::kComma); !comma) return comma.error();
    scopes_.push_back({var.text, stype(**init)});
    auto body = expr();
    scopes_.pop_back();
    if (!body) return body;
    if (auto close = expect(Tok::kRParen); !close) return close.error();
    auto n = node(Op::kBind, Type::kDyn, pos);
    set_stype(*n, stype(**body));
    n->name = std::string(var.text);
    n->kids.push_back(std::move(init).value());
    n->kids.push_back(std::move(body).value());
    return finish(std::move(n));
  }

  std::vector<Token> toks_;
  size_t idx_ = 0;
  int nesting_ = 0;
  // cel.bind and comprehension variables in scope, innermost last: name, static type.
  std::vector<std::pair<std::string_view, SType>> scopes_;
};

// The expression as error messages quote it: Go-quoted, cut at 200 bytes on a rune boundary.
std::string quoted_expression(std::string_view expr) {
  constexpr size_t kShown = 200;
  if (expr.size() <= kShown) return go::quote(expr);
  size_t cut = kShown;
  while (cut > 0 && (static_cast<unsigned char>(expr[cut]) & 0xC0) == 0x80) --cut;
  return go::quote(expr.substr(0, cut)) + "...";
}

std::string where(std::string_view expr, size_t pos) {
  size_t line = 1, col = 1;
  pos = std::min(pos, expr.size());
  for (size_t i = 0; i < pos;) {
    if (expr[i] == '\n') {
      ++line;
      col = 1;
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = go::decode_utf8_rune(expr, i, &cp);
    i += n ? n : 1;
    ++col;
  }
  const bool multiline = expr.find('\n') != std::string_view::npos;
  return multiline ? "line " + std::to_string(line) + ", column " + std::to_string(col)
                   : "column " + std::to_string(col);
}

std::string compile_error(std::string_view expr, std::string_view what, size_t pos,
                          bool unsupported_construct) {
  std::string msg = "CEL expression " + quoted_expression(expr) + ": " + std::string(what) +
                    " at " + where(expr, pos);
  if (unsupported_construct) msg += " is not supported by hamisim (docs/cel.md lists what is)";
  return msg;
}

}  // namespace

Result<std::unique_ptr<Node>> parse(std::string_view expression) {
  if (expression.size() > Selector::kMaxExpressionLength) {
    return make_error("CEL expression " + quoted_expression(expression) + ": " +
                      std::to_string(expression.size()) + " bytes long, more than the limit of " +
                      std::to_string(Selector::kMaxExpressionLength));
  }
  auto toks = lex(expression);
  if (!toks)
    return make_error(compile_error(expression, toks.error().what, toks.error().pos, false));
  Parser p(std::move(toks).value());
  auto root = p.run();
  if (!root) {
    return make_error(
        compile_error(expression, root.error().what, root.error().pos, root.error().unsupported));
  }
  return std::move(root).value();
}

}  // namespace hamisim::cel::detail
