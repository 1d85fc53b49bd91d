#pragma once
// UTF-8 and white space as Go's unicode/utf8, unicode and strings packages define them.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace hamisim::go {

// Decodes the rune starting at s[i] with utf8.DecodeRune's rules (no overlongs, no surrogates,
// nothing above U+10FFFF). Returns its length, or 0 when the byte at i starts no valid
// sequence (Go then reads U+FFFD, one byte long).
size_t decode_utf8_rune(std::string_view s, size_t i, uint32_t* code_point);

// unicode.IsSpace: Unicode White_Space (\t \n \v \f \r, space, U+0085, U+00A0, U+1680,
// U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
bool is_space(uint32_t r);

// strings.TrimSpace: `s` without the runes is_space accepts at both ends.
std::string_view trim_space(std::string_view s);

}  // namespace hamisim::go
