#include "profile/template_node.h"

#include <cctype>

namespace hamisim::profile {
namespace {

constexpr std::string_view kPrefix = "template-node-for-";

// Removes "-<digits>" from the end of `s`; false when `s` does not end that way.
bool strip_number_suffix(std::string_view& s) {
  size_t i = s.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1]))) --i;
  if (i == s.size() || i == 0 || s[i - 1] != '-') return false;
  s = s.substr(0, i - 1);
  return true;
}

bool strip_copy_suffix(std::string_view& s, std::string_view marker) {
  std::string_view t = s;
  if (!strip_number_suffix(t)) return false;
  if (t.size() <= marker.size() || !t.ends_with(marker)) return false;
  s = t.substr(0, t.size() - marker.size());
  return true;
}

// The group id in a template name, as a view into `name`.
std::optional<std::string_view> group_of(std::string_view name) {
  if (!name.starts_with(kPrefix)) return std::nullopt;
  std::string_view rest = name.substr(kPrefix.size());
  if (!strip_copy_suffix(rest, "-e")) strip_copy_suffix(rest, "-upcoming");
  if (!strip_number_suffix(rest) || rest.empty()) return std::nullopt;
  return rest;
}

}  // namespace

std::optional<std::string> node_group_from_template_name(std::string_view name) {
  auto group = group_of(name);
  if (!group) return std::nullopt;
  return std::string(*group);
}

bool is_template_node(const model::Node& node) {
  if (model::find_label(node.metadata, kTemplateNodeLabel)) return true;
  return group_of(node.metadata.name).has_value();
}

bool has_template_copy_suffix(std::string_view name) {
  std::string_view s = name;
  return strip_copy_suffix(s, "-e") || strip_copy_suffix(s, "-upcoming");
}

bool is_template_copy(const model::Node& node) {
  return has_template_copy_suffix(node.metadata.name) && is_template_node(node);
}

void normalize_sample(fit::DeviceDescription& description) {
  for (auto& d : description.devices) d.health = true;
  description.cordoned.clear();
  description.source = fit::DeviceSource::kSample;
}

}  // namespace hamisim::profile
