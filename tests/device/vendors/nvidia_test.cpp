// NVIDIA Fit, check by check (hami-device-model.md §3.1–§3.6, §3.9, Appendix B;
// hami-scheduler-core.md §5.5).

#include <gtest/gtest.h>

#include "device/allocation.h"
#include "fit_test_support.h"

namespace hamisim::fit::testing {
namespace nvidia_test {

using device::nvidia::kNoUseGpuTypeAnnotation;
using device::nvidia::kNoUseGpuUuidAnnotation;
using device::nvidia::kNumaBindAnnotation;
using device::nvidia::kUseGpuTypeAnnotation;
using device::nvidia::kUseGpuUuidAnnotation;
using device::nvidia::kVgpuModeAnnotation;

model::Pod one_gpu_pod(int mem = 3000, int cores = 30) {
  return PodBuilder().app(gpu_container("main", 1, mem, cores)).build();
}

// Rejection reason of a single-container pod on a harness node.
std::string reason_of(const FitHarness& h, const model::Pod& pod) {
  NodeFit f = h.fit(pod);
  EXPECT_FALSE(f.fits);
  return f.reason;
}

// ---- §3.3 reason strings ----------------------------------------------------------------

// §3.3: "n/m Name" with m = number of NVIDIA devices given to Fit.
TEST(NvidiaFitReasons, AllCardsShortOfMemory) {
  FitHarness h({gpu("GPU-a", 2000), gpu("GPU-b", 2000)});
  EXPECT_EQ(reason_of(h, one_gpu_pod()), "2/2 CardInsufficientMemory");
}

// §3.3: several reasons, sorted as whole strings, joined with ", " (the reference example).
TEST(NvidiaFitReasons, MultipleReasonsSortedExample) {
  std::vector<Gpu> gpus;
  for (const char* id : {"c1", "m1", "m2", "u1", "u2", "u3", "s1", "s2", "s3", "s4"})
    gpus.push_back(gpu(id));
  FitHarness h(gpus);
  h.book("c1", 1, 0, 80);     // 20 cores left < 30
  h.book("m1", 1, 14000, 0);  // 2000 MiB left < 3000
  h.book("m2", 1, 14000, 0);
  for (const char* id : {"s1", "s2", "s3", "s4"}) h.book(id, 10, 0, 0);  // all 10 slots used
  model::Pod pod = PodBuilder()
                       .annotate(std::string(kUseGpuUuidAnnotation), "c1,m1,m2,s1,s2,s3,s4")
                       .app(gpu_container("main", 1, 3000, 30))
                       .build();
  EXPECT_EQ(reason_of(h, pod),
            "1/10 CardInsufficientCore, 2/10 CardInsufficientMemory, 3/10 CardUuidMismatch, "
            "4/10 CardTimeSlicingExhausted");
}

// §3.3: lexicographic order of whole strings puts "10/12 X" before "2/12 A".
TEST(NvidiaFitReasons, CountPrefixDominatesSortOrder) {
  std::vector<Gpu> gpus;
  for (int i = 0; i < 12; ++i) {
    Gpu g = gpu("GPU-" + std::to_string(i));
    if (i < 2) g.unhealthy();
    gpus.push_back(g);
  }
  FitHarness h(gpus);
  for (int i = 2; i < 12; ++i) h.book("GPU-" + std::to_string(i), 10, 0, 0);
  EXPECT_EQ(reason_of(h, one_gpu_pod()), "10/12 CardTimeSlicingExhausted, 2/12 CardNotHealth");
}

// §3.1 step 4: more GPUs than NVIDIA devices -> the bare NodeInsufficientDevice.
TEST(NvidiaFitReasons, NodeInsufficientDeviceIsBare) {
  FitHarness h({gpu("GPU-a"), gpu("GPU-b")});
  NodeFit f = h.fit(PodBuilder().app(gpu_container("main", 3, 1000)).build());
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(f.reason, "NodeInsufficientDevice");
  EXPECT_EQ(f.fit_class, FitClass::kInsufficientCapacity);
}

// §3.1 step 3: only devices whose type contains "nvidia" are given to Fit (and count in m).
TEST(NvidiaFitReasons, DenominatorCountsOnlyNvidiaTypedDevices) {
  FitHarness h({gpu("GPU-a", 2000), gpu("X-b").with_type("Tesla T4")});
  EXPECT_EQ(reason_of(h, one_gpu_pod()), "1/1 CardInsufficientMemory");
  // Two GPUs wanted, only one NVIDIA-typed device.
  NodeFit f = h.fit(PodBuilder().app(gpu_container("main", 2, 100)).build());
  EXPECT_EQ(f.reason, "NodeInsufficientDevice");
}

// §3.2 (after the loop) / Appendix B.7: partial selection is reported as
// AllocatedCardsInsufficientRequest = number selected.
TEST(NvidiaFitReasons, AllocatedCardsInsufficientRequestIsSelectionSize) {
  FitHarness h({gpu("GPU-a"), gpu("GPU-b", 2000), gpu("GPU-c"), gpu("GPU-d", 2000)});
  NodeFit f = h.fit(PodBuilder().app(gpu_container("main", 3, 3000)).build());
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(f.reason, "2/4 AllocatedCardsInsufficientRequest, 2/4 CardInsufficientMemory");
  EXPECT_TRUE(f.devices.empty());
}

// ---- §3.2 each check, and the order between neighbours -----------------------------------

// §3.2 step 1.
TEST(NvidiaFitChecks, UnhealthyCardRejected) {
  FitHarness h({gpu("GPU-a").unhealthy()});
  EXPECT_EQ(reason_of(h, one_gpu_pod()), "1/1 CardNotHealth");
}

// §3.2 steps 1-2: health is checked before cordon.
TEST(NvidiaFitChecks, HealthCheckedBeforeCordon) {
  FitHarness h({gpu("GPU-a").unhealthy(), gpu("GPU-b")}, {"GPU-a", "GPU-b"});
  EXPECT_EQ(reason_of(h, one_gpu_pod()), "1/2 CardCordoned, 1/2 CardNotHealth");
}

// §1.4 / §3.2 step 2: the cordon annotation is a trimmed comma list with blanks ignored.
TEST(NvidiaFitChecks, CordonAnnotationRejectsListedCards) {
  auto registry = nvidia_registry();
  model::Node node = NodeBuilder()
                         .gpus({gpu("GPU-a"), gpu("GPU-b"), gpu("GPU-c")})
                         .cordon(" GPU-a , ,GPU-c,")
                         .build();
  DescriptionResult inv = read_registered_description(node, *registry);
  ASSERT_EQ(inv.state, DescriptionResult::State::kOk) << inv.message;
  EXPECT_EQ(inv.description.cordoned, (std::set<std::string, std::less<>>{"GPU-a", "GPU-c"}));
  NodeUsage usage = fresh_usage(inv.description);
  auto prepared = prepare_pod(PodBuilder().app(gpu_container("m", 2, 1000)).build(), *registry, {});
  ASSERT_TRUE(prepared);
  NodeFit f = fit_pod(*prepared, usage, inv.description, *registry);
  EXPECT_EQ(f.reason, "1/3 AllocatedCardsInsufficientRequest, 2/3 CardCordoned");
  auto one = prepare_pod(one_gpu_pod(), *registry, {});
  ASSERT_TRUE(one);
  NodeFit ok = fit_pod(*one, usage, inv.description, *registry);
  ASSERT_TRUE(ok.fits) << ok.reason;
  EXPECT_EQ(chosen_uuids(ok, 0), std::vector<std::string>{"GPU-b"});
}

// §1.4: a blank cordon annotation cordons nothing.
TEST(NvidiaFitChecks, BlankCordonAnnotationCordonsNothing) {
  auto registry = nvidia_registry();
  model::Node node = NodeBuilder().gpus({gpu("GPU-a")}).cordon("  ").build();
  DescriptionResult inv = read_registered_description(node, *registry);
  ASSERT_EQ(inv.state, DescriptionResult::State::kOk);
  EXPECT_TRUE(inv.description.cordoned.empty());
}

// §3.2 steps 2-3: cordon is checked before the type selectors.
TEST(NvidiaFitChecks, CordonCheckedBeforeType) {
  FitHarness h({gpu("GPU-a")}, {"GPU-a"});
  model::Pod pod = PodBuilder()
                       .annotate(std::string(kUseGpuTypeAnnotation), "T4")
                       .app(gpu_container("main", 1, 1000))
                       .build();
  EXPECT_EQ(reason_of(h, pod), "1/1 CardCordoned");
}

// §2.5 / Appendix B.10: use-gputype is a case-insensitive substring match ("A10" matches A100).
TEST(NvidiaFitChecks, UseGpuTypeIsCaseInsensitiveSubstring) {
  FitHarness h({gpu("GPU-a").with_type("NVIDIA A100-SXM4-40GB")});
  for (const char* value : {"A10", "a100", "T4, A100", "sxm4"}) {
    model::Pod pod = PodBuilder()
                         .annotate(std::string(kUseGpuTypeAnnotation), value)
                         .app(gpu_container("main", 1, 1000))
                         .build();
    EXPECT_TRUE(h.fit(pod).fits) << value;
  }
  model::Pod t4 = PodBuilder()
                      .annotate(std::string(kUseGpuTypeAnnotation), "T4")
                      .app(gpu_container("main", 1, 1000))
                      .build();
  EXPECT_EQ(reason_of(h, t4), "1/1 CardTypeMismatch");
}

// §2.5: a blank use-gputype value means no constraint; a value that is not blank is one, even
// when all its items are blank (they match nothing), as HAMi v2.10 reads it (issue #22; this
// test used to accept " , ," too).
TEST(NvidiaFitChecks, BlankUseGpuTypeIsNoConstraint) {
  FitHarness h({gpu("GPU-a")});
  auto with_type = [](const char* v) {
    return PodBuilder()
        .annotate(std::string(kUseGpuTypeAnnotation), v)
        .app(gpu_container("main", 1, 1000))
        .build();
  };
  for (const char* value : {"", " ", "\t \n"}) {
    EXPECT_TRUE(h.fit(with_type(value)).fits) << "'" << value << "'";
  }
  for (const char* value : {" , ,", ",", " , "}) {
    EXPECT_EQ(reason_of(h, with_type(value)), "1/1 CardTypeMismatch") << "'" << value << "'";
  }
}

// §2.5: nouse-gputype rejects devices whose type contains an item.
TEST(NvidiaFitChecks, NoUseGpuTypeRejects) {
  FitHarness h({gpu("GPU-v"), gpu("GPU-a").with_type("NVIDIA A100-SXM4-40GB")});
  model::Pod pod = PodBuilder()
                       .annotate(std::string(kNoUseGpuTypeAnnotation), "v100")
                       .app(gpu_container("main", 2, 1000))
                       .build();
  EXPECT_EQ(reason_of(h, pod), "1/2 AllocatedCardsInsufficientRequest, 1/2 CardTypeMismatch");
  model::Pod one = PodBuilder()
                       .annotate(std::string(kNoUseGpuTypeAnnotation), "v100")
                       .app(gpu_container("main", 1, 1000))
                       .build();
  NodeFit f = h.fit(one);
  ASSERT_TRUE(f.fits);
  EXPECT_EQ(chosen_uuids(f, 0), std::vector<std::string>{"GPU-a"});
}

// §2.5 / Appendix B.10: use-gpuuuid is an exact match of trimmed items.
TEST(NvidiaFitChecks, UseGpuUuidIsExact) {
  FitHarness h({gpu("GPU-ab")});
  auto with_uuid = [](const char* v) {
    return PodBuilder()
        .annotate(std::string(kUseGpuUuidAnnotation), v)
        .app(gpu_container("main", 1, 1000))
        .build();
  };
  EXPECT_EQ(reason_of(h, with_uuid("GPU-a")), "1/1 CardUuidMismatch");
  EXPECT_EQ(reason_of(h, with_uuid("gpu-ab")), "1/1 CardUuidMismatch");
  EXPECT_TRUE(h.fit(with_uuid(" GPU-ab ")).fits);
  EXPECT_TRUE(h.fit(with_uuid("GPU-x,GPU-ab")).fits);
  EXPECT_TRUE(h.fit(with_uuid("  ")).fits);  // blank = no constraint
  // Not blank, every item blank: a constraint no GPU meets (issue #22; this used to fit).
  EXPECT_EQ(reason_of(h, with_uuid(" , ")), "1/1 CardUuidMismatch");
}

// §2.5: nouse-gpuuuid rejects exact UUIDs only.
TEST(NvidiaFitChecks, NoUseGpuUuidRejectsExact) {
  FitHarness h({gpu("GPU-a"), gpu("GPU-ab")});
  model::Pod pod = PodBuilder()
                       .annotate(std::string(kNoUseGpuUuidAnnotation), "GPU-ab")
                       .app(gpu_container("main", 2, 1000))
                       .build();
  EXPECT_EQ(reason_of(h, pod), "1/2 AllocatedCardsInsufficientRequest, 1/2 CardUuidMismatch");
}

// §3.2 steps 3 and 5: type is checked before UUID.
TEST(NvidiaFitChecks, TypeCheckedBeforeUuid) {
  FitHarness h({gpu("GPU-a")});
  model::Pod pod = PodBuilder()
                       .annotate(std::string(kUseGpuTypeAnnotation), "T4")
                       .annotate(std::string(kUseGpuUuidAnnotation), "GPU-z")
                       .app(gpu_container("main", 1, 1000))
                       .build();
  EXPECT_EQ(reason_of(h, pod), "1/1 CardTypeMismatch");
}

// §2.5 / Appendix B.11: vgpu-mode must contain the device mode as a substring.
TEST(NvidiaFitChecks, VgpuModeIsSubstringOfAnnotation) {
  FitHarness h({gpu("GPU-core"), gpu("GPU-mps").with_mode("mps")});
  auto with_mode = [](const char* v, int n) {
    return PodBuilder()
        .annotate(std::string(kVgpuModeAnnotation), v)
        .app(gpu_container("main", n, 1000))
        .build();
  };
  EXPECT_TRUE(h.fit(with_mode("hami-core,mps", 2)).fits);
  EXPECT_EQ(reason_of(h, with_mode("mps", 2)),
            "1/2 AllocatedCardsInsufficientRequest, 1/2 CardTypeMismatch");
  NodeFit f = h.fit(with_mode("mps", 1));
  ASSERT_TRUE(f.fits);
  EXPECT_EQ(chosen_uuids(f, 0), std::vector<std::string>{"GPU-mps"});
}

// §2.5: a device with an empty mode matches any vgpu-mode value.
TEST(NvidiaFitChecks, EmptyDeviceModeAlwaysMatches) {
  FitHarness h({gpu("GPU-a").with_mode("")});
  model::Pod pod = PodBuilder()
                       .annotate(std::string(kVgpuModeAnnotation), "mps")
                       .app(gpu_container("main", 1, 1000))
                       .build();
  EXPECT_TRUE(h.fit(pod).fits);
}

// §3.2 step 6: no free slot.
TEST(NvidiaFitChecks, SlotsExhausted) {
  FitHarness h({gpu("GPU-a").with_count(2)});
  h.book("GPU-a", 2, 1000, 10);
  EXPECT_EQ(reason_of(h, one_gpu_pod()), "1/1 CardTimeSlicingExhausted");
}

// §3.2 steps 5-6: UUID before slots.
TEST(NvidiaFitChecks, UuidCheckedBeforeSlots) {
  FitHarness h({gpu("GPU-a").with_count(1)});
  h.book("GPU-a", 1, 0, 0);
  model::Pod pod = PodBuilder()
                       .annotate(std::string(kUseGpuUuidAnnotation), "GPU-z")
                       .app(gpu_container("main", 1, 1000))
                       .build();
  EXPECT_EQ(reason_of(h, pod), "1/1 CardUuidMismatch");
}

// §3.2 steps 6 and 11: slots before memory.
TEST(NvidiaFitChecks, SlotsCheckedBeforeMemory) {
  FitHarness h({gpu("GPU-a", 2000).with_count(1)});
  h.book("GPU-a", 1, 0, 0);
  EXPECT_EQ(reason_of(h, one_gpu_pod()), "1/1 CardTimeSlicingExhausted");
}

// §3.2 step 7 / §3.5: mutex rejects any used GPU, before the memory check.
TEST(NvidiaFitChecks, MutexRejectsUsedGpusBeforeMemory) {
  FitHarness h({gpu("GPU-a", 2000), gpu("GPU-b")});
  h.book("GPU-a", 1, 100, 0);
  h.book("GPU-b", 1, 100, 0);
  model::Pod pod = PodBuilder()
                       .annotate(std::string(kGpuSchedulerPolicyAnnotation), "mutex")
                       .app(gpu_container("main", 1, 3000))
                       .build();
  EXPECT_EQ(reason_of(h, pod), "2/2 ExclusiveDeviceAllocateConflict");
}

// §3.5: mutex picks an idle GPU, even when a used one has room; the token also works inside
// a comma chain; recorded cores and memory are unchanged.
TEST(NvidiaFitChecks, MutexPicksIdleGpu) {
  FitHarness h({gpu("GPU-idle"), gpu("GPU-used")});
  h.book("GPU-used", 1, 100, 10);
  for (const char* policy : {"mutex", "binpack,mutex", "spread, mutex"}) {
    model::Pod pod = PodBuilder()
                         .annotate(std::string(kGpuSchedulerPolicyAnnotation), policy)
                         .app(gpu_container("main", 1, 3000, 30))
                         .build();
    NodeFit f = h.fit(pod);
    ASSERT_TRUE(f.fits) << policy << ": " << f.reason;
    EXPECT_EQ(devices_annotation(f), "GPU-idle,NVIDIA,3000,30:;") << policy;
  }
}

// §3.2 steps 10-11 / §3.9: quota is checked before memory; the quota sees the pod total.
class MemoryQuota final : public device::QuotaView {
 public:
  explicit MemoryQuota(int64_t limit) : limit_(limit) {}
  bool fits(std::string_view ns, std::string_view vendor, int64_t memory,
            int64_t cores) const override {
    seen.push_back(memory);
    return ns == "team" && vendor == "NVIDIA" && memory <= limit_;
  }
  mutable std::vector<int64_t> seen;

 private:
  int64_t limit_;
};

TEST(NvidiaFitChecks, QuotaCheckedBeforeMemoryWithPodTotal) {
  FitHarness h({gpu("GPU-a", 2000), gpu("GPU-b")});
  MemoryQuota quota(5000);
  model::Pod pod = PodBuilder("p", "team")
                       .app(gpu_container("c0", 1, 3000))
                       .app(gpu_container("c1", 1, 3000))
                       .build();
  NodeFit f = h.fit(pod, {}, &quota);
  EXPECT_FALSE(f.fits);
  // Container 1: 3000 (container 0) + 3000 > 5000 on both cards; GPU-a would also be short of
  // memory but quota comes first.
  EXPECT_EQ(f.reason, "2/2 ResourceQuotaNotFit");
  MemoryQuota roomy(6000);
  NodeFit ok = h.fit(pod, {}, &roomy);
  ASSERT_TRUE(ok.fits) << ok.reason;
  EXPECT_EQ(roomy.seen.back(), 6000);
}

// §3.2 steps 11-12: memory before cores.
TEST(NvidiaFitChecks, MemoryCheckedBeforeCores) {
  FitHarness h({gpu("GPU-a", 2000)});
  h.book("GPU-a", 1, 0, 90);
  EXPECT_EQ(reason_of(h, one_gpu_pod()), "1/1 CardInsufficientMemory");
}

// §3.2 step 12.
TEST(NvidiaFitChecks, InsufficientCores) {
  FitHarness h({gpu("GPU-a")});
  h.book("GPU-a", 1, 0, 80);
  EXPECT_EQ(reason_of(h, one_gpu_pod()), "1/1 CardInsufficientCore");
}

// §3.2 steps 12-13: a whole-card request on a partly booked GPU fails on cores first.
TEST(NvidiaFitChecks, CoresCheckedBeforeExclusive) {
  FitHarness h({gpu("GPU-a")});
  h.book("GPU-a", 1, 0, 10);
  EXPECT_EQ(reason_of(h, one_gpu_pod(1000, 100)), "1/1 CardInsufficientCore");
}

// §3.2 step 13 / §3.4: cores 100 on a GPU with any task is an exclusive conflict.
TEST(NvidiaFitChecks, ExclusiveRequestOnUsedGpu) {
  FitHarness h({gpu("GPU-a")});
  h.book("GPU-a", 1, 1000, 0);
  EXPECT_EQ(reason_of(h, one_gpu_pod(1000, 100)), "1/1 ExclusiveDeviceAllocateConflict");
  FitHarness idle({gpu("GPU-a")});
  EXPECT_TRUE(idle.fit(one_gpu_pod(1000, 100)).fits);
}

// §3.2 step 13: the exclusive rule only applies when Totalcore == 100.
TEST(NvidiaFitChecks, ExclusiveRuleOnlyForTotalcore100) {
  FitHarness h({gpu("GPU-a").with_core(200)});
  h.book("GPU-a", 1, 1000, 50);
  NodeFit f = h.fit(one_gpu_pod(1000, 100));
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(devices_annotation(f), "GPU-a,NVIDIA,1000,100:;");
}

// §3.2 step 14 / §3.4: a 0-core task may not land on a fully booked GPU.
TEST(NvidiaFitChecks, ComputeUnitsExhaustedForZeroCoreTask) {
  FitHarness h({gpu("GPU-a")});
  h.book("GPU-a", 1, 1000, 100);
  EXPECT_EQ(reason_of(h, one_gpu_pod(1000, 0)), "1/1 CardComputeUnitsExhausted");
}

// §3.2 step 14: not when Totalcore is 0.
TEST(NvidiaFitChecks, ComputeUnitsRuleSkippedWhenTotalcoreZero) {
  FitHarness h({gpu("GPU-a").with_core(0)});
  h.book("GPU-a", 1, 1000, 0);
  EXPECT_TRUE(h.fit(one_gpu_pod(1000, 0)).fits);
}

// §3.2 step 8 / Appendix B.5: cores > 100 are clamped to 100 and the clamped value is recorded
// on every chosen GPU.
TEST(NvidiaFitChecks, CoresAbove100ClampedAndRecorded) {
  FitHarness h({gpu("GPU-a"), gpu("GPU-b")});
  NodeFit f = h.fit(PodBuilder().app(gpu_container("main", 2, 1000, 150)).build());
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(devices_annotation(f), "GPU-b,NVIDIA,1000,100:GPU-a,NVIDIA,1000,100:;");
}

// §3.2 steps 8 and 13: the clamped 100 then counts as a whole-card request.
TEST(NvidiaFitChecks, ClampedCoresAreExclusive) {
  FitHarness h({gpu("GPU-a")});
  h.book("GPU-a", 1, 1000, 0);
  EXPECT_EQ(reason_of(h, one_gpu_pod(1000, 150)), "1/1 ExclusiveDeviceAllocateConflict");
}

// §3.2 step 8: the clamp persists for the rest of the scan (a device scanned after the clamp
// sees 100, not the original value).
TEST(NvidiaFitChecks, CoreClampPersistsAcrossDevices) {
  auto backend = std::make_shared<device::nvidia::NvidiaBackend>();
  model::Pod pod = one_gpu_pod();
  auto prepared = backend->prepare(pod);
  device::DeviceUsage a = fresh_usage(description_of({gpu("GPU-a").with_core(150)})).devices[0];
  device::DeviceUsage b = fresh_usage(description_of({gpu("GPU-b", 1000)})).devices[0];
  // Scan order: b (clamps, then fails memory), then a.
  std::vector<device::DeviceUsage*> devs{&a, &b};
  device::FitContext ctx;
  ctx.pod = &pod;
  ctx.prepared = prepared.get();
  ctx.gpu_policy = "spread";
  device::ContainerDeviceRequest req{1, "NVIDIA", 3000, device::kNoMemPercentage, 120};
  device::FitOutcome out = backend->fit(devs, req, ctx);
  ASSERT_TRUE(out.fits);
  ASSERT_EQ(out.devices.size(), 1u);
  EXPECT_EQ(out.devices[0].uuid, "GPU-a");
  EXPECT_EQ(out.devices[0].usedcores, 100);
}

// §3.2 step 9 / §3.4: a percentage is taken of each chosen GPU's own memory (truncating).
TEST(NvidiaFitChecks, PercentageMemoryPerGpu) {
  FitHarness h({gpu("GPU-big", 32000), gpu("GPU-small", 16000)});
  model::Pod pod = PodBuilder()
                       .app(container("main", {{kGpu, "2"}, {kGpuMemPct, "50"}, {kGpuCores, "10"}}))
                       .build();
  NodeFit f = h.fit(pod);
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(devices_annotation(f), "GPU-small,NVIDIA,8000,10:GPU-big,NVIDIA,16000,10:;");
  FitHarness t4({gpu("GPU-t4", 15360)});
  NodeFit g =
      t4.fit(PodBuilder().app(container("main", {{kGpu, "1"}, {kGpuMemPct, "33"}})).build());
  ASSERT_TRUE(g.fits);
  EXPECT_EQ(devices_annotation(g), "GPU-t4,NVIDIA,5068,0:;");
}

// §4.5 variant: only nvidia.com/gpu (cores 100 from the webhook) -> whole card.
TEST(NvidiaFitChecks, WholeCardDefaults) {
  FitHarness h({gpu("GPU-X", 15360)});
  NodeFit f = h.fit(PodBuilder().app(container("main", {{kGpu, "1"}, {kGpuCores, "100"}})).build());
  ASSERT_TRUE(f.fits);
  EXPECT_EQ(devices_annotation(f), "GPU-X,NVIDIA,15360,100:;");
}

// §2.3 / §3.2 step 9: with both gpumem and a percentage, Fit reserves gpumem.
TEST(NvidiaFitChecks, ExplicitMemoryWinsOverPercentage) {
  FitHarness h({gpu("GPU-a", 16000)});
  NodeFit f =
      h.fit(PodBuilder()
                .app(container("main", {{kGpu, "1"}, {kGpuMem, "3000"}, {kGpuMemPct, "50"}}))
                .build());
  ASSERT_TRUE(f.fits);
  EXPECT_EQ(devices_annotation(f), "GPU-a,NVIDIA,3000,0:;");
}

// §3.4: one container never gets the same non-MIG GPU twice.
TEST(NvidiaFitChecks, ContainerNeverGetsSameGpuTwice) {
  FitHarness h({gpu("GPU-a"), gpu("GPU-b", 1000)});
  NodeFit f = h.fit(PodBuilder().app(gpu_container("main", 2, 3000)).build());
  EXPECT_EQ(f.reason, "1/2 AllocatedCardsInsufficientRequest, 1/2 CardInsufficientMemory");
}

// Appendix B.1 / §5.2: spread prefers the idlest GPU, binpack the busiest that fits.
TEST(NvidiaFitChecks, SpreadAndBinpackPreference) {
  FitHarness h({gpu("GPU-busy"), gpu("GPU-idle"), gpu("GPU-mid")});
  h.book("GPU-busy", 3, 9000, 60);
  h.book("GPU-mid", 1, 2000, 10);
  NodeFit spread = h.fit(one_gpu_pod(), FitPolicy{"spread", "binpack"});
  ASSERT_TRUE(spread.fits);
  EXPECT_EQ(chosen_uuids(spread, 0), std::vector<std::string>{"GPU-idle"});
  NodeFit binpack = h.fit(one_gpu_pod(), FitPolicy{"binpack", "binpack"});
  ASSERT_TRUE(binpack.fits);
  EXPECT_EQ(chosen_uuids(binpack, 0), std::vector<std::string>{"GPU-busy"});
  // The pod annotation overrides the default policy.
  model::Pod annotated = PodBuilder()
                             .annotate(std::string(kGpuSchedulerPolicyAnnotation), "binpack")
                             .app(gpu_container("main", 1, 3000, 30))
                             .build();
  EXPECT_EQ(chosen_uuids(h.fit(annotated, FitPolicy{"spread", "binpack"}), 0),
            std::vector<std::string>{"GPU-busy"});
  // Binpack skips the busiest card when it no longer fits.
  NodeFit big = h.fit(one_gpu_pod(8000, 30), FitPolicy{"binpack", "binpack"});
  ASSERT_TRUE(big.fits);
  EXPECT_EQ(chosen_uuids(big, 0), std::vector<std::string>{"GPU-mid"});
}

// Appendix B.1: equal candidates -> the later one in the sorted list wins (the last
// registered on an idle node with spread).
TEST(NvidiaFitChecks, EqualCandidatesLastRegisteredWins) {
  FitHarness h({gpu("GPU-1"), gpu("GPU-2"), gpu("GPU-3")});
  NodeFit f = h.fit(one_gpu_pod());
  ASSERT_TRUE(f.fits);
  EXPECT_EQ(chosen_uuids(f, 0), std::vector<std::string>{"GPU-3"});
}

// §3.2 step 3: the request type must be exactly "NVIDIA".
TEST(NvidiaFitChecks, RequestTypeMustBeNvidia) {
  auto backend = std::make_shared<device::nvidia::NvidiaBackend>();
  model::Pod pod = one_gpu_pod();
  auto prepared = backend->prepare(pod);
  device::DeviceUsage a = fresh_usage(description_of({gpu("GPU-a")})).devices[0];
  std::vector<device::DeviceUsage*> devs{&a};
  device::FitContext ctx;
  ctx.pod = &pod;
  ctx.prepared = prepared.get();
  device::ContainerDeviceRequest req{1, "nvidia", 1000, device::kNoMemPercentage, 0};
  device::FitOutcome out = backend->fit(devs, req, ctx);
  EXPECT_FALSE(out.fits);
  EXPECT_EQ(device::format_reasons(out.reasons, 1), "1/1 CardTypeMismatch");
}

// ---- §3.6 NUMA binding --------------------------------------------------------------------

model::Pod numa_pod(int gpus, int mem, const char* policy = nullptr) {
  PodBuilder b;
  b.annotate(std::string(kNumaBindAnnotation), "true");
  if (policy) b.annotate(std::string(kGpuSchedulerPolicyAnnotation), policy);
  return b.app(gpu_container("main", gpus, mem)).build();
}

// §3.6: all GPUs of the container come from one NUMA node.
TEST(NvidiaFitNuma, GpusShareNumaNode) {
  FitHarness h({gpu("a").with_numa(0), gpu("b").with_numa(0), gpu("c").with_numa(1),
                gpu("d", 2000).with_numa(1)});
  NodeFit f = h.fit(numa_pod(2, 3000));
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(chosen_uuids(f, 0), (std::vector<std::string>{"b", "a"}));
  // Without numa-bind the scan mixes NUMA nodes (c is the first candidate scanned).
  NodeFit mixed = h.fit(PodBuilder().app(gpu_container("main", 2, 3000)).build());
  ASSERT_TRUE(mixed.fits);
  EXPECT_EQ(chosen_uuids(mixed, 0)[0], "c");
}

// §5.2 + §3.6: numa-bind with binpack scans from the lowest NUMA node, with spread from the
// highest (the end of each sorted list).
TEST(NvidiaFitNuma, BinpackAndSpreadPickOppositeNumaNodes) {
  FitHarness h(
      {gpu("a").with_numa(0), gpu("b").with_numa(0), gpu("c").with_numa(1), gpu("d").with_numa(1)});
  NodeFit spread = h.fit(numa_pod(2, 1000, "spread"));
  ASSERT_TRUE(spread.fits) << spread.reason;
  EXPECT_EQ(chosen_uuids(spread, 0), (std::vector<std::string>{"d", "c"}));
  NodeFit binpack = h.fit(numa_pod(2, 1000, "binpack"));
  ASSERT_TRUE(binpack.fits) << binpack.reason;
  EXPECT_EQ(chosen_uuids(binpack, 0), (std::vector<std::string>{"b", "a"}));
}

// §3.2 step 4 / §3.3: NumaNotFit counts the GPUs discarded when a group is abandoned.
TEST(NvidiaFitNuma, NumaNotFitCountsDiscardedSelections) {
  FitHarness h({gpu("a").with_numa(0), gpu("b", 2000).with_numa(0), gpu("c").with_numa(1),
                gpu("d", 2000).with_numa(1)});
  NodeFit f = h.fit(numa_pod(2, 3000));
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(f.reason,
            "1/4 AllocatedCardsInsufficientRequest, 1/4 NumaNotFit, 2/4 CardInsufficientMemory");
}

// §3.3: NumaNotFit adds up over every abandoned group; AllocatedCardsInsufficientRequest is
// only the last group's selection (assigned, not added).
TEST(NvidiaFitNuma, NumaNotFitAddsUpOverAbandonedGroups) {
  FitHarness h({gpu("a").with_numa(0), gpu("b").with_numa(1), gpu("c").with_numa(2)});
  NodeFit f = h.fit(numa_pod(2, 1000));
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(f.reason, "1/3 AllocatedCardsInsufficientRequest, 2/3 NumaNotFit");
}

// §3.6 / Appendix B.8 (driven directly with an explicit scan order): the NUMA group switch
// happens before the UUID check, so a UUID-rejected card on another NUMA node still resets
// the selection...
TEST(NvidiaFitNuma, GroupResetHappensBeforeUuidCheck) {
  auto backend = std::make_shared<device::nvidia::NvidiaBackend>();
  model::Pod pod = PodBuilder()
                       .annotate(std::string(kUseGpuUuidAnnotation), "a,c")
                       .app(gpu_container("main", 2, 1000))
                       .build();
  auto prepared = backend->prepare(pod);
  NodeUsage u = fresh_usage(
      description_of({gpu("a").with_numa(0), gpu("b").with_numa(1), gpu("c").with_numa(0)}));
  std::vector<device::DeviceUsage*> devs{&u.devices[0], &u.devices[1], &u.devices[2]};
  device::FitContext ctx;
  ctx.pod = &pod;
  ctx.prepared = prepared.get();
  ctx.numa_bind = true;
  device::ContainerDeviceRequest req{2, "NVIDIA", 1000, device::kNoMemPercentage, 0};
  device::FitOutcome out = backend->fit(devs, req, ctx);
  EXPECT_FALSE(out.fits);
  EXPECT_EQ(device::format_reasons(out.reasons, 3),
            "1/3 AllocatedCardsInsufficientRequest, 1/3 CardUuidMismatch, 1/3 NumaNotFit");
}

// ...while a card rejected by the health check (before the switch) does not.
TEST(NvidiaFitNuma, UnhealthyCardDoesNotResetGroup) {
  auto backend = std::make_shared<device::nvidia::NvidiaBackend>();
  model::Pod pod = PodBuilder().app(gpu_container("main", 2, 1000)).build();
  auto prepared = backend->prepare(pod);
  NodeUsage u = fresh_usage(description_of(
      {gpu("a").with_numa(0), gpu("b").with_numa(1).unhealthy(), gpu("c").with_numa(0)}));
  std::vector<device::DeviceUsage*> devs{&u.devices[0], &u.devices[1], &u.devices[2]};
  device::FitContext ctx;
  ctx.pod = &pod;
  ctx.prepared = prepared.get();
  ctx.numa_bind = true;
  device::ContainerDeviceRequest req{2, "NVIDIA", 1000, device::kNoMemPercentage, 0};
  device::FitOutcome out = backend->fit(devs, req, ctx);
  ASSERT_TRUE(out.fits);
  ASSERT_EQ(out.devices.size(), 2u);
  EXPECT_EQ(out.devices[0].uuid, "c");
  EXPECT_EQ(out.devices[1].uuid, "a");
}

// §2.5: numa-bind uses Go ParseBool; invalid values mean off.
TEST(NvidiaFitNuma, NumaBindParsesGoBool) {
  auto registry = nvidia_registry();
  for (const char* v : {"true", "1", "t", "T", "TRUE", "True"}) {
    auto p = prepare_pod(PodBuilder().annotate("nvidia.com/numa-bind", v).build(), *registry, {});
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->numa_bind) << v;
  }
  for (const char* v : {"false", "0", "yes", "on", "", " true"}) {
    auto p = prepare_pod(PodBuilder().annotate("nvidia.com/numa-bind", v).build(), *registry, {});
    ASSERT_TRUE(p);
    EXPECT_FALSE(p->numa_bind) << v;
  }
}

// §3.6 [verified]: with topology-aware + numa-bind only the last scanned NUMA group survives
// (NumaNotFit never counted).
TEST(NvidiaFitNuma, TopologyAwareKeepsLastScannedGroupOnly) {
  FitHarness h(
      {gpu("a").with_numa(0), gpu("b").with_numa(0), gpu("c").with_numa(1), gpu("d").with_numa(1)});
  NodeFit f = h.fit(numa_pod(2, 1000, "topology-aware"));
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(chosen_uuids(f, 0), (std::vector<std::string>{"b", "a"}));
  // Three wanted: the last group holds only two -> failure without NumaNotFit.
  FitHarness h3({gpu("a").with_numa(0), gpu("b").with_numa(0), gpu("c").with_numa(1),
                 gpu("d").with_numa(1), gpu("e").with_numa(1)});
  NodeFit g = h3.fit(numa_pod(3, 1000, "topology-aware"));
  EXPECT_FALSE(g.fits);
  EXPECT_EQ(g.reason, "2/5 AllocatedCardsInsufficientRequest");
}

// ---- §3.1 failure classes ----------------------------------------------------------------

TEST(NvidiaFitReasons, FailureClassification) {
  EXPECT_EQ(classify_failure("2/2 CardInsufficientMemory"), FitClass::kInsufficientCapacity);
  EXPECT_EQ(classify_failure("1/1 CardTypeMismatch"), FitClass::kConstraintMismatch);
  EXPECT_EQ(classify_failure("1/2 CardTypeMismatch, 1/2 CardTimeSlicingExhausted"),
            FitClass::kInsufficientCapacity);
  EXPECT_EQ(classify_failure("NodeInsufficientDevice"), FitClass::kInsufficientCapacity);
}

}  // namespace nvidia_test
}  // namespace hamisim::fit::testing
