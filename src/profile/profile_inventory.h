#pragma once
// Where a template node's devices come from (spec §5.3): an explicitly named profile, a
// matching profile, the node's own registration (normalized for templates, §7.2), or nothing.

#include <atomic>
#include <memory>
#include <mutex>

#include "fit/inventory.h"
#include "profile/device_profiles.h"
#include "profile/reconcile.h"

namespace hamisim::profile {

class ProfileInventoryProvider final : public fit::InventoryProvider {
 public:
  ProfileInventoryProvider(const device::DeviceRegistry& registry,
                           std::shared_ptr<const DeviceProfiles> profiles);

  std::shared_ptr<const fit::InventoryResult> describe(
      const model::Node& node, const fit::DescriptionCache::Key& key) const override;

  // Replaces what reconciliation observed; onMismatch policies act on it from the next
  // request on. Safe to call while requests are served.
  void set_observations(std::shared_ptr<const ProfileObservations> observations);

 protected:
  uint64_t state() const override { return generation_.load(std::memory_order_acquire); }

 private:
  struct Observed {
    std::shared_ptr<const ProfileObservations> observations;
    uint64_t generation = 0;
  };
  Observed observed() const;

  const device::DeviceRegistry& registry_;
  std::shared_ptr<const DeviceProfiles> profiles_;
  mutable std::mutex mu_;  // guards observations_ (the pointer, not the pointee)
  std::shared_ptr<const ProfileObservations> observations_;
  // Counts changes of the observations; part of cached entries. Written under mu_, read
  // without it by state().
  std::atomic<uint64_t> generation_{0};
  // Registrations, normalized samples and profile descriptions, by the node's inputs.
  mutable fit::DescriptionCache cache_;
};

// A registration sampled from a real node, made to describe a fresh node: every device
// healthy, per-GPU cordon ignored (spec §7.2).
void normalize_sample(fit::NodeInventory& inventory);

}  // namespace hamisim::profile
