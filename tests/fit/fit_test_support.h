#pragma once
// Small builders for Fit tests: Pods, Nodes, device registrations and a ready-to-use NVIDIA
// registry. Header-only so that other test directories can include it without linking
// anything beyond hamisim_fit.
//
// Register annotations are written by hand here (not with the codec's encoder) so that Fit
// tests do not depend on the encoder being right.

#include <gtest/gtest.h>

#include <cstdlib>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "device/codec.h"
#include "device/nvidia/nvidia_backend.h"
#include "device/registry.h"
#include "device/types.h"
#include "fit/description.h"
#include "fit/node_fit.h"
#include "model/objects.h"
#include "model/quantity.h"
#include "registered_description.h"

namespace hamisim::fit::testing {

using Resources = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// NVIDIA resource names with the chart defaults.
inline constexpr std::string_view kGpu = "nvidia.com/gpu";
inline constexpr std::string_view kGpuMem = "nvidia.com/gpumem";
inline constexpr std::string_view kGpuMemPct = "nvidia.com/gpumem-percentage";
inline constexpr std::string_view kGpuCores = "nvidia.com/gpucores";

// A quantity that must parse; a test typo fails loudly.
inline model::Quantity qty(std::string_view text) {
  auto q = model::Quantity::parse(text);
  if (!q) {
    ADD_FAILURE() << "bad quantity in test: " << text << ": " << q.error().message;
    return model::Quantity::from_int(0);
  }
  return *q;
}

inline model::ResourceList resource_list(Resources items) {
  model::ResourceList out;
  for (const auto& [name, value] : items) out.emplace(std::string(name), qty(value));
  return out;
}

// A container with the given limits (and optionally requests).
inline model::Container container(std::string name, Resources limits, Resources requests = {}) {
  model::Container c;
  c.name = std::move(name);
  c.image = "cuda";
  c.resources.limits = resource_list(limits);
  c.resources.requests = resource_list(requests);
  return c;
}

// The usual vGPU container: `gpus` GPUs, `mem` MiB and `cores` % each (0 = not set).
inline model::Container gpu_container(std::string name, int gpus, int mem = 0, int cores = 0) {
  model::Container c;
  c.name = std::move(name);
  c.image = "cuda";
  c.resources.limits.emplace(std::string(kGpu), model::Quantity::from_int(gpus));
  if (mem) c.resources.limits.emplace(std::string(kGpuMem), model::Quantity::from_int(mem));
  if (cores) c.resources.limits.emplace(std::string(kGpuCores), model::Quantity::from_int(cores));
  return c;
}

inline model::Container plain_container(std::string name) {
  model::Container c;
  c.name = std::move(name);
  c.image = "busybox";
  c.resources.limits.emplace("cpu", model::Quantity::from_int(1));
  return c;
}

class PodBuilder {
 public:
  explicit PodBuilder(std::string name = "pod", std::string ns = "default") {
    pod_.metadata.name = std::move(name);
    pod_.metadata.namespace_ = std::move(ns);
    pod_.metadata.uid = "uid-" + pod_.metadata.name;
    pod_.status.phase = "Pending";
  }
  PodBuilder& init(model::Container c) {
    pod_.spec.init_containers.push_back(std::move(c));
    return *this;
  }
  PodBuilder& app(model::Container c) {
    pod_.spec.containers.push_back(std::move(c));
    return *this;
  }
  PodBuilder& annotate(std::string key, std::string value) {
    pod_.metadata.annotations[std::move(key)] = std::move(value);
    return *this;
  }
  PodBuilder& phase(std::string p) {
    pod_.status.phase = std::move(p);
    return *this;
  }
  PodBuilder& node(std::string n) {
    pod_.spec.node_name = n;
    pod_.metadata.annotations[std::string(device::kAssignedNodeAnnotation)] = std::move(n);
    return *this;
  }
  // hami.io/vgpu-devices-allocated (and -to-allocate) as a raw string.
  PodBuilder& allocated(std::string value) {
    pod_.metadata.annotations[std::string(device::kNvidiaAllocatedAnnotation)] = value;
    pod_.metadata.annotations[std::string(device::kNvidiaToAllocateAnnotation)] = std::move(value);
    return *this;
  }
  PodBuilder& mig_allocations(std::string json) {
    pod_.metadata.annotations[std::string(device::kMigAllocationsAnnotation)] = std::move(json);
    return *this;
  }
  PodBuilder& init_terminated(std::string name, int32_t exit_code) {
    model::ContainerStatus s;
    s.name = std::move(name);
    s.terminated =
        model::ContainerStateTerminated{exit_code, exit_code == 0 ? "Completed" : "Error"};
    pod_.status.init_container_statuses.push_back(std::move(s));
    return *this;
  }
  model::Pod build() const { return pod_; }

 private:
  model::Pod pod_;
};

// One registered GPU (DeviceInfo) with HAMi-like defaults.
struct Gpu {
  std::string id;
  uint64_t index = 0;
  int32_t count = 10;
  int32_t devmem = 16000;
  int32_t devcore = 100;
  std::string type = "NVIDIA-Tesla V100-PCIE-32GB";
  int64_t numa = 0;
  std::string mode = "hami-core";
  bool health = true;
  std::vector<device::MigProfile> mig_profiles{};
  std::map<std::string, int32_t, std::less<>> pair_scores{};

  Gpu& with_index(uint64_t v) {
    index = v;
    return *this;
  }
  Gpu& with_count(int32_t v) {
    count = v;
    return *this;
  }
  Gpu& with_mem(int32_t v) {
    devmem = v;
    return *this;
  }
  Gpu& with_core(int32_t v) {
    devcore = v;
    return *this;
  }
  Gpu& with_type(std::string v) {
    type = std::move(v);
    return *this;
  }
  Gpu& with_numa(int64_t v) {
    numa = v;
    return *this;
  }
  Gpu& with_mode(std::string v) {
    mode = std::move(v);
    return *this;
  }
  Gpu& unhealthy() {
    health = false;
    return *this;
  }

  device::DeviceInfo info() const {
    device::DeviceInfo d;
    d.id = id;
    d.index = index;
    d.count = count;
    d.devmem = devmem;
    d.devcore = devcore;
    d.type = type;
    d.numa = numa;
    d.mode = mode;
    d.mig_profiles = mig_profiles;
    d.health = health;
    d.device_vendor = std::string(device::kNvidiaVendor);
    d.pair_scores = pair_scores;
    return d;
  }
};

inline Gpu gpu(std::string id, int32_t devmem = 16000) {
  Gpu g;
  g.id = std::move(id);
  g.devmem = devmem;
  return g;
}

// A100-40GB dynamic-MIG profiles of hami-device-model.md §3.7's example: 1g.5gb x7 at 0..6,
// 2g.10gb at 0/2/4, 3g.20gb at 0/4.
inline std::vector<device::MigProfile> a100_mig_profiles() {
  auto profile = [](std::string name, int32_t mem, int32_t core, uint32_t slices,
                    std::vector<device::MigPlacement> placements) {
    device::MigProfile p;
    p.name = std::move(name);
    p.memory_mb = mem;
    p.core = core;
    p.slice_count = slices;
    p.placements = std::move(placements);
    p.placements_null = false;
    return p;
  };
  return {
      profile("1g.5gb", 5120, 14, 1, {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}),
      profile("2g.10gb", 10240, 28, 2, {{0, 2}, {2, 2}, {4, 2}}),
      profile("3g.20gb", 20480, 42, 3, {{0, 4}, {4, 4}}),
  };
}

inline Gpu mig_gpu(std::string id) {
  Gpu g = gpu(std::move(id), 40960);
  g.count = 7;
  g.type = "NVIDIA A100-SXM4-40GB";
  g.mode = "mig";
  g.mig_profiles = a100_mig_profiles();
  return g;
}

// JSON for hami.io/node-nvidia-register, written by hand (Go field order, omitempty).
inline std::string register_json(const std::vector<Gpu>& gpus) {
  std::string out = "[";
  for (size_t i = 0; i < gpus.size(); ++i) {
    const Gpu& g = gpus[i];
    if (i) out += ",";
    out += "{\"id\":\"" + g.id + "\"";
    if (g.index) out += ",\"index\":" + std::to_string(g.index);
    if (g.count) out += ",\"count\":" + std::to_string(g.count);
    if (g.devmem) out += ",\"devmem\":" + std::to_string(g.devmem);
    if (g.devcore) out += ",\"devcore\":" + std::to_string(g.devcore);
    if (!g.type.empty()) out += ",\"type\":\"" + g.type + "\"";
    if (g.numa) out += ",\"numa\":" + std::to_string(g.numa);
    if (!g.mode.empty()) out += ",\"mode\":\"" + g.mode + "\"";
    if (!g.mig_profiles.empty()) {
      out += ",\"migProfiles\":[";
      for (size_t p = 0; p < g.mig_profiles.size(); ++p) {
        const auto& mp = g.mig_profiles[p];
        if (p) out += ",";
        out += "{\"name\":\"" + mp.name + "\",\"memoryMB\":" + std::to_string(mp.memory_mb) +
               ",\"core\":" + std::to_string(mp.core) +
               ",\"sliceCount\":" + std::to_string(mp.slice_count) + ",\"placements\":[";
        for (size_t k = 0; k < mp.placements.size(); ++k) {
          if (k) out += ",";
          out += "{\"start\":" + std::to_string(mp.placements[k].start) +
                 ",\"size\":" + std::to_string(mp.placements[k].size) + "}";
        }
        out += "]}";
      }
      out += "]";
    }
    if (g.health) out += ",\"health\":true";
    out += "}";
  }
  out += "]";
  return out;
}

class NodeBuilder {
 public:
  explicit NodeBuilder(std::string name = "node1") { node_.metadata.name = std::move(name); }
  NodeBuilder& gpus(const std::vector<Gpu>& g) {
    node_.metadata.annotations[std::string(device::kNvidiaRegisterAnnotation)] = register_json(g);
    return *this;
  }
  NodeBuilder& annotate(std::string key, std::string value) {
    node_.metadata.annotations[std::move(key)] = std::move(value);
    return *this;
  }
  NodeBuilder& cordon(std::string value) {
    return annotate(std::string(device::kDeviceCordonAnnotation), std::move(value));
  }
  model::Node build() const { return node_; }

 private:
  model::Node node_;
};

inline std::shared_ptr<device::DeviceRegistry> nvidia_registry(
    device::nvidia::NvidiaConfig config = {}) {
  auto r = std::make_shared<device::DeviceRegistry>();
  r->add(std::make_shared<device::nvidia::NvidiaBackend>(std::move(config)));
  return r;
}

inline DeviceDescription description_of(const std::vector<Gpu>& gpus,
                                        std::set<std::string, std::less<>> cordoned = {}) {
  DeviceDescription inv;
  for (const Gpu& g : gpus) inv.devices.push_back(g.info());
  inv.cordoned = std::move(cordoned);
  return inv;
}

// One node under test: its description, its usage (existing pods added) and a Fit entry point.
// Not copyable: the usage points into the description.
class FitHarness {
 public:
  explicit FitHarness(const std::vector<Gpu>& gpus,
                      std::set<std::string, std::less<>> cordoned = {},
                      device::nvidia::NvidiaConfig config = {})
      : registry_(nvidia_registry(std::move(config))),
        description_(description_of(gpus, std::move(cordoned))),
        usage_(fresh_usage(description_)) {}
  FitHarness(const FitHarness&) = delete;
  FitHarness& operator=(const FitHarness&) = delete;

  // Adds an existing pod's recorded allocation to the node usage.
  void add_existing(const model::Pod& pod) {
    auto alloc = decode_pod_allocation(pod, *registry_);
    ASSERT_TRUE(alloc) << alloc.error().message;
    add_pod_usage(usage_, *alloc);
  }
  // Books usage directly on device `id` (as if some pods used it).
  void book(std::string_view id, int64_t used, int64_t mem, int64_t cores) {
    device::DeviceUsage& d = device(id);
    d.used += used;
    d.usedmem += mem;
    d.usedcores += cores;
  }
  device::DeviceUsage& device(std::string_view id) {
    for (auto& d : usage_.devices) {
      if (d.id == id) return d;
    }
    ADD_FAILURE() << "no device " << id;
    static device::DeviceUsage none;
    return none;
  }

  NodeFit fit(const model::Pod& pod, FitPolicy policy = {},
              const device::QuotaView* quota = nullptr) const {
    auto prepared = prepare_pod(pod, *registry_, policy);
    if (!prepared) {
      ADD_FAILURE() << prepared.error().message;
      return {};
    }
    return fit_pod(*prepared, usage_, description_, *registry_, quota);
  }

  const device::DeviceRegistry& registry() const { return *registry_; }
  const DeviceDescription& description() const { return description_; }
  NodeUsage& usage() { return usage_; }

 private:
  std::shared_ptr<device::DeviceRegistry> registry_;
  DeviceDescription description_;
  NodeUsage usage_;
};

// The encoded NVIDIA devices annotation of a successful fit ("" when absent).
inline std::string devices_annotation(const NodeFit& f) {
  auto it = f.annotations.find(std::string(device::kNvidiaAllocatedAnnotation));
  return it == f.annotations.end() ? std::string() : it->second;
}

// UUIDs chosen for container `index` (init first).
inline std::vector<std::string> chosen_uuids(const NodeFit& f, size_t index) {
  std::vector<std::string> out;
  auto it = f.devices.find(device::kNvidiaVendor);
  if (it == f.devices.end() || index >= it->second.size()) return out;
  for (const auto& d : it->second[index]) out.push_back(d.uuid);
  return out;
}

}  // namespace hamisim::fit::testing
