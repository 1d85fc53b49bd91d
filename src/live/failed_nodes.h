#pragma once
// The nodes a live filter rejected and why: HAMi's FailedNodes, node name -> reason text, read
// by the /filter answer, its log lines, metrics and Events in node-name order.
//
// A filter rejects most of a thousand nodes for one of a few identical texts ("8/8
// CardInsufficientMemory"): each distinct text is kept once and the nodes refer to it, so
// recording a node is an append, not a map insertion and a copy of its text.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hamisim::live {

class FailedNodes {
  struct Entry {
    std::string node;
    uint32_t reason;  // into texts_
  };

 public:
  // Records that `node` was rejected for `reason`. A name added twice keeps the last reason,
  // as assigning into a map would.
  void add(std::string_view node, std::string_view reason);
  // Call after the last add() and before reading: puts the nodes in name order, once per name.
  void finish();

  size_t size() const { return order_.size(); }
  bool empty() const { return order_.empty(); }
  // The node's reason; nullptr when it was not rejected.
  const std::string* find(std::string_view node) const;
  // The same for a node known to be there; throws std::out_of_range otherwise (tests).
  const std::string& at(std::string_view node) const;
  // The distinct reason texts, each once, in no particular order.
  const std::vector<std::string>& reasons() const { return texts_; }
  // Index of the node's reason in reasons(), for the entry at `i` (name order).
  size_t reason_index(size_t i) const { return entries_[order_[i]].reason; }

  // (node, reason) in node-name order.
  class const_iterator {
   public:
    using value_type = std::pair<const std::string&, const std::string&>;
    const_iterator(const FailedNodes* owner, size_t i) : owner_(owner), i_(i) {}
    value_type operator*() const {
      const Entry& e = owner_->entries_[owner_->order_[i_]];
      return {e.node, owner_->texts_[e.reason]};
    }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }

   private:
    const FailedNodes* owner_;
    size_t i_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, order_.size()}; }

 private:
  std::vector<Entry> entries_;   // in the order added
  std::vector<uint32_t> order_;  // into entries_: by name, a name's last entry only
  std::vector<std::string> texts_;
  uint32_t last_text_ = 0;  // the text the previous node failed for, tried first
  bool sorted_ = true;      // entries_ strictly ascending by name so far
};

}  // namespace hamisim::live
