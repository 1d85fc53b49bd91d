#include "planner/scaleup/device_stage.h"

#include <algorithm>

#include "model/encode.h"

namespace hamisim::planner::scaleup {

using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;

// ---- DeviceCache ----

const std::shared_ptr<const fit::DescriptionResult>& DeviceCache::described(
    const model::Node& node) {
  auto it = nodes_.find(node.metadata.name);
  if (it == nodes_.end()) {
    it = nodes_.emplace(node.metadata.name, engine_.describe(node)).first;
    if (scoped_) scoped_nodes_.push_back(node.metadata.name);
  }
  return it->second;
}

const fit::PodAllocation& DeviceCache::allocation(const PodInfoPtr& pod) {
  auto it = pods_.find(pod->serial());
  if (it == pods_.end()) {
    auto decoded = engine_.allocation(pod->pod(), pod->added_annotations());
    fit::PodAllocation allocation;
    if (decoded) {
      allocation = std::move(decoded).value();
    } else {
      warnings_.push_back("pod " + pod->key() +
                          ": device allocation ignored: " + decoded.error().message);
    }
    it = pods_.emplace(pod->serial(), std::move(allocation)).first;
    if (scoped_) scoped_pods_.push_back(pod->serial());
  }
  return it->second;
}

DeviceCache::NodeState& DeviceCache::state(const NodeInfo& node,
                                           const fit::DeviceDescription& description) {
  const std::vector<PodInfoPtr>& pods = node.pods();
  auto it = states_.find(node.name());
  if (it == states_.end()) {
    it = states_.emplace(node.name(), CachedState{}).first;
    if (scoped_) scoped_states_.push_back(node.name());
  }
  CachedState& cached = it->second;
  // Reusable when the counted pods are a prefix of the node's pods (the same pods, or pods
  // added since); anything else (a pod removed, a fork reverted) starts over.
  bool prefix = cached.pods.size() <= pods.size() && !cached.state.usage.devices.empty();
  for (size_t i = 0; prefix && i < cached.pods.size(); ++i)
    prefix = cached.pods[i] == pods[i]->serial();
  if (!prefix) {
    cached.pods.clear();
    cached.state.usage = fit::fresh_usage(description);
    cached.state.rejections.clear();
  }
  if (cached.pods.size() < pods.size()) cached.state.rejections.clear();
  for (size_t i = cached.pods.size(); i < pods.size(); ++i) {
    const fit::PodAllocation& a = allocation(pods[i]);
    if (!a.empty()) fit::add_pod_usage(cached.state.usage, a);
    cached.pods.push_back(pods[i]->serial());
  }
  return cached.state;
}

void DeviceCache::end_scope() {
  for (const std::string& name : scoped_nodes_) nodes_.erase(name);
  for (const std::string& name : scoped_states_) states_.erase(name);
  for (uint64_t serial : scoped_pods_) pods_.erase(serial);
  scoped_nodes_.clear();
  scoped_states_.clear();
  scoped_pods_.clear();
  scoped_ = false;
}

// ---- InProcessDeviceStage ----

namespace {

// What fit_pod reads of a pod, as one string: pods with equal strings get equal verdicts
// against the same node usage. The in-process stage passes no quota, so the namespace is
// kept only to stay safe if that changes.
std::string fit_input_key(const model::Pod& pod) {
  model::Pod reads;
  reads.metadata.namespace_ = pod.metadata.namespace_;
  reads.metadata.annotations = pod.metadata.annotations;
  reads.spec.init_containers = pod.spec.init_containers;
  reads.spec.containers = pod.spec.containers;
  return model::encode_pod_json(reads);
}

}  // namespace

const InProcessDeviceStage::Prepared& InProcessDeviceStage::prepared(const PodInfo& pod) {
  auto [it, added] = prepared_.try_emplace(pod.serial());
  Prepared& out = it->second;
  if (!added) return out;
  auto p = cache_.engine().prepare(pod.pod(), "pod " + pod.key());
  if (!p) {
    out.error = p.error().message;
    return out;
  }
  out.pod.emplace(std::move(p).value());
  out.fit_id =
      fit_ids_.try_emplace(fit_input_key(pod.pod()), static_cast<uint32_t>(fit_ids_.size()))
          .first->second;
  return out;
}

DeviceCache::NodeState& InProcessDeviceStage::empty_state(
    const NodeInfo& node, const fit::DeviceDescription& description) {
  auto it = empty_states_.find(node.name());
  if (it == empty_states_.end()) {
    it = empty_states_
             .emplace(node.name(), DeviceCache::NodeState{fit::fresh_usage(description), {}})
             .first;
  }
  return it->second;
}

bool InProcessDeviceStage::interested(const PodInfo& pod) const {
  auto [it, added] = interested_.try_emplace(pod.serial());
  if (added) {
    it->second = device::has_device_requests(cache_.engine().registry().requests_for(pod.pod()));
  }
  return it->second;
}

Result<DeviceVerdicts> InProcessDeviceStage::filter(const PodInfo& pod,
                                                    std::span<const NodeInfo* const> candidates) {
  const Prepared& p = prepared(pod);
  if (!p.pod) return make_error(p.error);
  DeviceVerdicts out;
  out.rejections.resize(candidates.size());
  out.allocations.resize(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    const NodeInfo& node = *candidates[i];
    const std::shared_ptr<const fit::DescriptionResult>& described = cache_.described(node.node());
    if (described->state != fit::DescriptionResult::State::kOk) {
      static const fit::NodeUsage kNoUsage;
      out.rejections[i] =
          cache_.engine().decide(*p.pod, node.node(), described, kNoUsage).failed_text;
      continue;
    }
    DeviceCache::NodeState& state = placed_ == PlacedPods::kIgnored
                                        ? empty_state(node, described->description)
                                        : cache_.state(node, described->description);
    auto known = std::find_if(state.rejections.begin(), state.rejections.end(),
                              [&](const auto& r) { return r.first == p.fit_id; });
    if (known != state.rejections.end()) {
      out.rejections[i] = known->second;
      continue;
    }
    engine::Verdict v = cache_.engine().decide(*p.pod, node.node(), described, state.usage);
    if (v.passes()) {
      out.allocations[i].insert(v.fit.annotations.begin(), v.fit.annotations.end());
    } else {
      out.rejections[i] = std::move(v.failed_text);
      state.rejections.emplace_back(p.fit_id, out.rejections[i]);
    }
  }
  out.warnings = cache_.take_warnings();
  return out;
}

// ---- ExtenderDeviceStage ----

bool ExtenderDeviceStage::interested(const PodInfo& pod) const {
  return chain_.interested(pod.pod());
}

std::string ExtenderDeviceStage::description() const {
  std::string out = "extenders:";
  for (size_t i = 0; i < chain_.size(); ++i)
    out += (i == 0 ? " " : ", ") + chain_.extender(i).name();
  return out;
}

const std::string& ExtenderDeviceStage::pod_json(const PodInfoPtr& pod) {
  auto it = pod_json_.find(pod.get());
  if (it == pod_json_.end()) {
    it = pod_json_
             .emplace(pod.get(), std::make_pair(pod, model::encode_pod_json(pod->annotated_pod())))
             .first;
  }
  return it->second.second;
}

const std::string& ExtenderDeviceStage::node_json(const model::Node& node) {
  auto it = node_json_.find(node.metadata.name);
  if (it == node_json_.end()) {
    it = node_json_.emplace(node.metadata.name, model::encode_node_json(node)).first;
  }
  return it->second;
}

Result<DeviceVerdicts> ExtenderDeviceStage::filter(const PodInfo& pod,
                                                   std::span<const NodeInfo* const> candidates) {
  std::vector<extender::CandidateNode> nodes;
  nodes.reserve(candidates.size());
  extender::SimulatedPods simulated;
  for (const NodeInfo* node : candidates) {
    nodes.push_back({node->name(), node_json(node->node())});
    if (placed_ == PlacedPods::kIgnored) continue;
    for (const PodInfoPtr& placed : node->pods()) {
      if (cache_.allocation(placed).empty()) continue;
      simulated[node->name()].push_back(pod_json(placed));
    }
  }
  // The pod itself is not shared: it is encoded fresh (it is asked about once per call).
  const std::string json = model::encode_pod_json(pod.pod());
  auto outcome = chain_.filter(pod.pod(), json, nodes, simulated.empty() ? nullptr : &simulated);
  if (!outcome) return outcome.error();
  DeviceVerdicts out;
  out.rejections.resize(candidates.size());
  out.allocations.resize(candidates.size());
  for (const auto& w : outcome->warnings) {
    out.warnings.push_back("extender " + w.extender + ": " + w.message);
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string& name = candidates[i]->name();
    if (auto r = outcome->rejections.find(name); r != outcome->rejections.end()) {
      out.rejections[i] = r->second.reason.empty()
                              ? "extender " + r->second.extender + " filtered out the node"
                              : r->second.reason;
      continue;
    }
    if (std::find(outcome->survivors.begin(), outcome->survivors.end(), name) ==
        outcome->survivors.end()) {
      out.rejections[i] = "extender(s) filtered out the node";
      continue;
    }
    if (auto a = outcome->allocations.find(name); a != outcome->allocations.end()) {
      out.allocations[i] = a->second;
    }
  }
  for (auto& w : cache_.take_warnings()) out.warnings.push_back(std::move(w));
  return out;
}

// ---- Pictures ----

std::vector<DeviceUse> describe_devices(DeviceCache& cache, const NodeInfo& node) {
  std::vector<DeviceUse> out;
  const fit::DescriptionResult& inv = cache.description(node.node());
  if (inv.state != fit::DescriptionResult::State::kOk) return out;
  fit::NodeUsage usage = cache.usage(node, inv.description);
  out.reserve(usage.devices.size());
  for (const device::DeviceUsage& d : usage.devices) {
    out.push_back(
        DeviceUse{d.id, d.type, d.usedmem, d.totalmem, d.usedcores, d.totalcore, d.used, d.count});
  }
  return out;
}

}  // namespace hamisim::planner::scaleup
