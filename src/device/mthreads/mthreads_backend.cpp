#include "device/mthreads/mthreads_backend.h"

#include <algorithm>
#include <limits>

#include "device/allocation.h"
#include "device/codec.h"

namespace hamisim::device::mthreads {
namespace {

BackendIdentity mthreads_identity(const MthreadsConfig& c) {
  BackendIdentity id;
  id.vendor = std::string(kVendor);
  id.names.count = c.resource_count_name;
  id.names.memory = c.resource_memory_name;
  id.names.cores = c.resource_core_name;
  id.names.memory_factor = kMemoryUnitMiB;
  id.to_allocate_annotation = std::string(kToAllocateAnnotation);
  id.allocated_annotation = std::string(kAllocatedAnnotation);
  id.health = HealthCheck::kAlways;
  id.locks_node = false;
  id.use_uuid_annotation = std::string(kUseUuidAnnotation);
  id.nouse_uuid_annotation = std::string(kNouseUuidAnnotation);
  return id;
}

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// Go's int64 multiplication wraps; unsigned arithmetic gives the same bits without UB.
int64_t go_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

}  // namespace

MthreadsBackend::MthreadsBackend(MthreadsConfig config)
    : StandardBackend(mthreads_identity(config)), config_(std::move(config)) {}

// GenerateResourceRequests (B.11 §3): limits, else requests, for each name.
ContainerDeviceRequest MthreadsBackend::request_for(const model::Container& c) const {
  const model::Quantity* count_q = find_resource(c, config_.resource_count_name);
  if (!count_q) return {};
  const std::optional<int64_t> count = count_q->as_int64();
  if (!count || *count < 1 || *count > kInt32Max) return {};
  const auto n = static_cast<int32_t>(*count);

  const std::optional<int64_t> memory =
      memory_units_mib(c, config_.resource_memory_name, kMemoryUnitMiB);
  if (!memory) return {};
  const auto mem = static_cast<int32_t>(*memory);
  int32_t cores = 0;
  if (const model::Quantity* q = find_resource(c, config_.resource_core_name)) {
    // Go converts with int32(...), which keeps the low 32 bits; so does this cast.
    if (const std::optional<int64_t> v = q->as_int64()) cores = static_cast<int32_t>(*v);
  }
  // The pod spec states totals; each GPU gets an even share (integer division).
  return ContainerDeviceRequest{n, std::string(kVendor), mem / n, mem == 0 ? 100 : 0, cores / n};
}

NodeDevices MthreadsBackend::node_devices(const model::Node& node) const {
  NodeDevices out;
  // A negative count: HAMi's loop produces no device, which the scheduler treats as none.
  const std::optional<int64_t> capacity =
      capacity_devices(node, config_.resource_core_name, kMaxDevices * kCoresPerGpu, "cores", out,
                       "no device found on node");
  if (!capacity) return out;
  const int64_t cores = *capacity;
  const int64_t memory_units = capacity_count(node, config_.resource_memory_name);
  // HAMi: int32(memoryTotal * 512 * 16 / cores), each step with Go's wrapping arithmetic.
  const auto devmem =
      static_cast<int32_t>(go_mul(go_mul(memory_units, kMemoryUnitMiB), kCoresPerGpu) / cores);
  for (int64_t i = 0; i * kCoresPerGpu < cores; ++i) {
    out.devices.push_back(capacity_device(node, "mthreads", i, kVendor, 100, devmem,
                                          static_cast<int32_t>(kCoresPerGpu)));
  }
  out.state = NodeDevices::State::kOk;
  return out;
}

bool MthreadsBackend::type_allowed(const DeviceUsage& device, const StandardPreparedPod&) const {
  // HAMi's strings.Contains(dev.Type, k.Type); the request type is already known to be ours.
  return device.type.find(kVendor) != std::string::npos;
}

bool MthreadsBackend::custom_rule_allows(const DeviceUsage& device, const FitContext& ctx) const {
  if (!ctx.allocated) return true;
  // HAMi looks the pod's allocation up under the device's Type, not the request's.
  auto it = ctx.allocated->find(device.type);
  if (it == ctx.allocated->end()) return true;
  // Init containers and app containers are fitted as two separate phases, each with its own
  // allocation map: only earlier containers of the current phase count.
  const size_t first =
      ctx.container_index < ctx.init_container_count ? 0 : ctx.init_container_count;
  const PodSingleDevice& list = it->second;
  for (size_t i = first; i < ctx.container_index && i < list.size(); ++i) {
    for (const ContainerDevice& d : list[i]) {
      if (d.uuid != device.id) return false;
    }
  }
  return true;
}

void MthreadsBackend::annotate_allocation(const PodSingleDevice& devices,
                                          const AnnotationContext& context,
                                          std::map<std::string, std::string>& annotations) const {
  if (devices.empty()) return;
  annotations[std::string(kAllocatedAnnotation)] = encode_pod_devices(devices);
  // Each container with devices writes its keys again; the last one wins.
  for (const ContainerDevices& container : devices) {
    if (container.empty()) continue;
    annotations[std::string(kGpuIndexAnnotation)] = join_indexes(container);
    annotations[std::string(kPredicateNodeAnnotation)] = std::string(context.node);
    // Without a scheduling time (simulation) the key is left out.
    if (context.unix_nanos) {
      annotations[std::string(kPredicateTimeAnnotation)] = std::to_string(*context.unix_nanos);
    }
  }
}

Result<MthreadsAdmission> admit_container(const MthreadsConfig& config, const model::Container& c) {
  MthreadsAdmission out;
  const model::Quantity* count_q = find_resource(c, config.resource_count_name);
  if (!count_q) return out;
  out.found = true;
  const int64_t count = count_q->value();
  if (count <= 0) return make_error(config.resource_count_name + " must be greater than 0");
  if (count > 1) {
    out.set_cores = go_mul(count, kCoresPerGpu);
    out.set_memory = go_mul(count, kMemoryUnitsPerGpu);
    out.request_gpu_num = std::to_string(count);
    return out;
  }
  auto mem = c.resources.limits.find(config.resource_memory_name);
  if (mem == c.resources.limits.end()) {
    out.set_cores = kCoresPerGpu;
    out.set_memory = kMemoryUnitsPerGpu;
    return out;
  }
  // A value that is not an integer reads as 0, which is not legal either.
  const int64_t units = mem->second.as_int64().value_or(0);
  if (std::find(kLegalMemoryUnits.begin(), kLegalMemoryUnits.end(), units) ==
      kLegalMemoryUnits.end()) {
    return make_error(
        "sGPU memory request value is invalid, valid values are [2, 4, 8, 16, 32, 64, 96]");
  }
  return out;
}

Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults) {
  MthreadsConfig c;
  if (!chart_defaults) c = MthreadsConfig{"", "", ""};
  for (Status s : {section.read("resourceCountName", c.resource_count_name),
                   section.read("resourceMemoryName", c.resource_memory_name),
                   section.read("resourceCoreName", c.resource_core_name)}) {
    if (!s) return s.error();
  }
  return Backends{std::make_shared<MthreadsBackend>(std::move(c))};
}

}  // namespace hamisim::device::mthreads
