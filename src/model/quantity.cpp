#include "model/quantity.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace hamisim::model {
namespace {

using u128 = unsigned __int128;

constexpr __int128 kNanosPerUnit = 1'000'000'000;
constexpr __int128 kNanosPerMilli = 1'000'000;
// The largest magnitude we accept: int64 max in milli-units.
constexpr __int128 kMaxNanos =
    static_cast<__int128>(std::numeric_limits<int64_t>::max()) * kNanosPerMilli;
constexpr __int128 kInt128Max = static_cast<__int128>(~u128{0} >> 1);
constexpr __int128 kInt128Min = -kInt128Max - 1;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_suffix_char(char c) {
  switch (c) {
    case 'e':
    case 'E':
    case 'i':
    case 'n':
    case 'u':
    case 'm':
    case 'k':
    case 'K':
    case 'M':
    case 'G':
    case 'T':
    case 'P':
      return true;
    default:
      return false;
  }
}

// The offending text for error messages: quoted, control and non-ASCII bytes escaped, long
// input shortened so a hostile value cannot blow up a log line.
std::string quote(std::string_view text) {
  constexpr size_t kMaxShown = 64;
  std::string out = "\"";
  const std::string_view shown = text.substr(0, kMaxShown);
  for (const char ch : shown) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c >= 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += ch;
    }
  }
  out += '"';
  if (text.size() > kMaxShown) out += "...";
  return out;
}

Error invalid(std::string_view text, std::string_view why) {
  return make_error("invalid quantity " + quote(text) + ": " + std::string(why));
}

// The pieces of a quantity string, split the way Kubernetes' parseQuantityString does.
struct Pieces {
  bool negative = false;
  std::string_view num;    // integer digits, leading zeros stripped (may be empty)
  std::string_view denom;  // fraction digits (may be empty)
  std::string_view suffix;
};

// Returns false when the text does not match <sign>?<digits>?(.<digits>?)?<suffix>, where
// <suffix> is [eEinumkKMGTP]*[+-]?[0-9]*. Like Kubernetes, a number without digits (".", "+",
// "k") scans as zero; only the suffix table decides whether the suffix is meaningful.
bool scan(std::string_view s, Pieces& p) {
  size_t pos = 0;
  const size_t end = s.size();
  if (pos < end && (s[pos] == '-' || s[pos] == '+')) {
    p.negative = s[pos] == '-';
    ++pos;
  }
  while (pos < end && s[pos] == '0') ++pos;
  size_t start = pos;
  while (pos < end && is_digit(s[pos])) ++pos;
  p.num = s.substr(start, pos - start);
  if (pos < end && s[pos] == '.') {
    ++pos;
    start = pos;
    while (pos < end && is_digit(s[pos])) ++pos;
    p.denom = s.substr(start, pos - start);
  }
  const size_t suffix_start = pos;
  while (pos < end && is_suffix_char(s[pos])) ++pos;
  if (pos < end && (s[pos] == '+' || s[pos] == '-')) ++pos;
  while (pos < end && is_digit(s[pos])) ++pos;
  if (pos < end) return false;
  p.suffix = s.substr(suffix_start);
  return true;
}

struct Multiplier {
  __int128 exp10 = 0;  // value *= 10^exp10
  int exp2 = 0;        // value *= 2^exp2
};

// Kubernetes' suffix table: decimal SI, binary SI, or a decimal exponent "e<int>"/"E<int>"
// whose integer must fit int64 (strconv.ParseInt). Kubernetes then truncates the exponent to
// int32; we keep its true value instead, so an absurd exponent is "too large" (or rounds up to
// 1n) rather than wrapping around.
bool interpret_suffix(std::string_view suffix, Multiplier& m) {
  struct Entry {
    std::string_view name;
    int exp10;
    int exp2;
  };
  static constexpr Entry kTable[] = {
      {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
      {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
      {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
  };
  for (const auto& e : kTable) {
    if (e.name == suffix) {
      m.exp10 = e.exp10;
      m.exp2 = e.exp2;
      return true;
    }
  }
  if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return false;
  std::string_view rest = suffix.substr(1);
  bool negative = false;
  if (rest[0] == '+' || rest[0] == '-') {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }
  if (rest.empty()) return false;
  u128 value = 0;
  for (const char c : rest) {
    if (!is_digit(c)) return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
    // strconv.ParseInt(..., 64) range.
    if (value > (negative ? u128{1} << 63 : (u128{1} << 63) - 1)) return false;
  }
  m.exp10 = negative ? -static_cast<__int128>(value) : static_cast<__int128>(value);
  return true;
}

// digits (most significant first, values 0..9) *= 2^exp2.
void multiply_pow2(std::vector<uint8_t>& digits, int exp2) {
  while (exp2 > 0) {
    const int step = std::min(exp2, 30);
    exp2 -= step;
    uint64_t carry = 0;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
      const uint64_t v = (static_cast<uint64_t>(*it) << step) + carry;
      *it = static_cast<uint8_t>(v % 10);
      carry = v / 10;
    }
    std::vector<uint8_t> head;
    while (carry > 0) {
      head.push_back(static_cast<uint8_t>(carry % 10));
      carry /= 10;
    }
    digits.insert(digits.begin(), head.rbegin(), head.rend());
  }
}

std::string int128_to_string(__int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  u128 mag = negative ? u128{0} - static_cast<u128>(v) : static_cast<u128>(v);
  std::string out;
  while (mag > 0) {
    out += static_cast<char>('0' + static_cast<int>(mag % 10));
    mag /= 10;
  }
  if (negative) out += '-';
  std::reverse(out.begin(), out.end());
  return out;
}

// nanos / divisor rounded away from zero (Kubernetes rounds magnitudes up), clamped to int64.
int64_t scaled_round_up(__int128 nanos, __int128 divisor) {
  __int128 q = nanos / divisor;
  if (nanos % divisor != 0) q += nanos < 0 ? -1 : 1;
  q = std::clamp<__int128>(q, std::numeric_limits<int64_t>::min(),
                           std::numeric_limits<int64_t>::max());
  return static_cast<int64_t>(q);
}

}  // namespace

Result<Quantity> Quantity::parse(std::string_view text) {
  if (text.empty()) return invalid(text, "empty");
  Pieces p;
  if (!scan(text, p)) return invalid(text, "not a number with an optional suffix");
  Multiplier m;
  if (!interpret_suffix(p.suffix, m)) {
    return invalid(text, "unknown suffix \"" + std::string(p.suffix) + "\"");
  }

  // Significant digits of num.denom, and the power of ten that turns them into nano-units.
  std::string_view digits_text;
  std::string joined;
  if (p.denom.empty()) {
    digits_text = p.num;
  } else {
    joined.reserve(p.num.size() + p.denom.size());
    joined.append(p.num).append(p.denom);
    digits_text = joined;
  }
  __int128 exp10 = m.exp10 - static_cast<__int128>(p.denom.size()) + 9;
  const size_t first = digits_text.find_first_not_of('0');
  if (first == std::string_view::npos) return Quantity(0);
  digits_text.remove_prefix(first);
  const size_t last = digits_text.find_last_not_of('0');
  exp10 += static_cast<__int128>(digits_text.size() - 1 - last);
  digits_text = digits_text.substr(0, last + 1);

  // value = digits * 10^exp10 * 2^exp2 nano-units, with digits >= 10^(len-1).
  const __int128 magnitude_digits = static_cast<__int128>(digits_text.size()) + exp10;
  constexpr int kMaxDigits = 25;  // kMaxNanos has 25 digits
  if (magnitude_digits > kMaxDigits) return make_error("quantity " + quote(text) + " too large");
  // 2^60 < 10^19: anything below 10^-19 nano-units stays below one nano-unit after the binary
  // multiplier, and rounds up to exactly 1n.
  if (magnitude_digits < -19) return Quantity(p.negative ? -1 : 1);

  // Reused: every resource of every decoded object is parsed here, and allocating the digit
  // buffer each time was a measurable part of decoding a Node.
  thread_local std::vector<uint8_t> digits;
  digits.resize(digits_text.size());
  std::transform(digits_text.begin(), digits_text.end(), digits.begin(),
                 [](char c) { return static_cast<uint8_t>(c - '0'); });
  multiply_pow2(digits, m.exp2);

  const __int128 int_digits = static_cast<__int128>(digits.size()) + exp10;
  if (int_digits > 30) return make_error("quantity " + quote(text) + " too large");
  u128 magnitude = 0;
  bool fraction = false;
  for (__int128 i = 0; i < static_cast<__int128>(digits.size()); ++i) {
    if (i < int_digits) {
      magnitude = magnitude * 10 + digits[static_cast<size_t>(i)];
    } else if (digits[static_cast<size_t>(i)] != 0) {
      fraction = true;
      break;
    }
  }
  for (__int128 i = static_cast<__int128>(digits.size()); i < int_digits; ++i) magnitude *= 10;
  if (fraction) ++magnitude;  // Kubernetes rounds sub-nano precision up (away from zero)
  if (magnitude > static_cast<u128>(kMaxNanos)) {
    return make_error("quantity " + quote(text) + " too large");
  }
  const auto nanos = static_cast<__int128>(magnitude);
  return Quantity(p.negative ? -nanos : nanos);
}

Quantity Quantity::from_int(int64_t value) {
  return Quantity(value * kNanosPerUnit);
}

Quantity Quantity::from_milli(int64_t milli) {
  return Quantity(milli * kNanosPerMilli);
}

std::optional<int64_t> Quantity::as_int64() const {
  if (nanos_ % kNanosPerUnit != 0) return std::nullopt;
  const __int128 v = nanos_ / kNanosPerUnit;
  if (v < std::numeric_limits<int64_t>::min() || v > std::numeric_limits<int64_t>::max()) {
    return std::nullopt;
  }
  return static_cast<int64_t>(v);
}

int64_t Quantity::value() const {
  return scaled_round_up(nanos_, kNanosPerUnit);
}

int64_t Quantity::milli_value() const {
  return scaled_round_up(nanos_, kNanosPerMilli);
}

std::string Quantity::to_string() const {
  if (nanos_ % kNanosPerUnit == 0) return int128_to_string(nanos_ / kNanosPerUnit);
  if (nanos_ % kNanosPerMilli == 0) return int128_to_string(nanos_ / kNanosPerMilli) + "m";
  return int128_to_string(nanos_) + "n";
}

Quantity& Quantity::operator+=(const Quantity& o) {
  const __int128 other = o.nanos_;  // `o` may be *this
  if (__builtin_add_overflow(nanos_, other, &nanos_)) nanos_ = other > 0 ? kInt128Max : kInt128Min;
  return *this;
}

Quantity& Quantity::operator-=(const Quantity& o) {
  const __int128 other = o.nanos_;
  if (__builtin_sub_overflow(nanos_, other, &nanos_)) nanos_ = other < 0 ? kInt128Max : kInt128Min;
  return *this;
}

}  // namespace hamisim::model
