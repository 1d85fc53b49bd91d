#include "planner/framework/plugins/dynamic_resources.h"

#include <map>
#include <mutex>

#include <fmt/format.h>

namespace hamisim::planner::framework {
namespace {

// A claim of the pod, resolved.
struct PodClaim {
  std::string key;  // namespace/name
  const dra::ResourceClaim* claim = nullptr;
  const dra::AllocationResult* allocation = nullptr;  // null: to allocate on the node
  std::optional<NodeSelectorMatcher> allocated_on;    // where an allocated claim can be used
};

struct DraPodState final : PluginState {
  const ClusterSnapshot* snapshot = nullptr;
  std::vector<PodClaim> claims;
  std::vector<const dra::ResourceClaim*> to_allocate;
  std::vector<std::unique_ptr<dra::ResourceClaim>> made;  // claims made from templates
  // Extended resources a DeviceClass serves (KEP-5004): on a node without allocatable for
  // them, one more claim, made for that node.
  std::vector<ExtendedResourceRequest> extended;
  std::string extended_claim;  // its key, "<namespace>/<pod>-extended-resources"
  // What Filter allocated on each node it passed, for Reserve on the node chosen (as
  // kube-scheduler's plugin keeps nodeAllocations in its CycleState). Filter may run on
  // several threads.
  mutable std::mutex mu;
  mutable std::map<std::string, dra::NodeAllocation, std::less<>> allocated_on_node;
};

// The claim the scheduler makes for the pod's DRA-served extended resources on `node`
// (reference §1.8): one request per container and resource the node has no allocatable for.
// Null when the node serves them all through device plugins.
std::unique_ptr<dra::ResourceClaim> extended_claim_for(const DraPodState& state, const PodInfo& pod,
                                                       const NodeInfo& node) {
  std::unique_ptr<dra::ResourceClaim> claim;
  for (const ExtendedResourceRequest& r : state.extended) {
    if (node.allocatable().scalar_value(r.resource) > 0) continue;  // the device plugin's
    if (!claim) {
      claim = std::make_unique<dra::ResourceClaim>();
      claim->metadata.name = pod.name() + "-extended-resources";
      claim->metadata.namespace_ = pod.namespace_();
    }
    dra::DeviceRequest& request = claim->spec.requests.emplace_back();
    request.name = r.request;
    request.exactly.emplace();
    request.exactly->device_class_name = r.device_class->metadata.name;
    request.exactly->count = r.count;
  }
  return claim;
}

FilterStatus unresolvable(std::string reason) {
  return FilterStatus::make(FilterCode::kUnschedulableAndUnresolvable, DynamicResources::kName,
                            std::move(reason));
}

// The pod's claims in spec order (reference §1.7), or why they cannot be had.
FilterStatus resolve(const PodInfo& info, const ClusterSnapshot& snapshot, DraPodState& state) {
  const model::Pod& pod = info.pod();
  const DraCluster* cluster = snapshot.dra();
  for (const auto& ref : pod.spec.resource_claims) {
    std::string name;
    const dra::ResourceClaim* claim = nullptr;
    if (ref.resource_claim_name) {
      name = *ref.resource_claim_name;
    } else {
      const auto& statuses = pod.status.resource_claim_statuses;
      const auto status = std::find_if(statuses.begin(), statuses.end(),
                                       [&](const auto& s) { return s.name == ref.name; });
      if (status != statuses.end()) {
        if (!status->resource_claim_name) continue;  // deliberately not created
        name = *status->resource_claim_name;
      } else {
        // Not made yet: plan with the claim its template will make.
        const dra::ResourceClaimTemplate* tmpl =
            cluster ? cluster->claim_template(pod.metadata.namespace_,
                                              *ref.resource_claim_template_name)
                    : nullptr;
        if (tmpl == nullptr) {
          return unresolvable(fmt::format("pod claim {}: resourceclaimtemplate \"{}\" not found",
                                          ref.name, *ref.resource_claim_template_name));
        }
        auto made = std::make_unique<dra::ResourceClaim>();
        made->metadata.name = pod.metadata.name + "-" + ref.name;
        made->metadata.namespace_ = pod.metadata.namespace_;
        made->metadata.labels = tmpl->claim_labels;
        made->metadata.annotations = tmpl->claim_annotations;
        made->spec = tmpl->spec;
        name = made->metadata.name;
        claim = state.made.emplace_back(std::move(made)).get();
      }
    }
    if (claim == nullptr) {
      claim = cluster ? cluster->claim(pod.metadata.namespace_, name) : nullptr;
      if (claim == nullptr)
        return unresolvable(fmt::format("resourceclaim \"{}\" not found", name));
      if (claim->metadata.deletion_timestamp) {
        return unresolvable(fmt::format("resourceclaim \"{}\" is being deleted", name));
      }
    }
    PodClaim& c = state.claims.emplace_back();
    c.key = pod.metadata.namespace_ + "/" + name;
    c.claim = claim;
    c.allocation = snapshot.claim_allocation(c.key);
    if (c.allocation && c.allocation->node_selector) {
      c.allocated_on = NodeSelectorMatcher::compile(*c.allocation->node_selector);
    }
    if (!c.allocation) state.to_allocate.push_back(claim);
  }
  return FilterStatus::success();
}

}  // namespace

FilterStatus DynamicResources::pre_filter(const PodInfo& pod, const ClusterSnapshot& snapshot,
                                          std::unique_ptr<PluginState>& state) const {
  auto s = std::make_unique<DraPodState>();
  if (snapshot.dra() && !pod.requests().scalar.empty()) {
    s->extended = extended_resource_requests(pod.pod(), *snapshot.dra());
    s->extended_claim = pod.key() + "-extended-resources";
  }
  if (!model::has_resource_claims(pod.pod()) && s->extended.empty()) return FilterStatus::skip();
  s->snapshot = &snapshot;
  if (FilterStatus st = resolve(pod, snapshot, *s); !st.ok()) return st;
  if (!s->to_allocate.empty()) {
    const dra::Allocator allocator(snapshot.dra()->classes(), selectors_, share_ids_);
    for (const dra::ResourceClaim* c : s->to_allocate) {
      if (auto missing = allocator.missing_device_class(*c)) return unresolvable(*missing);
    }
  }
  state = std::move(s);
  return FilterStatus::success();
}

namespace {

// The node's pools, and the allocation of the pod's unallocated claims on it (the
// extended-resource claim for the node last, when there is one).
Result<dra::NodeAllocation> allocate_on(const DraPodState& state, const NodeInfo& node,
                                        const dra::ResourceClaim* extended,
                                        dra::SelectorCache& selectors, dra::ShareIds& share_ids) {
  std::vector<const dra::ResourceSlice*> slices = state.snapshot->dra()->shared_slices();
  if (node.slices()) {
    for (const auto& s : *node.slices()) slices.push_back(&s);
  }
  const dra::NodeSelectorMatch matches = [&node](const model::NodeSelector& selector) {
    return NodeSelectorMatcher::compile(selector).matches(node.node());
  };
  const auto pools = dra::gather_pools(slices, node.name(), matches);
  dra::Allocator allocator(state.snapshot->dra()->classes(), selectors, share_ids);
  allocator.set_stop(state.snapshot->stop_condition());
  if (extended == nullptr) {
    return allocator.allocate(pools, node.name(), matches, state.to_allocate,
                              state.snapshot->dra_allocated());
  }
  std::vector<const dra::ResourceClaim*> claims = state.to_allocate;
  claims.push_back(extended);
  return allocator.allocate(pools, node.name(), matches, claims, state.snapshot->dra_allocated());
}

}  // namespace

FilterStatus DynamicResources::filter(const PodInfo& pod, const PluginState* state,
                                      const NodeInfo& node) const {
  const auto& s = static_cast<const DraPodState&>(*state);
  for (const PodClaim& c : s.claims) {
    if (c.allocated_on && !c.allocated_on->matches(node.node())) {
      return unresolvable(std::string(kReasonNotAvailable));
    }
  }
  const auto extended = extended_claim_for(s, pod, node);
  if (s.to_allocate.empty() && !extended) return FilterStatus::success();
  Result<dra::NodeAllocation> out = [&] {
    std::lock_guard lock(mu_);
    return allocate_on(s, node, extended.get(), selectors_, share_ids_);
  }();
  if (!out.ok()) return FilterStatus::make(FilterCode::kError, kName, out.error().message);
  if (!out->unschedulable.empty()) return unresolvable(std::move(out->unschedulable));
  std::lock_guard lock(s.mu);
  s.allocated_on_node.insert_or_assign(node.name(), std::move(*out));
  return FilterStatus::success();
}

Result<PodInfoPtr> DynamicResources::reserve(const PodInfo& pod, const PluginState* state,
                                             const NodeInfo& node) const {
  if (state == nullptr) {
    return make_error(fmt::format("reserve on node \"{}\": no PreFilter state", node.name()));
  }
  const auto& s = static_cast<const DraPodState&>(*state);
  const bool extended = !s.extended.empty() && extended_claim_for(s, pod, node) != nullptr;
  if (s.to_allocate.empty() && !extended) return PodInfoPtr();
  dra::NodeAllocation out;
  {
    std::lock_guard lock(s.mu);
    auto it = s.allocated_on_node.find(node.name());
    if (it == s.allocated_on_node.end()) {
      return make_error(fmt::format(
          "reserve on node \"{}\": Filter allocated nothing there for this pod", node.name()));
    }
    out = std::move(it->second);
    s.allocated_on_node.erase(it);
  }
  std::vector<ClaimAllocation> allocations;
  size_t next = 0;
  for (const PodClaim& c : s.claims) {
    if (c.allocation) continue;
    allocations.push_back({c.key, std::move(out.claims[next++])});
  }
  if (extended) allocations.push_back({s.extended_claim, std::move(out.claims[next])});
  return PodInfo::with_claim_allocations(pod, std::move(allocations));
}

}  // namespace hamisim::planner::framework
