#pragma once
// The one strict reader of fields in hamisim's own YAML files (node groups, device profiles):
// every error names the file, the field path and the line, every key must be known and appear
// once, integers follow model/yaml_number.h. Callers run model::check_yaml on the text before
// handing it to yaml-cpp (model::read_yaml_document does both). yaml-cpp's Node is only
// declared here, so this header stays cheap to include.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "model/result.h"

namespace YAML {
class Node;
}

namespace hamisim::model::yaml {

// Where a value sits: errors read "<file>: <path>: <message> (line L)".
struct Where {
  std::string_view source;
  std::string path;

  Where operator/(std::string_view key) const {
    return Where{source, path.empty() ? std::string(key) : path + "." + std::string(key)};
  }
  // A map entry whose key may hold dots or slashes ("labels[nvidia.com/gpu]").
  Where entry(std::string_view key) const {
    return Where{source, path + "[" + std::string(key) + "]"};
  }
  Where at(size_t i) const { return Where{source, path + "[" + std::to_string(i) + "]"}; }
  // The line is the node's when it exists in the file.
  Error error(const YAML::Node& node, const std::string& message) const;
};

// Defined and not null.
bool present(const YAML::Node& n);
// A mapping key's text ("" for a key that is not a scalar).
std::string key_text(const YAML::Node& key);

// Every key of `map` must be one of `known` and appear once: yaml-cpp keeps duplicate keys and
// lookups see only the first, so a repeated field would silently lose its second value.
Status check_keys(const YAML::Node& map, const Where& where,
                  std::initializer_list<std::string_view> known);

// A required field of a mapping; when it is missing the error names the parent's line.
Result<std::string> read_string(const YAML::Node& parent, std::string_view key, const Where& where);
// An optional field of a mapping: "" when absent or null.
Result<std::string> read_optional_string(const YAML::Node& parent, std::string_view key,
                                         const Where& where);
// A scalar read as text (`zone: 1` is the string "1"); absent or null: "required".
Result<std::string> read_string(const YAML::Node& n, const Where& where);
// model/yaml_number.h's integers; quoted and plain scalars alike. Absent or null: "required".
Result<int64_t> read_int(const YAML::Node& n, const Where& where);
// The same, within [min, max].
Result<int64_t> read_int(const YAML::Node& n, const Where& where, int64_t min, int64_t max);
// A finite decimal number ("1.5", "-2", "+1e3"); no NaN, infinities or hex.
Result<double> read_number(const YAML::Node& n, const Where& where);
// The YAML 1.2 core schema's booleans: true/True/TRUE, false/False/FALSE.
Result<bool> read_bool(const YAML::Node& n, const Where& where);

}  // namespace hamisim::model::yaml
