#include "device/go_json_reader.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "go/quote.h"
#include "go/strconv.h"
#include "go/utf8.h"
#include "model/decode.h"
#include "model/simdjson_util.h"

namespace hamisim::device::gojson {
namespace {

using go::NumError;

// ---- Step 1: Go's acceptance rules (encoding/json scanner) plus string normalisation ----

constexpr size_t kGoMaxNestingDepth = 10000;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Value of the \uXXXX escape starting at s[i] ('\\'), or -1.
int32_t read_u4(std::string_view s, size_t i) {
  if (i + 6 > s.size() || s[i] != '\\' || s[i + 1] != 'u') return -1;
  int32_t v = 0;
  for (size_t k = 2; k < 6; ++k) {
    const int h = hex_value(s[i + k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

class GoJsonPreparer {
 public:
  explicit GoJsonPreparer(std::string_view in) : in_(in) { out_.reserve(in.size() + 16); }

  Result<std::string> run() {
    std::vector<char> stack;  // '[' or '{'
    skip_space();
    for (;;) {
      // Expecting a value.
      if (pos_ >= in_.size()) return fail("unexpected end of JSON input");
      const char c = in_[pos_];
      bool scalar_done = true;
      if (c == '{' || c == '[') {
        stack.push_back(c);
        if (stack.size() > kGoMaxNestingDepth) return fail("exceeded max depth");
        emit(c);
        skip_space();
        const char close = c == '{' ? '}' : ']';
        if (pos_ < in_.size() && in_[pos_] == close) {
          emit(close);
          stack.pop_back();
        } else if (c == '{') {
          if (auto st = object_key(); !st.ok()) return st.error();
          continue;
        } else {
          continue;
        }
      } else if (c == '"') {
        if (auto st = string(); !st.ok()) return st.error();
      } else if (c == '-' || is_digit(c)) {
        if (auto st = number(); !st.ok()) return st.error();
      } else if (c == 't') {
        if (auto st = literal("true"); !st.ok()) return st.error();
      } else if (c == 'f') {
        if (auto st = literal("false"); !st.ok()) return st.error();
      } else if (c == 'n') {
        if (auto st = literal("null"); !st.ok()) return st.error();
      } else {
        scalar_done = false;
      }
      if (!scalar_done) return fail_char("looking for beginning of value");
      // After a value: close containers / separators.
      for (;;) {
        skip_space();
        if (stack.empty()) {
          if (pos_ != in_.size()) return fail_char("after top-level value");
          return std::move(out_);
        }
        if (pos_ >= in_.size()) return fail("unexpected end of JSON input");
        const char d = in_[pos_];
        const char top = stack.back();
        if (d == ',') {
          emit(',');
          skip_space();
          if (top == '{') {
            if (auto st = object_key(); !st.ok()) return st.error();
          }
          break;  // a value follows
        }
        if ((top == '[' && d == ']') || (top == '{' && d == '}')) {
          emit(d);
          stack.pop_back();
          continue;
        }
        return fail_char(top == '[' ? "after array element" : "after object key:value pair");
      }
    }
  }

 private:
  void emit(char c) {
    out_ += c;
    ++pos_;
  }

  void skip_space() {
    while (pos_ < in_.size() && model::is_json_space(in_[pos_])) out_ += in_[pos_++];
  }

  Error fail(std::string_view what) const {
    return make_error("invalid JSON at offset " + std::to_string(pos_) + ": " + std::string(what));
  }
  Error fail_char(std::string_view where) const {
    if (pos_ >= in_.size()) return fail("unexpected end of JSON input");
    const auto c = static_cast<unsigned char>(in_[pos_]);
    std::string what = "invalid character ";
    if (c >= 0x20 && c < 0x7F) {
      what += '\'';
      what += static_cast<char>(c);
      what += '\'';
    } else {
      what += "0x" + std::to_string(c);
    }
    what += ' ';
    what += where;
    return fail(what);
  }

  // Key string, whitespace, ':'; leaves pos_ at the value.
  Status object_key() {
    if (pos_ >= in_.size()) return fail("unexpected end of JSON input");
    if (in_[pos_] != '"') return fail_char("looking for beginning of object key string");
    if (auto st = string(); !st.ok()) return st;
    skip_space();
    if (pos_ >= in_.size()) return fail("unexpected end of JSON input");
    if (in_[pos_] != ':') return fail_char("after object key");
    emit(':');
    skip_space();
    return ok_status();
  }

  Status literal(std::string_view word) {
    for (const char w : word) {
      if (pos_ >= in_.size()) return fail("unexpected end of JSON input");
      if (in_[pos_] != w) return fail_char("in literal");
      emit(w);
    }
    return ok_status();
  }

  Status number() {
    if (in_[pos_] == '-') {
      emit('-');
      if (pos_ >= in_.size()) return fail("unexpected end of JSON input");
      if (!is_digit(in_[pos_])) return fail_char("in numeric literal");
    }
    if (in_[pos_] == '0') {
      emit('0');
    } else {
      while (pos_ < in_.size() && is_digit(in_[pos_])) emit(in_[pos_]);
    }
    if (pos_ < in_.size() && in_[pos_] == '.') {
      emit('.');
      if (pos_ >= in_.size()) return fail("unexpected end of JSON input");
      if (!is_digit(in_[pos_])) return fail_char("after decimal point in numeric literal");
      while (pos_ < in_.size() && is_digit(in_[pos_])) emit(in_[pos_]);
    }
    if (pos_ < in_.size() && (in_[pos_] == 'e' || in_[pos_] == 'E')) {
      emit(in_[pos_]);
      if (pos_ < in_.size() && (in_[pos_] == '+' || in_[pos_] == '-')) emit(in_[pos_]);
      if (pos_ >= in_.size()) return fail("unexpected end of JSON input");
      if (!is_digit(in_[pos_])) return fail_char("in exponent of numeric literal");
      while (pos_ < in_.size() && is_digit(in_[pos_])) emit(in_[pos_]);
    }
    return ok_status();
  }

  Status string() {
    emit('"');
    for (;;) {
      if (pos_ >= in_.size()) return fail("unexpected end of JSON input");
      const auto c = static_cast<unsigned char>(in_[pos_]);
      if (c == '"') {
        emit('"');
        return ok_status();
      }
      if (c < 0x20) return fail_char("in string literal");
      if (c == '\\') {
        if (pos_ + 1 >= in_.size()) return fail("unexpected end of JSON input");
        const char e = in_[pos_ + 1];
        if (e == 'u') {
          const int32_t r = read_u4(in_, pos_);
          if (r < 0) {
            pos_ += 2;
            for (int k = 0; k < 4; ++k, ++pos_) {
              if (pos_ >= in_.size()) return fail("unexpected end of JSON input");
              if (hex_value(in_[pos_]) < 0) return fail_char("in \\u hexadecimal character escape");
            }
            return fail("invalid \\u escape");  // unreachable: read_u4 failed on a valid escape
          }
          if (r >= 0xD800 && r <= 0xDFFF) {
            const int32_t r2 = read_u4(in_, pos_ + 6);
            if (r <= 0xDBFF && r2 >= 0xDC00 && r2 <= 0xDFFF) {
              out_.append(in_.substr(pos_, 12));  // a valid pair: both escapes as they are
              pos_ += 12;
            } else {
              out_ += "\\ufffd";  // Go decodes an unpaired surrogate as U+FFFD
              pos_ += 6;
            }
          } else {
            out_.append(in_.substr(pos_, 6));
            pos_ += 6;
          }
          continue;
        }
        switch (e) {
          case '"':
          case '\\':
          case '/':
          case 'b':
          case 'f':
          case 'n':
          case 'r':
          case 't':
            emit('\\');
            emit(e);
            continue;
          default:
            ++pos_;
            return fail_char("in string escape code");
        }
      }
      if (c < 0x80) {
        emit(static_cast<char>(c));
        continue;
      }
      uint32_t cp = 0;
      const size_t n = go::decode_utf8_rune(in_, pos_, &cp);
      if (n == 0) {
        out_ += "\xEF\xBF\xBD";  // Go replaces each invalid byte with U+FFFD
        ++pos_;
      } else {
        out_.append(in_.substr(pos_, n));
        pos_ += n;
      }
    }
  }

  std::string_view in_;
  size_t pos_ = 0;
  std::string out_;
};

}  // namespace

Result<std::string> prepare(std::string_view json) {
  return GoJsonPreparer(json).run();
}

std::string Path::str() const {
  std::string out = parent != nullptr ? parent->str() : std::string();
  switch (kind) {
    case kRoot:
      break;
    case kIndex:
      out += '[' + std::to_string(index) + ']';
      break;
    case kField:
      if (!out.empty()) out += '.';
      out.append(key);
      break;
    case kMapKey:
      out += '[' + go::quote(key) + ']';
      break;
  }
  return out;
}

// ---- Step 2: the readers ----

std::optional<std::string_view> any_string(od::value& v) {
  std::string_view s;
  if (v.get_string().get(s)) return std::nullopt;
  return s;
}

std::optional<double> any_number(od::value& v) {
  od::json_type t;
  if (v.type().get(t) || t != od::json_type::number) return std::nullopt;
  double d = 0;
  if (v.get_double().get(d)) return std::nullopt;
  return d;
}

Error at(const Path& p, std::string_view what) {
  std::string where = p.str();
  if (where.empty()) return make_error(std::string(what));
  return make_error(where + ": " + std::string(what));
}

Error simdjson_failure(const Path& p, simdjson::error_code e) {
  return at(p, std::string("invalid JSON: ") + simdjson::error_message(e));
}

using model::json::type_name;

Error wrong_type(const Path& p, od::json_type got, std::string_view want) {
  return at(p, "cannot decode " + std::string(type_name(got)) + " as " + std::string(want));
}

Status get_type(od::value& v, const Path& p, od::json_type* t) {
  if (auto e = v.type().get(*t)) return simdjson_failure(p, e);
  return ok_status();
}

std::string_view number_token(od::value& v) {
  std::string_view tok = v.raw_json_token();
  while (!tok.empty() && model::is_json_space(tok.back())) tok.remove_suffix(1);
  return tok;
}

// Go string field: string or null (null leaves the value unchanged).
Status read_string(od::value& v, const Path& p, std::string* out) {
  od::json_type t;
  if (auto st = get_type(v, p, &t); !st.ok()) return st;
  if (t == od::json_type::null) return ok_status();
  if (t != od::json_type::string) return wrong_type(p, t, "string");
  std::string_view s;
  if (auto e = v.get_string().get(s)) return simdjson_failure(p, e);
  out->assign(s);
  return ok_status();
}

Status read_bool(od::value& v, const Path& p, bool* out) {
  od::json_type t;
  if (auto st = get_type(v, p, &t); !st.ok()) return st;
  if (t == od::json_type::null) return ok_status();
  if (t != od::json_type::boolean) return wrong_type(p, t, "bool");
  if (auto e = v.get_bool().get(*out)) return simdjson_failure(p, e);
  return ok_status();
}

// Go signed integer field: the token must parse with strconv.ParseInt(tok, 10, 64) (no
// fraction, no exponent) and fit [lo, hi]. `*present` is set when a number was read.
Status read_signed(od::value& v, const Path& p, int64_t lo, int64_t hi, std::string_view go_type,
                   int64_t* out, bool* present) {
  od::json_type t;
  if (auto st = get_type(v, p, &t); !st.ok()) return st;
  if (t == od::json_type::null) return ok_status();
  if (t != od::json_type::number) return wrong_type(p, t, go_type);
  const std::string_view tok = number_token(v);
  int64_t n = 0;
  if (go::parse_int(tok, 64, &n) != NumError::kNone || n < lo || n > hi) {
    return at(p, std::string(tok) + " is not " + std::string(go_type));
  }
  *out = n;
  if (present != nullptr) *present = true;
  return ok_status();
}

Status read_unsigned(od::value& v, const Path& p, uint64_t hi, std::string_view go_type,
                     uint64_t* out, bool* present) {
  od::json_type t;
  if (auto st = get_type(v, p, &t); !st.ok()) return st;
  if (t == od::json_type::null) return ok_status();
  if (t != od::json_type::number) return wrong_type(p, t, go_type);
  const std::string_view tok = number_token(v);
  uint64_t n = 0;
  const auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), n);
  // strconv.ParseUint: digits only (a JSON number has no '+'; '-' is refused).
  if (ec != std::errc() || ptr != tok.data() + tok.size() || tok.empty() || !is_digit(tok[0]) ||
      n > hi) {
    return at(p, std::string(tok) + " is not " + std::string(go_type));
  }
  *out = n;
  if (present != nullptr) *present = true;
  return ok_status();
}

Status read_int32(od::value& v, const Path& p, int32_t* out) {
  int64_t n = *out;
  if (auto st = read_signed(v, p, std::numeric_limits<int32_t>::min(),
                            std::numeric_limits<int32_t>::max(), "an int32", &n);
      !st.ok()) {
    return st;
  }
  *out = static_cast<int32_t>(n);
  return ok_status();
}

Status read_int(od::value& v, const Path& p, int64_t* out) {
  return read_signed(v, p, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                     "an int", out);
}

Status read_uint32(od::value& v, const Path& p, uint32_t* out) {
  uint64_t n = *out;
  if (auto st = read_unsigned(v, p, std::numeric_limits<uint32_t>::max(), "a uint32", &n);
      !st.ok()) {
    return st;
  }
  *out = static_cast<uint32_t>(n);
  return ok_status();
}

bool numbers_fit_float64(std::string_view json) {
  size_t i = 0;
  while (i < json.size()) {
    const char c = json[i];
    if (c == '"') {
      for (++i; i < json.size() && json[i] != '"'; ++i) {
        if (json[i] == '\\') ++i;
      }
      ++i;
      continue;
    }
    if (c != '-' && !is_digit(c)) {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < json.size() && (is_digit(json[i]) || json[i] == '-' || json[i] == '+' ||
                               json[i] == '.' || json[i] == 'e' || json[i] == 'E')) {
      ++i;
    }
    const std::string_view tok = json.substr(start, i - start);
    double d = 0;
    const auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), d);
    if (ec == std::errc::result_out_of_range) {
      // Overflow if the decimal exponent of the leading significant digit is positive.
      std::string_view mant = tok;
      if (!mant.empty() && mant[0] == '-') mant.remove_prefix(1);
      const size_t epos = mant.find_first_of("eE");
      int64_t exp = 0;
      if (epos != std::string_view::npos) {
        std::string_view es = mant.substr(epos + 1);
        const bool neg = !es.empty() && es[0] == '-';
        if (!es.empty() && (es[0] == '-' || es[0] == '+')) es.remove_prefix(1);
        for (const char d2 : es) exp = std::min<int64_t>(exp * 10 + (d2 - '0'), int64_t{1} << 40);
        if (neg) exp = -exp;
        mant = mant.substr(0, epos);
      }
      const size_t dot = mant.find('.');
      std::string_view int_part = mant.substr(0, dot);
      while (!int_part.empty() && int_part[0] == '0') int_part.remove_prefix(1);
      int64_t lead = 0;
      if (!int_part.empty()) {
        lead = static_cast<int64_t>(int_part.size());
      } else if (dot != std::string_view::npos) {
        const std::string_view frac = mant.substr(dot + 1);
        const size_t nz = frac.find_first_not_of('0');
        lead = nz == std::string_view::npos ? std::numeric_limits<int32_t>::min()
                                            : -static_cast<int64_t>(nz);
      }
      if (lead + exp > 0) return false;
    }
  }
  return true;
}

}  // namespace hamisim::device::gojson
