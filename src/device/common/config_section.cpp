#include "device/common/config_section.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>

#include "model/yaml_number.h"

namespace hamisim::device {
namespace {

std::string line_of(const YAML::Node& n) {
  return std::to_string(n.Mark().line + 1);
}

Error type_error(const std::string& path, std::string_view key, const char* expected,
                 const YAML::Node& value) {
  return make_error(path + "." + std::string(key) + ": expected " + expected + " at line " +
                    line_of(value));
}

// The value of `key`, or an undefined node when absent or null.
YAML::Node lookup(const std::shared_ptr<const YAML::Node>& node, std::string_view key) {
  if (!node || !node->IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node& map = *node;
  const YAML::Node v = map[std::string(key)];
  if (!v || v.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
  return v;
}

template <class T>
Status read_scalar(const std::shared_ptr<const YAML::Node>& node, const std::string& path,
                   std::string_view key, const char* expected, T& out) {
  const YAML::Node v = lookup(node, key);
  if (!v.IsDefined()) return ok_status();
  if (!v.IsScalar()) return type_error(path, key, expected, v);
  try {
    out = v.as<T>();
  } catch (const YAML::Exception&) {
    return type_error(path, key, expected, v);
  }
  return ok_status();
}

Result<std::vector<ConfigSection>> mappings_of(const YAML::Node& seq, const std::string& path) {
  std::vector<ConfigSection> out;
  if (!seq.IsSequence()) {
    return make_error(path + ": expected a list at line " + line_of(seq));
  }
  for (size_t i = 0; i < seq.size(); ++i) {
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    const YAML::Node item = seq[i];
    if (item.IsNull()) {
      out.emplace_back();
      continue;
    }
    if (!item.IsMap())
      return make_error(item_path + ": expected a mapping at line " + line_of(item));
    out.emplace_back(item, item_path);
  }
  return out;
}

}  // namespace

ConfigSection::ConfigSection(const YAML::Node& node, std::string path) : path_(std::move(path)) {
  if (node.IsDefined() && !node.IsNull()) node_ = std::make_shared<const YAML::Node>(node);
}

Status ConfigSection::read(std::string_view key, std::string& out) const {
  return read_scalar(node_, path_, key, "a string", out);
}

// model/yaml_number.h's integers, within int32.
Status ConfigSection::read(std::string_view key, int32_t& out) const {
  const YAML::Node v = lookup(node_, key);
  if (!v.IsDefined()) return ok_status();
  if (!v.IsScalar()) return type_error(path_, key, "an integer", v);
  int64_t n = 0;
  switch (model::parse_yaml_integer(v.Scalar(), &n)) {
    case model::YamlInteger::kOk:
      if (n < INT32_MIN || n > INT32_MAX) break;
      out = static_cast<int32_t>(n);
      return ok_status();
    case model::YamlInteger::kLeadingZero:
      return make_error(path_ + "." + std::string(key) + ": " +
                        model::leading_zero_message(v.Scalar()) + " at line " + line_of(v));
    case model::YamlInteger::kOutOfRange:
    case model::YamlInteger::kNotInteger:
      break;
  }
  return type_error(path_, key, "an integer", v);
}

Status ConfigSection::read(std::string_view key, bool& out) const {
  return read_scalar(node_, path_, key, "a boolean", out);
}

Status ConfigSection::read(std::string_view key, std::vector<std::string>& out) const {
  const YAML::Node v = lookup(node_, key);
  if (!v.IsDefined()) return ok_status();
  if (!v.IsSequence()) return type_error(path_, key, "a list of strings", v);
  std::vector<std::string> items;
  for (const YAML::Node& item : v) {
    if (!item.IsScalar()) return type_error(path_, key, "a list of strings", item);
    items.push_back(item.Scalar());
  }
  out = std::move(items);
  return ok_status();
}

Result<ConfigSection> ConfigSection::mapping(std::string_view key) const {
  const YAML::Node v = lookup(node_, key);
  const std::string path = path_ + "." + std::string(key);
  if (!v.IsDefined()) return ConfigSection();
  if (!v.IsMap()) return make_error(path + ": expected a mapping at line " + line_of(v));
  return ConfigSection(v, path);
}

Result<std::vector<ConfigSection>> ConfigSection::list(std::string_view key) const {
  const YAML::Node v = lookup(node_, key);
  if (!v.IsDefined()) return std::vector<ConfigSection>{};
  return mappings_of(v, path_ + "." + std::string(key));
}

Result<std::vector<ConfigSection>> ConfigSection::items() const {
  if (!node_) return std::vector<ConfigSection>{};
  return mappings_of(*node_, path_);
}

}  // namespace hamisim::device
