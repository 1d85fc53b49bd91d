// The live path's /filter without HTTP (issue #8 target: <= 3 ms per request with 1,000 nodes
// x 8 GPUs and 20,000 running pods): a LiveScheduler over a SnapshotSource loaded from a
// `hamisim gen` cluster, asked to place one pending pod on every node.
//
// A successful filter reserves the pod on the chosen node (and patches it in the store);
// filtering the same pod again first evicts that reservation, as the live path does for a
// pod whose bind never came, so every iteration sees the same cluster.
//
// BM_HamiScrape is a Prometheus scrape of HAMi's families over the same state.
//
// Environment: HAMISIM_BENCH_NODES (default 1000), HAMISIM_BENCH_PODS_PER_NODE (default 20).

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "device/catalog/device_config.h"
#include "gen/generator.h"
#include "live/live_scheduler.h"
#include "model/decode.h"
#include "server/hami_metrics.h"
#include "server/metrics.h"
#include "state/snapshot_source.h"

namespace {

using namespace hamisim;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

struct Cluster {
  device::DeviceRegistry registry = device::build_registry({});
  std::unique_ptr<state::SnapshotSource> source;
  std::unique_ptr<live::LiveScheduler> scheduler;
  std::vector<std::string> node_names;
  model::Pod fitting;  // a pending pod of the snapshot
  model::Pod too_big;  // asks more memory than any GPU has: fails on every node
  std::string error;

  Cluster() {
    gen::GenOptions o;
    o.nodes = env_int("HAMISIM_BENCH_NODES", 1000);
    o.pods_per_node = env_int("HAMISIM_BENCH_PODS_PER_NODE", 20);
    o.pending = 10;
    o.groups = 1;
    o.node_groups = 4;  // A100, A100 MIG, A10; the fourth is cold-zero
    auto c = gen::generate(o);
    if (!c) throw std::runtime_error(c.error().message);
    const auto dir = std::filesystem::temp_directory_path() /
                     ("hamisim-bench-live-" + std::to_string(::getpid()));
    if (auto s = gen::write_cluster(*c, dir.string()); !s)
      throw std::runtime_error(s.error().message);
    auto loaded = state::SnapshotSource::load({(dir / "cluster.json").string()}, {});
    std::filesystem::remove_all(dir);
    if (!loaded) throw std::runtime_error(loaded.error().message);
    source = std::move(loaded).value();
    auto objects = model::decode_objects_json(c->cluster_json);
    for (const auto& n : objects->nodes) node_names.push_back(n.metadata.name);
    for (const auto& p : objects->pods) {
      if (p.spec.node_name.empty()) {
        fitting = p;
        break;
      }
    }
    too_big = fitting;
    too_big.metadata.uid = "too-big";
    too_big.spec.containers[0].resources.limits["nvidia.com/gpumem"] =
        model::Quantity::from_int(900000);

    live::LiveOptions options;
    options.register_interval = std::chrono::hours(1);
    scheduler = std::make_unique<live::LiveScheduler>(registry, *source, std::move(options));
    scheduler->start();
    // Filtering, not just ready: a replica is ready once its lists are in, and answers /filter
    // after its first registration pass.
    for (int i = 0; i < 6000 && !scheduler->readiness().filtering; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!scheduler->readiness().filtering) {
      error = "not filtering: " + scheduler->readiness().detail;
      return;
    }
    // One filter of each pod before measuring: the first builds every node's usage, which
    // later filters reuse, so no repetition's first iteration pays for it.
    for (const model::Pod* pod : {&fitting, &too_big}) {
      auto prepared = fit::prepare_pod(*pod, registry, {});
      if (prepared) scheduler->filter(*prepared, node_names);
    }
  }
  ~Cluster() { scheduler->stop(); }
};

Cluster& cluster() {
  static Cluster c;
  return c;
}

void BM_LiveFilter(benchmark::State& state) {
  Cluster& c = cluster();
  if (!c.error.empty()) {
    state.SkipWithError(c.error.c_str());
    return;
  }
  const bool fits = state.range(0) == 0;
  auto prepared = fit::prepare_pod(fits ? c.fitting : c.too_big, c.registry, {});
  for (auto _ : state) {
    live::LiveFilterResult r = c.scheduler->filter(*prepared, c.node_names);
    if (r.kind !=
        (fits ? live::LiveFilterResult::Kind::kChosen : live::LiveFilterResult::Kind::kNoFit)) {
      state.SkipWithError(("unexpected result: " + r.error).c_str());
      break;
    }
    benchmark::DoNotOptimize(r);
  }
  state.SetLabel(fits ? "chosen" : "no node fits");
  state.counters["nodes"] = static_cast<double>(c.node_names.size());
  state.counters["running_pods"] = static_cast<double>(c.scheduler->pods().size());
}
BENCHMARK(BM_LiveFilter)
    ->ArgName("nofit")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A Prometheus scrape of HAMi's families over the same live state: every device of every node
// and every (pod, device) the pod manager holds, collected and rendered as text. Prometheus
// gives a scrape 10 s by default; at 5,000 nodes the state is five times this one.
void BM_HamiScrape(benchmark::State& state) {
  Cluster& c = cluster();
  if (!c.error.empty()) {
    state.SkipWithError(c.error.c_str());
    return;
  }
  server::MetricsRegistry metrics;
  server::export_hami_metrics(*c.scheduler, metrics, state.range(0) == 1);
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = metrics.render();
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.SetLabel(state.range(0) == 1 ? "with --legacy-metrics" : "HAMi's current families");
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["running_pods"] = static_cast<double>(c.scheduler->pods().size());
}
BENCHMARK(BM_HamiScrape)->ArgName("legacy")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // The cluster is built before any benchmark runs, so a profile of BM_LiveFilter alone
  // (callgrind --toggle-collect) holds the filters and nothing of the setup.
  cluster();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
