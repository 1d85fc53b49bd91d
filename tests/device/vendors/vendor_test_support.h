#pragma once
// Builders shared by the vendor backend tests: registries as serve builds them, nodes with
// registrations or capacity, and a whole-pod Fit through the engine (the path /filter-simulation
// and the live filter take), with the usage of pods already on the node.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "device/catalog/device_config.h"
#include "fit/description.h"
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
  DescriptionResult inv = read_registered_description(node, registry);
  if (inv.state != DescriptionResult::State::kOk) {
    ADD_FAILURE() << "node " << node.metadata.name << " has no usable devices: " << inv.message;
    return NodeFit{};
  }
  NodeUsage usage = fresh_usage(inv.description);
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
  return fit_pod(*prepared, usage, inv.description, registry);
}

// The backend's Fit called directly, as HAMi's unit tests do (no NodeInsufficientDevice
// pre-check): its outcome, and its reasons formatted as GenReason over the devices given.
struct DirectFit {
  device::FitOutcome outcome;
  std::string reason;
  std::vector<std::string> uuids() const {
    std::vector<std::string> out;
    for (const auto& d : outcome.devices) out.push_back(d.uuid);
    return out;
  }
};
inline DirectFit direct_fit(const device::DeviceBackend& backend,
                            std::vector<device::DeviceUsage>& devices,
                            const device::ContainerDeviceRequest& request,
                            const model::Pod& pod = PodBuilder().build(),
                            std::string_view policy = "spread") {
  std::vector<device::DeviceUsage*> ptrs;
  for (auto& d : devices) ptrs.push_back(&d);
  auto prepared = backend.prepare(pod);
  device::FitContext ctx;
  ctx.pod = &pod;
  ctx.prepared = prepared.get();
  ctx.gpu_policy = policy;
  DirectFit out;
  out.outcome = backend.fit(ptrs, request, ctx);
  out.reason = device::format_reasons(out.outcome.reasons, ptrs.size());
  return out;
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
