#pragma once
// CEL's lexical grammar (cel-spec langdef.md): identifiers, int literals, string literals with
// their escapes (quoted, triple-quoted, raw), operators, comments. Tokens outside the subset
// (doubles, uints, bytes) are recognised so that the error can name them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.h"

namespace hamisim::cel::detail {

enum class Tok {
  kEnd,
  kIdent,
  kInt,     // digits; the value is checked by the parser (it may carry a sign)
  kString,  // decoded into `text_value`
  kDouble,
  kUint,
  kBytes,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kDot,
  kComma,
  kQuestion,
  kColon,
  kNot,
  kAnd,
  kOr,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kDotQuestion,      // ".?" (optional field selection)
  kLBracketQuestion  // "[?" (optional index)
};

struct Token {
  Tok kind = Tok::kEnd;
  size_t pos = 0;          // byte offset in the expression
  std::string_view text;   // the token as written
  std::string text_value;  // kString: the decoded value
  // kInt: the magnitude (the literal without sign); `int_overflow` if above 2^63.
  uint64_t int_value = 0;
  bool int_overflow = false;
};

// A lexical error: what and where (byte offset).
struct LexError {
  std::string what;
  size_t pos = 0;
};

// Splits `expr` into tokens ending with kEnd. The expression must be valid UTF-8.
Result<std::vector<Token>, LexError> lex(std::string_view expr);

std::string_view token_name(Tok kind);

}  // namespace hamisim::cel::detail
