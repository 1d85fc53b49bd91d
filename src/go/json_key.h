#pragma once
// How Go's encoding/json matches an object key to a struct field name (Go >= 1.21): exactly,
// or else after folding both: ASCII letters to upper case, every other rune to
// unicode.ToUpper(unicode.ToLower(r)). The field names we match are ASCII, and the only
// non-ASCII runes that fold onto ASCII letters are U+0130 and U+0131 (to I), U+017F (to S)
// and U+212A, the Kelvin sign (to K); any other non-ASCII rune, or invalid UTF-8, matches no
// ASCII name.

#include <cstring>
#include <string_view>

namespace hamisim::go {

// The slow path of json_key_matches: `key` and `name` (ASCII) differ byte for byte.
bool json_key_folds_to(std::string_view key, std::string_view name);

// Inlined so that a key is matched against a chain of field names mostly by its length and
// first byte, then by a comparison of known size (keys nearly always come in the field's own
// case). A key holding one of the folding runes is longer than the name it matches.
[[gnu::always_inline]] inline bool json_key_matches(std::string_view key, std::string_view name) {
  if (key.size() == name.size()) {
    return std::memcmp(key.data(), name.data(), name.size()) == 0 || json_key_folds_to(key, name);
  }
  if (key.size() < name.size() || key.size() > 3 * name.size()) return false;
  const auto first = static_cast<unsigned char>(key[0]);
  return (first >= 0x80 || (first | 0x20) == (static_cast<unsigned char>(name[0]) | 0x20)) &&
         json_key_folds_to(key, name);
}

}  // namespace hamisim::go
