#include "planner/framework/snapshot.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include <fmt/format.h>

namespace hamisim::planner::framework {
namespace {

constexpr std::string_view kBindAllHostIp = "0.0.0.0";

std::string_view sanitize_ip(std::string_view ip) {
  return ip.empty() ? kBindAllHostIp : ip;
}
std::string_view sanitize_protocol(std::string_view p) {
  return p.empty() ? "TCP" : p;
}

// Compiles (anti-)affinity terms as framework.getAffinityTerms does: the first term with an
// invalid selector drops the whole list and records the error.
std::vector<AffinityTerm> compile_terms(const model::Pod& pod,
                                        const std::vector<model::PodAffinityTerm>& terms,
                                        std::string_view what, std::optional<Error>& error) {
  std::vector<AffinityTerm> out;
  out.reserve(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    const auto& t = terms[i];
    auto selector = Selector::from_label_selector(t.label_selector ? &*t.label_selector : nullptr);
    auto ns_selector =
        Selector::from_label_selector(t.namespace_selector ? &*t.namespace_selector : nullptr);
    if (!selector || !ns_selector) {
      if (!error) {
        error = make_error(
            fmt::format("{}[{}]: {}", what, i,
                        !selector ? selector.error().message : ns_selector.error().message));
      }
      return {};
    }
    AffinityTerm term;
    term.selector = std::move(selector.value());
    term.namespace_selector = std::move(ns_selector.value());
    term.topology_key = t.topology_key;
    if (t.namespaces.empty() && !t.namespace_selector) {
      term.namespaces.insert(pod.metadata.namespace_);
    } else {
      term.namespaces.insert(t.namespaces.begin(), t.namespaces.end());
    }
    out.push_back(std::move(term));
  }
  return out;
}

// Preferred terms only matter for scoring, but kube-scheduler parses them into PodInfo too and
// an invalid one marks the pod as unparsable (InterPodAffinity's PreFilter then fails).
void validate_preferred(const model::Pod& pod,
                        const std::vector<model::WeightedPodAffinityTerm>& terms,
                        std::string_view what, std::optional<Error>& error) {
  std::vector<model::PodAffinityTerm> plain;
  plain.reserve(terms.size());
  for (const auto& w : terms) plain.push_back(w.term);
  (void)compile_terms(pod, plain, what, error);
}

}  // namespace

void HostPortSet::add(std::string_view ip, std::string_view protocol, int32_t port) {
  if (port <= 0) return;
  auto it = by_ip_.find(sanitize_ip(ip));
  if (it == by_ip_.end()) {
    it = by_ip_.emplace(std::string(sanitize_ip(ip)), std::map<ProtocolPort, int>{}).first;
  }
  ++it->second[{std::string(sanitize_protocol(protocol)), port}];
}

void HostPortSet::remove(std::string_view ip, std::string_view protocol, int32_t port) {
  if (port <= 0) return;
  auto it = by_ip_.find(sanitize_ip(ip));
  if (it == by_ip_.end()) return;
  auto pp = it->second.find({std::string(sanitize_protocol(protocol)), port});
  if (pp == it->second.end()) return;
  if (--pp->second == 0) it->second.erase(pp);
  if (it->second.empty()) by_ip_.erase(it);
}

bool HostPortSet::conflicts(std::string_view ip, std::string_view protocol, int32_t port) const {
  if (port <= 0) return false;
  ip = sanitize_ip(ip);
  ProtocolPort pp{std::string(sanitize_protocol(protocol)), port};
  if (ip == kBindAllHostIp) {
    return std::any_of(by_ip_.begin(), by_ip_.end(),
                       [&](const auto& entry) { return entry.second.count(pp) > 0; });
  }
  for (std::string_view candidate : {ip, kBindAllHostIp}) {
    auto it = by_ip_.find(candidate);
    if (it != by_ip_.end() && it->second.count(pp) > 0) return true;
  }
  return false;
}

std::vector<model::ContainerPort> pod_host_ports(const model::Pod& pod) {
  std::vector<model::ContainerPort> out;
  auto collect = [&](const model::Container& c) {
    for (const auto& p : c.ports) {
      if (p.host_port > 0) out.push_back(p);
    }
  };
  for (const auto& c : pod.spec.containers) collect(c);
  for (const auto& c : pod.spec.init_containers) {
    if (c.restart_policy && *c.restart_policy == "Always") collect(c);
  }
  return out;
}

bool AffinityTerm::matches(const model::Pod& pod, const model::StringMap* namespace_labels) const {
  static const model::StringMap kNoLabels;
  bool in_namespace = namespaces.count(pod.metadata.namespace_) > 0 ||
                      namespace_selector.matches(namespace_labels ? *namespace_labels : kNoLabels);
  return in_namespace && selector.matches(pod.metadata.labels);
}

namespace {
// Serials of make() and with_annotations(); with_claim_allocations() counts apart.
uint64_t next_make_serial() {
  static std::atomic<uint64_t> next_serial{1};
  return next_serial.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

std::shared_ptr<PodInfo> PodInfo::derive(std::shared_ptr<const model::Pod> shared) {
  const model::Pod& pod = *shared;
  std::shared_ptr<PodInfo> info(new PodInfo());
  info->serial_ = next_make_serial();
  info->key_ = pod.metadata.namespace_ + "/" + pod.metadata.name;
  info->requests_ = pod_resource(pod);
  info->host_ports_ = pod_host_ports(pod);
  const auto& aff = pod.spec.affinity;
  if (aff && aff->pod_affinity) {
    info->affinity_ =
        compile_terms(pod, aff->pod_affinity->required, "podAffinity.required", info->parse_error_);
  }
  if (aff && aff->pod_anti_affinity) {
    info->anti_affinity_ = compile_terms(pod, aff->pod_anti_affinity->required,
                                         "podAntiAffinity.required", info->parse_error_);
  }
  if (aff && aff->pod_affinity) {
    validate_preferred(pod, aff->pod_affinity->preferred, "podAffinity.preferred",
                       info->parse_error_);
  }
  if (aff && aff->pod_anti_affinity) {
    validate_preferred(pod, aff->pod_anti_affinity->preferred, "podAntiAffinity.preferred",
                       info->parse_error_);
  }
  info->pod_ = std::move(shared);
  return info;
}

std::shared_ptr<const PodInfo> PodInfo::make(model::Pod pod) {
  // What the API server would have stored: what-if pods are often written with limits only.
  model::default_requests_from_limits(pod.spec);
  return derive(std::make_shared<const model::Pod>(std::move(pod)));
}

std::shared_ptr<const PodInfo> PodInfo::share(std::shared_ptr<const model::Pod> pod) {
  if (model::needs_default_requests(pod->spec)) return make(*pod);
  return derive(std::move(pod));
}

std::shared_ptr<const PodInfo> PodInfo::with_annotations(
    const PodInfo& pod, const std::map<std::string, std::string, std::less<>>& annotations) {
  std::shared_ptr<PodInfo> info(new PodInfo(pod));
  info->serial_ = next_make_serial();
  auto added = pod.added_annotations_ ? std::make_shared<model::StringMap>(*pod.added_annotations_)
                                      : std::make_shared<model::StringMap>();
  for (const auto& [k, v] : annotations) (*added)[k] = v;
  info->added_annotations_ = std::move(added);
  return info;
}

model::Pod PodInfo::annotated_pod() const {
  model::Pod out = *pod_;
  if (added_annotations_) {
    for (const auto& [k, v] : *added_annotations_) out.metadata.annotations[k] = v;
  }
  return out;
}

std::shared_ptr<const PodInfo> PodInfo::with_claim_allocations(
    const PodInfo& pod, std::vector<ClaimAllocation> allocations) {
  static std::atomic<uint64_t> next_serial{1ULL << 62};  // apart from make()'s serials
  std::shared_ptr<PodInfo> info(new PodInfo(pod));
  info->serial_ = next_serial.fetch_add(1, std::memory_order_relaxed);
  info->claim_allocations_ = std::move(allocations);
  return info;
}

NodeInfo* ClusterSnapshot::live_node(std::string_view name) {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : slots_[it->second].get();
}

const NodeInfo* ClusterSnapshot::node(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : slots_[it->second].get();
}

std::vector<const NodeInfo*> ClusterSnapshot::nodes() const {
  std::vector<const NodeInfo*> out;
  out.reserve(index_.size());
  for (const auto& slot : slots_) {
    if (!slot->removed_) out.push_back(slot.get());
  }
  return out;
}

void ClusterSnapshot::record(Change change) {
  if (!marks_.empty()) log_.push_back(std::move(change));
}

void ClusterSnapshot::account_pod(NodeInfo& node, const PodInfo& pod, int sign) {
  if (sign > 0) {
    node.requested_.add(pod.requests());
  } else {
    node.requested_.subtract(pod.requests());
  }
  for (const auto& p : pod.host_ports()) {
    if (sign > 0) {
      node.used_ports_.add(p.host_ip, p.protocol, p.host_port);
    } else {
      node.used_ports_.remove(p.host_ip, p.protocol, p.host_port);
    }
  }
  const auto& aff = pod.pod().spec.affinity;
  auto bump = [sign](size_t& counter) { sign > 0 ? ++counter : --counter; };
  if (aff && (aff->pod_affinity || aff->pod_anti_affinity)) bump(node.pods_with_affinity_);
  if (!pod.required_anti_affinity_terms().empty()) {
    bump(node.pods_with_required_anti_affinity_);
    bump(pods_with_required_anti_affinity_);
  }
  account_claims(pod, sign);
}

void ClusterSnapshot::account_claims(const PodInfo& pod, int sign) {
  for (const ClaimAllocation& c : pod.claim_allocations()) {
    if (sign > 0) {
      auto& [allocation, carriers] = placed_claims_[c.claim];
      if (carriers++ == 0) {
        allocation = &c.allocation;
        dra_allocated_.add(c.allocation);
      }
    } else if (auto it = placed_claims_.find(c.claim); it != placed_claims_.end()) {
      if (--it->second.second == 0) {
        dra_allocated_.remove(*it->second.first);
        placed_claims_.erase(it);
      }
    }
  }
}

void ClusterSnapshot::set_dra(std::shared_ptr<const DraCluster> dra) {
  dra_ = std::move(dra);
  dra_allocated_ = dra_ ? dra::AllocatedState::of(dra_->claims()) : dra::AllocatedState();
}

const dra::AllocationResult* ClusterSnapshot::claim_allocation(std::string_view claim) const {
  if (auto it = placed_claims_.find(claim); it != placed_claims_.end()) return it->second.first;
  if (!dra_) return nullptr;
  const size_t slash = claim.find('/');
  if (slash == std::string_view::npos) return nullptr;
  const dra::ResourceClaim* c = dra_->claim(claim.substr(0, slash), claim.substr(slash + 1));
  return c && c->status.allocation ? &*c->status.allocation : nullptr;
}

Status ClusterSnapshot::add_node(model::Node node, NodeSlices slices) {
  return add_node(std::make_shared<const model::Node>(std::move(node)), std::move(slices));
}

Status ClusterSnapshot::add_node(std::shared_ptr<const model::Node> node, NodeSlices slices) {
  if (!node) return make_error("null node");
  if (node->metadata.name.empty()) return make_error("node has no name");
  if (index_.count(node->metadata.name) > 0) {
    return make_error(fmt::format("node \"{}\" already exists", node->metadata.name));
  }
  auto info = std::make_unique<NodeInfo>();
  info->allocatable_ = node_allocatable(*node);
  info->node_ = std::move(node);
  info->slices_ = std::move(slices);
  index_.emplace(info->name(), slots_.size());
  slots_.push_back(std::move(info));
  record(NodeAdded{});
  return ok_status();
}

Status ClusterSnapshot::remove_node(std::string_view name) {
  auto it = index_.find(name);
  if (it == index_.end()) return make_error(fmt::format("node \"{}\" not found", name));
  size_t slot = it->second;
  slots_[slot]->removed_ = true;
  pods_with_required_anti_affinity_ -= slots_[slot]->pods_with_required_anti_affinity_;
  for (const auto& pod : slots_[slot]->pods_) account_claims(*pod, -1);
  ++tombstones_;
  index_.erase(it);
  record(NodeRemoved{slot});
  maybe_compact();
  return ok_status();
}

Status ClusterSnapshot::add_pod(model::Pod pod, std::string_view node_name) {
  return add_pod(PodInfo::make(std::move(pod)), node_name);
}

Status ClusterSnapshot::add_pod(PodInfoPtr pod, std::string_view node_name) {
  if (!pod) return make_error("null pod");
  auto it = index_.find(node_name);
  if (it == index_.end()) return make_error(fmt::format("node \"{}\" not found", node_name));
  NodeInfo& node = *slots_[it->second];
  for (const auto& existing : node.pods_) {
    if (existing->key() == pod->key()) {
      return make_error(
          fmt::format("pod \"{}\" already exists on node \"{}\"", pod->key(), node_name));
    }
  }
  Resource previous = marks_.empty() ? Resource{} : node.requested_;
  account_pod(node, *pod, +1);
  node.pods_.push_back(std::move(pod));
  record(PodAdded{it->second, std::move(previous)});
  return ok_status();
}

Status ClusterSnapshot::remove_pod(std::string_view namespace_, std::string_view pod_name,
                                   std::string_view node_name) {
  auto it = index_.find(node_name);
  if (it == index_.end()) return make_error(fmt::format("node \"{}\" not found", node_name));
  NodeInfo& node = *slots_[it->second];
  auto pos = std::find_if(node.pods_.begin(), node.pods_.end(), [&](const PodInfoPtr& p) {
    return p->namespace_() == namespace_ && p->name() == pod_name;
  });
  if (pos == node.pods_.end()) {
    return make_error(
        fmt::format("pod \"{}/{}\" not found on node \"{}\"", namespace_, pod_name, node_name));
  }
  PodInfoPtr pod = *pos;
  size_t position = static_cast<size_t>(pos - node.pods_.begin());
  Resource previous = marks_.empty() ? Resource{} : node.requested_;
  node.pods_.erase(pos);
  account_pod(node, *pod, -1);
  record(PodRemoved{it->second, position, std::move(pod), std::move(previous)});
  return ok_status();
}

void ClusterSnapshot::set_namespace_labels(std::string namespace_, model::StringMap labels) {
  std::optional<model::StringMap> previous;
  auto it = namespaces_.find(namespace_);
  if (it != namespaces_.end()) {
    previous = std::move(it->second);
    it->second = std::move(labels);
  } else {
    namespaces_.emplace(namespace_, std::move(labels));
  }
  record(NamespaceSet{std::move(namespace_), std::move(previous)});
}

const model::StringMap* ClusterSnapshot::namespace_labels(std::string_view namespace_) const {
  auto it = namespaces_.find(namespace_);
  return it == namespaces_.end() ? nullptr : &it->second;
}

void ClusterSnapshot::fork() {
  marks_.push_back(log_.size());
}

void ClusterSnapshot::undo(Change& change) {
  std::visit(
      [this](auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, NodeAdded>) {
          // Changes are undone newest first, so the node added here is the last slot (and
          // the pods added to it since are gone already).
          index_.erase(slots_.back()->name());
          slots_.pop_back();
        } else if constexpr (std::is_same_v<T, NodeRemoved>) {
          NodeInfo& node = *slots_[c.slot];
          node.removed_ = false;
          pods_with_required_anti_affinity_ += node.pods_with_required_anti_affinity_;
          for (const auto& pod : node.pods_) account_claims(*pod, +1);
          --tombstones_;
          index_.emplace(node.name(), c.slot);
        } else if constexpr (std::is_same_v<T, PodAdded>) {
          NodeInfo& node = *slots_[c.slot];
          PodInfoPtr pod = std::move(node.pods_.back());
          node.pods_.pop_back();
          account_pod(node, *pod, -1);
          node.requested_ = std::move(c.previous_requested);
        } else if constexpr (std::is_same_v<T, PodRemoved>) {
          NodeInfo& node = *slots_[c.slot];
          account_pod(node, *c.pod, +1);
          node.requested_ = std::move(c.previous_requested);
          node.pods_.insert(node.pods_.begin() + static_cast<std::ptrdiff_t>(c.position),
                            std::move(c.pod));
        } else if constexpr (std::is_same_v<T, NamespaceSet>) {
          if (c.previous) {
            namespaces_[c.name] = std::move(*c.previous);
          } else {
            namespaces_.erase(c.name);
          }
        }
      },
      change);
}

Status ClusterSnapshot::revert() {
  if (marks_.empty()) return make_error("revert without an open fork");
  size_t mark = marks_.back();
  while (log_.size() > mark) {
    undo(log_.back());
    log_.pop_back();
  }
  marks_.pop_back();
  maybe_compact();
  return ok_status();
}

Status ClusterSnapshot::commit() {
  if (marks_.empty()) return make_error("commit without an open fork");
  marks_.pop_back();
  if (marks_.empty()) log_.clear();
  maybe_compact();
  return ok_status();
}

void ClusterSnapshot::maybe_compact() {
  // Tombstones can only be dropped when no fork may resurrect them, and only when they are
  // numerous enough that the O(nodes) rebuild is amortised.
  if (!marks_.empty() || tombstones_ == 0 || tombstones_ < slots_.size() / 2) return;
  std::vector<std::unique_ptr<NodeInfo>> live;
  live.reserve(slots_.size() - tombstones_);
  for (auto& slot : slots_) {
    if (!slot->removed_) live.push_back(std::move(slot));
  }
  slots_ = std::move(live);
  index_.clear();
  for (size_t i = 0; i < slots_.size(); ++i) index_.emplace(slots_[i]->name(), i);
  tombstones_ = 0;
}

}  // namespace hamisim::planner::framework
