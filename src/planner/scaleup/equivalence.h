#pragma once
// CA's equivalence groups (reference ca-scale-up.md §4.2): pending pods of one controller with
// identical labels and semantically equal specs are evaluated once, through their first pod.
//
// Deterministic where CA is not: groups come out in the order of their first pod (CA iterates
// a Go map). Specs are compared on every field the model holds; the fields CA ignores (env,
// hostname, projected volumes) are not modelled, so "semantically equal" is plain equality
// of the modelled spec.

#include <map>
#include <string>
#include <vector>

#include "planner/framework/snapshot.h"

namespace hamisim::planner::scaleup {

inline constexpr size_t kMaxGroupsPerController = 10;

struct EquivalenceGroup {
  std::vector<framework::PodInfoPtr> pods;  // pods[0] is the exemplar
};

// Pods without a controller owner reference, and DaemonSet pods, get a group of their own.
// A controller has at most 10 groups; further non-matching pods become singletons.
std::vector<EquivalenceGroup> build_pod_groups(const std::vector<framework::PodInfoPtr>& pods);

// CA's SimilarPodsScheduling (filter-out-schedulable, reference ca-scale-up.md §3.9): once a
// pod of a controller found no node, a later pod of that controller with the same labels and
// spec is taken as unschedulable without being tried. At most 10 distinct pods are remembered
// per controller; pods without a controller and DaemonSet pods are never remembered.
class SimilarPodsScheduling {
 public:
  bool similar_unschedulable(const model::Pod& pod) const;
  void set_unschedulable(const model::Pod& pod);

 private:
  struct Entry {
    model::StringMap labels;
    std::string spec;
  };
  std::map<std::string, std::vector<Entry>, std::less<>> by_controller_;
};

}  // namespace hamisim::planner::scaleup
