#include "dra/pools.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace hamisim::dra {
namespace {

bool scope_on_node(const NodeScope& scope, std::string_view node_name,
                   const NodeSelectorMatch& matches_node) {
  if (scope.node_name) return *scope.node_name == node_name;
  if (scope.all_nodes) return true;
  if (scope.node_selector) return matches_node(*scope.node_selector);
  return false;  // nothing recognizable: a future field, ignored
}

bool relevant(const ResourceSlice& slice, std::string_view node_name,
              const NodeSelectorMatch& matches_node) {
  if (!slice.per_device_node_selection) return scope_on_node(slice.scope, node_name, matches_node);
  return std::any_of(slice.devices.begin(), slice.devices.end(), [&](const Device& d) {
    return d.node_scope && scope_on_node(*d.node_scope, node_name, matches_node);
  });
}

// A slice with compatibility groups (gate DRADeviceCompatibilityGroups, alpha, off in 1.37):
// the allocator ignores it, which leaves its pool incomplete ("keeping the outcome independent
// of allocation order").
bool uses_compatibility_groups(const ResourceSlice& slice) {
  return std::any_of(slice.devices.begin(), slice.devices.end(), [](const Device& d) {
    return std::any_of(d.consumes_counters.begin(), d.consumes_counters.end(),
                       [](const auto& use) { return !use.compatibility_groups.empty(); });
  });
}

bool by_name(const ResourceSlice* a, const ResourceSlice* b) {
  return a->metadata.name < b->metadata.name;
}

// Why a complete pool cannot be used, or "" (reference §2.4 step 6).
std::string invalid_reason(const Pool& pool) {
  std::set<std::string_view> devices;
  for (const ResourceSlice* s : pool.slices) {
    for (const Device& d : s->devices) {
      if (!devices.insert(d.name).second) return fmt::format("duplicate device name {}", d.name);
    }
  }
  std::map<std::string_view, const CounterSet*> sets;
  for (const auto* list : {&pool.slices, &pool.other_slices}) {
    for (const ResourceSlice* s : *list) {
      for (const CounterSet& set : s->shared_counters) {
        if (!sets.emplace(set.name, &set).second) {
          return fmt::format("duplicate counter set name {}", set.name);
        }
      }
    }
  }
  for (const auto* list : {&pool.slices, &pool.other_slices}) {
    for (const ResourceSlice* s : *list) {
      for (const Device& d : s->devices) {
        for (const DeviceCounterConsumption& use : d.consumes_counters) {
          const auto set = sets.find(use.counter_set);
          if (set == sets.end()) return fmt::format("counter set {} not found", use.counter_set);
          for (const auto& [counter, amount] : use.counters) {
            if (!set->second->counters.contains(counter)) {
              return fmt::format("counter {} not found in counter set {}", counter,
                                 use.counter_set);
            }
          }
        }
      }
    }
  }
  return "";
}

}  // namespace

bool device_on_node(const ResourceSlice& slice, const Device& device, std::string_view node_name,
                    const NodeSelectorMatch& matches_node) {
  if (!slice.per_device_node_selection) return scope_on_node(slice.scope, node_name, matches_node);
  return device.node_scope && scope_on_node(*device.node_scope, node_name, matches_node);
}

std::vector<Pool> gather_pools(const std::vector<ResourceSlice>& slices, std::string_view node_name,
                               const NodeSelectorMatch& matches_node) {
  std::vector<const ResourceSlice*> all;
  all.reserve(slices.size());
  for (const ResourceSlice& s : slices) all.push_back(&s);
  return gather_pools(all, node_name, matches_node);
}

std::vector<Pool> gather_pools(const std::vector<const ResourceSlice*>& slices,
                               std::string_view node_name, const NodeSelectorMatch& matches_node) {
  // Relevant slices of the newest generation, per (driver, pool).
  std::map<std::pair<std::string_view, std::string_view>, Pool> pools;
  for (const ResourceSlice* slice : slices) {
    const ResourceSlice& s = *slice;
    if (s.scope.node_name && *s.scope.node_name != node_name) continue;
    if (uses_compatibility_groups(s)) continue;
    if (!relevant(s, node_name, matches_node)) continue;
    Pool& pool = pools[{s.driver, s.pool.name}];
    if (pool.slices.empty() || s.pool.generation > pool.generation) {
      pool.driver = s.driver;
      pool.name = s.pool.name;
      pool.generation = s.pool.generation;
      pool.slices.clear();
    } else if (s.pool.generation < pool.generation) {
      continue;
    }
    pool.slices.push_back(&s);
  }

  // The map orders by (driver, pool); pools with binding conditions go after the others.
  std::vector<Pool> out, with_binding_conditions;
  for (auto& [key, pool] : pools) {
    const int64_t want = pool.slices.front()->pool.resource_slice_count;
    if (static_cast<int64_t>(pool.slices.size()) != want) {
      // Look at the pool's slices elsewhere: a newer generation anywhere drops the pool; the
      // slices of this generation for other nodes (or holding only counter sets) complete it.
      bool obsolete = false;
      int64_t seen = 0;
      for (const ResourceSlice* slice : slices) {
        const ResourceSlice& s = *slice;
        if (s.driver != pool.driver || s.pool.name != pool.name) continue;
        if (s.pool.generation > pool.generation) {
          obsolete = true;
          break;
        }
        if (s.pool.generation < pool.generation) continue;
        if (uses_compatibility_groups(s)) continue;  // a newer one still makes the pool obsolete
        ++seen;
        if (std::find(pool.slices.begin(), pool.slices.end(), &s) == pool.slices.end()) {
          pool.other_slices.push_back(&s);
        }
      }
      if (obsolete) continue;
      pool.incomplete = seen != want;
    }
    std::sort(pool.slices.begin(), pool.slices.end(), by_name);
    std::sort(pool.other_slices.begin(), pool.other_slices.end(), by_name);
    if (!pool.incomplete) pool.invalid = invalid_reason(pool);
    for (const ResourceSlice* s : pool.slices) {
      for (const Device& d : s->devices) {
        pool.has_binding_conditions = pool.has_binding_conditions || !d.binding_conditions.empty();
      }
    }
    (pool.has_binding_conditions ? with_binding_conditions : out).push_back(std::move(pool));
  }
  for (auto& pool : with_binding_conditions) out.push_back(std::move(pool));
  return out;
}

}  // namespace hamisim::dra
