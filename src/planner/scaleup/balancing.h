#pragma once
// Balancing similar node groups (reference ca-scale-up.md §4.7): which groups look like the
// chosen one, and how CA spreads a scale-up over them.

#include <cstdint>
#include <string>
#include <vector>

#include "model/objects.h"

namespace hamisim::planner::scaleup {

struct SimilarityOptions {
  double memory_difference_ratio = 0.015;
  double max_allocatable_difference_ratio = 0.05;
  double max_free_difference_ratio = 0.05;
};

// A template as the comparator sees it: the node and the pods a fresh node runs.
struct TemplateView {
  const model::Node* node = nullptr;
  const std::vector<model::Pod>* pods = nullptr;  // may be null
};

// CA's IsCloudProviderNodeInfoSimilar: the same capacity resources, equal (memory within
// memory_difference_ratio), allocatable and free (allocatable minus the template pods'
// requests) each within their ratio, and identical labels apart from the basic ignored ones
// (hostname, zone, region, fluentd-ds-ready, kops instancegroup). When not similar, `why`
// says what differs.
bool similar_templates(const TemplateView& a, const TemplateView& b, const SimilarityOptions& o,
                       std::string* why = nullptr);

struct BalanceGroup {
  std::string name;
  int64_t target_size = 0;
  int64_t max_size = 0;
};

struct BalancedScaleUp {
  std::string name;
  int64_t current_size = 0;
  int64_t new_size = 0;
};

// BalanceScaleUpBetweenGroups: groups already at max are dropped, new_nodes is capped to the
// total free capacity, then one node at a time goes to the smallest group that is not full
// (ties: the earlier group in the sorted order, sizes sorted ascending and stable). Only
// groups that grow are returned, in the sorted order. Empty `groups` yields nothing.
std::vector<BalancedScaleUp> balance_scale_up(std::vector<BalanceGroup> groups, int64_t new_nodes);

}  // namespace hamisim::planner::scaleup
