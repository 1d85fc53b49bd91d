#include "fit/policy.h"

#include <algorithm>
#include <charconv>

#include "device/allocation.h"
#include "go/strconv.h"

namespace hamisim::fit {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

enum class SortKey { kBinpack, kSpread, kNuma };

// std::stable_sort's order without its buffer: a node has a handful of devices, and the
// buffer std::stable_sort allocates for every sort was a tenth of sorting them. Insertion
// sort is stable, so it yields the same order.
template <class Less>
void stable_sort_devices(std::vector<device::DeviceUsage*>& devices, Less less) {
  constexpr size_t kInsertionMax = 32;
  if (devices.size() > kInsertionMax) {
    std::stable_sort(devices.begin(), devices.end(), less);
    return;
  }
  for (size_t i = 1; i < devices.size(); ++i) {
    device::DeviceUsage* d = devices[i];
    size_t j = i;
    for (; j > 0 && less(d, devices[j - 1]); --j) devices[j] = devices[j - 1];
    devices[j] = d;
  }
}

}  // namespace

Result<ScoringWeights> parse_scoring_weights(std::string_view text) {
  auto invalid = [&](const std::string& why) {
    return make_error("invalid hami.io/device-scoring-weights annotation \"" + std::string(text) +
                      "\": " + why);
  };
  ScoringWeights w;
  bool seen_slot = false, seen_core = false, seen_memory = false;
  size_t items = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(pos, end - pos);
    ++items;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return invalid("item \"" + std::string(item) + "\" is not key=value");
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view value = trim(item.substr(eq + 1));
    int64_t n = 0;
    if (go::parse_int(value, 64, &n) != go::NumError::kNone || n < 0 || n > INT32_MAX) {
      return invalid("value of \"" + std::string(key) + "\" must be an integer >= 0");
    }
    bool* seen = nullptr;
    int32_t* slot = nullptr;
    if (key == "slot") {
      seen = &seen_slot;
      slot = &w.slot;
    } else if (key == "core") {
      seen = &seen_core;
      slot = &w.core;
    } else if (key == "memory") {
      seen = &seen_memory;
      slot = &w.memory;
    } else {
      return invalid("unknown key \"" + std::string(key) + "\"");
    }
    if (*seen) return invalid("key \"" + std::string(key) + "\" given twice");
    *seen = true;
    *slot = static_cast<int32_t>(n);
    if (end == text.size()) break;
    pos = end + 1;
  }
  if (items != 3 || !seen_slot || !seen_core || !seen_memory) {
    return invalid("exactly slot, core and memory are required");
  }
  if (w.slot == 0 && w.core == 0 && w.memory == 0) return invalid("weights cannot all be zero");
  return w;
}

DeviceDemand device_demand(const device::DeviceUsage& d,
                           const device::ContainerRequests& requests) {
  DeviceDemand out;
  for (const auto& [vendor, r] : requests) {
    if (r.type != d.vendor) continue;
    out.request += 1;  // once per container, not per GPU requested
    out.core += r.coresreq;
    if (r.mem_percentagereq != 0 && r.mem_percentagereq != device::kNoMemPercentage) {
      out.mem += int64_t{d.totalmem} * r.mem_percentagereq / 100;
      out.per_device = true;
    } else {
      out.mem += r.memreq;
    }
  }
  return out;
}

float demand_score(const device::DeviceUsage& d, const DeviceDemand& demand,
                   const ScoringWeights& weights) {
  if (d.count == 0 || d.totalcore == 0 || d.totalmem == 0) return 0;
  const float slot = static_cast<float>(demand.request + d.used) / static_cast<float>(d.count);
  const float cores =
      static_cast<float>(demand.core + d.usedcores) / static_cast<float>(d.totalcore);
  const float memory = static_cast<float>(demand.mem + d.usedmem) / static_cast<float>(d.totalmem);
  const float ws = static_cast<float>(weights.slot);
  const float wc = static_cast<float>(weights.core);
  const float wm = static_cast<float>(weights.memory);
  const float sum = ws * slot + wc * cores + wm * memory;
  return 10.0f * sum;
}

float device_score(const device::DeviceUsage& d, const device::ContainerRequests& requests,
                   const ScoringWeights& weights) {
  return demand_score(d, device_demand(d, requests), weights);
}

float node_default_score(std::span<const device::DeviceUsage> devices) {
  int64_t used = 0, count = 0, usedcores = 0, totalcore = 0, usedmem = 0, totalmem = 0;
  for (const auto& d : devices) {
    used += d.used;
    count += d.count;
    usedcores += d.usedcores;
    totalcore += d.totalcore;
    usedmem += d.usedmem;
    totalmem += d.totalmem;
  }
  if (count == 0 || totalcore == 0 || totalmem == 0) return 0;
  const float sum = static_cast<float>(used) / static_cast<float>(count) +
                    static_cast<float>(usedcores) / static_cast<float>(totalcore) +
                    static_cast<float>(usedmem) / static_cast<float>(totalmem);
  return 10.0f * sum;
}

void sort_devices(std::vector<device::DeviceUsage*>& devices, const DeviceScores& scores,
                  std::string_view policy, bool numa_bind) {
  using device::DeviceUsage;
  const bool chain = policy.find(',') != std::string_view::npos || policy == "numa";
  if (!chain) {
    const bool mutex = policy == "mutex";
    const bool binpack = policy == "binpack";
    stable_sort_devices(devices, [&](const DeviceUsage* a, const DeviceUsage* b) {
      if (mutex) {
        if (a->used != b->used) return a->used > b->used;
        return a->numa < b->numa;
      }
      const float sa = scores.of(a), sb = scores.of(b);
      if (numa_bind) {
        if (binpack) {
          if (a->numa != b->numa) return a->numa > b->numa;
          return sa < sb;
        }
        if (a->numa != b->numa) return a->numa < b->numa;
        return sa > sb;
      }
      if (binpack) {
        if (sa != sb) return sa < sb;
        return a->numa < b->numa;
      }
      if (sa != sb) return sa > sb;
      return a->numa < b->numa;
    });
    return;
  }
  std::vector<SortKey> keys;
  for (const std::string& token : device::split_comma_list(policy)) {
    SortKey k;
    if (token == "binpack") {
      k = SortKey::kBinpack;
    } else if (token == "spread") {
      k = SortKey::kSpread;
    } else if (token == "numa") {
      k = SortKey::kNuma;
    } else {
      continue;  // mutex and topology-aware are Fit filters, not sort keys
    }
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  if (keys.empty()) keys.push_back(SortKey::kSpread);
  if (numa_bind) {
    keys.erase(std::remove(keys.begin(), keys.end(), SortKey::kNuma), keys.end());
    keys.insert(keys.begin(), SortKey::kNuma);
  }
  stable_sort_devices(devices, [&](const DeviceUsage* a, const DeviceUsage* b) {
    for (SortKey k : keys) {
      switch (k) {
        case SortKey::kBinpack:
          if (scores.of(a) != scores.of(b)) return scores.of(a) < scores.of(b);
          break;
        case SortKey::kSpread:
          if (scores.of(a) != scores.of(b)) return scores.of(a) > scores.of(b);
          break;
        case SortKey::kNuma:
          if (a->numa != b->numa) return a->numa < b->numa;
          break;
      }
    }
    return a->index < b->index;
  });
}

}  // namespace hamisim::fit
