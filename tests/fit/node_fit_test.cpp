// The node fit engine: init/app containers, positional annotations, determinism
// (hami-device-model.md §4.4, §4.5; hami-scheduler-core.md §5.5; product.md §3).

#include <gtest/gtest.h>

#include <tuple>

#include "device/allocation.h"
#include "fit_test_support.h"

namespace hamisim::fit::testing {
namespace {

using device::ContainerDevice;
using device::DeviceCharge;
using Ids = std::vector<std::string>;

ContainerDevice cd(std::string uuid, int32_t mem, int32_t cores) {
  ContainerDevice d;
  d.uuid = std::move(uuid);
  d.type = "NVIDIA";
  d.usedmem = mem;
  d.usedcores = cores;
  return d;
}

// ---- §4.5 positional annotation (aligned form, product.md §3) -----------------------------

// §4.5 variant (issue #2899 expected form): 1 init container without GPU + 2 app containers.
TEST(PodAnnotation, InitWithoutGpuKeepsLeadingEmptySegment) {
  FitHarness h({gpu("GPU-B"), gpu("GPU-A")});
  model::Pod pod = PodBuilder()
                       .init(plain_container("init"))
                       .app(gpu_container("c0", 1, 2500, 25))
                       .app(gpu_container("c1", 1, 2500, 25))
                       .build();
  NodeFit f = h.fit(pod);
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(devices_annotation(f), ";GPU-A,NVIDIA,2500,25:;GPU-B,NVIDIA,2500,25:;");
  EXPECT_EQ(f.annotations.at(std::string(device::kNvidiaToAllocateAnnotation)),
            devices_annotation(f));
  EXPECT_EQ(f.annotations.count(std::string(device::kMigAllocationsAnnotation)), 0u);
  // PodDevices is positional too: one entry per container, init first.
  ASSERT_EQ(f.devices.at("NVIDIA").size(), 3u);
  EXPECT_TRUE(f.devices.at("NVIDIA")[0].empty());
}

// §4.5 variant: container 0 has no GPU, container 1 has two GPUs (selection order kept).
TEST(PodAnnotation, FirstContainerWithoutGpuSecondWithTwo) {
  FitHarness h({gpu("GPU-B"), gpu("GPU-A")});
  model::Pod pod =
      PodBuilder().app(plain_container("c0")).app(gpu_container("c1", 2, 2500, 25)).build();
  NodeFit f = h.fit(pod);
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(devices_annotation(f), ";GPU-A,NVIDIA,2500,25:GPU-B,NVIDIA,2500,25:;");
}

// §4.5 worked example: two app containers on one GPU.
TEST(PodAnnotation, TwoContainersOnOneGpu) {
  const std::string uuid = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448";
  FitHarness h({gpu(uuid, 32768)});
  model::Pod pod = PodBuilder()
                       .app(gpu_container("c0", 1, 3000, 30))
                       .app(gpu_container("c1", 1, 5000, 50))
                       .build();
  NodeFit f = h.fit(pod);
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(devices_annotation(f), uuid + ",NVIDIA,3000,30:;" + uuid + ",NVIDIA,5000,50:;");
}

// product.md §3 aligned form: a trailing container without GPU keeps its empty segment.
TEST(PodAnnotation, TrailingContainerWithoutGpuKeepsSegment) {
  FitHarness h({gpu("GPU-A")});
  model::Pod pod =
      PodBuilder().app(gpu_container("c0", 1, 1000)).app(plain_container("c1")).build();
  NodeFit f = h.fit(pod);
  ASSERT_TRUE(f.fits);
  EXPECT_EQ(devices_annotation(f), "GPU-A,NVIDIA,1000,0:;;");
}

// hami-scheduler-core.md §5.1: a pod with no device request fits without annotations.
TEST(PodAnnotation, PodWithoutDevicesFitsWithoutAnnotations) {
  FitHarness h({gpu("GPU-A")});
  NodeFit f = h.fit(PodBuilder().app(plain_container("c0")).build());
  EXPECT_TRUE(f.fits);
  EXPECT_TRUE(f.annotations.empty());
}

// ---- §4.4 / hami-scheduler-core.md §5.5 init containers -----------------------------------

// §4.4: each init container is fitted against the pre-pod usage on its own (they run one after
// another); app containers are fitted against the pre-pod usage too, not on top of init.
TEST(InitContainers, FittedIndependentlyAgainstPrePodUsage) {
  FitHarness h({gpu("GPU-A", 10000)});
  model::Pod pod = PodBuilder()
                       .init(gpu_container("i0", 1, 8000))
                       .init(gpu_container("i1", 1, 8000))
                       .app(gpu_container("c0", 1, 8000))
                       .build();
  NodeFit f = h.fit(pod);
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(devices_annotation(f),
            "GPU-A,NVIDIA,8000,0:;GPU-A,NVIDIA,8000,0:;GPU-A,NVIDIA,8000,0:;");
}

// §4.4: app containers accumulate.
TEST(InitContainers, AppContainersAccumulate) {
  FitHarness h({gpu("GPU-A", 10000)});
  model::Pod pod =
      PodBuilder().app(gpu_container("c0", 1, 6000)).app(gpu_container("c1", 1, 6000)).build();
  NodeFit f = h.fit(pod);
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(f.reason, "1/1 CardInsufficientMemory");
}

// A fit reads the node's usage and never changes it, whether the pod's requests were fitted
// against the usage itself (one request) or against a working copy (several), and whether it
// fits or not: the live filter and the planner keep usages across fits.
TEST(NodeFitUsage, AFitLeavesTheNodesUsageAsItWas) {
  FitHarness h({gpu("GPU-B", 10000), gpu("GPU-A", 10000), mig_gpu("GPU-M")});
  h.book("GPU-A", 1, 2000, 10);
  auto snapshot = [&] {
    std::vector<std::tuple<std::string, int64_t, int64_t, int64_t, size_t>> out;
    for (const auto& d : h.usage().devices)
      out.emplace_back(d.id, d.used, d.usedmem, d.usedcores, d.mig_in_use.size());
    return out;
  };
  const auto before = snapshot();
  const model::Pod one = PodBuilder().app(gpu_container("c", 1, 3000)).build();
  const model::Pod two =
      PodBuilder().app(gpu_container("c0", 1, 3000)).app(gpu_container("c1", 1, 3000)).build();
  const model::Pod init =
      PodBuilder().init(gpu_container("i", 1, 3000)).app(gpu_container("c", 2, 3000)).build();
  const model::Pod too_big = PodBuilder().app(gpu_container("c", 1, 90000)).build();
  for (const model::Pod* pod : {&one, &two, &init, &too_big}) {
    NodeFit f = h.fit(*pod);
    EXPECT_EQ(f.fits, pod != &too_big) << f.reason;
    EXPECT_EQ(snapshot(), before);
  }
  // Fitting the same pod again gives the same answer (nothing leaked from the last fit).
  EXPECT_EQ(devices_annotation(h.fit(two)), devices_annotation(h.fit(two)));
}

// hami-scheduler-core.md §5.5 step 3: the pre-pod usage includes existing pods; an init
// container that does not fit fails the node with its reason.
TEST(InitContainers, InitSeesExistingUsageAndFailsNode) {
  FitHarness h({gpu("GPU-A", 10000)});
  h.add_existing(PodBuilder("old").node("node1").allocated("GPU-A,NVIDIA,3000,10:;").build());
  model::Pod pod =
      PodBuilder().init(gpu_container("i0", 1, 8000)).app(gpu_container("c0", 1, 1000)).build();
  NodeFit f = h.fit(pod);
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(f.reason, "1/1 CardInsufficientMemory");
  EXPECT_TRUE(f.devices.empty());
  EXPECT_TRUE(f.annotations.empty());
}

// §4.4: init allocations are prepended (positional, init first), several GPUs per container.
TEST(InitContainers, InitAllocationsPrependedPositionally) {
  FitHarness h({gpu("GPU-B"), gpu("GPU-A")});
  model::Pod pod = PodBuilder()
                       .init(gpu_container("i0", 2, 1000, 10))
                       .init(plain_container("i1"))
                       .app(gpu_container("c0", 1, 2000, 20))
                       .build();
  NodeFit f = h.fit(pod);
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(devices_annotation(f),
            "GPU-A,NVIDIA,1000,10:GPU-B,NVIDIA,1000,10:;;GPU-A,NVIDIA,2000,20:;");
}

// hami-scheduler-core.md §5.5 step 4: the node score reflects existing usage only, not this
// pod's init or app containers.
TEST(InitContainers, NodeScoreIsPrePod) {
  FitHarness h({gpu("GPU-A", 8000)});
  h.add_existing(PodBuilder("old").node("node1").allocated("GPU-A,NVIDIA,4000,50:;").build());
  model::Pod pod = PodBuilder()
                       .init(gpu_container("i0", 1, 1000, 10))
                       .app(gpu_container("c0", 1, 1000, 10))
                       .build();
  NodeFit f = h.fit(pod);
  ASSERT_TRUE(f.fits);
  // 10*(1/10 + 50/100 + 4000/8000)
  EXPECT_FLOAT_EQ(f.node_score, 11.0f);
}

// §4.4 CollapseInitContainerUsage: init = max (slots 1), app = sum (slots = app containers on
// the GPU), effective = element-wise max, sorted by UUID.
TEST(InitContainers, CollapseSemantics) {
  device::PodDevices pd;
  pd["NVIDIA"] = {
      {cd("GPU-B", 8000, 10)},                        // init 0
      {cd("GPU-B", 2000, 50)},                        // init 1
      {cd("GPU-B", 3000, 20)},                        // app
      {cd("GPU-B", 3000, 20), cd("GPU-A", 1000, 5)},  // app
      {},                                             // app without GPU
  };
  auto out = device::collapse_init_container_usage(pd, 2);
  ASSERT_EQ(out.count("NVIDIA"), 1u);
  const auto& list = out.at("NVIDIA");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].uuid, "GPU-A");
  EXPECT_EQ(list[0].usedmem, 1000);
  EXPECT_EQ(list[0].usedcores, 5);
  EXPECT_EQ(list[0].slots, 1);
  EXPECT_EQ(list[1].uuid, "GPU-B");
  EXPECT_EQ(list[1].usedmem, 8000);  // max(init 8000, app 6000)
  EXPECT_EQ(list[1].usedcores, 50);  // max(init 50, app 40)
  EXPECT_EQ(list[1].slots, 2);       // two app containers
}

// §4.4: a GPU used only by init containers costs one slot; only app usage -> app sum.
TEST(InitContainers, CollapseInitOnlyAndAppOnly) {
  device::PodDevices pd;
  pd["NVIDIA"] = {{cd("GPU-I", 4000, 40)}, {cd("GPU-I", 6000, 10)}, {cd("GPU-P", 100, 1)}};
  auto out = device::collapse_init_container_usage(pd, 2);
  const auto& list = out.at("NVIDIA");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].uuid, "GPU-I");
  EXPECT_EQ(list[0].usedmem, 6000);
  EXPECT_EQ(list[0].usedcores, 40);
  EXPECT_EQ(list[0].slots, 1);
  EXPECT_EQ(list[1].uuid, "GPU-P");
  EXPECT_EQ(list[1].slots, 1);
}

// §4.4 + §4.3: the pod's own fit, once recorded, books the collapsed charge on the node.
TEST(InitContainers, RecordedFitBooksCollapsedUsage) {
  FitHarness h({gpu("GPU-A", 10000)});
  model::Pod pod = PodBuilder("p")
                       .init(gpu_container("i0", 1, 8000, 30))
                       .app(gpu_container("c0", 1, 1000, 10))
                       .app(gpu_container("c1", 1, 2000, 20))
                       .build();
  NodeFit f = h.fit(pod);
  ASSERT_TRUE(f.fits) << f.reason;
  model::Pod placed = PodBuilder("p")
                          .init(gpu_container("i0", 1, 8000, 30))
                          .app(gpu_container("c0", 1, 1000, 10))
                          .app(gpu_container("c1", 1, 2000, 20))
                          .node("node1")
                          .allocated(devices_annotation(f))
                          .build();
  h.add_existing(placed);
  const auto& d = h.device("GPU-A");
  EXPECT_EQ(d.used, 2);
  EXPECT_EQ(d.usedmem, 8000);
  EXPECT_EQ(d.usedcores, 30);
}

// ---- determinism (engineering.md: same input, same output, same order) --------------------

NodeFit run_complex_fit() {
  std::vector<Gpu> gpus;
  for (int i = 0; i < 16; ++i) {
    gpus.push_back(
        gpu("GPU-" + std::to_string(i)).with_index(static_cast<uint64_t>(i)).with_numa(i / 8));
  }
  FitHarness h(gpus);
  h.add_existing(
      PodBuilder("old").node("n").allocated("GPU-3,NVIDIA,4000,20:GPU-9,NVIDIA,4000,20:;").build());
  model::Pod pod = PodBuilder()
                       .annotate("nvidia.com/numa-bind", "true")
                       .init(gpu_container("i0", 2, 3000, 10))
                       .app(gpu_container("c0", 3, 2000, 20))
                       .app(gpu_container("c1", 4, 1000, 5))
                       .app(container("c2", {{kGpu, "2"}, {kGpuMemPct, "30"}}))
                       .build();
  return h.fit(pod);
}

TEST(Determinism, SameInputSameOutput) {
  NodeFit first = run_complex_fit();
  ASSERT_TRUE(first.fits) << first.reason;
  for (int i = 0; i < 5; ++i) {
    NodeFit again = run_complex_fit();
    EXPECT_EQ(again.fits, first.fits);
    EXPECT_EQ(again.reason, first.reason);
    EXPECT_EQ(again.annotations, first.annotations);
    EXPECT_EQ(again.devices, first.devices);
    EXPECT_EQ(again.node_score, first.node_score);
  }
}

TEST(Determinism, SameFailureReasonEveryRun) {
  auto run = [] {
    std::vector<Gpu> gpus;
    for (int i = 0; i < 14; ++i) gpus.push_back(gpu("G" + std::to_string(i), 1000 + 500 * (i % 5)));
    FitHarness h(gpus);
    return h.fit(PodBuilder().app(gpu_container("c", 6, 2500)).build());
  };
  NodeFit a = run();
  EXPECT_FALSE(a.fits);
  EXPECT_EQ(a.reason, "5/14 AllocatedCardsInsufficientRequest, 9/14 CardInsufficientMemory");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run().reason, a.reason);
}

// A caller that fits many nodes asks for no reason text: a backend's failure leaves its counts,
// whose text is the one a fit with text gives; a node-level failure keeps its text.
TEST(ReasonText, LeftToTheCallerRendersTheSameText) {
  std::vector<Gpu> gpus;
  for (int i = 0; i < 14; ++i) gpus.push_back(gpu("G" + std::to_string(i), 1000 + 500 * (i % 5)));
  FitHarness h(gpus);
  const model::Pod pod = PodBuilder().app(gpu_container("c", 6, 2500)).build();
  auto prepared = prepare_pod(pod, h.registry(), {});
  ASSERT_TRUE(prepared);
  const NodeFit with = fit_pod(*prepared, h.usage(), h.description(), h.registry());
  const NodeFit without = fit_pod(*prepared, h.usage(), h.description(), h.registry(), nullptr, {},
                                  /*with_annotations=*/false, /*with_reason_text=*/false);
  EXPECT_FALSE(without.fits);
  EXPECT_EQ(without.reason, "");
  EXPECT_EQ(without.fit_class, with.fit_class);
  EXPECT_EQ(without.fit_class, FitClass::kInsufficientCapacity);
  EXPECT_EQ(without.reasons, with.reasons);
  EXPECT_EQ(without.reason_cards, 14u);
  EXPECT_EQ(device::format_reasons(without.reasons, without.reason_cards), with.reason);
  EXPECT_EQ(with.reason, "5/14 AllocatedCardsInsufficientRequest, 9/14 CardInsufficientMemory");

  const model::Pod too_many = PodBuilder().app(gpu_container("c", 15, 100)).build();
  auto many = prepare_pod(too_many, h.registry(), {});
  ASSERT_TRUE(many);
  const NodeFit node_level = fit_pod(*many, h.usage(), h.description(), h.registry(), nullptr, {},
                                     false, /*with_reason_text=*/false);
  EXPECT_EQ(node_level.reason, kNodeInsufficientDevice);
  EXPECT_TRUE(node_level.reasons.empty());
}

}  // namespace
}  // namespace hamisim::fit::testing
