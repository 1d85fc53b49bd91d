#include "fit/description.h"

#include <algorithm>

#include "device/allocation.h"
#include "device/codec.h"

namespace hamisim::fit {

std::string_view to_string(DeviceSource source) {
  switch (source) {
    case DeviceSource::kAnnotation:
      return "annotation";
    case DeviceSource::kProfile:
      return "profile";
    case DeviceSource::kSample:
      return "sample";
  }
  return "annotation";
}

DescriptionResult read_registered_description(const model::Node& node,
                                              const device::DeviceRegistry& registry) {
  DescriptionResult out;
  std::string malformed;
  for (const auto& backend : registry.backends()) {
    device::NodeDevices nd = backend->node_devices(node);
    switch (nd.state) {
      case device::NodeDevices::State::kOk:
        for (auto& d : nd.devices) out.description.devices.push_back(std::move(d));
        break;
      case device::NodeDevices::State::kMalformed:
        if (!malformed.empty()) malformed += "; ";
        malformed += nd.message;
        break;
      case device::NodeDevices::State::kAbsent:
        break;
    }
  }
  if (const std::string* cordon =
          model::find_annotation(node.metadata, device::kDeviceCordonAnnotation)) {
    out.description.cordoned = device::parse_cordon(*cordon);
  }
  if (!out.description.devices.empty()) {
    out.state = DescriptionResult::State::kOk;
    if (!malformed.empty()) out.description.notes.push_back(malformed);
  } else if (!malformed.empty()) {
    out.state = DescriptionResult::State::kMalformed;
    out.message = malformed;
  } else {
    out.state = DescriptionResult::State::kNoDescription;
    out.message = "no device registration annotation";
  }
  return out;
}

namespace {

void append_count(std::string& out, uint64_t n) {
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
}

void append_sized(std::string& out, std::string_view bytes) {
  append_count(out, bytes.size());
  out.append(bytes);
}

}  // namespace

DescriptionCache::Key::Key(const model::Node& node) {
  size_t size = node.metadata.name.size() + 64;
  for (const auto& [k, v] : node.metadata.labels) size += k.size() + v.size() + 16;
  for (const auto& [k, v] : node.metadata.annotations) size += k.size() + v.size() + 16;
  for (const auto& [k, q] : node.status.capacity) size += k.size() + sizeof(q.nanos()) + 8;
  bytes_.reserve(size);
  append_sized(bytes_, node.metadata.name);
  for (const model::StringMap* map : {&node.metadata.labels, &node.metadata.annotations}) {
    append_count(bytes_, map->size());
    for (const auto& [k, v] : *map) {
      append_sized(bytes_, k);
      append_sized(bytes_, v);
    }
  }
  append_count(bytes_, node.status.capacity.size());
  for (const auto& [k, q] : node.status.capacity) {
    append_sized(bytes_, k);
    const __int128 nanos = q.nanos();
    bytes_.append(reinterpret_cast<const char*>(&nanos), sizeof nanos);
  }
  hash_ = std::hash<std::string_view>{}(bytes_);
}

DescriptionCache::Entry DescriptionCache::find(const Key& key, std::string_view tag) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  for (const auto& [t, entry] : it->second) {
    if (t == tag) return entry;
  }
  return nullptr;
}

DescriptionCache::Entry DescriptionCache::store(const Key& key, std::string_view tag, Entry entry) {
  std::lock_guard lock(mu_);
  if (size_ >= max_entries_) {
    entries_.clear();
    size_ = 0;
  }
  auto it = entries_.find(key);
  if (it == entries_.end()) it = entries_.emplace(key.bytes_, Tagged{}).first;
  for (auto& [t, held] : it->second) {
    if (t == tag) return held;  // another thread made it meanwhile
  }
  it->second.emplace_back(std::string(tag), entry);
  ++size_;
  return entry;
}

size_t DescriptionCache::size() const {
  std::lock_guard lock(mu_);
  return size_;
}

DescriptionMemo::~DescriptionMemo() {
  for (auto& slot : slots_) delete slot.load(std::memory_order_relaxed);
}

std::shared_ptr<const DescriptionResult> DescriptionMemo::find(uint64_t describer,
                                                               uint64_t state) const {
  for (const auto& slot : slots_) {
    const Slot* s = slot.load(std::memory_order_acquire);
    if (s == nullptr) break;  // slots fill in order
    if (s->describer == describer && s->state == state) return s->result;
  }
  return nullptr;
}

void DescriptionMemo::remember(uint64_t describer, uint64_t state,
                               std::shared_ptr<const DescriptionResult> result) const {
  auto slot = std::make_unique<const Slot>(Slot{describer, state, std::move(result)});
  for (auto& s : slots_) {
    const Slot* expected = nullptr;
    if (s.compare_exchange_strong(expected, slot.get(), std::memory_order_release,
                                  std::memory_order_acquire)) {
      slot.release();
      return;
    }
    // Another thread memoized the same answer meanwhile: keep one.
    if (expected->describer == describer && expected->state == state) return;
  }
}

uint64_t DescriptionMemo::new_describer() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

NodeUsage fresh_usage(const DeviceDescription& description) {
  NodeUsage usage;
  reset_usage(usage, description);
  return usage;
}

void reset_usage(NodeUsage& usage, const DeviceDescription& description) {
  // Every field set here, field by field: the strings and lists keep their memory (building a
  // default DeviceUsage to assign from cost more than the rest of this). A field added to
  // DeviceUsage must be added here; the size check is a reminder where it is known.
#if defined(__x86_64__) && defined(__GLIBCXX__)
  static_assert(sizeof(device::DeviceUsage) == 272, "set every DeviceUsage field below");
#endif
  usage.devices.resize(description.devices.size());
  for (size_t i = 0; i < description.devices.size(); ++i) {
    const device::DeviceInfo& info = description.devices[i];
    device::DeviceUsage& d = usage.devices[i];
    d.id.assign(info.id);
    d.index = info.index;
    d.used = 0;
    d.count = info.count;
    d.usedmem = 0;
    d.totalmem = info.devmem;
    d.usedcores = 0;
    d.totalcore = info.devcore;
    d.numa = info.numa;
    d.type.assign(info.type);
    d.mode.assign(info.mode);
    d.vendor.assign(info.device_vendor);
    d.health = info.health;
    d.mig_profiles = info.mig_profiles.empty() ? nullptr : &info.mig_profiles;
    d.mig_in_use.clear();
    d.pair_scores = &info.pair_scores;
    d.custom_info = info.custom_info.empty() ? nullptr : &info.custom_info;
    d.pods.clear();
  }
}

bool all_init_containers_succeeded(const model::Pod& pod) {
  if (pod.spec.init_containers.empty()) return false;
  for (const auto& c : pod.spec.init_containers) {
    auto it = std::find_if(pod.status.init_container_statuses.begin(),
                           pod.status.init_container_statuses.end(),
                           [&](const model::ContainerStatus& s) { return s.name == c.name; });
    if (it == pod.status.init_container_statuses.end() || !it->terminated ||
        it->terminated->exit_code != 0) {
      return false;
    }
  }
  return true;
}

device::PodSingleDevice positional_pod_devices(device::PodSingleDevice list, const model::Pod& pod,
                                               const device::DeviceBackend& backend) {
  const size_t total = pod.spec.init_containers.size() + pod.spec.containers.size();
  if (list.size() == total + 1 && list.back().empty()) {
    list.pop_back();
    return list;
  }
  std::vector<size_t> users;
  size_t index = 0;
  for (const auto* group : {&pod.spec.init_containers, &pod.spec.containers}) {
    for (const model::Container& c : *group) {
      if (backend.request_for(c).nums > 0) users.push_back(index);
      ++index;
    }
  }
  const size_t non_empty = static_cast<size_t>(
      std::count_if(list.begin(), list.end(), [](const auto& e) { return !e.empty(); }));
  // Neither form matches this pod's containers (e.g. a bare pod carrying only annotations, as
  // simulation callers send): keep HAMi's positional reading.
  if (non_empty != users.size()) return list;
  device::PodSingleDevice out(total);
  size_t next = 0;
  for (auto& e : list) {
    if (!e.empty()) out[users[next++]] = std::move(e);
  }
  return out;
}

Result<PodAllocation> decode_pod_allocation(const model::Pod& pod,
                                            const device::DeviceRegistry& registry,
                                            const model::StringMap* added) {
  auto annotation = [&](std::string_view key) -> const std::string* {
    if (added != nullptr) {
      if (auto it = added->find(key); it != added->end()) return &it->second;
    }
    return model::find_annotation(pod.metadata, key);
  };
  PodAllocation out;
  if (pod.status.phase == "Succeeded" || pod.status.phase == "Failed") return out;
  const size_t init_count = pod.spec.init_containers.size();
  const bool drop_init = all_init_containers_succeeded(pod);
  device::PodDevices devices;
  for (const auto& backend : registry.backends()) {
    const std::string* value = annotation(backend->allocated_annotation());
    if (!value || value->empty()) continue;
    auto decoded = device::decode_pod_devices(*value);
    if (!decoded) {
      return make_error(std::string(backend->allocated_annotation()) + ": " +
                        decoded.error().message);
    }
    device::PodSingleDevice list =
        positional_pod_devices(std::move(decoded).value(), pod, *backend);
    if (drop_init) {
      for (size_t i = 0; i < init_count && i < list.size(); ++i) list[i].clear();
    }
    if (backend->reads_device_pods() && !out.annotations) {
      auto all = std::make_shared<model::StringMap>(pod.metadata.annotations);
      if (added != nullptr) {
        for (const auto& [k, v] : *added) (*all)[k] = v;
      }
      out.annotations = std::move(all);
    }
    devices.emplace(std::string(backend->vendor()), std::move(list));
  }
  out.charges = device::collapse_init_container_usage(devices, init_count);
  if (const std::string* mig = annotation(device::kMigAllocationsAnnotation)) {
    auto decoded = device::decode_mig_allocations(*mig);
    if (!decoded) {
      return make_error(std::string(device::kMigAllocationsAnnotation) + ": " +
                        decoded.error().message);
    }
    out.mig = std::move(decoded).value();
  }
  return out;
}

void add_pod_usage(NodeUsage& usage, const PodAllocation& allocation) {
  // MIG allocations grouped by GPU, consumed in order as device entries match them.
  std::map<std::string, std::vector<const device::MigAllocation*>, std::less<>> mig_by_gpu;
  for (const auto& m : allocation.mig) mig_by_gpu[m.gpu_uuid].push_back(&m);
  auto to_in_use = [](const device::MigAllocation& m) {
    return device::MigInUse{m.profile, m.placement,
                            m.mig_uuid.has_value() && m.gpu_instance_id.has_value() &&
                                m.compute_instance_id.has_value()};
  };

  for (const auto& [vendor, charges] : allocation.charges) {
    for (const device::DeviceCharge& c : charges) {
      auto dev = std::find_if(usage.devices.begin(), usage.devices.end(),
                              [&](const device::DeviceUsage& d) { return d.id == c.uuid; });
      // Unknown or stale UUIDs change nothing (HAMi fix 98c520e9).
      if (dev == usage.devices.end()) continue;
      dev->used += std::max<int64_t>(c.slots, 1);
      dev->usedmem += c.usedmem;
      dev->usedcores += c.usedcores;
      if (allocation.annotations) dev->pods.push_back({allocation.annotations, c.usedcores});
      auto pending = mig_by_gpu.find(c.uuid);
      const bool has_allocation = pending != mig_by_gpu.end() && !pending->second.empty();
      if (dev->mode == "mig") {
        if (has_allocation) {
          dev->mig_in_use.push_back(to_in_use(*pending->second.front()));
          pending->second.erase(pending->second.begin());
        } else {
          dev->health = false;  // a MIG GPU in use without a recorded instance: fail closed
        }
      } else if (has_allocation) {
        dev->health = false;  // a MIG allocation on a non-MIG GPU
      }
    }
  }
  // Allocations no device entry consumed.
  for (const auto& [gpu, rest] : mig_by_gpu) {
    if (rest.empty()) continue;
    auto dev = std::find_if(usage.devices.begin(), usage.devices.end(),
                            [&](const device::DeviceUsage& d) { return d.id == gpu; });
    if (dev == usage.devices.end()) {
      for (auto& d : usage.devices) {
        if (d.mode == "mig") d.health = false;
      }
      continue;
    }
    if (dev->mode == "mig") {
      for (const auto* m : rest) dev->mig_in_use.push_back(to_in_use(*m));
    } else {
      dev->health = false;
    }
  }
}

}  // namespace hamisim::fit
