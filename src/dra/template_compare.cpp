#include "dra/template_compare.h"

#include <algorithm>
#include <map>
#include <set>

namespace hamisim::dra {
namespace {

struct Group {
  std::set<std::string> names;  // attribute names
  int64_t devices = 0;
  bool used = false;
};

// driver -> (pool, attribute names) -> devices.
using Groups = std::map<std::string, std::vector<Group>>;

Groups groups_of(const std::vector<ResourceSlice>& slices, const std::set<std::string>& skip) {
  std::map<std::string, std::map<std::pair<std::string, std::set<std::string>>, int64_t>> count;
  for (const auto& s : slices) {
    if (skip.contains(s.driver)) continue;
    auto& by_key = count[s.driver];
    for (const auto& d : s.devices) {
      std::set<std::string> names;
      for (const auto& [name, value] : d.attributes) names.insert(name);
      ++by_key[{s.pool.name, std::move(names)}];
    }
  }
  Groups out;
  for (auto& [driver, by_key] : count) {
    auto& list = out[driver];
    for (auto& [key, devices] : by_key) list.push_back({key.second, devices});
  }
  return out;
}

// Drivers whose pools on the node mix generations or miss announced slices.
std::set<std::string> in_flux(const std::vector<ResourceSlice>& slices) {
  struct Seen {
    std::set<int64_t> generations;
    int64_t slices = 0;
    int64_t announced = 0;
  };
  std::map<std::pair<std::string, std::string>, Seen> pools;
  for (const auto& s : slices) {
    Seen& p = pools[{s.driver, s.pool.name}];
    p.generations.insert(s.pool.generation);
    ++p.slices;
    p.announced = s.pool.resource_slice_count;
  }
  std::set<std::string> out;
  for (const auto& [key, p] : pools) {
    if (p.generations.size() > 1 || p.slices != p.announced) out.insert(key.first);
  }
  return out;
}

size_t overlap(const std::set<std::string>& a, const std::set<std::string>& b) {
  size_t n = 0;
  for (const auto& x : a) n += b.contains(x);
  return n;
}

}  // namespace

std::vector<DriverDifference> compare_with_template(const std::vector<ResourceSlice>& promised,
                                                    const std::vector<ResourceSlice>& published) {
  const std::set<std::string> flux = in_flux(published);
  Groups want = groups_of(promised, flux);
  Groups have = groups_of(published, flux);
  std::set<std::string> drivers(flux.begin(), flux.end());
  for (const auto& [d, g] : want) drivers.insert(d);
  for (const auto& [d, g] : have) drivers.insert(d);
  std::vector<DriverDifference> out;
  for (const std::string& driver : drivers) {
    DriverDifference diff{.driver = driver, .in_flux = flux.contains(driver)};
    auto& w = want[driver];
    auto& h = have[driver];
    for (auto& t : w) {  // equal groups cancel out
      for (auto& n : h) {
        if (!n.used && n.names == t.names && n.devices == t.devices) {
          t.used = n.used = true;
          break;
        }
      }
    }
    for (auto& t : w) {
      if (t.used) continue;
      Group* best = nullptr;
      for (auto& n : h) {
        if (n.used) continue;
        if (best == nullptr) {
          best = &n;
          continue;
        }
        const size_t o = overlap(t.names, n.names), ob = overlap(t.names, best->names);
        const int64_t gap = std::abs(n.devices - t.devices);
        const int64_t gap_best = std::abs(best->devices - t.devices);
        if (o > ob || (o == ob && gap < gap_best)) best = &n;
      }
      if (best) {
        best->used = true;
        ++diff.mismatch;
      } else {
        ++diff.missing;
      }
    }
    for (const auto& n : h) diff.extra += !n.used;
    out.push_back(std::move(diff));
  }
  return out;
}

}  // namespace hamisim::dra
