#include "fit/node_fit.h"

#include <algorithm>
#include <optional>

#include "device/allocation.h"
#include "go/strconv.h"

namespace hamisim::fit {
namespace {

std::string effective_policy(const model::Pod& pod, std::string_view annotation,
                             const std::string& fallback) {
  const std::string* v = model::find_annotation(pod.metadata, annotation);
  return v && !v->empty() ? *v : fallback;
}

// The class of a backend's failure, from its reason counts (what classify_failure reads back
// from their text).
FitClass classify_reasons(const device::ReasonCounts& reasons) {
  if (reasons.empty()) return FitClass::kInternal;
  bool capacity = false;
  reasons.for_each(
      [&](device::Reason r, int) { capacity = capacity || device::is_capacity_reason(r); });
  return capacity ? FitClass::kInsufficientCapacity : FitClass::kConstraintMismatch;
}

// Fits one container's requests on `usage` (HAMi fitInDevices), recording the chosen devices
// in `allocated` at `container_index`. With `commit`, the chosen devices' usage is added to
// `usage` (a working copy: later requests of the pod see it); without, `usage` is the
// caller's and is not written: the usage is added to scratch copies of the chosen devices,
// for add_usage's checks and MIG placements, since no later request reads it.
// Returns the failure string, empty on success; `failure_class` is set when the failure's class
// is known without reading the string back. A backend's failure also leaves its counts in
// `fit` (and its verdicts), and without `reason_text` only those: the string is then a
// placeholder (fit_pod's caller renders it from the counts).
std::string fit_container(const PreparedPod& pod, size_t container_index, const NodeUsage& usage,
                          bool commit, std::vector<device::DeviceUsage*>& order,
                          const DeviceDescription& description,
                          const device::DeviceRegistry& registry, const device::QuotaView* quota,
                          device::PodDevices& allocated, NodeFit& fit, bool reason_text,
                          std::optional<FitClass>& failure_class) {
  const device::ContainerRequests& requests = pod.requests[container_index];
  thread_local std::vector<float> score_values;
  score_values.clear();
  // A node's devices mostly share one vendor: what the requests add to a device is worked out
  // once per run of devices of one vendor.
  const std::string* demand_vendor = nullptr;
  DeviceDemand demand;
  for (const device::DeviceUsage& d : usage.devices) {
    if (demand_vendor == nullptr || demand.per_device || *demand_vendor != d.vendor) {
      demand_vendor = &d.vendor;
      demand = device_demand(d, requests);
    }
    score_values.push_back(demand_score(d, demand, pod.weights));
  }
  const DeviceScores scores{usage.devices.data(), score_values};
  // Without commit: copies of the chosen devices, by the device they copy (add_usage also
  // places MIG instances, so two instances on one GPU must see each other). The copies are
  // assigned over those of earlier fits, whose strings and vectors keep their memory.
  thread_local std::vector<device::DeviceUsage> scratch;
  thread_local std::vector<const device::DeviceUsage*> scratch_of;
  scratch_of.clear();

  for (const auto& [vendor, request] : requests) {
    sort_devices(order, scores, pod.gpu_policy, pod.numa_bind);
    const device::DeviceBackend* backend = registry.find(request.type);
    auto state = pod.vendor_state.find(request.type);
    if (!backend || state == pod.vendor_state.end()) return std::string(kDeviceTypeNotFound);

    thread_local std::vector<device::DeviceUsage*> candidates;
    candidates.clear();
    // A node's devices mostly share one type: it is matched once per run of equal types.
    const std::string* matched_type = nullptr;
    bool matches = false;
    for (device::DeviceUsage* d : order) {
      if (matched_type == nullptr || *matched_type != d->type) {
        matched_type = &d->type;
        matches = device::contains_ignore_case(d->type, request.type);
      }
      if (matches) candidates.push_back(d);
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
    ctx.cordoned = &description.cordoned;
    ctx.allocated = &allocated;
    ctx.init_container_count = pod.init_count;
    ctx.container_index = container_index;
    ctx.quota = quota;
    ctx.explain = pod.explain;
    device::FitOutcome outcome = backend->fit(candidates, request, ctx);
    if (!outcome.fits) {
      fit.verdicts = std::move(outcome.verdicts);
      fit.reasons = outcome.reasons;
      fit.reason_cards = outcome.reason_cards.value_or(candidates.size());
      failure_class = classify_reasons(outcome.reasons);
      if (!reason_text) return std::string(1, '-');  // short: no allocation
      return device::format_reasons(fit.reasons, fit.reason_cards);
    }

    for (device::ContainerDevice& chosen : outcome.devices) {
      auto dev = std::find_if(usage.devices.begin(), usage.devices.end(),
                              [&](const device::DeviceUsage& d) { return d.id == chosen.uuid; });
      if (dev == usage.devices.end()) {
        return "Device with UUID \"" + chosen.uuid + "\" not found on node after Fit";
      }
      device::DeviceUsage* target = const_cast<device::DeviceUsage*>(&*dev);
      if (!commit) {
        auto copy = std::find(scratch_of.begin(), scratch_of.end(), &*dev);
        if (copy == scratch_of.end()) {
          scratch_of.push_back(&*dev);
          if (scratch.size() < scratch_of.size()) {
            scratch.push_back(*dev);
          } else {
            scratch[scratch_of.size() - 1] = *dev;
          }
          copy = scratch_of.end() - 1;
        }
        target = &scratch[static_cast<size_t>(copy - scratch_of.begin())];
      }
      if (Status s = backend->add_usage(*target, chosen); !s) {
        return "AddResourceUsage failed for device " + chosen.uuid + ": " + s.error().message;
      }
    }
    device::PodSingleDevice& list = allocated[vendor];
    if (list.size() <= container_index) list.resize(container_index + 1);
    list[container_index] = std::move(outcome.devices);
  }
  return {};
}

// HAMi pads the pod's device map with an empty entry per container under every device Type
// present on the node (reference: hami-other-vendors.md A.5), and then calls every backend's
// PatchAnnotations and, for every key of the map, ScoreNode. A vendor whose devices are typed
// exactly with its vendor key (Cambricon's MLU, Ascend's chip names, AWSNeuron, ...) therefore
// writes its annotations and adds its node score for a pod that asks none of its devices, on a
// node it shares with the vendor the pod does ask for. These are those vendors: registered,
// present on the node under exactly their key, not in `allocated`; ascending vendor key.
std::vector<const device::DeviceBackend*> unrequested_vendors(
    const DeviceDescription& description, const device::DeviceRegistry& registry,
    const device::PodDevices& allocated) {
  std::vector<const device::DeviceBackend*> out;
  if (allocated.empty()) return out;  // HAMi writes nothing for a pod without devices
  const std::string* previous = nullptr;
  for (const device::DeviceInfo& d : description.devices) {
    if (previous && *previous == d.type) continue;  // a node's devices mostly share a type
    previous = &d.type;
    if (allocated.contains(d.type)) continue;
    const device::DeviceBackend* backend = registry.find(d.type);
    if (backend && std::find(out.begin(), out.end(), backend) == out.end()) out.push_back(backend);
  }
  std::sort(out.begin(), out.end(),
            [](const auto* a, const auto* b) { return a->vendor() < b->vendor(); });
  return out;
}

// The devices in registration order, as the backends take them, into `out` (a per-thread
// vector that keeps its memory). DeviceBackend::fit never writes through these pointers; only
// fit_container's committed add_usage does, and only on the working copy.
void pointers(const NodeUsage& usage, std::vector<device::DeviceUsage*>& out) {
  out.clear();
  for (const auto& d : usage.devices) out.push_back(const_cast<device::DeviceUsage*>(&d));
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
    p.numa_bind = go::parse_bool(*v, &b) && b;
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
  const auto names = device::parse_reasons(reason);
  if (names.empty()) return FitClass::kInternal;
  for (const auto& [name, count] : names) {
    const std::optional<device::Reason> r = device::find_reason(name);
    if (r && device::is_capacity_reason(*r)) return FitClass::kInsufficientCapacity;
  }
  return FitClass::kConstraintMismatch;
}

void annotate(NodeFit& fit, const PreparedPod& pod, const DeviceDescription& description,
              const device::DeviceRegistry& registry, const AllocationSite& site) {
  const device::AnnotationContext context{pod.pod, site.node, description.devices, site.unix_nanos};
  // The padded vendors first: should two backends write one key, the requested vendor's value
  // is the one that stays (HAMi's order is Go map order).
  const device::PodSingleDevice padding(pod.requests.size());
  for (const device::DeviceBackend* backend :
       unrequested_vendors(description, registry, fit.devices)) {
    backend->annotate_allocation(padding, context, fit.annotations);
  }
  for (const auto& [vendor, list] : fit.devices) {
    if (const device::DeviceBackend* backend = registry.find(vendor)) {
      backend->annotate_allocation(list, context, fit.annotations);
    }
  }
}

NodeFit fit_pod(const PreparedPod& pod, const NodeUsage& base, const DeviceDescription& description,
                const device::DeviceRegistry& registry, const device::QuotaView* quota,
                const AllocationSite& site, bool with_annotations, bool with_reason_text) {
  NodeFit out;
  const size_t total = pod.requests.size();
  device::PodDevices allocated;

  std::optional<FitClass> failure_class;
  auto failed = [&](std::string reason, size_t container) {
    out.fits = false;
    out.failed_container = static_cast<int>(container);
    out.fit_class = failure_class ? *failure_class : classify_failure(reason);
    // A backend's failure without its text: the caller renders it from out.reasons.
    if (with_reason_text || !failure_class) out.reason = std::move(reason);
    out.devices.clear();
    return std::move(out);
  };

  // Allocations accumulate over the requests of one container (one per vendor) and over the
  // app containers. Where a later request must see an earlier one's usage, the requests are
  // fitted against a working copy of the usage (the same per-thread copy each time, which
  // reuses its memory); a pod with a single request, the common case, needs no copy at all
  // (copying was 40% of a live filter's fits).
  thread_local NodeUsage working;
  thread_local std::vector<device::DeviceUsage*> order;
  // Init containers run one after another: each is fitted against the pod-less usage.
  for (size_t i = 0; i < pod.init_count && i < total; ++i) {
    if (pod.requests[i].empty()) continue;
    const bool accumulate = pod.requests[i].size() > 1;
    if (accumulate) working = base;
    const NodeUsage& usage = accumulate ? working : base;
    pointers(usage, order);
    std::string reason = fit_container(pod, i, usage, accumulate, order, description, registry,
                                       quota, allocated, out, with_reason_text, failure_class);
    if (!reason.empty()) return failed(std::move(reason), i);
  }
  // App containers run together.
  size_t app_requests = 0;
  for (size_t i = pod.init_count; i < total; ++i) app_requests += pod.requests[i].size();
  const bool accumulate = app_requests > 1;
  if (accumulate) working = base;
  const NodeUsage& app = accumulate ? working : base;
  out.node_score = node_default_score(base.devices);
  pointers(app, order);
  for (size_t i = pod.init_count; i < total; ++i) {
    if (pod.requests[i].empty()) continue;
    std::string reason = fit_container(pod, i, app, accumulate, order, description, registry, quota,
                                       allocated, out, with_reason_text, failure_class);
    if (!reason.empty()) return failed(std::move(reason), i);
  }

  // Positional per vendor: one entry per container, init containers first (aligned form).
  for (auto& [vendor, list] : allocated) list.resize(total);
  out.devices = std::move(allocated);
  out.fits = true;
  out.fit_class = FitClass::kFits;
  for (const auto& [vendor, list] : out.devices) {
    if (const device::DeviceBackend* backend = registry.find(vendor)) {
      auto state = pod.vendor_state.find(vendor);
      const device::PreparedPod* prepared =
          state == pod.vendor_state.end() ? nullptr : state->second.get();
      out.node_score += backend->score_node(base.devices, list, pod.node_policy, prepared);
    }
  }
  const std::vector<const device::DeviceBackend*> padded =
      unrequested_vendors(description, registry, out.devices);
  if (!padded.empty()) {
    const device::PodSingleDevice padding(total);
    for (const device::DeviceBackend* backend : padded) {
      out.node_score += backend->score_node(base.devices, padding, pod.node_policy);
    }
  }
  if (with_annotations) annotate(out, pod, description, registry, site);
  return out;
}

bool better_node_score(float score, float best, std::string_view node_policy) {
  return node_policy == "spread" ? score < best : score > best;
}

size_t choose_node(const std::vector<float>& scores, std::string_view node_policy) {
  size_t best = 0;
  for (size_t i = 1; i < scores.size(); ++i) {
    if (better_node_score(scores[i], scores[best], node_policy)) best = i;
  }
  return best;
}

}  // namespace hamisim::fit
