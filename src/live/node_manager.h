#pragma once
// HAMi's node manager (reference hami-scheduler-core.md §4.1): the device description of every
// registered node, as the registration loop last refreshed it. Readers take an immutable
// snapshot in O(1) and keep it as long as they like; writers publish a new table
// (copy-on-write), so a filter never waits for the registration pass and never sees half of
// one.

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include "fit/description.h"

namespace hamisim::live {

// The live filter's usage of one node's pods (LiveScheduler::filter), kept in the node's entry
// so that a filter finds it with the node's one lookup by name, and reused while the pod
// manager's version for the node is unchanged. Only filters touch it, one at a time (under
// LiveScheduler's filter mutex). A copy starts empty: NodeManager's edits copy an entry, the
// usage points into the description of the node it was built for, and a filter may be writing
// the original meanwhile, so a copy reads nothing of it.
struct FilterUsage {
  static constexpr uint64_t kNoVersion = std::numeric_limits<uint64_t>::max();  // never one
  FilterUsage() = default;
  FilterUsage(const FilterUsage&) {}
  FilterUsage& operator=(const FilterUsage&) = delete;

  const std::atomic<uint64_t>* version_slot = nullptr;  // the pod manager's, for this node
  uint64_t version = kNoVersion;  // the pod manager's version `usage` was built at
  fit::NodeUsage usage;
};

struct LiveNode {
  std::string name;
  fit::DeviceDescription description;  // devices of every vendor; cordon kept current
  mutable FilterUsage filter_usage;
};

using NodeTable = std::unordered_map<std::string, std::shared_ptr<const LiveNode>>;

class NodeManager {
 public:
  NodeManager();

  std::shared_ptr<const NodeTable> snapshot() const;

  // HAMi addNode: replaces this vendor's devices (other vendors are kept).
  void set_vendor_devices(const std::string& node, std::string_view vendor,
                          std::vector<device::DeviceInfo> devices,
                          std::set<std::string, std::less<>> cordoned);
  // HAMi rmNodeDevices: drops the vendor; the node goes when no vendor is left.
  void remove_vendor(const std::string& node, std::string_view vendor);
  void remove_node(const std::string& node);
  // hami.io/device-cordon changed: applied at once (HAMi waits for the next refresh).
  void set_cordon(const std::string& node, std::set<std::string, std::less<>> cordoned);

  bool has_vendor(const std::string& node, std::string_view vendor) const;

 private:
  // Publishes edit(copy of the node's entry); a null result removes the node.
  template <class Edit>
  void edit_node(const std::string& node, Edit&& edit);

  mutable std::mutex mutex_;  // guards the pointer swap only
  std::shared_ptr<const NodeTable> table_;
};

}  // namespace hamisim::live
