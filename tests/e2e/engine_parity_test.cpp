// One simulation engine (issue #22): a plan made in process and the same plan made through a
// live `hamisim serve` extender (/filter-simulation over loopback, SimulatedPods for packing)
// are byte-identical, over generated clusters with the variants that used to split them:
// unhealthy and cordoned GPUs on warm samples, with and without device profiles, warm and
// cold-zero groups, MIG, quotas. And `hamisim fit` answers what /filter-simulation answers for
// every (pod, node) sampled.

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "device/catalog/device_config.h"
#include "gen/generator.h"
#include "model/decode.h"
#include "model/encode.h"
#include "plan_http_support.h"
#include "planner/report/report.h"
#include "profile/device_profiles.h"
#include "test_paths.h"

namespace hamisim::planner::scaleup {
namespace {

namespace json = boost::json;
using hamisim::testing::http_request;
using testing::ca_config;
using testing::Serve;

struct Variant {
  uint64_t seed = 1;
  bool profiles = true;    // the generated device profiles, or none at all
  bool unhealthy = false;  // every second node registers one GPU unhealthy
  bool cordoned = false;   // every third node cordons one GPU (hami.io/device-cordon)
  bool quotas = false;     // a gpumem quota in every namespace of a pending pod
  int nodes = 12;
  int pending = 40;
  int node_groups = 6;
};

std::string describe(const Variant& v) {
  return "seed " + std::to_string(v.seed) + (v.profiles ? " profiles" : " no-profiles") +
         (v.unhealthy ? " unhealthy" : "") + (v.cordoned ? " cordoned" : "") +
         (v.quotas ? " quotas" : "");
}

// The first n GPU UUIDs of a node's NVIDIA registration.
std::vector<std::string> gpu_ids(const model::Node& node) {
  std::vector<std::string> out;
  const std::string* reg = model::find_annotation(node.metadata, "hami.io/node-nvidia-register");
  if (!reg) return out;
  for (size_t at = reg->find("\"id\":\""); at != std::string::npos;
       at = reg->find("\"id\":\"", at + 1)) {
    const size_t from = at + 6;
    out.push_back(reg->substr(from, reg->find('"', from) - from));
  }
  return out;
}

struct Scenario {
  std::shared_ptr<const device::DeviceRegistry> registry =
      std::make_shared<const device::DeviceRegistry>(device::build_registry({}));
  std::shared_ptr<const profile::DeviceProfiles> profiles;
  PlanInput input;
};

Scenario make_scenario(const Variant& v) {
  Scenario s;
  gen::GenOptions o;
  o.seed = v.seed;
  o.nodes = v.nodes;
  o.pending = v.pending;
  o.groups = 6;
  o.node_groups = v.node_groups;
  o.pods_per_node = 12;
  auto cluster = gen::generate(o);
  EXPECT_TRUE(cluster) << cluster.error().message;
  auto objects = model::decode_objects(cluster->cluster_json);
  EXPECT_TRUE(objects) << objects.error().message;
  s.input.nodes = std::move(objects->nodes);
  s.input.pods = std::move(objects->pods);
  for (size_t i = 0; i < s.input.nodes.size(); ++i) {
    model::Node& node = s.input.nodes[i];
    auto& annotations = node.metadata.annotations;
    const std::vector<std::string> ids = gpu_ids(node);
    if (v.unhealthy && i % 2 == 0) {
      std::string& reg = annotations["hami.io/node-nvidia-register"];
      if (size_t at = reg.find("\"health\":true"); at != std::string::npos)
        reg.replace(at, 13, "\"health\":false");
    }
    if (v.cordoned && i % 3 == 0 && ids.size() > 1) annotations["hami.io/device-cordon"] = ids[1];
  }
  if (v.quotas) {
    std::set<std::string> namespaces;
    for (const model::Pod& p : s.input.pods) {
      if (p.spec.node_name.empty()) namespaces.insert(p.metadata.namespace_);
    }
    for (const std::string& ns : namespaces) {
      auto q = model::decode_objects(
          R"({"kind":"ResourceQuota","apiVersion":"v1","metadata":{"name":"gpu","namespace":")" +
          ns + R"("},"spec":{"hard":{"limits.nvidia.com/gpumem":"400000"}}})");
      EXPECT_TRUE(q) << q.error().message;
      for (auto& quota : q->quotas) s.input.quotas.push_back(std::move(quota));
    }
  }
  auto groups = nodegroups::parse_node_groups(cluster->node_groups_yaml, "node-groups");
  EXPECT_TRUE(groups) << groups.error().message;
  s.input.node_groups = std::move(groups).value();
  if (v.profiles) {
    auto p = profile::parse_device_profiles(cluster->device_profiles_yaml, "profiles", *s.registry);
    EXPECT_TRUE(p) << p.error().message;
    s.profiles = std::make_shared<const profile::DeviceProfiles>(std::move(p).value());
  } else {
    // A cold-zero group then has no description: its template registers nothing.
    for (auto& g : s.input.node_groups.groups) g.device_profile.clear();
  }
  return s;
}

std::string plan_json(const Scenario& s, std::optional<extender::SchedulerConfig> config) {
  auto planning = Planning::create(s.registry, s.profiles, std::move(config));
  EXPECT_TRUE(planning) << planning.error().message;
  PlannerOptions options;
  options.balance_similar_node_groups = true;
  auto plan = (*planning)->plan(s.input, options);
  EXPECT_TRUE(plan) << plan.error().message;
  return plan ? report::render_json(*plan) : std::string();
}

// What legitimately differs between the two device stages: their name, and the plugin a
// device rejection is reported under.
std::string normalized(std::string text, uint16_t port) {
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  replace_all("\"deviceStage\":\"extenders: http://127.0.0.1:" + std::to_string(port) + "\"",
              "\"deviceStage\":\"in-process\"");
  replace_all("ExtenderFilter: ", "HAMi: ");
  return text;
}

class EngineParity : public ::testing::TestWithParam<Variant> {};

TEST_P(EngineParity, PlanInProcessAndThroughServeAreByteIdentical) {
  const Variant& v = GetParam();
  const Scenario s = make_scenario(v);
  Serve serve(s.registry, s.profiles);
  const std::string local = plan_json(s, std::nullopt);
  const std::string remote = normalized(plan_json(s, ca_config(serve.port())), serve.port());
  ASSERT_FALSE(local.empty());
  // Not vacuous: the plan places pods on new nodes and packs devices.
  const json::object plan = json::parse(local).as_object();
  EXPECT_NE(plan.at("decision").as_string(), "") << describe(v);
  if (local == remote) return;
  // Name the first difference instead of printing two large documents.
  size_t at = 0;
  while (at < local.size() && at < remote.size() && local[at] == remote[at]) ++at;
  const size_t from = at > 200 ? at - 200 : 0;
  ADD_FAILURE() << describe(v) << ": plans differ at byte " << at
                << "\n in process: " << local.substr(from, 400)
                << "\n via serve:  " << remote.substr(from, 400);
}

INSTANTIATE_TEST_SUITE_P(
    Generated, EngineParity,
    ::testing::Values(Variant{.seed = 1}, Variant{.seed = 2, .profiles = false},
                      Variant{.seed = 3, .unhealthy = true, .cordoned = true},
                      Variant{.seed = 4, .profiles = false, .unhealthy = true, .cordoned = true},
                      Variant{.seed = 5, .quotas = true},
                      Variant{.seed = 6, .profiles = false, .unhealthy = true, .quotas = true},
                      Variant{.seed = 7,
                              .profiles = false,
                              .cordoned = true,
                              .nodes = 30,
                              .pending = 120,
                              .node_groups = 9}));

// ---- The case from the issue ----------------------------------------------------------

// A warm group whose only member has two T4s nearly full, one registered unhealthy and one
// cordoned; six pending pods of one T4 / 12000 MiB. A new node is fresh: four empty healthy
// T4s, four pods each, so +2 nodes, in process and over HTTP, with and without a profiles file.
Scenario issue_case(bool empty_profiles) {
  Scenario s;
  const std::string reg =
      R"([{"id":"GPU-0","count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","health":true},)"
      R"({"id":"GPU-1","index":1,"count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","health":true},)"
      R"({"id":"GPU-2","index":2,"count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","health":false},)"
      R"({"id":"GPU-3","index":3,"count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","health":true}])";
  const std::string node =
      R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"t4-a",
    "labels":{"pool":"t4","kubernetes.io/hostname":"t4-a"},
    "annotations":{"hami.io/node-nvidia-register":)" +
      json::serialize(json::string(reg)) +
      R"(,"hami.io/node-handshake":"Reported 2026-12-01 00:00:00","hami.io/device-cordon":"GPU-3"}},
    "status":{"allocatable":{"cpu":"32","memory":"128Gi","pods":"110","nvidia.com/gpu":"40"},
              "capacity":{"cpu":"32","memory":"128Gi","pods":"110","nvidia.com/gpu":"40"}}})";
  auto placed = [](const std::string& name, const std::string& gpu) {
    return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
           R"(","namespace":"ml","annotations":{"hami.io/vgpu-devices-allocated":")" + gpu +
           R"(,NVIDIA,15000,0:;","hami.io/vgpu-node":"t4-a","hami.io/bind-phase":"success"}},
      "spec":{"nodeName":"t4-a","containers":[{"name":"c","resources":{"limits":{
        "nvidia.com/gpu":"1","nvidia.com/gpumem":"15000"}}}]},"status":{"phase":"Running"}})";
  };
  auto objects =
      model::decode_objects(R"({"kind":"List","items":[)" + node + "," + placed("full-0", "GPU-0") +
                            "," + placed("full-1", "GPU-1") + "]}");
  EXPECT_TRUE(objects) << objects.error().message;
  s.input.nodes = objects->nodes;
  s.input.pods = objects->pods;
  s.input.pending.emplace();
  for (int i = 0; i < 6; ++i) {
    auto pod = model::decode_pod(
        R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"job-)" + std::to_string(i) +
        R"(","namespace":"ml"},"spec":{"containers":[{"name":"c","resources":{"limits":{
          "nvidia.com/gpu":"1","nvidia.com/gpumem":"12000"}}}]}})");
    EXPECT_TRUE(pod) << pod.error().message;
    s.input.pending->push_back(std::move(pod).value());
  }
  auto groups = nodegroups::parse_node_groups(
      "apiVersion: hamisim.io/v1\nkind: NodeGroups\nnodeGroups:\n"
      "  - {name: t4, minSize: 1, maxSize: 10, members: {pool: t4}}\n",
      "node-groups");
  EXPECT_TRUE(groups) << groups.error().message;
  s.input.node_groups = std::move(groups).value();
  if (empty_profiles) s.profiles = std::make_shared<const profile::DeviceProfiles>();
  return s;
}

TEST(EngineParityIssueCase, AWarmSampleIsNormalizedOnEveryPath) {
  for (bool empty_profiles : {false, true}) {
    const Scenario s = issue_case(empty_profiles);
    Serve serve(s.registry, s.profiles);
    for (bool over_http : {false, true}) {
      auto planning =
          Planning::create(s.registry, s.profiles,
                           over_http ? std::optional(ca_config(serve.port())) : std::nullopt);
      ASSERT_TRUE(planning) << planning.error().message;
      auto plan = (*planning)->plan(s.input, {});
      ASSERT_TRUE(plan) << plan.error().message;
      ASSERT_EQ(plan->decision, Plan::Decision::kScaleUp)
          << "profiles file: " << empty_profiles << ", over HTTP: " << over_http;
      ASSERT_EQ(plan->scale_ups.size(), 1u);
      EXPECT_EQ(plan->scale_ups[0].delta(), 2)
          << "profiles file: " << empty_profiles << ", over HTTP: " << over_http;
    }
  }
}

// ---- hamisim fit against /filter-simulation -----------------------------------------------

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("hamisim-parity-" + name)).string();
  std::ofstream(path) << text;
  return path;
}

std::string run(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(EngineParityFit, FitCommandAnswersWhatTheSimulationRouteAnswers) {
  const std::string hamisim = std::string(hamisim::testing::binary_dir()) + "/src/cli/hamisim";
  if (!std::filesystem::exists(hamisim)) GTEST_SKIP() << "no " << hamisim << " built";
  const Scenario s = make_scenario({.seed = 11,
                                    .profiles = false,
                                    .unhealthy = true,
                                    .cordoned = true,
                                    .nodes = 8,
                                    .pending = 12});
  Serve serve(s.registry, s.profiles);
  // Every pending pod against every real node (health and cordon count) and a template copy
  // of each (normalized), with the pods running on it.
  std::vector<model::Node> nodes;
  for (const model::Node& n : s.input.nodes) {
    nodes.push_back(n);
    model::Node copy = n;
    copy.metadata.name =
        "template-node-for-g-" + n.metadata.name.substr(n.metadata.name.size() - 2);
    nodes.push_back(std::move(copy));
  }
  std::vector<model::Pod> pending;
  for (const model::Pod& p : s.input.pods) {
    if (p.spec.node_name.empty()) pending.push_back(p);
  }
  int compared = 0, fits = 0;
  for (size_t p = 0; p < pending.size(); p += 3) {
    const model::Pod& pod = pending[p];
    const std::string pod_json = model::encode_pod_json(pod);
    const std::string pod_path = temp_file("pod.json", pod_json);
    for (size_t k = 0; k < nodes.size(); k += 2) {
      const model::Node& node = nodes[k + (p / 3) % 2];
      const std::string original = s.input.nodes[k / 2].metadata.name;
      std::string running = R"({"kind":"List","items":[)";
      std::string simulated;
      for (const model::Pod& r : s.input.pods) {
        if (r.spec.node_name != original) continue;
        const std::string text = model::encode_pod_json(r);
        running += (simulated.empty() ? "" : ",") + text;
        simulated += (simulated.empty() ? "" : ",") + text;
      }
      running += "]}";
      const std::string node_json = model::encode_node_json(node);
      const std::string body = R"({"Pod":)" + pod_json + R"(,"Nodes":{"items":[)" + node_json +
                               R"(]},"SimulatedPods":{")" + node.metadata.name + R"(":[)" +
                               simulated + "]}}";
      auto answer = http_request(serve.client(), "POST", "/filter-simulation", body);
      ASSERT_TRUE(answer) << answer.error().message;
      const json::object route = json::parse(answer->body).as_object();
      const json::object& diag =
          route.at("Diagnostics").as_object().at(node.metadata.name).as_object();

      const std::string fit_out = run(hamisim + " fit -o json --pod " + pod_path + " --node " +
                                      temp_file("node.json", node_json) + " --pods-on-node " +
                                      temp_file("running.json", running) + " 2>&1");
      const json::value parsed = json::parse(fit_out);
      const json::object& fit = parsed.as_object();
      const std::string where = std::string(pod.metadata.name) + " on " + node.metadata.name;
      EXPECT_EQ(fit.at("class").as_string(), diag.at("Class").as_string()) << where;
      EXPECT_EQ(fit.at("deviceSource").as_string(), diag.at("DeviceSource").as_string()) << where;
      const auto& failed = route.at("FailedNodes").as_object();
      const std::string route_failed = failed.contains(node.metadata.name)
                                           ? std::string(failed.at(node.metadata.name).as_string())
                                           : std::string();
      EXPECT_EQ(fit.at("reason").as_string(), route_failed) << where;
      if (fit.at("fits").as_bool() && fit.at("class").as_string() == "Fits") {
        ++fits;
        json::object expected;
        for (const auto& [k, val] :
             route.at("Allocations").as_object().at(node.metadata.name).as_object())
          expected[k] = val;
        EXPECT_EQ(fit.at("annotations").as_object(), expected) << where;
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 20);
  EXPECT_GT(fits, 0);  // not vacuous: some pairs fit and their annotations are compared
}

}  // namespace
}  // namespace hamisim::planner::scaleup
