#include "planner/framework/dra_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

namespace hamisim::planner::framework {
namespace {

std::string key(std::string_view namespace_, std::string_view name) {
  std::string k;
  k.reserve(namespace_.size() + 1 + name.size());
  k.append(namespace_).append("/").append(name);
  return k;
}

}  // namespace

DraCluster::DraCluster(dra::Objects objects) : objects_(std::move(objects)) {
  std::map<std::string, std::vector<dra::ResourceSlice>, std::less<>> own;
  for (const auto& s : objects_.slices) {
    if (s.scope.node_name) own[*s.scope.node_name].push_back(s);
  }
  for (auto& [node, slices] : own) {
    by_node_.emplace(node,
                     std::make_shared<const std::vector<dra::ResourceSlice>>(std::move(slices)));
  }
  for (const auto& s : objects_.slices) {
    if (!s.scope.node_name) shared_.push_back(&s);
  }
  for (const auto& c : objects_.claims) {
    claims_.emplace(key(c.metadata.namespace_, c.metadata.name), &c);
  }
  for (const auto& t : objects_.claim_templates) {
    templates_.emplace(key(t.metadata.namespace_, t.metadata.name), &t);
  }
  for (const auto& c : objects_.classes) {
    classes_.emplace(c.metadata.name, &c);
    if (!c.extended_resource_name) continue;
    // The newest class wins; RFC 3339 times of the API server compare as text, and a tie goes
    // to the name later in order, so the choice never depends on input order.
    const dra::DeviceClass*& chosen = by_extended_resource_[*c.extended_resource_name];
    if (chosen == nullptr ||
        std::tie(c.metadata.creation_timestamp, c.metadata.name) >
            std::tie(chosen->metadata.creation_timestamp, chosen->metadata.name)) {
      chosen = &c;
    }
  }
}

const dra::DeviceClass* DraCluster::extended_resource_class(std::string_view resource) const {
  if (auto it = by_extended_resource_.find(resource); it != by_extended_resource_.end()) {
    return it->second;
  }
  constexpr std::string_view kImplicit = "deviceclass.resource.kubernetes.io/";
  if (!resource.starts_with(kImplicit)) return nullptr;
  const auto it = classes_.find(resource.substr(kImplicit.size()));
  return it == classes_.end() ? nullptr : it->second;
}

NodeSlices DraCluster::node_slices(std::string_view node) const {
  const auto it = by_node_.find(node);
  return it == by_node_.end() ? nullptr : it->second;
}

const dra::ResourceClaim* DraCluster::claim(std::string_view namespace_,
                                            std::string_view name) const {
  const auto it = claims_.find(key(namespace_, name));
  return it == claims_.end() ? nullptr : it->second;
}

const dra::ResourceClaimTemplate* DraCluster::claim_template(std::string_view namespace_,
                                                             std::string_view name) const {
  const auto it = templates_.find(key(namespace_, name));
  return it == templates_.end() ? nullptr : it->second;
}

std::shared_ptr<const DraCluster> DraCluster::make_if_any(dra::Objects objects) {
  if (objects.slices.empty() && objects.classes.empty() && objects.claims.empty() &&
      objects.claim_templates.empty()) {
    return nullptr;
  }
  return std::make_shared<const DraCluster>(std::move(objects));
}

std::vector<ExtendedResourceRequest> extended_resource_requests(const model::Pod& pod,
                                                                const DraCluster& cluster) {
  auto ask = [](const model::Container& c, const std::string& name) -> int64_t {
    for (const auto* list : {&c.resources.requests, &c.resources.limits}) {
      if (auto it = list->find(name); it != list->end()) return it->second.value();
    }
    return 0;
  };
  std::vector<const model::Container*> all;
  for (const auto& c : pod.spec.init_containers) all.push_back(&c);
  for (const auto& c : pod.spec.containers) all.push_back(&c);
  const size_t first_regular = pod.spec.init_containers.size();
  std::vector<ExtendedResourceRequest> out;
  std::map<std::string, ExtendedResourceRequest, std::less<>> largest_init;
  for (size_t i = 0; i < all.size(); ++i) {
    const model::Container& c = *all[i];
    const bool init = i < first_regular && c.restart_policy.value_or("") != "Always";
    // Every resource name the container requests (or limits), by name: j is its position.
    std::set<std::string, std::less<>> names;
    for (const auto* list : {&c.resources.requests, &c.resources.limits}) {
      for (const auto& [name, q] : *list) names.insert(name);
    }
    size_t j = 0;
    for (const std::string& name : names) {
      const size_t index = j++;
      const dra::DeviceClass* cls = cluster.extended_resource_class(name);
      int64_t count = ask(c, name);
      if (cls == nullptr || count <= 0) continue;
      ExtendedResourceRequest r{name, cls, fmt::format("container-{}-request-{}", i, index), count};
      if (!init) {
        out.push_back(std::move(r));
        continue;
      }
      for (size_t k = first_regular; k < all.size(); ++k) r.count -= ask(*all[k], name);
      if (r.count <= 0) continue;
      auto& best = largest_init[name];
      if (r.count > best.count) best = std::move(r);
    }
  }
  for (auto& [name, r] : largest_init) out.push_back(std::move(r));
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.request < b.request; });
  return out;
}

NodeSlices slices_for_copy(const NodeSlices& slices, std::string_view node,
                           std::string_view suffix) {
  if (!slices) return nullptr;
  std::vector<dra::ResourceSlice> out = *slices;
  for (auto& s : out) {
    s.metadata.name += "-";
    s.metadata.name += suffix;
    s.metadata.uid.clear();
    s.pool.name += "-";
    s.pool.name += suffix;
    s.scope.node_name = std::string(node);
  }
  return std::make_shared<const std::vector<dra::ResourceSlice>>(std::move(out));
}

}  // namespace hamisim::planner::framework
