#include "planner/scaleup/balancing.h"

#include <algorithm>
#include <array>
#include <set>
#include <string_view>

#include "planner/framework/resources.h"

namespace hamisim::planner::scaleup {

namespace {

constexpr std::array<std::string_view, 7> kIgnoredLabels = {
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/fluentd-ds-ready",
    "kops.k8s.io/instancegroup",
};

bool ignored_label(std::string_view key) {
  return std::find(kIgnoredLabels.begin(), kIgnoredLabels.end(), key) != kIgnoredLabels.end();
}

// larger - smaller <= larger × ratio.
bool within(int64_t a, int64_t b, double ratio) {
  const double larger = static_cast<double>(std::max(a, b));
  const double smaller = static_cast<double>(std::min(a, b));
  return larger - smaller <= larger * ratio;
}

// Resource name -> integer amount as the scheduler counts it (cpu in millicores).
std::map<std::string, int64_t> amounts(const model::ResourceList& list) {
  std::map<std::string, int64_t> out;
  for (const auto& [name, q] : list) {
    out[name] = name == framework::kResourceCpu ? q.milli_value() : q.value();
  }
  return out;
}

std::map<std::string, int64_t> free_of(const TemplateView& t) {
  std::map<std::string, int64_t> free = amounts(t.node->status.allocatable);
  if (t.pods == nullptr) return free;
  for (const model::Pod& pod : *t.pods) {
    for (const auto& [name, q] : framework::pod_requests(pod)) {
      auto it = free.find(name);
      if (it == free.end()) continue;
      it->second -= name == framework::kResourceCpu ? q.milli_value() : q.value();
    }
  }
  return free;
}

bool compare(const std::map<std::string, int64_t>& a, const std::map<std::string, int64_t>& b,
             std::string_view what, double ratio, bool exact_except_memory, double memory_ratio,
             std::string* why) {
  std::set<std::string> names;
  for (const auto& [k, v] : a) names.insert(k);
  for (const auto& [k, v] : b) names.insert(k);
  for (const std::string& name : names) {
    auto ia = a.find(name);
    auto ib = b.find(name);
    if (ia == a.end() || ib == b.end()) {
      if (why) *why = std::string(what) + " " + name + " missing on one template";
      return false;
    }
    bool ok;
    if (exact_except_memory) {
      ok = name == framework::kResourceMemory ? within(ia->second, ib->second, memory_ratio)
                                              : ia->second == ib->second;
    } else {
      ok = within(ia->second, ib->second, ratio);
    }
    if (!ok) {
      if (why) {
        *why = std::string(what) + " " + name + " differs: " + std::to_string(ia->second) + " vs " +
               std::to_string(ib->second);
      }
      return false;
    }
  }
  return true;
}

}  // namespace

bool similar_templates(const TemplateView& a, const TemplateView& b, const SimilarityOptions& o,
                       std::string* why) {
  if (!compare(amounts(a.node->status.capacity), amounts(b.node->status.capacity), "capacity", 0,
               true, o.memory_difference_ratio, why)) {
    return false;
  }
  if (!compare(amounts(a.node->status.allocatable), amounts(b.node->status.allocatable),
               "allocatable", o.max_allocatable_difference_ratio, false, 0, why)) {
    return false;
  }
  if (!compare(free_of(a), free_of(b), "free", o.max_free_difference_ratio, false, 0, why)) {
    return false;
  }
  std::set<std::string> keys;
  for (const auto& [k, v] : a.node->metadata.labels) keys.insert(k);
  for (const auto& [k, v] : b.node->metadata.labels) keys.insert(k);
  for (const std::string& key : keys) {
    if (ignored_label(key)) continue;
    const std::string* va = model::find_label(a.node->metadata, key);
    const std::string* vb = model::find_label(b.node->metadata, key);
    if (va == nullptr || vb == nullptr || *va != *vb) {
      if (why) *why = "label " + key + " differs";
      return false;
    }
  }
  return true;
}

std::vector<BalancedScaleUp> balance_scale_up(std::vector<BalanceGroup> groups, int64_t new_nodes) {
  std::erase_if(groups, [](const BalanceGroup& g) { return g.target_size >= g.max_size; });
  int64_t free = 0;
  for (const auto& g : groups) free += g.max_size - g.target_size;
  new_nodes = std::min(new_nodes, free);
  std::stable_sort(groups.begin(), groups.end(), [](const BalanceGroup& x, const BalanceGroup& y) {
    return x.target_size < y.target_size;
  });
  std::vector<int64_t> size(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) size[i] = groups[i].target_size;
  for (int64_t n = 0; n < new_nodes; ++n) {
    size_t best = groups.size();
    for (size_t i = 0; i < groups.size(); ++i) {
      if (size[i] >= groups[i].max_size) continue;
      if (best == groups.size() || size[i] < size[best]) best = i;
    }
    if (best == groups.size()) break;
    ++size[best];
  }
  std::vector<BalancedScaleUp> out;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (size[i] != groups[i].target_size) {
      out.push_back({groups[i].name, groups[i].target_size, size[i]});
    }
  }
  return out;
}

}  // namespace hamisim::planner::scaleup
