#include "go/strconv.h"

#include "go/quote.h"

namespace hamisim::go {

NumError parse_uint(std::string_view s, int bits, uint64_t* out) {
  if (s.empty()) return NumError::kSyntax;
  const uint64_t max_val = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  constexpr uint64_t kCutoff = ~uint64_t{0} / 10 + 1;
  uint64_t n = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return NumError::kSyntax;
    if (n >= kCutoff) return NumError::kRange;
    n *= 10;
    const uint64_t n1 = n + static_cast<uint64_t>(c - '0');
    if (n1 < n || n1 > max_val) return NumError::kRange;
    n = n1;
  }
  *out = n;
  return NumError::kNone;
}

NumError parse_int(std::string_view s, int bits, int64_t* out) {
  if (s.empty()) return NumError::kSyntax;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  uint64_t magnitude = 0;
  const NumError e = parse_uint(s, bits, &magnitude);
  if (e == NumError::kSyntax) return e;
  const uint64_t cutoff = uint64_t{1} << (bits - 1);
  if (e == NumError::kRange || (!negative && magnitude >= cutoff) ||
      (negative && magnitude > cutoff)) {
    return NumError::kRange;
  }
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return NumError::kNone;
}

bool parse_int_base0(std::string_view s, int64_t* out) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  bool prefixed = false;
  if (s.size() > 1 && s[0] == '0') {
    const char p = static_cast<char>(s[1] | 0x20);
    base = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 8;
    s.remove_prefix(p == 'x' || p == 'o' || p == 'b' ? 2 : 1);
    prefixed = true;
  }
  if (s.empty()) return false;
  uint64_t value = 0;
  // What came before: '^' nothing, 'p' a base prefix, 'd' a digit, '_' an underscore. An
  // underscore must follow a prefix or a digit ("0x_1", "1_000"; not "_1", "1__2", "1_").
  char prev = prefixed ? 'p' : '^';
  bool digits = false;
  for (char c : s) {
    if (c == '_') {
      if (prev != 'p' && prev != 'd') return false;
      prev = '_';
      continue;
    }
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'z' ? c - 'a' + 10
            : c >= 'A' && c <= 'Z' ? c - 'A' + 10
                                   : 99;
    if (d >= base) return false;
    if (value > (uint64_t(INT64_MAX) + 1 - d) / base) return false;
    value = value * base + d;
    digits = true;
    prev = 'd';
  }
  if (!digits || prev == '_') return false;
  if (!negative && value > uint64_t(INT64_MAX)) return false;
  *out = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  return true;
}

std::string num_error_text(std::string_view fn, std::string_view s, NumError e) {
  return "strconv." + std::string(fn) + ": parsing " + quote(s) + ": " +
         (e == NumError::kRange ? "value out of range" : "invalid syntax");
}

bool parse_bool(std::string_view s, bool* out) {
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") {
    *out = true;
    return true;
  }
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") {
    *out = false;
    return true;
  }
  return false;
}

}  // namespace hamisim::go
