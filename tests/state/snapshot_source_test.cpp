// The snapshot source: loads Lists, delivers them like an informer, applies writes and streams
// them back, plays the device plugin when asked, and writes the result out.

#include "state/snapshot_source.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "model/decode.h"

namespace hamisim::state {
namespace {

// The source's delivery thread calls it until the source stops: declare it before the source,
// so that a failed ASSERT (which returns before stop()) destroys the source first.
class Recorder : public ClusterHandler {
 public:
  void on_node(EventType t, const model::Node& n) override { add(t, "Node " + n.metadata.name); }
  void on_pod(EventType t, const model::Pod& p) override {
    std::lock_guard lock(mu_);
    pod_annotations_[p.metadata.name] = p.metadata.annotations;
    log_.push_back(std::string(to_string(t)) + " Pod " + p.metadata.namespace_ + "/" +
                   p.metadata.name);
    cv_.notify_all();
  }
  void on_quota(EventType t, const model::ResourceQuota& q) override {
    add(t, "ResourceQuota " + q.metadata.name);
  }
  void on_lease(EventType t, const Lease& l) override {
    add(t, "Lease " + l.name + " " + l.holder_identity);
  }
  void on_synced() override { add(EventType::kAdded, "SYNCED"); }

  // Waits (bounded) until `line` was delivered.
  bool wait_for(const std::string& line) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10),
                        [&] { return std::find(log_.begin(), log_.end(), line) != log_.end(); });
  }
  std::vector<std::string> log() {
    std::lock_guard lock(mu_);
    return log_;
  }
  std::string annotation(const std::string& pod, const std::string& key) {
    std::lock_guard lock(mu_);
    auto& a = pod_annotations_[pod];
    auto it = a.find(key);
    return it == a.end() ? "" : it->second;
  }

 private:
  void add(EventType t, std::string what) {
    std::lock_guard lock(mu_);
    log_.push_back(what == "SYNCED" ? what : std::string(to_string(t)) + " " + what);
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> log_;
  std::map<std::string, model::StringMap> pod_annotations_;
};

std::string write_temp(const std::string& name, const std::string& text) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hamisim-snapshot-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

constexpr const char* kYaml = R"(apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Node
    metadata: {name: gpu-1}
  - apiVersion: v1
    kind: Pod
    metadata: {name: p, namespace: ml}
    spec: {containers: [{name: c}]}
  - apiVersion: v1
    kind: ResourceQuota
    metadata: {name: q, namespace: ml}
    spec: {hard: {limits.nvidia.com/gpumem: "1000"}}
  - apiVersion: coordination.k8s.io/v1
    kind: Lease
    metadata: {name: kube-scheduler, namespace: kube-system}
    spec: {holderIdentity: host-a_123, leaseDurationSeconds: 15}
)";

TEST(SnapshotSource, DeliversTheSnapshotThenTheWritesAndDumpsTheResult) {
  Recorder rec;
  auto source = SnapshotSource::load({write_temp("cluster.yaml", kYaml)}, {});
  ASSERT_TRUE(source) << source.error().message;
  (*source)->start(rec);
  ASSERT_TRUE(rec.wait_for("SYNCED"));
  const auto initial = rec.log();
  EXPECT_EQ(initial,
            (std::vector<std::string>{"ADDED Node gpu-1", "ADDED Pod ml/p", "ADDED ResourceQuota q",
                                      "ADDED Lease kube-scheduler host-a_123", "SYNCED"}));

  ASSERT_TRUE((*source)->patch_pod_metadata("ml", "p", {{"hami.io/vgpu-node", "gpu-1"}},
                                            {{"hami.io/vgpu-node", "gpu-1"}}));
  ASSERT_TRUE(rec.wait_for("MODIFIED Pod ml/p"));
  EXPECT_EQ(rec.annotation("p", "hami.io/vgpu-node"), "gpu-1");

  auto node = (*source)->get_node("gpu-1");
  ASSERT_TRUE(node);
  EXPECT_EQ((*source)->patch_node_annotations("gpu-1", {{"hami.io/mutex.lock", "x"}}, "999").code(),
            ApiCode::kConflict);
  ASSERT_TRUE((*source)->patch_node_annotations("gpu-1", {{"hami.io/mutex.lock", "x"}},
                                                node->metadata.resource_version));
  ASSERT_TRUE((*source)->bind_pod("ml", "p", "", "gpu-1"));
  EXPECT_EQ((*source)->bind_pod("ml", "p", "", "gpu-1").code(), ApiCode::kConflict);
  (*source)->record_event({"ml", "p", "", "Normal", "BindingSucceed", "bound"});
  EXPECT_EQ((*source)->get_pod("ml", "gone").code(), ApiCode::kNotFound);

  const std::string out = write_temp("out.json", "");
  ASSERT_TRUE((*source)->write_snapshot(out));
  (*source)->stop();
  auto dumped = model::load_objects(out);
  ASSERT_TRUE(dumped) << dumped.error().message;
  ASSERT_EQ(dumped->pods.size(), 1u);
  EXPECT_EQ(dumped->pods[0].spec.node_name, "gpu-1");
  EXPECT_EQ(dumped->nodes[0].metadata.annotations.at("hami.io/mutex.lock"), "x");
  EXPECT_EQ(dumped->pods[0].metadata.labels.at("hami.io/vgpu-node"), "gpu-1");
  auto text = model::read_file(out);
  EXPECT_NE(text->find("\"reason\":\"BindingSucceed\""), std::string::npos);
}

TEST(SnapshotSource, PlaysTheDevicePluginWhenAsked) {
  SnapshotSource::Options o;
  o.play_device_plugin = true;
  auto source = SnapshotSource::load({write_temp("cluster2.yaml", kYaml)}, o);
  ASSERT_TRUE(source);
  ASSERT_TRUE((*source)->patch_node_annotations("gpu-1", {{"hami.io/mutex.lock", "x"}}, ""));
  ASSERT_TRUE((*source)->bind_pod("ml", "p", "", "gpu-1"));
  EXPECT_EQ((*source)->get_pod("ml", "p")->metadata.annotations.at("hami.io/bind-phase"),
            "success");
  EXPECT_EQ((*source)->get_node("gpu-1")->metadata.annotations.count("hami.io/mutex.lock"), 0u);
}

// A recorded Event (a kind no handler watches) must not leave the delivery loop spinning.
TEST(SnapshotSource, StaysIdleAfterAnEventIsRecorded) {
  Recorder recorder;
  auto source = SnapshotSource::load({write_temp("cluster-idle.yaml", kYaml)}, {});
  ASSERT_TRUE(source);
  (*source)->start(recorder);
  ASSERT_TRUE(recorder.wait_for("SYNCED"));
  (*source)->record_event({"ml", "p", "", "Normal", "Test", "hello"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const uint64_t before = (*source)->delivery_wakeups();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const uint64_t wakeups = (*source)->delivery_wakeups() - before;
  (*source)->stop();
  // Idle, the loop wakes once per second at most; a spinning one thousands of times.
  EXPECT_LE(wakeups, 3u);
}

// Recorded Events are bounded, as the API server expires them: a busy live path must not grow
// the store without end. The newest are kept.
TEST(SnapshotSource, KeepsOnlyTheNewestRecordedEvents) {
  SnapshotSource::Options options;
  options.max_recorded_events = 5;
  auto source = SnapshotSource::load({write_temp("cluster-events.yaml", kYaml)}, options);
  ASSERT_TRUE(source);
  for (int i = 0; i < 20; ++i) {
    (*source)->record_event({"ml", "p", "", "Normal", "Test", "event " + std::to_string(i)});
  }
  const auto events = (*source)->store().list(Kind::kEvent).items;
  ASSERT_EQ(events.size(), 5u);
  std::string all;
  for (const auto& e : events) all += e.json;
  EXPECT_EQ(all.find("\"event 14\""), std::string::npos);
  for (int i = 15; i < 20; ++i) {
    EXPECT_NE(all.find("\"event " + std::to_string(i) + "\""), std::string::npos) << i;
  }
}

TEST(SnapshotSource, ARelistAfterTheHistoryWasOutrunDeliversDeletes) {
  Recorder rec;
  auto source = SnapshotSource::load({write_temp("cluster3.yaml", kYaml)}, {});
  ASSERT_TRUE(source);
  (*source)->start(rec);
  ASSERT_TRUE(rec.wait_for("SYNCED"));
  // Delete and compact together, so the source finds the history gone and must relist.
  ASSERT_TRUE((*source)->store().remove(Kind::kPod, "ml", "p"));
  (*source)->store().compact();
  ASSERT_TRUE(rec.wait_for("DELETED Pod ml/p"));
  (*source)->stop();
}

TEST(SnapshotSource, LoadErrorsNameTheFile) {
  auto missing = SnapshotSource::load({"/nonexistent/cluster.yaml"}, {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nonexistent/cluster.yaml"), std::string::npos);
  const std::string bad = write_temp("bad.yaml", "kind: Node\nmetadata: {}\n");
  auto invalid = SnapshotSource::load({bad}, {});
  ASSERT_FALSE(invalid);
  EXPECT_NE(invalid.error().message.find(bad), std::string::npos) << invalid.error().message;
  EXPECT_NE(invalid.error().message.find("metadata.name"), std::string::npos);
}

TEST(SnapshotSource, DecodesLeases) {
  auto lease = decode_lease_json(
      R"({"metadata":{"name":"l","namespace":"kube-system"},"spec":{"holderIdentity":"h_1","leaseDurationSeconds":15}})");
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->holder_identity, "h_1");
  EXPECT_EQ(lease->lease_duration_seconds, 15);
  EXPECT_FALSE(
      decode_lease_json(R"({"metadata":{"name":"l"},"spec":{"leaseDurationSeconds":"x"}})"));
  EXPECT_FALSE(decode_lease_json("[]"));
}

}  // namespace
}  // namespace hamisim::state
