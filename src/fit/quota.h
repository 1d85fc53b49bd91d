#pragma once
// HAMi's device ResourceQuota accounting (reference hami-scheduler-core.md §4.4): per
// namespace, the `limits.<memory name>` and `limits.<cores name>` of every vendor, and the
// device memory and cores the namespace's pods hold. Used by the planner to report pods no
// new node can help, and by the admission check.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device/backend.h"
#include "device/registry.h"
#include "fit/description.h"
#include "model/objects.h"

namespace hamisim::fit {

class DeviceQuota final : public device::QuotaView {
 public:
  explicit DeviceQuota(const device::DeviceRegistry& registry) : registry_(registry) {}

  // AddQuota: every `spec.hard` key `limits.<tracked name>` with an exact int64 value sets
  // that limit (several quotas setting one key: the last one wins, as in HAMi).
  void add_quota(const model::ResourceQuota& quota);
  // DelQuota: the limits this quota sets are cleared (usage is kept). With several quotas
  // setting one key, deleting any of them clears it, as in HAMi.
  void remove_quota(const model::ResourceQuota& quota);
  // countPodDevices: the pod's device memory and cores, per vendor's resource names, added
  // to (sign 1) or removed from (sign -1, clamped at 0) its namespace's usage.
  void add_usage(std::string_view namespace_, const PodAllocation& allocation, int sign = 1);

  // FitQuota: fits when the vendor is unknown or the namespace has no entry; an explicit 0
  // limit blocks.
  bool fits(std::string_view ns, std::string_view vendor, int64_t memory,
            int64_t cores) const override;
  // True when some limit applies in the namespace (otherwise every fits() is true).
  bool has_limits(std::string_view ns) const;

  // The admission webhook's fitResourceQuota: per vendor, the pod's request is the larger of
  // its app containers' sum and its largest init container (memreq×nums, coresreq×nums).
  // nullopt when it fits; otherwise which limit it exceeds, e.g.
  // "nvidia.com/gpumem: used 20000 + requested 12000 > limit 24000 in namespace team-a".
  std::optional<std::string> admission_check(const model::Pod& pod) const;

  // One (namespace, resource name) entry, for metrics. Entries appear with a pod's usage or a
  // quota's limit and are never removed (HAMi's quota manager keeps them too).
  struct EntryView {
    std::string namespace_;
    std::string resource;  // "nvidia.com/gpumem"
    int64_t used = 0;
    int64_t limit = 0;
    bool limit_set = false;
  };
  // Sorted by namespace, then resource.
  std::vector<EntryView> entries() const;

 private:
  struct Entry {
    int64_t used = 0;
    int64_t limit = 0;
    bool limit_set = false;
  };
  const Entry* entry(std::string_view ns, std::string_view resource) const;
  // Calls apply(entry, value) for every managed `limits.<name>` the quota sets.
  template <class F>
  void for_each_limit(const model::ResourceQuota& quota, F&& apply);

  const device::DeviceRegistry& registry_;
  std::map<std::string, std::map<std::string, Entry, std::less<>>, std::less<>> namespaces_;
};

}  // namespace hamisim::fit
