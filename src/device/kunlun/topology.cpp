#include "device/kunlun/topology.h"

#include <algorithm>
#include <array>
#include <utility>

namespace hamisim::device::kunlun {
namespace {

using Pair = std::pair<uint64_t, uint64_t>;
using Group = std::array<uint64_t, 4>;

// HAMi's InterGroupConnection: the links between the wings.
constexpr std::array<Pair, 4> kCrossWingPairs = {{{0, 4}, {1, 5}, {2, 6}, {3, 7}}};
// HAMi's GroupConnection: the links inside each wing.
constexpr std::array<Pair, 12> kIntraWingPairs = {{{0, 1},
                                                   {0, 2},
                                                   {0, 3},
                                                   {1, 2},
                                                   {1, 3},
                                                   {2, 3},
                                                   {4, 5},
                                                   {4, 6},
                                                   {4, 7},
                                                   {5, 6},
                                                   {5, 7},
                                                   {6, 7}}};
// HAMi's InterGroupConnection2: the interconnected 4-XPU groups, in HAMi's order (the first
// contained group wins).
constexpr std::array<Group, 6> kGroups = {
    {{0, 1, 4, 5}, {2, 3, 6, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}, {0, 3, 4, 7}, {1, 2, 5, 6}}};
// Positions 0-3 are the left wing, 4-7 the right; HAMi assumes eight devices.
constexpr size_t kWing = 4;
constexpr size_t kMachine = 8;

bool contains(const std::vector<uint64_t>& have, uint64_t v) {
  return std::find(have.begin(), have.end(), v) != have.end();
}

bool contains_pair(const std::vector<uint64_t>& have, const Pair& p) {
  return contains(have, p.first) && contains(have, p.second);
}

bool contains_group(const std::vector<uint64_t>& have, const Group& g) {
  return std::all_of(g.begin(), g.end(), [&](uint64_t v) { return contains(have, v); });
}

// HAMi devicepick: fitting devices from `start` up to position 7, at most `nums` of them.
std::vector<uint64_t> pick(std::span<DeviceUsage* const> devices, const std::vector<bool>& fits,
                           size_t start, int32_t nums) {
  std::vector<uint64_t> out;
  for (size_t t = start; t < kMachine && t < devices.size(); ++t) {
    if (!fits[t]) continue;
    out.push_back(devices[t]->index);
    if (out.size() == static_cast<size_t>(nums)) break;
  }
  return out;
}

// HAMi interconnect: the fallback when no wing has exactly the right number of free devices.
std::vector<uint64_t> interconnect(std::span<DeviceUsage* const> devices,
                                   const std::vector<bool>& fits, int32_t nums) {
  if (nums == 2) {
    // HAMi walks every fitting pair in list order and returns the first cross-wing pair. Each
    // index 0-7 has one partner (i and i+4, kCrossWingPairs), so that is: the first fitting device
    // (in list order) whose partner also fits, with the partner's first listed device. Linear, not
    // quadratic: a hostile registration may list thousands of devices.
    std::array<bool, kMachine> partner_fits{};
    for (size_t i = 0; i < devices.size(); ++i) {
      if (fits[i] && devices[i]->index < kMachine) partner_fits[devices[i]->index] = true;
    }
    for (size_t a = 0; a < devices.size(); ++a) {
      const uint64_t index = devices[a]->index;
      if (!fits[a] || index >= kMachine) continue;
      const uint64_t partner = index < kWing ? index + kWing : index - kWing;
      if (partner_fits[partner]) return {index, partner};
    }
    return {};
  }
  if (nums != 4) return {};
  std::vector<uint64_t> free;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (fits[i]) free.push_back(devices[i]->index);
  }
  if (free.size() == 4 || free.size() == 5) {
    for (const Group& g : kGroups) {
      if (contains_group(free, g)) return {g.begin(), g.end()};
    }
    return {};
  }
  if (free.size() != 6) return {};
  // Prefer a group that leaves the two other free devices linked; else the last group found.
  std::vector<uint64_t> chosen;
  for (const Group& g : kGroups) {
    if (!contains_group(free, g)) continue;
    chosen.assign(g.begin(), g.end());
    std::vector<uint64_t> rest;
    for (uint64_t v : free) {
      if (std::find(g.begin(), g.end(), v) == g.end()) rest.push_back(v);
    }
    auto linked = [&](const Pair& p) { return contains_pair(rest, p); };
    if (std::any_of(kCrossWingPairs.begin(), kCrossWingPairs.end(), linked) ||
        std::any_of(kIntraWingPairs.begin(), kIntraWingPairs.end(), linked)) {
      return chosen;
    }
  }
  return chosen;
}

int wing_value(int n) {
  if (n == 4) return 0;
  if (n == 1) return 2;
  return 1;
}

}  // namespace

std::vector<uint64_t> graph_select(std::span<DeviceUsage* const> devices,
                                   const std::vector<bool>& fits, int32_t nums) {
  if (fits.size() != devices.size()) return {};  // caller error; never read past `fits`
  int left = 0;
  int right = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (fits[i]) ++(i < kWing ? left : right);
  }
  if (nums == 8) {
    if (left + right == 8) return {0, 1, 2, 3, 4, 5, 6, 7};
    return {};
  }
  if (nums != 1 && nums != 2 && nums != 4) return {};
  if (left >= nums || right >= nums) {
    // Best fit: the wing whose free count is exactly the request, then the next sizes (for a
    // single device: 1, then 3, then 2, then 4 free), left before right.
    static constexpr int kOddOrder[] = {1, 3, 2, 4};
    for (int slots = nums; slots <= 4; ++slots) {
      const int num = nums == 1 ? kOddOrder[slots - 1] : slots;
      if (left == num) return pick(devices, fits, 0, nums);
      if (right == num) return pick(devices, fits, kWing, nums);
    }
  }
  return interconnect(devices, fits, nums);
}

int bubble(const std::vector<int64_t>& indexes) {
  int left = 0;
  int right = 0;
  for (int64_t v : indexes) ++(v < 4 ? left : right);
  if (left == 0 && right == 0) return 1;
  return wing_value(left) + wing_value(right);
}

float fragmentation_score(const std::vector<int64_t>& previous,
                          const std::vector<int64_t>& current) {
  switch (bubble(current) - bubble(previous)) {
    case -1:
      return 3000;
    case 0:
      return 2000;
    case 1:
      return 1000;
    case 2:
      return 0;
    default:
      return 1000;
  }
}

}  // namespace hamisim::device::kunlun
