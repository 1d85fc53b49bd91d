#pragma once
// Cluster objects for the live path's tests: NVIDIA nodes registering K80-like devices,
// device pods, and a snapshot source + scheduler harness.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "device/catalog/device_config.h"
#include "live/live_scheduler.h"
#include "live/time_format.h"
#include "model/decode.h"
#include "state/snapshot_source.h"

namespace hamisim::live::testing {

// Two 11441 MiB devices, count 10 each (the seed's mock K80 registration).
inline std::string k80_registration(const std::string& node) {
  return fmt::format(
      R"([{{"id":"GPU-{0}-0","count":10,"devmem":11441,"devcore":100,"type":"NVIDIA-Tesla K80","mode":"hami-core","health":true}},)"
      R"({{"id":"GPU-{0}-1","index":1,"count":10,"devmem":11441,"devcore":100,"type":"NVIDIA-Tesla K80","mode":"hami-core","health":true}}])",
      node);
}

inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A Node; `extra_annotations` is a JSON fragment `"k":"v",...` (may be empty).
inline std::string node_json(const std::string& name, int gpus = 20,
                             const std::string& extra_annotations = "", bool registered = true) {
  std::string annotations = extra_annotations;
  if (registered) {
    if (!annotations.empty()) annotations += ",";
    annotations += "\"hami.io/node-nvidia-register\":" + json_string(k80_registration(name));
  }
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{}","annotations":{{{}}}}},)"
      R"("status":{{"allocatable":{{"cpu":"8","memory":"32Gi","pods":"110","nvidia.com/gpu":"{}"}}}}}})",
      name, annotations, gpus);
}

inline std::string pod_json(const std::string& name, int gpumem, int gpucores = 0,
                            const std::string& ns = "default", const std::string& extra_meta = "") {
  std::string limits = fmt::format(R"("nvidia.com/gpu":"1","nvidia.com/gpumem":"{}")", gpumem);
  if (gpucores > 0) limits += fmt::format(R"(,"nvidia.com/gpucores":"{}")", gpucores);
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}","namespace":"{}"{}}},)"
      R"("spec":{{"schedulerName":"hami-scheduler","containers":[{{"name":"main","image":"cuda",)"
      R"("resources":{{"limits":{{{}}}}}}}]}},"status":{{"phase":"Pending"}}}})",
      name, ns, extra_meta, limits);
}

inline std::string list_json(const std::vector<std::string>& items) {
  std::string out = R"({"apiVersion":"v1","kind":"List","items":[)";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
  return out + "]}";
}

inline std::string write_temp(const std::string& name, const std::string& text) {
  static int counter = 0;
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("hamisim-live-{}-{}", ::getpid(), counter++);
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

// Polls `condition` for up to 10 s.
template <class F>
bool eventually(F&& condition) {
  for (int i = 0; i < 1000; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

// A snapshot source and a started live scheduler over it.
struct Harness {
  device::DeviceRegistry registry = device::build_registry({});
  std::unique_ptr<state::SnapshotSource> source;
  std::unique_ptr<LiveScheduler> scheduler;

  explicit Harness(const std::vector<std::string>& objects, LiveOptions options = {},
                   bool play_device_plugin = false) {
    auto loaded = state::SnapshotSource::load({write_temp("cluster.json", list_json(objects))},
                                              {.play_device_plugin = play_device_plugin});
    if (!loaded) throw std::runtime_error(loaded.error().message);
    source = std::move(loaded).value();
    options.register_interval = std::chrono::hours(1);  // passes only when notified
    scheduler = std::make_unique<LiveScheduler>(registry, *source, std::move(options));
    scheduler->start();
  }
  ~Harness() { scheduler->stop(); }

  bool wait_ready() {
    return eventually([&] { return scheduler->readiness().filtering; });
  }
  model::Pod pod(const std::string& name, const std::string& ns = "default") {
    auto p = source->get_pod(ns, name);
    if (!p) throw std::runtime_error(p.error().message);
    return std::move(p).value();
  }
  model::Node node(const std::string& name) {
    auto n = source->get_node(name);
    if (!n) throw std::runtime_error(n.error().message);
    return std::move(n).value();
  }
  std::string pod_annotation(const std::string& name, std::string_view key,
                             const std::string& ns = "default") {
    auto p = pod(name, ns);
    const std::string* v = model::find_annotation(p.metadata, key);
    return v ? *v : "";
  }
  std::string node_annotation(const std::string& name, std::string_view key) {
    const model::Node n = node(name);
    const std::string* v = model::find_annotation(n.metadata, key);
    return v ? *v : "";
  }
  LiveFilterResult filter(const std::string& pod_name, const std::vector<std::string>& nodes,
                          const std::string& ns = "default") {
    model::Pod p = pod(pod_name, ns);
    auto prepared = fit::prepare_pod(p, registry, {});
    if (!prepared) throw std::runtime_error(prepared.error().message);
    return scheduler->filter(*prepared, nodes);
  }
  std::string bind(const std::string& pod_name, const std::string& node,
                   const std::string& ns = "default") {
    model::Pod p = pod(pod_name, ns);
    return scheduler->bind({pod_name, ns, p.metadata.uid, node});
  }
  // The pod manager holds exactly what the pods' annotations say (after events flowed back).
  bool pods_match_store() {
    return eventually([&] {
      std::vector<std::string> want, have;
      for (const auto& o : source->store().list(state::Kind::kPod).items) {
        auto p = model::decode_pod_json(o.json);
        if (!p || !model::find_annotation(p->metadata, "hami.io/vgpu-node")) continue;
        if (p->status.phase == "Succeeded" || p->status.phase == "Failed") continue;
        auto a = fit::decode_pod_allocation(*p, registry);
        if (!a) continue;
        std::string line =
            p->metadata.uid + "@" + *model::find_annotation(p->metadata, "hami.io/vgpu-node");
        for (const auto& [vendor, charges] : a->charges) {
          for (const auto& c : charges)
            line += fmt::format(" {}:{}:{}", c.uuid, c.usedmem, c.usedcores);
        }
        want.push_back(line);
      }
      for (const auto& r : scheduler->pods().list()) {
        std::string line = r.uid + "@" + r.node;
        for (const auto& [vendor, charges] : r.allocation.charges) {
          for (const auto& c : charges)
            line += fmt::format(" {}:{}:{}", c.uuid, c.usedmem, c.usedcores);
        }
        have.push_back(line);
      }
      std::sort(want.begin(), want.end());
      std::sort(have.begin(), have.end());
      return want == have;
    });
  }
};

}  // namespace hamisim::live::testing
