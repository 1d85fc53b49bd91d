#include "planner/modes/dra_mode.h"

#include <fmt/format.h>

#include <set>

#include "device/codec.h"
#include "device/nvidia/nvidia_backend.h"
#include "dra/capacity.h"
#include "dra/hami_driver.h"
#include "fit/description.h"
#include "fit/node_fit.h"
#include "planner/modes/hami_dra_webhook.h"
#include "profile/dra_slices.h"

namespace hamisim::planner::modes {
namespace {

bool terminated(const model::Pod& pod) {
  return pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
}

std::string pod_key(const model::Pod& pod) {
  return pod.metadata.namespace_ + "/" + pod.metadata.name;
}

std::vector<device::DeviceInfo> nvidia_devices(const std::vector<device::DeviceInfo>& devices) {
  std::vector<device::DeviceInfo> out;
  for (const device::DeviceInfo& d : devices) {
    if (d.device_vendor == device::kNvidiaVendor) out.push_back(d);
  }
  return out;
}

// What HAMi's device plugin adds to a node (or a template, or a profile) and its DRA driver
// does not.
void drop_device_plugin(model::StringMap& annotations, model::ResourceList& capacity,
                        model::ResourceList* allocatable, const device::ResourceNames& names) {
  for (std::string_view key : {device::kNvidiaRegisterAnnotation, device::kNvidiaScoreAnnotation,
                               device::kNvidiaHandshakeAnnotation}) {
    if (auto it = annotations.find(key); it != annotations.end()) annotations.erase(it);
  }
  capacity.erase(names.count);
  if (allocatable) allocatable->erase(names.count);
}

std::string count_of(int64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

class Converter {
 public:
  Converter(const scaleup::PlanInput& in, const profile::DeviceProfiles* profiles,
            const device::DeviceRegistry& registry, const device::ResourceNames& names)
      : in_(in), profiles_(profiles), registry_(registry), names_(names) {}

  DraModeInput run() {
    out_.input.quotas = in_.quotas;
    out_.input.node_groups = in_.node_groups;
    if (in_.dra) objects_ = in_.dra->objects();
    convert_nodes();
    convert_templates();
    convert_profiles();
    out_.input.pods.reserve(in_.pods.size());
    for (const model::Pod& pod : in_.pods) {
      if (pod.spec.node_name.empty() && !in_.pending && !terminated(pod)) {
        if (auto p = convert_pending(pod)) out_.input.pods.push_back(std::move(*p));
      } else if (!pod.spec.node_name.empty() && !terminated(pod)) {
        out_.input.pods.push_back(convert_running(pod));
      } else {
        out_.input.pods.push_back(pod);
      }
    }
    if (in_.pending) {
      out_.input.pending.emplace();
      for (const model::Pod& pod : *in_.pending) {
        if (auto p = convert_pending(pod)) out_.input.pending->push_back(std::move(*p));
      }
    }
    add_device_class();
    out_.input.dra = framework::DraCluster::make_if_any(std::move(objects_));
    notes();
    return std::move(out_);
  }

 private:
  void convert_nodes() {
    std::set<std::string, std::less<>> published;  // nodes already in DRA mode
    for (const dra::ResourceSlice& s : objects_.slices) {
      if (s.driver == dra::kHamiDriver && s.scope.node_name) published.insert(*s.scope.node_name);
    }
    out_.input.nodes.reserve(in_.nodes.size());
    for (const model::Node& node : in_.nodes) {
      model::Node& n = out_.input.nodes.emplace_back(node);
      const fit::DescriptionResult inv = fit::read_registered_description(node, registry_);
      if (inv.state != fit::DescriptionResult::State::kOk) continue;
      const std::vector<device::DeviceInfo> gpus = nvidia_devices(inv.description.devices);
      if (gpus.empty()) continue;
      if (model::find_annotation(node.metadata, device::kNvidiaScoreAnnotation)) ++topology_nodes_;
      cordoned_ += static_cast<int64_t>(inv.description.cordoned.size());
      note_devices(gpus);
      drop_device_plugin(n.metadata.annotations, n.status.capacity, &n.status.allocatable, names_);
      if (published.contains(node.metadata.name)) continue;
      objects_.slices.push_back(profile::hami_driver_slice(node.metadata.name, gpus));
      auto& by_uuid = gpus_[node.metadata.name];
      for (const dra::Device& d : objects_.slices.back().devices) {
        by_uuid[std::get<std::string>(d.attributes.at("uuid"))] = d;
      }
      ++out_.nodes_converted;
    }
  }

  void convert_templates() {
    for (auto& g : out_.input.node_groups.groups) {
      if (!g.template_node) continue;
      model::Node& t = *g.template_node;
      drop_device_plugin(t.metadata.annotations, t.status.capacity, &t.status.allocatable, names_);
    }
  }

  void convert_profiles() {
    auto converted = std::make_shared<profile::DeviceProfiles>();
    if (profiles_ != nullptr) {
      for (profile::DeviceProfile p : profiles_->profiles) {
        const std::vector<device::DeviceInfo> gpus = nvidia_devices(p.description.devices);
        if (p.annotations.contains(device::kNvidiaScoreAnnotation)) ++topology_profiles_;
        note_devices(gpus);
        if (p.dra_slices.empty() && !gpus.empty()) {
          p.dra_slices.push_back(profile::hami_driver_slice(p.name, gpus));
          ++out_.profiles_converted;
        }
        drop_device_plugin(p.annotations, p.capacity, nullptr, names_);
        std::erase_if(p.description.devices, [](const device::DeviceInfo& d) {
          return d.device_vendor == device::kNvidiaVendor;
        });
        converted->profiles.push_back(std::move(p));
      }
    }
    out_.profiles = std::move(converted);
  }

  // What HAMi's registration says that the driver's slice does not carry.
  void note_devices(const std::vector<device::DeviceInfo>& gpus) {
    for (const device::DeviceInfo& d : gpus) {
      if (d.count > 0) split_counts_.insert(d.count);
      if (d.mode == "mig") ++mig_gpus_;
    }
  }

  void note_pending(const model::Pod& pod) {
    const auto& a = pod.metadata.annotations;
    if (a.contains(fit::kGpuSchedulerPolicyAnnotation) ||
        a.contains(fit::kNodeSchedulerPolicyAnnotation)) {
      ++policy_pods_;
    }
    if (a.contains(device::nvidia::kUseGpuTypeAnnotation) ||
        a.contains(device::nvidia::kNoUseGpuTypeAnnotation)) {
      ++type_pods_;
    }
    if (a.contains(device::nvidia::kNumaBindAnnotation)) ++numa_pods_;
    for (const auto& container : registry_.requests_for(pod)) {
      for (const auto& [vendor, request] : container) {
        if (vendor != device::kNvidiaVendor && request.nums > 0) {
          other_vendors_.insert(vendor);
          other_vendor_pods_.insert(pod_key(pod));
        }
      }
    }
  }

  std::optional<model::Pod> convert_pending(const model::Pod& pod) {
    note_pending(pod);
    auto conv = convert_pod(pod, names_);
    if (!conv) {
      out_.refused[pod_key(pod)] = "HAMi-DRA's webhook refuses it: " + conv.error().message;
      return std::nullopt;
    }
    if (!conv->unconverted.empty()) {
      std::string what;
      for (const auto& u : conv->unconverted) what += (what.empty() ? "" : "; ") + u;
      out_.unconverted[pod_key(pod)] = std::move(what);
    }
    if (!conv->claims.empty()) ++out_.pending_pods_converted;
    for (dra::ResourceClaim& c : conv->claims) {
      const auto& requests = c.spec.requests.front().exactly->capacity_requests;
      if (requests.contains("memory") && !requests.contains("cores")) ++memory_without_cores_;
      objects_.claims.push_back(std::move(c));
    }
    return std::move(conv->pod);
  }

  // A running pod as the webhook would have admitted it, its claims allocated on the GPUs its
  // HAMi allocation names. A pod whose devices cannot be found keeps unallocated claims (its
  // GPUs then look free in DRA mode) and is counted in the notes.
  model::Pod convert_running(const model::Pod& pod) {
    auto conv = convert_pod(pod, names_);
    if (!conv || conv->claims.empty()) return pod;
    const device::DeviceBackend* backend = registry_.find(device::kNvidiaVendor);
    const std::string* value =
        backend ? model::find_annotation(pod.metadata, backend->allocated_annotation()) : nullptr;
    device::PodSingleDevice positional;
    if (value) {
      if (auto decoded = device::decode_pod_devices(*value)) {
        positional = fit::positional_pod_devices(std::move(decoded).value(), pod, *backend);
      }
    }
    const auto node = gpus_.find(pod.spec.node_name);
    bool mapped = node != gpus_.end();
    const size_t init = pod.spec.init_containers.size();
    for (size_t k = 0; k < conv->claims.size() && mapped; ++k) {
      dra::ResourceClaim& claim = conv->claims[k];
      const size_t entry = init + conv->containers[k];
      if (entry >= positional.size() || positional[entry].empty()) {
        mapped = false;
        break;
      }
      const dra::ExactDeviceRequest& request = *claim.spec.requests.front().exactly;
      dra::AllocationResult& allocation = claim.status.allocation.emplace();
      for (const device::ContainerDevice& used : positional[entry]) {
        const auto device = node->second.find(used.uuid);
        if (device == node->second.end()) {
          mapped = false;
          break;
        }
        dra::DeviceRequestAllocationResult& r = allocation.results.emplace_back();
        r.request = std::string(dra::kHamiRequest);
        r.driver = std::string(dra::kHamiDriver);
        r.pool = pod.spec.node_name;
        r.device = device->second.name;
        r.share_id = fmt::format("00000000-0000-4000-8000-{:012x}", ++share_ids_);
        r.consumed_capacity = dra::consumed_capacity(device->second, request.capacity_requests);
      }
    }
    if (!mapped) {
      for (dra::ResourceClaim& c : conv->claims) c.status.allocation.reset();
      unmapped_running_.push_back(pod_key(pod));
    } else {
      ++out_.running_pods_converted;
    }
    for (dra::ResourceClaim& c : conv->claims) objects_.claims.push_back(std::move(c));
    return std::move(conv->pod);
  }

  void add_device_class() {
    for (const dra::DeviceClass& c : objects_.classes) {
      if (c.metadata.name == dra::kHamiDeviceClass) return;
    }
    dra::DeviceClass& c = objects_.classes.emplace_back();
    c.metadata.name = dra::kHamiDeviceClass;
    c.selectors.push_back(
        fmt::format("device.driver == \"{0}\" && device.attributes[\"{0}\"].type == \"{1}\"",
                    dra::kHamiDriver, dra::kHamiDeviceType));
    // The driver's chart names nvidia.com/gpu when it writes the v1 API (KEP-5004).
    c.extended_resource_name = names_.count;
  }

  void notes() {
    auto& n = out_.not_modelled;
    n.push_back(fmt::format(
        "GPU and node scheduling policies (binpack, spread; {} name one): the default scheduler "
        "takes the first GPU that fits, in slice order, and scores nodes without device usage",
        count_of(policy_pods_, "pending pod", "pending pods")));
    if (topology_nodes_ + topology_profiles_ > 0) {
      n.push_back(fmt::format("GPU topology scores ({}, {}): DRA mode places without them",
                              count_of(topology_nodes_, "node", "nodes"),
                              count_of(topology_profiles_, "profile", "profiles")));
    }
    if (!split_counts_.empty()) {
      std::string counts;
      for (int32_t c : split_counts_) counts += (counts.empty() ? "" : ", ") + std::to_string(c);
      n.push_back(fmt::format(
          "the share limit per GPU (HAMi's deviceSplitCount, {} here): DRA limits shares by cores "
          "and memory only",
          counts));
    }
    if (memory_without_cores_ > 0) {
      n.push_back(fmt::format(
          "{} set gpumem without gpucores: DRA's request policy gives them every core, so each "
          "holds its GPUs alone (HAMi shares the cores)",
          count_of(memory_without_cores_, "claim", "claims")));
    }
    if (type_pods_ > 0) {
      n.push_back(fmt::format(
          "use-gputype/nouse-gputype ({}): the webhook matches productName exactly, HAMi matches "
          "a case-insensitive part of the type",
          count_of(type_pods_, "pending pod", "pending pods")));
    }
    if (numa_pods_ > 0) {
      n.push_back(fmt::format("NUMA binding ({}): ignored in DRA mode",
                              count_of(numa_pods_, "pending pod", "pending pods")));
    }
    if (mig_gpus_ > 0) {
      n.push_back(fmt::format(
          "MIG ({} in MIG mode): HAMi's DRA driver publishes each GPU whole, with no MIG geometry",
          count_of(mig_gpus_, "GPU", "GPUs")));
    }
    if (cordoned_ > 0) {
      n.push_back(fmt::format("hami.io/device-cordon ({}): the DRA driver still publishes them",
                              count_of(cordoned_, "cordoned device", "cordoned devices")));
    }
    if (!other_vendors_.empty()) {
      std::string vendors;
      for (const auto& v : other_vendors_) vendors += (vendors.empty() ? "" : ", ") + v;
      n.push_back(
          fmt::format("{} ({}): HAMi-DRA's webhook converts NVIDIA resources only (its default "
                      "deviceVendors), so these stay extended resources no DRA node publishes",
                      count_of(static_cast<int64_t>(other_vendor_pods_.size()),
                               "pending pod asks for", "pending pods ask for") +
                          " other vendors' devices",
                      vendors));
    }
    if (!unmapped_running_.empty()) {
      n.push_back(fmt::format(
          "{} whose HAMi allocation names no GPU of its node's slice (first: {}): their GPUs "
          "count as free in DRA mode",
          count_of(static_cast<int64_t>(unmapped_running_.size()), "running pod", "running pods"),
          unmapped_running_.front()));
    }
  }

  const scaleup::PlanInput& in_;
  const profile::DeviceProfiles* profiles_;
  const device::DeviceRegistry& registry_;
  const device::ResourceNames& names_;
  DraModeInput out_;
  dra::Objects objects_;
  // Converted nodes' GPUs: node -> uuid -> the device of its slice.
  std::map<std::string, std::map<std::string, dra::Device, std::less<>>, std::less<>> gpus_;
  uint64_t share_ids_ = 0;
  int64_t policy_pods_ = 0, type_pods_ = 0, numa_pods_ = 0, memory_without_cores_ = 0;
  int64_t topology_nodes_ = 0, topology_profiles_ = 0, mig_gpus_ = 0, cordoned_ = 0;
  std::set<int32_t> split_counts_;
  std::set<std::string, std::less<>> other_vendors_, other_vendor_pods_;
  std::vector<std::string> unmapped_running_;
};

}  // namespace

Result<DraModeInput> to_dra_mode(const scaleup::PlanInput& in,
                                 const profile::DeviceProfiles* profiles,
                                 const device::DeviceRegistry& registry) {
  const device::DeviceBackend* nvidia = registry.find(device::kNvidiaVendor);
  // Without an NVIDIA backend there is nothing HAMi's DRA mode converts; its default names
  // still say what the webhook would look for.
  static const device::ResourceNames kDefaults{"nvidia.com/gpu", "nvidia.com/gpumem",
                                               "nvidia.com/gpumem-percentage",
                                               "nvidia.com/gpucores", 1};
  return Converter(in, profiles, registry, nvidia ? nvidia->resource_names() : kDefaults).run();
}

}  // namespace hamisim::planner::modes
