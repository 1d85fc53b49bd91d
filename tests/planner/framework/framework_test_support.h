#pragma once
// Programmatic fixtures for the framework tests: pods and nodes built in code, quantities
// parsed with model::Quantity::parse.

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/objects.h"
#include "model/quantity.h"
#include "planner/framework/plugin.h"
#include "planner/framework/snapshot.h"

namespace hamisim::planner::framework::testing {

inline model::Quantity q(std::string_view text) {
  auto r = model::Quantity::parse(text);
  EXPECT_TRUE(r.ok()) << "bad quantity in test: " << text;
  return r.ok() ? r.value() : model::Quantity{};
}

inline model::ResourceList res(std::initializer_list<std::pair<std::string, std::string>> items) {
  model::ResourceList out;
  for (const auto& [name, value] : items) out[name] = q(value);
  return out;
}

inline model::LabelSelector match_labels(model::StringMap labels) {
  model::LabelSelector s;
  s.match_labels = std::move(labels);
  return s;
}

inline model::NodeSelectorRequirement expr(std::string key, std::string op,
                                           std::vector<std::string> values = {}) {
  return {std::move(key), std::move(op), std::move(values)};
}

inline model::PodAffinityTerm affinity_term(model::StringMap selector, std::string topology_key) {
  model::PodAffinityTerm t;
  t.label_selector = match_labels(std::move(selector));
  t.topology_key = std::move(topology_key);
  return t;
}

inline model::TopologySpreadConstraint spread(std::string key, int32_t max_skew,
                                              model::StringMap selector) {
  model::TopologySpreadConstraint c;
  c.topology_key = std::move(key);
  c.max_skew = max_skew;
  c.when_unsatisfiable = "DoNotSchedule";
  c.label_selector = match_labels(std::move(selector));
  return c;
}

class PodBuilder {
 public:
  explicit PodBuilder(std::string name, std::string ns = "default") {
    pod_.metadata.name = std::move(name);
    pod_.metadata.namespace_ = std::move(ns);
  }
  PodBuilder& label(std::string k, std::string v) {
    pod_.metadata.labels[std::move(k)] = std::move(v);
    return *this;
  }
  PodBuilder& container(model::ResourceList requests) {
    model::Container c;
    c.name = "c" + std::to_string(pod_.spec.containers.size());
    c.resources.requests = std::move(requests);
    pod_.spec.containers.push_back(std::move(c));
    return *this;
  }
  PodBuilder& init_container(model::ResourceList requests, bool sidecar = false) {
    model::Container c;
    c.name = "i" + std::to_string(pod_.spec.init_containers.size());
    c.resources.requests = std::move(requests);
    if (sidecar) c.restart_policy = "Always";
    pod_.spec.init_containers.push_back(std::move(c));
    return *this;
  }
  PodBuilder& overhead(model::ResourceList o) {
    pod_.spec.overhead = std::move(o);
    return *this;
  }
  // A host port on the first app container (one is added when there is none).
  PodBuilder& host_port(int32_t port, std::string protocol = "TCP", std::string ip = "") {
    if (pod_.spec.containers.empty()) container({});
    model::ContainerPort p;
    p.container_port = port;
    p.host_port = port;
    p.protocol = std::move(protocol);
    p.host_ip = std::move(ip);
    pod_.spec.containers.front().ports.push_back(std::move(p));
    return *this;
  }
  PodBuilder& node_selector(std::string k, std::string v) {
    pod_.spec.node_selector[std::move(k)] = std::move(v);
    return *this;
  }
  PodBuilder& required_node_term(model::NodeSelectorTerm term) {
    auto& na = affinity().node_affinity;
    if (!na) na.emplace();
    if (!na->required) na->required.emplace();
    na->required->terms.push_back(std::move(term));
    return *this;
  }
  PodBuilder& toleration(std::string key, std::string op, std::string value, std::string effect) {
    pod_.spec.tolerations.push_back(
        {std::move(key), std::move(op), std::move(value), std::move(effect), std::nullopt});
    return *this;
  }
  PodBuilder& pod_affinity(model::PodAffinityTerm term) {
    auto& pa = affinity().pod_affinity;
    if (!pa) pa.emplace();
    pa->required.push_back(std::move(term));
    return *this;
  }
  PodBuilder& pod_anti_affinity(model::PodAffinityTerm term) {
    auto& pa = affinity().pod_anti_affinity;
    if (!pa) pa.emplace();
    pa->required.push_back(std::move(term));
    return *this;
  }
  PodBuilder& spread_constraint(model::TopologySpreadConstraint c) {
    pod_.spec.topology_spread_constraints.push_back(std::move(c));
    return *this;
  }
  PodBuilder& node_name(std::string n) {
    pod_.spec.node_name = std::move(n);
    return *this;
  }
  PodBuilder& terminating() {
    pod_.metadata.deletion_timestamp = "2024-01-01T00:00:00Z";
    return *this;
  }
  model::Pod build() const { return pod_; }
  operator model::Pod() const { return pod_; }  // NOLINT(google-explicit-constructor)

 private:
  model::Affinity& affinity() {
    if (!pod_.spec.affinity) pod_.spec.affinity.emplace();
    return *pod_.spec.affinity;
  }
  model::Pod pod_;
};

class NodeBuilder {
 public:
  // Default allocatable: 4 cpu, 8Gi memory, 110 pods; labelled with its hostname.
  explicit NodeBuilder(std::string name) {
    node_.metadata.labels["kubernetes.io/hostname"] = name;
    node_.metadata.name = std::move(name);
    node_.status.allocatable = res({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}});
    node_.status.capacity = node_.status.allocatable;
  }
  NodeBuilder& allocatable(model::ResourceList a) {
    node_.status.allocatable = std::move(a);
    return *this;
  }
  NodeBuilder& allocatable(std::string name, std::string value) {
    node_.status.allocatable[std::move(name)] = q(value);
    return *this;
  }
  NodeBuilder& label(std::string k, std::string v) {
    node_.metadata.labels[std::move(k)] = std::move(v);
    return *this;
  }
  NodeBuilder& no_labels() {
    node_.metadata.labels.clear();
    return *this;
  }
  NodeBuilder& zone(std::string z) { return label("topology.kubernetes.io/zone", std::move(z)); }
  NodeBuilder& taint(std::string key, std::string value, std::string effect) {
    node_.spec.taints.push_back({std::move(key), std::move(value), std::move(effect)});
    return *this;
  }
  NodeBuilder& unschedulable() {
    node_.spec.unschedulable = true;
    return *this;
  }
  model::Node build() const { return node_; }
  operator model::Node() const { return node_; }  // NOLINT(google-explicit-constructor)

 private:
  model::Node node_;
};

inline constexpr const char* kZone = "topology.kubernetes.io/zone";
inline constexpr const char* kHostname = "kubernetes.io/hostname";

inline void add_node(ClusterSnapshot& s, const model::Node& n) {
  ASSERT_TRUE(s.add_node(n).ok()) << n.metadata.name;
}
inline void add_pod(ClusterSnapshot& s, const model::Pod& p, std::string_view node) {
  auto st = s.add_pod(p, node);
  ASSERT_TRUE(st.ok()) << st.error().message;
}

// One plugin's PreFilter then Filter on one node, as the framework runs them.
inline FilterStatus run_plugin(const FilterPlugin& plugin, const model::Pod& pod,
                               const ClusterSnapshot& snapshot, std::string_view node_name) {
  auto info = PodInfo::make(pod);
  std::unique_ptr<PluginState> state;
  FilterStatus pre = plugin.pre_filter(*info, snapshot, state);
  if (pre.code == FilterCode::kSkip) return FilterStatus::success();
  if (!pre.ok()) return pre;
  const NodeInfo* node = snapshot.node(node_name);
  EXPECT_NE(node, nullptr) << node_name;
  if (node == nullptr) return FilterStatus::make(FilterCode::kError, "test", "no node");
  return plugin.filter(*info, state.get(), *node);
}

// Names of the nodes a plugin lets through, in snapshot order.
inline std::vector<std::string> passing_nodes(const FilterPlugin& plugin, const model::Pod& pod,
                                              const ClusterSnapshot& snapshot) {
  std::vector<std::string> out;
  for (const NodeInfo* n : snapshot.nodes()) {
    if (run_plugin(plugin, pod, snapshot, n->name()).ok()) out.push_back(n->name());
  }
  return out;
}

using Names = std::vector<std::string>;

}  // namespace hamisim::planner::framework::testing
