#pragma once
// Tests only: an InventoryProvider that describes every node by its own registration, cached
// by its inputs. The product describes nodes through engine::Engine alone; tests of the cache
// and of vendors' decoders use this to look at registrations without templates or profiles.

#include "fit/inventory.h"

namespace hamisim::fit {

class RegisteredInventoryProvider final : public InventoryProvider {
 public:
  explicit RegisteredInventoryProvider(const device::DeviceRegistry& registry)
      : registry_(registry) {}
  std::shared_ptr<const InventoryResult> describe(const model::Node& node,
                                                  const DescriptionCache::Key& key) const override {
    return cache_.get(key, "registered",
                      [&] { return read_registered_inventory(node, registry_); });
  }

 private:
  const device::DeviceRegistry& registry_;
  mutable DescriptionCache cache_;
};

}  // namespace hamisim::fit
