// Cost of one pod -> node decision: a pod with 2 containers (gpumem + gpucores) against an
// 8-GPU node already running 20 pods. Each stage is measured alone, then the whole path.

#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "device/codec.h"
#include "device/nvidia/nvidia_backend.h"
#include "device/registry.h"
#include "fit/inventory.h"
#include "fit/node_fit.h"

namespace {

using namespace hamisim;

model::Container gpu_container(std::string name, int gpus, int mem, int cores) {
  model::Container c;
  c.name = std::move(name);
  c.resources.limits.emplace("nvidia.com/gpu", model::Quantity::from_int(gpus));
  c.resources.limits.emplace("nvidia.com/gpumem", model::Quantity::from_int(mem));
  c.resources.limits.emplace("nvidia.com/gpucores", model::Quantity::from_int(cores));
  return c;
}

struct Scenario {
  device::DeviceRegistry registry;
  model::Node node;
  model::Pod pod;
  std::vector<model::Pod> existing;

  Scenario() {
    registry.add(std::make_shared<device::nvidia::NvidiaBackend>());
    std::string reg = "[";
    for (int i = 0; i < 8; ++i) {
      if (i) reg += ",";
      reg += "{\"id\":\"GPU-" + std::to_string(i) + "-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448\"";
      if (i) reg += ",\"index\":" + std::to_string(i);
      reg += ",\"count\":10,\"devmem\":81920,\"devcore\":100,\"type\":\"NVIDIA H100 80GB HBM3\"";
      if (i >= 4) reg += ",\"numa\":1";
      reg += ",\"mode\":\"hami-core\",\"health\":true}";
    }
    reg += "]";
    node.metadata.name = "gpu-node-1";
    node.metadata.annotations[std::string(device::kNvidiaRegisterAnnotation)] = reg;

    for (int p = 0; p < 20; ++p) {
      model::Pod e;
      e.metadata.name = "existing-" + std::to_string(p);
      e.metadata.namespace_ = "default";
      e.status.phase = "Running";
      e.spec.containers.push_back(gpu_container("main", 1, 4000, 10));
      const int gpu = (p * 3) % 8;
      const std::string uuid =
          "GPU-" + std::to_string(gpu) + "-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448";
      std::string value = uuid + ",NVIDIA," + std::to_string(2000 + 500 * (p % 5)) + "," +
                          std::to_string(5 + p % 4 * 5) + ":;";
      if (p % 4 == 0) {  // some pods have a second container on the next GPU
        e.spec.containers.push_back(gpu_container("side", 1, 1000, 5));
        value += "GPU-" + std::to_string((gpu + 1) % 8) +
                 "-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,NVIDIA,1000,5:;";
      }
      e.metadata.annotations[std::string(device::kAssignedNodeAnnotation)] = node.metadata.name;
      e.metadata.annotations[std::string(device::kNvidiaAllocatedAnnotation)] = value;
      existing.push_back(std::move(e));
    }

    pod.metadata.name = "incoming";
    pod.metadata.namespace_ = "default";
    pod.spec.containers.push_back(gpu_container("trainer", 2, 8000, 30));
    pod.spec.containers.push_back(gpu_container("helper", 1, 2000, 10));
  }
};

const Scenario& scenario() {
  static const Scenario s;
  return s;
}

fit::NodeInventory inventory() {
  auto r = fit::read_registered_inventory(scenario().node, scenario().registry);
  return std::move(r.inventory);
}

std::vector<fit::PodAllocation> decoded_existing() {
  std::vector<fit::PodAllocation> out;
  for (const auto& p : scenario().existing)
    out.push_back(*fit::decode_pod_allocation(p, scenario().registry));
  return out;
}

void BM_PreparePod(benchmark::State& state) {
  const Scenario& s = scenario();
  for (auto _ : state) {
    auto p = fit::prepare_pod(s.pod, s.registry, {});
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_PreparePod);

void BM_ReadInventory(benchmark::State& state) {
  const Scenario& s = scenario();
  for (auto _ : state) {
    auto r = fit::read_registered_inventory(s.node, s.registry);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_ReadInventory);

void BM_FreshUsage(benchmark::State& state) {
  const fit::NodeInventory inv = inventory();
  for (auto _ : state) {
    fit::NodeUsage u = fit::fresh_usage(inv);
    benchmark::DoNotOptimize(u);
  }
}
BENCHMARK(BM_FreshUsage);

// decode_pod_allocation for the 20 existing pods (what the pod manager does once per pod).
void BM_DecodePodAllocations(benchmark::State& state) {
  const Scenario& s = scenario();
  for (auto _ : state) {
    for (const auto& p : s.existing) {
      auto a = fit::decode_pod_allocation(p, s.registry);
      benchmark::DoNotOptimize(a);
    }
  }
}
BENCHMARK(BM_DecodePodAllocations);

// add_pod_usage for the 20 already decoded pods (per node, per filter call).
void BM_AddPodUsage(benchmark::State& state) {
  const fit::NodeInventory inv = inventory();
  const std::vector<fit::PodAllocation> allocs = decoded_existing();
  const fit::NodeUsage fresh = fit::fresh_usage(inv);
  for (auto _ : state) {
    fit::NodeUsage u = fresh;
    for (const auto& a : allocs) fit::add_pod_usage(u, a);
    benchmark::DoNotOptimize(u);
  }
}
BENCHMARK(BM_AddPodUsage);

void BM_FitPod(benchmark::State& state) {
  const Scenario& s = scenario();
  const fit::NodeInventory inv = inventory();
  fit::NodeUsage usage = fit::fresh_usage(inv);
  for (const auto& a : decoded_existing()) fit::add_pod_usage(usage, a);
  auto prepared = fit::prepare_pod(s.pod, s.registry, {});
  for (auto _ : state) {
    fit::NodeFit f = fit::fit_pod(*prepared, usage, inv, s.registry);
    if (!f.fits) state.SkipWithError(f.reason.c_str());
    benchmark::DoNotOptimize(f);
  }
}
BENCHMARK(BM_FitPod);

// prepare_pod + fresh_usage + add_pod_usage (20 decoded pods) + fit_pod: one node of a
// filter call once the pod manager holds decoded allocations and the inventory is cached.
void BM_Together(benchmark::State& state) {
  const Scenario& s = scenario();
  const fit::NodeInventory inv = inventory();
  const std::vector<fit::PodAllocation> allocs = decoded_existing();
  for (auto _ : state) {
    auto prepared = fit::prepare_pod(s.pod, s.registry, {});
    fit::NodeUsage usage = fit::fresh_usage(inv);
    for (const auto& a : allocs) fit::add_pod_usage(usage, a);
    fit::NodeFit f = fit::fit_pod(*prepared, usage, inv, s.registry);
    benchmark::DoNotOptimize(f);
  }
}
BENCHMARK(BM_Together);

// Everything from raw objects: inventory decode and the 20 pods' annotations decoded too.
void BM_TogetherFromAnnotations(benchmark::State& state) {
  const Scenario& s = scenario();
  for (auto _ : state) {
    auto prepared = fit::prepare_pod(s.pod, s.registry, {});
    auto inv = fit::read_registered_inventory(s.node, s.registry);
    fit::NodeUsage usage = fit::fresh_usage(inv.inventory);
    for (const auto& p : s.existing)
      fit::add_pod_usage(usage, *fit::decode_pod_allocation(p, s.registry));
    fit::NodeFit f = fit::fit_pod(*prepared, usage, inv.inventory, s.registry);
    benchmark::DoNotOptimize(f);
  }
}
BENCHMARK(BM_TogetherFromAnnotations);

}  // namespace

BENCHMARK_MAIN();
