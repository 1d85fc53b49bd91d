// Recursive-descent parser for CEL's grammar (cel-spec langdef.md, precedence from lowest:
// ?:, ||, &&, relations and `in`, arithmetic, unary ! and -, member access), type-checking
// each node as it is built so that errors carry the column of the construct at fault.
#include <algorithm>
#include <array>
#include <cstdint>
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
    case Type::kString:
      return "string";
    case Type::kQuantity:
      return "Quantity";
    case Type::kSemver:
      return "Semver";
    case Type::kList:
      return "list";
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
      case Tok::kDouble:
        return unsupported("double literal " + std::string(t.text), t.pos);
      case Tok::kUint:
        return unsupported("uint literal " + std::string(t.text), t.pos);
      case Tok::kBytes:
        return unsupported("bytes literal", t.pos);
      case Tok::kPlus:
      case Tok::kMinus:
      case Tok::kStar:
      case Tok::kSlash:
      case Tok::kPercent:
        return unsupported("arithmetic operator " + std::string(token_name(t.kind)), t.pos);
      case Tok::kLBrace:
        return unsupported("map literal '{'", t.pos);
      case Tok::kDotQuestion:
        return unsupported("optional field selection '.?'", t.pos);
      case Tok::kLBracketQuestion:
        return unsupported("optional index '[?'", t.pos);
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
    Type ct = (*c)->type, tt = (*t)->type, ft = (*f)->type;
    if (ct != Type::kBool && ct != Type::kDyn) {
      return invalid("the condition of '?:' must be bool, not " + std::string(type_name(ct)),
                     (*c)->pos);
    }
    if (known(tt) && known(ft) && tt != ft) {
      return invalid("the branches of '?:' have different types (" + std::string(type_name(tt)) +
                         " and " + std::string(type_name(ft)) + ")",
                     pos);
    }
    if (tt == Type::kList || ft == Type::kList) {
      return unsupported("a list as the value of '?:'", pos);
    }
    auto n = node(Op::kCond, tt == ft ? tt : Type::kDyn, pos);
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
    auto lhs = operand();
    if (!lhs) return lhs;
    while (true) {
      const Token& t = peek();
      if (t.kind == Tok::kIdent && t.text != "in") break;
      if (!is_relop(t.kind)) break;
      const Tok k = t.kind;
      const size_t pos = take().pos;
      auto rhs = operand();
      if (!rhs) return rhs;
      auto n = relational(k, pos, std::move(lhs).value(), std::move(rhs).value());
      if (!n) return n;
      lhs = std::move(n);
    }
    return lhs;
  }

  // A unary expression; arithmetic after it is refused here, where its column is known.
  PR operand() {
    auto u = unary();
    if (!u) return u;
    switch (peek().kind) {
      case Tok::kPlus:
      case Tok::kMinus:
      case Tok::kStar:
      case Tok::kSlash:
      case Tok::kPercent:
      case Tok::kDouble:
        return unexpected(peek());
      default:
        return u;
    }
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
      if (is_map(l) || is_map(r) || l == Type::kDevice || r == Type::kDevice) {
        return unsupported("comparing maps or `device` with " + std::string(token_name(k)), pos);
      }
      if (l == Type::kList || r == Type::kList) {
        return unsupported("comparing lists with " + std::string(token_name(k)), pos);
      }
      if (known(l) && known(r) && l != r) return invalid(overload(name, l, r), pos);
    } else if (op == Op::kIn) {
      if (r == Type::kList) {
        if (is_map(l) || l == Type::kDevice || l == Type::kList) {
          return unsupported("'in' with a list or map on its left", pos);
        }
        if (known(l) && known(rhs->elem) && l != rhs->elem) {
          return invalid("found no matching overload for '@in' applied to '(" +
                             std::string(type_name(l)) + ", list(" +
                             std::string(type_name(rhs->elem)) + "))'",
                         pos);
        }
      } else if (r == Type::kAttrDomain || r == Type::kCapDomain) {
        if (l != Type::kString && l != Type::kDyn) return invalid(overload(name, l, r), pos);
      } else if (r == Type::kAttrRoot || r == Type::kCapRoot) {
        return unsupported("'in' on device.attributes or device.capacity (test a domain's keys)",
                           pos);
      } else if (r != Type::kDyn) {
        return invalid(overload(name, l, r), pos);
      }
    } else {
      auto ordered = [](Type t) {
        return t == Type::kDyn || t == Type::kInt || t == Type::kString || t == Type::kBool;
      };
      if (!ordered(l) || !ordered(r) || (known(l) && known(r) && l != r)) {
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
    if (t.kind == Tok::kMinus && peek(1).kind != Tok::kInt) {
      return unsupported("arithmetic negation '-'", t.pos);
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
      } else if (t.kind == Tok::kDotQuestion || t.kind == Tok::kLBracketQuestion ||
                 t.kind == Tok::kLBrace) {
        if (t.kind == Tok::kLBrace) return unsupported("message construction '{'", t.pos);
        return unexpected(t);
      } else {
        return cur;
      }
    }
  }

  PR select(NodeP operand, const Token& id) {
    const Type t = operand->type;
    const std::string_view f = id.text;
    if (is_reserved(f)) return invalid("reserved identifier '" + std::string(f) + "'", id.pos);
    Type result = Type::kDyn;
    switch (t) {
      case Type::kDevice:
        if (f == "driver") {
          result = Type::kString;
        } else if (f == "allowMultipleAllocations") {
          result = Type::kBool;
        } else if (f == "attributes") {
          result = Type::kAttrRoot;
        } else if (f == "capacity") {
          result = Type::kCapRoot;
        } else {
          return invalid("undefined field '" + std::string(f) + "' of device", id.pos);
        }
        break;
      case Type::kAttrRoot:
        result = Type::kAttrDomain;
        break;
      case Type::kCapRoot:
        result = Type::kCapDomain;
        break;
      case Type::kAttrDomain:
        result = Type::kDyn;
        break;
      case Type::kCapDomain:
        result = Type::kQuantity;
        break;
      case Type::kDyn:
        result = Type::kDyn;
        break;
      default:
        return invalid("type '" + std::string(type_name(t)) + "' does not support field selection",
                       id.pos);
    }
    auto n = node(Op::kSelect, result, id.pos);
    n->name = std::string(f);
    n->kids.push_back(std::move(operand));
    return finish(std::move(n));
  }

  PR index(NodeP operand, NodeP key, size_t pos) {
    const Type t = operand->type;
    Type result = Type::kDyn;
    switch (t) {
      case Type::kAttrRoot:
        result = Type::kAttrDomain;
        break;
      case Type::kCapRoot:
        result = Type::kCapDomain;
        break;
      case Type::kAttrDomain:
        result = Type::kDyn;
        break;
      case Type::kCapDomain:
        result = Type::kQuantity;
        break;
      case Type::kDyn:
        result = Type::kDyn;
        break;
      case Type::kList:
        return unsupported("indexing a list", pos);
      default:
        return invalid("type '" + std::string(type_name(t)) + "' does not support indexing", pos);
    }
    if (key->type != Type::kString && key->type != Type::kDyn) {
      return invalid(overload("_[_]", t, key->type) + " (map keys are strings)", key->pos);
    }
    auto n = node(Op::kIndex, result, pos);
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

  static bool is_macro(std::string_view m) {
    return m == "all" || m == "exists" || m == "exists_one" || m == "map" || m == "filter" ||
           m == "transformList" || m == "transformMap" || m == "transformMapEntry" ||
           m == "sortBy" || m == "optMap" || m == "optFlatMap";
  }

  PR method(NodeP target, const Token& id) {
    const std::string_view m = id.text;
    if (is_macro(m)) return unsupported("macro '" + std::string(m) + "'", id.pos);
    if (m == "matches") {
      return unsupported("'matches' (RE2 regular expressions)", id.pos);
    }
    Fn fn;
    size_t arity = 0;
    Type result = Type::kBool;
    if (m == "size") {
      fn = Fn::kSize, arity = 0, result = Type::kInt;
    } else if (m == "startsWith") {
      fn = Fn::kStartsWith, arity = 1;
    } else if (m == "endsWith") {
      fn = Fn::kEndsWith, arity = 1;
    } else if (m == "contains") {
      fn = Fn::kContains, arity = 1;
    } else if (m == "compareTo") {
      fn = Fn::kCompareTo, arity = 1, result = Type::kInt;
    } else if (m == "isGreaterThan") {
      fn = Fn::kIsGreaterThan, arity = 1;
    } else if (m == "isLessThan") {
      fn = Fn::kIsLessThan, arity = 1;
    } else if (m == "major") {
      fn = Fn::kMajor, arity = 0, result = Type::kInt;
    } else if (m == "minor") {
      fn = Fn::kMinor, arity = 0, result = Type::kInt;
    } else if (m == "patch") {
      fn = Fn::kPatch, arity = 0, result = Type::kInt;
    } else {
      return unsupported("method '" + std::string(m) + "'", id.pos);
    }
    auto a = args();
    if (!a) return a.error();
    std::vector<NodeP> list = std::move(a).value();
    if (list.size() != arity) {
      return invalid("'" + std::string(m) + "' takes " + std::to_string(arity) +
                         (arity == 1 ? " argument" : " arguments") + ", not " +
                         std::to_string(list.size()),
                     id.pos);
    }
    const Type t = target->type;
    const Type a0 = arity ? list[0]->type : Type::kDyn;
    auto bad = [&]() -> PErr {
      return invalid(arity ? overload(m, t, a0) : overload1(m, t), id.pos);
    };
    switch (fn) {
      case Fn::kSize:
        if (is_map(t)) return unsupported("size() of a map", id.pos);
        if (t != Type::kString && t != Type::kList && t != Type::kDyn) return bad();
        break;
      case Fn::kStartsWith:
      case Fn::kEndsWith:
      case Fn::kContains:
        if ((t != Type::kString && t != Type::kDyn) || (a0 != Type::kString && a0 != Type::kDyn)) {
          return bad();
        }
        break;
      case Fn::kCompareTo:
      case Fn::kIsGreaterThan:
      case Fn::kIsLessThan: {
        auto comparable = [](Type x) {
          return x == Type::kQuantity || x == Type::kSemver || x == Type::kDyn;
        };
        if (!comparable(t) || !comparable(a0) || (known(t) && known(a0) && t != a0)) return bad();
        break;
      }
      default:  // major, minor, patch
        if (t != Type::kSemver && t != Type::kDyn) return bad();
        break;
    }
    auto n = node(Op::kCall, result, id.pos);
    n->fn = fn;
    n->kids.push_back(std::move(target));
    for (auto& k : list) n->kids.push_back(std::move(k));
    return finish(std::move(n));
  }

  PR function(const Token& id) {
    const std::string_view f = id.text;
    Fn fn;
    Type result = Type::kBool;
    if (f == "size") {
      fn = Fn::kSize, result = Type::kInt;
    } else if (f == "quantity") {
      fn = Fn::kQuantity, result = Type::kQuantity;
    } else if (f == "semver") {
      fn = Fn::kSemver, result = Type::kSemver;
    } else if (f == "isQuantity") {
      fn = Fn::kIsQuantity;
    } else if (f == "isSemver") {
      fn = Fn::kIsSemver;
    } else if (f == "matches") {
      return unsupported("'matches' (RE2 regular expressions)", id.pos);
    } else {
      return unsupported("function '" + std::string(f) + "'", id.pos);
    }
    auto a = args();
    if (!a) return a.error();
    std::vector<NodeP> list = std::move(a).value();
    if ((fn == Fn::kSemver || fn == Fn::kIsSemver) && list.size() == 2) {
      return unsupported("'" + std::string(f) + "' with a normalize argument", id.pos);
    }
    if (list.size() != 1) {
      return invalid(
          "'" + std::string(f) + "' takes 1 argument, not " + std::to_string(list.size()), id.pos);
    }
    const Type t = list[0]->type;
    if (fn == Fn::kSize) {
      if (is_map(t)) return unsupported("size() of a map", id.pos);
      if (t != Type::kString && t != Type::kList && t != Type::kDyn) {
        return invalid(overload1(f, t), id.pos);
      }
    } else if (t != Type::kString && t != Type::kDyn) {
      return invalid(overload1(f, t), id.pos);
    }
    auto n = node(Op::kCall, result, id.pos);
    n->fn = fn;
    n->kids.push_back(std::move(list[0]));
    fold(*n);
    return finish(std::move(n));
  }

  // quantity(), semver(), isQuantity() and isSemver() of a literal are computed once; a bad
  // literal stays a run-time error, as in Kubernetes.
  static void fold(Node& n) {
    const Node& arg = *n.kids[0];
    if (arg.op != Op::kConst || arg.constant.type != Type::kString) return;
    const std::string_view s = arg.constant.s;
    switch (n.fn) {
      case Fn::kQuantity: {
        auto q = model::Quantity::parse(s);
        if (q) {
          n.constant.type = Type::kQuantity;
          n.constant.q = *q;
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
        // A minus sign directly before an int literal is part of the literal (CEL's grammar);
        // anything else would be arithmetic.
        if (peek().kind != Tok::kInt) return unsupported("arithmetic negation '-'", t.pos);
        return int_literal(take(), true, t.pos);
      }
      case Tok::kInt:
        return int_literal(t, false, t.pos);
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

  PR list(size_t pos) {
    auto n = node(Op::kList, Type::kList, pos);
    while (!accept(Tok::kRBracket)) {
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
    for (const auto& k : n->kids) {
      const Type t = k->type;
      if (t == Type::kList || is_map(t) || t == Type::kDevice) {
        return unsupported("a list of lists or maps", k->pos);
      }
      if (first) {
        n->elem = t;
        first = false;
      } else if (n->elem != t) {
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

  PR identifier(Token& t) {
    const std::string_view id = t.text;
    if (id == "true" || id == "false") {
      auto n = node(Op::kConst, Type::kBool, t.pos);
      n->constant = Value::of_bool(id == "true");
      return n;
    }
    if (id == "null") return unsupported("null", t.pos);
    if (is_reserved(id)) return invalid("reserved identifier '" + std::string(id) + "'", t.pos);
    if (id == "has" && peek().kind == Tok::kLParen) return has(t);
    if (peek().kind == Tok::kLParen) return function(t);
    // Bound variables shadow `device`.
    for (size_t k = scopes_.size(); k-- > 0;) {
      if (scopes_[k].first == id) {
        auto n = node(Op::kVar, scopes_[k].second.first, t.pos);
        n->elem = scopes_[k].second.second;
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
        return unsupported("function '" + std::string(id) + "." + std::string(peek(1).text) + "'",
                           t.pos);
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
    const Type t = a->kids[0]->type;
    if (t != Type::kAttrDomain && t != Type::kCapDomain) {
      return unsupported(
          "has() on anything but device.attributes[<domain>].<name> or "
          "device.capacity[<domain>].<name>",
          id.pos);
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
    scopes_.push_back({var.text, {(*init)->type, (*init)->elem}});
    auto body = expr();
    scopes_.pop_back();
    if (!body) return body;
    if (auto close = expect(Tok::kRParen); !close) return close.error();
    auto n = node(Op::kBind, (*body)->type, pos);
    n->elem = (*body)->elem;
    n->name = std::string(var.text);
    n->kids.push_back(std::move(init).value());
    n->kids.push_back(std::move(body).value());
    return finish(std::move(n));
  }

  std::vector<Token> toks_;
  size_t idx_ = 0;
  int nesting_ = 0;
  // cel.bind variables in scope, innermost last: name, (type, element type).
  std::vector<std::pair<std::string_view, std::pair<Type, Type>>> scopes_;
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
