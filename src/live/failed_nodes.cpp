#include "live/failed_nodes.h"

#include <algorithm>
#include <stdexcept>

namespace hamisim::live {

void FailedNodes::add(std::string_view node, std::string_view reason) {
  // Nodes mostly fail for the text the previous one did, else for one of a few: the texts
  // seen are searched from the latest, up to a bound (a text kept twice costs only memory).
  constexpr size_t kSearched = 8;
  uint32_t text = static_cast<uint32_t>(texts_.size());
  if (!texts_.empty() && texts_[last_text_] == reason) {
    text = last_text_;
  } else {
    for (size_t i = texts_.size(), n = 0; i > 0 && n < kSearched; --i, ++n) {
      if (texts_[i - 1] == reason) {
        text = static_cast<uint32_t>(i - 1);
        break;
      }
    }
    if (text == texts_.size()) texts_.emplace_back(reason);
  }
  last_text_ = text;
  if (sorted_ && !entries_.empty() && !(entries_.back().node < node)) sorted_ = false;
  entries_.push_back(Entry{std::string(node), text, static_cast<uint32_t>(entries_.size())});
}

void FailedNodes::finish() {
  if (sorted_) return;
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    if (int c = a.node.compare(b.node); c != 0) return c < 0;
    return a.order < b.order;
  });
  // Of the entries of one name, the last added stays.
  auto out = entries_.begin();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (std::next(it) != entries_.end() && std::next(it)->node == it->node) continue;
    if (out != it) *out = std::move(*it);
    ++out;
  }
  entries_.erase(out, entries_.end());
  sorted_ = true;
}

const std::string* FailedNodes::find(std::string_view node) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), node,
                             [](const Entry& e, std::string_view n) { return e.node < n; });
  if (it == entries_.end() || it->node != node) return nullptr;
  return &texts_[it->reason];
}

const std::string& FailedNodes::at(std::string_view node) const {
  const std::string* reason = find(node);
  if (reason == nullptr) throw std::out_of_range("FailedNodes::at: " + std::string(node));
  return *reason;
}

}  // namespace hamisim::live
