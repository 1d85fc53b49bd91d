#pragma once
// The live scheduler over the Kubernetes API source: a fake API server on loopback backed by
// an object store, replicas (KubeSource + LiveScheduler) talking HTTP to it, a device plugin
// simulator, and the invariants the integration tests check (the pod manager equals the
// store, no device over-committed, quota usage equals the pods').

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "device/catalog/device_config.h"
#include "fake_apiserver.h"
#include "kube/kube_source.h"
#include "live/live_scheduler.h"
#include "live_fixtures.h"
#include "model/decode.h"
#include "state/object_store.h"

namespace hamisim::live::testing {

using namespace std::chrono_literals;

// Polls `condition` every 5 ms for up to `limit`.
template <class F>
bool eventually_for(std::chrono::milliseconds limit, F&& condition) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

inline std::string lease_json(const std::string& holder, int duration_seconds = 120) {
  return fmt::format(
      R"({{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{{"name":"kube-scheduler","namespace":"kube-system"}},)"
      R"("spec":{{"holderIdentity":"{}","leaseDurationSeconds":{}}}}})",
      holder, duration_seconds);
}

inline std::string quota_json(const std::string& ns, int64_t gpumem_limit) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"ResourceQuota","metadata":{{"name":"gpu","namespace":"{}"}},)"
      R"("spec":{{"hard":{{"limits.nvidia.com/gpumem":"{}"}}}}}})",
      ns, gpumem_limit);
}

inline std::string annotation(const model::ObjectMeta& meta, std::string_view key) {
  const std::string* v = model::find_annotation(meta, key);
  return v ? *v : std::string();
}

// The object store behind a fake API server.
struct KubeCluster {
  state::ObjectStore store;
  std::unique_ptr<::hamisim::testing::FakeApiServer> server;

  explicit KubeCluster(const std::vector<std::string>& objects) {
    auto loaded = store.load(list_json(objects));
    if (!loaded) throw std::runtime_error(loaded.error().message);
    ::hamisim::testing::FakeApiServerOptions o;
    o.bookmark_interval = 50ms;
    server = std::make_unique<::hamisim::testing::FakeApiServer>(store, o);
    if (auto s = server->start(); !s) throw std::runtime_error(s.error().message);
  }
  ~KubeCluster() { server->stop(); }

  std::optional<model::Pod> find_pod(const std::string& name, const std::string& ns = "default") {
    auto o = store.get(state::Kind::kPod, ns, name);
    if (!o) return std::nullopt;
    auto p = model::decode_pod_json(o->json);
    if (!p) throw std::runtime_error(p.error().message);
    return std::move(p).value();
  }
  model::Pod pod(const std::string& name, const std::string& ns = "default") {
    auto p = find_pod(name, ns);
    if (!p) throw std::runtime_error("pod " + ns + "/" + name + " not in the store");
    return std::move(*p);
  }
  model::Node node(const std::string& name) {
    auto o = store.get(state::Kind::kNode, "", name);
    if (!o) throw std::runtime_error(o.error().message);
    auto n = model::decode_node_json(o->json);
    if (!n) throw std::runtime_error(n.error().message);
    return std::move(n).value();
  }
  std::string pod_annotation(const std::string& name, std::string_view key,
                             const std::string& ns = "default") {
    return annotation(pod(name, ns).metadata, key);
  }
  std::string node_annotation(const std::string& name, std::string_view key) {
    return annotation(node(name).metadata, key);
  }
  void create(state::Kind kind, const std::string& json) {
    auto c = store.create(kind, json);
    if (!c) throw std::runtime_error(c.error().message);
  }
};

// KubeSource options with quick reconnects and write retries.
inline kube::KubeSourceOptions quick_source_options(bool watch_lease) {
  kube::KubeSourceOptions o;
  o.scheduler_name = "hami-scheduler";
  o.lease_namespace = "kube-system";
  o.lease_name = watch_lease ? "kube-scheduler" : "";
  o.reconnect.initial = 10ms;
  o.reconnect.max_delay = 100ms;
  o.write_retry.initial = 5ms;
  o.write_retry.max_delay = 20ms;
  o.event_flush_timeout = 500ms;
  return o;
}

inline LiveOptions leader_options(const std::string& identity) {
  LiveOptions o;
  o.leader = {.enabled = true,
              .lease_namespace = "kube-system",
              .lease_name = "kube-scheduler",
              .identity = identity};
  return o;
}

// One scheduler replica: a KubeSource over HTTP and a started LiveScheduler over it.
struct KubeReplica {
  KubeCluster& cluster;
  device::DeviceRegistry registry = device::build_registry({});
  std::unique_ptr<kube::KubeSource> source;
  std::unique_ptr<LiveScheduler> scheduler;

  explicit KubeReplica(KubeCluster& c, LiveOptions options = {},
                       kube::KubeSourceOptions source_options = quick_source_options(false))
      : cluster(c) {
    kube::KubeConfig config;
    config.server = cluster.server->url();
    auto s = kube::KubeSource::create(config, kube::ClientOptions{}, std::move(source_options));
    if (!s) throw std::runtime_error(s.error().message);
    source = std::move(s).value();
    scheduler = std::make_unique<LiveScheduler>(registry, *source, std::move(options));
    scheduler->start();
  }
  ~KubeReplica() { scheduler->stop(); }

  bool wait_ready() {
    return eventually_for(20s, [&] { return scheduler->readiness().filtering; });
  }
  LiveFilterResult filter(const std::string& pod_name, const std::vector<std::string>& nodes,
                          const std::string& ns = "default") {
    const model::Pod p = cluster.pod(pod_name, ns);
    auto prepared = fit::prepare_pod(p, registry, {});
    if (!prepared) throw std::runtime_error(prepared.error().message);
    return scheduler->filter(*prepared, nodes);
  }
  std::string bind(const std::string& pod_name, const std::string& node,
                   const std::string& ns = "default") {
    const model::Pod p = cluster.pod(pod_name, ns);
    return scheduler->bind({pod_name, ns, p.metadata.uid, node});
  }
  // kube-scheduler's part for one pod: filter, bind, and again while the answer is transient
  // ("not ready: ..." — node lock contention). Empty on success, else what went wrong.
  std::string place(const std::string& pod_name, const std::vector<std::string>& nodes,
                    const std::string& ns = "default",
                    std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    const auto until = std::chrono::steady_clock::now() + limit;
    std::string last;
    while (std::chrono::steady_clock::now() < until) {
      auto r = filter(pod_name, nodes, ns);
      if (r.kind == LiveFilterResult::Kind::kNoFit) {
        std::string why;
        for (const auto& [n, reason] : r.failed_nodes) why += " " + n + ": " + reason + ";";
        return "no fit for " + ns + "/" + pod_name + ":" + why;
      }
      if (r.kind == LiveFilterResult::Kind::kError) {
        if (!r.error.starts_with("not ready: ")) return "filter " + pod_name + ": " + r.error;
        last = r.error;
      } else {
        const std::string err = bind(pod_name, r.node, ns);
        if (err.empty()) return {};
        if (!err.starts_with("not ready: ")) return "bind " + pod_name + ": " + err;
        last = err;
      }
      std::this_thread::sleep_for(3ms);
    }
    return "gave up on " + ns + "/" + pod_name + ": " + last;
  }

  // The device-memory quota usage of `ns` as the quota manager holds it: read through the
  // admission check of a probe pod that never fits (-1 when the namespace has no limit).
  int64_t quota_used(const std::string& ns) {
    const model::Pod probe = [&] {
      auto p = model::decode_pod_json(pod_json("quota-probe", 999999999, 0, ns));
      if (!p) throw std::runtime_error(p.error().message);
      return std::move(p).value();
    }();
    auto why = scheduler->admission_quota_check(probe);
    if (!why) return -1;
    const size_t at = why->find(": used ");
    if (at == std::string::npos) throw std::runtime_error("unexpected quota answer: " + *why);
    return std::stoll(why->substr(at + 7));
  }
};

// Waits until the replica's source has delivered every pod change made before the call: a
// change to a marker pod (namespace "marker", placed on no real node) travels the same watch
// stream after them.
inline bool pods_delivered(KubeReplica& replica, std::chrono::milliseconds limit = 20s) {
  static std::atomic<int> counter{0};
  const int n = ++counter;
  const std::string annotations = fmt::format(
      R"("hami.io/vgpu-node":"marker-node","hami.io/vgpu-devices-allocated":"GPU-marker,NVIDIA,{},0:;")",
      n);
  auto& store = replica.cluster.store;
  if (!store.get(state::Kind::kPod, "marker", "marker")) {
    replica.cluster.create(state::Kind::kPod, pod_json("marker", 1, 0, "marker",
                                                       R"(,"annotations":{)" + annotations + "}"));
  } else {
    auto patched = store.merge_patch(state::Kind::kPod, "marker", "marker",
                                     R"({"metadata":{"annotations":{)" + annotations + "}}}");
    if (!patched) throw std::runtime_error(patched.error().message);
  }
  return eventually_for(limit, [&] {
    for (const auto& r : replica.scheduler->pods().list()) {
      if (r.namespace_ != "marker") continue;
      for (const auto& [vendor, charges] : r.allocation.charges) {
        for (const auto& c : charges) {
          if (c.usedmem == n) return true;
        }
      }
    }
    return false;
  });
}

// "uid@node uuid:mem:cores ..." for every pod the store says holds devices, sorted.
inline std::vector<std::string> store_allocations(KubeCluster& cluster,
                                                  const device::DeviceRegistry& registry) {
  std::vector<std::string> out;
  for (const auto& o : cluster.store.list(state::Kind::kPod).items) {
    auto p = model::decode_pod_json(o.json);
    if (!p) continue;
    const std::string* node = model::find_annotation(p->metadata, "hami.io/vgpu-node");
    if (node == nullptr) continue;
    if (p->status.phase == "Succeeded" || p->status.phase == "Failed") continue;
    auto a = fit::decode_pod_allocation(*p, registry);
    if (!a) continue;
    std::string line = p->metadata.uid + "@" + *node;
    for (const auto& [vendor, charges] : a->charges) {
      for (const auto& c : charges)
        line += fmt::format(" {}:{}:{}", c.uuid, c.usedmem, c.usedcores);
    }
    out.push_back(std::move(line));
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<std::string> manager_allocations(const LiveScheduler& scheduler) {
  std::vector<std::string> out;
  for (const auto& r : scheduler.pods().list()) {
    std::string line = r.uid + "@" + r.node;
    for (const auto& [vendor, charges] : r.allocation.charges) {
      for (const auto& c : charges)
        line += fmt::format(" {}:{}:{}", c.uuid, c.usedmem, c.usedcores);
    }
    out.push_back(std::move(line));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Waits until the replica's pod manager holds exactly what the pods in the store say; on
// timeout the failure names both sides.
inline ::testing::AssertionResult pods_match_store(KubeReplica& replica,
                                                   std::chrono::milliseconds limit = 20s) {
  std::vector<std::string> want, have;
  const bool same = eventually_for(limit, [&] {
    want = store_allocations(replica.cluster, replica.registry);
    have = manager_allocations(*replica.scheduler);
    return want == have;
  });
  if (same) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "pod manager differs from the store\n  store:   "
         << fmt::format("{}", fmt::join(want, "\n           "))
         << "\n  manager: " << fmt::format("{}", fmt::join(have, "\n           "));
}

// The device memory of pods in `ns` that the store says hold devices.
inline int64_t store_memory(KubeCluster& cluster, const device::DeviceRegistry& registry,
                            const std::string& ns) {
  int64_t sum = 0;
  for (const auto& o : cluster.store.list(state::Kind::kPod, ns).items) {
    auto p = model::decode_pod_json(o.json);
    if (!p || !model::find_annotation(p->metadata, "hami.io/vgpu-node")) continue;
    if (p->status.phase == "Succeeded" || p->status.phase == "Failed") continue;
    auto a = fit::decode_pod_allocation(*p, registry);
    if (!a) continue;
    for (const auto& [vendor, charges] : a->charges) {
      for (const auto& c : charges) sum += c.usedmem;
    }
  }
  return sum;
}

// No device holds more memory or more pods than it registered (11441 MiB, count 10 for the
// K80 registration), summed over the bound pods' allocated annotations.
inline ::testing::AssertionResult no_device_overcommitted(KubeCluster& cluster,
                                                          const device::DeviceRegistry& registry,
                                                          int64_t devmem = 11441,
                                                          int64_t count = 10) {
  std::map<std::string, std::pair<int64_t, int64_t>> per_device;  // uuid -> (mem, pods)
  for (const auto& o : cluster.store.list(state::Kind::kPod).items) {
    auto p = model::decode_pod_json(o.json);
    if (!p || p->spec.node_name.empty()) continue;
    if (p->status.phase == "Succeeded" || p->status.phase == "Failed") continue;
    auto a = fit::decode_pod_allocation(*p, registry);
    if (!a) return ::testing::AssertionFailure() << o.name << ": " << a.error().message;
    for (const auto& [vendor, charges] : a->charges) {
      for (const auto& c : charges) {
        per_device[c.uuid].first += c.usedmem;
        per_device[c.uuid].second += 1;
      }
    }
  }
  for (const auto& [uuid, use] : per_device) {
    if (use.first > devmem || use.second > count) {
      return ::testing::AssertionFailure()
             << uuid << " over-committed: " << use.first << " MiB (of " << devmem << ") by "
             << use.second << " pod(s) (of " << count << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// The device plugin's part after a bind (as SnapshotSource's play_device_plugin does), on its
// own thread, talking to the store directly as the plugin would to the API server: a pod that
// is bound and `allocating` gets `success`, and its node lock is removed.
class DevicePluginSim {
 public:
  explicit DevicePluginSim(KubeCluster& cluster) : cluster_(cluster) {
    thread_ = std::thread([this] { run(); });
  }
  ~DevicePluginSim() { stop(); }
  void stop() {
    if (stop_.exchange(true)) return;
    cluster_.store.wake_all();
    thread_.join();
  }
  // Pods it finished: bind-phase success written and their node lock released.
  int allocated() const { return allocated_; }

 private:
  void run() {
    uint64_t seen = 0;
    while (!stop_) {
      seen = cluster_.store.wait_for_change(seen, std::chrono::steady_clock::now() + 50ms);
      for (const auto& o : cluster_.store.list(state::Kind::kPod).items) {
        auto p = model::decode_pod_json(o.json);
        if (!p || p->spec.node_name.empty()) continue;
        if (annotation(p->metadata, "hami.io/bind-phase") != "allocating") continue;
        auto done = cluster_.store.merge_patch(
            state::Kind::kPod, o.namespace_, o.name,
            R"({"metadata":{"annotations":{"hami.io/bind-phase":"success"}}})");
        release_lock(p->spec.node_name, p->metadata.namespace_, p->metadata.name);
        if (done) ++allocated_;  // counted once the lock is gone too
      }
    }
  }
  void release_lock(const std::string& node, const std::string& ns, const std::string& pod) {
    for (int attempt = 0; attempt < 20; ++attempt) {
      auto o = cluster_.store.get(state::Kind::kNode, "", node);
      if (!o) return;
      auto n = model::decode_node_json(o->json);
      if (!n) return;
      const std::string lock = annotation(n->metadata, "hami.io/mutex.lock");
      if (!lock.ends_with("," + ns + "," + pod)) return;  // not (or no longer) this pod's
      auto patched = cluster_.store.merge_patch(
          state::Kind::kNode, "", node,
          fmt::format(
              R"({{"metadata":{{"resourceVersion":"{}","annotations":{{"hami.io/mutex.lock":null}}}}}})",
              o->resource_version));
      if (patched) return;
    }
  }

  KubeCluster& cluster_;
  std::atomic<bool> stop_{false};
  std::atomic<int> allocated_{0};
  std::thread thread_;
};

inline std::vector<std::string> node_names(int n) {
  std::vector<std::string> out;
  for (int i = 1; i <= n; ++i) out.push_back(fmt::format("gpu-{}", i));
  return out;
}

}  // namespace hamisim::live::testing
