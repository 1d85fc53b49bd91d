// The pod, quota and node managers and the leader tracker, driven by events directly.

#include <gtest/gtest.h>

#include <algorithm>

#include "device/catalog/device_config.h"
#include "live/leader.h"
#include "live/node_manager.h"
#include "live/pod_manager.h"
#include "live/quota_manager.h"
#include "live_fixtures.h"
#include "model/decode.h"

namespace hamisim::live {
namespace {

using state::EventType;

model::Pod placed_pod(const std::string& name, const std::string& uid, const std::string& node,
                      const std::string& allocated, const std::string& ns = "default") {
  auto p = model::decode_pod_json(testing::pod_json(name, 1000, 0, ns));
  EXPECT_TRUE(p) << p.error().message;
  p->metadata.uid = uid;
  p->metadata.annotations["hami.io/vgpu-node"] = node;
  p->metadata.annotations["hami.io/vgpu-devices-allocated"] = allocated;
  return *p;
}

model::ResourceQuota quota(const std::string& name, const std::string& ns, int64_t gpumem) {
  model::ResourceQuota q;
  q.metadata.name = name;
  q.metadata.namespace_ = ns;
  q.spec.hard["limits.nvidia.com/gpumem"] = model::Quantity::from_int(gpumem);
  return q;
}

struct Managers {
  device::DeviceRegistry registry = device::build_registry({});
  QuotaManager quota{registry};
  PodManager pods{registry, quota};
  std::vector<std::string> bad;
  Managers() {
    pods.on_bad_pod = [this](const model::Pod& p, const std::string& e) {
      bad.push_back(p.metadata.name + ": " + e);
    };
  }
  int64_t node_mem(const std::string& node, const std::string& uuid) {
    fit::DeviceDescription inv;
    inv.devices.resize(1);
    inv.devices[0].id = uuid;
    inv.devices[0].count = 10;
    inv.devices[0].devmem = 100000;
    inv.devices[0].devcore = 100;
    inv.devices[0].type = "NVIDIA";
    inv.devices[0].device_vendor = "NVIDIA";
    fit::NodeUsage usage = fit::fresh_usage(inv);
    pods.add_node_usage(node, usage);
    return usage.devices[0].usedmem;
  }
};

TEST(PodManager, CountsPlacedPodsByTheirAnnotationNode) {
  Managers m;
  m.pods.on_pod(EventType::kAdded, placed_pod("a", "u1", "n1", "GPU-0,NVIDIA,3000,10:;"));
  m.pods.on_pod(EventType::kAdded, placed_pod("b", "u2", "n1", "GPU-0,NVIDIA,2000,10:;"));
  m.pods.on_pod(EventType::kAdded, placed_pod("c", "u3", "n2", "GPU-0,NVIDIA,1000,10:;"));
  EXPECT_EQ(m.node_mem("n1", "GPU-0"), 5000);
  EXPECT_EQ(m.node_mem("n2", "GPU-0"), 1000);
  // Moved by a later filter (annotation changed): counted on the new node only.
  m.pods.on_pod(EventType::kModified, placed_pod("c", "u3", "n1", "GPU-0,NVIDIA,1000,10:;"));
  EXPECT_EQ(m.node_mem("n1", "GPU-0"), 6000);
  EXPECT_EQ(m.node_mem("n2", "GPU-0"), 0);
}

// The live filter keeps a node's usage while the node's version slot holds the version the
// usage was built at: every change of the node's pods must move it, and only that node's.
TEST(PodManager, EveryChangeOfANodesPodsMovesItsVersionSlot) {
  Managers m;
  const std::atomic<uint64_t>& n1 = m.pods.version_slot("n1");
  const std::atomic<uint64_t>& n2 = m.pods.version_slot("n2");
  EXPECT_EQ(n1.load(), 0u);  // taken before any pod: the same slot moves later
  std::vector<uint64_t> seen{n1.load()};
  auto moved = [&] {
    const uint64_t v = n1.load();
    const bool fresh = std::find(seen.begin(), seen.end(), v) == seen.end();
    seen.push_back(v);
    return fresh;
  };
  const uint64_t other = n2.load();
  m.pods.on_pod(EventType::kAdded, placed_pod("a", "u1", "n1", "GPU-0,NVIDIA,3000,10:;"));
  EXPECT_TRUE(moved());
  m.pods.on_pod(EventType::kModified, placed_pod("a", "u1", "n1", "GPU-0,NVIDIA,2000,10:;"));
  EXPECT_TRUE(moved());
  m.pods.on_pod(EventType::kModified, placed_pod("a", "u1", "n1", "GPU-0,NVIDIA,2000,10:;"));
  EXPECT_FALSE(moved());  // the same annotations: nothing changed
  EXPECT_EQ(n2.load(), other);
  m.pods.on_pod(EventType::kModified, placed_pod("a", "u1", "n2", "GPU-0,NVIDIA,2000,10:;"));
  EXPECT_TRUE(moved());  // moved away
  EXPECT_NE(n2.load(), other);
  m.pods.on_pod(EventType::kAdded, placed_pod("b", "u2", "n1", "GPU-0,NVIDIA,1000,10:;"));
  EXPECT_TRUE(moved());
  EXPECT_TRUE(m.pods.evict("u2"));
  EXPECT_TRUE(moved());  // emptied: never back to a version seen before
  EXPECT_EQ(&m.pods.version_slot("n1"), &n1);
}

TEST(PodManager, IgnoresUnplacedAndUndecodablePods) {
  Managers m;
  auto unplaced = model::decode_pod_json(testing::pod_json("x", 1000));
  m.pods.on_pod(EventType::kAdded, *unplaced);
  m.pods.on_pod(EventType::kAdded, placed_pod("bad", "u9", "n1", "GPU-0,NVIDIA,notanumber,0:;"));
  EXPECT_EQ(m.pods.size(), 0u);
  ASSERT_EQ(m.bad.size(), 1u);
  EXPECT_NE(m.bad[0].find("hami.io/vgpu-devices-allocated"), std::string::npos) << m.bad[0];
}

// A pod's init containers stop counting once every one of them succeeded, matched by name; the
// manager decodes the pod again whenever that answer changes. It used to look only at the
// statuses present, so a first status succeeding made it "done" early and the second one
// succeeding later changed nothing it looked at: the init containers' devices stayed counted.
TEST(PodManager, InitContainersStopCountingOnceEveryOneSucceeded) {
  Managers m;
  model::Pod p = placed_pod("a", "u1", "n1",
                            "GPU-0,NVIDIA,5000,10:;GPU-0,NVIDIA,5000,10:;GPU-0,NVIDIA,1000,10:;");
  p.spec.init_containers.resize(2);
  p.spec.init_containers[0].name = "init-a";
  p.spec.init_containers[1].name = "init-b";
  m.pods.on_pod(EventType::kAdded, p);
  EXPECT_EQ(m.node_mem("n1", "GPU-0"), 5000);  // the init peak
  auto succeeded = [](std::string name) {
    model::ContainerStatus s;
    s.name = std::move(name);
    s.terminated.emplace();
    s.terminated->exit_code = 0;
    return s;
  };
  p.status.init_container_statuses = {succeeded("init-a")};
  m.pods.on_pod(EventType::kModified, p);
  EXPECT_EQ(m.node_mem("n1", "GPU-0"), 5000);  // init-b has not run yet
  p.status.init_container_statuses.push_back(succeeded("init-b"));
  m.pods.on_pod(EventType::kModified, p);
  EXPECT_EQ(m.node_mem("n1", "GPU-0"), 1000);  // the app container alone
}

TEST(PodManager, TerminalPodsLeaveTerminatingPodsStay) {
  Managers m;
  auto p = placed_pod("a", "u1", "n1", "GPU-0,NVIDIA,3000,10:;");
  m.pods.on_pod(EventType::kAdded, p);
  auto terminating = p;
  terminating.metadata.deletion_timestamp = "2026-12-03T10:00:00Z";
  terminating.metadata.annotations["hami.io/vgpu-devices-allocated"] = "";
  m.pods.on_pod(EventType::kModified, terminating);
  EXPECT_EQ(m.node_mem("n1", "GPU-0"), 3000);  // still holds its memory until gone
  // A terminating pod seen for the first time is not added.
  auto other = placed_pod("b", "u2", "n1", "GPU-0,NVIDIA,1000,0:;");
  other.metadata.deletion_timestamp = "2026-12-03T10:00:00Z";
  m.pods.on_pod(EventType::kAdded, other);
  EXPECT_EQ(m.pods.size(), 1u);
  auto done = p;
  done.status.phase = "Succeeded";
  m.pods.on_pod(EventType::kModified, done);
  EXPECT_EQ(m.pods.size(), 0u);
  EXPECT_EQ(m.node_mem("n1", "GPU-0"), 0);
}

TEST(PodManager, QuotaUsageFollowsReservationsEvictionsAndDeletes) {
  Managers m;
  m.quota.on_quota(EventType::kAdded, quota("q", "team", 5000));
  auto a = placed_pod("a", "u1", "n1", "GPU-0,NVIDIA,3000,0:;", "team");
  ASSERT_TRUE(m.pods.reserve(a));
  EXPECT_TRUE(m.quota.fits("team", "NVIDIA", 2000, 0));
  EXPECT_FALSE(m.quota.fits("team", "NVIDIA", 2001, 0));
  // The reservation's own event changes nothing; a re-reservation replaces it.
  m.pods.on_pod(EventType::kModified, a);
  EXPECT_FALSE(m.quota.fits("team", "NVIDIA", 2001, 0));
  EXPECT_TRUE(m.pods.evict("u1"));
  EXPECT_FALSE(m.pods.evict("u1"));
  EXPECT_TRUE(m.quota.fits("team", "NVIDIA", 5000, 0));
  m.pods.on_pod(EventType::kAdded, a);
  m.pods.on_pod(EventType::kDeleted, a);
  EXPECT_TRUE(m.quota.fits("team", "NVIDIA", 5000, 0));
}

TEST(PodManager, AReservationStandsUntilItsOwnEventArrives) {
  Managers m;
  auto first = placed_pod("a", "u1", "n1", "GPU-0,NVIDIA,3000,0:;");
  auto second = placed_pod("a", "u1", "n2", "GPU-0,NVIDIA,3000,0:;");
  ASSERT_TRUE(m.pods.reserve(first));
  m.pods.evict("u1");                   // filtered again...
  ASSERT_TRUE(m.pods.reserve(second));  // ...onto n2
  // The first filter's patch comes back late: older than the reservation, ignored.
  m.pods.on_pod(EventType::kModified, first);
  EXPECT_EQ(m.node_mem("n1", "GPU-0"), 0);
  EXPECT_EQ(m.node_mem("n2", "GPU-0"), 3000);
  // So is an event from before any filter.
  auto unplaced = model::decode_pod_json(testing::pod_json("a", 1000));
  unplaced->metadata.uid = "u1";
  m.pods.on_pod(EventType::kModified, *unplaced);
  EXPECT_EQ(m.node_mem("n2", "GPU-0"), 3000);
  // Its own patch confirms it; from then on every change is decoded again.
  m.pods.on_pod(EventType::kModified, second);
  m.pods.on_pod(EventType::kModified, first);
  EXPECT_EQ(m.node_mem("n1", "GPU-0"), 3000);
  EXPECT_EQ(m.node_mem("n2", "GPU-0"), 0);
}

TEST(PodManager, ADeleteRemovesTheEntryWhateverTheLastSeenObjectSays) {
  Managers m;
  // Reserved by a filter; the source only ever saw the pod before the filter's patch.
  ASSERT_TRUE(m.pods.reserve(placed_pod("a", "u1", "n1", "GPU-0,NVIDIA,3000,0:;")));
  auto seen = model::decode_pod_json(testing::pod_json("a", 1000));
  seen->metadata.uid = "u1";
  m.pods.on_pod(EventType::kDeleted, *seen);
  EXPECT_EQ(m.pods.size(), 0u);
  EXPECT_EQ(m.node_mem("n1", "GPU-0"), 0);
}

TEST(QuotaManager, UpdatesReplaceLimitsAndDeletesClearThem) {
  Managers m;
  m.quota.on_quota(EventType::kAdded, quota("q", "team", 1000));
  EXPECT_FALSE(m.quota.fits("team", "NVIDIA", 1001, 0));
  m.quota.on_quota(EventType::kModified, quota("q", "team", 4000));
  EXPECT_TRUE(m.quota.fits("team", "NVIDIA", 4000, 0));
  EXPECT_FALSE(m.quota.fits("team", "NVIDIA", 4001, 0));
  m.quota.on_quota(EventType::kModified, quota("q", "team", 0));  // explicit zero blocks
  EXPECT_FALSE(m.quota.fits("team", "NVIDIA", 1, 0));
  m.quota.on_quota(EventType::kDeleted, quota("q", "team", 0));
  EXPECT_TRUE(m.quota.fits("team", "NVIDIA", 1 << 30, 0));
  EXPECT_TRUE(m.quota.fits("other", "NVIDIA", 1 << 30, 0));
}

device::DeviceInfo device_of(const std::string& id, const std::string& vendor) {
  device::DeviceInfo d;
  d.id = id;
  d.device_vendor = vendor;
  d.count = 1;
  return d;
}

TEST(NodeManager, SnapshotsAreImmutableAndVendorsIndependent) {
  NodeManager nodes;
  auto empty = nodes.snapshot();
  nodes.set_vendor_devices("n1", "NVIDIA", {device_of("GPU-0", "NVIDIA")}, {});
  nodes.set_vendor_devices("n1", "Other", {device_of("X-0", "Other")}, {});
  EXPECT_TRUE(empty->empty());  // an old snapshot never changes
  auto both = nodes.snapshot();
  EXPECT_EQ(both->at("n1")->description.devices.size(), 2u);
  nodes.set_vendor_devices("n1", "NVIDIA",
                           {device_of("GPU-0", "NVIDIA"), device_of("GPU-1", "NVIDIA")}, {});
  EXPECT_EQ(nodes.snapshot()->at("n1")->description.devices.size(), 3u);
  EXPECT_EQ(both->at("n1")->description.devices.size(), 2u);
  nodes.set_cordon("n1", {"GPU-1"});
  EXPECT_TRUE(nodes.snapshot()->at("n1")->description.cordoned.contains("GPU-1"));
  nodes.remove_vendor("n1", "NVIDIA");
  EXPECT_TRUE(nodes.has_vendor("n1", "Other"));
  EXPECT_FALSE(nodes.has_vendor("n1", "NVIDIA"));
  nodes.remove_vendor("n1", "Other");
  EXPECT_FALSE(nodes.snapshot()->contains("n1"));
  nodes.set_cordon("n1", {"GPU-1"});  // a cordon alone never creates a node
  EXPECT_FALSE(nodes.snapshot()->contains("n1"));
}

state::Lease lease(const std::string& holder, int64_t seconds = 15) {
  return state::Lease{"kube-system", "kube-scheduler", "1", holder, seconds};
}

TEST(LeaderTracker, FollowsTheLeaseByHostnamePrefixAndExpiry) {
  LeaderTracker t({.enabled = true,
                   .lease_namespace = "kube-system",
                   .lease_name = "kube-scheduler",
                   .identity = "sched-0"});
  const auto t0 = LeaderTracker::Clock::time_point{} + std::chrono::hours(1);
  EXPECT_FALSE(t.is_leader(t0));
  EXPECT_EQ(t.on_lease(EventType::kAdded, lease("sched-0_abc"), t0), 1);
  EXPECT_TRUE(t.is_leader(t0 + std::chrono::seconds(14)));
  EXPECT_FALSE(t.is_leader(t0 + std::chrono::seconds(15)));  // not renewed: expired
  EXPECT_EQ(t.on_lease(EventType::kModified, lease("sched-0_abc"), t0 + std::chrono::seconds(10)),
            0);
  EXPECT_EQ(t.on_lease(EventType::kModified, lease("sched-1_def"), t0 + std::chrono::seconds(11)),
            -1);
  EXPECT_FALSE(t.is_leader(t0 + std::chrono::seconds(11)));
  // Another Lease is not ours to watch.
  state::Lease other = lease("sched-0_abc");
  other.name = "something-else";
  EXPECT_EQ(t.on_lease(EventType::kAdded, other, t0), 0);
  EXPECT_EQ(t.on_lease(EventType::kModified, lease("sched-0_xyz"), t0 + std::chrono::seconds(12)),
            1);
  EXPECT_EQ(t.on_lease(EventType::kDeleted, lease("sched-0_xyz"), t0 + std::chrono::seconds(13)),
            -1);
  EXPECT_FALSE(t.is_leader(t0 + std::chrono::seconds(13)));
}

TEST(LeaderTracker, DisabledMeansAlwaysLeader) {
  LeaderTracker t({});
  EXPECT_TRUE(t.is_leader(LeaderTracker::Clock::now()));
}

}  // namespace
}  // namespace hamisim::live
