// The cache of decoded device descriptions: shared by nodes whose description inputs are
// byte-identical, never by nodes that differ in anything a backend may read.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "fit_test_support.h"

namespace hamisim::fit::testing {
namespace {

model::Node gpu_node(std::string name = "template-node-for-a-1") {
  return NodeBuilder(std::move(name)).gpus({Gpu{"GPU-a"}, Gpu{"GPU-b"}.with_index(1)}).build();
}

TEST(RegisteredDescriber, IdenticalNodesShareOneDecodedDescription) {
  auto registry = nvidia_registry();
  RegisteredDescriber provider(*registry);
  auto first = provider.describe(gpu_node());
  auto again = provider.describe(gpu_node());
  EXPECT_EQ(first.get(), again.get());
  ASSERT_EQ(first->state, DescriptionResult::State::kOk);
  EXPECT_EQ(*first, read_registered_description(gpu_node(), *registry));
}

// Everything node_devices may read is part of the key: the name (some vendors name devices
// after the node), every label (AWS Neuron reads the instance type), every annotation, and the
// capacity.
TEST(RegisteredDescriber, ANodeThatDiffersInAnyInputIsDecodedAgain) {
  auto registry = nvidia_registry();
  RegisteredDescriber provider(*registry);
  const auto base = provider.describe(gpu_node());

  model::Node renamed = gpu_node("template-node-for-a-2");
  model::Node relabelled = gpu_node();
  relabelled.metadata.labels["node.kubernetes.io/instance-type"] = "p5.48xlarge";
  model::Node cordoned = gpu_node();
  cordoned.metadata.annotations[std::string(device::kDeviceCordonAnnotation)] = "GPU-a";
  model::Node reregistered =
      NodeBuilder("template-node-for-a-1").gpus({Gpu{"GPU-a"}.with_mem(8000)}).build();
  model::Node with_capacity = gpu_node();
  with_capacity.status.capacity["nvidia.com/gpu"] = *model::Quantity::parse("2");
  model::Node other_capacity = with_capacity;
  other_capacity.status.capacity["nvidia.com/gpu"] = *model::Quantity::parse("3");

  for (const model::Node* n :
       {&renamed, &relabelled, &cordoned, &reregistered, &with_capacity, &other_capacity}) {
    auto got = provider.describe(*n);
    EXPECT_NE(got.get(), base.get()) << n->metadata.name;
    EXPECT_EQ(*got, read_registered_description(*n, *registry)) << n->metadata.name;
  }
  EXPECT_EQ(provider.describe(cordoned)->description.cordoned.count("GPU-a"), 1u);
}

// Lengths and counts are part of the key: moving bytes between a key and its value, or an
// entry from the labels to the annotations, is another node.
TEST(DescriptionCache, BoundariesAreNotAmbiguous) {
  DescriptionCache cache;
  model::Node a = NodeBuilder("n").annotate("ab", "c").build();
  model::Node b = NodeBuilder("n").annotate("a", "bc").build();
  model::Node labelled = NodeBuilder("n").build();
  labelled.metadata.labels["ab"] = "c";
  int made = 0;
  auto make = [&] {
    ++made;
    return DescriptionResult{};
  };
  DescriptionCache::Key ka(a), kb(b), kl(labelled);
  auto ea = cache.get(ka, "t", make);
  auto eb = cache.get(kb, "t", make);
  auto el = cache.get(kl, "t", make);
  EXPECT_EQ(made, 3);
  EXPECT_NE(ea.get(), eb.get());
  EXPECT_NE(ea.get(), el.get());
  EXPECT_EQ(cache.get(ka, "t", make).get(), ea.get());
  EXPECT_EQ(made, 3);
}

TEST(DescriptionCache, TagsSeparateEntriesOfOneNode) {
  DescriptionCache cache;
  model::Node n = gpu_node();
  DescriptionCache::Key key(n);
  DescriptionResult tagged;
  tagged.message = "one";
  auto one = cache.get(key, "one", [&] { return tagged; });
  tagged.message = "two";
  auto two = cache.get(key, "two", [&] { return tagged; });
  EXPECT_EQ(one->message, "one");
  EXPECT_EQ(two->message, "two");
  EXPECT_EQ(cache.get(key, "one", [&] { return DescriptionResult{}; }).get(), one.get());
}

TEST(DescriptionCache, AFullCacheStartsOverAndEntriesStayValidForTheirHolders) {
  DescriptionCache cache(/*max_entries=*/2);
  std::vector<DescriptionCache::Entry> held;
  for (int i = 0; i < 5; ++i) {
    model::Node n = NodeBuilder("n" + std::to_string(i)).build();
    DescriptionCache::Key key(n);
    held.push_back(cache.get(key, "t", [&] {
      DescriptionResult r;
      r.message = n.metadata.name;
      return r;
    }));
    EXPECT_LE(cache.size(), 2u);
  }
  for (int i = 0; i < 5; ++i) EXPECT_EQ(held[i]->message, "n" + std::to_string(i));
}

// A describer that counts what it describes, whose state the test moves. Racing first lookups
// may each describe (the product allows it), so the count is atomic.
struct CountingDescriber {
  std::shared_ptr<const DescriptionResult> describe(const KeyedNode& keyed) const {
    return keyed.described.get(id, now, [&] {
      ++described;
      auto r = std::make_shared<DescriptionResult>();
      r->message = keyed.node.metadata.name + "@" + std::to_string(now);
      return r;
    });
  }
  const uint64_t id = DescriptionMemo::new_describer();
  uint64_t now = 0;
  mutable std::atomic<int> described{0};
};

TEST(DescriptionMemo, AKeyedNodeIsDescribedOncePerDescriberState) {
  const KeyedNode keyed(gpu_node("n"));
  CountingDescriber describer;
  auto first = describer.describe(keyed);
  EXPECT_EQ(describer.describe(keyed).get(), first.get());
  EXPECT_EQ(describer.described, 1);
  EXPECT_EQ(first->message, "n@0");

  // A new state is described anew; going back finds what was said then.
  describer.now = 7;
  EXPECT_EQ(describer.describe(keyed)->message, "n@7");
  EXPECT_EQ(describer.described, 2);
  describer.now = 0;
  EXPECT_EQ(describer.describe(keyed).get(), first.get());
  EXPECT_EQ(describer.described, 2);

  // Once every slot is taken, further states are described each time, still correctly.
  for (uint64_t s = 1; s <= 6; ++s) {
    describer.now = 100 + s;
    EXPECT_EQ(describer.describe(keyed)->message, "n@" + std::to_string(100 + s));
  }
  const int after_fill = describer.described.load();
  EXPECT_EQ(describer.describe(keyed)->message, "n@106");
  EXPECT_EQ(describer.described, after_fill + 1);
  describer.now = 7;
  EXPECT_EQ(describer.describe(keyed)->message, "n@7");
  EXPECT_EQ(describer.described, after_fill + 1);
}

TEST(DescriptionMemo, DescribersDoNotSeeEachOthersAnswers) {
  const KeyedNode keyed(gpu_node("n"));
  CountingDescriber one, two;
  two.now = 0;  // the same state number, another describer
  auto from_one = one.describe(keyed);
  auto from_two = two.describe(keyed);
  EXPECT_NE(from_one.get(), from_two.get());
  EXPECT_EQ(one.described, 1);
  EXPECT_EQ(two.described, 1);
}

TEST(DescriptionMemo, ConcurrentFirstLookupsAgree) {
  const KeyedNode keyed(gpu_node("n"));
  CountingDescriber describer;
  std::vector<std::shared_ptr<const DescriptionResult>> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) got[t] = describer.describe(keyed);
    });
  }
  for (auto& th : threads) th.join();
  // Racing first lookups may each describe, but one answer is kept and then given to all.
  auto kept = describer.describe(keyed);
  for (const auto& g : got) EXPECT_EQ(g.get(), kept.get());
}

// Requests are served on several threads; every thread sees the same description.
TEST(RegisteredDescriber, ConcurrentLookupsAgree) {
  auto registry = nvidia_registry();
  RegisteredDescriber provider(*registry);
  const DescriptionResult expected = read_registered_description(gpu_node(), *registry);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto got = provider.describe(gpu_node("n" + std::to_string((i + t) % 7)));
        auto ref =
            read_registered_description(gpu_node("n" + std::to_string((i + t) % 7)), *registry);
        if (!(*got == ref)) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(provider.describe(gpu_node())->description.devices, expected.description.devices);
}

}  // namespace
}  // namespace hamisim::fit::testing
