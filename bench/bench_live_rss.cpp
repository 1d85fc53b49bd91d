// Resident memory of the live path's state (issue #8 target: <= 1.5 GiB for 5,000 nodes and
// 150,000 pods). Not a Google Benchmark: it loads a `hamisim gen` directory into a
// SnapshotSource, prints VmRSS, starts a LiveScheduler over it, waits until ready and prints
// VmRSS again. The difference is the live state (node, pod and quota managers); the first
// figure is the snapshot store, which plays the API server and does not exist with a real
// cluster.
//
//   hamisim gen --nodes 5000 --pods-per-node 30 --pending 100 --out /tmp/g5k
//   bench_live_rss /tmp/g5k/cluster.json
// (files over 256 MiB are refused by the snapshot reader: split the List into several files,
// as bench/README.md shows, and pass them all).

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "device/catalog/device_config.h"
#include "live/live_scheduler.h"
#include "state/snapshot_source.h"

namespace {

long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

long settled_rss_kib() {
  malloc_trim(0);  // what the allocator still caches is not state
  return rss_kib();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hamisim;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CLUSTER.json|DIR...\n", argv[0]);
    return 2;
  }
  const long start = settled_rss_kib();
  const auto t0 = std::chrono::steady_clock::now();
  auto loaded = state::SnapshotSource::load(std::vector<std::string>(argv + 1, argv + argc), {});
  if (!loaded) {
    std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
    return 1;
  }
  auto source = std::move(loaded).value();
  const long store = settled_rss_kib();
  const auto t1 = std::chrono::steady_clock::now();

  const device::DeviceRegistry registry = device::build_registry({});
  live::LiveOptions options;
  options.register_interval = std::chrono::hours(1);
  live::LiveScheduler scheduler(registry, *source, std::move(options));
  scheduler.start();
  while (!scheduler.readiness().ready) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto t2 = std::chrono::steady_clock::now();
  const long listed = settled_rss_kib();
  // Then until the first registration pass has finished: the nodes' devices are registered,
  // which is part of the live state. The pass also writes every node's handshake annotations
  // into the snapshot store (whose change history keeps the old objects), so this second
  // figure holds some of the store's growth too.
  while (!scheduler.readiness().filtering) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const auto t3 = std::chrono::steady_clock::now();
  const long live = settled_rss_kib();
  const size_t pods = scheduler.pods().list().size();
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::printf(
      "start VmRSS %ld KiB\nafter snapshot store %ld KiB (+%.1f MiB, %.1f s)\n"
      "after live scheduler ready (lists in) %ld KiB (+%.1f MiB, %.1f s)\n"
      "after the first registration pass %ld KiB (+%.1f MiB live state, %.1f s; %zu device pods "
      "tracked)\ntotal %.1f MiB\n",
      start, store, (store - start) / 1024.0, secs(t0, t1), listed, (listed - store) / 1024.0,
      secs(t1, t2), live, (live - store) / 1024.0, secs(t2, t3), pods, live / 1024.0);
  scheduler.stop();
  return 0;
}
