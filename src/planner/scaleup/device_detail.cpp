#include "planner/scaleup/device_detail.h"

#include <fmt/format.h>

#include <vector>

namespace hamisim::planner::scaleup {
namespace {

std::string memory_of(const device::ContainerDeviceRequest& r) {
  if (r.memreq > 0) return fmt::format("{} MiB", r.memreq);
  if (r.mem_percentagereq != device::kNoMemPercentage) {
    return fmt::format("{}% of its memory", r.mem_percentagereq);
  }
  return "all of its memory";
}

// One vendor's request of the failed container against that vendor's devices on the node.
std::string describe(const device::ContainerDeviceRequest& r, const fit::NodeUsage& usage) {
  std::string out = fmt::format("asks {} {} GPU{} with {} and {}% cores", r.nums, r.type,
                                r.nums == 1 ? "" : "s", memory_of(r), r.coresreq);
  const device::DeviceUsage* most_memory = nullptr;
  const device::DeviceUsage* most_cores = nullptr;
  size_t devices = 0, with_slot = 0, healthy = 0;
  for (const auto& d : usage.devices) {
    if (d.vendor != r.type) continue;
    ++devices;
    if (!d.health) continue;
    ++healthy;
    if (d.used < d.count) ++with_slot;
    // Ties go to the first device, in the node's order.
    if (most_memory == nullptr ||
        d.totalmem - d.usedmem > most_memory->totalmem - most_memory->usedmem) {
      most_memory = &d;
    }
    if (most_cores == nullptr ||
        d.totalcore - d.usedcores > most_cores->totalcore - most_cores->usedcores) {
      most_cores = &d;
    }
  }
  if (devices == 0) return out + fmt::format("; the node has no {} GPU", r.type);
  if (most_memory == nullptr)
    return out + fmt::format("; none of its {} {} GPUs is healthy", devices, r.type);
  const int64_t free_memory = most_memory->totalmem - most_memory->usedmem;
  const int64_t free_cores = most_cores->totalcore - most_cores->usedcores;
  if (most_memory == most_cores) {
    out += fmt::format("; most free on one GPU: {} of {} MiB and {}% cores (GPU {})", free_memory,
                       most_memory->totalmem, free_cores, most_memory->index);
  } else {
    out += fmt::format("; most free on one GPU: {} of {} MiB (GPU {}), {}% cores (GPU {})",
                       free_memory, most_memory->totalmem, most_memory->index, free_cores,
                       most_cores->index);
  }
  out += fmt::format("; {} of {} GPUs {} a free slot", with_slot, devices,
                     with_slot == 1 ? "has" : "have");
  if (healthy < devices) out += fmt::format(", {} unhealthy", devices - healthy);
  return out;
}

}  // namespace

std::string device_rejection_detail(const engine::Engine& engine, const model::Pod& pod,
                                    const model::Node& node, std::span<const model::Pod> placed) {
  auto prepared = engine.prepare(pod, "pod");
  if (!prepared || !prepared->requests_devices()) return {};
  prepared->explain = true;
  std::vector<fit::PodAllocation> allocations;
  for (const model::Pod& p : placed) {
    if (auto a = engine.allocation(p); a && !a->empty())
      allocations.push_back(std::move(a).value());
  }
  const fit::KeyedNode keyed(node);
  fit::NodeUsage usage;
  const engine::Verdict verdict = engine.fit(*prepared, keyed, allocations, usage);
  if (verdict.passes() || !verdict.described ||
      verdict.described->state != fit::DescriptionResult::State::kOk) {
    return {};
  }
  const int ci = verdict.fit.failed_container;
  if (ci < 0 || static_cast<size_t>(ci) >= prepared->requests.size()) return {};
  std::string out;
  for (const auto& [vendor, r] : prepared->requests[static_cast<size_t>(ci)]) {
    if (!out.empty()) out += "; ";
    out += describe(r, usage);
  }
  if (prepared->requests.size() > 1 && !out.empty()) {
    const size_t i = static_cast<size_t>(ci);
    const auto& spec = pod.spec;
    const std::string& name = i < prepared->init_count
                                  ? spec.init_containers[i].name
                                  : spec.containers[i - prepared->init_count].name;
    out = fmt::format("container \"{}\" {}", name, out);
  }
  return out;
}

}  // namespace hamisim::planner::scaleup
