#include "planner/scaleup/equivalence.h"

#include <map>
#include <string>

#include "model/encode.h"

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

}  // namespace hamisim::planner::scaleup
