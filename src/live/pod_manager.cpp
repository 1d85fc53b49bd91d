#include "live/pod_manager.h"

#include <algorithm>
#include <mutex>
#include <optional>

#include "device/codec.h"

namespace hamisim::live {

std::string PodManager::allocation_source(const model::Pod& pod) const {
  std::string out;
  auto append = [&](std::string_view key) {
    const std::string* v = model::find_annotation(pod.metadata, key);
    out += v ? *v : std::string_view();
    out += '\x1f';  // unit separator: never inside an annotation we decode successfully
  };
  for (const auto& backend : registry_.backends()) append(backend->allocated_annotation());
  append(device::kMigAllocationsAnnotation);
  // Init containers stop counting once they all succeeded: by the very test the decoding uses,
  // so that whatever changes its answer makes the pod decoded again.
  out += fit::all_init_containers_succeeded(pod) ? '1' : '0';
  return out;
}

void PodManager::on_pod(state::EventType type, const model::Pod& pod) {
  const std::string& uid = pod.metadata.uid;
  if (type == state::EventType::kDeleted) {
    // By uid alone: after a relist the source reports a vanished pod by its identity only
    // (ClusterHandler), and an older view of it may predate the filter's annotations while the
    // filter's reservation is already here.
    std::unique_lock lock(mutex_);
    erase_locked(uid);
    return;
  }
  const std::string* node = model::find_annotation(pod.metadata, device::kAssignedNodeAnnotation);
  if (node == nullptr) return;  // never placed by a HAMi filter
  if (pod.status.phase == "Succeeded" || pod.status.phase == "Failed") {
    std::unique_lock lock(mutex_);
    erase_locked(uid);
    return;
  }
  // A terminating pod keeps what it holds until it is gone (HAMi c5a59d11); one that is not
  // cached is not added.
  if (pod.metadata.deletion_timestamp.has_value()) return;
  std::string source = allocation_source(pod);
  enum class Verdict { kKeep, kConfirm, kReplace };
  auto judge = [&](const PodRecord* r) {
    if (r == nullptr) return Verdict::kReplace;
    const bool same = r->source == source && r->node == *node;
    // An unconfirmed reservation is only confirmed by its own annotations; other ones are
    // older than the filter's patch.
    if (r->unconfirmed) return same ? Verdict::kConfirm : Verdict::kKeep;
    return same ? Verdict::kKeep : Verdict::kReplace;
  };
  auto find = [&]() -> PodRecord* {
    auto it = pods_.find(uid);
    return it == pods_.end() ? nullptr : &it->second;
  };
  std::optional<fit::PodAllocation> allocation;
  while (true) {
    Verdict verdict;
    {
      std::shared_lock lock(mutex_);
      verdict = judge(find());
    }
    if (verdict == Verdict::kKeep) return;
    if (verdict == Verdict::kReplace && !allocation) {
      auto decoded = fit::decode_pod_allocation(pod, registry_);
      if (!decoded) {
        if (on_bad_pod) on_bad_pod(pod, decoded.error().message);
        return;
      }
      allocation = std::move(decoded).value();
    }
    std::unique_lock lock(mutex_);
    PodRecord* record = find();
    switch (judge(record)) {
      case Verdict::kKeep:
        return;
      case Verdict::kConfirm:
        record->unconfirmed = false;
        return;
      case Verdict::kReplace:
        if (!allocation) break;  // changed meanwhile: decode outside the lock first
        put_locked(PodRecord{uid, pod.metadata.namespace_, pod.metadata.name, *node,
                             std::move(*allocation), std::move(source)});
        return;
    }
  }
}

Status PodManager::reserve(const model::Pod& pod) {
  const std::string* node = model::find_annotation(pod.metadata, device::kAssignedNodeAnnotation);
  if (node == nullptr)
    return make_error("reservation without " + std::string(device::kAssignedNodeAnnotation));
  auto allocation = fit::decode_pod_allocation(pod, registry_);
  if (!allocation) return make_error(allocation.error().message);
  std::unique_lock lock(mutex_);
  put_locked(PodRecord{pod.metadata.uid, pod.metadata.namespace_, pod.metadata.name, *node,
                       std::move(allocation).value(), allocation_source(pod),
                       /*unconfirmed=*/true});
  return Ok{};
}

bool PodManager::evict(std::string_view uid) {
  std::unique_lock lock(mutex_);
  return erase_locked(uid);
}

void PodManager::put_locked(PodRecord record) {
  auto it = pods_.find(record.uid);
  if (it == pods_.end()) {
    quota_.add_usage(record.namespace_, record.allocation, 1);
    by_node_[record.node].insert(record.uid);
    touch_locked(record.node);
    std::string uid = record.uid;
    pods_.emplace(std::move(uid), std::move(record));
    return;
  }
  PodRecord& old = it->second;
  if (old.namespace_ == record.namespace_) {
    quota_.replace_usage(record.namespace_, old.allocation, record.allocation);
  } else {
    quota_.add_usage(old.namespace_, old.allocation, -1);
    quota_.add_usage(record.namespace_, record.allocation, 1);
  }
  if (old.node != record.node) {
    if (auto n = by_node_.find(old.node); n != by_node_.end()) {
      n->second.erase(old.uid);
      if (n->second.empty()) by_node_.erase(n);
    }
    by_node_[record.node].insert(record.uid);
    touch_locked(old.node);
  }
  touch_locked(record.node);
  old = std::move(record);
}

bool PodManager::erase_locked(std::string_view uid) {
  auto it = pods_.find(std::string(uid));
  if (it == pods_.end()) return false;
  quota_.add_usage(it->second.namespace_, it->second.allocation, -1);
  touch_locked(it->second.node);
  if (auto n = by_node_.find(it->second.node); n != by_node_.end()) {
    n->second.erase(it->second.uid);
    if (n->second.empty()) by_node_.erase(n);
  }
  pods_.erase(it);
  return true;
}

uint64_t PodManager::add_node_usage(std::string_view node, fit::NodeUsage& usage) const {
  const std::string key(node);
  std::shared_lock lock(mutex_);
  auto v = node_versions_.find(key);
  const uint64_t version = v == node_versions_.end() ? 0 : v->second.load();
  auto n = by_node_.find(key);
  if (n == by_node_.end()) return version;
  for (const std::string& uid : n->second) fit::add_pod_usage(usage, pods_.at(uid).allocation);
  return version;
}

const std::atomic<uint64_t>& PodManager::version_slot(std::string_view node) {
  {
    std::shared_lock lock(mutex_);
    if (auto v = node_versions_.find(node); v != node_versions_.end()) return v->second;
  }
  std::unique_lock lock(mutex_);
  return node_versions_.try_emplace(std::string(node)).first->second;  // 0: no pod seen yet
}

PodManager::Totals PodManager::totals() const {
  Totals t;
  std::shared_lock lock(mutex_);
  t.pods = pods_.size();
  for (const auto& [uid, record] : pods_) {
    for (const auto& [vendor, charges] : record.allocation.charges) {
      for (const auto& c : charges) {
        t.memory += c.usedmem;
        t.cores += c.usedcores;
      }
    }
  }
  return t;
}

size_t PodManager::size() const {
  std::shared_lock lock(mutex_);
  return pods_.size();
}

std::vector<PodRecord> PodManager::list() const {
  std::vector<PodRecord> out;
  {
    std::shared_lock lock(mutex_);
    out.reserve(pods_.size());
    for (const auto& [uid, record] : pods_) out.push_back(record);
  }
  std::sort(out.begin(), out.end(),
            [](const PodRecord& a, const PodRecord& b) { return a.uid < b.uid; });
  return out;
}

std::vector<PodManager::Reservation> PodManager::unconfirmed() const {
  std::vector<Reservation> out;
  std::shared_lock lock(mutex_);
  for (const auto& [uid, record] : pods_) {
    if (record.unconfirmed) out.push_back({uid, record.namespace_, record.name, record.node});
  }
  return out;
}

}  // namespace hamisim::live
