// The live scheduler over the Kubernetes API source (issue #4 item 8): LiveScheduler over a
// KubeSource talking HTTP to the fake API server. Concurrent scheduling cycles, two replicas
// with one leader, watch drops and 410s mid-stream, failed and conflicting patches, pods
// deleted between filter and bind, and nodes that lose their registration. After every fault
// the managers must hold exactly what the API objects say.

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <latch>
#include <mutex>
#include <thread>

#include "go/rfc3339.h"
#include "kube_fixtures.h"
#include "live/time_format.h"

namespace hamisim::live {
namespace {

using namespace std::chrono_literals;
using testing::eventually_for;
using testing::KubeCluster;
using testing::KubeReplica;
using testing::node_json;
using testing::node_names;
using testing::pod_json;
using testing::pods_match_store;
using Kind = LiveFilterResult::Kind;

std::string stale_handshake_time() {
  return format_handshake_time(std::chrono::system_clock::now() - std::chrono::minutes(5));
}

// ---- 1. A scheduling cycle for many pods, from several threads ----------------------------

TEST(LiveKube, SixtyPodsFromFourThreadsAreAllBoundWithoutOvercommit) {
  constexpr int kPods = 60;
  const auto nodes = node_names(8);
  std::vector<std::string> objects;
  for (const auto& n : nodes) objects.push_back(node_json(n));
  objects.push_back(testing::quota_json("default", 1000000));
  // 2800 MiB: four fit on an 11441 MiB device, so 8 nodes x 2 devices hold 64 of them and the
  // 60 pods leave the cluster nearly full (binpack packs the same devices from every thread).
  for (int i = 0; i < kPods; ++i) objects.push_back(pod_json(fmt::format("p{:02}", i), 2800));
  for (int i = 0; i < 5; ++i) objects.push_back(pod_json(fmt::format("extra{}", i), 2800));
  KubeCluster cluster(objects);
  KubeReplica replica(cluster);
  ASSERT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;
  testing::DevicePluginSim plugin(cluster);

  std::atomic<int> next{0};
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i; (i = next++) < kPods;) {
        std::string err = replica.place(fmt::format("p{:02}", i), nodes);
        if (!err.empty()) {
          std::lock_guard lock(errors_mutex);
          errors.push_back(std::move(err));
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(errors.empty()) << fmt::format("{}", fmt::join(errors, "\n"));

  // Every pod is bound where its allocation says, and the plugin finished with each.
  for (int i = 0; i < kPods; ++i) {
    const model::Pod p = cluster.pod(fmt::format("p{:02}", i));
    EXPECT_FALSE(p.spec.node_name.empty()) << p.metadata.name;
    EXPECT_EQ(testing::annotation(p.metadata, "hami.io/vgpu-node"), p.spec.node_name)
        << p.metadata.name;
  }
  ASSERT_TRUE(eventually_for(20s, [&] { return plugin.allocated() == kPods; }))
      << plugin.allocated();
  for (const auto& n : nodes) EXPECT_EQ(cluster.node_annotation(n, "hami.io/mutex.lock"), "") << n;
  EXPECT_TRUE(testing::no_device_overcommitted(cluster, replica.registry));
  // Nothing is lost: the pod manager and the quota hold exactly what the pods say.
  EXPECT_TRUE(pods_match_store(replica));
  EXPECT_EQ(replica.scheduler->pods().size(), size_t{kPods});
  EXPECT_EQ(replica.quota_used("default"), int64_t{kPods} * 2800);

  // The four free slots take four more pods; the fifth finds no room.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(replica.place(fmt::format("extra{}", i), nodes), "");
  auto r = replica.filter("extra4", nodes);
  EXPECT_EQ(r.kind, Kind::kNoFit) << r.node << r.error;
  for (const auto& [node, reason] : r.failed_nodes) {
    EXPECT_EQ(reason, "2/2 CardInsufficientMemory") << node;
  }
  EXPECT_TRUE(testing::no_device_overcommitted(cluster, replica.registry));
  EXPECT_TRUE(pods_match_store(replica));
}

// ---- 2. Two replicas, one leader ----------------------------------------------------------

TEST(LiveKube, OnlyTheLeaderFiltersAndANewLeaderSeesThePreviousOnesAllocations) {
  const std::vector<std::string> nodes = {"gpu-1", "gpu-2"};
  std::vector<std::string> objects = {node_json("gpu-1"), node_json("gpu-2"),
                                      testing::lease_json("sched-0_x")};
  for (const char* p : {"a1", "a2", "a3", "a4", "b1", "b2"}) objects.push_back(pod_json(p, 11000));
  KubeCluster cluster(objects);
  LiveOptions o0 = testing::leader_options("sched-0");
  LiveOptions o1 = testing::leader_options("sched-1");
  o0.register_interval = o1.register_interval = 100ms;
  KubeReplica r0(cluster, o0, testing::quick_source_options(true));
  KubeReplica r1(cluster, o1, testing::quick_source_options(true));
  testing::DevicePluginSim plugin(cluster);

  ASSERT_TRUE(r0.wait_ready()) << r0.scheduler->readiness().detail;
  ASSERT_TRUE(eventually_for(20s, [&] {
    return r1.scheduler->readiness().detail.find("not the leader") != std::string::npos;
  })) << r1.scheduler->readiness().detail;
  // A follower is ready (it can take over); it only does not filter.
  EXPECT_TRUE(r1.scheduler->readiness().ready);
  EXPECT_FALSE(r1.scheduler->readiness().leading);
  EXPECT_FALSE(r1.scheduler->readiness().filtering);
  auto refused = r1.filter("a1", nodes);
  ASSERT_EQ(refused.kind, Kind::kError);
  EXPECT_TRUE(refused.error.starts_with("not ready: not the leader (")) << refused.error;
  EXPECT_NE(refused.error.find("\"sched-0_x\""), std::string::npos) << refused.error;
  EXPECT_EQ(cluster.pod_annotation("a1", "hami.io/vgpu-node"), "");  // wrote nothing
  EXPECT_EQ(r1.scheduler->pods().size(), 0u);

  // Replica 0 fills both nodes: two 11000 MiB pods per node, one per device.
  for (const char* p : {"a1", "a2", "a3", "a4"}) ASSERT_EQ(r0.place(p, nodes), "") << p;
  EXPECT_TRUE(testing::no_device_overcommitted(cluster, r0.registry));

  // kube-scheduler on replica 1's pod takes the Lease.
  ASSERT_TRUE(cluster.store.merge_patch(state::Kind::kLease, "kube-system", "kube-scheduler",
                                        R"({"spec":{"holderIdentity":"sched-1_y"}})"));
  ASSERT_TRUE(eventually_for(20s, [&] { return !r0.scheduler->readiness().filtering; }));
  EXPECT_NE(r0.scheduler->readiness().detail.find("not the leader"), std::string::npos)
      << r0.scheduler->readiness().detail;
  ASSERT_TRUE(r1.wait_ready()) << r1.scheduler->readiness().detail;
  // Ready means its own registration pass finished: both nodes are registered.
  EXPECT_EQ(r1.scheduler->nodes().snapshot()->size(), 2u);
  // It sees what replica 0 allocated: nothing fits any more.
  EXPECT_TRUE(pods_match_store(r1));
  EXPECT_EQ(r1.scheduler->pods().size(), 4u);
  auto full = r1.filter("b1", nodes);
  ASSERT_EQ(full.kind, Kind::kNoFit) << full.node << full.error;
  EXPECT_EQ(full.failed_nodes.at("gpu-1"), "2/2 CardInsufficientMemory");
  EXPECT_EQ(full.failed_nodes.at("gpu-2"), "2/2 CardInsufficientMemory");
  auto old = r0.filter("b1", nodes);
  ASSERT_EQ(old.kind, Kind::kError);
  EXPECT_TRUE(old.error.starts_with("not ready: not the leader (")) << old.error;

  // A pod goes away; the new leader places into the room it leaves.
  const std::string a1_node = cluster.pod("a1").spec.node_name;
  ASSERT_TRUE(cluster.store.remove(state::Kind::kPod, "default", "a1"));
  ASSERT_TRUE(eventually_for(20s, [&] { return r1.scheduler->pods().size() == 3; }));
  ASSERT_EQ(r1.place("b1", nodes), "");
  EXPECT_EQ(cluster.pod("b1").spec.node_name, a1_node);
  EXPECT_EQ(r1.filter("b2", nodes).kind, Kind::kNoFit);
  EXPECT_TRUE(testing::no_device_overcommitted(cluster, r1.registry));
  // Both replicas keep watching: both match the store.
  EXPECT_TRUE(pods_match_store(r1));
  EXPECT_TRUE(pods_match_store(r0));
}

// One GPU node, one leading replica whose passes run only when told, and a device plugin
// answering the handshake by hand.
struct OneNodeLeader {
  KubeCluster cluster{{node_json("gpu-1", 20, R"("hami.io/node-handshake":"Reported_x")"),
                       testing::lease_json("sched-0_x")}};
  KubeReplica replica{cluster, options(), testing::quick_source_options(true)};

  static LiveOptions options() {
    LiveOptions o = testing::leader_options("sched-0");
    o.register_interval = std::chrono::hours(1);  // passes only when told
    return o;
  }
  // The plugin answers with `value`, and the source has it: the next pass asks for a handshake
  // again (one slow PATCH). Each answer must be a new value: waiting for an old one could see it
  // before the watch has delivered the pass's own "Requesting" PATCH, which would then arrive
  // after it.
  void answer_handshake(const std::string& value) {
    ASSERT_TRUE(cluster.store.merge_patch(
        state::Kind::kNode, "", "gpu-1",
        R"({"metadata":{"annotations":{"hami.io/node-handshake":")" + value + R"("}}})"));
    ASSERT_TRUE(eventually_for(20s, [&] {
      for (const auto& n : replica.scheduler->observed_nodes()) {
        if (testing::annotation(n.metadata, "hami.io/node-handshake") == value) return true;
      }
      return false;
    }));
  }
  void move_lease(const std::string& holder) {
    ASSERT_TRUE(cluster.store.merge_patch(state::Kind::kLease, "kube-system", "kube-scheduler",
                                          R"({"spec":{"holderIdentity":")" + holder + R"("}})"));
  }
};

TEST(LiveKube, APassThatOutlivesTheLeadershipDoesNotMakeTheNextTermReady) {
  // A registration pass is slow (the API server takes 2 s per answer) and the Lease moves
  // away while it runs. When the Lease comes back, the replica must not be ready before a
  // pass of its new term has finished (HAMi: OnStoppedLeading waits for the pass's lock).
  OneNodeLeader f;
  KubeCluster& cluster = f.cluster;
  KubeReplica& replica = f.replica;
  ASSERT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;
  f.answer_handshake("Reported_y");
  cluster.server->set_delay(2s);
  std::thread pass([&] { replica.scheduler->register_now(); });
  ASSERT_TRUE(eventually_for(20s, [&] {
    return cluster.server->request_count("PATCH", "/api/v1/nodes/gpu-1") >= 2;
  }));  // the pass is in its PATCH
  f.move_lease("sched-1_y");
  ASSERT_TRUE(eventually_for(20s, [&] { return !replica.scheduler->readiness().filtering; }));
  cluster.server->set_delay(0ms);  // the held PATCH is answered now
  pass.join();                     // the pass finishes in the other replica's term

  f.answer_handshake("Reported_z");
  // The new term's first pass must still be in its PATCH when readiness is read below: the
  // server holds it until set_delay(0) releases it, or for 10 s at most, which leaves room for
  // a slow (sanitized, loaded) machine to notice the leadership first.
  cluster.server->set_delay(10s);
  f.move_lease("sched-0_z");
  ASSERT_TRUE(eventually_for(20s, [&] {
    return replica.scheduler->readiness().detail.find("not the leader") == std::string::npos;
  }));
  // Leading again; its first pass is still in its held PATCH.
  const LiveReadiness r = replica.scheduler->readiness();
  EXPECT_TRUE(r.ready) << r.detail;
  EXPECT_TRUE(r.leading) << r.detail;
  EXPECT_FALSE(r.filtering) << r.detail;
  EXPECT_TRUE(r.detail.starts_with("leader, first registration pass not finished")) << r.detail;
  cluster.server->set_delay(0ms);
  EXPECT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;
}

TEST(LiveKube, APassQueuedBehindASlowOneDoesNotRunAfterTheLeaseMoved) {
  // Two passes are asked for while the first waits 2 s on its PATCH; the Lease moves away
  // before the second gets the pass lock. The second must not run: it would write a handshake
  // in another replica's term (and made the test above flaky when it did).
  OneNodeLeader f;
  KubeCluster& cluster = f.cluster;
  KubeReplica& replica = f.replica;
  ASSERT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;
  f.answer_handshake("Reported_y");
  const uint64_t passes_before = replica.scheduler->registration_passes();
  const int patches_before = cluster.server->request_count("PATCH", "/api/v1/nodes/gpu-1");
  cluster.server->set_delay(2s);
  std::thread first([&] { replica.scheduler->register_now(); });
  ASSERT_TRUE(eventually_for(20s, [&] {
    return cluster.server->request_count("PATCH", "/api/v1/nodes/gpu-1") > patches_before;
  }));  // the first pass is in its PATCH and holds the pass lock
  std::thread second([&] { replica.scheduler->register_now(); });
  // Time for the second to queue on the pass lock (shorter only makes the check weaker).
  std::this_thread::sleep_for(200ms);
  f.move_lease("sched-1_y");
  ASSERT_TRUE(eventually_for(20s, [&] { return !replica.scheduler->leading(); }));
  cluster.server->set_delay(0ms);  // the first pass's held PATCH is answered now
  first.join();
  second.join();
  // The first pass ran (it began while leading); the queued one did not.
  EXPECT_EQ(replica.scheduler->registration_passes(), passes_before + 1);
  EXPECT_EQ(cluster.server->request_count("PATCH", "/api/v1/nodes/gpu-1"), patches_before + 1);
}

// ---- 3. Watch drops and 410 Gone mid-stream -----------------------------------------------

TEST(LiveKube, ChangesWhileTheWatchIsDownAreNotLostAfterARelist) {
  const auto nodes = node_names(4);
  std::vector<std::string> objects;
  for (const auto& n : nodes) objects.push_back(node_json(n));
  objects.push_back(testing::quota_json("team", 1000000));
  for (int i = 0; i < 16; ++i)
    objects.push_back(pod_json(fmt::format("t{:02}", i), 2000, 0, "team"));
  KubeCluster cluster(objects);
  KubeReplica replica(cluster);
  ASSERT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;
  testing::DevicePluginSim plugin(cluster);
  for (int i = 0; i < 8; ++i) ASSERT_EQ(replica.place(fmt::format("t{:02}", i), nodes, "team"), "");
  ASSERT_TRUE(pods_match_store(replica));

  // The watches go down and stay down while the cluster changes.
  ASSERT_TRUE(eventually_for(20s, [&] { return cluster.server->open_watches() == 3; }));
  cluster.server->fail_next("WATCH", "/", 1 << 30, 503);
  cluster.server->drop_watches();
  ASSERT_TRUE(eventually_for(20s, [&] { return cluster.server->open_watches() == 0; }));
  ASSERT_TRUE(cluster.store.remove(state::Kind::kPod, "team", "t00"));
  ASSERT_TRUE(cluster.store.remove(state::Kind::kPod, "team", "t01"));
  ASSERT_TRUE(cluster.store.merge_patch(state::Kind::kPod, "team", "t02",
                                        R"({"status":{"phase":"Succeeded"}})"));
  // Placing still works (writes do not need the watch).
  for (int i = 8; i < 12; ++i)
    ASSERT_EQ(replica.place(fmt::format("t{:02}", i), nodes, "team"), "");
  // A pod the source knew without annotations is reserved, then deleted before its bind:
  // the source never saw the annotations the filter patched.
  ASSERT_EQ(replica.filter("t12", nodes, "team").kind, Kind::kChosen);
  ASSERT_TRUE(cluster.store.remove(state::Kind::kPod, "team", "t12"));
  EXPECT_EQ(replica.source->stats().relists_after_gone, 0u);
  cluster.store.compact();  // history gone: the resumed watches get 410 and relist
  cluster.server->clear_failures();

  EXPECT_TRUE(pods_match_store(replica));
  EXPECT_EQ(replica.quota_used("team"), testing::store_memory(cluster, replica.registry, "team"));
  EXPECT_GE(replica.source->stats().relists_after_gone, 1u);
  EXPECT_EQ(replica.scheduler->nodes().snapshot()->size(), nodes.size());
  EXPECT_TRUE(testing::no_device_overcommitted(cluster, replica.registry));
}

TEST(LiveKube, WatchDropsAndCompactionsWhilePodsArePlacedAndDeleted) {
  constexpr int kPods = 40;
  const auto nodes = node_names(4);
  std::vector<std::string> objects;
  for (const auto& n : nodes) objects.push_back(node_json(n));
  objects.push_back(testing::quota_json("team", 1000000));
  for (int i = 0; i < kPods; ++i) {
    objects.push_back(pod_json(fmt::format("c{:02}", i), 1000 + 100 * (i % 7), 0, "team"));
  }
  KubeCluster cluster(objects);
  KubeReplica replica(cluster);
  ASSERT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;
  testing::DevicePluginSim plugin(cluster);
  ASSERT_TRUE(eventually_for(20s, [&] { return cluster.server->open_watches() == 3; }));

  std::mutex placed_mutex;
  std::vector<std::string> placed, errors;
  std::atomic<bool> done{false};
  std::thread placer([&] {
    for (int i = 0; i < kPods; ++i) {
      const std::string name = fmt::format("c{:02}", i);
      std::this_thread::sleep_for(5ms);  // spread the placements over several fault rounds
      std::string err = replica.place(name, nodes, "team");
      std::lock_guard lock(placed_mutex);
      if (err.empty()) {
        placed.push_back(name);
      } else {
        errors.push_back(std::move(err));
      }
    }
    done = true;
  });
  // Faults while the placer works: watch drops, compactions (410 on resume) and deletions of
  // placed pods, some of them while the watches are down.
  int round = 0;
  while (!done || round < 6) {
    switch (round++ % 3) {
      case 0:
        cluster.server->drop_watches();
        break;
      case 1:
        cluster.server->drop_watches();
        cluster.store.compact();
        break;
      default:
        cluster.store.compact();
        break;
    }
    std::string victim;
    {
      std::lock_guard lock(placed_mutex);
      if (placed.size() >= 2 && round % 2 == 0) {
        victim = placed.front();
        placed.erase(placed.begin());
      }
    }
    if (!victim.empty()) {
      EXPECT_TRUE(cluster.store.remove(state::Kind::kPod, "team", victim)) << victim;
    }
    std::this_thread::sleep_for(20ms);
  }
  placer.join();
  ASSERT_TRUE(errors.empty()) << fmt::format("{}", fmt::join(errors, "\n"));
  EXPECT_TRUE(pods_match_store(replica));
  EXPECT_EQ(replica.quota_used("team"), testing::store_memory(cluster, replica.registry, "team"));
  EXPECT_GE(replica.source->stats().watch_errors, 1u);
  EXPECT_EQ(replica.scheduler->nodes().snapshot()->size(), nodes.size());
  EXPECT_TRUE(testing::no_device_overcommitted(cluster, replica.registry));
}

TEST(LiveKube, ALaggingWatchEventDoesNotUndoANewerReservation) {
  // A pod is filtered, its bind fails and kube-scheduler filters it again onto another node
  // before the watch has delivered the first filter's patch. When that old event arrives, the
  // newer reservation must stand: otherwise its node looks emptier than it is and the next
  // filters over-commit it.
  KubeCluster cluster({node_json("gpu-1"), node_json("gpu-2"), pod_json("a", 11000),
                       pod_json("b", 11000), pod_json("c", 11000)});
  KubeReplica replica(cluster);
  ASSERT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;
  ASSERT_TRUE(eventually_for(20s, [&] { return cluster.server->open_watches() == 3; }));
  cluster.server->fail_next("WATCH", "/", 1 << 30, 503);
  cluster.server->drop_watches();
  ASSERT_TRUE(eventually_for(20s, [&] { return cluster.server->open_watches() == 0; }));

  ASSERT_EQ(replica.filter("a", {"gpu-1"}).kind, Kind::kChosen);
  const model::Pod first = cluster.pod("a");  // what the lagging watch will deliver
  ASSERT_EQ(replica.filter("a", {"gpu-2"}).kind, Kind::kChosen);
  // The watch catches up with the first patch only (the source is quiet: its watches fail,
  // so the test delivers the event as the source's dispatcher would).
  replica.scheduler->on_pod(state::EventType::kModified, first);
  ASSERT_EQ(replica.filter("b", {"gpu-2"}).kind, Kind::kChosen);
  auto r = replica.filter("c", {"gpu-2"});
  EXPECT_EQ(r.kind, Kind::kNoFit) << "c placed on " << r.node << " although a and b fill it";

  cluster.server->clear_failures();
  EXPECT_TRUE(pods_match_store(replica));
}

TEST(LiveKube, AReservationForAPodTheSourceNeverSawIsReleasedWhenThePodIsGone) {
  // A pod created, filtered and deleted while the watches are down, and never bound (another
  // kube-scheduler plugin rejected it after our filter). The source never knew the pod, so
  // its relist has no delete to report, and no bind comes to find it gone.
  KubeCluster cluster({node_json("gpu-1"), testing::quota_json("default", 100000)});
  LiveOptions o;
  o.register_interval = 100ms;
  KubeReplica replica(cluster, o);
  ASSERT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;
  ASSERT_TRUE(eventually_for(20s, [&] { return cluster.server->open_watches() == 3; }));
  cluster.server->fail_next("WATCH", "/", 1 << 30, 503);
  cluster.server->drop_watches();
  ASSERT_TRUE(eventually_for(20s, [&] { return cluster.server->open_watches() == 0; }));
  cluster.create(state::Kind::kPod, pod_json("ghost", 11000));
  ASSERT_EQ(replica.filter("ghost", {"gpu-1"}).kind, Kind::kChosen);
  ASSERT_TRUE(cluster.store.remove(state::Kind::kPod, "default", "ghost"));
  cluster.store.compact();
  cluster.server->clear_failures();
  ASSERT_TRUE(eventually_for(20s, [&] { return cluster.server->open_watches() == 3; }));
  EXPECT_TRUE(pods_match_store(replica, 5s));
  EXPECT_EQ(replica.quota_used("default"), 0);
}

// ---- 4. Patch conflicts and failures ------------------------------------------------------

TEST(LiveKube, AFailedAllocationPatchRollsTheReservationBack) {
  KubeCluster cluster({node_json("gpu-1"), testing::quota_json("default", 100000),
                       pod_json("p1", 3000), pod_json("p2", 3000), pod_json("p3", 3000)});
  KubeReplica replica(cluster);
  ASSERT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;
  const std::string pods = "/api/v1/namespaces/default/pods/";
  auto& server = *cluster.server;

  // 409: not retried, the filter fails and leaves nothing behind.
  server.fail_next("PATCH", pods, 1, 409);
  auto r = replica.filter("p1", {"gpu-1"});
  ASSERT_EQ(r.kind, Kind::kError) << r.node;
  EXPECT_TRUE(r.error.starts_with("internal: patching the pod's allocation annotations: "))
      << r.error;
  EXPECT_NE(r.error.find("409"), std::string::npos) << r.error;
  EXPECT_EQ(server.request_count("PATCH", pods + "p1"), 1);
  EXPECT_EQ(replica.scheduler->pods().size(), 0u);
  EXPECT_EQ(replica.quota_used("default"), 0);
  EXPECT_EQ(cluster.pod_annotation("p1", "hami.io/vgpu-node"), "");
  // The next filter succeeds.
  ASSERT_EQ(replica.filter("p1", {"gpu-1"}).kind, Kind::kChosen);
  EXPECT_EQ(replica.quota_used("default"), 3000);
  EXPECT_EQ(cluster.pod_annotation("p1", "hami.io/vgpu-node"), "gpu-1");

  // One 500: the source's write retry absorbs it.
  server.fail_next("PATCH", pods, 1, 500);
  ASSERT_EQ(replica.filter("p2", {"gpu-1"}).kind, Kind::kChosen);
  EXPECT_EQ(server.request_count("PATCH", pods + "p2"), 2);
  EXPECT_EQ(replica.quota_used("default"), 6000);

  // 500 on every attempt: the filter fails and rolls back.
  server.fail_next("PATCH", pods, 5, 500);
  r = replica.filter("p3", {"gpu-1"});
  ASSERT_EQ(r.kind, Kind::kError) << r.node;
  EXPECT_TRUE(r.error.starts_with("internal: patching the pod's allocation annotations: "))
      << r.error;
  EXPECT_NE(r.error.find("500"), std::string::npos) << r.error;
  EXPECT_EQ(server.request_count("PATCH", pods + "p3"), 5);
  EXPECT_EQ(replica.scheduler->pods().size(), 2u);
  EXPECT_EQ(replica.quota_used("default"), 6000);
  EXPECT_EQ(cluster.pod_annotation("p3", "hami.io/vgpu-node"), "");
  ASSERT_EQ(replica.filter("p3", {"gpu-1"}).kind, Kind::kChosen);
  EXPECT_EQ(replica.quota_used("default"), 9000);
  EXPECT_TRUE(pods_match_store(replica));
}

TEST(LiveKube, ANodeLockConflictIsRetriedAndTheBindSucceeds) {
  KubeCluster cluster({node_json("gpu-1"), pod_json("p1", 3000)});
  KubeReplica replica(cluster);
  ASSERT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;
  // The registration pass is done with the node (its handshake request is in).
  ASSERT_TRUE(
      cluster.node_annotation("gpu-1", "hami.io/node-handshake").starts_with("Requesting_"));
  ASSERT_EQ(replica.filter("p1", {"gpu-1"}).kind, Kind::kChosen);
  const std::string node_path = "/api/v1/nodes/gpu-1";
  const int before = cluster.server->request_count("PATCH", node_path);
  cluster.server->fail_next("PATCH", node_path, 1, 409);
  EXPECT_EQ(replica.bind("p1", "gpu-1"), "");
  EXPECT_EQ(cluster.server->request_count("PATCH", node_path) - before, 2);
  EXPECT_TRUE(cluster.node_annotation("gpu-1", "hami.io/mutex.lock").ends_with(",default,p1"));
  EXPECT_EQ(cluster.pod("p1").spec.node_name, "gpu-1");
  EXPECT_EQ(cluster.pod_annotation("p1", "hami.io/bind-phase"), "allocating");
  EXPECT_TRUE(pods_match_store(replica));
}

TEST(LiveKube, AFailedBindingReleasesOnlyALockThisBindSet) {
  KubeCluster cluster({node_json("gpu-1"), pod_json("p1", 3000), pod_json("p2", 3000)});
  KubeReplica replica(cluster);
  ASSERT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;
  ASSERT_EQ(replica.filter("p1", {"gpu-1"}).kind, Kind::kChosen);
  const std::string binding = "/api/v1/namespaces/default/pods/p1/binding";
  auto set_lock = [&](const std::string& value) {
    ASSERT_TRUE(cluster.store.merge_patch(
        state::Kind::kNode, "", "gpu-1",
        R"({"metadata":{"annotations":{"hami.io/mutex.lock":)" + value + "}}}"));
  };

  // The lock is already p1's (an earlier bind call), the pod is not bound yet, and this
  // call's Binding fails: the lock this call did not set stays.
  const std::string lock =
      go::format_rfc3339_local(std::chrono::system_clock::now()) + ",default,p1";
  set_lock(testing::json_string(lock));
  cluster.server->fail_next("POST", binding, 1, 409);
  std::string err = replica.bind("p1", "gpu-1");
  EXPECT_TRUE(err.starts_with("internal: ")) << err;
  EXPECT_NE(err.find("409"), std::string::npos) << err;
  EXPECT_EQ(cluster.node_annotation("gpu-1", "hami.io/mutex.lock"), lock);
  EXPECT_TRUE(cluster.pod("p1").spec.node_name.empty());
  ASSERT_EQ(replica.filter("p2", {"gpu-1"}).kind, Kind::kChosen);
  EXPECT_EQ(replica.bind("p2", "gpu-1"),
            "not ready: node gpu-1 has been locked within 5m0s: node lock contention");
  EXPECT_EQ(cluster.node_annotation("gpu-1", "hami.io/mutex.lock"), lock);

  // A lock this call set is released when its Binding fails (HAMi's cleanup).
  set_lock("null");
  cluster.server->fail_next("POST", binding, 1, 409);
  err = replica.bind("p1", "gpu-1");
  EXPECT_TRUE(err.starts_with("internal: ")) << err;
  EXPECT_EQ(cluster.node_annotation("gpu-1", "hami.io/mutex.lock"), "");
  EXPECT_TRUE(cluster.pod("p1").spec.node_name.empty());

  // kube-scheduler's retry binds, and the lock stays for the device plugin.
  EXPECT_EQ(replica.bind("p1", "gpu-1"), "");
  EXPECT_EQ(cluster.pod("p1").spec.node_name, "gpu-1");
  EXPECT_TRUE(cluster.node_annotation("gpu-1", "hami.io/mutex.lock").ends_with(",default,p1"));
  EXPECT_TRUE(pods_match_store(replica));
}

// Two /bind calls for one pod at once (kube-scheduler's retry racing its first call, or a
// hostile client). Exactly one binds, and the node lock stays as HAMi leaves it after a
// successful bind: held, the pod's, for the device plugin to release. The losing call never
// releases it (with the lock gone, the next pod could bind to the node before the plugin
// ran), so another pod meets lock contention until the plugin is done. Rounds, because which
// call wins is up to the threads.
TEST(LiveKube, TwoSimultaneousBindsOfOnePodKeepTheWinnersLock) {
  constexpr int kRounds = 12;
  std::vector<std::string> objects = {node_json("gpu-1"), pod_json("other", 1000)};
  for (int i = 0; i < kRounds; ++i) objects.push_back(pod_json(fmt::format("p{}", i), 1000));
  KubeCluster cluster(objects);
  KubeReplica replica(cluster);
  ASSERT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;
  const std::string lock_key = "hami.io/mutex.lock";
  for (int i = 0; i < kRounds; ++i) {
    SCOPED_TRACE("round " + std::to_string(i));
    const std::string name = fmt::format("p{}", i);
    ASSERT_EQ(replica.filter(name, {"gpu-1"}).kind, Kind::kChosen);
    // The first bind-phase PATCH fails once and is retried: the call that sends it (usually
    // the one that set the lock) is overtaken by the other when they run together.
    cluster.server->fail_next("PATCH", "/api/v1/namespaces/default/pods/" + name, 1, 500);
    std::array<std::string, 2> results;
    std::latch start(2);
    std::vector<std::thread> binds;
    for (size_t t = 0; t < results.size(); ++t) {
      binds.emplace_back([&, t] {
        start.arrive_and_wait();
        results[t] = replica.bind(name, "gpu-1");
      });
    }
    for (auto& t : binds) t.join();
    EXPECT_EQ(std::count(results.begin(), results.end(), ""), 1)
        << "'" << results[0] << "' and '" << results[1] << "'";
    // The other is told to come back (it ran while the first did) or that the pod is bound.
    const std::string& loser = results[0].empty() ? results[1] : results[0];
    EXPECT_TRUE(loser == "not ready: another /bind of pod default/" + name + " is in progress" ||
                loser == "invalid request: pod default/" + name + " is already bound to node gpu-1")
        << loser;
    EXPECT_EQ(cluster.pod(name).spec.node_name, "gpu-1");
    EXPECT_EQ(cluster.pod_annotation(name, "hami.io/bind-phase"), "allocating");
    const std::string lock = cluster.node_annotation("gpu-1", lock_key);
    EXPECT_TRUE(lock.ends_with(",default," + name)) << "lock: '" << lock << "'";
    // Held: another pod cannot bind to the node before the device plugin ran.
    ASSERT_EQ(replica.filter("other", {"gpu-1"}).kind, Kind::kChosen);
    EXPECT_EQ(replica.bind("other", "gpu-1"),
              "not ready: node gpu-1 has been locked within 5m0s: node lock contention");
    EXPECT_EQ(cluster.node_annotation("gpu-1", lock_key), lock);
    // The device plugin's part: Allocate done, lock released.
    ASSERT_TRUE(cluster.store.merge_patch(
        state::Kind::kPod, "default", name,
        R"({"metadata":{"annotations":{"hami.io/bind-phase":"success"}}})"));
    ASSERT_TRUE(
        cluster.store.merge_patch(state::Kind::kNode, "", "gpu-1",
                                  R"({"metadata":{"annotations":{")" + lock_key + R"(":null}}})"));
  }
  EXPECT_TRUE(testing::no_device_overcommitted(cluster, replica.registry));
  EXPECT_TRUE(pods_match_store(replica));
}

// ---- 5. A pod deleted between filter and bind ---------------------------------------------

TEST(LiveKube, APodDeletedBetweenFilterAndBindLeavesNoReservationAndNoLock) {
  KubeCluster cluster({node_json("gpu-1"), testing::quota_json("default", 100000),
                       pod_json("p1", 11000), pod_json("p2", 11000)});
  KubeReplica replica(cluster);
  ASSERT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;

  // The watch saw the filter's patch before the delete.
  ASSERT_EQ(replica.filter("p1", {"gpu-1"}).kind, Kind::kChosen);
  ASSERT_TRUE(testing::pods_delivered(replica));
  std::string uid = cluster.pod("p1").metadata.uid;
  ASSERT_TRUE(cluster.store.remove(state::Kind::kPod, "default", "p1"));
  EXPECT_EQ(replica.scheduler->bind({"p1", "default", uid, "gpu-1"}),
            "invalid request: pod \"default/p1\" not found");
  ASSERT_TRUE(testing::pods_delivered(replica));    // the delete too
  EXPECT_EQ(replica.scheduler->pods().size(), 1u);  // the marker only
  EXPECT_EQ(replica.quota_used("default"), 0);
  EXPECT_EQ(cluster.node_annotation("gpu-1", "hami.io/mutex.lock"), "");

  // Deleted right after the filter, before the watch could tell.
  ASSERT_TRUE(eventually_for(20s, [&] { return cluster.server->open_watches() == 3; }));
  cluster.server->fail_next("WATCH", "/", 1 << 30, 503);
  cluster.server->drop_watches();
  ASSERT_TRUE(eventually_for(20s, [&] { return cluster.server->open_watches() == 0; }));
  ASSERT_EQ(replica.filter("p2", {"gpu-1"}).kind, Kind::kChosen);
  uid = cluster.pod("p2").metadata.uid;
  ASSERT_TRUE(cluster.store.remove(state::Kind::kPod, "default", "p2"));
  EXPECT_EQ(replica.scheduler->bind({"p2", "default", uid, "gpu-1"}),
            "invalid request: pod \"default/p2\" not found");
  EXPECT_EQ(replica.scheduler->pods().size(), 1u);  // the marker only
  EXPECT_EQ(replica.quota_used("default"), 0);
  cluster.server->clear_failures();
  EXPECT_TRUE(pods_match_store(replica));
  EXPECT_EQ(replica.quota_used("default"), 0);
  EXPECT_EQ(cluster.node_annotation("gpu-1", "hami.io/mutex.lock"), "");
}

// ---- 6. A node that loses its registration ------------------------------------------------

TEST(LiveKube, ANodeThatLosesItsRegistrationIsUnregisteredAndItsPodsStillCount) {
  KubeCluster cluster({node_json("gpu-1"), node_json("gpu-2"), pod_json("p1", 11000),
                       pod_json("p2", 11000), pod_json("p3", 11000), pod_json("p4", 1000)});
  LiveOptions o;
  o.register_interval = std::chrono::hours(1);  // passes only when told
  KubeReplica replica(cluster, o);
  ASSERT_TRUE(replica.wait_ready()) << replica.scheduler->readiness().detail;
  testing::DevicePluginSim plugin(cluster);
  ASSERT_EQ(replica.place("p1", {"gpu-1"}), "");
  ASSERT_EQ(replica.place("p2", {"gpu-1"}), "");

  // The device plugin dies: no GPUs advertised, the handshake request goes unanswered.
  ASSERT_TRUE(cluster.store.merge_patch(
      state::Kind::kNode, "", "gpu-1",
      R"({"metadata":{"annotations":{"hami.io/node-handshake":"Requesting_)" +
          stale_handshake_time() + R"("}},"status":{"allocatable":{"nvidia.com/gpu":"0"}}})"));
  ASSERT_TRUE(eventually_for(20s, [&] {
    replica.scheduler->register_now();
    return !replica.scheduler->nodes().snapshot()->contains("gpu-1");
  }));
  auto r = replica.filter("p4", {"gpu-1"});
  ASSERT_EQ(r.kind, Kind::kNoFit);
  EXPECT_EQ(r.failed_nodes.at("gpu-1"), "node unregistered");
  r = replica.filter("p4", {"gpu-1", "gpu-2"});
  ASSERT_EQ(r.kind, Kind::kChosen);
  EXPECT_EQ(r.node, "gpu-2");
  EXPECT_EQ(cluster.node_annotation("gpu-1", "hami.io/node-handshake"), "");  // cleaned up
  // Its pods keep their allocations.
  EXPECT_TRUE(pods_match_store(replica));
  EXPECT_EQ(replica.scheduler->pods().size(), 3u);

  // The plugin comes back; p1 and p2 still fill the node.
  ASSERT_TRUE(cluster.store.merge_patch(state::Kind::kNode, "", "gpu-1",
                                        R"({"status":{"allocatable":{"nvidia.com/gpu":"20"}}})"));
  ASSERT_TRUE(eventually_for(20s, [&] {
    replica.scheduler->register_now();
    return replica.scheduler->nodes().snapshot()->contains("gpu-1");
  }));
  EXPECT_TRUE(
      cluster.node_annotation("gpu-1", "hami.io/node-handshake").starts_with("Requesting_"));
  r = replica.filter("p3", {"gpu-1"});
  ASSERT_EQ(r.kind, Kind::kNoFit) << r.node << r.error;
  EXPECT_EQ(r.failed_nodes.at("gpu-1"), "2/2 CardInsufficientMemory");
  EXPECT_EQ(replica.place("p3", {"gpu-1", "gpu-2"}), "");
  EXPECT_EQ(cluster.pod("p3").spec.node_name, "gpu-2");
  EXPECT_TRUE(testing::no_device_overcommitted(cluster, replica.registry));
  EXPECT_TRUE(pods_match_store(replica));
}

}  // namespace
}  // namespace hamisim::live
