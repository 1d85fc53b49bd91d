#include "model/yaml_fields.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

#include "model/yaml_number.h"

namespace hamisim::model::yaml {

Error Where::error(const YAML::Node& node, const std::string& message) const {
  std::string text = std::string(source) + ": " + path + ": " + message;
  if (node.IsDefined() && node.Mark().line >= 0)
    text += " (line " + std::to_string(node.Mark().line + 1) + ")";
  return Error{text};
}

bool present(const YAML::Node& n) {
  return n.IsDefined() && !n.IsNull();
}

std::string key_text(const YAML::Node& key) {
  return key.IsScalar() ? key.Scalar() : std::string();
}

Status check_keys(const YAML::Node& map, const Where& where,
                  std::initializer_list<std::string_view> known) {
  std::set<std::string, std::less<>> seen;
  for (const auto& kv : map) {
    const std::string key = key_text(kv.first);
    bool ok = false;
    for (std::string_view k : known) ok = ok || key == k;
    if (!ok) {
      std::string list;
      for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      return (where / key).error(kv.first, "unknown field (expected one of: " + list + ")");
    }
    if (!seen.insert(key).second) return (where / key).error(kv.first, "duplicate field");
  }
  return ok_status();
}

Result<std::string> read_string(const YAML::Node& parent, std::string_view key,
                                const Where& where) {
  const YAML::Node n = parent[std::string(key)];
  if (!present(n)) return (where / key).error(parent, "required");
  return read_string(n, where / key);
}

Result<std::string> read_optional_string(const YAML::Node& parent, std::string_view key,
                                         const Where& where) {
  const YAML::Node n = parent[std::string(key)];
  if (!present(n)) return std::string();
  return read_string(n, where / key);
}

Result<std::string> read_string(const YAML::Node& n, const Where& where) {
  if (!present(n)) return where.error(n, "required");
  if (!n.IsScalar()) return where.error(n, "expected a string");
  return n.Scalar();
}

Result<int64_t> read_int(const YAML::Node& n, const Where& where) {
  if (!present(n)) return where.error(n, "required");
  if (!n.IsScalar()) return where.error(n, "expected an integer");
  const std::string& text = n.Scalar();
  int64_t v = 0;
  switch (parse_yaml_integer(text, &v)) {
    case YamlInteger::kOk:
      return v;
    case YamlInteger::kLeadingZero:
      return where.error(n, leading_zero_message(text));
    case YamlInteger::kOutOfRange:
      return where.error(n, "\"" + text + "\" is out of the 64-bit integer range");
    case YamlInteger::kNotInteger:
      break;
  }
  return where.error(n, "\"" + text + "\" is not an integer");
}

Result<int64_t> read_int(const YAML::Node& n, const Where& where, int64_t min, int64_t max) {
  Result<int64_t> v = read_int(n, where);
  if (v && (*v < min || *v > max)) {
    return where.error(n, std::to_string(*v) + " is out of range [" + std::to_string(min) + ", " +
                              std::to_string(max) + "]");
  }
  return v;
}

Result<double> read_number(const YAML::Node& n, const Where& where) {
  if (!present(n)) return where.error(n, "required");
  if (!n.IsScalar()) return where.error(n, "expected a number");
  const std::string& text = n.Scalar();
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;  // from_chars takes no '+'; YAML does, once
  double v = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || ptr != end || begin == end || *begin == '+' || !std::isfinite(v)) {
    return where.error(n, "\"" + text + "\" is not a finite number");
  }
  return v;
}

Result<bool> read_bool(const YAML::Node& n, const Where& where) {
  const std::string text = n.IsScalar() ? n.Scalar() : std::string();
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return where.error(n, "expected true or false");
}

}  // namespace hamisim::model::yaml
