#pragma once
// HAMi's quota manager (reference hami-scheduler-core.md §4.4) for the live path: device
// ResourceQuota limits and the device memory and cores each namespace's pods hold, readable
// by concurrent filters while the source thread writes.

#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "device/backend.h"
#include "fit/quota.h"
#include "state/cluster_source.h"

namespace hamisim::live {

class QuotaManager final : public device::QuotaView {
 public:
  explicit QuotaManager(const device::DeviceRegistry& registry) : quota_(registry) {}

  // ResourceQuota stream. An update replaces the old object's limits with the new ones under
  // one lock, so no reader sees a namespace without its limit in between.
  void on_quota(state::EventType type, const model::ResourceQuota& quota);

  // Pod usage: add (sign 1) or release (sign -1). `replace` swaps one allocation for another
  // atomically.
  void add_usage(std::string_view namespace_, const fit::PodAllocation& allocation, int sign);
  void replace_usage(std::string_view namespace_, const fit::PodAllocation& before,
                     const fit::PodAllocation& after);

  bool fits(std::string_view ns, std::string_view vendor, int64_t memory,
            int64_t cores) const override;
  bool has_limits(std::string_view ns) const;
  // The admission webhook's quota pre-check (nullopt: fits).
  std::optional<std::string> admission_check(const model::Pod& pod) const;
  // Every (namespace, resource) entry with its usage and limit (metrics).
  std::vector<fit::DeviceQuota::EntryView> entries() const;

 private:
  mutable std::shared_mutex mutex_;
  fit::DeviceQuota quota_;
  // The last version of each ResourceQuota, so an update or delete can remove its limits.
  std::map<std::pair<std::string, std::string>, model::ResourceQuota> known_;
};

}  // namespace hamisim::live
