#pragma once
// HAMi's pod manager (reference hami-scheduler-core.md §4.3): the device allocations of every
// pod that carries `hami.io/vgpu-node`, indexed by node, plus the live filter's reservations.
// Quota usage moves with every change here, so the two never disagree.
//
// Difference from HAMi, on purpose: an update whose allocated annotations changed is decoded
// again (HAMi keeps the first decode), so after any sequence of events the manager holds
// exactly what the pod objects say. A filter reservation stands until an event carries the
// annotations it was made from (the filter's patch came back); events with other annotations
// before that are older than the patch (a lagging watch, a refilter that moved the pod) and do
// not replace it. A delete or a terminal phase always removes the entry.

#include <atomic>
#include <functional>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "device/codec.h"
#include "device/registry.h"
#include "fit/description.h"
#include "live/quota_manager.h"
#include "model/string_hash.h"
#include "state/cluster_source.h"

namespace hamisim::live {

struct PodRecord {
  std::string uid;
  std::string namespace_;
  std::string name;
  std::string node;  // from hami.io/vgpu-node, not spec.nodeName
  fit::PodAllocation allocation;
  // The annotation values the allocation was decoded from; an event carrying the same values
  // needs no decoding.
  std::string source;
  // Made by the live filter and not yet seen in an event.
  bool unconfirmed = false;
};

class PodManager {
 public:
  PodManager(const device::DeviceRegistry& registry, QuotaManager& quota)
      : registry_(registry), quota_(quota) {}

  // The pod stream (source thread). Pods whose annotations cannot be decoded are ignored, as
  // HAMi does; `on_bad_pod` hears about them.
  void on_pod(state::EventType type, const model::Pod& pod);
  std::function<void(const model::Pod&, const std::string& error)> on_bad_pod;

  // The live filter's reservation: `pod` carries the annotations about to be patched.
  // Errors: the annotations do not decode (a bug in the caller).
  Status reserve(const model::Pod& pod);
  // Removes the pod's entry and releases its quota usage; false when it had none.
  bool evict(std::string_view uid);

  // Adds the usage of every pod assigned to `node` (HAMi getNodesUsage for one node) and
  // returns the node's version that usage reflects.
  uint64_t add_node_usage(std::string_view node, fit::NodeUsage& usage) const;
  // The node's version: changes whenever a pod assigned to `node` is added, changed or
  // removed, so a usage built at one version is current while the version is unchanged. The
  // slot lives as long as the manager: the live filter keeps it per node and reads the
  // version without a lookup by name.
  const std::atomic<uint64_t>& version_slot(std::string_view node);

  size_t size() const;
  // Device memory (MiB) and cores all entries hold, for metrics.
  struct Totals {
    size_t pods = 0;
    int64_t memory = 0;
    int64_t cores = 0;
  };
  Totals totals() const;
  // Every entry, sorted by uid (tests, invariant checks).
  std::vector<PodRecord> list() const;
  // Calls f(const PodRecord&) with every entry, in no order, under the read lock, so f must not
  // call the manager. For metrics: a scrape cannot afford list()'s copy of 150,000 records.
  template <class F>
  void for_each(F&& f) const {
    std::shared_lock lock(mutex_);
    for (const auto& [uid, record] : pods_) f(record);
  }
  // The live filter's reservations not yet seen in an event, without their allocations: each
  // registration pass looks at these, and copying every entry for it cost a pass over
  // 150,000 pods hundreds of megabytes.
  struct Reservation {
    std::string uid;
    std::string namespace_;
    std::string name;
    std::string node;
  };
  std::vector<Reservation> unconfirmed() const;

 private:
  // The annotation values that determine the allocation, in a fixed order.
  std::string allocation_source(const model::Pod& pod) const;
  // Inserts or replaces under the write lock, keeping quota and the node index in step.
  void put_locked(PodRecord record);
  bool erase_locked(std::string_view uid);

  const device::DeviceRegistry& registry_;
  QuotaManager& quota_;
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, PodRecord> pods_;  // by uid
  // node -> uids, sorted so usage is built in the same order every time
  std::unordered_map<std::string, std::set<std::string, std::less<>>> by_node_;
  // node -> version, from one counter, so a node emptied and filled again never repeats one.
  // Entries are never erased (a version must never repeat for a name), so slots stay valid.
  model::StringHashMap<std::atomic<uint64_t>> node_versions_;
  uint64_t version_counter_ = 0;
  void touch_locked(const std::string& node) {
    node_versions_.try_emplace(node).first->second.store(++version_counter_,
                                                         std::memory_order_release);
  }
};

}  // namespace hamisim::live
