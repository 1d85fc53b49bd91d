#include "go/utf8.h"

namespace hamisim::go {

size_t decode_utf8_rune(std::string_view s, size_t i, uint32_t* cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  auto cont = [&](size_t k) -> int {
    if (i + k >= s.size()) return -1;
    const auto b = static_cast<unsigned char>(s[i + k]);
    return (b & 0xC0) == 0x80 ? (b & 0x3F) : -1;
  };
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    const int c1 = cont(1);
    if (c1 < 0) return 0;
    *cp = ((b0 & 0x1Fu) << 6) | static_cast<uint32_t>(c1);
    return 2;
  }
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    const int c1 = cont(1);
    const int c2 = c1 < 0 ? -1 : cont(2);
    if (c2 < 0) return 0;
    const uint32_t v =
        ((b0 & 0x0Fu) << 12) | (static_cast<uint32_t>(c1) << 6) | static_cast<uint32_t>(c2);
    if (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    const int c1 = cont(1);
    const int c2 = c1 < 0 ? -1 : cont(2);
    const int c3 = c2 < 0 ? -1 : cont(3);
    if (c3 < 0) return 0;
    const uint32_t v = ((b0 & 0x07u) << 18) | (static_cast<uint32_t>(c1) << 12) |
                       (static_cast<uint32_t>(c2) << 6) | static_cast<uint32_t>(c3);
    if (v < 0x10000 || v > 0x10FFFF) return 0;
    *cp = v;
    return 4;
  }
  return 0;
}

bool is_space(uint32_t r) {
  switch (r) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return r >= 0x2000 && r <= 0x200A;
  }
}

std::string_view trim_space(std::string_view s) {
  size_t first = s.size();
  size_t last_end = 0;
  size_t i = 0;
  while (i < s.size()) {
    uint32_t cp = 0;
    size_t n = decode_utf8_rune(s, i, &cp);
    const bool space = n != 0 && is_space(cp);
    if (n == 0) n = 1;
    if (!space) {
      if (first == s.size()) first = i;
      last_end = i + n;
    }
    i += n;
  }
  if (first == s.size()) return {};
  return s.substr(first, last_end - first);
}

}  // namespace hamisim::go
