#include "server/hami_metrics.h"

#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "device/allocation.h"
#include "fit/description.h"

namespace hamisim::server {
namespace {

constexpr double kMiB = 1048576.0;
constexpr std::string_view kZone = "vGPU";

using Samples = std::vector<SnapshotFamily::Sample>;

// HAMi metrics.go isAMDDevice: the type, upper-cased, starts with AMD and the total is > 0.
bool is_amd(std::string_view type, int64_t total) {
  if (total <= 0 || type.size() < 3) return false;
  auto up = [](char c) { return c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c; };
  return up(type[0]) == 'A' && up(type[1]) == 'M' && up(type[2]) == 'D';
}

// AMD devices report cores as a percentage of the device (HAMi normalises them).
double amd_core_ratio(int64_t used, int64_t total) {
  return std::ceil(static_cast<double>(used) / static_cast<double>(total) * 100.0);
}

// One family per HAMi metric; label names in Go's sorted order, so series sort as HAMi's.
struct Family {
  SnapshotFamily* family = nullptr;
  Samples samples;
  void add(LabelValues labels, double value) { samples.push_back({std::move(labels), value}); }
  void publish() {
    // A (pod, device) seen under two vendors adds up, as HAMi's collector would fail instead.
    family->replace_summing(std::move(samples));
    samples = {};
  }
};

struct HamiFamilies {
  // current (§6.3)
  Family memory_limit, core_limit, memory_allocated, shared_count, core_allocated, overview,
      memory_ratio, mig_instance, quota_used, quota_limit, vgpu_memory, vgpu_core;
  // --legacy-metrics (§6.5)
  bool legacy = false;
  Family l_memory_limit, l_core_limit, l_memory_allocated, l_shared, l_core_allocated, l_overview,
      l_memory_percentage, l_mig, l_quota_used, l_vgpu_memory, l_vgpu_core;

  std::vector<Family*> all() {
    std::vector<Family*> out{&memory_limit,   &core_limit,  &memory_allocated, &shared_count,
                             &core_allocated, &overview,    &memory_ratio,     &mig_instance,
                             &quota_used,     &quota_limit, &vgpu_memory,      &vgpu_core};
    if (legacy) {
      for (Family* f : {&l_memory_limit, &l_core_limit, &l_memory_allocated, &l_shared,
                        &l_core_allocated, &l_overview, &l_memory_percentage, &l_mig, &l_quota_used,
                        &l_vgpu_memory, &l_vgpu_core}) {
        out.push_back(f);
      }
    }
    return out;
  }
};

void register_families(MetricsRegistry& m, HamiFamilies& f) {
  auto g = [&](Family& family, std::string_view name, std::string_view help,
               std::vector<std::string> labels) {
    family.family = &m.snapshot(name, help, MetricType::kGauge, std::move(labels));
  };
  const std::vector<std::string> dev{"device_index", "device_type", "device_uuid", "node", "zone"};
  const std::vector<std::string> dev_cores{"device_cores", "device_index", "device_type",
                                           "device_uuid",  "node",         "zone"};
  g(f.memory_limit, "hami_gpu_memory_limit_bytes", "Device memory limit for a certain GPU", dev);
  g(f.core_limit, "hami_gpu_core_limit_ratio", "Device core limit for a certain GPU", dev);
  g(f.memory_allocated, "hami_gpu_memory_allocated_bytes",
    "Device memory allocated for a certain GPU", dev_cores);
  g(f.shared_count, "hami_gpu_shared_count", "Number of containers sharing this GPU", dev);
  g(f.core_allocated, "hami_gpu_core_allocated_ratio", "Device core allocated for a certain GPU",
    dev);
  g(f.overview, "hami_node_gpu_overview", "GPU overview on a certain node",
    {"device_cores", "device_index", "device_memory_limit", "device_type", "device_uuid", "node",
     "zone"});
  g(f.memory_ratio, "hami_node_gpu_memory_allocated_ratio",
    "GPU Memory Allocated Percentage on a certain GPU", dev);
  g(f.mig_instance, "hami_node_gpu_mig_instance_info",
    "Realized MIG instance identity and scheduler placement",
    {"compute_instance_id", "device_index", "device_uuid", "gpu_instance_id", "mig_uuid", "node",
     "placement_size", "placement_start", "profile", "zone"});
  g(f.quota_used, "hami_resource_quota_used", "resourcequota usage for a certain device",
    {"limit", "namespace", "quota_name", "zone"});
  g(f.quota_limit, "hami_resource_quota_limit", "resourcequota limit for a certain device",
    {"namespace", "quota_name", "zone"});
  const std::vector<std::string> container{
      "container_index", "device_uuid", "namespace", "node", "pod", "zone"};
  g(f.vgpu_memory, "hami_vgpu_memory_allocated_bytes", "vGPU memory allocated from a container",
    container);
  g(f.vgpu_core, "hami_vgpu_core_allocated_ratio", "vGPU core allocated from a container",
    container);
  if (!f.legacy) return;
  const std::vector<std::string> l_dev{"deviceidx", "devicetype", "deviceuuid", "nodeid", "zone"};
  g(f.l_memory_limit, "GPUDeviceMemoryLimit", "Device memory limit for a certain GPU", l_dev);
  g(f.l_core_limit, "GPUDeviceCoreLimit", "Device memory core limit for a certain GPU", l_dev);
  g(f.l_memory_allocated, "GPUDeviceMemoryAllocated", "Device memory allocated for a certain GPU",
    {"devicecores", "deviceidx", "devicetype", "deviceuuid", "nodeid", "zone"});
  g(f.l_shared, "GPUDeviceSharedNum", "Number of containers sharing this GPU", l_dev);
  g(f.l_core_allocated, "GPUDeviceCoreAllocated", "Device core allocated for a certain GPU", l_dev);
  g(f.l_overview, "nodeGPUOverview", "GPU overview on a certain node",
    {"devicecores", "deviceidx", "devicememorylimit", "devicetype", "deviceuuid", "nodeid",
     "zone"});
  g(f.l_memory_percentage, "nodeGPUMemoryPercentage",
    "GPU Memory Allocated Percentage on a certain GPU",
    {"deviceidx", "deviceuuid", "nodeid", "zone"});
  g(f.l_mig, "nodeGPUMigInstance", "GPU Sharing mode. 0 for hami-core, 1 for mig, 2 for mps",
    {"deviceidx", "deviceuuid", "migname", "nodeid", "zone"});
  g(f.l_quota_used, "QuotaUsed", "resourcequota usage for a certain device",
    {"limit", "quotaName", "quotanamespace", "zone"});
  const std::vector<std::string> l_container{"containeridx", "deviceuuid",   "nodename",
                                             "podname",      "podnamespace", "zone"};
  g(f.l_vgpu_memory, "vGPUMemoryAllocated", "vGPU memory allocated from a container", l_container);
  g(f.l_vgpu_core, "vGPUCoreAllocated", "vGPU core allocated from a container", l_container);
}

std::string str(int64_t v) {
  return std::to_string(v);
}

// Rows 1-8: every device of every registered node, with the usage of the pods on it (HAMi's
// per-node usage snapshot). Only called on the leader.
void collect_devices(const live::LiveScheduler& live, const live::NodeTable& table,
                     HamiFamilies& f) {
  const std::string zone(kZone);
  // uuid -> (node, device) for the MIG rows.
  std::unordered_map<std::string, std::pair<const std::string*, const device::DeviceInfo*>> by_uuid;
  fit::NodeUsage usage;
  for (const auto& [name, node] : table) {
    for (const auto& d : node->description.devices) by_uuid[d.id] = {&name, &d};
    fit::reset_usage(usage, node->description);
    live.pods().add_node_usage(name, usage);
    for (const device::DeviceUsage& d : usage.devices) {
      const std::string index = std::to_string(d.index);
      const std::string total_cores = str(d.totalcore);
      const bool amd = is_amd(d.type, d.totalcore);
      const double limit_bytes = d.totalmem * kMiB;
      const double used_bytes = static_cast<double>(d.usedmem) * kMiB;
      const LabelValues base{index, d.type, d.id, name, zone};
      f.memory_limit.add(base, limit_bytes);
      f.core_limit.add(base, amd ? 100.0 : d.totalcore);
      f.memory_allocated.add({total_cores, index, d.type, d.id, name, zone}, used_bytes);
      f.shared_count.add(base, static_cast<double>(d.used));
      f.core_allocated.add(
          base, amd ? amd_core_ratio(d.usedcores, d.totalcore) : static_cast<double>(d.usedcores));
      f.overview.add({total_cores, index, str(d.totalmem), d.type, d.id, name, zone}, used_bytes);
      if (d.totalmem > 0) {
        f.memory_ratio.add(base, static_cast<double>(d.usedmem) / d.totalmem);
      }
      if (f.legacy) {
        f.l_memory_limit.add(base, limit_bytes);
        f.l_core_limit.add(base, d.totalcore);
        f.l_memory_allocated.add({total_cores, index, d.type, d.id, name, zone}, used_bytes);
        f.l_shared.add(base, static_cast<double>(d.used));
        f.l_core_allocated.add(base, static_cast<double>(d.usedcores));
        f.l_overview.add({total_cores, index, str(d.totalmem), d.type, d.id, name, zone},
                         used_bytes);
        if (d.totalmem > 0) {
          f.l_memory_percentage.add({index, d.id, name, zone},
                                    static_cast<double>(d.usedmem) / d.totalmem);
        }
      }
    }
  }
  // Row 8: realised MIG instances (UUID, GPU and compute instance ids all written by the
  // device plugin) on devices in MIG mode.
  live.pods().for_each([&](const live::PodRecord& pod) {
    for (const device::MigAllocation& m : pod.allocation.mig) {
      if (!m.mig_uuid || !m.gpu_instance_id || !m.compute_instance_id) continue;
      auto it = by_uuid.find(m.gpu_uuid);
      if (it == by_uuid.end() || it->second.second->mode != "mig") continue;
      const std::string& node = *it->second.first;
      const std::string index = std::to_string(it->second.second->index);
      f.mig_instance.add(
          {str(*m.compute_instance_id), index, m.gpu_uuid, str(*m.gpu_instance_id), *m.mig_uuid,
           node, str(m.placement.size), str(m.placement.start), m.profile, zone},
          1);
      if (f.legacy) {
        f.l_mig.add({index, m.gpu_uuid, m.profile + "-" + str(*m.gpu_instance_id), node, zone}, 1);
      }
    }
  });
}

// Rows 11-12: every (pod, device) the pod manager holds; AMD cores normalised against the
// registered device when it is known.
void collect_containers(const live::LiveScheduler& live, const live::NodeTable& table,
                        HamiFamilies& f) {
  const std::string zone(kZone);
  std::unordered_map<std::string_view, const device::DeviceInfo*> devices;
  for (const auto& [name, node] : table) {
    for (const auto& d : node->description.devices) devices[d.id] = &d;
  }
  live.pods().for_each([&](const live::PodRecord& pod) {
    for (const auto& [vendor, charges] : pod.allocation.charges) {
      for (const device::DeviceCharge& c : charges) {
        if (c.uuid.empty()) continue;  // HAMi: Warning, and no series
        LabelValues labels{"0", c.uuid, pod.namespace_, pod.node, pod.name, zone};
        const double bytes = static_cast<double>(c.usedmem) * kMiB;
        double cores = static_cast<double>(c.usedcores);
        auto d = devices.find(c.uuid);
        if (d != devices.end() && is_amd(d->second->type, d->second->devcore)) {
          cores = amd_core_ratio(c.usedcores, d->second->devcore);
        }
        f.vgpu_memory.add(labels, bytes);
        f.vgpu_core.add(std::move(labels), cores);
        if (f.legacy) {
          // Legacy labels are positional: containeridx, deviceuuid, nodename, podname,
          // podnamespace (sorted), from the same values.
          LabelValues l{"0", c.uuid, pod.node, pod.name, pod.namespace_, zone};
          f.l_vgpu_memory.add(l, bytes);
          f.l_vgpu_core.add(std::move(l), static_cast<double>(c.usedcores));
        }
      }
    }
  });
}

// Rows 9-10.
void collect_quotas(const live::LiveScheduler& live, HamiFamilies& f) {
  const std::string zone(kZone);
  for (const auto& e : live.quotas().entries()) {
    const std::string limit = e.limit_set ? str(e.limit) : "0";
    f.quota_used.add({limit, e.namespace_, e.resource, zone}, static_cast<double>(e.used));
    if (e.limit_set) f.quota_limit.add({e.namespace_, e.resource, zone}, e.limit);
    if (f.legacy) {
      f.l_quota_used.add({limit, e.resource, e.namespace_, zone}, static_cast<double>(e.used));
    }
  }
}

}  // namespace

void export_hami_metrics(const live::LiveScheduler& live, MetricsRegistry& metrics, bool legacy) {
  auto families = std::make_shared<HamiFamilies>();
  families->legacy = legacy;
  register_families(metrics, *families);
  metrics.add_collector([live = &live, families] {
    HamiFamilies& f = *families;
    const auto table = live->nodes().snapshot();
    // Node-level series only on the leader (HAMi computes them in the leader's registration
    // pass); quota and container series on every replica.
    if (live->leading()) collect_devices(*live, *table, f);
    collect_containers(*live, *table, f);
    collect_quotas(*live, f);
    for (Family* family : f.all()) family->publish();
  });
}

}  // namespace hamisim::server
