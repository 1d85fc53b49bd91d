#pragma once
// Builders shared by the vendor backend tests: registries as serve builds them, nodes with
// registrations or capacity, and a whole-pod Fit through the engine (the path /filter-simulation
// and the live filter take), with the usage of pods already on the node.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "device/catalog/device_config.h"
#include "fit/inventory.h"
#include "fit/node_fit.h"
#include "fit_test_support.h"

namespace hamisim::fit::testing {

// NVIDIA and every other vendor with HAMi's chart defaults, Ascend and Iluvatar enabled.
inline device::DeviceRegistry chart_registry() {
  device::DeviceConfig config;
  config.enable_ascend = true;
  config.enable_iluvatar = true;
  return device::build_registry(config);
}

// A registry from a device-config.yaml text (the test fails when it does not parse).
inline device::DeviceRegistry registry_from_yaml(std::string_view yaml) {
  auto config = device::parse_device_config(yaml);
  if (!config) {
    ADD_FAILURE() << config.error().message;
    return device::build_registry(device::DeviceConfig{});
  }
  config->enable_ascend = true;
  config->enable_iluvatar = true;
  return device::build_registry(*config);
}

inline model::Node vendor_node(std::string name,
                               std::map<std::string, std::string, std::less<>> annotations,
                               Resources capacity = {}) {
  model::Node n;
  n.metadata.name = std::move(name);
  for (auto& [k, v] : annotations) n.metadata.annotations[k] = v;
  n.status.capacity = resource_list(capacity);
  n.status.allocatable = n.status.capacity;
  return n;
}

// Fits `pod` on `node` after the pods in `running` (their allocated annotations) as HAMi's
// filter would; a node without devices fails the test.
inline NodeFit fit_on(const model::Pod& pod, const model::Node& node,
                      const device::DeviceRegistry& registry,
                      const std::vector<model::Pod>& running = {}) {
  InventoryResult inv = read_registered_inventory(node, registry);
  if (inv.state != InventoryResult::State::kOk) {
    ADD_FAILURE() << "node " << node.metadata.name << " has no usable devices: " << inv.message;
    return NodeFit{};
  }
  NodeUsage usage = fresh_usage(inv.inventory);
  for (const model::Pod& p : running) {
    auto allocation = decode_pod_allocation(p, registry);
    if (!allocation) {
      ADD_FAILURE() << allocation.error().message;
      continue;
    }
    add_pod_usage(usage, *allocation);
  }
  auto prepared = prepare_pod(pod, registry, FitPolicy{});
  if (!prepared) {
    ADD_FAILURE() << prepared.error().message;
    return NodeFit{};
  }
  return fit_pod(*prepared, usage, inv.inventory, registry);
}

// A pod already placed on `node` with the given annotations (allocated keys etc.).
inline model::Pod running_pod(std::string name, std::string node,
                              std::map<std::string, std::string> annotations) {
  PodBuilder b(std::move(name));
  b.node(std::move(node)).phase("Running");
  for (auto& [k, v] : annotations) b.annotate(k, v);
  return b.build();
}

// One container asking for the given resources (limits).
inline model::Pod pod_with(Resources limits, std::string name = "pod") {
  return PodBuilder(std::move(name)).app(container("main", limits)).build();
}

}  // namespace hamisim::fit::testing
