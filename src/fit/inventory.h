#pragma once
// Where a node's devices come from, and the usage view built from them.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "device/allocation.h"
#include "device/registry.h"
#include "device/types.h"
#include "model/objects.h"
#include "model/result.h"

namespace hamisim::fit {

enum class DeviceSource { kAnnotation, kProfile, kSample };
std::string_view to_string(DeviceSource source);

// A node's decoded device description, all vendors, in registration order.
struct NodeInventory {
  std::vector<device::DeviceInfo> devices;
  std::set<std::string, std::less<>> cordoned;  // hami.io/device-cordon
  DeviceSource source = DeviceSource::kAnnotation;
  std::string profile;  // device profile name when source is a profile
  // Warnings about the description (a vendor whose registration could not be decoded while
  // another vendor's could, a sample that diverges from its profile, ...).
  std::vector<std::string> notes;
};

struct InventoryResult {
  enum class State { kOk, kNoDescription, kMalformed, kRejected };
  State state = State::kNoDescription;
  NodeInventory inventory;
  std::string message;  // why, when not kOk
};

// Decodes every configured vendor's registration annotation on the node (spec §5.3 step 3/4).
// Nothing at all -> kNoDescription; a registration present but undecodable (and no vendor
// decoded) -> kMalformed with the decoder's message.
InventoryResult read_registered_inventory(const model::Node& node,
                                          const device::DeviceRegistry& registry);

// The seam through which template nodes get devices from other places (device profiles,
// normalized warm samples). The default reads the node's own registration.
class InventoryProvider {
 public:
  virtual ~InventoryProvider() = default;
  virtual InventoryResult inventory_for(const model::Node& node) const = 0;
};

class RegisteredInventoryProvider final : public InventoryProvider {
 public:
  explicit RegisteredInventoryProvider(const device::DeviceRegistry& registry)
      : registry_(registry) {}
  InventoryResult inventory_for(const model::Node& node) const override {
    return read_registered_inventory(node, registry_);
  }

 private:
  const device::DeviceRegistry& registry_;
};

// Per-device usage of one node while deciding. Holds pointers into the inventory's pair
// scores: it must not outlive the NodeInventory it was built from.
struct NodeUsage {
  std::vector<device::DeviceUsage> devices;
};

// HAMi buildNodeUsage: one DeviceUsage per registered device with zero usage.
NodeUsage fresh_usage(const NodeInventory& inventory);

// One pod's allocation as recorded in its annotations (what the pod manager keeps).
struct PodAllocation {
  std::map<std::string, std::vector<device::DeviceCharge>, std::less<>> charges;  // per vendor
  std::vector<device::MigAllocation> mig;
  // The pod's annotations, kept when a backend charged here reads the pods on its devices.
  std::shared_ptr<const model::StringMap> annotations;
  bool empty() const { return charges.empty() && mig.empty(); }
};

// Decodes the allocated annotation of every vendor plus MIG allocations, collapsing init
// containers (and dropping them once they all succeeded). Terminated pods allocate nothing.
// Errors name the annotation and the problem.
Result<PodAllocation> decode_pod_allocation(const model::Pod& pod,
                                            const device::DeviceRegistry& registry);

// HAMi getNodesUsage for one pod (reference: hami-device-model.md §4.3), including the
// fail-closed MIG rules.
void add_pod_usage(NodeUsage& usage, const PodAllocation& allocation);

}  // namespace hamisim::fit
