// `hamisim doctor --cluster`: what a cluster dump says about HAMi under DRA (issue #29):
// device-plugin mode and DRA mode for the same devices, DeviceClass selectors hamisim cannot
// evaluate, and the feature gates the published devices need.
#include <algorithm>
#include <set>

#include "cel/selector.h"
#include "doctor/doctor.h"

namespace hamisim::doctor {
namespace {

// HAMi's device-plugin registrations: hami.io/node-<vendor>-register.
bool has_hami_registration(const model::Node& node) {
  for (const auto& [key, value] : node.metadata.annotations) {
    if (key.starts_with("hami.io/node-") && key.ends_with("-register")) return true;
  }
  return false;
}

// HAMi's DRA drivers (k8s-dra-driver's hami-core-gpu.project-hami.io, and the other vendors'
// under project-hami.io).
bool is_hami_driver(std::string_view driver) {
  return driver.ends_with("project-hami.io");
}

}  // namespace

std::vector<Finding> check_dra_cluster(const std::string& source,
                                       const std::vector<model::Node>& nodes,
                                       const dra::Objects& objects) {
  std::vector<Finding> out;
  auto add = [&](Severity s, std::string check, std::string field, std::string message,
                 std::string why, std::string fix) {
    out.push_back(Finding{s, std::move(check), ConfigRole::kClusterAutoscaler, source,
                          std::move(field), std::move(message), std::move(why), std::move(fix)});
  };

  // One mode per cluster: HAMi's documentation says device-plugin mode and DRA mode must not
  // share one.
  std::set<std::string> dra_nodes;
  for (const auto& s : objects.slices) {
    if (s.scope.node_name && is_hami_driver(s.driver)) dra_nodes.insert(*s.scope.node_name);
  }
  std::vector<std::string> registered;
  for (const auto& node : nodes) {
    if (!has_hami_registration(node)) continue;
    registered.push_back(node.metadata.name);
    if (dra_nodes.contains(node.metadata.name)) {
      add(Severity::kError, "dra-mixed-modes", "Node " + node.metadata.name,
          "node " + node.metadata.name +
              " registers devices with HAMi's device plugin and publishes them in "
              "ResourceSlices of HAMi's DRA driver",
          "both schedulers would hand out the same GPUs: HAMi's extender from the "
          "registration, kube-scheduler from the slices",
          "run one of HAMi's device plugin and its DRA driver on a node, not both");
    }
  }
  // Besides nodes in both modes (errors above), nodes in one mode beside nodes in the other.
  const std::set<std::string> registered_set(registered.begin(), registered.end());
  const bool separate = std::any_of(registered.begin(), registered.end(),
                                    [&](const std::string& n) { return !dra_nodes.contains(n); }) &&
                        std::any_of(dra_nodes.begin(), dra_nodes.end(), [&](const std::string& n) {
                          return !registered_set.contains(n);
                        });
  if (separate) {
    add(Severity::kWarning, "dra-mixed-modes", "",
        std::to_string(registered.size()) + " node(s) in HAMi's device-plugin mode (" +
            registered.front() + ", ...) and " + std::to_string(dra_nodes.size()) +
            " in its DRA mode (" + *dra_nodes.begin() + ", ...)",
        "HAMi says its two modes must not share a cluster; Cluster Autoscaler and "
        "hamisim plan each pod in the mode its requests ask for, so a workload can land on "
        "the wrong half",
        "move the cluster to one of the two modes");
  }

  // Selectors hamisim cannot evaluate: its plans would fail for every pod of the class.
  for (const auto& c : objects.classes) {
    for (size_t i = 0; i < c.selectors.size(); ++i) {
      auto compiled = cel::Selector::compile(c.selectors[i]);
      if (compiled) continue;
      add(Severity::kError, "dra-class-selector",
          "DeviceClass " + c.metadata.name + " selectors[" + std::to_string(i) + "]",
          compiled.error().message,
          "hamisim evaluates the CEL subset DRA drivers and classes use (docs/cel.md); a pod "
          "asking this class cannot be planned, by the planner or through /v1/plan",
          "write the selector within the subset, or report the expression so the subset grows");
    }
  }

  // What the published devices need from Kubernetes and Cluster Autoscaler.
  bool shareable = false, counters = false;
  for (const auto& s : objects.slices) {
    counters = counters || !s.shared_counters.empty();
    for (const auto& d : s.devices) {
      shareable = shareable || d.allow_multiple_allocations;
      counters = counters || !d.consumes_counters.empty();
    }
  }
  if (shareable) {
    add(Severity::kInfo, "dra-feature-gates", "",
        "devices are published as shareable (allowMultipleAllocations, consumable capacity)",
        "they need the DRAConsumableCapacity feature gate on the API server, kube-scheduler, "
        "kubelet and Cluster Autoscaler: beta and on by default from Kubernetes 1.36, alpha and "
        "off in 1.34 and 1.35, where an API server without it drops allowMultipleAllocations and "
        "requestPolicy from the slices; Cluster Autoscaler simulates DRA from 1.35",
        "");
  }
  if (counters) {
    add(Severity::kInfo, "dra-feature-gates", "", "devices consume shared counters (partitions)",
        "they need the DRAPartitionableDevices feature gate: beta and on by default from "
        "Kubernetes 1.36, alpha and off before",
        "");
  }
  return out;
}

}  // namespace hamisim::doctor
