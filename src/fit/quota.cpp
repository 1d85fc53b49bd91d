#include "fit/quota.h"

#include <algorithm>

#include "device/allocation.h"

namespace hamisim::fit {

namespace {
constexpr std::string_view kLimitsPrefix = "limits.";
}

template <class F>
void DeviceQuota::for_each_limit(const model::ResourceQuota& quota, F&& apply) {
  for (const auto& backend : registry_.backends()) {
    const auto& names = backend->resource_names();
    for (const std::string* name : {&names.memory, &names.cores}) {
      if (name->empty()) continue;
      auto it = quota.spec.hard.find(std::string(kLimitsPrefix) + *name);
      if (it == quota.spec.hard.end()) continue;
      std::optional<int64_t> v = it->second.as_int64();
      if (!v) continue;  // HAMi uses only exact int64 quantities
      apply(namespaces_[quota.metadata.namespace_][*name], *v);
    }
  }
}

void DeviceQuota::add_quota(const model::ResourceQuota& quota) {
  for_each_limit(quota, [](Entry& e, int64_t limit) {
    e.limit = limit;
    e.limit_set = true;
  });
}

void DeviceQuota::remove_quota(const model::ResourceQuota& quota) {
  for_each_limit(quota, [](Entry& e, int64_t) {
    e.limit = 0;
    e.limit_set = false;
  });
}

void DeviceQuota::add_usage(std::string_view namespace_, const PodAllocation& allocation,
                            int sign) {
  for (const auto& [vendor, charges] : allocation.charges) {
    const device::DeviceBackend* backend = registry_.find(vendor);
    if (backend == nullptr) continue;
    const auto& names = backend->resource_names();
    device::ChargeTotals t = device::total_charges(charges);
    auto& ns = namespaces_[std::string(namespace_)];
    auto apply = [&](const std::string& name, int64_t amount) {
      if (name.empty() || amount == 0) return;
      Entry& e = ns[name];
      e.used = std::max<int64_t>(0, e.used + sign * amount);
    };
    apply(names.memory, t.memory);
    apply(names.cores, t.cores);
  }
}

const DeviceQuota::Entry* DeviceQuota::entry(std::string_view ns, std::string_view resource) const {
  auto n = namespaces_.find(ns);
  if (n == namespaces_.end()) return nullptr;
  auto e = n->second.find(resource);
  return e == n->second.end() ? nullptr : &e->second;
}

bool DeviceQuota::has_limits(std::string_view ns) const {
  auto n = namespaces_.find(ns);
  if (n == namespaces_.end()) return false;
  return std::any_of(n->second.begin(), n->second.end(),
                     [](const auto& entry) { return entry.second.limit_set; });
}

bool DeviceQuota::fits(std::string_view ns, std::string_view vendor, int64_t memory,
                       int64_t cores) const {
  const device::DeviceBackend* backend = registry_.find(vendor);
  if (backend == nullptr) return true;
  const auto& names = backend->resource_names();
  if (const Entry* e = entry(ns, names.memory); e != nullptr && e->limit_set) {
    const int64_t factor = names.memory_factor > 1 ? names.memory_factor : 1;
    if (e->used + memory > e->limit * factor) return false;
  }
  if (const Entry* e = entry(ns, names.cores); e != nullptr && e->limit_set) {
    if (e->used + cores > e->limit) return false;
  }
  return true;
}

std::optional<std::string> DeviceQuota::admission_check(const model::Pod& pod) const {
  const device::PodRequests requests = registry_.requests_for(pod);
  const size_t init_count = pod.spec.init_containers.size();
  const std::string& ns = pod.metadata.namespace_;
  for (const auto& backend : registry_.backends()) {
    const std::string vendor(backend->vendor());
    int64_t app_mem = 0, app_cores = 0, init_mem = 0, init_cores = 0;
    for (size_t i = 0; i < requests.size(); ++i) {
      auto it = requests[i].find(vendor);
      if (it == requests[i].end()) continue;
      const int64_t mem = int64_t{it->second.memreq} * it->second.nums;
      const int64_t cores = int64_t{it->second.coresreq} * it->second.nums;
      if (i < init_count) {
        init_mem = std::max(init_mem, mem);
        init_cores = std::max(init_cores, cores);
      } else {
        app_mem += mem;
        app_cores += cores;
      }
    }
    const int64_t mem = std::max(app_mem, init_mem);
    const int64_t cores = std::max(app_cores, init_cores);
    if (mem == 0 && cores == 0) continue;
    if (fits(ns, vendor, mem, cores)) continue;
    const auto& names = backend->resource_names();
    const Entry* m = entry(ns, names.memory);
    const int64_t factor = names.memory_factor > 1 ? names.memory_factor : 1;
    if (m != nullptr && m->limit_set && m->used + mem > m->limit * factor) {
      return names.memory + ": used " + std::to_string(m->used) + " + requested " +
             std::to_string(mem) + " > limit " + std::to_string(m->limit * factor) +
             " in namespace " + ns;
    }
    const Entry* c = entry(ns, names.cores);
    return names.cores + ": used " + std::to_string(c ? c->used : 0) + " + requested " +
           std::to_string(cores) + " > limit " + std::to_string(c ? c->limit : 0) +
           " in namespace " + ns;
  }
  return std::nullopt;
}

std::vector<DeviceQuota::EntryView> DeviceQuota::entries() const {
  std::vector<EntryView> out;
  for (const auto& [ns, resources] : namespaces_) {
    for (const auto& [resource, e] : resources) {
      out.push_back({ns, resource, e.used, e.limit, e.limit_set});
    }
  }
  return out;
}

}  // namespace hamisim::fit
