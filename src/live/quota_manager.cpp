#include "live/quota_manager.h"

#include <mutex>

namespace hamisim::live {

void QuotaManager::on_quota(state::EventType type, const model::ResourceQuota& quota) {
  std::unique_lock lock(mutex_);
  auto key = std::make_pair(quota.metadata.namespace_, quota.metadata.name);
  if (auto it = known_.find(key); it != known_.end()) {
    quota_.remove_quota(it->second);
    known_.erase(it);
  }
  if (type == state::EventType::kDeleted) return;
  quota_.add_quota(quota);
  known_.emplace(std::move(key), quota);
}

void QuotaManager::add_usage(std::string_view namespace_, const fit::PodAllocation& allocation,
                             int sign) {
  std::unique_lock lock(mutex_);
  quota_.add_usage(namespace_, allocation, sign);
}

void QuotaManager::replace_usage(std::string_view namespace_, const fit::PodAllocation& before,
                                 const fit::PodAllocation& after) {
  std::unique_lock lock(mutex_);
  quota_.add_usage(namespace_, before, -1);
  quota_.add_usage(namespace_, after, 1);
}

bool QuotaManager::fits(std::string_view ns, std::string_view vendor, int64_t memory,
                        int64_t cores) const {
  std::shared_lock lock(mutex_);
  return quota_.fits(ns, vendor, memory, cores);
}

bool QuotaManager::has_limits(std::string_view ns) const {
  std::shared_lock lock(mutex_);
  return quota_.has_limits(ns);
}

std::optional<std::string> QuotaManager::admission_check(const model::Pod& pod) const {
  std::shared_lock lock(mutex_);
  return quota_.admission_check(pod);
}

std::vector<fit::DeviceQuota::EntryView> QuotaManager::entries() const {
  std::shared_lock lock(mutex_);
  return quota_.entries();
}

}  // namespace hamisim::live
