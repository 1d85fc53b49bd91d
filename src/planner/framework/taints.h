#pragma once
// Toleration matching as core/v1 helpers define it (Toleration.ToleratesTaint,
// FindMatchingUntoleratedTaint).

#include "model/objects.h"

namespace hamisim::planner::framework {

// Toleration.ToleratesTaint: an empty effect matches every effect; an empty key matches
// every key (meaningful with Exists); operator Exists matches any value, Equal (or empty)
// requires equal values; any other operator tolerates nothing.
bool tolerates(const model::Toleration& toleration, const model::Taint& taint);
bool tolerations_tolerate_taint(const std::vector<model::Toleration>& tolerations,
                                const model::Taint& taint);
// The first taint (in the node's order) with effect NoSchedule or NoExecute that no
// toleration tolerates; PreferNoSchedule taints never block. Null when all are tolerated.
const model::Taint* find_untolerated_do_not_schedule_taint(
    const std::vector<model::Taint>& taints, const std::vector<model::Toleration>& tolerations);

}  // namespace hamisim::planner::framework
