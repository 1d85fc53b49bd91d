#include "device/nvidia/mig.h"

#include <algorithm>

namespace hamisim::device::nvidia {

bool placements_overlap(const MigPlacement& a, const MigPlacement& b) {
  // Half-open intervals [start, start+size).
  const uint64_t a_end = uint64_t{a.start} + a.size;
  const uint64_t b_end = uint64_t{b.start} + b.size;
  return a.start < b_end && b.start < a_end;
}

std::vector<MigPlacement> ordered_placements(const MigProfile& profile) {
  std::vector<MigPlacement> out = profile.placements;
  const bool high_first = profile.name.starts_with("1g.") || profile.name.starts_with("3g.");
  std::stable_sort(out.begin(), out.end(),
                   [high_first](const MigPlacement& a, const MigPlacement& b) {
                     return high_first ? a.start > b.start : a.start < b.start;
                   });
  return out;
}

std::optional<MigCandidate> select_mig_candidate(std::span<const MigProfile> profiles,
                                                 std::span<const MigPlacement> occupied,
                                                 int64_t memory_mb) {
  std::vector<const MigProfile*> sorted;
  sorted.reserve(profiles.size());
  for (const MigProfile& p : profiles) sorted.push_back(&p);
  std::stable_sort(sorted.begin(), sorted.end(), [](const MigProfile* a, const MigProfile* b) {
    if (a->memory_mb != b->memory_mb) return a->memory_mb < b->memory_mb;
    return a->slice_count < b->slice_count;
  });
  for (const MigProfile* p : sorted) {
    if (p->memory_mb < memory_mb) continue;
    for (const MigPlacement& candidate : ordered_placements(*p)) {
      const bool free = std::none_of(occupied.begin(), occupied.end(), [&](const MigPlacement& o) {
        return placements_overlap(candidate, o);
      });
      if (free) return MigCandidate{p, candidate};
    }
  }
  return std::nullopt;
}

}  // namespace hamisim::device::nvidia
