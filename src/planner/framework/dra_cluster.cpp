#include "planner/framework/dra_cluster.h"

#include "dra/decode.h"

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

Status decode_dra_objects(const std::vector<model::RawObject>& items, dra::Objects& into) {
  for (const model::RawObject& item : items) {
    if (Status s = dra::decode_object(item.json, item.path, into); !s) return s;
  }
  return ok_status();
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
