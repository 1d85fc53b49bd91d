// Cost of one /filter-simulation request without HTTP: decoding ExtenderArgs (a pod and N
// realistic template nodes of ~6 KiB each, as CA sends them), building each node's description,
// fitting, and encoding the response. Run with N = 1, 10, 100 and with SimulatedPods, for a body
// seen before (the steady state under CA) and for one seen for the first time.

#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "device/catalog/device_config.h"
#include "model/decode.h"
#include "model/json_writer.h"
#include "server/simulation_filter.h"

namespace {

using namespace hamisim;

std::string register_json() {
  model::JsonWriter w;
  w.begin_array();
  for (int i = 0; i < 8; ++i) {
    w.begin_object();
    w.key("id").string("GPU-" + std::to_string(i) + "-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448");
    if (i) w.key("index").number(i);
    w.key("count").number(10).key("devmem").number(81920).key("devcore").number(100);
    w.key("type").string("NVIDIA H100 80GB HBM3");
    if (i >= 4) w.key("numa").number(1);
    w.key("mode").string("hami-core").key("health").boolean(true);
    w.end_object();
  }
  w.end_array();
  return w.take();
}

// A Node the size of a real one: labels, images, conditions and managedFields that the
// decoder must skip.
std::string node_json(int n, const std::string& reg) {
  model::JsonWriter w;
  w.begin_object();
  w.key("metadata").begin_object();
  w.key("name").string("template-node-for-gpu-h100-" + std::to_string(n));
  w.key("labels").begin_object();
  for (int i = 0; i < 20; ++i)
    w.key("example.com/label-" + std::to_string(i)).string("value-" + std::to_string(i));
  w.end_object();
  w.key("annotations").begin_object().key("hami.io/node-nvidia-register").string(reg).end_object();
  w.key("managedFields").begin_array();
  for (int i = 0; i < 6; ++i) {
    w.begin_object().key("manager").string("kubelet").key("operation").string("Update");
    w.key("fieldsV1").begin_object();
    for (int j = 0; j < 20; ++j) w.key("f:field-" + std::to_string(j)).begin_object().end_object();
    w.end_object().end_object();
  }
  w.end_array();
  w.end_object();
  w.key("spec")
      .begin_object()
      .key("providerID")
      .string("azure:///subscriptions/x/vmss/y")
      .end_object();
  w.key("status").begin_object();
  w.key("allocatable").begin_object().key("cpu").string("96").key("memory").string("1900Gi");
  w.key("pods").string("110").key("nvidia.com/gpu").string("80").end_object();
  w.key("images").begin_array();
  for (int i = 0; i < 15; ++i) {
    w.begin_object().key("names").begin_array().string(
        "registry.example.com/image-" + std::to_string(i) + "@sha256:0123456789abcdef");
    w.end_array().key("sizeBytes").number(123456789).end_object();
  }
  w.end_array();
  w.end_object();
  w.end_object();
  return w.take();
}

std::string request(int nodes, int placed_per_node) {
  const std::string reg = register_json();
  std::string body =
      R"({"Pod":{"metadata":{"name":"trainer","namespace":"ml"},"spec":{"containers":[)"
      R"({"name":"main","resources":{"limits":{"nvidia.com/gpu":"2","nvidia.com/gpumem":"20000","nvidia.com/gpucores":"30","cpu":"4"}}}]}},)"
      R"("Nodes":{"metadata":{},"items":[)";
  for (int n = 0; n < nodes; ++n) {
    if (n) body += ",";
    body += node_json(n, reg);
  }
  body += "]},\"NodeNames\":null";
  if (placed_per_node > 0) {
    body += ",\"SimulatedPods\":{";
    for (int n = 0; n < nodes; ++n) {
      if (n) body += ",";
      body += "\"template-node-for-gpu-h100-" + std::to_string(n) + "\":[";
      for (int p = 0; p < placed_per_node; ++p) {
        if (p) body += ",";
        body += R"({"metadata":{"annotations":{"hami.io/vgpu-devices-allocated":"GPU-)" +
                std::to_string(p % 8) +
                R"(-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,NVIDIA,20000,30:;"}}})";
      }
      body += "]";
    }
    body += "}";
  }
  body += "}";
  return body;
}

// The body as HttpServer hands it over: with spare capacity for simdjson's padding, so that it
// is decoded where it is.
std::string padded_request(const benchmark::State& state) {
  std::string body = request(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  body.reserve(body.size() + model::kJsonPadding);
  return body;
}

void report(benchmark::State& state, const std::string& body) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(body.size()));
  state.counters["nodes/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * state.range(0)), benchmark::Counter::kIsRate);
  state.counters["body_KiB"] = static_cast<double>(body.size()) / 1024.0;
}

// The same body again and again, as CA sends its templates: the Pod and Nodes are decoded once
// and then found by their bytes.
void BM_FilterSimulation(benchmark::State& state) {
  const device::DeviceRegistry registry = device::build_registry({});
  const engine::Engine engine(registry, nullptr);
  const server::SimulationFilter filter(engine);
  const std::string body = padded_request(state);
  for (auto _ : state) {
    auto result = filter.filter(body);
    benchmark::DoNotOptimize(result.body.data());
  }
  report(state, body);
}
BENCHMARK(BM_FilterSimulation)->Args({1, 0})->Args({10, 0})->Args({100, 0})->Args({10, 8});

// The same body about one estimator copy of a template (`...-e-0`), as CA asks about the new
// node of an estimate: SimulatedPodsWatch looks at every such request (issue #33).
void BM_FilterSimulationTemplateCopy(benchmark::State& state) {
  const device::DeviceRegistry registry = device::build_registry({});
  const engine::Engine engine(registry, nullptr);
  const server::SimulationFilter filter(engine);
  std::string body = request(1, static_cast<int>(state.range(1)));
  for (std::string_view name : {"\"template-node-for-gpu-h100-0\""}) {
    for (size_t at = body.find(name); at != std::string::npos; at = body.find(name, at + 1)) {
      body.replace(at + name.size() - 1, 0, "-e-0");
    }
  }
  body.reserve(body.size() + model::kJsonPadding);
  for (auto _ : state) {
    auto result = filter.filter(body);
    benchmark::DoNotOptimize(result.body.data());
  }
  report(state, body);
}
BENCHMARK(BM_FilterSimulationTemplateCopy)->Args({1, 0})->Args({1, 8});

// Every body seen for the first time (a fresh filter and provider each time, outside the
// timing): what a request of new templates costs, decoding and describing included.
void BM_FilterSimulationFirstSight(benchmark::State& state) {
  const device::DeviceRegistry registry = device::build_registry({});
  const std::string body = padded_request(state);
  for (auto _ : state) {
    state.PauseTiming();
    auto simulation = std::make_unique<engine::Engine>(registry, nullptr);
    auto filter = std::make_unique<server::SimulationFilter>(*simulation);
    state.ResumeTiming();
    auto result = filter->filter(body);
    benchmark::DoNotOptimize(result.body.data());
    state.PauseTiming();
    filter.reset();
    simulation.reset();
    state.ResumeTiming();
  }
  report(state, body);
}
BENCHMARK(BM_FilterSimulationFirstSight)->Args({1, 0})->Args({100, 0});

}  // namespace

BENCHMARK_MAIN();
