#include "planner/framework/plugins/node_resources_fit.h"

#include <fmt/format.h>

#include <algorithm>

namespace hamisim::planner::framework {
namespace {

struct FitState final : PluginState {
  Resource request;
  std::vector<std::string> dra_served;  // extended resources a DeviceClass serves
};

// request > allocatable - requested, without int64 overflow.
bool exceeds(int64_t request, int64_t allocatable, int64_t requested) {
  return static_cast<__int128>(request) >
         static_cast<__int128>(allocatable) - static_cast<__int128>(requested);
}

}  // namespace

NodeResourcesFit::NodeResourcesFit(NodeResourcesFitArgs args)
    : ignored_resources_(args.ignored_resources.begin(), args.ignored_resources.end()),
      ignored_groups_(args.ignored_resource_groups.begin(), args.ignored_resource_groups.end()) {}

FilterStatus NodeResourcesFit::pre_filter(const PodInfo& pod, const ClusterSnapshot& snapshot,
                                          std::unique_ptr<PluginState>& state) const {
  auto s = std::make_unique<FitState>();
  // Which resources are ignored is decided here, once per pod: naming a resource's kind for
  // every node was a tenth of a large plan's instructions.
  s->request = counted(pod_fit_request(pod.pod()));
  if (const DraCluster* dra = snapshot.dra(); dra && !s->request.scalar.empty()) {
    for (const auto& r : extended_resource_requests(pod.pod(), *dra)) {
      s->dra_served.push_back(r.resource);
    }
  }
  state = std::move(s);
  return FilterStatus::success();
}

Resource NodeResourcesFit::counted(Resource request) const {
  if (ignored_resources_.empty() && ignored_groups_.empty()) return request;
  for (auto it = request.scalar.begin(); it != request.scalar.end();) {
    const std::string& name = it->first;
    const bool ignored =
        is_extended_resource_name(name) &&
        (ignored_resources_.count(name) > 0 ||
         ignored_groups_.count(std::string_view(name).substr(0, name.find('/'))) > 0);
    it = ignored ? request.scalar.erase(it) : std::next(it);
  }
  return request;
}

std::vector<InsufficientResource> NodeResourcesFit::insufficient_resources(
    const Resource& request, const NodeInfo& node,
    const std::vector<std::string>* dra_served) const {
  return shortfalls(counted(request), node, dra_served);
}

std::vector<InsufficientResource> NodeResourcesFit::shortfalls(
    const Resource& request, const NodeInfo& node,
    const std::vector<std::string>* dra_served) const {
  std::vector<InsufficientResource> out;
  const Resource& alloc = node.allocatable();
  const Resource& used = node.requested();

  const auto pods = static_cast<int64_t>(node.pod_count());
  if (pods + 1 > alloc.allowed_pod_number) {
    out.push_back(
        {std::string(kResourcePods), "Too many pods", 1, pods, alloc.allowed_pod_number, false});
  }
  if (request.milli_cpu == 0 && request.memory == 0 && request.ephemeral_storage == 0 &&
      request.scalar.empty()) {
    return out;
  }
  auto check = [&](std::string_view name, int64_t want, int64_t allocatable, int64_t in_use) {
    if (want > 0 && exceeds(want, allocatable, in_use)) {
      out.push_back({std::string(name), fmt::format("Insufficient {}", name), want, in_use,
                     allocatable, want > allocatable});
    }
  };
  check(kResourceCpu, request.milli_cpu, alloc.milli_cpu, used.milli_cpu);
  check(kResourceMemory, request.memory, alloc.memory, used.memory);
  check(kResourceEphemeralStorage, request.ephemeral_storage, alloc.ephemeral_storage,
        used.ephemeral_storage);
  for (const auto& [name, want] : request.scalar) {
    if (want == 0) continue;
    int64_t allocatable = alloc.scalar_value(name);
    if (allocatable == 0 && dra_served &&
        std::find(dra_served->begin(), dra_served->end(), name) != dra_served->end()) {
      continue;  // DRA serves it on this node
    }
    int64_t in_use = used.scalar_value(name);
    if (exceeds(want, allocatable, in_use)) {
      out.push_back({name, fmt::format("Insufficient {}", name), want, in_use, allocatable,
                     want > allocatable});
    }
  }
  return out;
}

FilterStatus NodeResourcesFit::filter(const PodInfo& pod, const PluginState* state,
                                      const NodeInfo& node) const {
  std::vector<InsufficientResource> missing;
  if (state != nullptr) {
    const auto* s = static_cast<const FitState*>(state);
    missing = shortfalls(s->request, node, &s->dra_served);
  } else {
    missing = insufficient_resources(pod_fit_request(pod.pod()), node);
  }
  if (missing.empty()) return FilterStatus::success();
  FilterStatus status{FilterCode::kUnschedulable, std::string(kName), {}};
  for (auto& m : missing) {
    status.reasons.push_back(std::move(m.reason));
    if (m.unresolvable) status.code = FilterCode::kUnschedulableAndUnresolvable;
  }
  return status;
}

}  // namespace hamisim::planner::framework
