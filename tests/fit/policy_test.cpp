// Device score, node score and GPU ordering (hami-device-model.md §5.1–§5.4;
// hami-scheduler-core.md §5.4, §5.7, §6).

#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "fit/policy.h"
#include "fit_test_support.h"

namespace hamisim::fit::testing {
namespace {

using device::ContainerDeviceRequest;
using device::ContainerRequests;
using device::DeviceUsage;
using device::kNoMemPercentage;

DeviceUsage usage(int64_t used, int32_t count, int64_t usedcores, int32_t totalcore,
                  int64_t usedmem, int32_t totalmem) {
  DeviceUsage d;
  d.id = "GPU-x";
  d.type = "NVIDIA-Tesla T4";  // a model type, not the vendor key
  d.vendor = "NVIDIA";
  d.used = used;
  d.count = count;
  d.usedcores = usedcores;
  d.totalcore = totalcore;
  d.usedmem = usedmem;
  d.totalmem = totalmem;
  return d;
}

ContainerRequests nvidia_request(int32_t mem, int32_t pct, int32_t cores, int32_t nums = 1) {
  return ContainerRequests{{"NVIDIA", ContainerDeviceRequest{nums, "NVIDIA", mem, pct, cores}}};
}

uint32_t bits(float f) {
  return std::bit_cast<uint32_t>(f);
}

// ---- §5.1 device score --------------------------------------------------------------------

// §5.1 [verified] + product.md §3 (HAMi fix #2870): float32 with the request counted for a
// model-typed device of the request's vendor: 10*(3/10 + 60/100 + 6000/16000) = 12.750001.
TEST(DeviceScore, Float32ExactWithRequestCounted) {
  const float s = device_score(usage(2, 10, 30, 100, 4000, 16000),
                               nvidia_request(2000, kNoMemPercentage, 30), ScoringWeights{});
  EXPECT_EQ(bits(s), bits(12.750001f)) << s;
  EXPECT_NE(bits(s), bits(12.75f));
}

// §5.1: the request is counted once per container, not per GPU requested (Nums ignored).
TEST(DeviceScore, RequestCountedOncePerContainer) {
  const float one = device_score(usage(2, 10, 30, 100, 4000, 16000),
                                 nvidia_request(2000, kNoMemPercentage, 30, 1), ScoringWeights{});
  const float four = device_score(usage(2, 10, 30, 100, 4000, 16000),
                                  nvidia_request(2000, kNoMemPercentage, 30, 4), ScoringWeights{});
  EXPECT_EQ(bits(one), bits(four));
}

// §5.1: requests of another vendor are not counted.
TEST(DeviceScore, OtherVendorRequestNotCounted) {
  DeviceUsage d = usage(2, 10, 30, 100, 4000, 16000);
  d.vendor = "MLU";
  const float s = device_score(d, nvidia_request(2000, kNoMemPercentage, 30), ScoringWeights{});
  EXPECT_FLOAT_EQ(s, 10.0f * (0.2f + 0.3f + 0.25f));
}

// §5.1: a percentage request counts Totalmem*pct/100 (truncated), else Memreq.
TEST(DeviceScore, PercentageRequestUsesDeviceMemory) {
  // 10*(1/10 + 0 + 8000/16000) = 6
  EXPECT_FLOAT_EQ(
      device_score(usage(0, 10, 0, 100, 0, 16000), nvidia_request(0, 50, 0), ScoringWeights{}),
      6.0f);
  // Both given: the percentage is what the score uses.
  EXPECT_FLOAT_EQ(
      device_score(usage(0, 10, 0, 100, 0, 16000), nvidia_request(3000, 50, 0), ScoringWeights{}),
      6.0f);
}

// §5.1: Count, Totalcore or Totalmem zero -> score 0.
TEST(DeviceScore, ZeroTotalsScoreZero) {
  auto req = nvidia_request(1000, kNoMemPercentage, 10);
  EXPECT_EQ(device_score(usage(1, 0, 10, 100, 10, 100), req, {}), 0.0f);
  EXPECT_EQ(device_score(usage(1, 10, 10, 0, 10, 100), req, {}), 0.0f);
  EXPECT_EQ(device_score(usage(1, 10, 10, 100, 10, 0), req, {}), 0.0f);
}

// §2.5 / §5.1: weights multiply each term.
TEST(DeviceScore, WeightsApply) {
  // 10*(2*0.5 + 0*0.5 + 1*0.25)
  const float s = device_score(usage(5, 10, 50, 100, 4000, 16000), {}, ScoringWeights{2, 0, 1});
  EXPECT_FLOAT_EQ(s, 12.5f);
}

// §2.5: hami.io/device-scoring-weights grammar.
TEST(ScoringWeights, ParsesValidAnnotation) {
  auto w = parse_scoring_weights(" memory = 3 ,slot=1, core=0");
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w->slot, 1);
  EXPECT_EQ(w->core, 0);
  EXPECT_EQ(w->memory, 3);
}

TEST(ScoringWeights, RejectsInvalidAnnotations) {
  for (const char* bad :
       {"", "slot=1,core=1", "slot=1,core=1,memory=1,slot=1", "slot=1,core=1,gpu=1",
        "slot=1,slot=1,memory=1", "slot=-1,core=1,memory=1", "slot=a,core=1,memory=1",
        "slot=0,core=0,memory=0", "slot=1,core=1,memory"}) {
    EXPECT_FALSE(parse_scoring_weights(bad)) << bad;
  }
}

// hami-scheduler-core.md §5.4 step 1: an invalid weights annotation fails the pod.
TEST(ScoringWeights, InvalidAnnotationFailsPreparation) {
  auto registry = nvidia_registry();
  model::Pod pod = PodBuilder()
                       .annotate(std::string(kDeviceScoringWeightsAnnotation), "slot=1")
                       .app(gpu_container("main", 1, 1000))
                       .build();
  auto p = prepare_pod(pod, *registry, {});
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("invalid hami.io/device-scoring-weights annotation"),
            std::string::npos);
}

// ---- §5.3 node score ----------------------------------------------------------------------

// hami-scheduler-core.md §5.7 worked values: 1 device, Count 10, 8000 MiB, 100 cores.
TEST(NodeScore, WorkedValues) {
  std::vector<DeviceUsage> idle{usage(0, 10, 0, 100, 0, 8000)};
  EXPECT_EQ(node_default_score(idle), 0.0f);
  std::vector<DeviceUsage> busy{usage(5, 10, 50, 100, 4000, 8000)};
  EXPECT_FLOAT_EQ(node_default_score(busy), 15.0f);
}

// §5.3: sums over all devices; 0 if any total is 0.
TEST(NodeScore, SumsOverDevicesAndZeroTotals) {
  std::vector<DeviceUsage> two{usage(1, 10, 25, 100, 2000, 8000), usage(0, 10, 0, 100, 0, 8000)};
  EXPECT_FLOAT_EQ(node_default_score(two), 3.0f);
  std::vector<DeviceUsage> no_core{usage(1, 10, 0, 0, 2000, 8000)};
  EXPECT_EQ(node_default_score(no_core), 0.0f);
  EXPECT_EQ(node_default_score(std::vector<DeviceUsage>{}), 0.0f);
}

// hami-scheduler-core.md §5.7 Test_Filter fixture: node1 scores 3.0, node2 8.0 (existing usage
// only); binpack picks node2, spread picks node1.
TEST(NodeScore, TestFilterFixtureChoosesNodes) {
  FitHarness node1({gpu("GPU-1a", 8000), gpu("GPU-1b", 8000)});
  FitHarness node2({gpu("GPU-2a", 8000), gpu("GPU-2b", 8000)});
  node1.add_existing(PodBuilder("e1").node("node1").allocated("GPU-1a,NVIDIA,2000,25:;").build());
  node2.add_existing(PodBuilder("e2").node("node2").allocated("GPU-2a,NVIDIA,6000,75:;").build());
  model::Pod pod = PodBuilder().app(gpu_container("main", 1, 1000, 20)).build();

  NodeFit f1 = node1.fit(pod);
  NodeFit f2 = node2.fit(pod);
  ASSERT_TRUE(f1.fits && f2.fits);
  EXPECT_FLOAT_EQ(f1.node_score, 3.0f);
  EXPECT_FLOAT_EQ(f2.node_score, 8.0f);
  const std::vector<float> scores{f1.node_score, f2.node_score};
  EXPECT_EQ(choose_node(scores, "binpack"), 1u);
  EXPECT_EQ(choose_node(scores, "spread"), 0u);
  EXPECT_EQ(choose_node(scores, "anything-else"), 1u);  // §5.4: not spread = binpack
}

// §5.4: ties go to the earliest candidate (documented deterministic rule).
TEST(NodeScore, ChooseNodeTiesGoToEarliest) {
  EXPECT_EQ(choose_node({5.0f, 5.0f, 1.0f}, "binpack"), 0u);
  EXPECT_EQ(choose_node({5.0f, 1.0f, 1.0f}, "spread"), 1u);
  EXPECT_EQ(choose_node({2.0f}, "spread"), 0u);
}

// ---- §5.2 GPU ordering ----------------------------------------------------------------------

struct Dev {
  const char* id;
  float score;
  int64_t numa;
  int64_t used;
  uint64_t index;
};

// Sorts devices built from `devs` and returns their ids in sorted order.
std::vector<std::string> sorted(const std::vector<Dev>& devs, std::string_view policy,
                                bool numa_bind = false) {
  std::vector<DeviceUsage> storage;
  std::vector<float> scores;
  for (const Dev& d : devs) {
    DeviceUsage u;
    u.id = d.id;
    u.numa = d.numa;
    u.used = d.used;
    u.index = d.index;
    storage.push_back(u);
    scores.push_back(d.score);
  }
  std::vector<DeviceUsage*> ptrs;
  for (auto& u : storage) ptrs.push_back(&u);
  sort_devices(ptrs, DeviceScores{storage.data(), scores}, policy, numa_bind);
  std::vector<std::string> out;
  for (auto* p : ptrs) out.push_back(p->id);
  return out;
}

using Ids = std::vector<std::string>;

// §5.2: spread (and anything unrecognised) -> higher score first, ties lower NUMA first.
TEST(GpuOrder, SpreadHigherScoreFirst) {
  std::vector<Dev> devs{{"a", 1, 0, 0, 0}, {"b", 5, 0, 0, 1}, {"c", 3, 1, 0, 2}, {"d", 3, 0, 0, 3}};
  EXPECT_EQ(sorted(devs, "spread"), (Ids{"b", "d", "c", "a"}));
  EXPECT_EQ(sorted(devs, "topology-aware"), (Ids{"b", "d", "c", "a"}));
  EXPECT_EQ(sorted(devs, "whatever"), (Ids{"b", "d", "c", "a"}));
  EXPECT_EQ(sorted(devs, ""), (Ids{"b", "d", "c", "a"}));
}

// §5.2: binpack -> lower score first, ties lower NUMA first.
TEST(GpuOrder, BinpackLowerScoreFirst) {
  std::vector<Dev> devs{{"a", 1, 0, 0, 0}, {"b", 5, 0, 0, 1}, {"c", 3, 1, 0, 2}, {"d", 3, 0, 0, 3}};
  EXPECT_EQ(sorted(devs, "binpack"), (Ids{"a", "d", "c", "b"}));
}

// §5.2: numa-bind + binpack -> higher NUMA first, same NUMA lower score first.
TEST(GpuOrder, NumaBindBinpack) {
  std::vector<Dev> devs{{"a", 1, 0, 0, 0}, {"b", 5, 1, 0, 1}, {"c", 3, 1, 0, 2}, {"d", 9, 0, 0, 3}};
  EXPECT_EQ(sorted(devs, "binpack", true), (Ids{"c", "b", "a", "d"}));
}

// §5.2: numa-bind + spread -> lower NUMA first, same NUMA higher score first.
TEST(GpuOrder, NumaBindSpread) {
  std::vector<Dev> devs{{"a", 1, 0, 0, 0}, {"b", 5, 1, 0, 1}, {"c", 3, 1, 0, 2}, {"d", 9, 0, 0, 3}};
  EXPECT_EQ(sorted(devs, "spread", true), (Ids{"d", "a", "b", "c"}));
  EXPECT_EQ(sorted(devs, "topology-aware", true), (Ids{"d", "a", "b", "c"}));
}

// §5.2: mutex -> higher Used first, ties lower NUMA first; numa-bind is ignored.
TEST(GpuOrder, MutexBusyFirstIgnoresNumaBind) {
  std::vector<Dev> devs{
      {"idle1", 9, 1, 0, 0}, {"busy", 1, 1, 3, 1}, {"idle0", 1, 0, 0, 2}, {"mid", 5, 0, 1, 3}};
  EXPECT_EQ(sorted(devs, "mutex"), (Ids{"busy", "mid", "idle0", "idle1"}));
  EXPECT_EQ(sorted(devs, "mutex", true), (Ids{"busy", "mid", "idle0", "idle1"}));
}

// §5.2: single policies use a stable sort: equal keys keep their input order.
TEST(GpuOrder, SinglePolicyTiesKeepInputOrder) {
  std::vector<Dev> devs{{"x", 2, 0, 0, 9}, {"y", 2, 0, 0, 1}, {"z", 2, 0, 0, 5}};
  EXPECT_EQ(sorted(devs, "spread"), (Ids{"x", "y", "z"}));
  EXPECT_EQ(sorted(devs, "binpack"), (Ids{"x", "y", "z"}));
}

// §5.2: a bare "numa" is a chain [numa]: NUMA ascending, then Index (scores ignored).
TEST(GpuOrder, BareNumaIsChain) {
  std::vector<Dev> devs{{"a", 9, 1, 0, 0}, {"b", 1, 0, 0, 3}, {"c", 5, 0, 0, 1}, {"d", 7, 1, 0, 2}};
  EXPECT_EQ(sorted(devs, "numa"), (Ids{"c", "b", "a", "d"}));
}

// §5.2: chains compare key by key in written order; final tie-break Index ascending.
TEST(GpuOrder, CommaChainsInWrittenOrder) {
  std::vector<Dev> devs{{"a", 1, 1, 0, 0}, {"b", 1, 0, 0, 1}, {"c", 3, 0, 0, 2}, {"d", 3, 1, 0, 3}};
  EXPECT_EQ(sorted(devs, "binpack,numa"), (Ids{"b", "a", "c", "d"}));
  EXPECT_EQ(sorted(devs, "numa,binpack"), (Ids{"b", "c", "a", "d"}));
  EXPECT_EQ(sorted(devs, "spread,numa"), (Ids{"c", "d", "b", "a"}));
  EXPECT_EQ(sorted(devs, "numa,spread"), (Ids{"c", "b", "d", "a"}));
}

// §5.2: tokens are trimmed and deduplicated; mutex/topology-aware are not sort keys; an
// empty chain is spread.
TEST(GpuOrder, ChainTokensTrimmedDedupedAndFiltered) {
  std::vector<Dev> devs{{"a", 1, 1, 0, 0}, {"b", 1, 0, 0, 1}, {"c", 3, 0, 0, 2}, {"d", 3, 1, 0, 3}};
  EXPECT_EQ(sorted(devs, " binpack , binpack,numa "), (Ids{"b", "a", "c", "d"}));
  EXPECT_EQ(sorted(devs, "mutex,binpack,topology-aware,numa"), (Ids{"b", "a", "c", "d"}));
  // Empty chain -> spread, then Index.
  EXPECT_EQ(sorted(devs, "mutex,topology-aware"), (Ids{"c", "d", "a", "b"}));
}

// §5.2: with numa-bind, numa moves to the front of the chain.
TEST(GpuOrder, NumaBindMovesNumaToFrontOfChain) {
  std::vector<Dev> devs{{"a", 1, 1, 0, 0}, {"b", 1, 0, 0, 1}, {"c", 3, 0, 0, 2}, {"d", 3, 1, 0, 3}};
  EXPECT_EQ(sorted(devs, "binpack,numa", true), (Ids{"b", "c", "a", "d"}));
  EXPECT_EQ(sorted(devs, "spread,binpack", true), (Ids{"c", "b", "d", "a"}));
}

// §5.2: chain ties break by Index ascending regardless of input order.
TEST(GpuOrder, ChainTieBreaksByIndex) {
  std::vector<Dev> devs{{"x", 2, 0, 0, 9}, {"y", 2, 0, 0, 1}, {"z", 2, 0, 0, 5}};
  EXPECT_EQ(sorted(devs, "spread,binpack"), (Ids{"y", "z", "x"}));
  EXPECT_EQ(sorted(devs, "numa"), (Ids{"y", "z", "x"}));
}

// §5.2 through Fit: a bare "numa" policy prefers the highest NUMA node / highest index.
TEST(GpuOrder, FitScansFromTheEndOfTheChainOrder) {
  FitHarness h({gpu("a").with_index(0).with_numa(1), gpu("b").with_index(1).with_numa(0),
                gpu("c").with_index(2).with_numa(1)});
  model::Pod pod = PodBuilder()
                       .annotate(std::string(kGpuSchedulerPolicyAnnotation), "numa")
                       .app(gpu_container("main", 1, 1000))
                       .build();
  NodeFit f = h.fit(pod);
  ASSERT_TRUE(f.fits);
  EXPECT_EQ(chosen_uuids(f, 0), Ids{"c"});
}

}  // namespace
}  // namespace hamisim::fit::testing
