#pragma once
// Hash maps keyed by std::string that are looked up by std::string_view without building a
// std::string (node names, description keys: looked up once per node per request).

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace hamisim::model {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

template <class Value>
using StringHashMap = std::unordered_map<std::string, Value, StringHash, std::equal_to<>>;

}  // namespace hamisim::model
