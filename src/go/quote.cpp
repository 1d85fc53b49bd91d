#include "go/quote.h"

#include <cstdint>

#include "go/utf8.h"

namespace hamisim::go {
namespace {

bool is_print_approx(uint32_t r) {
  if (r < 0x20 || r == 0x7F) return false;
  if (r < 0x7F) return true;
  if (r <= 0xA0 || r == 0xAD || r == 0x1680 || r == 0x3000 || r == 0xFEFF) return false;
  if ((r >= 0x2000 && r <= 0x200F) || (r >= 0x2028 && r <= 0x202F) ||
      (r >= 0x205F && r <= 0x2064) || (r >= 0xFFF9 && r <= 0xFFFB) || r >= 0xFFFE) {
    return r > 0xFFFF;  // above the BMP: assume printable
  }
  return true;
}

void hex(std::string& out, uint32_t v, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int k = digits - 1; k >= 0; --k) out += kHex[(v >> (4 * k)) & 0xF];
}

}  // namespace

std::string_view short_escape(uint32_t r) {
  switch (r) {
    case '\a':
      return "\\a";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    case '\v':
      return "\\v";
    default:
      return {};
  }
}

void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    uint32_t r = 0;
    const size_t n = decode_utf8_rune(s, i, &r);
    if (n == 0) {
      out += "\\x";
      hex(out, static_cast<unsigned char>(s[i]), 2);
      ++i;
      continue;
    }
    if (r == '"' || r == '\\') {
      out += '\\';
      out += static_cast<char>(r);
    } else if (is_print_approx(r)) {
      out.append(s.substr(i, n));
    } else if (const std::string_view e = short_escape(r); !e.empty()) {
      out += e;
    } else if (r < 0x20 || r == 0x7F) {
      out += "\\x";
      hex(out, r, 2);
    } else if (r < 0x10000) {
      out += "\\u";
      hex(out, r, 4);
    } else {
      out += "\\U";
      hex(out, r, 8);
    }
    i += n;
  }
  out += '"';
}

std::string quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  append_quoted(out, s);
  return out;
}

}  // namespace hamisim::go
