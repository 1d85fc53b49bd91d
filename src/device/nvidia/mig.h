#pragma once
// Dynamic MIG placement (HAMi v2.10 mig_topology.go semantics; reference §3.7).

#include <optional>
#include <span>
#include <vector>

#include "device/types.h"

namespace hamisim::device::nvidia {

struct MigCandidate {
  const MigProfile* profile = nullptr;
  MigPlacement placement;
};

bool placements_overlap(const MigPlacement& a, const MigPlacement& b);

// Placements of `profile` in the order HAMi tries them: 1g.* and 3g.* by descending start,
// everything else by ascending start (stable).
std::vector<MigPlacement> ordered_placements(const MigProfile& profile);

// The smallest profile (memoryMB, then sliceCount) with memoryMB >= memory_mb that has a
// placement free of `occupied`.
std::optional<MigCandidate> select_mig_candidate(std::span<const MigProfile> profiles,
                                                 std::span<const MigPlacement> occupied,
                                                 int64_t memory_mb);

}  // namespace hamisim::device::nvidia
