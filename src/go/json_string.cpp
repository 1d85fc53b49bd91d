#include "go/json_string.h"

#include <array>
#include <cstdint>

#include "go/quote.h"
#include "go/utf8.h"

namespace hamisim::go {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_unicode_escape(std::string& out, unsigned code) {
  out += "\\u";
  out += kHex[(code >> 12) & 0xF];
  out += kHex[(code >> 8) & 0xF];
  out += kHex[(code >> 4) & 0xF];
  out += kHex[code & 0xF];
}

// Bytes Go writes as they are: printable ASCII and DEL, but for the five it escapes. Most
// strings (names, annotation values) are made of these only and are copied in runs.
constexpr std::array<bool, 256> kVerbatim = [] {
  std::array<bool, 256> t{};
  for (unsigned c = 0x20; c < 0x80; ++c) t[c] = true;
  for (unsigned char c : {'"', '\\', '<', '>', '&'}) t[c] = false;
  return t;
}();

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    size_t end = i;
    while (end < s.size() && kVerbatim[static_cast<unsigned char>(s[end])]) ++end;
    out.append(s.data() + i, end - i);
    i = end;
    if (i == s.size()) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      // Go writes \" and \\, the short escapes but \a and \v, and \u00XX for the other
      // control characters and for <, > and & (HTML safety). Go < 1.22 wrote \b and \f as
      // \u0008, \u000c; HAMi v2.10 builds with a newer Go.
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (const std::string_view e = short_escape(c); !e.empty() && c != '\a' && c != '\v') {
        out += e;
      } else {
        append_unicode_escape(out, c);
      }
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = decode_utf8_rune(s, i, &cp);
    if (n == 0) {
      out += "\\ufffd";  // Go replaces each invalid byte with U+FFFD
      ++i;
      continue;
    }
    if (cp == 0x2028 || cp == 0x2029) {
      append_unicode_escape(out, cp);
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  out += '"';
}

}  // namespace hamisim::go
