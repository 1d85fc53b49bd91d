// DecodedCache (NodeCache, PodCache): a hit gives what decoding the same bytes gives; errors
// and oversized objects are never kept; a full cache starts over instead of growing.

#include "extender/decoded_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "model/decode.h"
#include "model/encode.h"

namespace hamisim::extender {
namespace decoded_cache_test {

// The bytes of `json` in a buffer with the padding the in-buffer decoders read past the end.
class Padded {
 public:
  explicit Padded(std::string json) : size_(json.size()), text_(std::move(json)) {
    text_.append(model::kJsonPadding, ' ');
  }
  std::string_view view() const { return std::string_view(text_).substr(0, size_); }

 private:
  size_t size_;
  std::string text_;
};

std::string node_json(const std::string& name, size_t label_bytes = 0) {
  return R"({"metadata":{"name":")" + name + R"(","labels":{"pad":")" +
         std::string(label_bytes, 'x') + R"("}},"status":{"allocatable":{"nvidia.com/gpu":"4"}}})";
}

TEST(NodeCache, SameBytesGiveTheSameDecodedNode) {
  NodeCache cache;
  const Padded a(node_json("a"));
  auto first = cache.get(a.view(), "Nodes.items[0]");
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ((*first)->node.metadata.name, "a");
  EXPECT_EQ(model::encode_node_json((*first)->node),
            model::encode_node_json(*model::decode_node_json(node_json("a"))));
  // The key built with it is the node's own: a description stored under it is found by a key
  // built from the node afresh.
  fit::DescriptionCache descriptions;
  descriptions.get((*first)->key(), "t", [] { return fit::DescriptionResult{}; });
  bool made_again = false;
  descriptions.get(fit::DescriptionCache::Key((*first)->node), "t", [&] {
    made_again = true;
    return fit::DescriptionResult{};
  });
  EXPECT_FALSE(made_again);

  // The same bytes from another buffer hit: the very same object comes back.
  const Padded a_again(node_json("a"));
  auto second = cache.get(a_again.view(), "Nodes.items[7]");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->get(), second->get());
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), a.view().size());
}

TEST(NodeCache, DifferentBytesAreDifferentEntries) {
  NodeCache cache;
  // Whitespace alone makes other bytes: the cache compares text, it does not canonicalize.
  const Padded a(node_json("a")), a_spaced(" " + node_json("a")), b(node_json("b"));
  auto got_a = cache.get(a.view(), "x");
  auto got_spaced = cache.get(a_spaced.view(), "x");
  auto got_b = cache.get(b.view(), "x");
  ASSERT_TRUE(got_a.ok() && got_spaced.ok() && got_b.ok());
  EXPECT_NE(got_a->get(), got_spaced->get());
  EXPECT_EQ((*got_spaced)->node.metadata.name, "a");
  EXPECT_EQ((*got_b)->node.metadata.name, "b");
  EXPECT_EQ(cache.size(), 3u);
}

// Nodes are found by a hash of a sample of their text and then compared in full: texts that
// differ only where the sample does not look are told apart, and only a few of them are kept.
TEST(NodeCache, TextsWithEqualSamplesAreToldApartAndFewAreKept) {
  NodeCache cache;
  const size_t at = 1024 + 21;  // past the head and the first window, inside the label
  const size_t label_start = node_json("n").find(R"("pad":")") + 7;
  std::vector<Padded> nodes;
  for (char c : std::string("abcdef")) {
    std::string json = node_json("n", 3000);
    ASSERT_EQ(json[at], 'x');
    json[at] = c;
    nodes.emplace_back(json);
  }
  std::vector<NodeCache::Entry> first;
  for (const auto& n : nodes) {
    auto got = cache.get(n.view(), "x");
    ASSERT_TRUE(got.ok());
    first.push_back(*got);
  }
  EXPECT_EQ(cache.size(), 4u);
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto again = cache.get(nodes[i].view(), "x");
    ASSERT_TRUE(again.ok());
    const std::string& label = (*again)->node.metadata.labels.at("pad");
    EXPECT_EQ(label[at - label_start], "abcdef"[i]);
    // The first four were kept; the others are decoded each time.
    if (i < 4)
      EXPECT_EQ(again->get(), first[i].get());
    else
      EXPECT_NE(again->get(), first[i].get());
  }
}

TEST(NodeCache, ErrorsNameWhereAndAreNotKept) {
  NodeCache cache;
  const Padded broken(R"({"metadata":{"name":"a"},"status":{"allocatable":{"cpu":"lots"}}})");
  auto direct = model::decode_node_json_in_buffer(broken.view(), "Nodes.items[3]");
  ASSERT_FALSE(direct.ok());
  for (int i = 0; i < 2; ++i) {
    auto got = cache.get(broken.view(), "Nodes.items[3]");
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().message, direct.error().message);
    EXPECT_NE(got.error().message.find("Nodes.items[3]"), std::string::npos) << got.error().message;
  }
  // Another place in another body names its own path: nothing of the first error was kept.
  auto elsewhere = cache.get(broken.view(), "Nodes.items[9]");
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_NE(elsewhere.error().message.find("Nodes.items[9]"), std::string::npos);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(NodeCache, AFullCacheStartsOverByEntries) {
  NodeCache cache(/*max_entries=*/3, /*max_bytes=*/size_t{1} << 20);
  std::vector<Padded> nodes;
  for (int i = 0; i < 4; ++i) nodes.emplace_back(node_json("n" + std::to_string(i)));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cache.get(nodes[i].view(), "x").ok());
  EXPECT_EQ(cache.size(), 3u);
  auto fourth = cache.get(nodes[3].view(), "x");
  ASSERT_TRUE(fourth.ok());
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), nodes[3].view().size());
  // What a caller already holds stays valid after the cache let go of it.
  EXPECT_EQ((*fourth)->node.metadata.name, "n3");
}

TEST(NodeCache, AFullCacheStartsOverByBytes) {
  // Seventeen nodes of one size; the budget holds sixteen of them.
  std::vector<Padded> nodes;
  for (char c = 'a'; c <= 'q'; ++c) nodes.emplace_back(node_json(std::string(1, c), 100));
  const size_t size = nodes[0].view().size();
  NodeCache cache(/*max_entries=*/1000, /*max_bytes=*/16 * size);
  for (size_t i = 0; i < 16; ++i) ASSERT_TRUE(cache.get(nodes[i].view(), "x").ok());
  EXPECT_EQ(cache.size(), 16u);
  EXPECT_EQ(cache.bytes(), 16 * size);
  auto last = cache.get(nodes[16].view(), "x");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ((*last)->node.metadata.name, "q");
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), size);
}

TEST(NodeCache, ANodeOverASixteenthOfTheBudgetIsDecodedButNotKept) {
  const Padded small(node_json("a")), big(node_json("b", 2000));
  NodeCache cache(/*max_entries=*/1000, /*max_bytes=*/16 * 1000);
  ASSERT_TRUE(cache.get(small.view(), "x").ok());
  auto first = cache.get(big.view(), "x");
  auto second = cache.get(big.view(), "x");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ((*first)->node.metadata.name, "b");
  EXPECT_NE(first->get(), second->get());
  // Nothing that was kept is dropped to make room for it.
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), small.view().size());
}

TEST(NodeCache, ConcurrentMissesOfTheSameBytesAgree) {
  NodeCache cache;
  const Padded a(node_json("a", 2000));
  std::vector<NodeCache::Entry> got(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto entry = cache.get(a.view(), "x");
        ASSERT_TRUE(entry.ok());
        if (i == 199) got[t] = *entry;
      }
    });
  }
  for (auto& t : threads) t.join();
  // Racing decoders may each build one, but the cache keeps the first and everyone then gets it.
  for (const auto& entry : got) EXPECT_EQ(entry.get(), got[0].get());
  EXPECT_EQ(cache.size(), 1u);
}

// A kept text is found at the start of a longer text (the rest of a body) without knowing where
// it ends there; only equal bytes are a hit.
TEST(NodeCache, FindsAKeptTextAtTheStartOfABody) {
  NodeCache cache;
  const Padded long_node(node_json("long", 3000)), short_node(node_json("s"));
  ASSERT_GE(long_node.view().size(), NodeCache::kPrefix);
  ASSERT_LT(short_node.view().size(), NodeCache::kPrefix);
  ASSERT_TRUE(cache.get(long_node.view(), "x").ok());
  ASSERT_TRUE(cache.get(short_node.view(), "x").ok());
  for (const Padded* kept : {&long_node, &short_node}) {
    const std::string text(kept->view());
    auto found = cache.find_at_start(text + R"(,{"metadata":{"name":"next"}}]})");
    ASSERT_NE(found.entry, nullptr) << text.size();
    EXPECT_EQ(found.length, text.size());
    EXPECT_EQ(found.entry.get(), cache.get(kept->view(), "x")->get());
    // Not when the text is cut short, nor when a byte differs anywhere.
    EXPECT_EQ(cache.find_at_start(text.substr(0, text.size() - 1)).entry, nullptr);
    for (size_t at : {size_t{2}, text.size() / 2, text.size() - 3}) {
      std::string changed = text + "]";
      changed[at] = changed[at] == 'x' ? 'y' : 'x';
      EXPECT_EQ(cache.find_at_start(changed).entry, nullptr) << at;
    }
  }
  EXPECT_EQ(cache.find_at_start("").entry, nullptr);
  EXPECT_EQ(cache.find_at_start("null").entry, nullptr);
}

// Texts are indexed by their first kPrefix bytes too; only a few may share them.
TEST(NodeCache, FewKeptTextsShareAStart) {
  NodeCache cache;
  std::vector<Padded> nodes;
  for (char c : std::string("abcdef")) {
    std::string json = node_json("n", 3000);
    json[json.size() - 10] = c;  // in a resource name near the end, past the first kPrefix bytes
    nodes.emplace_back(json);
  }
  for (const Padded& n : nodes) ASSERT_TRUE(cache.get(n.view(), "x").ok());
  EXPECT_EQ(cache.size(), 6u);
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto found = cache.find_at_start(nodes[i].view());
    if (i < 4)
      EXPECT_EQ(found.entry.get(), cache.get(nodes[i].view(), "x")->get());
    else
      EXPECT_EQ(found.entry, nullptr);  // kept, but found only where its end is known
  }
}

TEST(PodCache, SameBytesGiveTheSameDecodedPod) {
  PodCache cache;
  const std::string json = R"({"metadata":{"name":"p","namespace":"ml"},"spec":{"containers":[)"
                           R"({"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
  const Padded a(json), again(json), other(R"({"metadata":{"name":"q"}})");
  auto first = cache.get(a.view(), "Pod");
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(model::encode_pod_json(**first), model::encode_pod_json(*model::decode_pod_json(json)));
  auto second = cache.get(again.view(), "Pod");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->get(), second->get());
  auto q = cache.get(other.view(), "Pod");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ((*q)->metadata.name, "q");
  EXPECT_EQ(cache.size(), 2u);

  const Padded broken(R"({"metadata":{"name":"p"},"spec":{"containers":{}}})");
  auto error = cache.get(broken.view(), "Pod");
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.error().message,
            model::decode_pod_json_in_buffer(broken.view(), "Pod").error().message);
  EXPECT_EQ(cache.size(), 2u);
}

}  // namespace decoded_cache_test
}  // namespace hamisim::extender
