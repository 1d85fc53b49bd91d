// libFuzzer target: every vendor backend end to end, as the scheduler drives them. The bytes
// describe a node (registration annotations of every vendor, capacity, labels), a pod to place
// (containers asking for vendor resources, pod annotations), pods already running on the node
// (their allocated annotations), namespace quotas and optionally a device-config.yaml. The
// target then reads the node's description, accounts the running pods, prepares and fits the pod,
// reads back what the fit wrote as if the pod were running and fits it a second time, with
// HAMi's chart-default registry (Ascend and Iluvatar enabled) and, when the YAML loads, with the
// registry it configures. Nothing may crash, hang, leak or trip a sanitizer; every refusal has
// a message, and what a successful fit writes on the pod must read back (unless a device ID or
// type holds a separator of HAMi's device string, which the format cannot carry).
//
// Input: one selector byte, then NUL-separated fields, each a tag byte and a body:
//   N<key>=<value>  node annotation           C<name>=<quantity>  node capacity (= allocatable)
//   L<key>=<value>  node label                M<name>             node name
//   P<key>=<value>  annotation of the current pod (the pod to place, or the last `U` pod)
//   I<name> / K<name>  new init / app container of the current pod
//   R<name>=<quantity> / Q<name>=<quantity>  limit / request of the current container
//   U<phase>        a new running pod on the node (becomes the current pod)
//   T<name>=<exit code>  a terminated init container status of the current pod
//   H<key>=<quantity>  spec.hard of the namespace's ResourceQuota
//   Y<yaml>         HAMi device-config.yaml
// A key written "@<n>" is the n-th (mod size) entry of the tag's table of known keys (every
// vendor's registration keys, resource names, pod annotation keys), so that mutations land on
// keys the backends read. Selector bits: 0 explain, 1 binpack GPU policy, 2 spread node policy,
// 3 namespace quota, 4 a scheduling time, 5 mutex GPU policy, 6 init containers succeeded.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "device/amd/amd_backend.h"
#include "device/ascend/ascend_backend.h"
#include "device/awsneuron/awsneuron_backend.h"
#include "device/biren/biren_backend.h"
#include "device/catalog/device_config.h"
#include "device/codec.h"
#include "device/common/standard_backend.h"
#include "device/enflame/enflame_backends.h"
#include "device/hygon/hygon_backend.h"
#include "device/iluvatar/iluvatar_backend.h"
#include "device/kunlun/kunlun_backend.h"
#include "device/kunlun/xpu_backend.h"
#include "device/metax/metax_gpu.h"
#include "device/metax/metax_sgpu.h"
#include "device/nvidia/nvidia_backend.h"
#include "device/vastai/vastai_backend.h"
#include "fit/description.h"
#include "fit/node_fit.h"
#include "fit/quota.h"

namespace {

using namespace hamisim;

// Pods and containers beyond these add time, not code paths.
constexpr size_t kMaxContainers = 32;
constexpr size_t kMaxRunningPods = 32;

const device::DeviceRegistry& chart_registry() {
  static const device::DeviceRegistry registry = [] {
    device::DeviceConfig config;
    config.enable_ascend = config.enable_iluvatar = true;
    return device::build_registry(config);
  }();
  return registry;
}

using Table = std::vector<std::string>;

void add_unique(Table& table, std::string_view key) {
  if (key.empty()) return;
  for (const std::string& k : table) {
    if (k == key) return;
  }
  table.emplace_back(key);
}

struct Tables {
  Table node_annotations;
  Table resources;
  Table labels;
  Table pod_annotations;
  Table quota_keys;
};

const Tables& tables() {
  static const Tables t = [] {
    Tables t;
    const device::DeviceRegistry& registry = chart_registry();
    // Registration keys, in the vendor headers' names.
    for (std::string_view key :
         {device::kNvidiaRegisterAnnotation, device::amd::kRegisterAnnotation,
          device::biren::kRegisterAnnotation, device::enflame::kDrsCapacityAnnotation,
          device::hygon::kRegisterAnnotation, device::kunlun::kXpuRegisterAnnotation,
          device::metax::kSgpuRegisterAnnotation, device::metax::kLossAnnotation,
          device::metax::kScoreAnnotation, device::vastai::kRegisterAnnotation,
          device::ascend::kNodeHamiCoreAnnotation, device::kDeviceCordonAnnotation}) {
      add_unique(t.node_annotations, key);
    }
    for (const device::ascend::VnpuConfig& chip : device::ascend::chart_chips()) {
      add_unique(t.node_annotations, "hami.io/node-register-" + chip.common_word);
    }
    for (const auto& backend : registry.backends()) {
      if (const auto* b = dynamic_cast<const device::iluvatar::IluvatarBackend*>(backend.get())) {
        add_unique(t.node_annotations, b->register_annotation());
      }
      add_unique(t.node_annotations, backend->handshake_annotation());
    }
    // Every resource name any backend reads.
    for (const auto& backend : registry.backends()) {
      const device::ResourceNames& n = backend->resource_names();
      for (const std::string* name : {&n.count, &n.memory, &n.memory_percentage, &n.cores}) {
        add_unique(t.resources, *name);
      }
      for (const std::string& name : backend->managed_resources()) add_unique(t.resources, name);
    }
    for (const std::string& name : t.resources) add_unique(t.quota_keys, "limits." + name);
    add_unique(t.labels, device::awsneuron::kInstanceTypeLabel);
    // Pod annotations: allocations, filters, modes and policies.
    for (const auto& backend : registry.backends()) {
      add_unique(t.pod_annotations, backend->allocated_annotation());
      add_unique(t.pod_annotations, backend->to_allocate_annotation());
      if (const auto* b = dynamic_cast<const device::StandardBackend*>(backend.get())) {
        const device::BackendIdentity& id = b->identity();
        for (const std::string* key : {&id.use_uuid_annotation, &id.nouse_uuid_annotation,
                                       &id.use_type_annotation, &id.nouse_type_annotation}) {
          add_unique(t.pod_annotations, *key);
        }
      }
    }
    for (std::string_view key :
         {device::kMigAllocationsAnnotation, device::kAssignedNodeAnnotation,
          device::ascend::kVnpuModeAnnotation, device::metax::kQosPolicyAnnotation,
          device::metax::kAppClassAnnotation, device::metax::kTopologyAwareAnnotation,
          device::kunlun::kBaiduUseUuidAnnotation, device::kunlun::kBaiduNouseUuidAnnotation,
          device::nvidia::kUseGpuTypeAnnotation, device::nvidia::kNoUseGpuTypeAnnotation,
          device::nvidia::kUseGpuUuidAnnotation, device::nvidia::kNoUseGpuUuidAnnotation,
          device::nvidia::kVgpuModeAnnotation, device::nvidia::kNumaBindAnnotation,
          fit::kGpuSchedulerPolicyAnnotation, fit::kNodeSchedulerPolicyAnnotation,
          fit::kDeviceScoringWeightsAnnotation}) {
      add_unique(t.pod_annotations, key);
    }
    return t;
  }();
  return t;
}

// "@<n>" -> table[n % size]; anything else is the key itself.
std::string resolve(std::string_view key, const Table& table) {
  if (key.size() < 2 || key[0] != '@' || table.empty()) return std::string(key);
  size_t n = 0;
  for (char c : key.substr(1)) {
    if (c < '0' || c > '9') return std::string(key);
    n = (n * 10 + static_cast<size_t>(c - '0')) % 1000003;
  }
  return table[n % table.size()];
}

struct Input {
  uint8_t selector = 0;
  model::Node node;
  model::Pod pod;
  std::vector<model::Pod> running;
  std::vector<model::ResourceQuota> quotas;
  std::optional<std::string> yaml;
};

Input parse_input(std::string_view data) {
  Input in;
  in.node.metadata.name = "node-1";
  in.pod.metadata.name = "pod";
  in.pod.metadata.namespace_ = "default";
  in.pod.status.phase = "Pending";
  if (data.empty()) return in;
  in.selector = static_cast<uint8_t>(data[0]);
  data.remove_prefix(1);

  const Tables& t = tables();
  in.running.reserve(kMaxRunningPods);
  model::Pod* current = &in.pod;
  model::Container* container = nullptr;
  auto split = [](std::string_view body) {
    const size_t eq = body.find('=');
    if (eq == std::string_view::npos) return std::pair{body, std::string_view()};
    return std::pair{body.substr(0, eq), body.substr(eq + 1)};
  };
  auto quantity = [](std::string_view text) { return model::Quantity::parse(text); };
  auto containers = [&] {
    return current->spec.init_containers.size() + current->spec.containers.size();
  };

  while (!data.empty()) {
    const size_t end = data.find('\0');
    const std::string_view field = data.substr(0, end);
    data.remove_prefix(end == std::string_view::npos ? data.size() : end + 1);
    if (field.empty()) continue;
    const char tag = field[0];
    const std::string_view body = field.substr(1);
    const auto [raw_key, value] = split(body);
    switch (tag) {
      case 'N':
        in.node.metadata.annotations[resolve(raw_key, t.node_annotations)] = std::string(value);
        break;
      case 'C':
        if (auto q = quantity(value)) {
          const std::string name = resolve(raw_key, t.resources);
          in.node.status.capacity[name] = *q;
          in.node.status.allocatable[name] = *q;
        }
        break;
      case 'L':
        in.node.metadata.labels[resolve(raw_key, t.labels)] = std::string(value);
        break;
      case 'M':
        in.node.metadata.name = std::string(body);
        break;
      case 'P':
        current->metadata.annotations[resolve(raw_key, t.pod_annotations)] = std::string(value);
        break;
      case 'I':
      case 'K':
        if (containers() >= kMaxContainers) break;
        container =
            &(tag == 'I' ? current->spec.init_containers : current->spec.containers).emplace_back();
        container->name = std::string(body);
        break;
      case 'R':
      case 'Q':
        if (!container) break;
        if (auto q = quantity(value)) {
          auto& list = tag == 'R' ? container->resources.limits : container->resources.requests;
          list[resolve(raw_key, t.resources)] = *q;
        }
        break;
      case 'U':
        container = nullptr;
        // Beyond the cap, fields keep going to the last running pod.
        if (in.running.size() >= kMaxRunningPods) break;
        current = &in.running.emplace_back();
        current->metadata.name = "running-" + std::to_string(in.running.size());
        current->metadata.namespace_ = "default";
        current->spec.node_name = in.node.metadata.name;
        current->status.phase = std::string(body);
        break;
      case 'T': {
        model::ContainerStatus status;
        status.name = std::string(raw_key);
        model::ContainerStateTerminated terminated;
        for (char c : value) {
          if (c < '0' || c > '9') break;
          terminated.exit_code = terminated.exit_code * 10 % 1000 + (c - '0');
        }
        status.terminated = terminated;
        current->status.init_container_statuses.push_back(std::move(status));
        break;
      }
      case 'H':
        if (auto q = quantity(value)) {
          if (in.quotas.empty()) {
            in.quotas.emplace_back().metadata.namespace_ = "default";
            in.quotas.back().metadata.name = "quota";
          }
          in.quotas.back().spec.hard[resolve(raw_key, t.quota_keys)] = *q;
        }
        break;
      case 'Y':
        in.yaml = std::string(body);
        break;
      default:
        break;
    }
  }
  // Selector bit 6: every init container of the pod to place has succeeded (they then stop
  // holding devices once it runs).
  if (in.selector & 0x40) {
    for (const model::Container& c : in.pod.spec.init_containers) {
      model::ContainerStatus status;
      status.name = c.name;
      status.terminated = model::ContainerStateTerminated{};
      in.pod.status.init_container_statuses.push_back(std::move(status));
    }
  }
  return in;
}

bool readable(const device::PodDevices& devices) {
  for (const auto& [vendor, list] : devices) {
    for (const device::ContainerDevices& container : list) {
      for (const device::ContainerDevice& d : container) {
        if (d.uuid.find_first_of(",:;") != std::string::npos ||
            d.type.find_first_of(",:;") != std::string::npos) {
          return false;
        }
      }
    }
  }
  return true;
}

void run(const device::DeviceRegistry& registry, const Input& in) {
  const uint8_t sel = in.selector;
  const fit::DescriptionResult description = fit::read_registered_description(in.node, registry);
  fit::NodeUsage usage = fit::fresh_usage(description.description);

  fit::DeviceQuota quota(registry);
  for (const model::ResourceQuota& q : in.quotas) quota.add_quota(q);
  for (const model::Pod& p : in.running) {
    auto allocation = fit::decode_pod_allocation(p, registry);
    if (!allocation) {
      if (allocation.error().message.empty()) std::abort();
      continue;
    }
    fit::add_pod_usage(usage, *allocation);
    quota.add_usage(p.metadata.namespace_, *allocation);
  }
  (void)quota.admission_check(in.pod);

  fit::FitPolicy policy;
  policy.default_gpu_policy = sel & 0x20 ? "mutex" : (sel & 0x02 ? "binpack" : "spread");
  policy.default_node_policy = sel & 0x04 ? "spread" : "binpack";
  auto prepared = fit::prepare_pod(in.pod, registry, policy);
  if (!prepared) return;
  prepared->explain = (sel & 0x01) != 0;
  const device::QuotaView* quota_view = sel & 0x08 ? &quota : nullptr;
  fit::AllocationSite site;
  site.node = in.node.metadata.name;
  if (sel & 0x10) site.unix_nanos = 1764763200123456789;

  // The pod is placed, then runs with what the fit wrote; a second copy is placed next to it.
  for (int round = 0; round < 2; ++round) {
    const fit::NodeFit placed =
        fit::fit_pod(*prepared, usage, description.description, registry, quota_view, site);
    if (!placed.fits) {
      if (placed.reason.empty()) std::abort();
      return;
    }
    // What the pod carries once bound: the fit's annotations, none left from the input.
    model::Pod running = in.pod;
    running.status.phase = "Running";
    for (const auto& backend : registry.backends()) {
      running.metadata.annotations.erase(std::string(backend->allocated_annotation()));
    }
    running.metadata.annotations.erase(std::string(device::kMigAllocationsAnnotation));
    for (const auto& [key, value] : placed.annotations) running.metadata.annotations[key] = value;
    auto allocation = fit::decode_pod_allocation(running, registry);
    if (!allocation) {
      // The scheduler must read back what it wrote, unless a device ID or type holds one of
      // the device string's separators (HAMi's format cannot carry those).
      if (readable(placed.devices)) std::abort();
      return;
    }
    fit::add_pod_usage(usage, *allocation);
    quota.add_usage(running.metadata.namespace_, *allocation);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Input in = parse_input(std::string_view(reinterpret_cast<const char*>(data), size));
  run(chart_registry(), in);
  if (in.yaml) {
    auto config = device::parse_device_config(*in.yaml);
    if (!config) {
      if (config.error().message.empty()) std::abort();
    } else {
      config->enable_ascend = config->enable_iluvatar = true;
      run(device::build_registry(*config), in);
    }
  }
  return 0;
}
