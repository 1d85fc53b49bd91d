#pragma once
// Small text helpers every layer uses for messages.

#include <string>
#include <string_view>
#include <vector>

namespace hamisim::model {

// "a, b, c" (or with another separator); "" for no items.
inline std::string join(const std::vector<std::string>& items, std::string_view sep = ", ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

}  // namespace hamisim::model
