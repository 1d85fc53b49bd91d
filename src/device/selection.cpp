#include "device/selection.h"

#include <algorithm>

#include "device/allocation.h"
#include "device/codec.h"
#include "go/utf8.h"

namespace hamisim::device {

SelectionList SelectionList::parse(std::string_view value) {
  SelectionList out;
  if (go::trim_space(value).empty()) return out;
  out.constrains_ = true;
  size_t pos = 0;
  while (true) {
    const size_t comma = value.find(',', pos);
    const size_t end = comma == std::string_view::npos ? value.size() : comma;
    const std::string_view item = go::trim_space(value.substr(pos, end - pos));
    if (!item.empty()) out.items_.emplace_back(item);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

SelectionList SelectionList::read(const model::ObjectMeta& meta, std::string_view key) {
  if (key.empty()) return {};
  const std::string* v = model::find_annotation(meta, key);
  return v ? parse(*v) : SelectionList{};
}

bool SelectionList::has_equal(std::string_view value) const {
  return std::find(items_.begin(), items_.end(), value) != items_.end();
}

bool SelectionList::has_substring_of(std::string_view text) const {
  return std::any_of(items_.begin(), items_.end(),
                     [&](const std::string& item) { return contains_ignore_case(text, item); });
}

UuidSelection UuidSelection::read(const model::ObjectMeta& meta, std::string_view use_key,
                                  std::string_view nouse_key) {
  return {SelectionList::read(meta, use_key), SelectionList::read(meta, nouse_key)};
}

bool UuidSelection::allows_listed(std::string_view uuid) const {
  if (use.constrains() && !use.has_equal(uuid)) return false;
  return !nouse.has_equal(uuid);
}

TypeSelection TypeSelection::read(const model::ObjectMeta& meta, std::string_view use_key,
                                  std::string_view nouse_key) {
  return {SelectionList::read(meta, use_key), SelectionList::read(meta, nouse_key)};
}

bool TypeSelection::allows_listed(std::string_view type) const {
  if (use.constrains() && !use.has_substring_of(type)) return false;
  return !nouse.has_substring_of(type);
}

}  // namespace hamisim::device
