// The in-memory object store behaves like the API server for what the live path relies on.

#include "state/object_store.h"

#include <gtest/gtest.h>

#include "model/decode.h"

namespace hamisim::state {
namespace {

constexpr std::string_view kCluster = R"({"kind":"List","items":[
  {"kind":"Node","metadata":{"name":"gpu-1","annotations":{"a":"1"}}},
  {"kind":"Pod","metadata":{"name":"p","namespace":"ml"},"spec":{"containers":[{"name":"c"}]}},
  {"kind":"ConfigMap","metadata":{"name":"ignored"}},
  {"kind":"PodList","items":[{"metadata":{"name":"q"}}]}]})";

TEST(ObjectStore, LoadsListsAssignsVersionsAndSkipsOtherKinds) {
  ObjectStore store;
  auto n = store.load(kCluster);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 3u);
  EXPECT_EQ(store.resource_version(), 3u);
  auto q = store.get(Kind::kPod, "default", "q");  // typed list item, namespace defaulted
  ASSERT_TRUE(q) << q.error().message;
  auto pod = model::decode_pod_json(q->json);
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->metadata.resource_version, std::to_string(q->resource_version));
  EXPECT_FALSE(pod->metadata.uid.empty());
  EXPECT_EQ(store.list(Kind::kPod).items.size(), 2u);
  EXPECT_EQ(store.list(Kind::kPod, "ml").items.size(), 1u);
}

TEST(ObjectStore, ABadItemLeavesTheStoreUnchanged) {
  ObjectStore store;
  ASSERT_TRUE(store.load(kCluster));
  auto bad = store.load(R"({"kind":"List","items":[{"kind":"Node","metadata":{"name":"new"}},
      {"kind":"Node","metadata":{"name":"gpu-1"}}]})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("duplicate Node gpu-1"), std::string::npos)
      << bad.error().message;
  EXPECT_FALSE(store.get(Kind::kNode, "", "new"));
  EXPECT_FALSE(store.load(R"({"kind":"Node","metadata":{}})"));
  EXPECT_FALSE(store.load("{not json"));
}

TEST(ObjectStore, MergePatchSetsDeletesAndChecksTheResourceVersion) {
  ObjectStore store;
  ASSERT_TRUE(store.load(kCluster));
  auto node = store.get(Kind::kNode, "", "gpu-1");
  ASSERT_TRUE(node);
  const std::string rv = std::to_string(node->resource_version);
  auto patched = store.merge_patch(
      Kind::kNode, "", "gpu-1",
      R"({"metadata":{"resourceVersion":")" + rv + R"(","annotations":{"a":null,"b":"2"}}})");
  ASSERT_TRUE(patched) << patched.error().message;
  auto decoded = model::decode_node_json(patched->json);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->metadata.annotations.count("a"), 0u);
  EXPECT_EQ(decoded->metadata.annotations.at("b"), "2");
  EXPECT_GT(patched->resource_version, node->resource_version);
  // The same stale version again: conflict, nothing changes.
  auto stale = store.merge_patch(
      Kind::kNode, "", "gpu-1",
      R"({"metadata":{"resourceVersion":")" + rv + R"(","annotations":{"c":"3"}}})");
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.code(), ApiCode::kConflict);
  EXPECT_EQ(store.get(Kind::kNode, "", "gpu-1")->resource_version, patched->resource_version);
  // Names cannot be patched; invalid label values and non-string annotations are rejected.
  auto renamed = store.merge_patch(Kind::kNode, "", "gpu-1", R"({"metadata":{"name":"x"}})");
  ASSERT_TRUE(renamed);
  EXPECT_TRUE(store.get(Kind::kNode, "", "gpu-1"));
  auto long_label = store.merge_patch(
      Kind::kPod, "ml", "p",
      R"({"metadata":{"labels":{"hami.io/vgpu-node":")" + std::string(64, 'n') + R"("}}})");
  ASSERT_FALSE(long_label);
  EXPECT_EQ(long_label.code(), ApiCode::kInvalid);
  EXPECT_EQ(
      store.merge_patch(Kind::kPod, "ml", "p", R"({"metadata":{"annotations":{"a":1}}})").code(),
      ApiCode::kInvalid);
  EXPECT_EQ(store.merge_patch(Kind::kPod, "ml", "gone", "{}").code(), ApiCode::kNotFound);
  EXPECT_EQ(store.merge_patch(Kind::kPod, "ml", "p", "[1]").code(), ApiCode::kInvalid);
}

TEST(ObjectStore, BindingSetsTheNodeOnceAndChecksTheUid) {
  ObjectStore store;
  ASSERT_TRUE(store.load(kCluster));
  auto pod = model::decode_pod_json(store.get(Kind::kPod, "ml", "p")->json);
  ASSERT_TRUE(pod);
  EXPECT_EQ(store.bind("ml", "p", "wrong-uid", "gpu-1").code(), ApiCode::kConflict);
  auto bound = store.bind("ml", "p", pod->metadata.uid, "gpu-1");
  ASSERT_TRUE(bound) << bound.error().message;
  EXPECT_EQ(model::decode_pod_json(bound->json)->spec.node_name, "gpu-1");
  auto again = store.bind("ml", "p", "", "gpu-2");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.code(), ApiCode::kConflict);
  EXPECT_NE(again.error().message.find("already assigned"), std::string::npos);
  EXPECT_EQ(store.bind("ml", "nope", "", "gpu-1").code(), ApiCode::kNotFound);
}

TEST(ObjectStore, WatchHistoryAndGoneAfterCompaction) {
  ObjectStore store;
  ASSERT_TRUE(store.load(kCluster));
  const uint64_t listed = store.list(Kind::kPod).resource_version;
  ASSERT_TRUE(store.merge_patch(Kind::kPod, "ml", "p", R"({"metadata":{"labels":{"x":"y"}}})"));
  ASSERT_TRUE(store.remove(Kind::kPod, "default", "q"));
  ASSERT_TRUE(
      store.create(Kind::kEvent, R"({"metadata":{"generateName":"p."},"reason":"R"})", "ml"));
  auto changes = store.changes_since(Kind::kPod, listed);
  ASSERT_TRUE(changes);
  ASSERT_EQ(changes->size(), 2u);
  EXPECT_EQ((*changes)[0].type, EventType::kModified);
  EXPECT_EQ((*changes)[1].type, EventType::kDeleted);
  EXPECT_EQ((*changes)[1].object.name, "q");
  EXPECT_EQ(store.changes_since(Kind::kPod, listed, "ml")->size(), 1u);
  EXPECT_EQ(store.wait_for_change(0, std::chrono::steady_clock::now()), store.resource_version());
  store.compact();
  EXPECT_EQ(store.changes_since(Kind::kPod, listed).code(), ApiCode::kGone);
  EXPECT_TRUE(store.changes_since(Kind::kPod, store.resource_version())->empty());
  // The dump reloads into an equal store.
  ObjectStore copy;
  auto n = copy.load(store.dump_list());
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 3u);  // node, pod p, the event
  EXPECT_EQ(model::decode_pod_json(copy.get(Kind::kPod, "ml", "p")->json)->metadata.labels.at("x"),
            "y");
}

TEST(ObjectStore, HistoryIsBounded) {
  ObjectStore store(ObjectStore::Options{.history = 2});
  ASSERT_TRUE(store.load(kCluster));  // three adds: the first fell out of the history
  EXPECT_EQ(store.changes_since(Kind::kNode, 0).code(), ApiCode::kGone);
  EXPECT_TRUE(store.changes_since(Kind::kPod, 1));
}

}  // namespace
}  // namespace hamisim::state
