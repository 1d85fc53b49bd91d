// The live scheduler over a snapshot source: registration and handshake, HAMi's live filter
// with its side effects, bind with the node lock, and the seed's warm scenario.

#include "live/live_scheduler.h"
#include "go/rfc3339.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>

#include "live_fixtures.h"

namespace hamisim::live {
namespace {

using testing::eventually;
using testing::Harness;
using testing::node_json;
using testing::pod_json;
using Kind = LiveFilterResult::Kind;

std::vector<std::string> event_reasons(Harness& h, const std::string& reason) {
  std::vector<std::string> out;
  for (const auto& e : h.source->store().list(state::Kind::kEvent).items) {
    if (e.json.find("\"reason\":\"" + reason + "\"") != std::string::npos) out.push_back(e.json);
  }
  return out;
}

TEST(LiveScheduler, SeedWarmScenarioTwoPodsFillTheNodeAndTheThirdIsRejected) {
  Harness h(
      {node_json("gpu-1"), pod_json("p1", 11000), pod_json("p2", 11000), pod_json("p3", 11000)}, {},
      /*play_device_plugin=*/true);
  ASSERT_TRUE(h.wait_ready()) << h.scheduler->readiness().detail;
  for (const char* p : {"p1", "p2"}) {
    auto r = h.filter(p, {"gpu-1"});
    ASSERT_EQ(r.kind, Kind::kChosen) << r.error;
    EXPECT_EQ(r.node, "gpu-1");
    EXPECT_EQ(h.bind(p, "gpu-1"), "");
    // The device plugin's part (played by the snapshot) releases the lock after Allocate.
    ASSERT_TRUE(
        eventually([&] { return h.node_annotation("gpu-1", "hami.io/mutex.lock").empty(); }));
  }
  auto r = h.filter("p3", {"gpu-1"});
  ASSERT_EQ(r.kind, Kind::kNoFit);
  EXPECT_EQ(r.failed_nodes.at("gpu-1"), "2/2 CardInsufficientMemory");
  // What a HAMi device plugin reads.
  const auto p1 = h.pod("p1");
  EXPECT_EQ(p1.spec.node_name, "gpu-1");
  EXPECT_EQ(*model::find_annotation(p1.metadata, "hami.io/vgpu-node"), "gpu-1");
  EXPECT_EQ(p1.metadata.labels.at("hami.io/vgpu-node"), "gpu-1");
  const std::string allocated =
      *model::find_annotation(p1.metadata, "hami.io/vgpu-devices-allocated");
  EXPECT_TRUE(allocated == "GPU-gpu-1-0,NVIDIA,11000,0:;" ||
              allocated == "GPU-gpu-1-1,NVIDIA,11000,0:;")
      << allocated;
  EXPECT_EQ(*model::find_annotation(p1.metadata, "hami.io/bind-phase"), "success");
  EXPECT_NE(h.pod_annotation("p1", "hami.io/vgpu-devices-allocated"),
            h.pod_annotation("p2", "hami.io/vgpu-devices-allocated"));
  EXPECT_FALSE(h.pod_annotation("p1", "hami.io/vgpu-time").empty());
  EXPECT_FALSE(h.pod_annotation("p1", "hami.io/bind-time").empty());
  EXPECT_EQ(event_reasons(h, "FilteringSucceed").size(), 2u);
  EXPECT_EQ(event_reasons(h, "BindingSucceed").size(), 2u);
  EXPECT_GE(event_reasons(h, "FilteringFailed").size(), 2u);  // per reason + summary
  EXPECT_TRUE(h.pods_match_store());
}

TEST(LiveScheduler, BindSetsAllocatingAndLeavesTheLockForTheDevicePlugin) {
  Harness h({node_json("gpu-1"), pod_json("p1", 3000), pod_json("p2", 3000)});
  ASSERT_TRUE(h.wait_ready());
  ASSERT_EQ(h.filter("p1", {"gpu-1"}).kind, Kind::kChosen);
  EXPECT_EQ(h.bind("p1", "gpu-1"), "");
  EXPECT_EQ(h.pod_annotation("p1", "hami.io/bind-phase"), "allocating");
  EXPECT_EQ(h.pod("p1").spec.node_name, "gpu-1");
  const std::string lock = h.node_annotation("gpu-1", "hami.io/mutex.lock");
  EXPECT_TRUE(lock.ends_with(",default,p1")) << lock;
  ASSERT_TRUE(parse_node_lock(lock));

  // The next pod fits (usage counts p1) but cannot take the node until the plugin is done.
  ASSERT_EQ(h.filter("p2", {"gpu-1"}).kind, Kind::kChosen);
  const std::string err = h.bind("p2", "gpu-1");
  EXPECT_EQ(err, "not ready: node gpu-1 has been locked within 5m0s: node lock contention");
  EXPECT_EQ(event_reasons(h, "BindingFailed").size(), 1u);
  // The failed bind keeps p2's reservation and p1's lock.
  EXPECT_EQ(h.scheduler->pods().size(), 2u);
  EXPECT_TRUE(h.node_annotation("gpu-1", "hami.io/mutex.lock").ends_with(",default,p1"));
  EXPECT_TRUE(h.pod("p2").spec.node_name.empty());
}

TEST(LiveScheduler, ARepeatedBindOfABoundPodIsRefusedAndKeepsItsLock) {
  // Issue 23 item 4: the repeated bind found the lock already p1's, its Binding failed
  // ("already assigned") and the failure path released p1's lock, so p2 bound to the node
  // before the device plugin had allocated p1.
  Harness h({node_json("gpu-1"), pod_json("p1", 3000), pod_json("p2", 3000)});
  ASSERT_TRUE(h.wait_ready());
  ASSERT_EQ(h.filter("p1", {"gpu-1"}).kind, Kind::kChosen);
  ASSERT_EQ(h.bind("p1", "gpu-1"), "");
  const std::string lock = h.node_annotation("gpu-1", "hami.io/mutex.lock");
  ASSERT_TRUE(lock.ends_with(",default,p1")) << lock;

  EXPECT_EQ(h.bind("p1", "gpu-1"),
            "invalid request: pod default/p1 is already bound to node gpu-1");
  EXPECT_EQ(h.node_annotation("gpu-1", "hami.io/mutex.lock"), lock);
  // Refused before the node is looked at: the bound pod's reservation stays.
  EXPECT_EQ(h.bind("p1", "gpu-9"),
            "invalid request: pod default/p1 is already bound to node gpu-1");
  EXPECT_EQ(h.scheduler->pods().size(), 1u);
  const auto failed = event_reasons(h, "BindingFailed");
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_NE(failed[0].find("pod default/p1 is already bound to node gpu-1"), std::string::npos)
      << failed[0];

  // The next pod still waits for the device plugin.
  ASSERT_EQ(h.filter("p2", {"gpu-1"}).kind, Kind::kChosen);
  EXPECT_EQ(h.bind("p2", "gpu-1"),
            "not ready: node gpu-1 has been locked within 5m0s: node lock contention");
  EXPECT_TRUE(h.pod("p2").spec.node_name.empty());
  EXPECT_EQ(h.node_annotation("gpu-1", "hami.io/mutex.lock"), lock);
  EXPECT_EQ(h.pod("p1").spec.node_name, "gpu-1");
}

// A cluster source that forwards everything to another; tests override what they change.
class ForwardingSource : public state::ClusterSource {
 public:
  explicit ForwardingSource(state::ClusterSource& inner) : inner_(inner) {}
  void start(state::ClusterHandler& handler) override { inner_.start(handler); }
  void stop() override { inner_.stop(); }
  std::string describe() const override { return inner_.describe(); }
  state::ApiResult<model::Node> get_node(std::string_view name) override {
    return inner_.get_node(name);
  }
  state::ApiResult<model::Pod> get_pod(std::string_view ns, std::string_view name) override {
    return inner_.get_pod(ns, name);
  }
  state::ApiStatus patch_node_annotations(std::string_view name,
                                          const state::MetadataPatch& annotations,
                                          std::string_view resource_version) override {
    return inner_.patch_node_annotations(name, annotations, resource_version);
  }
  state::ApiStatus patch_pod_metadata(std::string_view ns, std::string_view name,
                                      const state::MetadataPatch& annotations,
                                      const state::MetadataPatch& labels) override {
    return inner_.patch_pod_metadata(ns, name, annotations, labels);
  }
  state::ApiStatus bind_pod(std::string_view ns, std::string_view name, std::string_view uid,
                            std::string_view node) override {
    return inner_.bind_pod(ns, name, uid, node);
  }
  void record_event(state::PodEvent event) override { inner_.record_event(std::move(event)); }

 protected:
  state::ClusterSource& inner_;
};

// Bindings apply but are answered with an error, as when the API server's answer is lost (a
// timeout, a reset connection).
class BindingAnswersLost final : public ForwardingSource {
 public:
  using ForwardingSource::ForwardingSource;
  state::ApiStatus bind_pod(std::string_view ns, std::string_view name, std::string_view uid,
                            std::string_view node) override {
    if (auto bound = inner_.bind_pod(ns, name, uid, node); !bound) return bound;
    return state::ApiError{state::ApiCode::kUnavailable,
                           "POST binding: context deadline exceeded (answer lost)"};
  }
};

// Records the annotation keys of every node patch.
class NodePatchRecorder final : public ForwardingSource {
 public:
  using ForwardingSource::ForwardingSource;
  state::ApiStatus patch_node_annotations(std::string_view name,
                                          const state::MetadataPatch& annotations,
                                          std::string_view resource_version) override {
    {
      std::lock_guard lock(mu);
      std::set<std::string> keys;
      for (const auto& [key, value] : annotations) keys.insert(key);
      patches.emplace_back(std::string(name), std::move(keys));
    }
    return inner_.patch_node_annotations(name, annotations, resource_version);
  }
  std::mutex mu;
  std::vector<std::pair<std::string, std::set<std::string>>> patches;
};

// A bind whose Binding applied although its answer was an error failed for kube-scheduler,
// but the pod is bound to the node: the lock it set is the device plugin's to release, so it
// stays (HAMi's cleanup released it, and the next pod could allocate on the node first).
TEST(LiveScheduler, AFailedBindKeepsItsLockWhenThePodIsBoundAllTheSame) {
  auto loaded = state::SnapshotSource::load(
      {testing::write_temp(
          "cluster.json",
          testing::list_json({node_json("gpu-1"), pod_json("p1", 3000), pod_json("p2", 3000)}))},
      {});
  ASSERT_TRUE(loaded) << loaded.error().message;
  auto& snapshot = *loaded.value();
  BindingAnswersLost source(snapshot);
  const device::DeviceRegistry registry = device::build_registry({});
  LiveOptions options;
  options.register_interval = std::chrono::hours(1);
  LiveScheduler scheduler(registry, source, std::move(options));
  scheduler.start();
  ASSERT_TRUE(eventually([&] { return scheduler.readiness().filtering; }));
  auto filter = [&](const std::string& name) {
    const model::Pod pod = *snapshot.get_pod("default", name);
    auto prepared = fit::prepare_pod(pod, registry, {});
    return scheduler.filter(*prepared, {"gpu-1"}).kind;
  };
  auto bind = [&](const std::string& name) {
    return scheduler.bind(
        {name, "default", snapshot.get_pod("default", name)->metadata.uid, "gpu-1"});
  };
  auto lock = [&] {
    const model::Node n = *snapshot.get_node("gpu-1");
    const std::string* v = model::find_annotation(n.metadata, "hami.io/mutex.lock");
    return v ? *v : "";
  };

  ASSERT_EQ(filter("p1"), Kind::kChosen);
  EXPECT_EQ(bind("p1"), "internal: POST binding: context deadline exceeded (answer lost)");
  EXPECT_EQ(snapshot.get_pod("default", "p1")->spec.node_name, "gpu-1");
  EXPECT_TRUE(lock().ends_with(",default,p1")) << lock();
  ASSERT_EQ(filter("p2"), Kind::kChosen);
  EXPECT_EQ(bind("p2"), "not ready: node gpu-1 has been locked within 5m0s: node lock contention");
  EXPECT_TRUE(snapshot.get_pod("default", "p2")->spec.node_name.empty());
  scheduler.stop();
}

TEST(LiveScheduler, AStaleBindRequestIsRefusedWithoutTouchingTheLock) {
  Harness h({node_json("gpu-1"), pod_json("p1", 3000)});
  ASSERT_TRUE(h.wait_ready());
  ASSERT_EQ(h.filter("p1", {"gpu-1"}).kind, Kind::kChosen);
  // p1's lock from an earlier bind call whose Binding did not go through.
  const std::string lock =
      go::format_rfc3339_local(std::chrono::system_clock::now()) + ",default,p1";
  ASSERT_TRUE(h.source->patch_node_annotations("gpu-1", {{"hami.io/mutex.lock", lock}}, ""));
  const std::string uid = h.pod("p1").metadata.uid;
  EXPECT_EQ(
      h.scheduler->bind({"p1", "default", "stale-uid", "gpu-1"}),
      "invalid request: pod default/p1 has UID " + uid + ", not stale-uid (stale bind request)");
  EXPECT_EQ(h.node_annotation("gpu-1", "hami.io/mutex.lock"), lock);
  EXPECT_EQ(h.pod_annotation("p1", "hami.io/bind-phase"), "");
  EXPECT_TRUE(h.pod("p1").spec.node_name.empty());
  EXPECT_EQ(h.scheduler->pods().size(), 1u);  // the current pod's reservation
  // The current pod's own request binds, with the lock it already holds.
  EXPECT_EQ(h.bind("p1", "gpu-1"), "");
  EXPECT_EQ(h.pod("p1").spec.node_name, "gpu-1");
  EXPECT_EQ(h.node_annotation("gpu-1", "hami.io/mutex.lock"), lock);
}

TEST(LiveScheduler, BindRefusesADevicePodNoFilterPlacedThere) {
  Harness h({node_json("gpu-1"), node_json("gpu-2"), pod_json("p1", 1000), pod_json("p2", 1000)});
  ASSERT_TRUE(h.wait_ready());
  EXPECT_EQ(h.bind("p1", "gpu-1"),
            "invalid request: pod default/p1 has no device allocation on node gpu-1 "
            "(hami.io/vgpu-node is \"\"); the live /filter must choose the node first");
  auto r = h.filter("p2", {"gpu-1"});
  ASSERT_EQ(r.kind, Kind::kChosen);
  EXPECT_NE(h.bind("p2", "gpu-2"), "");
  EXPECT_TRUE(h.pod("p2").spec.node_name.empty());
  EXPECT_EQ(h.node_annotation("gpu-2", "hami.io/mutex.lock"), "");
  EXPECT_EQ(h.bind("p2", "gpu-1"), "");
}

TEST(LiveScheduler, UnregisteredAndUnknownNodesAreNamed) {
  Harness h(
      {node_json("gpu-1"), node_json("cpu-1", 0, "", /*registered=*/false), pod_json("p1", 20000)});
  ASSERT_TRUE(h.wait_ready());
  auto r = h.filter("p1", {"gpu-1", "cpu-1", "ghost"});
  ASSERT_EQ(r.kind, Kind::kNoFit);
  EXPECT_EQ(r.failed_nodes.at("gpu-1"), "2/2 CardInsufficientMemory");
  EXPECT_EQ(r.failed_nodes.at("cpu-1"), "node unregistered");
  EXPECT_EQ(r.failed_nodes.at("ghost"), "node unregistered");
  EXPECT_EQ(h.scheduler->pods().size(), 0u);
  // Nothing was written on the pod.
  EXPECT_EQ(h.pod_annotation("p1", "hami.io/vgpu-node"), "");
}

TEST(LiveScheduler, NodesOutsideTheNodeLabelSelectorAreNotRegistered) {
  std::string labelled = node_json("gpu-1");
  labelled.replace(labelled.find(R"("annotations")"), 0, R"("labels":{"pool":"gpu","zone":"a"},)");
  LiveOptions o;
  o.node_selector = {{"pool", "gpu"}, {"zone", "a"}};
  Harness h({labelled, node_json("gpu-2"), pod_json("p1", 1000)}, o);
  ASSERT_TRUE(h.wait_ready());
  auto r = h.filter("p1", {"gpu-1", "gpu-2"});
  ASSERT_EQ(r.kind, Kind::kChosen) << r.error;
  EXPECT_EQ(r.node, "gpu-1");
  EXPECT_EQ(h.scheduler->nodes().snapshot()->size(), 1u);
}

// A scheduler pod of HAMi's chart: component label, optionally a role label already.
std::string scheduler_pod(const std::string& name, const std::string& ns,
                          const std::string& labels) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}","namespace":"{}","labels":{{{}}}}},)"
      R"("spec":{{"containers":[{{"name":"extender","image":"hamisim"}}]}},"status":{{"phase":"Running"}}}})",
      name, ns, labels);
}

TEST(LiveScheduler, TheLeaderLabelsItselfLeaderAndTheOtherSchedulerPodsFollower) {
  const std::string component = R"("app.kubernetes.io/component":"hami-scheduler")";
  LiveOptions o;
  o.role_labels = {.pod_name = "hami-scheduler-new", .pod_namespace = "hami-system"};
  Harness h({node_json("gpu-1"), scheduler_pod("hami-scheduler-new", "hami-system", component),
             scheduler_pod("hami-scheduler-old", "hami-system",
                           component + R"(,"hami.io/scheduler-role":"leader")"),
             scheduler_pod("hami-scheduler-other", "elsewhere", component),
             scheduler_pod("unrelated", "hami-system", R"("app":"web")")},
            o);
  ASSERT_TRUE(h.wait_ready());
  auto role = [&](const std::string& name, const std::string& ns) {
    const auto labels = h.pod(name, ns).metadata.labels;
    auto it = labels.find("hami.io/scheduler-role");
    return it == labels.end() ? std::string("(none)") : it->second;
  };
  EXPECT_EQ(role("hami-scheduler-new", "hami-system"), "leader");
  EXPECT_EQ(role("hami-scheduler-old", "hami-system"), "follower");  // a deposed leader
  EXPECT_EQ(role("hami-scheduler-other", "elsewhere"), "(none)");    // not our namespace
  EXPECT_EQ(role("unrelated", "hami-system"), "(none)");             // not a scheduler pod
}

TEST(LiveScheduler, AFollowerLabelsNoPod) {
  LiveOptions o;
  o.leader = {.enabled = true,
              .lease_namespace = "kube-system",
              .lease_name = "kube-scheduler",
              .identity = "hami-scheduler-new"};
  o.role_labels = {.pod_name = "hami-scheduler-new", .pod_namespace = "hami-system"};
  Harness h(
      {node_json("gpu-1"), scheduler_pod("hami-scheduler-new", "hami-system",
                                         R"("app.kubernetes.io/component":"hami-scheduler")")},
      o);
  ASSERT_TRUE(eventually([&] { return h.scheduler->readiness().ready; }));
  h.scheduler->register_now();
  EXPECT_FALSE(h.scheduler->readiness().leading);
  EXPECT_FALSE(h.pod("hami-scheduler-new", "hami-system")
                   .metadata.labels.contains("hami.io/scheduler-role"));
}

TEST(LiveScheduler, RefilteringReplacesTheStaleReservation) {
  Harness h({node_json("gpu-1"), pod_json("p1", 11000)});
  ASSERT_TRUE(h.wait_ready());
  for (int i = 0; i < 5; ++i) {
    auto r = h.filter("p1", {"gpu-1"});
    ASSERT_EQ(r.kind, Kind::kChosen) << "round " << i << ": " << r.error;
  }
  EXPECT_EQ(h.scheduler->pods().size(), 1u);
  EXPECT_TRUE(h.pods_match_store());
}

TEST(LiveScheduler, PodDeletedBetweenFilterAndBindReleasesItsReservation) {
  Harness h({node_json("gpu-1"), pod_json("p1", 11000)});
  ASSERT_TRUE(h.wait_ready());
  ASSERT_EQ(h.filter("p1", {"gpu-1"}).kind, Kind::kChosen);
  const std::string uid = h.pod("p1").metadata.uid;
  ASSERT_TRUE(h.source->store().remove(state::Kind::kPod, "default", "p1"));
  EXPECT_EQ(h.scheduler->bind({"p1", "default", uid, "gpu-1"}),
            "invalid request: pod \"default/p1\" not found");
  EXPECT_TRUE(eventually([&] { return h.scheduler->pods().size() == 0; }));
  EXPECT_EQ(h.node_annotation("gpu-1", "hami.io/mutex.lock"), "");
}

// /filter of a pod the cluster does not have (never created, or deleted while filtered) is the
// caller's mistake, worded as /bind words it, not an internal error; nothing stays reserved.
TEST(LiveScheduler, FilterOfAPodNotInTheClusterIsNotFound) {
  Harness h({node_json("gpu-1"), pod_json("p1", 1000)});
  ASSERT_TRUE(h.wait_ready());
  auto ghost = model::decode_pod_json(pod_json("ghost", 1000));
  ASSERT_TRUE(ghost) << ghost.error().message;
  ghost->metadata.uid = "ghost-uid";
  auto prepared = fit::prepare_pod(*ghost, h.registry, {});
  ASSERT_TRUE(prepared) << prepared.error().message;
  auto r = h.scheduler->filter(*prepared, {"gpu-1"});
  EXPECT_EQ(r.kind, Kind::kError);
  EXPECT_EQ(r.error, "invalid request: pod \"default/ghost\" not found");
  EXPECT_EQ(h.scheduler->pods().size(), 0u);
  EXPECT_TRUE(event_reasons(h, "FilteringFailed").empty());
  // The node is still free for a pod that exists.
  EXPECT_EQ(h.filter("p1", {"gpu-1"}).kind, Kind::kChosen);
}

TEST(LiveScheduler, BindToAnUnknownNodeFailsAndReleasesTheReservation) {
  Harness h({node_json("gpu-1"), pod_json("p1", 1000)});
  ASSERT_TRUE(h.wait_ready());
  ASSERT_EQ(h.filter("p1", {"gpu-1"}).kind, Kind::kChosen);
  ASSERT_TRUE(eventually([&] { return h.pod_annotation("p1", "hami.io/vgpu-node") == "gpu-1"; }));
  EXPECT_EQ(h.bind("p1", "gpu-9"), "invalid request: node \"gpu-9\" not found");
  EXPECT_EQ(h.scheduler->pods().size(), 0u);
  EXPECT_EQ(event_reasons(h, "BindingFailed").size(), 1u);
}

TEST(LiveScheduler, RegistrationRequestsAHandshake) {
  Harness h({node_json("gpu-1")});
  ASSERT_TRUE(h.wait_ready());
  const model::Node node = h.node("gpu-1");
  const std::string* hs = model::find_annotation(node.metadata, "hami.io/node-handshake");
  ASSERT_NE(hs, nullptr);
  EXPECT_TRUE(hs->starts_with("Requesting_")) << *hs;
  EXPECT_TRUE(parse_handshake_time(hs->substr(11)).has_value()) << *hs;
  EXPECT_EQ(h.scheduler->nodes().snapshot()->at("gpu-1")->description.devices.size(), 2u);
}

// One patch per node carries the handshake request of every vendor that has one, where HAMi
// sends a patch per vendor (five times the API requests of a pass over a large cluster).
TEST(LiveScheduler, ARegistrationPassRequestsEveryHandshakeOfANodeInOnePatch) {
  auto loaded = state::SnapshotSource::load(
      {testing::write_temp("cluster.json", testing::list_json({node_json("gpu-1")}))}, {});
  ASSERT_TRUE(loaded) << loaded.error().message;
  auto& snapshot = *loaded.value();
  NodePatchRecorder source(snapshot);
  const device::DeviceRegistry registry = device::build_registry({});
  std::set<std::string> handshakes;
  for (const auto& backend : registry.backends()) {
    if (backend->health_check() == device::HealthCheck::kHandshake &&
        !backend->handshake_annotation().empty()) {
      handshakes.insert(std::string(backend->handshake_annotation()));
    }
  }
  ASSERT_GE(handshakes.size(), 2u);
  LiveOptions options;
  options.register_interval = std::chrono::hours(1);
  LiveScheduler scheduler(registry, source, std::move(options));
  scheduler.start();
  ASSERT_TRUE(eventually([&] { return scheduler.readiness().filtering; }));
  scheduler.stop();
  std::lock_guard lock(source.mu);
  ASSERT_EQ(source.patches.size(), 1u);
  EXPECT_EQ(source.patches[0].first, "gpu-1");
  EXPECT_EQ(source.patches[0].second, handshakes);
  const model::Node node = *snapshot.get_node("gpu-1");
  for (const std::string& key : handshakes) {
    const std::string* value = model::find_annotation(node.metadata, key);
    ASSERT_NE(value, nullptr) << key;
    EXPECT_TRUE(value->starts_with("Requesting_")) << key << ": " << *value;
  }
}

std::string stale_handshake() {
  return "\"hami.io/node-handshake\":\"Requesting_" +
         format_handshake_time(std::chrono::system_clock::now() - std::chrono::minutes(5)) + "\"";
}

TEST(LiveScheduler, AnUnansweredHandshakeWithoutDevicesIsUnhealthy) {
  // The plugin never answered and the node advertises no GPUs: not registered.
  Harness h({node_json("dead", 0, stale_handshake()), node_json("alive", 20, stale_handshake()),
             pod_json("p1", 1000)});
  ASSERT_TRUE(h.wait_ready());
  auto r = h.filter("p1", {"dead", "alive"});
  ASSERT_EQ(r.kind, Kind::kChosen);
  EXPECT_EQ(r.node, "alive");
}

TEST(LiveScheduler, ANodeThatLosesItsDevicesIsDroppedAndItsHandshakeCleared) {
  Harness h({node_json("gpu-1"), pod_json("p1", 1000)});
  ASSERT_TRUE(h.wait_ready());
  ASSERT_TRUE(h.scheduler->nodes().snapshot()->contains("gpu-1"));
  // The device plugin died: the GPUs leave allocatable and the handshake goes unanswered.
  const std::string stale =
      format_handshake_time(std::chrono::system_clock::now() - std::chrono::minutes(5));
  ASSERT_TRUE(h.source->store().merge_patch(
      state::Kind::kNode, "", "gpu-1",
      R"({"metadata":{"annotations":{"hami.io/node-handshake":"Requesting_)" + stale +
          R"("}},"status":{"allocatable":{"nvidia.com/gpu":"0"}}})"));
  ASSERT_TRUE(eventually([&] {
    auto n = h.scheduler->nodes().snapshot();
    h.scheduler->register_now();
    return !h.scheduler->nodes().snapshot()->contains("gpu-1");
  }));
  EXPECT_EQ(h.filter("p1", {"gpu-1"}).failed_nodes.at("gpu-1"), "node unregistered");
  EXPECT_EQ(h.node_annotation("gpu-1", "hami.io/node-handshake"), "");
}

TEST(LiveScheduler, DeviceCordonIsAppliedAtOnce) {
  Harness h({node_json("gpu-1"), pod_json("p1", 1000)});
  ASSERT_TRUE(h.wait_ready());
  ASSERT_TRUE(
      h.source->patch_node_annotations("gpu-1", {{"hami.io/device-cordon", "GPU-gpu-1-0"}}, ""));
  ASSERT_TRUE(eventually([&] {
    return h.scheduler->nodes().snapshot()->at("gpu-1")->description.cordoned.contains(
        "GPU-gpu-1-0");
  }));
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(h.filter("p1", {"gpu-1"}).kind, Kind::kChosen);
    EXPECT_TRUE(
        h.pod_annotation("p1", "hami.io/vgpu-devices-allocated").starts_with("GPU-gpu-1-1,"));
  }
}

TEST(LiveScheduler, AFailedPatchRollsTheReservationBack) {
  // A node name longer than 63 characters cannot be a label value: HAMi's observed failure.
  const std::string long_name(70, 'n');
  Harness h({node_json(long_name), pod_json("p1", 1000)});
  ASSERT_TRUE(h.wait_ready());
  auto r = h.filter("p1", {long_name});
  ASSERT_EQ(r.kind, Kind::kError);
  EXPECT_TRUE(r.error.starts_with("internal: patching the pod's allocation annotations: "))
      << r.error;
  EXPECT_EQ(h.scheduler->pods().size(), 0u);
  EXPECT_EQ(h.pod_annotation("p1", "hami.io/vgpu-node"), "");
}

TEST(LiveScheduler, DeviceQuotaLimitsTheNamespace) {
  const std::string quota =
      R"({"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"gpu","namespace":"team"},"spec":{"hard":{"limits.nvidia.com/gpumem":"12000"}}})";
  Harness h({node_json("gpu-1"), quota, pod_json("a", 11000, 0, "team"),
             pod_json("b", 11000, 0, "team")});
  ASSERT_TRUE(h.wait_ready());
  ASSERT_EQ(h.filter("a", {"gpu-1"}, "team").kind, Kind::kChosen);
  auto r = h.filter("b", {"gpu-1"}, "team");
  EXPECT_EQ(r.kind, Kind::kNoFit);
  auto check = h.scheduler->admission_quota_check(h.pod("b", "team"));
  ASSERT_TRUE(check.has_value());
  EXPECT_NE(check->find("nvidia.com/gpumem"), std::string::npos) << *check;
  // Deleting the quota lifts the limit.
  ASSERT_TRUE(h.source->store().remove(state::Kind::kResourceQuota, "team", "gpu"));
  ASSERT_TRUE(eventually([&] { return !h.scheduler->admission_quota_check(h.pod("b", "team")); }));
  EXPECT_EQ(h.filter("b", {"gpu-1"}, "team").kind, Kind::kChosen);
}

TEST(LiveScheduler, FiltersOnlyWhileThisReplicaLeadsAndIsReadyAsAFollower) {
  LiveOptions o;
  o.leader = {.enabled = true,
              .lease_namespace = "kube-system",
              .lease_name = "kube-scheduler",
              .identity = "sched-0"};
  Harness h({node_json("gpu-1"), pod_json("p1", 1000)}, o);
  ASSERT_TRUE(eventually(
      [&] { return h.scheduler->readiness().detail.find("not the leader") != std::string::npos; }));
  auto r = h.filter("p1", {"gpu-1"});
  ASSERT_EQ(r.kind, Kind::kError);
  EXPECT_TRUE(r.error.starts_with("not ready: not the leader")) << r.error;
  EXPECT_TRUE(h.scheduler->readiness().ready);  // a follower can take over: it is ready
  EXPECT_FALSE(h.scheduler->readiness().leading);
  // kube-scheduler on this pod takes the Lease.
  ASSERT_TRUE(h.source->store().create(
      state::Kind::kLease,
      R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kube-scheduler","namespace":"kube-system"},"spec":{"holderIdentity":"sched-0_4b1c","leaseDurationSeconds":15}})"));
  ASSERT_TRUE(h.wait_ready()) << h.scheduler->readiness().detail;
  EXPECT_EQ(h.filter("p1", {"gpu-1"}).kind, Kind::kChosen);
  // Another replica takes over.
  ASSERT_TRUE(h.source->store().merge_patch(state::Kind::kLease, "kube-system", "kube-scheduler",
                                            R"({"spec":{"holderIdentity":"sched-1_77aa"}})"));
  ASSERT_TRUE(eventually([&] { return !h.scheduler->readiness().filtering; }));
  EXPECT_TRUE(h.scheduler->readiness().ready);
}

TEST(LiveScheduler, PodGroupMembersWaitForTheLockThenTimeOut) {
  LiveOptions o;
  o.node_lock_retry_timeout = std::chrono::milliseconds(300);
  Harness h(
      {node_json("gpu-1"), pod_json("holder", 1000),
       pod_json("g1", 1000, 0, "default", R"(,"labels":{"scheduling.x-k8s.io/pod-group":"g"})")},
      o);
  ASSERT_TRUE(h.wait_ready());
  ASSERT_EQ(h.filter("holder", {"gpu-1"}).kind, Kind::kChosen);
  ASSERT_EQ(h.bind("holder", "gpu-1"), "");
  ASSERT_EQ(h.filter("g1", {"gpu-1"}).kind, Kind::kChosen);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(h.bind("g1", "gpu-1"),
            "not ready: timed out after 300ms waiting for node gpu-1 to be unlocked: node lock "
            "contention");
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
}

TEST(LiveScheduler, ADanglingLockIsTakenOver) {
  const std::string lock = "\"hami.io/mutex.lock\":\"" +
                           go::format_rfc3339_local(std::chrono::system_clock::now()) +
                           ",default,gone\"";
  Harness h({node_json("gpu-1", 20, lock), pod_json("p1", 1000)});
  ASSERT_TRUE(h.wait_ready());
  ASSERT_EQ(h.filter("p1", {"gpu-1"}).kind, Kind::kChosen);
  EXPECT_EQ(h.bind("p1", "gpu-1"), "");
  EXPECT_TRUE(h.node_annotation("gpu-1", "hami.io/mutex.lock").ends_with(",default,p1"));
}

// A node with NVIDIA GPUs (registered) and two Cambricon MLUs (from capacity: 200 vcores,
// 64 x 256 MiB), with `annotations` (JSON members) besides the registration.
std::string mixed_node_json(const std::string& name, const std::string& annotations = "") {
  std::string all = annotations;
  if (!all.empty()) all += ",";
  all +=
      "\"hami.io/node-nvidia-register\":" + testing::json_string(testing::k80_registration(name));
  const std::string capacity =
      R"("cpu":"8","memory":"32Gi","pods":"110","nvidia.com/gpu":"20",)"
      R"("cambricon.com/mlu.smlu.vcore":"200","cambricon.com/mlu.smlu.vmemory":"64")";
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{}","annotations":{{{}}}}},)"
      R"("status":{{"capacity":{{{}}},"allocatable":{{{}}}}}}})",
      name, all, capacity, capacity);
}

// A pod asking for one MLU (4 x 256 MiB, 10 vcores), and NVIDIA memory too when `gpumem` > 0.
std::string mlu_pod_json(const std::string& name, int gpumem = 0) {
  std::string limits =
      R"("cambricon.com/vmlu":"1","cambricon.com/mlu.smlu.vmemory":"4","cambricon.com/mlu.smlu.vcore":"10")";
  if (gpumem > 0)
    limits += fmt::format(R"(,"nvidia.com/gpu":"1","nvidia.com/gpumem":"{}")", gpumem);
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}","namespace":"default"}},)"
      R"("spec":{{"schedulerName":"hami-scheduler","containers":[{{"name":"main","image":"mlu",)"
      R"("resources":{{"limits":{{{}}}}}}}]}},"status":{{"phase":"Pending"}}}})",
      name, limits);
}

constexpr std::string_view kMluLock = "cambricon.com/dsmlu.lock";

TEST(LiveScheduler, CambriconPodsTakeCambriconsOwnLock) {
  Harness h({mixed_node_json("n1"), mlu_pod_json("m1"), mlu_pod_json("m2")});
  ASSERT_TRUE(h.wait_ready());
  ASSERT_EQ(h.filter("m1", {"n1"}).kind, Kind::kChosen);
  EXPECT_EQ(h.bind("m1", "n1"), "");
  // A bare RFC 3339 time, no owner; hami.io/mutex.lock is not Cambricon's.
  const std::string lock = h.node_annotation("n1", kMluLock);
  EXPECT_TRUE(parse_rfc3339(lock)) << lock;
  EXPECT_EQ(h.node_annotation("n1", "hami.io/mutex.lock"), "");

  // Within 2 minutes the next MLU pod waits, and the lock stays as it was.
  ASSERT_EQ(h.filter("m2", {"n1"}).kind, Kind::kChosen);
  EXPECT_EQ(h.bind("m2", "n1"), "not ready: node n1 has been locked within 2 minutes");
  EXPECT_EQ(h.node_annotation("n1", kMluLock), lock);
  EXPECT_TRUE(h.pod("m2").spec.node_name.empty());

  // Older than 2 minutes (the device plugin never cleared it): replaced.
  const std::string old =
      go::format_rfc3339_local(std::chrono::system_clock::now() - std::chrono::minutes(3));
  ASSERT_TRUE(h.source->store().merge_patch(
      state::Kind::kNode, "", "n1",
      fmt::format(R"({{"metadata":{{"annotations":{{"{}":"{}"}}}}}})", kMluLock, old)));
  EXPECT_EQ(h.bind("m2", "n1"), "");
  EXPECT_NE(h.node_annotation("n1", kMluLock), old);
  EXPECT_EQ(h.pod("m2").spec.node_name, "n1");
}

TEST(LiveScheduler, AnUnreadableCambriconLockFailsTheBind) {
  Harness h({mixed_node_json("n1", "\"cambricon.com/dsmlu.lock\":\"soon\""), mlu_pod_json("m1")});
  ASSERT_TRUE(h.wait_ready());
  ASSERT_EQ(h.filter("m1", {"n1"}).kind, Kind::kChosen);
  EXPECT_EQ(h.bind("m1", "n1"), "internal: malformed cambricon.com/dsmlu.lock: bad time \"soon\"");
  EXPECT_EQ(h.node_annotation("n1", kMluLock), "soon");
}

TEST(LiveScheduler, ALaterVendorsLockFailingReleasesTheCambriconLockThisBindTook) {
  // HAMi locks in ascending vendor-key order: MLU, then NVIDIA's hami.io/mutex.lock, which
  // another (existing) pod holds.
  const std::string held = "\"hami.io/mutex.lock\":\"" +
                           go::format_rfc3339_local(std::chrono::system_clock::now()) +
                           ",default,other\"";
  Harness h({mixed_node_json("n1", held), pod_json("other", 1000), mlu_pod_json("m1", 1000)});
  ASSERT_TRUE(h.wait_ready());
  ASSERT_EQ(h.filter("m1", {"n1"}).kind, Kind::kChosen);
  EXPECT_EQ(h.bind("m1", "n1"),
            "not ready: node n1 has been locked within 5m0s: node lock contention");
  EXPECT_EQ(h.node_annotation("n1", kMluLock), "");  // taken, then released
  EXPECT_TRUE(h.node_annotation("n1", "hami.io/mutex.lock").ends_with(",default,other"));
  EXPECT_TRUE(h.pod("m1").spec.node_name.empty());
}

TEST(LiveScheduler, TerminatedPodsReleaseTheirDevices) {
  Harness h(
      {node_json("gpu-1"), pod_json("p1", 11000), pod_json("p2", 11000), pod_json("p3", 11000)}, {},
      true);
  ASSERT_TRUE(h.wait_ready());
  for (const char* p : {"p1", "p2"}) {
    ASSERT_EQ(h.filter(p, {"gpu-1"}).kind, Kind::kChosen);
    ASSERT_EQ(h.bind(p, "gpu-1"), "");
  }
  ASSERT_EQ(h.filter("p3", {"gpu-1"}).kind, Kind::kNoFit);
  ASSERT_TRUE(h.source->store().merge_patch(state::Kind::kPod, "default", "p1",
                                            R"({"status":{"phase":"Succeeded"}})"));
  ASSERT_TRUE(eventually([&] { return h.scheduler->pods().size() == 1; }));  // p2 only
  EXPECT_EQ(h.filter("p3", {"gpu-1"}).kind, Kind::kChosen);
  EXPECT_TRUE(h.pods_match_store());
}

}  // namespace
}  // namespace hamisim::live
