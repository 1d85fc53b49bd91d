// Topology-aware selection (hami-device-model.md §3.8, §1.2).

#include <gtest/gtest.h>

#include "fit_test_support.h"

namespace hamisim::fit::testing {
namespace nvidia_topology_test {

using Ids = std::vector<std::string>;

// Six GPUs a..f (registered in that order) with score(f,a) = score(f,c) = 100 and every
// other pair 1, both directions.
std::vector<Gpu> six_gpus() {
  const std::vector<std::string> ids{"a", "b", "c", "d", "e", "f"};
  std::vector<Gpu> out;
  for (const auto& id : ids) {
    Gpu g = gpu(id);
    for (const auto& peer : ids) {
      if (peer == id) continue;
      const bool strong =
          (id == "f" && (peer == "a" || peer == "c")) || (peer == "f" && (id == "a" || id == "c"));
      g.pair_scores[peer] = strong ? 100 : 1;
    }
    out.push_back(g);
  }
  return out;
}

model::Pod topo_pod(int gpus, int mem = 1000) {
  return PodBuilder()
      .annotate(std::string(kGpuSchedulerPolicyAnnotation), "topology-aware")
      .app(gpu_container("main", gpus, mem))
      .build();
}

// §3.8 Test_Nvidia_GPU_Topology: scan order f,e,d,c,b,a, request 3 -> [f, c, a].
TEST(TopologyAware, WorkedExamplePicksBestConnectedSet) {
  FitHarness h(six_gpus());
  NodeFit f = h.fit(topo_pod(3));
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(chosen_uuids(f, 0), (Ids{"f", "c", "a"}));
  EXPECT_EQ(devices_annotation(f), "f,NVIDIA,1000,0:c,NVIDIA,1000,0:a,NVIDIA,1000,0:;");
}

// §1.2 + §3.8: the same, with pair scores read from hami.io/node-nvidia-score.
TEST(TopologyAware, PairScoresFromNodeAnnotation) {
  auto registry = nvidia_registry();
  std::vector<Gpu> gpus = six_gpus();
  std::string scores = "[";
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (i) scores += ",";
    scores += "{\"uuid\":\"" + gpus[i].id + "\",\"score\":{";
    bool first = true;
    for (const auto& [peer, s] : gpus[i].pair_scores) {
      if (!first) scores += ",";
      first = false;
      scores += "\"" + peer + "\":" + std::to_string(s);
    }
    scores += "}}";
    gpus[i].pair_scores.clear();
  }
  scores += "]";
  model::Node node = NodeBuilder()
                         .gpus(gpus)
                         .annotate(std::string(device::kNvidiaScoreAnnotation), scores)
                         .build();
  DescriptionResult inv = read_registered_description(node, *registry);
  ASSERT_EQ(inv.state, DescriptionResult::State::kOk) << inv.message;
  ASSERT_EQ(inv.description.devices.size(), 6u);
  EXPECT_EQ(inv.description.devices[5].pair_scores.at("a"), 100);
  NodeUsage usage = fresh_usage(inv.description);
  model::Pod pod = topo_pod(3);
  auto prepared = prepare_pod(pod, *registry, {});
  ASSERT_TRUE(prepared);
  NodeFit f = fit_pod(*prepared, usage, inv.description, *registry);
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(chosen_uuids(f, 0), (Ids{"f", "c", "a"}));
}

// §3.8: one GPU wanted among several -> the worst-connected card (lowest summed pair score,
// first in scan order on ties): b, d, e all sum to 5; e is scanned first.
TEST(TopologyAware, SingleGpuTakesWorstConnectedCard) {
  FitHarness h(six_gpus());
  NodeFit f = h.fit(topo_pod(1));
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(chosen_uuids(f, 0), (Ids{"e"}));
}

// §3.8: exactly Nums candidates -> all of them, in scan order.
TEST(TopologyAware, ExactCandidateCountTakesAllInScanOrder) {
  std::vector<Gpu> gpus = six_gpus();
  for (auto& g : gpus) {
    if (g.id != "b" && g.id != "d") g.devmem = 500;
  }
  FitHarness h(gpus);
  NodeFit f = h.fit(topo_pod(2));
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(chosen_uuids(f, 0), (Ids{"d", "b"}));
}

// §3.8: fewer candidates than wanted -> failure, AllocatedCardsInsufficientRequest = count.
TEST(TopologyAware, FewerCandidatesFails) {
  std::vector<Gpu> gpus = six_gpus();
  for (auto& g : gpus) {
    if (g.id != "b" && g.id != "d") g.devmem = 500;
  }
  FitHarness h(gpus);
  NodeFit f = h.fit(topo_pod(3));
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(f.reason, "2/6 AllocatedCardsInsufficientRequest, 4/6 CardInsufficientMemory");
}

// §3.8: missing pair scores count 0; with all zero the first combination in lexicographic
// order (the first Nums candidates in scan order) wins.
TEST(TopologyAware, MissingScoresCountZero) {
  FitHarness h({gpu("a"), gpu("b"), gpu("c"), gpu("d")});
  NodeFit f = h.fit(topo_pod(2));
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(chosen_uuids(f, 0), (Ids{"d", "c"}));
}

// §2.5: topology-aware is a token: it works inside a comma chain too.
TEST(TopologyAware, TokenInsideChain) {
  FitHarness h(six_gpus());
  model::Pod pod =
      PodBuilder()
          .annotate(std::string(kGpuSchedulerPolicyAnnotation), "spread, topology-aware")
          .app(gpu_container("main", 3, 1000))
          .build();
  NodeFit f = h.fit(pod);
  ASSERT_TRUE(f.fits) << f.reason;
  // The chain [spread] ties break by Index (all 0 here), keeping registration order.
  EXPECT_EQ(chosen_uuids(f, 0), (Ids{"f", "c", "a"}));
}

// §3.8: pair scores are read as score[first][second], first = earlier in scan order (the
// annotation may be asymmetric). Scan order c, b, a; c->a 50, b->a 40, b->c 60, others 0:
// (c,b)=score[c][b]=0, (c,a)=50, (b,a)=40 -> [c, a].
TEST(TopologyAware, CombinationUsesScanOrderedPairScores) {
  Gpu a = gpu("a"), b = gpu("b"), c = gpu("c");
  c.pair_scores = {{"a", 50}};
  b.pair_scores = {{"a", 40}, {"c", 60}};
  FitHarness h({a, b, c});
  NodeFit f = h.fit(topo_pod(2));
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(chosen_uuids(f, 0), (Ids{"c", "a"}));
}

// §3.8: the worst single card sums its own row, score[candidate][other]: c 50, b 100, a 0.
TEST(TopologyAware, WorstSingleCardUsesOwnRow) {
  Gpu a = gpu("a"), b = gpu("b"), c = gpu("c");
  c.pair_scores = {{"a", 50}};
  b.pair_scores = {{"a", 40}, {"c", 60}};
  FitHarness h({a, b, c});
  NodeFit f = h.fit(topo_pod(1));
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(chosen_uuids(f, 0), (Ids{"a"}));
}

}  // namespace nvidia_topology_test
}  // namespace hamisim::fit::testing
