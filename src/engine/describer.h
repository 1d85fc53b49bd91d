#pragma once
// How the engine describes a node's devices (spec §5.3): a real node that registered them by
// its registration; a template or an unregistered node by an explicitly named profile, a
// matching profile (under the reconciler's observations), or its own registration normalized
// (§7.2); otherwise not at all. Only engine::Engine owns one.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "fit/description.h"
#include "profile/device_profiles.h"
#include "profile/reconcile.h"

namespace hamisim::engine {

class Describer {
 public:
  // `registry` must outlive the describer; `profiles` is not null.
  Describer(const device::DeviceRegistry& registry,
            std::shared_ptr<const profile::DeviceProfiles> profiles);
  Describer(const Describer&) = delete;
  Describer& operator=(const Describer&) = delete;

  // Shared and immutable; a NodeUsage built from it must not outlive it. Thread-safe.
  std::shared_ptr<const fit::DescriptionResult> describe(const model::Node& node) const {
    return describe(node, fit::DescriptionCache::Key(node));
  }
  // The same, memoized in the node under the observations it was described under.
  std::shared_ptr<const fit::DescriptionResult> describe(const fit::KeyedNode& keyed) const;

  // Replaces what reconciliation observed; onMismatch policies act on it from the next
  // request on. Safe to call while requests are served.
  void set_observations(std::shared_ptr<const profile::ProfileObservations> observations);

 private:
  // `key` must be DescriptionCache::Key(node).
  std::shared_ptr<const fit::DescriptionResult> describe(
      const model::Node& node, const fit::DescriptionCache::Key& key) const;

  struct Observed {
    std::shared_ptr<const profile::ProfileObservations> observations;
    uint64_t generation = 0;
  };
  Observed observed() const;

  const device::DeviceRegistry& registry_;
  std::shared_ptr<const profile::DeviceProfiles> profiles_;
  const uint64_t id_ = fit::DescriptionMemo::new_describer();
  mutable std::mutex mu_;  // guards observations_ (the pointer, not the pointee)
  std::shared_ptr<const profile::ProfileObservations> observations_;
  // Counts changes of the observations; part of cached and memoized entries. Written under
  // mu_, read without it before describing, so a description is never older than the state
  // it is memoized under.
  std::atomic<uint64_t> generation_{0};
  // Registrations, normalized samples and profile descriptions, by the node's inputs.
  mutable fit::DescriptionCache cache_;
};

}  // namespace hamisim::engine
