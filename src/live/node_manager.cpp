#include "live/node_manager.h"

#include <algorithm>

namespace hamisim::live {

NodeManager::NodeManager() : table_(std::make_shared<const NodeTable>()) {}

std::shared_ptr<const NodeTable> NodeManager::snapshot() const {
  std::lock_guard lock(mutex_);
  return table_;
}

template <class Edit>
void NodeManager::edit_node(const std::string& node, Edit&& edit) {
  // Writers are the source and registration threads; serializing them on the same mutex that
  // guards the swap keeps every edit based on the latest table.
  std::lock_guard lock(mutex_);
  auto it = table_->find(node);
  std::shared_ptr<LiveNode> entry;
  if (it != table_->end()) {
    entry = std::make_shared<LiveNode>(*it->second);
  } else {
    entry = std::make_shared<LiveNode>();
    entry->name = node;
  }
  const bool keep = edit(*entry);
  auto next = std::make_shared<NodeTable>(*table_);
  if (keep) {
    (*next)[node] = std::move(entry);
  } else {
    next->erase(node);
  }
  table_ = std::move(next);
}

void NodeManager::set_vendor_devices(const std::string& node, std::string_view vendor,
                                     std::vector<device::DeviceInfo> devices,
                                     std::set<std::string, std::less<>> cordoned) {
  edit_node(node, [&](LiveNode& n) {
    auto& list = n.description.devices;
    // Replace this vendor's devices where they were, so registration order is kept.
    auto first = std::find_if(list.begin(), list.end(), [&](const device::DeviceInfo& d) {
      return d.device_vendor == vendor;
    });
    const auto at = first - list.begin();
    std::erase_if(list, [&](const device::DeviceInfo& d) { return d.device_vendor == vendor; });
    list.insert(list.begin() + std::min<std::ptrdiff_t>(at, std::ssize(list)),
                std::make_move_iterator(devices.begin()), std::make_move_iterator(devices.end()));
    n.description.cordoned = std::move(cordoned);
    return true;
  });
}

void NodeManager::remove_vendor(const std::string& node, std::string_view vendor) {
  {
    std::lock_guard lock(mutex_);
    if (!table_->contains(node)) return;
  }
  edit_node(node, [&](LiveNode& n) {
    std::erase_if(n.description.devices,
                  [&](const device::DeviceInfo& d) { return d.device_vendor == vendor; });
    return !n.description.devices.empty();
  });
}

void NodeManager::remove_node(const std::string& node) {
  std::lock_guard lock(mutex_);
  if (!table_->contains(node)) return;
  auto next = std::make_shared<NodeTable>(*table_);
  next->erase(node);
  table_ = std::move(next);
}

void NodeManager::set_cordon(const std::string& node, std::set<std::string, std::less<>> cordoned) {
  {
    std::lock_guard lock(mutex_);
    auto it = table_->find(node);
    if (it == table_->end() || it->second->description.cordoned == cordoned) return;
  }
  edit_node(node, [&](LiveNode& n) {
    n.description.cordoned = std::move(cordoned);
    return !n.description.devices.empty();  // the node may have gone meanwhile
  });
}

bool NodeManager::has_vendor(const std::string& node, std::string_view vendor) const {
  auto table = snapshot();
  auto it = table->find(node);
  if (it == table->end()) return false;
  const auto& devices = it->second->description.devices;
  return std::any_of(devices.begin(), devices.end(),
                     [&](const device::DeviceInfo& d) { return d.device_vendor == vendor; });
}

}  // namespace hamisim::live
