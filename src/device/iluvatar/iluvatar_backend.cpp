#include "device/iluvatar/iluvatar_backend.h"

#include <limits>

namespace hamisim::device::iluvatar {
namespace {

BackendIdentity iluvatar_identity(const IluvatarConfig& c) {
  const std::string& cw = c.common_word;
  BackendIdentity id;
  id.vendor = cw;
  id.names.count = c.resource_count_name;
  id.names.memory = c.resource_memory_name;
  id.names.cores = c.resource_core_name;
  // Quota limits on the vMem resource are in 256 MiB units (A.8).
  id.names.memory_factor = kMemoryUnitMiB;
  id.to_allocate_annotation = "hami.io/" + cw + "-devices-to-allocate";
  id.allocated_annotation = "hami.io/" + cw + "-devices-allocated";
  id.handshake_annotation = "hami.io/node-handshake-" + cw;
  // HAMi's NodeCleanUp is a no-op for Iluvatar although it has a handshake.
  id.health = HealthCheck::kHandshake;
  id.locks_node = true;
  id.use_uuid_annotation = "hami.io/use-" + cw + "-uuid";
  id.nouse_uuid_annotation = "hami.io/no-use-" + cw + "-uuid";
  return id;
}

IluvatarConfig chart_entry(const std::string& chip) {
  return IluvatarConfig{chip, chip, "iluvatar.ai/" + chip + "-vgpu",
                        "iluvatar.ai/" + chip + ".vMem", "iluvatar.ai/" + chip + ".vCore"};
}

// Go's int32(x) on an int64: the low 32 bits (well defined in C++20).
int32_t go_int32(int64_t v) {
  return static_cast<int32_t>(v);
}

constexpr int64_t kCoresPerDevice = 100;

}  // namespace

std::vector<IluvatarConfig> chart_configs() {
  return {chart_entry("MR-V100"), chart_entry("MR-V50"), chart_entry("BI-V150"),
          chart_entry("BI-V100")};
}

IluvatarBackend::IluvatarBackend(IluvatarConfig config)
    : StandardBackend(iluvatar_identity(config)),
      config_(std::move(config)),
      register_annotation_("hami.io/node-" + config_.common_word + "-register") {}

// GenerateResourceRequests (B.8 §3): each resource from limits, else requests.
ContainerDeviceRequest IluvatarBackend::request_for(const model::Container& c) const {
  const std::optional<int64_t> count = resource_int64(c, config_.resource_count_name);
  if (!count) return {};

  const std::optional<int64_t> memory =
      memory_units_mib(c, config_.resource_memory_name, kMemoryUnitMiB);
  if (!memory) return {};
  const int64_t mem = *memory;
  // Unlike Hygon and Cambricon, no cores asked means 0 (a shared slice), not the whole device.
  int32_t cores = 0;
  if (const std::optional<int64_t> v = resource_int64(c, config_.resource_core_name))
    cores = go_int32(*v);
  // HAMi truncates the count to int32 without a range check; a result <= 0 is no request.
  return ContainerDeviceRequest{go_int32(*count), config_.common_word, static_cast<int32_t>(mem),
                                mem == 0 ? 100 : 0, cores};
}

NodeDevices IluvatarBackend::node_devices(const model::Node& node) const {
  return registration_from_colon(node, register_annotation_, config_.common_word);
}

IluvatarAdmission IluvatarBackend::admission(const model::Container& c) const {
  IluvatarAdmission out;
  if (config_.resource_count_name.empty()) return out;
  auto it = c.resources.limits.find(config_.resource_count_name);
  if (it == c.resources.limits.end()) return out;
  out.found = true;
  // Quantity.Value() rounds up: "1.5" GPUs are 2, so 200 cores. A core resource named ""
  // is not written (the API server would refuse the pod).
  const int64_t count = it->second.value();
  if (count > 1 && !config_.resource_core_name.empty()) {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / kCoresPerDevice;
    out.cores_limit = count > kMax ? std::numeric_limits<int64_t>::max() : count * kCoresPerDevice;
  }
  if (!c.name.empty()) out.container_name_env = c.name;
  return out;
}

Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults) {
  Backends out;
  if (chart_defaults) {
    for (IluvatarConfig& c : chart_configs()) {
      out.push_back(std::make_shared<IluvatarBackend>(std::move(c)));
    }
    return out;
  }
  // A file without the list configures no Iluvatar backend, as HAMi does.
  auto entries = section.items();
  if (!entries) return entries.error();
  for (const ConfigSection& entry : *entries) {
    IluvatarConfig c;
    for (Status s : {entry.read("commonWord", c.common_word), entry.read("chipName", c.chip_name),
                     entry.read("resourceCountName", c.resource_count_name),
                     entry.read("resourceMemoryName", c.resource_memory_name),
                     entry.read("resourceCoreName", c.resource_core_name)}) {
      if (!s) return s.error();
    }
    if (c.common_word.empty()) continue;
    out.push_back(std::make_shared<IluvatarBackend>(std::move(c)));
  }
  return out;
}

}  // namespace hamisim::device::iluvatar
