// KubeSource against the fake API server: sync, streaming, faults (watch drops, 410 after
// compaction), writes and events. After every fault the handler's view must equal the store.
#include "kube/kube_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "fake_apiserver.h"
#include "kube_test_support.h"
#include "state/object_store.h"

namespace hamisim::kube {
namespace {

using namespace std::chrono_literals;
using state::ApiCode;
using state::EventType;
using state::Kind;
using ::testing::HasSubstr;

using test_support::eventually;

// Keeps what the source delivered: name -> resourceVersion per kind, plus a log.
class RecordingHandler : public state::ClusterHandler {
 public:
  void on_node(EventType t, const model::Node& n) override {
    record(Kind::kNode, t, n.metadata.name, n.metadata.resource_version);
  }
  void on_pod(EventType t, const model::Pod& p) override {
    const std::string key = p.metadata.namespace_ + "/" + p.metadata.name;
    {
      std::lock_guard lock(mu_);
      (t == EventType::kDeleted ? deleted_uid_ : uid_)[key] = p.metadata.uid;
    }
    record(Kind::kPod, t, key, p.metadata.resource_version);
  }
  void on_quota(EventType t, const model::ResourceQuota& q) override {
    record(Kind::kResourceQuota, t, q.metadata.namespace_ + "/" + q.metadata.name,
           q.metadata.resource_version);
  }
  void on_lease(EventType t, const state::Lease& l) override {
    {
      std::lock_guard lock(mu_);
      last_holder_ = l.holder_identity;
    }
    record(Kind::kLease, t, l.namespace_ + "/" + l.name, l.resource_version);
  }
  void on_synced() override {
    enter();
    std::lock_guard lock(mu_);
    ++synced_;
    objects_at_sync_ = 0;
    for (const auto& [kind, m] : view_) objects_at_sync_ += m.size();
    leave();
  }

  int synced() {
    std::lock_guard lock(mu_);
    return synced_;
  }
  size_t objects_at_sync() {
    std::lock_guard lock(mu_);
    return objects_at_sync_;
  }
  std::map<std::string, std::string> view(Kind kind) {
    std::lock_guard lock(mu_);
    return view_[kind];
  }
  int count(Kind kind, EventType type, const std::string& key) {
    std::lock_guard lock(mu_);
    return int(std::count(log_.begin(), log_.end(), std::make_tuple(kind, type, key)));
  }
  std::string last_holder() {
    std::lock_guard lock(mu_);
    return last_holder_;
  }
  // The uid a pod was last added or modified with, and the one its deletion carried.
  std::string uid(const std::string& key) {
    std::lock_guard lock(mu_);
    return uid_[key];
  }
  std::string deleted_uid(const std::string& key) {
    std::lock_guard lock(mu_);
    return deleted_uid_[key];
  }
  bool overlapped() const { return overlapped_; }
  void forbid_calls() { forbidden_ = true; }
  bool called_when_forbidden() const { return called_when_forbidden_; }

 private:
  void enter() {
    if (in_call_.exchange(true)) overlapped_ = true;
    if (forbidden_) called_when_forbidden_ = true;
  }
  void leave() { in_call_ = false; }
  void record(Kind kind, EventType t, const std::string& key, const std::string& rv) {
    enter();
    {
      std::lock_guard lock(mu_);
      log_.emplace_back(kind, t, key);
      auto& m = view_[kind];
      if (t == EventType::kDeleted) {
        if (m.erase(key) == 0) inconsistent_ = true;
      } else {
        const bool present = m.count(key) != 0;
        if (present != (t == EventType::kModified)) inconsistent_ = true;
        m[key] = rv;
      }
    }
    leave();
  }

 public:
  bool inconsistent() {
    std::lock_guard lock(mu_);
    return inconsistent_;
  }

 private:
  std::mutex mu_;
  std::map<Kind, std::map<std::string, std::string>> view_;
  std::vector<std::tuple<Kind, EventType, std::string>> log_;
  int synced_ = 0;
  size_t objects_at_sync_ = 0;
  std::string last_holder_;
  std::map<std::string, std::string> uid_, deleted_uid_;
  bool inconsistent_ = false;
  std::atomic<bool> in_call_{false}, overlapped_{false}, forbidden_{false},
      called_when_forbidden_{false};
};

std::map<std::string, std::string> store_view(const state::ObjectStore& store, Kind kind,
                                              const std::string& only_name = {}) {
  std::map<std::string, std::string> out;
  for (const auto& o : store.list(kind).items) {
    if (!only_name.empty() && o.name != only_name) continue;
    out[o.namespace_.empty() ? o.name : o.namespace_ + "/" + o.name] =
        std::to_string(o.resource_version);
  }
  return out;
}

constexpr const char* kCluster = R"({"kind":"List","items":[
  {"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-1"}},
  {"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-2"}},
  {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"default"},"spec":{"containers":[{"name":"c"}]}},
  {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p2","namespace":"team"},"spec":{"containers":[{"name":"c"}]}},
  {"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q","namespace":"team"},"spec":{"hard":{"limits.nvidia.com/gpumem":"1000"}}},
  {"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kube-scheduler","namespace":"kube-system"},"spec":{"holderIdentity":"host-a_1","leaseDurationSeconds":15}},
  {"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"other","namespace":"kube-system"},"spec":{"holderIdentity":"x"}}
]})";

class KubeSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store.load(kCluster));
    testing::FakeApiServerOptions o;
    o.bookmark_interval = 50ms;
    server = std::make_unique<testing::FakeApiServer>(store, o);
    ASSERT_TRUE(server->start());
  }
  void TearDown() override {
    if (source) source->stop();
    EXPECT_FALSE(handler.overlapped()) << "handler calls overlapped";
    EXPECT_FALSE(handler.inconsistent()) << "an object's stream was inconsistent";
  }
  KubeSourceOptions options() {
    KubeSourceOptions o;
    o.scheduler_name = "hami-scheduler";
    o.lease_namespace = "kube-system";
    o.lease_name = "kube-scheduler";
    o.reconnect.initial = 10ms;
    o.reconnect.max_delay = 100ms;
    o.write_retry.initial = 5ms;
    o.write_retry.max_delay = 20ms;
    return o;
  }
  void start(KubeSourceOptions o, ClientOptions client = {}) {
    KubeConfig config;
    config.server = server->url();
    auto s = KubeSource::create(config, client, std::move(o));
    ASSERT_TRUE(s) << s.error().message;
    source = std::move(*s);
    source->start(handler);
    ASSERT_TRUE(eventually([&] { return handler.synced() == 1; }));
  }
  void start() { start(options()); }
  bool view_equals_store() {
    return handler.view(Kind::kNode) == store_view(store, Kind::kNode) &&
           handler.view(Kind::kPod) == store_view(store, Kind::kPod) &&
           handler.view(Kind::kResourceQuota) == store_view(store, Kind::kResourceQuota) &&
           handler.view(Kind::kLease) == store_view(store, Kind::kLease, "kube-scheduler");
  }

  state::ObjectStore store;
  std::unique_ptr<testing::FakeApiServer> server;
  RecordingHandler handler;
  std::unique_ptr<KubeSource> source;
};

TEST_F(KubeSourceTest, InitialSyncDeliversEverythingBeforeOnSynced) {
  start();
  EXPECT_EQ(handler.objects_at_sync(), 6u);  // 2 nodes, 2 pods, 1 quota, 1 lease
  EXPECT_TRUE(view_equals_store());
  EXPECT_TRUE(source->synced());
  EXPECT_EQ(handler.last_holder(), "host-a_1");
  EXPECT_EQ(handler.view(Kind::kLease).count("kube-system/other"), 0u);
  EXPECT_THAT(source->describe(), HasSubstr(server->url()));
}

TEST_F(KubeSourceTest, StreamsAddsModificationsAndDeletes) {
  start();
  ASSERT_TRUE(eventually([&] { return server->open_watches() == 4; }));
  ASSERT_TRUE(store.create(Kind::kNode, R"({"metadata":{"name":"gpu-3"}})"));
  ASSERT_TRUE(store.merge_patch(Kind::kPod, "default", "p1",
                                R"({"metadata":{"annotations":{"hami.io/vgpu-node":"gpu-1"}}})"));
  ASSERT_TRUE(store.remove(Kind::kResourceQuota, "team", "q"));
  ASSERT_TRUE(store.merge_patch(Kind::kLease, "kube-system", "kube-scheduler",
                                R"({"spec":{"holderIdentity":"host-b_2"}})"));
  ASSERT_TRUE(store.merge_patch(Kind::kLease, "kube-system", "other",
                                R"({"spec":{"holderIdentity":"y"}})"));
  ASSERT_TRUE(eventually([&] { return view_equals_store(); }));
  EXPECT_EQ(handler.count(Kind::kNode, EventType::kAdded, "gpu-3"), 1);
  EXPECT_EQ(handler.count(Kind::kPod, EventType::kModified, "default/p1"), 1);
  EXPECT_EQ(handler.count(Kind::kResourceQuota, EventType::kDeleted, "team/q"), 1);
  EXPECT_EQ(handler.count(Kind::kLease, EventType::kModified, "kube-system/kube-scheduler"), 1);
  EXPECT_EQ(handler.last_holder(), "host-b_2");
}

TEST_F(KubeSourceTest, WatchDisconnectMidStreamResumesWithoutLoss) {
  start();
  ASSERT_TRUE(eventually([&] { return server->open_watches() == 4; }));
  const int before = server->watches_started();
  server->drop_watches();
  ASSERT_TRUE(store.create(
      Kind::kPod,
      R"({"metadata":{"name":"p3","namespace":"default"},"spec":{"containers":[{"name":"c"}]}})"));
  ASSERT_TRUE(store.remove(Kind::kNode, "", "gpu-2"));
  ASSERT_TRUE(eventually([&] { return server->watches_started() >= before + 4; }));
  ASSERT_TRUE(eventually([&] { return view_equals_store(); }));
  EXPECT_EQ(handler.count(Kind::kPod, EventType::kAdded, "default/p3"), 1);
  EXPECT_EQ(handler.count(Kind::kNode, EventType::kDeleted, "gpu-2"), 1);
  EXPECT_GE(source->stats().watch_errors, 1u);
  // Resumed from a resourceVersion, not relisted.
  EXPECT_EQ(source->stats().relists_after_gone, 0u);
}

TEST_F(KubeSourceTest, GoneAfterCompactionRelistsAndDeletesWhatVanished) {
  start();
  ASSERT_TRUE(eventually([&] { return server->open_watches() == 4; }));
  // Keep the source disconnected while things change, then compact the history.
  server->fail_next("WATCH", "/", 1 << 30, 503);
  server->drop_watches();
  ASSERT_TRUE(eventually([&] { return server->open_watches() == 0; }));
  ASSERT_TRUE(store.remove(Kind::kPod, "default", "p1"));
  ASSERT_TRUE(store.remove(Kind::kNode, "", "gpu-1"));
  ASSERT_TRUE(store.create(
      Kind::kPod,
      R"({"metadata":{"name":"p4","namespace":"team"},"spec":{"containers":[{"name":"c"}]}})"));
  ASSERT_TRUE(store.merge_patch(Kind::kPod, "team", "p2", R"({"metadata":{"labels":{"a":"b"}}})"));
  store.compact();
  server->clear_failures();
  ASSERT_TRUE(eventually([&] { return view_equals_store(); }));
  EXPECT_EQ(handler.count(Kind::kPod, EventType::kDeleted, "default/p1"), 1);
  // Found gone by the relist, it is reported by its identity: the pod manager releases by uid.
  EXPECT_FALSE(handler.uid("default/p1").empty());
  EXPECT_EQ(handler.deleted_uid("default/p1"), handler.uid("default/p1"));
  EXPECT_EQ(handler.count(Kind::kNode, EventType::kDeleted, "gpu-1"), 1);
  EXPECT_EQ(handler.count(Kind::kPod, EventType::kAdded, "team/p4"), 1);
  EXPECT_EQ(handler.count(Kind::kPod, EventType::kModified, "team/p2"), 1);
  // Unchanged objects were not delivered again.
  EXPECT_EQ(handler.count(Kind::kNode, EventType::kModified, "gpu-2"), 0);
  EXPECT_EQ(handler.count(Kind::kNode, EventType::kAdded, "gpu-2"), 1);
  EXPECT_GE(source->stats().relists_after_gone, 1u);
}

// Counts what the source reports to the client's observer.
struct CountingObserver : ClientObserver {
  std::mutex mu;
  std::map<std::string, int> restarts;  // "resource reason"
  int dropped = 0;
  void watch_restarted(std::string_view resource, std::string_view reason) override {
    std::lock_guard lock(mu);
    ++restarts[std::string(resource) + " " + std::string(reason)];
  }
  void event_dropped() override {
    std::lock_guard lock(mu);
    ++dropped;
  }
  int restarts_of(const std::string& key) {
    std::lock_guard lock(mu);
    return restarts[key];
  }
};

TEST_F(KubeSourceTest, ListsArePagedAndAnExpiredContinueFallsBackToAWholeList) {
  // The pod list's continue token expires between its pages (a write and a compaction).
  std::atomic<bool> expired{false};
  server->set_list_hook([&](const std::string& target) {
    if (target.starts_with("/api/v1/pods?") && target.find("continue=") != std::string::npos &&
        !expired.exchange(true)) {
      ASSERT_TRUE(store.merge_patch(Kind::kPod, "team", "p2",
                                    R"({"metadata":{"labels":{"paged":"yes"}}})"));
      store.compact();
    }
  });
  ClientOptions client;
  client.list_page_size = 1;
  start(options(), client);
  EXPECT_TRUE(view_equals_store());
  EXPECT_EQ(handler.objects_at_sync(), 6u);
  // The compaction is store-wide: a node list paging at that moment falls back as well.
  EXPECT_GE(source->client().stats().list_fallbacks, 1u);
  const auto log = server->request_log();
  EXPECT_THAT(log, ::testing::Contains("LIST /api/v1/nodes?limit=1"));
  EXPECT_THAT(log, ::testing::Contains(HasSubstr("LIST /api/v1/nodes?limit=1&continue=")));
  EXPECT_THAT(log, ::testing::Contains("LIST /api/v1/pods"));  // the fallback: whole
}

TEST_F(KubeSourceTest, AListThatFailsBetweenItsPagesIsTakenAgainWithoutRedelivering) {
  // The pods' first page is handed on as it arrives; the next page fails, so the list is
  // taken again. What the first page delivered is not delivered as new a second time (the
  // fixture's handler checks every object's stream).
  std::atomic<bool> failed{false};
  server->set_list_hook([&](const std::string& target) {
    if (target.starts_with("/api/v1/pods?") && target.find("continue=") == std::string::npos &&
        !failed.exchange(true)) {
      server->fail_next("LIST", "/api/v1/pods", 1, 500);
    }
  });
  ClientOptions client;
  client.list_page_size = 1;
  start(options(), client);
  EXPECT_TRUE(failed);
  EXPECT_TRUE(view_equals_store());
  EXPECT_EQ(handler.count(Kind::kPod, EventType::kAdded, "default/p1") +
                handler.count(Kind::kPod, EventType::kAdded, "team/p2"),
            2);
  EXPECT_EQ(handler.count(Kind::kPod, EventType::kModified, "default/p1") +
                handler.count(Kind::kPod, EventType::kModified, "team/p2"),
            0);
  EXPECT_GE(source->stats().lists, 5u);  // nodes, quotas, the lease, and pods twice
}

TEST_F(KubeSourceTest, WatchRestartsAndDroppedEventsReachTheObserver) {
  auto observer = std::make_shared<CountingObserver>();
  ClientOptions client;
  client.observer = observer;
  KubeSourceOptions o = options();
  o.event_queue = 1;
  o.event_flush_timeout = 300ms;
  start(o, client);
  ASSERT_TRUE(eventually([&] { return server->open_watches() == 4; }));
  server->drop_watches();
  ASSERT_TRUE(eventually([&] { return observer->restarts_of("nodes error") >= 1; }));
  server->set_delay(1500ms);  // event POSTs hang: the queue of one overflows
  for (int i = 0; i < 20; ++i) {
    source->record_event({"default", "p1", "", "Normal", "R", "m" + std::to_string(i)});
  }
  std::lock_guard lock(observer->mu);
  EXPECT_GE(observer->dropped, 10);
}

TEST_F(KubeSourceTest, ListFailuresAreRetriedBeforeSync) {
  server->fail_next("LIST", "/api/v1/pods", 3, 500);
  start();
  EXPECT_TRUE(view_equals_store());
  EXPECT_EQ(server->request_count("LIST", "/api/v1/pods"), 4);
}

TEST_F(KubeSourceTest, NodePatchPreconditionConflicts) {
  start();
  auto node = source->get_node("gpu-1");
  ASSERT_TRUE(node) << node.error().message;
  const std::string rv = node->metadata.resource_version;
  ASSERT_TRUE(
      source->patch_node_annotations("gpu-1", {{"hami.io/mutex.lock", "t,default,p1"}}, rv));
  auto stale = source->patch_node_annotations("gpu-1", {{"hami.io/mutex.lock", std::nullopt}}, rv);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.code(), ApiCode::kConflict);
  EXPECT_THAT(stale.error().message, HasSubstr("PATCH node gpu-1: 409 Conflict"));
  auto fresh = source->get_node("gpu-1");
  ASSERT_TRUE(fresh);
  ASSERT_EQ(fresh->metadata.annotations.count("hami.io/mutex.lock"), 1u);
  ASSERT_TRUE(source->patch_node_annotations("gpu-1", {{"hami.io/mutex.lock", std::nullopt}},
                                             fresh->metadata.resource_version));
  auto released = source->get_node("gpu-1");
  ASSERT_TRUE(released);
  EXPECT_EQ(released->metadata.annotations.count("hami.io/mutex.lock"), 0u);
  EXPECT_EQ(source->get_node("nope").code(), ApiCode::kNotFound);
  ASSERT_TRUE(eventually([&] { return view_equals_store(); }));
}

TEST_F(KubeSourceTest, PodMetadataPatchAndBinding) {
  start();
  ASSERT_TRUE(source->patch_pod_metadata("default", "p1", {{"hami.io/bind-phase", "allocating"}},
                                         {{"hami.io/scheduler-role", "leader"}}));
  auto pod = source->get_pod("default", "p1");
  ASSERT_TRUE(pod) << pod.error().message;
  EXPECT_EQ(pod->metadata.annotations.at("hami.io/bind-phase"), "allocating");
  EXPECT_EQ(pod->metadata.labels.at("hami.io/scheduler-role"), "leader");
  ASSERT_TRUE(source->bind_pod("default", "p1", pod->metadata.uid, "gpu-1"));
  auto again = source->bind_pod("default", "p1", pod->metadata.uid, "gpu-2");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.code(), ApiCode::kConflict);
  EXPECT_EQ(source->bind_pod("default", "ghost", "", "gpu-1").code(), ApiCode::kNotFound);
  EXPECT_EQ(source->patch_pod_metadata("default", "ghost", {{"a", "b"}}, {}).code(),
            ApiCode::kNotFound);
  ASSERT_TRUE(eventually([&] { return view_equals_store(); }));
}

TEST_F(KubeSourceTest, WritesRetryUnavailable) {
  start();
  server->fail_next("PATCH", "/api/v1/namespaces/default/pods/p1", 2, 503);
  ASSERT_TRUE(source->patch_pod_metadata("default", "p1", {{"a", "b"}}, {}));
  EXPECT_EQ(server->request_count("PATCH", "/api/v1/namespaces/default/pods/p1"), 3);
  server->fail_next("POST", "/api/v1/namespaces/default/pods/p1/binding", 100, 500);
  auto r = source->bind_pod("default", "p1", "", "gpu-1");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), ApiCode::kUnavailable);
}

TEST_F(KubeSourceTest, EventsAreSentInTheBackground) {
  start();
  source->record_event({"team", "p2", "uid-2", "Warning", "FilteringFailed", "no fit"});
  source->record_event({"default", "p1", "uid-1", "Normal", "BindingSucceed",
                        "Successfully binding node [gpu-1] to default/p1"});
  ASSERT_TRUE(eventually([&] { return store.list(Kind::kEvent).items.size() == 2; }));
  const auto events = store.list(Kind::kEvent).items;
  const std::string& json = events[0].namespace_ == "default" ? events[0].json : events[1].json;
  EXPECT_THAT(json, HasSubstr(R"("reason":"BindingSucceed")"));
  EXPECT_THAT(json, HasSubstr(R"("type":"Normal")"));
  EXPECT_THAT(json, HasSubstr(R"("source":{"component":"hami-scheduler"})"));
  EXPECT_THAT(
      json,
      HasSubstr(
          R"("involvedObject":{"apiVersion":"v1","kind":"Pod","namespace":"default","name":"p1","uid":"uid-1"})"));
  EXPECT_THAT(json, HasSubstr(R"("count":1)"));
  EXPECT_THAT(json, HasSubstr(R"("firstTimestamp":")"));
  // The counter moves after the API server answered, so a moment after the store has both.
  EXPECT_TRUE(eventually([&] { return source->stats().events_sent == 2u; }))
      << source->stats().events_sent;
}

TEST_F(KubeSourceTest, FullEventQueueDropsTheOldestWithoutBlocking) {
  KubeSourceOptions o = options();
  o.event_queue = 2;
  o.event_flush_timeout = 300ms;
  start(o);
  server->set_delay(1500ms);  // every event POST hangs
  for (int i = 0; i < 100; ++i) {
    source->record_event({"default", "p1", "", "Normal", "R", "m" + std::to_string(i)});
  }
  EXPECT_GE(source->stats().events_dropped, 90u);
  auto stopped = std::async(std::launch::async, [&] { source->stop(); });
  EXPECT_EQ(stopped.wait_for(30s), std::future_status::ready) << "stop() must be bounded";
}

TEST_F(KubeSourceTest, StopIsBoundedAndEndsHandlerCalls) {
  start();
  server->set_delay(2s);
  auto stopped = std::async(std::launch::async, [&] { source->stop(); });
  ASSERT_EQ(stopped.wait_for(30s), std::future_status::ready);
  handler.forbid_calls();
  ASSERT_TRUE(store.create(Kind::kNode, R"({"metadata":{"name":"late"}})"));
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(handler.called_when_forbidden());
  EXPECT_EQ(handler.view(Kind::kNode).count("late"), 0u);
}

TEST_F(KubeSourceTest, StopBeforeSyncWhileTheServerFails) {
  server->fail_next("LIST", "/", 1 << 30, 503);
  KubeConfig config;
  config.server = server->url();
  auto s = KubeSource::create(config, ClientOptions{}, options());
  ASSERT_TRUE(s);
  (*s)->start(handler);
  ASSERT_TRUE(eventually([&] { return server->request_count("LIST", "/api/v1/nodes") >= 2; }));
  auto stopped = std::async(std::launch::async, [&] { (*s)->stop(); });
  ASSERT_EQ(stopped.wait_for(30s), std::future_status::ready);
  EXPECT_EQ(handler.synced(), 0);
}

TEST(MetadataMergePatch, BuildsNullForDeletesAndThePrecondition) {
  EXPECT_EQ(metadata_merge_patch({{"b", "2"}, {"a", std::nullopt}}, {}, "17"),
            R"({"metadata":{"annotations":{"a":null,"b":"2"},"resourceVersion":"17"}})");
  EXPECT_EQ(metadata_merge_patch({{"k", "<v>"}}, {{"l", "x"}}, ""),
            R"({"metadata":{"annotations":{"k":"\u003cv\u003e"},"labels":{"l":"x"}}})");
  EXPECT_EQ(metadata_merge_patch({}, {}, ""), R"({"metadata":{}})");
}

TEST(LeaseDecoding, ReadsTheFieldsAndRejectsGarbage) {
  auto l = decode_lease_json(
      R"({"metadata":{"name":"kube-scheduler","namespace":"kube-system","resourceVersion":"5"},"spec":{"holderIdentity":"h_1","leaseDurationSeconds":15}})");
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l->name, "kube-scheduler");
  EXPECT_EQ(l->namespace_, "kube-system");
  EXPECT_EQ(l->resource_version, "5");
  EXPECT_EQ(l->holder_identity, "h_1");
  EXPECT_EQ(l->lease_duration_seconds, 15);
  auto nulls = decode_lease_json(R"({"metadata":{"name":"x"},"spec":{"holderIdentity":null}})");
  ASSERT_TRUE(nulls);
  EXPECT_EQ(nulls->holder_identity, "");
  EXPECT_FALSE(decode_lease_json("[]"));
  EXPECT_FALSE(decode_lease_json("{\"metadata\":{}}"));
  EXPECT_FALSE(
      decode_lease_json(R"({"metadata":{"name":"x"},"spec":{"leaseDurationSeconds":"15"}})"));
  EXPECT_FALSE(decode_lease_json("{\"metadata\":{\"name\":1}}"));
  EXPECT_FALSE(decode_lease_json("{"));
}

}  // namespace
}  // namespace hamisim::kube
