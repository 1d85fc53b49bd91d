#include "fit/node_fit.h"

#include <algorithm>

#include "device/allocation.h"

namespace hamisim::fit {
namespace {

std::string effective_policy(const model::Pod& pod, std::string_view annotation,
                             const std::string& fallback) {
  const std::string* v = model::find_annotation(pod.metadata, annotation);
  return v && !v->empty() ? *v : fallback;
}

// Fits one container's requests on `usage` (HAMi fitInDevices), committing the chosen
// devices to `usage` and recording them in `allocated` at `container_index`.
// Returns the failure string, empty on success.
std::string fit_container(const PreparedPod& pod, size_t container_index, NodeUsage& usage,
                          std::vector<device::DeviceUsage*>& order, const NodeInventory& inventory,
                          const device::DeviceRegistry& registry, const device::QuotaView* quota,
                          device::PodDevices& allocated,
                          std::vector<device::DeviceVerdict>& verdicts) {
  const device::ContainerRequests& requests = pod.requests[container_index];
  for (device::DeviceUsage& d : usage.devices) d.score = device_score(d, requests, pod.weights);

  for (const auto& [vendor, request] : requests) {
    sort_devices(order, pod.gpu_policy, pod.numa_bind);
    const device::DeviceBackend* backend = registry.find(request.type);
    auto state = pod.vendor_state.find(request.type);
    if (!backend || state == pod.vendor_state.end()) return std::string(kDeviceTypeNotFound);

    std::vector<device::DeviceUsage*> candidates;
    candidates.reserve(order.size());
    for (device::DeviceUsage* d : order) {
      if (device::contains_ignore_case(d->type, request.type)) candidates.push_back(d);
    }
    if (static_cast<size_t>(request.nums) > candidates.size() &&
        !backend->is_mig_request(*state->second, candidates)) {
      return std::string(kNodeInsufficientDevice);
    }

    device::FitContext ctx;
    ctx.pod = pod.pod;
    ctx.prepared = state->second.get();
    ctx.gpu_policy = pod.gpu_policy;
    ctx.numa_bind = pod.numa_bind;
    ctx.cordoned = &inventory.cordoned;
    ctx.allocated = &allocated;
    ctx.init_container_count = pod.init_count;
    ctx.container_index = container_index;
    ctx.quota = quota;
    ctx.explain = pod.explain;
    device::FitOutcome outcome = backend->fit(candidates, request, ctx);
    if (!outcome.fits) {
      verdicts = std::move(outcome.verdicts);
      return device::format_reasons(outcome.reasons,
                                    outcome.reason_cards.value_or(candidates.size()));
    }

    for (device::ContainerDevice& chosen : outcome.devices) {
      auto dev = std::find_if(usage.devices.begin(), usage.devices.end(),
                              [&](const device::DeviceUsage& d) { return d.id == chosen.uuid; });
      if (dev == usage.devices.end()) {
        return "Device with UUID \"" + chosen.uuid + "\" not found on node after Fit";
      }
      if (Status s = backend->add_usage(*dev, chosen); !s) {
        return "AddResourceUsage failed for device " + chosen.uuid + ": " + s.error().message;
      }
    }
    device::PodSingleDevice& list = allocated[vendor];
    if (list.size() <= container_index) list.resize(container_index + 1);
    list[container_index] = std::move(outcome.devices);
  }
  return {};
}

std::vector<device::DeviceUsage*> pointers(NodeUsage& usage) {
  std::vector<device::DeviceUsage*> out;
  out.reserve(usage.devices.size());
  for (auto& d : usage.devices) out.push_back(&d);
  return out;
}

}  // namespace

std::string_view to_string(FitClass c) {
  switch (c) {
    case FitClass::kFits:
      return "Fits";
    case FitClass::kNotInterested:
      return "NotInterested";
    case FitClass::kInsufficientCapacity:
      return "InsufficientCapacity";
    case FitClass::kConstraintMismatch:
      return "ConstraintMismatch";
    case FitClass::kNoDeviceDescription:
      return "NoDeviceDescription";
    case FitClass::kMalformedDeviceDescription:
      return "MalformedDeviceDescription";
    case FitClass::kProfileRejected:
      return "ProfileRejected";
    case FitClass::kInternal:
      return "Internal";
  }
  return "Internal";
}

Result<PreparedPod> prepare_pod(const model::Pod& pod, const device::DeviceRegistry& registry,
                                const FitPolicy& policy) {
  PreparedPod p;
  p.pod = &pod;
  p.requests = registry.requests_for(pod);
  p.init_count = pod.spec.init_containers.size();
  p.gpu_policy = effective_policy(pod, kGpuSchedulerPolicyAnnotation, policy.default_gpu_policy);
  p.node_policy = effective_policy(pod, kNodeSchedulerPolicyAnnotation, policy.default_node_policy);
  if (const std::string* v = model::find_annotation(pod.metadata, "nvidia.com/numa-bind")) {
    bool b = false;
    p.numa_bind = device::parse_go_bool(*v, &b) && b;
  }
  if (const std::string* w =
          model::find_annotation(pod.metadata, kDeviceScoringWeightsAnnotation)) {
    auto weights = parse_scoring_weights(*w);
    if (!weights) return weights.error();
    p.weights = *weights;
  }
  // Only the vendors the pod asks for are ever fitted.
  for (const device::ContainerRequests& container : p.requests) {
    for (const auto& [vendor, request] : container) {
      if (p.vendor_state.contains(vendor)) continue;
      if (const device::DeviceBackend* backend = registry.find(vendor)) {
        p.vendor_state.emplace(vendor, backend->prepare(pod));
      }
    }
  }
  return p;
}

FitClass classify_failure(std::string_view reason) {
  if (reason == kNodeInsufficientDevice) return FitClass::kInsufficientCapacity;
  if (reason == kDeviceTypeNotFound) return FitClass::kConstraintMismatch;
  static constexpr std::string_view kCapacity[] = {
      "CardInsufficientMemory",
      "CardInsufficientCore",
      "CardTimeSlicingExhausted",
      "CardComputeUnitsExhausted",
      "ExclusiveDeviceAllocateConflict",
      "AllocatedCardsInsufficientRequest",
      "ResourceQuotaNotFit",
  };
  const auto reasons = device::parse_reasons(reason);
  if (reasons.empty()) return FitClass::kInternal;
  for (const auto& [name, count] : reasons) {
    if (std::find(std::begin(kCapacity), std::end(kCapacity), name) != std::end(kCapacity)) {
      return FitClass::kInsufficientCapacity;
    }
  }
  return FitClass::kConstraintMismatch;
}

NodeFit fit_pod(const PreparedPod& pod, const NodeUsage& base, const NodeInventory& inventory,
                const device::DeviceRegistry& registry, const device::QuotaView* quota,
                const AllocationSite& site) {
  NodeFit out;
  const size_t total = pod.requests.size();
  device::PodDevices allocated;

  auto failed = [&](std::string reason, size_t container) {
    out.fits = false;
    out.failed_container = static_cast<int>(container);
    out.fit_class = classify_failure(reason);
    out.reason = std::move(reason);
    out.devices.clear();
    return out;
  };

  // The containers are fitted against a working copy of the usage (scores are written into it
  // and allocations accumulate). Copying into the same per-thread copy each time reuses its
  // strings' and vectors' memory: a fresh copy allocated and freed them for every node tried,
  // which was a third of a fit.
  thread_local NodeUsage working;
  // Init containers run one after another: each is fitted against the pod-less usage.
  for (size_t i = 0; i < pod.init_count && i < total; ++i) {
    if (pod.requests[i].empty()) continue;
    working = base;
    std::vector<device::DeviceUsage*> order = pointers(working);
    std::string reason =
        fit_container(pod, i, working, order, inventory, registry, quota, allocated, out.verdicts);
    if (!reason.empty()) return failed(std::move(reason), i);
  }
  // App containers run together: their allocations accumulate.
  NodeUsage& app = working;
  app = base;
  out.node_score = node_default_score(app.devices);
  std::vector<device::DeviceUsage*> order = pointers(app);
  for (size_t i = pod.init_count; i < total; ++i) {
    if (pod.requests[i].empty()) continue;
    std::string reason =
        fit_container(pod, i, app, order, inventory, registry, quota, allocated, out.verdicts);
    if (!reason.empty()) return failed(std::move(reason), i);
  }

  // Positional per vendor: one entry per container, init containers first (aligned form).
  for (auto& [vendor, list] : allocated) list.resize(total);
  out.devices = std::move(allocated);
  out.fits = true;
  out.fit_class = FitClass::kFits;
  const device::AnnotationContext context{pod.pod, site.node, inventory.devices, site.unix_nanos};
  for (const auto& [vendor, list] : out.devices) {
    if (const device::DeviceBackend* backend = registry.find(vendor)) {
      backend->annotate_allocation(list, context, out.annotations);
      out.node_score += backend->score_node(base.devices, list, pod.node_policy);
    }
  }
  return out;
}

size_t choose_node(const std::vector<float>& scores, std::string_view node_policy) {
  size_t best = 0;
  for (size_t i = 1; i < scores.size(); ++i) {
    const bool better =
        node_policy == "spread" ? scores[i] < scores[best] : scores[i] > scores[best];
    if (better) best = i;
  }
  return best;
}

}  // namespace hamisim::fit
