// HAMi's node lock against the snapshot source's API semantics.

#include "live/node_lock.h"
#include "go/rfc3339.h"

#include <gtest/gtest.h>

#include "live_fixtures.h"

namespace hamisim::live {
namespace {

using testing::node_json;
using testing::pod_json;

struct LockHarness {
  std::unique_ptr<state::SnapshotSource> source;
  WallTime now = std::chrono::system_clock::from_time_t(1777600000);
  std::unique_ptr<NodeLock> lock;
  int sleeps = 0;

  explicit LockHarness(std::vector<std::string> objects) {
    auto loaded = state::SnapshotSource::load(
        {testing::write_temp("c.json", testing::list_json(objects))}, {});
    if (!loaded) throw std::runtime_error(loaded.error().message);
    source = std::move(loaded).value();
    lock = std::make_unique<NodeLock>(*source, NodeLock::Options{
                                                   .timeout = std::chrono::minutes(5),
                                                   .now = [this] { return now; },
                                                   .sleep =
                                                       [this](auto) {
                                                         ++sleeps;
                                                         return true;
                                                       },
                                                   .jitter_seed = 7,
                                               });
  }
  std::string value() {
    auto n = source->get_node("n1");
    const std::string* v = model::find_annotation(n->metadata, "hami.io/mutex.lock");
    return v ? *v : "";
  }
  void set(const std::string& v) {
    ASSERT_TRUE(source->patch_node_annotations("n1", {{"hami.io/mutex.lock", v}}, ""));
  }
};

TEST(NodeLock, ParsesBothForms) {
  auto full = parse_node_lock("2026-05-01T10:00:00+08:00,default,pod1");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->namespace_, "default");
  EXPECT_EQ(full->pod, "pod1");
  auto legacy = parse_node_lock("2026-05-01T10:00:00Z");
  ASSERT_TRUE(legacy);
  EXPECT_EQ(legacy->pod, "");
  auto bad = parse_node_lock("2026-05-01T10:00:00Z,a");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "malformed lock annotation: expected 3 parts, got 2 from 2026-05-01T10:00:00Z,a");
  EXPECT_FALSE(parse_node_lock("yesterday,ns,p"));
}

TEST(NodeLock, TakesAFreeNodeAndIsReentrantForTheSamePod) {
  LockHarness h({node_json("n1"), pod_json("p1", 1)});
  ASSERT_TRUE(h.lock->lock("n1", "default", "p1").ok);
  EXPECT_EQ(h.value(), go::format_rfc3339_local(h.now) + ",default,p1");
  EXPECT_TRUE(h.lock->lock("n1", "default", "p1").ok);
}

TEST(NodeLock, SaysWhetherThisCallWroteTheLock) {
  LockHarness h({node_json("n1"), pod_json("p1", 1)});
  auto first = h.lock->lock("n1", "default", "p1");
  ASSERT_TRUE(first.ok);
  EXPECT_TRUE(first.wrote);
  // Found already ours: a failing bind must leave it for the device plugin.
  auto again = h.lock->lock("n1", "default", "p1");
  ASSERT_TRUE(again.ok);
  EXPECT_FALSE(again.wrote);
  EXPECT_TRUE(h.value().ends_with(",default,p1"));
  // Our own expired lock is taken anew.
  h.now += std::chrono::minutes(6);
  auto renewed = h.lock->lock("n1", "default", "p1");
  ASSERT_TRUE(renewed.ok);
  EXPECT_TRUE(renewed.wrote);
  EXPECT_EQ(h.value(), go::format_rfc3339_local(h.now) + ",default,p1");
}

TEST(NodeLock, ContentionWithALivePodOwner) {
  LockHarness h({node_json("n1"), pod_json("p1", 1), pod_json("p2", 1)});
  ASSERT_TRUE(h.lock->lock("n1", "default", "p1").ok);
  h.now += std::chrono::minutes(4);
  auto s = h.lock->lock("n1", "default", "p2");
  EXPECT_FALSE(s.ok);
  EXPECT_TRUE(s.contention);
  EXPECT_EQ(s.error, "node n1 has been locked within 5m0s: node lock contention");
  EXPECT_TRUE(h.value().ends_with(",default,p1"));
}

TEST(NodeLock, AnExpiredLockIsTakenOver) {
  LockHarness h({node_json("n1"), pod_json("p1", 1), pod_json("p2", 1)});
  ASSERT_TRUE(h.lock->lock("n1", "default", "p1").ok);
  h.now += std::chrono::minutes(6);
  ASSERT_TRUE(h.lock->lock("n1", "default", "p2").ok);
  EXPECT_TRUE(h.value().ends_with(",default,p2"));
}

TEST(NodeLock, ALegacyLockExpiresToo) {
  LockHarness h({node_json("n1"), pod_json("p2", 1)});
  h.set(go::format_rfc3339_local(h.now - std::chrono::minutes(1)));
  EXPECT_TRUE(h.lock->lock("n1", "default", "p2").contention);
  h.now += std::chrono::minutes(5);
  EXPECT_TRUE(h.lock->lock("n1", "default", "p2").ok);
}

TEST(NodeLock, ReleaseChecksTheOwner) {
  LockHarness h({node_json("n1"), pod_json("p1", 1)});
  ASSERT_TRUE(h.lock->lock("n1", "default", "p1").ok);
  EXPECT_TRUE(h.lock->release("n1", "default", "other").ok);  // not ours: left alone
  EXPECT_TRUE(h.value().ends_with(",default,p1"));
  EXPECT_TRUE(h.lock->release("n1", "default", "p1").ok);
  EXPECT_EQ(h.value(), "");
  EXPECT_TRUE(h.lock->release("n1", "default", "p1").ok);  // nothing to release
}

TEST(NodeLock, AMalformedLockIsAnError) {
  LockHarness h({node_json("n1")});
  h.set("garbage,x");
  auto s = h.lock->lock("n1", "default", "p1");
  EXPECT_FALSE(s.ok);
  EXPECT_FALSE(s.contention);
  EXPECT_NE(s.error.find("malformed lock annotation"), std::string::npos);
}

TEST(NodeLock, AMissingNodeIsAnError) {
  LockHarness h({node_json("n1")});
  auto s = h.lock->lock("ghost", "default", "p1");
  EXPECT_FALSE(s.ok);
  EXPECT_FALSE(s.contention);
  EXPECT_NE(s.error.find("ghost"), std::string::npos) << s.error;
}

}  // namespace
}  // namespace hamisim::live
