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
  entries_.push_back(Entry{std::string(node), text});
}

void FailedNodes::finish() {
  order_.resize(entries_.size());
  for (uint32_t i = 0; i < order_.size(); ++i) order_[i] = i;
  if (sorted_) return;
  // Indexes are sorted, not the entries (moving their names cost as much as comparing them).
  std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
    if (int c = entries_[a].node.compare(entries_[b].node); c != 0) return c < 0;
    return a < b;
  });
  // Of the entries of one name, the last added stays.
  size_t out = 0;
  for (size_t i = 0; i < order_.size(); ++i) {
    if (i + 1 < order_.size() && entries_[order_[i + 1]].node == entries_[order_[i]].node) continue;
    order_[out++] = order_[i];
  }
  order_.resize(out);
}

const std::string* FailedNodes::find(std::string_view node) const {
  auto it = std::lower_bound(order_.begin(), order_.end(), node,
                             [&](uint32_t e, std::string_view n) { return entries_[e].node < n; });
  if (it == order_.end() || entries_[*it].node != node) return nullptr;
  return &texts_[entries_[*it].reason];
}

const std::string& FailedNodes::at(std::string_view node) const {
  const std::string* reason = find(node);
  if (reason == nullptr) throw std::out_of_range("FailedNodes::at: " + std::string(node));
  return *reason;
}

}  // namespace hamisim::live
