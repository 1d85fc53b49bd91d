// Balancing (--balance-similar-node-groups): the groups similar to an option's, which its
// scale-up is split over (balancing.cpp holds the comparison and the split).
#include "planner/scaleup/planner.h"

#include <algorithm>

#include "fit/device_compare.h"
#include "planner/scaleup/balancing.h"

namespace hamisim::planner::scaleup::detail {

std::vector<std::string> Planner::similar_groups(size_t i) {
  std::vector<std::string> out;
  if (!o_.balance_similar_node_groups) return out;
  const GroupState& g = states_[i];
  SimilarityOptions so{o_.memory_difference_ratio, o_.max_allocatable_difference_ratio,
                       o_.max_free_difference_ratio};
  for (size_t j = 0; j < states_.size(); ++j) {
    const GroupState& h = states_[j];
    if (j == i || !h.valid) continue;
    if (!similar_templates({&g.tmpl->node, &g.tmpl->pods}, {&h.tmpl->node, &h.tmpl->pods}, so)) {
      continue;
    }
    if (!same_devices(g.tmpl->node, h.tmpl->node)) continue;
    // Every exemplar schedulable on g must be schedulable on h.
    bool all = std::all_of(g.schedulable.begin(), g.schedulable.end(), [&](size_t k) {
      return std::find(h.schedulable.begin(), h.schedulable.end(), k) != h.schedulable.end();
    });
    if (all) out.push_back(h.spec->name);
  }
  return out;
}

// HAMi devices are not node capacity CA compares: two groups whose templates describe
// different devices are not similar (deviation: CA's comparator sees only capacity). The
// same rule as profile reconciliation (fit::same_devices).
bool Planner::same_devices(const model::Node& a, const model::Node& b) {
  const fit::DescriptionResult& ia = env_.cache->description(a);
  const fit::DescriptionResult& ib = env_.cache->description(b);
  return ia.state == ib.state && fit::same_devices(ia.description.devices, ib.description.devices);
}

}  // namespace hamisim::planner::scaleup::detail
