// Dynamic MIG placement, Fit and commit (hami-device-model.md §3.7, §4.5;
// hami-scheduler-core.md §5.5).

#include <gtest/gtest.h>

#include "device/nvidia/mig.h"
#include "fit_test_support.h"

namespace hamisim::fit::testing {
namespace nvidia_mig_test {

using device::ContainerDevice;
using device::MigPlacement;
using device::nvidia::NvidiaBackend;
using device::nvidia::ordered_placements;
using device::nvidia::placements_overlap;
using device::nvidia::select_mig_candidate;

// §3.7: half-open intervals.
TEST(MigPlacement, OverlapIsHalfOpen) {
  EXPECT_TRUE(placements_overlap({0, 2}, {1, 1}));
  EXPECT_TRUE(placements_overlap({0, 4}, {0, 2}));
  EXPECT_FALSE(placements_overlap({0, 2}, {2, 2}));
  EXPECT_FALSE(placements_overlap({4, 4}, {0, 4}));
}

// §3.7: 1g.* and 3g.* by descending start, others ascending.
TEST(MigPlacement, OrderedPlacementsPerProfileFamily) {
  auto profiles = a100_mig_profiles();
  auto starts = [](const std::vector<MigPlacement>& ps) {
    std::vector<uint32_t> out;
    for (const auto& p : ps) out.push_back(p.start);
    return out;
  };
  EXPECT_EQ(starts(ordered_placements(profiles[0])), (std::vector<uint32_t>{6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(starts(ordered_placements(profiles[1])), (std::vector<uint32_t>{0, 2, 4}));
  EXPECT_EQ(starts(ordered_placements(profiles[2])), (std::vector<uint32_t>{4, 0}));
}

// §3.7: smallest memoryMB, then fewest slices (stable), with memoryMB >= request.
TEST(MigPlacement, CandidatePrefersSmallestMemoryThenFewestSlices) {
  auto profiles = a100_mig_profiles();
  device::MigProfile wide = profiles[1];  // same memory as 2g.10gb, more slices
  wide.name = "4g.10gb";
  wide.slice_count = 4;
  wide.placements = {{0, 4}};
  std::vector<device::MigProfile> ps{wide, profiles[2], profiles[1], profiles[0]};
  auto c = select_mig_candidate(ps, {}, 6000);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->profile->name, "2g.10gb");
}

// §3.7 [verified]: the A100-40GB commit sequence on an empty GPU.
TEST(MigCommit, VerifiedA100Sequence) {
  NvidiaBackend backend;
  DeviceDescription inv = description_of({mig_gpu("GPU-a")});
  NodeUsage u = fresh_usage(inv);
  device::DeviceUsage& d = u.devices[0];
  auto commit = [&](int32_t mem) {
    ContainerDevice c;
    c.uuid = "GPU-a";
    c.type = "NVIDIA";
    c.usedmem = mem;
    Status s = backend.add_usage(d, c);
    return std::make_pair(s.ok(), c);
  };
  auto [ok1, c1] = commit(10000);
  ASSERT_TRUE(ok1);
  EXPECT_EQ(c1.mig_profile, "2g.10gb");
  EXPECT_EQ(c1.mig_placement, (MigPlacement{0, 2}));
  EXPECT_EQ(c1.usedmem, 10240);
  EXPECT_EQ(c1.usedcores, 28);

  auto [ok2, c2] = commit(4000);
  ASSERT_TRUE(ok2);
  EXPECT_EQ(c2.mig_profile, "1g.5gb");
  EXPECT_EQ(c2.mig_placement, (MigPlacement{6, 1}));

  ContainerDevice fail;
  fail.uuid = "GPU-a";
  fail.usedmem = 20000;
  Status s = backend.add_usage(d, fail);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "MIG profile and placement allocation failed");

  auto [ok4, c4] = commit(5000);
  ASSERT_TRUE(ok4);
  EXPECT_EQ(c4.mig_profile, "1g.5gb");
  EXPECT_EQ(c4.mig_placement, (MigPlacement{5, 1}));
  auto [ok5, c5] = commit(5000);
  ASSERT_TRUE(ok5);
  EXPECT_EQ(c5.mig_placement, (MigPlacement{4, 1}));

  // §4.2: the usual counters move by the profile's memory and cores; the failed commit
  // changed nothing.
  EXPECT_EQ(d.used, 4);
  EXPECT_EQ(d.usedmem, 10240 + 3 * 5120);
  EXPECT_EQ(d.usedcores, 28 + 3 * 14);
  EXPECT_EQ(d.mig_in_use.size(), 4u);
}

// §3.7 (TestSelectMigPlacementUsesBalancedPacking): 3g->4, 2g->0, 1g->3, 1g->2.
TEST(MigCommit, SequentialBalancedPacking) {
  auto profiles = a100_mig_profiles();
  std::vector<MigPlacement> occupied;
  std::vector<uint32_t> starts;
  for (int64_t mem : {20000, 10000, 5000, 5000}) {
    auto c = select_mig_candidate(profiles, occupied, mem);
    ASSERT_TRUE(c) << mem;
    starts.push_back(c->placement.start);
    occupied.push_back(c->placement);
  }
  EXPECT_EQ(starts, (std::vector<uint32_t>{4, 0, 3, 2}));
}

// §3.7 + §4.5 end to end: four containers on one MIG GPU; the devices string carries the
// profile memory/cores and hami.io/vgpu-mig-allocations names each instance.
TEST(MigFit, SequentialContainersAndAllocationAnnotation) {
  FitHarness h({mig_gpu("GPU-mig")});
  model::Pod pod = PodBuilder()
                       .app(gpu_container("c0", 1, 20000))
                       .app(gpu_container("c1", 1, 10000))
                       .app(gpu_container("c2", 1, 5000))
                       .app(gpu_container("c3", 1, 5000))
                       .build();
  NodeFit f = h.fit(pod);
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(devices_annotation(f),
            "GPU-mig,NVIDIA,20480,42:;GPU-mig,NVIDIA,10240,28:;GPU-mig,NVIDIA,5120,14:;"
            "GPU-mig,NVIDIA,5120,14:;");
  auto it = f.annotations.find(std::string(device::kMigAllocationsAnnotation));
  ASSERT_NE(it, f.annotations.end());
  auto mig = device::decode_mig_allocations(it->second);
  ASSERT_TRUE(mig) << mig.error().message;
  ASSERT_EQ(mig->size(), 4u);
  const std::vector<std::pair<std::string, uint32_t>> want{
      {"3g.20gb", 4}, {"2g.10gb", 0}, {"1g.5gb", 3}, {"1g.5gb", 2}};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ((*mig)[i].container_index, static_cast<int64_t>(i));
    EXPECT_EQ((*mig)[i].device_index, 0);
    EXPECT_EQ((*mig)[i].gpu_uuid, "GPU-mig");
    EXPECT_EQ((*mig)[i].profile, want[i].first);
    EXPECT_EQ((*mig)[i].placement.start, want[i].second);
    EXPECT_FALSE((*mig)[i].mig_uuid.has_value());
  }
}

// §3.2 step 18 / §3.7: one container gets several instances of one MIG GPU, and the
// NodeInsufficientDevice pre-check is skipped for MIG requests (2 GPUs wanted, 1 present).
TEST(MigFit, SeveralInstancesOfOneContainerOnOneGpu) {
  FitHarness h({mig_gpu("GPU-mig")});
  NodeFit f = h.fit(PodBuilder().app(gpu_container("main", 2, 5000)).build());
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(devices_annotation(f), "GPU-mig,NVIDIA,5120,14:GPU-mig,NVIDIA,5120,14:;");
  auto mig = device::decode_mig_allocations(
      f.annotations.at(std::string(device::kMigAllocationsAnnotation)));
  ASSERT_TRUE(mig);
  ASSERT_EQ(mig->size(), 2u);
  EXPECT_EQ((*mig)[0].device_index, 0);
  EXPECT_EQ((*mig)[0].placement, (MigPlacement{6, 1}));
  EXPECT_EQ((*mig)[1].device_index, 1);
  EXPECT_EQ((*mig)[1].placement, (MigPlacement{5, 1}));
}

// §3.3 counting rule: a MIG GPU is counted more than once (selected, then rejected on the
// revisit), so numerators can exceed the denominator.
TEST(MigFit, RevisitRejectionCountedAgain) {
  FitHarness h({mig_gpu("GPU-mig")});
  NodeFit f = h.fit(PodBuilder().app(gpu_container("main", 3, 20000)).build());
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(f.reason, "1/1 CardMigTopologyInfeasible, 2/1 AllocatedCardsInsufficientRequest");
}

// §3.2 step 15: no free placement for the request -> CardMigTopologyInfeasible.
TEST(MigFit, TopologyInfeasibleWithExistingInstances) {
  FitHarness h({mig_gpu("GPU-mig")});
  h.add_existing(
      PodBuilder("old")
          .node("node1")
          .allocated("GPU-mig,NVIDIA,10240,28:GPU-mig,NVIDIA,5120,14:;")
          .mig_allocations(
              R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-mig","profile":"2g.10gb","placement":{"start":0,"size":2}},)"
              R"({"containerIndex":0,"deviceIndex":1,"gpuUUID":"GPU-mig","profile":"1g.5gb","placement":{"start":6,"size":1}}])")
          .build());
  EXPECT_TRUE(h.device("GPU-mig").health);
  EXPECT_EQ(h.device("GPU-mig").mig_in_use.size(), 2u);
  NodeFit f = h.fit(PodBuilder().app(gpu_container("main", 1, 20000)).build());
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(f.reason, "1/1 CardMigTopologyInfeasible");
  // A small instance still fits, in the next free high slot.
  NodeFit small = h.fit(PodBuilder().app(gpu_container("main", 1, 5000)).build());
  ASSERT_TRUE(small.fits) << small.reason;
  auto mig = device::decode_mig_allocations(
      small.annotations.at(std::string(device::kMigAllocationsAnnotation)));
  ASSERT_TRUE(mig);
  EXPECT_EQ((*mig)[0].placement, (MigPlacement{5, 1}));
}

// §3.7: percent requests use the full GPU memory (25 % of 40960 = 10240 -> 2g.10gb).
TEST(MigFit, PercentRequestUsesFullGpuMemory) {
  FitHarness h({mig_gpu("GPU-mig")});
  NodeFit f = h.fit(PodBuilder().app(container("main", {{kGpu, "1"}, {kGpuMemPct, "25"}})).build());
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(devices_annotation(f), "GPU-mig,NVIDIA,10240,28:;");
}

// §3.7: the normal checks still apply to MIG GPUs: cores (Totalcore 100 vs profile cores)...
TEST(MigFit, CoreCheckAppliesToMigGpu) {
  FitHarness h({mig_gpu("GPU-mig")});
  h.add_existing(
      PodBuilder("old")
          .node("node1")
          .allocated("GPU-mig,NVIDIA,5120,14:;")
          .mig_allocations(
              R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-mig","profile":"1g.5gb","placement":{"start":6,"size":1}}])")
          .build());
  NodeFit f = h.fit(PodBuilder().app(gpu_container("main", 1, 5000, 100)).build());
  EXPECT_EQ(f.reason, "1/1 CardInsufficientCore");
}

// ...and the exclusive rule (Coresreq 100 conflicts with any existing instance).
TEST(MigFit, ExclusiveRuleAppliesToMigGpu) {
  FitHarness h({mig_gpu("GPU-mig")});
  h.add_existing(
      PodBuilder("old")
          .node("node1")
          .allocated("GPU-mig,NVIDIA,5120,0:;")
          .mig_allocations(
              R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-mig","profile":"1g.5gb","placement":{"start":6,"size":1}}])")
          .build());
  NodeFit f = h.fit(PodBuilder().app(gpu_container("main", 1, 5000, 100)).build());
  EXPECT_EQ(f.reason, "1/1 ExclusiveDeviceAllocateConflict");
}

// §3.1 step 4: a pod whose vgpu-mode excludes mig is not a MIG request, so the
// NodeInsufficientDevice pre-check applies.
TEST(MigFit, NonMigVgpuModeIsNotMigRequest) {
  FitHarness h({mig_gpu("GPU-mig")});
  model::Pod pod = PodBuilder()
                       .annotate(std::string(device::nvidia::kVgpuModeAnnotation), "hami-core")
                       .app(gpu_container("main", 2, 5000))
                       .build();
  EXPECT_EQ(h.fit(pod).reason, "NodeInsufficientDevice");
  model::Pod mig = PodBuilder()
                       .annotate(std::string(device::nvidia::kVgpuModeAnnotation), "mig")
                       .app(gpu_container("main", 2, 5000))
                       .build();
  EXPECT_TRUE(h.fit(mig).fits);
}

// §3.7 Fit check: instances selected for this container on *other* GPUs are ignored: the
// first scanned GPU takes two 3g instances (its revisit then fails), the second GPU still
// offers both of its 3g slots.
TEST(MigFit, ReplayOnlyConsidersSameGpu) {
  FitHarness h({mig_gpu("GPU-m1"), mig_gpu("GPU-m2")});
  NodeFit f = h.fit(PodBuilder().app(gpu_container("main", 3, 20000)).build());
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(devices_annotation(f),
            "GPU-m2,NVIDIA,20480,42:GPU-m2,NVIDIA,20480,42:GPU-m1,NVIDIA,20480,42:;");
}

// §4.3 + §4.5: the annotations written for a MIG fit, read back as an existing pod, occupy
// the same placements; the next pod gets the next free slot.
TEST(MigFit, WrittenAllocationReadBackAsUsage) {
  FitHarness h({mig_gpu("GPU-mig")});
  model::Pod first = PodBuilder("first").app(gpu_container("main", 1, 10000)).build();
  NodeFit f = h.fit(first);
  ASSERT_TRUE(f.fits) << f.reason;
  PodBuilder placed("first");
  placed.app(gpu_container("main", 1, 10000)).node("node1");
  for (const auto& [k, v] : f.annotations) placed.annotate(k, v);
  h.add_existing(placed.build());
  const auto& d = h.device("GPU-mig");
  EXPECT_TRUE(d.health);
  ASSERT_EQ(d.mig_in_use.size(), 1u);
  EXPECT_EQ(d.mig_in_use[0].profile, "2g.10gb");
  EXPECT_EQ(d.mig_in_use[0].placement, (MigPlacement{0, 2}));
  EXPECT_FALSE(d.mig_in_use[0].runtime_ready);
  EXPECT_EQ(d.usedmem, 10240);
  EXPECT_EQ(d.usedcores, 28);
  NodeFit second = h.fit(PodBuilder("second").app(gpu_container("main", 1, 10000)).build());
  ASSERT_TRUE(second.fits) << second.reason;
  auto mig = device::decode_mig_allocations(
      second.annotations.at(std::string(device::kMigAllocationsAnnotation)));
  ASSERT_TRUE(mig);
  EXPECT_EQ((*mig)[0].placement, (MigPlacement{2, 2}));
}

// §4.5: containers without MIG devices get no allocation entry; containerIndex is the
// positional index (init first).
TEST(MigFit, AllocationContainerIndexIsPositional) {
  FitHarness h({mig_gpu("GPU-mig")});
  model::Pod pod = PodBuilder()
                       .init(plain_container("init"))
                       .app(plain_container("side"))
                       .app(gpu_container("main", 1, 5000))
                       .build();
  NodeFit f = h.fit(pod);
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(devices_annotation(f), ";;GPU-mig,NVIDIA,5120,14:;");
  auto mig = device::decode_mig_allocations(
      f.annotations.at(std::string(device::kMigAllocationsAnnotation)));
  ASSERT_TRUE(mig);
  ASSERT_EQ(mig->size(), 1u);
  EXPECT_EQ((*mig)[0].container_index, 2);
  EXPECT_EQ((*mig)[0].device_index, 0);
}

}  // namespace nvidia_mig_test
}  // namespace hamisim::fit::testing
