#pragma once
// HAMi's node manager (reference hami-scheduler-core.md §4.1): the device inventory of every
// registered node, as the registration loop last refreshed it. Readers take an immutable
// snapshot in O(1) and keep it as long as they like; writers publish a new table
// (copy-on-write), so a filter never waits for the registration pass and never sees half of
// one.

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include "fit/inventory.h"

namespace hamisim::live {

struct LiveNode {
  std::string name;
  fit::NodeInventory inventory;  // devices of every vendor; cordon kept current
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
