#include "cel/lexer.h"

#include "go/utf8.h"

namespace hamisim::cel::detail {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}
bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c);
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  Result<std::vector<Token>, LexError> run() {
    for (size_t i = 0; i < s_.size();) {
      uint32_t cp = 0;
      size_t n = go::decode_utf8_rune(s_, i, &cp);
      if (n == 0) return LexError{"invalid UTF-8", i};
      i += n;
    }
    std::vector<Token> out;
    while (true) {
      skip_space();
      Token t;
      t.pos = i_;
      if (i_ >= s_.size()) {
        t.kind = Tok::kEnd;
        out.push_back(std::move(t));
        return out;
      }
      if (auto err = next(t)) return *err;
      t.text = s_.substr(t.pos, i_ - t.pos);
      out.push_back(std::move(t));
    }
  }

 private:
  char at(size_t k) const { return k < s_.size() ? s_[k] : '\0'; }

  void skip_space() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++i_;
      } else if (c == '/' && at(i_ + 1) == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }

  std::optional<LexError> next(Token& t) {
    const char c = s_[i_];
    if (is_digit(c) || (c == '.' && is_digit(at(i_ + 1)))) return number(t);
    if (is_ident_start(c)) {
      // String prefixes: r (raw), b (bytes), in either order and case.
      size_t k = i_;
      bool raw = false, bytes = false;
      for (int n = 0; n < 2 && (at(k) == 'r' || at(k) == 'R' || at(k) == 'b' || at(k) == 'B');
           ++n, ++k) {
        if (at(k) == 'r' || at(k) == 'R') {
          if (raw) break;
          raw = true;
        } else {
          if (bytes) break;
          bytes = true;
        }
      }
      if (k > i_ && (at(k) == '"' || at(k) == '\'')) {
        i_ = k;
        if (auto err = string(t, raw)) return err;
        if (bytes) t.kind = Tok::kBytes;
        return std::nullopt;
      }
      while (i_ < s_.size() && is_ident_char(s_[i_])) ++i_;
      t.kind = Tok::kIdent;
      return std::nullopt;
    }
    if (c == '"' || c == '\'') return string(t, false);
    ++i_;
    switch (c) {
      case '(':
        t.kind = Tok::kLParen;
        return std::nullopt;
      case ')':
        t.kind = Tok::kRParen;
        return std::nullopt;
      case '[':
        if (at(i_) == '?') {
          ++i_;
          t.kind = Tok::kLBracketQuestion;
        } else {
          t.kind = Tok::kLBracket;
        }
        return std::nullopt;
      case ']':
        t.kind = Tok::kRBracket;
        return std::nullopt;
      case '{':
        t.kind = Tok::kLBrace;
        return std::nullopt;
      case '}':
        t.kind = Tok::kRBrace;
        return std::nullopt;
      case '.':
        if (at(i_) == '?') {
          ++i_;
          t.kind = Tok::kDotQuestion;
        } else {
          t.kind = Tok::kDot;
        }
        return std::nullopt;
      case ',':
        t.kind = Tok::kComma;
        return std::nullopt;
      case '?':
        t.kind = Tok::kQuestion;
        return std::nullopt;
      case ':':
        t.kind = Tok::kColon;
        return std::nullopt;
      case '+':
        t.kind = Tok::kPlus;
        return std::nullopt;
      case '-':
        t.kind = Tok::kMinus;
        return std::nullopt;
      case '*':
        t.kind = Tok::kStar;
        return std::nullopt;
      case '/':
        t.kind = Tok::kSlash;
        return std::nullopt;
      case '%':
        t.kind = Tok::kPercent;
        return std::nullopt;
      case '!':
        if (at(i_) == '=') {
          ++i_;
          t.kind = Tok::kNe;
        } else {
          t.kind = Tok::kNot;
        }
        return std::nullopt;
      case '=':
        if (at(i_) == '=') {
          ++i_;
          t.kind = Tok::kEq;
          return std::nullopt;
        }
        return LexError{"'=' (CEL compares with '==')", t.pos};
      case '<':
        if (at(i_) == '=') {
          ++i_;
          t.kind = Tok::kLe;
        } else {
          t.kind = Tok::kLt;
        }
        return std::nullopt;
      case '>':
        if (at(i_) == '=') {
          ++i_;
          t.kind = Tok::kGe;
        } else {
          t.kind = Tok::kGt;
        }
        return std::nullopt;
      case '&':
        if (at(i_) == '&') {
          ++i_;
          t.kind = Tok::kAnd;
          return std::nullopt;
        }
        return LexError{"'&' (CEL's logical and is '&&')", t.pos};
      case '|':
        if (at(i_) == '|') {
          ++i_;
          t.kind = Tok::kOr;
          return std::nullopt;
        }
        return LexError{"'|' (CEL's logical or is '||')", t.pos};
      default:
        break;
    }
    uint32_t cp = 0;
    const size_t n = go::decode_utf8_rune(s_, t.pos, &cp);
    return LexError{"unexpected character '" + std::string(s_.substr(t.pos, n ? n : 1)) + "'",
                    t.pos};
  }

  std::optional<LexError> number(Token& t) {
    bool is_float = false;
    if (s_[i_] == '0' && (at(i_ + 1) == 'x' || at(i_ + 1) == 'X') && is_hex(at(i_ + 2))) {
      i_ += 2;
      while (i_ < s_.size() && is_hex(s_[i_])) {
        accumulate(t, 16, hex_value(s_[i_]));
        ++i_;
      }
    } else {
      while (i_ < s_.size() && is_digit(s_[i_])) {
        accumulate(t, 10, s_[i_] - '0');
        ++i_;
      }
      if (at(i_) == '.' && is_digit(at(i_ + 1))) {
        is_float = true;
        ++i_;
        while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
      }
      if (at(i_) == 'e' || at(i_) == 'E') {
        size_t k = i_ + 1;
        if (at(k) == '+' || at(k) == '-') ++k;
        if (is_digit(at(k))) {
          is_float = true;
          i_ = k;
          while (i_ < s_.size() && is_digit(s_[i_])) ++i_;
        }
      }
    }
    if (is_float) {
      t.kind = Tok::kDouble;
    } else if (at(i_) == 'u' || at(i_) == 'U') {
      ++i_;
      t.kind = Tok::kUint;
    } else {
      t.kind = Tok::kInt;
    }
    return std::nullopt;
  }

  static void accumulate(Token& t, unsigned base, int digit) {
    if (t.int_overflow) return;
    const unsigned __int128 v = static_cast<unsigned __int128>(t.int_value) * base + digit;
    if (v > (static_cast<unsigned __int128>(1) << 63)) {
      t.int_overflow = true;
    } else {
      t.int_value = static_cast<uint64_t>(v);
    }
  }

  std::optional<LexError> string(Token& t, bool raw) {
    t.kind = Tok::kString;
    const char q = s_[i_];
    const bool triple = at(i_ + 1) == q && at(i_ + 2) == q;
    i_ += triple ? 3 : 1;
    std::string& out = t.text_value;
    while (true) {
      if (i_ >= s_.size()) return LexError{"unterminated string literal", t.pos};
      const char c = s_[i_];
      if (c == q && (!triple || (at(i_ + 1) == q && at(i_ + 2) == q))) {
        i_ += triple ? 3 : 1;
        return std::nullopt;
      }
      if (!triple && (c == '\n' || c == '\r')) {
        return LexError{"newline in a string literal (use a triple-quoted string)", i_};
      }
      if (c != '\\' || raw) {
        // Raw strings keep backslashes as written and end at their first closing quote.
        out.push_back(c);
        ++i_;
        continue;
      }
      const size_t esc = i_;
      ++i_;
      const char e = at(i_);
      ++i_;
      switch (e) {
        case 'a':
          out.push_back('\a');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'v':
          out.push_back('\v');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '\'':
          out.push_back('\'');
          break;
        case '"':
          out.push_back('"');
          break;
        case '`':
          out.push_back('`');
          break;
        case '?':
          out.push_back('?');
          break;
        case 'x':
        case 'X':
        case 'u':
        case 'U': {
          const int digits = (e == 'x' || e == 'X') ? 2 : (e == 'u' ? 4 : 8);
          uint32_t cp = 0;
          for (int k = 0; k < digits; ++k) {
            if (!is_hex(at(i_))) return LexError{"invalid escape sequence in a string", esc};
            cp = cp * 16 + hex_value(s_[i_]);
            ++i_;
          }
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            return LexError{"invalid code point in a string escape", esc};
          }
          append_utf8(out, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '3' && at(i_) >= '0' && at(i_) <= '7' && at(i_ + 1) >= '0' &&
              at(i_ + 1) <= '7') {
            const uint32_t cp = (e - '0') * 64 + (s_[i_] - '0') * 8 + (s_[i_ + 1] - '0');
            i_ += 2;
            append_utf8(out, cp);
            break;
          }
          return LexError{"invalid escape sequence in a string", esc};
      }
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

Result<std::vector<Token>, LexError> lex(std::string_view expr) {
  return Lexer(expr).run();
}

std::string_view token_name(Tok kind) {
  switch (kind) {
    case Tok::kEnd:
      return "end of expression";
    case Tok::kIdent:
      return "identifier";
    case Tok::kInt:
      return "int literal";
    case Tok::kString:
      return "string literal";
    case Tok::kDouble:
      return "double literal";
    case Tok::kUint:
      return "uint literal";
    case Tok::kBytes:
      return "bytes literal";
    case Tok::kLParen:
      return "'('";
    case Tok::kRParen:
      return "')'";
    case Tok::kLBracket:
      return "'['";
    case Tok::kRBracket:
      return "']'";
    case Tok::kLBrace:
      return "'{'";
    case Tok::kRBrace:
      return "'}'";
    case Tok::kDot:
      return "'.'";
    case Tok::kComma:
      return "','";
    case Tok::kQuestion:
      return "'?'";
    case Tok::kColon:
      return "':'";
    case Tok::kNot:
      return "'!'";
    case Tok::kAnd:
      return "'&&'";
    case Tok::kOr:
      return "'||'";
    case Tok::kEq:
      return "'=='";
    case Tok::kNe:
      return "'!='";
    case Tok::kLt:
      return "'<'";
    case Tok::kLe:
      return "'<='";
    case Tok::kGt:
      return "'>'";
    case Tok::kGe:
      return "'>='";
    case Tok::kPlus:
      return "'+'";
    case Tok::kMinus:
      return "'-'";
    case Tok::kStar:
      return "'*'";
    case Tok::kSlash:
      return "'/'";
    case Tok::kPercent:
      return "'%'";
    case Tok::kDotQuestion:
      return "'.?'";
    case Tok::kLBracketQuestion:
      return "'[?'";
  }
  return "token";
}

}  // namespace hamisim::cel::detail
