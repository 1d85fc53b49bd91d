// Balancing (--balance-similar-node-groups): the groups similar to an option's, which its
// scale-up is split over (balancing.cpp holds the comparison and the split).
#include <algorithm>

#include "fit/device_compare.h"
#include "planner/scaleup/balancing.h"
#include "planner/scaleup/phases.h"

namespace hamisim::planner::scaleup::detail {
namespace {

// HAMi devices are not node capacity CA compares: two groups whose templates describe
// different devices are not similar (deviation: CA's comparator sees only capacity). The
// same rule as profile reconciliation (fit::same_devices).
bool same_devices(const model::Node& a, const model::Node& b, DeviceCache& cache) {
  const fit::DescriptionResult& da = cache.description(a);
  const fit::DescriptionResult& db = cache.description(b);
  return da.state == db.state && fit::same_devices(da.description.devices, db.description.devices);
}

}  // namespace

std::vector<std::string> similar_groups(const NodeGroupOption& g,
                                        const std::vector<NodeGroupOption>& groups,
                                        const ByGroup<TemplateFit>& fits, const PlannerOptions& o,
                                        DeviceCache& cache) {
  std::vector<std::string> out;
  if (!o.balance_similar_node_groups) return out;
  const TemplateFit& g_fit = fits.find(g.name())->second;
  SimilarityOptions so{o.memory_difference_ratio, o.max_allocatable_difference_ratio,
                       o.max_free_difference_ratio};
  for (const NodeGroupOption& h : groups) {
    auto h_fit = fits.find(h.name());
    if (&h == &g || h_fit == fits.end()) continue;
    if (!similar_templates({&g.tmpl->node, &g.tmpl->pods}, {&h.tmpl->node, &h.tmpl->pods}, so)) {
      continue;
    }
    if (!same_devices(g.tmpl->node, h.tmpl->node, cache)) continue;
    // Every exemplar schedulable on g must be schedulable on h.
    const auto& theirs = h_fit->second.schedulable;
    bool all = std::all_of(g_fit.schedulable.begin(), g_fit.schedulable.end(), [&](size_t k) {
      return std::find(theirs.begin(), theirs.end(), k) != theirs.end();
    });
    if (all) out.push_back(h.name());
  }
  return out;
}

}  // namespace hamisim::planner::scaleup::detail
