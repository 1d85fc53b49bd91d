#include "device/cambricon/cambricon_backend.h"

#include <limits>

namespace hamisim::device::cambricon {
namespace {

BackendIdentity cambricon_identity(const CambriconConfig& c) {
  BackendIdentity id;
  id.vendor = std::string(kVendor);
  id.names.count = c.resource_count_name;
  id.names.memory = c.resource_memory_name;
  id.names.cores = c.resource_core_name;
  // Quota limits on the vmemory resource are in 256 MiB units (A.8).
  id.names.memory_factor = kMemoryUnitMiB;
  id.to_allocate_annotation = std::string(kToAllocateAnnotation);
  id.allocated_annotation = std::string(kAllocatedAnnotation);
  id.health = HealthCheck::kAlways;
  // /bind takes its own lock instead of hami.io/mutex.lock (own_node_lock()).
  id.locks_node = false;
  id.use_uuid_annotation = std::string(kUseUuidAnnotation);
  id.nouse_uuid_annotation = std::string(kNouseUuidAnnotation);
  // cambricon.com/use-mlutype and nouse-mlutype exist in HAMi but are never read.
  return id;
}

// Go's int32(x) on an int64: the low 32 bits (well defined in C++20).
int32_t go_int32(int64_t v) {
  return static_cast<int32_t>(v);
}

}  // namespace

CambriconBackend::CambriconBackend(CambriconConfig config)
    : StandardBackend(cambricon_identity(config)), config_(std::move(config)) {}

// GenerateResourceRequests (B.5 §3): each resource from limits, else requests.
ContainerDeviceRequest CambriconBackend::request_for(const model::Container& c) const {
  const std::optional<int64_t> count = resource_int64(c, config_.resource_count_name);
  if (!count) return {};

  const std::optional<int64_t> memory =
      memory_units_mib(c, config_.resource_memory_name, kMemoryUnitMiB);
  if (!memory) return {};
  const int64_t mem = *memory;
  int32_t cores = 100;
  // No range check here: Fit clamps above 100; HAMi truncates to int32 like this.
  if (const std::optional<int64_t> v = resource_int64(c, config_.resource_core_name))
    cores = go_int32(*v);
  // HAMi truncates the count to int32 without a range check; a result <= 0 is no request.
  return ContainerDeviceRequest{go_int32(*count), std::string(kVendor), static_cast<int32_t>(mem),
                                mem == 0 ? 100 : 0, cores};
}

NodeDevices CambriconBackend::node_devices(const model::Node& node) const {
  NodeDevices out;
  // Devices are ceil(cores / 100); a negative count yields none (HAMi's loop, no error).
  const std::optional<int64_t> cards = capacity_devices(
      node, config_.resource_core_name, kMaxDevices * kCoresPerDevice, "cores", out);
  if (!cards) return out;
  const int64_t devices = (*cards - 1) / kCoresPerDevice + 1;
  // Go computes memoryTotal * 256 * 100 / cards in int64 (wrapping) and keeps the low 32
  // bits; unsigned arithmetic reproduces the wrap without signed overflow.
  const int64_t memory_total = capacity_count(node, config_.resource_memory_name);
  const auto scaled = static_cast<int64_t>(static_cast<uint64_t>(memory_total) *
                                           uint64_t{kMemoryUnitMiB * kCoresPerDevice});
  const int32_t devmem = go_int32(scaled / *cards);
  out.devices.reserve(static_cast<size_t>(devices));
  for (int64_t i = 0; i < devices; ++i) {
    out.devices.push_back(capacity_device(node, "cambricon-mlu", i, kVendor,
                                          static_cast<int32_t>(kCoresPerDevice), devmem,
                                          static_cast<int32_t>(kCoresPerDevice)));
  }
  out.state = NodeDevices::State::kOk;
  return out;
}

void CambriconBackend::annotate_allocation(const PodSingleDevice& devices,
                                           const AnnotationContext& context,
                                           std::map<std::string, std::string>& annotations) const {
  if (devices.empty()) return;
  annotations[std::string(kAssignedAnnotation)] = "false";
  for (const ContainerDevices& container : devices) {
    if (container.empty()) continue;
    const ContainerDevice& d = container.front();
    annotations[std::string(kProfileAnnotation)] = std::to_string(d.idx) + "_" +
                                                   std::to_string(d.usedcores) + "_" +
                                                   std::to_string(d.usedmem / kMemoryUnitMiB);
    break;
  }
  StandardBackend::annotate_allocation(devices, context, annotations);
}

std::vector<std::string> CambriconBackend::managed_resources() const {
  if (config_.resource_count_name.empty()) return {};
  return {config_.resource_count_name};
}

bool CambriconBackend::quota_allows(const FitContext& ctx, const ContainerDevices& selected,
                                    const ContainerDevice& candidate) const {
  return namespace_quota_allows(ctx, kVendor, selected, candidate);
}

Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults) {
  CambriconConfig c;
  // A file without the section leaves the names empty, as HAMi does.
  if (!chart_defaults) c = CambriconConfig{"", "", ""};
  for (Status s : {section.read("resourceCountName", c.resource_count_name),
                   section.read("resourceMemoryName", c.resource_memory_name),
                   section.read("resourceCoreName", c.resource_core_name)}) {
    if (!s) return s.error();
  }
  return Backends{std::make_shared<CambriconBackend>(std::move(c))};
}

}  // namespace hamisim::device::cambricon
