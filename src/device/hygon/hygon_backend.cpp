#include "device/hygon/hygon_backend.h"

#include <limits>

namespace hamisim::device::hygon {
namespace {

BackendIdentity hygon_identity(const HygonConfig& c) {
  BackendIdentity id;
  id.vendor = std::string(kVendor);
  id.names.count = c.resource_count_name;
  id.names.memory = c.resource_memory_name;
  id.names.cores = c.resource_core_name;
  id.names.memory_factor = c.memory_factor;
  id.to_allocate_annotation = "hami.io/dcu-devices-to-allocate";
  id.allocated_annotation = "hami.io/dcu-devices-allocated";
  id.handshake_annotation = std::string(kHandshakeAnnotation);
  id.cleanup_annotation = std::string(kHandshakeAnnotation);
  id.use_uuid_annotation = "hygon.com/use-gpuuuid";
  id.nouse_uuid_annotation = "hygon.com/nouse-gpuuuid";
  id.use_type_annotation = "hygon.com/use-dcutype";
  id.nouse_type_annotation = "hygon.com/nouse-dcutype";
  return id;
}

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

}  // namespace

HygonBackend::HygonBackend(HygonConfig config)
    : StandardBackend(hygon_identity(config)), config_(std::move(config)) {}

// GenerateResourceRequests (B.7 §3): limits, else requests, for each name.
ContainerDeviceRequest HygonBackend::request_for(const model::Container& c) const {
  const model::Quantity* count_q = find_resource(c, config_.resource_count_name);
  if (!count_q) return {};
  const std::optional<int64_t> count = count_q->as_int64();
  if (!count || *count < 1 || *count > kInt32Max) return {};

  int64_t mem = 0;
  if (const model::Quantity* q = find_resource(c, config_.resource_memory_name)) {
    if (const std::optional<int64_t> v = q->as_int64()) {
      if (*v < 0 || *v > kInt32Max) return {};
      mem = *v;
      if (config_.memory_factor > 1) {
        mem *= config_.memory_factor;
        if (mem > kInt32Max) return {};
      }
    }
  }
  int64_t cores = 100;
  if (const model::Quantity* q = find_resource(c, config_.resource_core_name)) {
    if (const std::optional<int64_t> v = q->as_int64()) {
      if (*v < 0 || *v > kInt32Max) return {};
      cores = *v;
    }
  }
  return ContainerDeviceRequest{static_cast<int32_t>(*count), std::string(kVendor),
                                static_cast<int32_t>(mem), mem == 0 ? 100 : 0,
                                static_cast<int32_t>(cores)};
}

NodeDevices HygonBackend::node_devices(const model::Node& node) const {
  return registration_from_colon(node, kRegisterAnnotation, kVendor);
}

Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults) {
  HygonConfig c;
  if (!chart_defaults) c = HygonConfig{"", "", "", 1};
  for (Status s : {section.read("resourceCountName", c.resource_count_name),
                   section.read("resourceMemoryName", c.resource_memory_name),
                   section.read("resourceCoreName", c.resource_core_name),
                   section.read("memoryFactor", c.memory_factor)}) {
    if (!s) return s.error();
  }
  return Backends{std::make_shared<HygonBackend>(std::move(c))};
}

}  // namespace hamisim::device::hygon
