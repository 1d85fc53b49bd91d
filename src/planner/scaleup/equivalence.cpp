#include "planner/scaleup/equivalence.h"

#include <map>
#include <string>

#include "model/encode.h"
#include "planner/nodegroups/node_groups.h"

namespace hamisim::planner::scaleup {

namespace {

const model::OwnerReference* controller_of(const model::Pod& pod) {
  for (const auto& ref : pod.metadata.owner_references) {
    if (ref.controller) return &ref;
  }
  return nullptr;
}

// The spec as canonical JSON: equal strings <=> equal modelled specs.
std::string spec_key(const model::Pod& pod) {
  model::Pod spec_only;
  spec_only.spec = pod.spec;
  return model::encode_pod_json(spec_only);
}

}  // namespace

std::vector<EquivalenceGroup> build_pod_groups(const std::vector<framework::PodInfoPtr>& pods) {
  struct Representative {
    size_t group;
    const model::StringMap* labels;
    std::string spec;
  };
  std::vector<EquivalenceGroup> groups;
  std::map<std::string, std::vector<Representative>, std::less<>> by_controller;
  for (const auto& pod : pods) {
    const model::OwnerReference* owner = controller_of(pod->pod());
    if (owner == nullptr || owner->kind == "DaemonSet") {
      groups.push_back({{pod}});
      continue;
    }
    auto& reps = by_controller[owner->uid];
    std::string spec = spec_key(pod->pod());
    bool joined = false;
    for (const Representative& r : reps) {
      if (*r.labels == pod->pod().metadata.labels && r.spec == spec) {
        groups[r.group].pods.push_back(pod);
        joined = true;
        break;
      }
    }
    if (joined) continue;
    groups.push_back({{pod}});
    if (reps.size() < kMaxGroupsPerController) {
      reps.push_back({groups.size() - 1, &pod->pod().metadata.labels, std::move(spec)});
    }
  }
  return groups;
}

bool SimilarPodsScheduling::similar_unschedulable(const model::Pod& pod) const {
  const model::OwnerReference* owner = controller_of(pod);
  if (owner == nullptr) return false;
  auto it = by_controller_.find(owner->uid);
  if (it == by_controller_.end()) return false;
  std::string spec;  // encoded only when a pod of this controller is remembered
  for (const Entry& e : it->second) {
    if (e.labels != pod.metadata.labels) continue;
    if (spec.empty()) spec = spec_key(pod);
    if (e.spec == spec) return true;
  }
  return false;
}

void SimilarPodsScheduling::set_unschedulable(const model::Pod& pod) {
  const model::OwnerReference* owner = controller_of(pod);
  if (owner == nullptr || nodegroups::is_daemonset_pod(pod)) return;
  std::vector<Entry>& entries = by_controller_[owner->uid];
  if (entries.size() >= kMaxGroupsPerController) return;
  entries.push_back({pod.metadata.labels, spec_key(pod)});
}

}  // namespace hamisim::planner::scaleup
