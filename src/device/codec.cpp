#include "device/codec.h"

#include <simdjson.h>

#include "model/decode.h"
#include "model/simdjson_util.h"

#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "go/json_key.h"
#include "go/quote.h"
#include "go/strconv.h"
#include "go/utf8.h"
#include "model/json_writer.h"

// Reading JSON the way Go's json.Unmarshal does takes two steps here:
//
//  1. go_json_prepare() runs Go's own acceptance rules over the raw bytes (the scanner behind
//     checkValid: exact number grammar, control characters, nesting limit 10000) and copies
//     the text, replacing what Go's string decoder replaces with U+FFFD (invalid UTF-8 bytes,
//     unpaired surrogate escapes). simdjson alone would reject such strings, which Go accepts,
//     and would accept nothing Go rejects only after this pass has run.
//  2. simdjson On-Demand walks the prepared text. On-Demand parses a number only when asked,
//     so numbers under ignored keys may be as large as Go tolerates; the integer fields we do
//     read are parsed from their raw token with Go's strconv rules.
//
// Decoding mirrors Go's merge semantics: a repeated key decodes again into the same field
// (scalars overwritten, slices decoded element-wise into the existing elements and truncated,
// maps extended), `null` leaves scalars and structs untouched and resets slices, maps and
// pointers.

namespace hamisim::device {
namespace {

namespace od = simdjson::ondemand;

using go::NumError;

// strconv.ParseInt(s, 10, 32) into `out`; on failure returns Go's error text.
std::optional<std::string> parse_int32_field(std::string_view s, int32_t* out) {
  int64_t v = 0;
  if (const NumError e = go::parse_int(s, 32, &v); e != NumError::kNone) {
    return go::num_error_text("ParseInt", s, e);
  }
  *out = static_cast<int32_t>(v);
  return std::nullopt;
}

// strconv.Atoi(s).
std::optional<std::string> parse_atoi_field(std::string_view s, int64_t* out) {
  if (const NumError e = go::parse_int(s, 64, out); e != NumError::kNone) {
    return go::num_error_text("Atoi", s, e);
  }
  return std::nullopt;
}

// ------------------------------------------------------------------------------------------
// Step 1: Go's acceptance rules (encoding/json scanner) plus string normalisation.

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

// ------------------------------------------------------------------------------------------
// Step 2: walking the prepared text with simdjson On-Demand.

// Where a value sits, for error messages ("[1].migProfiles[0].core"); formatted only on error.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;
  size_t index = 0;
  enum Kind { kRoot, kIndex, kField, kMapKey } kind = kRoot;

  Path index_of(size_t i) const { return Path{this, {}, i, kIndex}; }
  Path field(std::string_view k) const { return Path{this, k, 0, kField}; }
  Path map_key(std::string_view k) const { return Path{this, k, 0, kMapKey}; }

  std::string str() const {
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
};

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
                   int64_t* out, bool* present = nullptr) {
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
                     uint64_t* out, bool* present = nullptr) {
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

// Visits each field of an object value (null: no fields, Go leaves structs alone on null).
template <class F>
Status for_each_field(od::value& v, const Path& p, std::string_view go_type, F&& visit) {
  od::json_type t;
  if (auto st = get_type(v, p, &t); !st.ok()) return st;
  if (t == od::json_type::null) return ok_status();
  if (t != od::json_type::object) return wrong_type(p, t, go_type);
  od::object obj;
  if (auto e = v.get_object().get(obj)) return simdjson_failure(p, e);
  for (auto field_result : obj) {
    od::field field;
    if (auto e = std::move(field_result).get(field)) return simdjson_failure(p, e);
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return simdjson_failure(p, e);
    if (auto st = visit(key, field.value()); !st.ok()) return st;
  }
  return ok_status();
}

// Go slice decoding: null resets; an array decodes element i into the existing element i
// (a fresh zero value past the end) and truncates to the array's length.
template <class T, class F>
Status read_slice(od::value& v, const Path& p, std::string_view go_type, std::vector<T>* out,
                  bool* is_nil, F&& read_element) {
  od::json_type t;
  if (auto st = get_type(v, p, &t); !st.ok()) return st;
  if (t == od::json_type::null) {
    out->clear();
    if (is_nil != nullptr) *is_nil = true;
    return ok_status();
  }
  if (t != od::json_type::array) return wrong_type(p, t, go_type);
  od::array arr;
  if (auto e = v.get_array().get(arr)) return simdjson_failure(p, e);
  size_t i = 0;
  for (auto element_result : arr) {
    od::value element;
    if (auto e = element_result.get(element)) return simdjson_failure(p, e);
    if (i >= out->size()) out->emplace_back();
    const Path ep = p.index_of(i);
    if (auto st = read_element(element, ep, (*out)[i]); !st.ok()) return st;
    ++i;
  }
  out->resize(i);
  if (is_nil != nullptr) *is_nil = false;
  return ok_status();
}

// Go decodes numbers inside interface{} values as float64 and fails when one is out of range
// (overflow to ±Inf; underflow quietly becomes 0). `json` is prepared, valid JSON.
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

// DeviceInfo.CustomInfo (map[string]any): type-checked as Go would, kept as raw JSON text.
Status read_custom_info(od::value& v, const Path& p, std::string* out) {
  od::json_type t;
  if (auto st = get_type(v, p, &t); !st.ok()) return st;
  if (t == od::json_type::null) return ok_status();
  if (t != od::json_type::object) return wrong_type(p, t, "map[string]any");
  od::object obj;
  if (auto e = v.get_object().get(obj)) return simdjson_failure(p, e);
  std::string_view raw;
  if (auto e = obj.raw_json().get(raw)) return simdjson_failure(p, e);
  if (!numbers_fit_float64(raw)) return at(p, "number out of range for float64");
  out->assign(raw);
  return ok_status();
}

// DeviceInfo.MIGTemplate ([]Geometry, Geometry = []MigTemplate{Name, Core, Memory, Count},
// no json tags): deprecated, never written, type-checked on read.
Status check_mig_template(od::value& v, const Path& p) {
  std::vector<std::vector<int>> discard;  // element types only matter for the walk
  return read_slice(
      v, p, "[]Geometry", &discard, nullptr,
      [](od::value& g, const Path& gp, std::vector<int>& geometry) {
        std::vector<int> templates;
        return read_slice(
            g, gp, "Geometry", &templates, nullptr, [](od::value& m, const Path& mp, int&) {
              std::string name;
              int32_t n = 0;
              return for_each_field(m, mp, "MigTemplate",
                                    [&](std::string_view key, od::value val) -> Status {
                                      if (go::json_key_matches(key, "Name")) {
                                        return read_string(val, mp.field("Name"), &name);
                                      }
                                      for (std::string_view f : {"Core", "Memory", "Count"}) {
                                        if (go::json_key_matches(key, f)) {
                                          return read_int32(val, mp.field(f), &n);
                                        }
                                      }
                                      return ok_status();
                                    });
            });
      });
}

Status read_placement(od::value& v, const Path& p, MigPlacement& pl) {
  return for_each_field(v, p, "MigPlacement", [&](std::string_view key, od::value val) -> Status {
    if (go::json_key_matches(key, "start")) return read_uint32(val, p.field("start"), &pl.start);
    if (go::json_key_matches(key, "size")) return read_uint32(val, p.field("size"), &pl.size);
    return ok_status();
  });
}

Status read_mig_profile(od::value& v, const Path& p, MigProfile& mp) {
  return for_each_field(v, p, "MigProfile", [&](std::string_view key, od::value val) -> Status {
    if (go::json_key_matches(key, "name")) return read_string(val, p.field("name"), &mp.name);
    if (go::json_key_matches(key, "memoryMB")) {
      return read_int32(val, p.field("memoryMB"), &mp.memory_mb);
    }
    if (go::json_key_matches(key, "core")) return read_int32(val, p.field("core"), &mp.core);
    if (go::json_key_matches(key, "sliceCount")) {
      return read_uint32(val, p.field("sliceCount"), &mp.slice_count);
    }
    if (go::json_key_matches(key, "placements")) {
      return read_slice(val, p.field("placements"), "[]MigPlacement", &mp.placements,
                        &mp.placements_null, read_placement);
    }
    return ok_status();
  });
}

Status read_device_info(od::value& v, const Path& p, DeviceInfo& d) {
  return for_each_field(v, p, "DeviceInfo", [&](std::string_view key, od::value val) -> Status {
    if (go::json_key_matches(key, "id")) return read_string(val, p.field("id"), &d.id);
    if (go::json_key_matches(key, "index")) {
      return read_unsigned(val, p.field("index"), std::numeric_limits<uint64_t>::max(), "a uint",
                           &d.index);
    }
    if (go::json_key_matches(key, "count")) return read_int32(val, p.field("count"), &d.count);
    if (go::json_key_matches(key, "devmem")) return read_int32(val, p.field("devmem"), &d.devmem);
    if (go::json_key_matches(key, "devcore"))
      return read_int32(val, p.field("devcore"), &d.devcore);
    if (go::json_key_matches(key, "type")) return read_string(val, p.field("type"), &d.type);
    if (go::json_key_matches(key, "numa")) return read_int(val, p.field("numa"), &d.numa);
    if (go::json_key_matches(key, "mode")) return read_string(val, p.field("mode"), &d.mode);
    if (go::json_key_matches(key, "migProfiles")) {
      bool is_nil = false;
      return read_slice(val, p.field("migProfiles"), "[]MigProfile", &d.mig_profiles, &is_nil,
                        read_mig_profile);
    }
    if (go::json_key_matches(key, "health")) return read_bool(val, p.field("health"), &d.health);
    if (go::json_key_matches(key, "migtemplate"))
      return check_mig_template(val, p.field("migtemplate"));
    if (go::json_key_matches(key, "devicevendor")) {
      std::string ignored;  // the scheduler sets the vendor itself after decoding
      return read_string(val, p.field("devicevendor"), &ignored);
    }
    if (go::json_key_matches(key, "custominfo")) {
      d.custom_info.clear();
      return read_custom_info(val, p.field("custominfo"), &d.custom_info);
    }
    return ok_status();  // unknown keys (v2.9 devicepairscore, ...) are ignored
  });
}

// Runs Go's acceptance pass, then hands the top-level array to `read_elements`; top-level
// null yields an empty list.
template <class T, class F>
Result<std::vector<T>> decode_json_list(std::string_view json, std::string_view go_type,
                                        F&& read_element) {
  auto prepared = GoJsonPreparer(json).run();
  if (!prepared.ok()) return prepared.error();
  const simdjson::padded_string padded(prepared.value());
  // One parser per thread, reused: a new parser allocates its buffers on first use, which
  // cost more than parsing an annotation of a few KiB (a planner run decodes tens of
  // thousands). A decode nested in another on the same thread gets a parser of its own.
  thread_local od::parser reused;
  thread_local bool reused_busy = false;
  std::optional<od::parser> nested;
  od::parser& parser = reused_busy ? nested.emplace() : reused;
  const bool owns_reused = !reused_busy;
  reused_busy = true;
  struct Release {
    bool active;
    ~Release() {
      if (active) reused_busy = false;
    }
  } release{owns_reused};
  od::document doc;
  const Path root;
  if (auto e = parser.iterate(padded).get(doc)) return simdjson_failure(root, e);
  od::json_type t;
  if (auto e = doc.type().get(t)) return simdjson_failure(root, e);
  std::vector<T> out;
  if (t == od::json_type::null) return out;
  if (t != od::json_type::array) return wrong_type(root, t, go_type);
  od::array arr;
  if (auto e = doc.get_array().get(arr)) return simdjson_failure(root, e);
  size_t i = 0;
  for (auto element_result : arr) {
    od::value element;
    if (auto e = element_result.get(element)) return simdjson_failure(root, e);
    out.emplace_back();
    const Path ep = root.index_of(i);
    if (auto st = read_element(element, ep, out.back()); !st.ok()) return st.error();
    ++i;
  }
  return out;
}

Status read_pair_score(od::value& v, const Path& p, DevicePairScore& s) {
  return for_each_field(
      v, p, "DevicePairScore", [&](std::string_view key, od::value val) -> Status {
        if (go::json_key_matches(key, "uuid")) return read_string(val, p.field("uuid"), &s.uuid);
        if (!go::json_key_matches(key, "score")) return ok_status();
        const Path sp = p.field("score");
        od::json_type t;
        if (auto st = get_type(val, sp, &t); !st.ok()) return st;
        if (t == od::json_type::null) {
          s.scores.clear();  // a nil map
          return ok_status();
        }
        if (t != od::json_type::object) return wrong_type(sp, t, "map[string]int");
        od::object obj;
        if (auto e = val.get_object().get(obj)) return simdjson_failure(sp, e);
        for (auto field_result : obj) {
          od::field field;
          if (auto e = std::move(field_result).get(field)) return simdjson_failure(sp, e);
          std::string_view peer;
          if (auto e = field.unescaped_key().get(peer)) return simdjson_failure(sp, e);
          std::string peer_id(peer);
          // Go stores a fresh zero value per map entry, so `null` maps to 0. HAMi's map value
          // is a Go int; we keep int32 and refuse wider values (real scores are below 2000).
          int32_t score = 0;
          if (auto st = read_int32(field.value(), sp.map_key(peer_id), &score); !st.ok()) {
            return st;
          }
          s.scores[peer_id] = score;
        }
        return ok_status();
      });
}

Status read_mig_allocation(od::value& v, const Path& p, MigAllocation& a) {
  return for_each_field(v, p, "MigAllocation", [&](std::string_view key, od::value val) -> Status {
    if (go::json_key_matches(key, "containerIndex")) {
      return read_int(val, p.field("containerIndex"), &a.container_index);
    }
    if (go::json_key_matches(key, "deviceIndex")) {
      return read_int(val, p.field("deviceIndex"), &a.device_index);
    }
    if (go::json_key_matches(key, "gpuUUID"))
      return read_string(val, p.field("gpuUUID"), &a.gpu_uuid);
    if (go::json_key_matches(key, "profile"))
      return read_string(val, p.field("profile"), &a.profile);
    if (go::json_key_matches(key, "placement"))
      return read_placement(val, p.field("placement"), a.placement);
    if (go::json_key_matches(key, "migUUID")) {
      std::string uuid = a.mig_uuid.value_or("");
      if (auto st = read_string(val, p.field("migUUID"), &uuid); !st.ok()) return st;
      a.mig_uuid = std::move(uuid);
      return ok_status();
    }
    for (auto [name, slot] :
         {std::pair{std::string_view("gpuInstanceID"), &a.gpu_instance_id},
          std::pair{std::string_view("computeInstanceID"), &a.compute_instance_id}}) {
      if (!go::json_key_matches(key, name)) continue;
      // *uint32 in Go: null resets the pointer.
      od::json_type t;
      if (auto st = get_type(val, p.field(name), &t); !st.ok()) return st;
      if (t == od::json_type::null) {
        slot->reset();
        return ok_status();
      }
      uint32_t id = 0;
      if (auto st = read_uint32(val, p.field(name), &id); !st.ok()) return st;
      *slot = id;
      return ok_status();
    }
    return ok_status();
  });
}

// "UUID,Type,Usedmem,Usedcores" for every device, each followed by ':'.
void append_container(std::string& out, const ContainerDevices& devices) {
  for (const ContainerDevice& d : devices) {
    out += d.uuid;
    out += ',';
    out += d.type;
    out += ',';
    out += std::to_string(d.usedmem);
    out += ',';
    out += std::to_string(d.usedcores);
    out += ':';
  }
}

// strings.Split semantics: n separators give n+1 pieces, empty ones included.
template <class F>
void split_each(std::string_view s, char sep, F&& f) {
  for (;;) {
    const size_t k = s.find(sep);
    f(s.substr(0, k));
    if (k == std::string_view::npos) return;
    s.remove_prefix(k + 1);
  }
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  split_each(s, sep, [&](std::string_view piece) { out.push_back(piece); });
  return out;
}

}  // namespace

// ------------------------------------------------------------------------------------------
// hami.io/node-nvidia-register

Result<std::vector<DeviceInfo>> decode_register_json(std::string_view json) {
  return decode_json_list<DeviceInfo>(json, "[]DeviceInfo", read_device_info);
}

std::string encode_register_json(const std::vector<DeviceInfo>& devices) {
  model::JsonWriter w;
  w.reserve(devices.size() * 200 + 2);
  w.begin_array();
  for (const DeviceInfo& d : devices) {
    w.begin_object();
    if (!d.id.empty()) w.key("id").string(d.id);
    if (d.index != 0) w.key("index").unsigned_number(d.index);
    if (d.count != 0) w.key("count").number(d.count);
    if (d.devmem != 0) w.key("devmem").number(d.devmem);
    if (d.devcore != 0) w.key("devcore").number(d.devcore);
    if (!d.type.empty()) w.key("type").string(d.type);
    if (d.numa != 0) w.key("numa").number(d.numa);
    if (!d.mode.empty()) w.key("mode").string(d.mode);
    if (!d.mig_profiles.empty()) {
      w.key("migProfiles").begin_array();
      for (const MigProfile& mp : d.mig_profiles) {
        w.begin_object();
        w.key("name").string(mp.name);
        w.key("memoryMB").number(mp.memory_mb);
        w.key("core").number(mp.core);
        w.key("sliceCount").unsigned_number(mp.slice_count);
        w.key("placements");
        if (mp.placements.empty() && mp.placements_null) {
          w.null();
        } else {
          w.begin_array();
          for (const MigPlacement& pl : mp.placements) {
            w.begin_object().key("start").unsigned_number(pl.start);
            w.key("size").unsigned_number(pl.size).end_object();
          }
          w.end_array();
        }
        w.end_object();
      }
      w.end_array();
    }
    if (d.health) w.key("health").boolean(true);
    w.end_object();
  }
  w.end_array();
  return w.take();
}

// ------------------------------------------------------------------------------------------
// hami.io/node-nvidia-score

Result<std::vector<DevicePairScore>> decode_pair_scores(std::string_view json) {
  return decode_json_list<DevicePairScore>(json, "[]DevicePairScore", read_pair_score);
}

std::string encode_pair_scores(const std::vector<DevicePairScore>& scores) {
  model::JsonWriter w;
  w.begin_array();
  for (const DevicePairScore& s : scores) {
    w.begin_object().key("uuid").string(s.uuid).key("score").begin_object();
    for (const auto& [peer, score] : s.scores) w.key(peer).number(score);
    w.end_object().end_object();
  }
  w.end_array();
  return w.take();
}

// ------------------------------------------------------------------------------------------
// hami.io/device-cordon

std::set<std::string, std::less<>> parse_cordon(std::string_view value) {
  std::set<std::string, std::less<>> out;
  split_each(value, ',', [&](std::string_view item) {
    const std::string_view id = go::trim_space(item);
    if (!id.empty()) out.emplace(id);
  });
  return out;
}

// ------------------------------------------------------------------------------------------
// Legacy colon format

Result<std::vector<DeviceInfo>> decode_legacy_devices(std::string_view value) {
  if (value.find(':') == std::string_view::npos) {
    return make_error("node annotation is not in the colon device format (no ':')");
  }
  std::vector<DeviceInfo> out;
  for (const std::string_view segment : split(value, ':')) {
    if (segment.empty()) continue;
    auto bad = [&](std::string_view what) {
      return make_error("device " + go::quote(segment) + ": " + std::string(what));
    };
    if (segment.find(',') == std::string_view::npos) return bad("no ',' separated fields");
    const std::vector<std::string_view> f = split(segment, ',');
    if (f.size() != 7 && f.size() != 9) {
      return bad(std::to_string(f.size()) + " fields, want 7 or 9");
    }
    DeviceInfo d;
    d.id = std::string(f[0]);
    for (auto [name, field, slot] :
         {std::tuple{"count", f[1], &d.count}, std::tuple{"devmem", f[2], &d.devmem},
          std::tuple{"devcore", f[3], &d.devcore}}) {
      if (auto err = parse_int32_field(field, slot)) return bad(std::string(name) + ": " + *err);
    }
    d.type = std::string(f[4]);
    if (auto err = parse_atoi_field(f[5], &d.numa)) return bad("numa: " + *err);
    if (!go::parse_bool(f[6], &d.health)) {
      return bad("health: strconv.ParseBool: parsing " + go::quote(f[6]) + ": invalid syntax");
    }
    d.mode = "hami-core";
    if (f.size() == 9) {
      int64_t index = 0;
      if (auto err = parse_atoi_field(f[7], &index)) return bad("index: " + *err);
      if (index < 0) return bad("index: " + std::string(f[7]) + " is negative");
      d.index = static_cast<uint64_t>(index);
      d.mode = std::string(f[8]);
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::string encode_legacy_devices(const std::vector<DeviceInfo>& devices) {
  std::string out;
  for (const DeviceInfo& d : devices) {
    out += d.id;
    out += ',' + std::to_string(d.count);
    out += ',' + std::to_string(d.devmem);
    out += ',' + std::to_string(d.devcore);
    out += ',';
    out += d.type;
    out += ',' + std::to_string(d.numa);
    out += d.health ? ",true" : ",false";
    out += ',' + std::to_string(d.index);
    out += ',';
    out += d.mode;
    out += ':';
  }
  return out;
}

// ------------------------------------------------------------------------------------------
// Pod allocation strings

Result<ContainerDevices> decode_container_devices(std::string_view value) {
  ContainerDevices out;
  for (const std::string_view piece : split(value, ':')) {
    if (piece.find(',') == std::string_view::npos) continue;
    const std::vector<std::string_view> f = split(piece, ',');
    if (f.size() < 4) {
      return make_error(
          "pod annotation format error, missing fields, do not use nodeName in task spec");
    }
    ContainerDevice d;
    d.uuid = std::string(f[0]);
    d.type = std::string(f[1]);
    // HAMi returns strconv's error unchanged; it names the offending value.
    if (auto err = parse_int32_field(f[2], &d.usedmem)) return make_error(std::move(*err));
    if (auto err = parse_int32_field(f[3], &d.usedcores)) return make_error(std::move(*err));
    out.push_back(std::move(d));
  }
  return out;
}

Result<PodSingleDevice> decode_pod_devices(std::string_view value) {
  PodSingleDevice out;
  for (const std::string_view segment : split(value, ';')) {
    auto devices = decode_container_devices(segment);
    if (!devices.ok()) return devices.error();  // HAMi's text, unchanged
    out.push_back(std::move(devices).value());
  }
  return out;
}

std::string encode_container_devices(const ContainerDevices& devices) {
  std::string out;
  append_container(out, devices);
  return out;
}

std::string encode_pod_devices(const PodSingleDevice& devices) {
  std::string out;
  for (const ContainerDevices& container : devices) {
    append_container(out, container);
    out += ';';
  }
  return out;
}

// ------------------------------------------------------------------------------------------
// hami.io/vgpu-mig-allocations

Result<std::vector<MigAllocation>> decode_mig_allocations(std::string_view json) {
  if (json.empty()) return std::vector<MigAllocation>{};
  auto decoded = decode_json_list<MigAllocation>(json, "[]MigAllocation", read_mig_allocation);
  if (!decoded.ok()) return decoded.error();
  std::vector<MigAllocation> out = std::move(decoded).value();
  std::set<std::pair<int64_t, int64_t>> seen;
  for (size_t i = 0; i < out.size(); ++i) {
    MigAllocation& a = out[i];
    if (a.mig_uuid && a.mig_uuid->empty()) a.mig_uuid.reset();  // omitempty: "" is absent
    auto bad = [&](std::string_view what) {
      return make_error("mig allocation [" + std::to_string(i) + "]: " + std::string(what));
    };
    if (a.container_index < 0) return bad("containerIndex is negative");
    if (a.device_index < 0) return bad("deviceIndex is negative");
    if (a.gpu_uuid.empty()) return bad("gpuUUID is empty");
    if (a.profile.empty()) return bad("profile is empty");
    if (a.placement.size == 0) return bad("placement size is 0");
    const int present = static_cast<int>(a.mig_uuid.has_value()) +
                        static_cast<int>(a.gpu_instance_id.has_value()) +
                        static_cast<int>(a.compute_instance_id.has_value());
    if (present != 0 && present != 3) {
      return bad("migUUID, gpuInstanceID and computeInstanceID must be set together");
    }
    if (!seen.emplace(a.container_index, a.device_index).second) {
      return bad("duplicate allocation for container " + std::to_string(a.container_index) +
                 " device " + std::to_string(a.device_index));
    }
  }
  return out;
}

std::string encode_mig_allocations(const std::vector<MigAllocation>& allocations) {
  if (allocations.empty()) return {};  // HAMi writes no annotation then
  model::JsonWriter w;
  w.begin_array();
  for (const MigAllocation& a : allocations) {
    w.begin_object();
    w.key("containerIndex").number(a.container_index);
    w.key("deviceIndex").number(a.device_index);
    w.key("gpuUUID").string(a.gpu_uuid);
    w.key("profile").string(a.profile);
    w.key("placement").begin_object().key("start").unsigned_number(a.placement.start);
    w.key("size").unsigned_number(a.placement.size).end_object();
    if (a.mig_uuid && !a.mig_uuid->empty()) w.key("migUUID").string(*a.mig_uuid);
    if (a.gpu_instance_id) w.key("gpuInstanceID").number(*a.gpu_instance_id);
    if (a.compute_instance_id) w.key("computeInstanceID").number(*a.compute_instance_id);
    w.end_object();
  }
  w.end_array();
  return w.take();
}

}  // namespace hamisim::device
