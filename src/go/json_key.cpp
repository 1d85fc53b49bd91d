#include "go/json_key.h"

namespace hamisim::go {

bool json_key_folds_to(std::string_view key, std::string_view name) {
  auto upper = [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; };
  size_t i = 0;
  for (const char want : name) {
    if (i >= key.size()) return false;
    const auto b = static_cast<unsigned char>(key[i]);
    char folded = 0;
    if (b < 0x80) {
      folded = upper(static_cast<char>(b));
      i += 1;
    } else if (key.substr(i, 2) == "\xC4\xB0" || key.substr(i, 2) == "\xC4\xB1") {
      folded = 'I';
      i += 2;
    } else if (key.substr(i, 2) == "\xC5\xBF") {
      folded = 'S';
      i += 2;
    } else if (key.substr(i, 3) == "\xE2\x84\xAA") {
      folded = 'K';
      i += 3;
    } else {
      return false;
    }
    if (folded != upper(want)) return false;
  }
  return i == key.size();
}

}  // namespace hamisim::go
