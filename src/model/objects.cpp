#include "model/objects.h"

namespace hamisim::model {
namespace {

const std::string* find_in(const StringMap& map, std::string_view key) {
  const auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

}  // namespace

const std::string* find_annotation(const ObjectMeta& meta, std::string_view key) {
  return find_in(meta.annotations, key);
}

const std::string* find_label(const ObjectMeta& meta, std::string_view key) {
  return find_in(meta.labels, key);
}

bool has_resource_claims(const Pod& pod) {
  return !pod.spec.resource_claims.empty();
}

void default_requests_from_limits(PodSpec& spec) {
  for (auto* group : {&spec.init_containers, &spec.containers}) {
    for (Container& c : *group) {
      for (const auto& [name, limit] : c.resources.limits)
        c.resources.requests.try_emplace(name, limit);
    }
  }
}

bool needs_default_requests(const PodSpec& spec) {
  for (const auto* group : {&spec.init_containers, &spec.containers}) {
    for (const Container& c : *group) {
      for (const auto& entry : c.resources.limits) {
        if (c.resources.requests.find(entry.first) == c.resources.requests.end()) return true;
      }
    }
  }
  return false;
}

}  // namespace hamisim::model
