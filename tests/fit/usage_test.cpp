// Node description and usage rebuilt from existing pods (hami-device-model.md §1.7, §4.3;
// hami-scheduler-core.md §5.3; product.md §5.3).

#include <gtest/gtest.h>

#include "fit_test_support.h"

namespace hamisim::fit::testing {
namespace {

// ---- description ---------------------------------------------------------------------------

// product.md §5.3 step 4: nothing describes the node.
TEST(Description, MissingRegistrationIsNoDescription) {
  auto registry = nvidia_registry();
  DescriptionResult r = read_registered_description(NodeBuilder().build(), *registry);
  EXPECT_EQ(r.state, DescriptionResult::State::kNoDescription);
  EXPECT_TRUE(r.description.devices.empty());
}

// product.md §5.3: a registration that cannot be decoded is malformed, with the decoder's
// message naming the annotation.
TEST(Description, MalformedRegistrationCarriesMessage) {
  auto registry = nvidia_registry();
  for (const char* bad :
       {"not json", "[{\"id\":\"GPU-a\",\"count\":1.5}]", "[{\"id\":\"GPU-a\",\"count\":\"10\"}]",
        "GPU-a,10,32768,100,NVIDIA-Tesla V100,0,true:"}) {
    model::Node node =
        NodeBuilder().annotate(std::string(device::kNvidiaRegisterAnnotation), bad).build();
    DescriptionResult r = read_registered_description(node, *registry);
    EXPECT_EQ(r.state, DescriptionResult::State::kMalformed) << bad;
    EXPECT_NE(r.message.find("hami.io/node-nvidia-register"), std::string::npos) << r.message;
  }
}

// §1.1: a null list decodes to no devices (HAMi: "no gpu found on node").
TEST(Description, NullRegistrationHasNoDevices) {
  auto registry = nvidia_registry();
  model::Node node =
      NodeBuilder().annotate(std::string(device::kNvidiaRegisterAnnotation), "null").build();
  DescriptionResult r = read_registered_description(node, *registry);
  EXPECT_NE(r.state, DescriptionResult::State::kOk);
  EXPECT_TRUE(r.description.devices.empty());
}

// §1.1 / §1.7: decoded devices keep registration order and fields; vendor set to NVIDIA;
// the usage starts at zero with totals from the registration.
TEST(Description, DecodedDevicesAndFreshUsage) {
  auto registry = nvidia_registry();
  model::Node node =
      NodeBuilder()
          .gpus({gpu("GPU-b", 32768).with_index(1).with_numa(1).unhealthy(), gpu("GPU-a", 15360)})
          .cordon("GPU-a")
          .build();
  DescriptionResult r = read_registered_description(node, *registry);
  ASSERT_EQ(r.state, DescriptionResult::State::kOk) << r.message;
  ASSERT_EQ(r.description.devices.size(), 2u);
  EXPECT_EQ(r.description.devices[0].id, "GPU-b");
  EXPECT_EQ(r.description.devices[0].device_vendor, "NVIDIA");
  EXPECT_EQ(r.description.cordoned, (std::set<std::string, std::less<>>{"GPU-a"}));
  NodeUsage u = fresh_usage(r.description);
  ASSERT_EQ(u.devices.size(), 2u);
  const auto& b = u.devices[0];
  EXPECT_EQ(b.index, 1u);
  EXPECT_EQ(b.count, 10);
  EXPECT_EQ(b.totalmem, 32768);
  EXPECT_EQ(b.totalcore, 100);
  EXPECT_EQ(b.numa, 1);
  EXPECT_FALSE(b.health);  // health omitted when false
  EXPECT_EQ(b.mode, "hami-core");
  EXPECT_EQ(b.used, 0);
  EXPECT_EQ(b.usedmem, 0);
  EXPECT_EQ(b.usedcores, 0);
  EXPECT_TRUE(u.devices[1].health);
}

// One NodeUsage serves every node of a request: resetting a used one to another description
// gives exactly what a fresh one would, however the old one was used.
TEST(Description, ResetUsageForgetsEverythingOfThePreviousNode) {
  auto registry = nvidia_registry();
  DescriptionResult big =
      read_registered_description(NodeBuilder()
                                      .gpus({gpu("GPU-x", 81920), gpu("GPU-y", 81920).with_index(1),
                                             gpu("GPU-z", 81920).with_index(2).with_numa(1)})
                                      .build(),
                                  *registry);
  DescriptionResult small = read_registered_description(
      NodeBuilder().gpus({gpu("GPU-b", 32768).with_index(1).unhealthy()}).build(), *registry);
  ASSERT_EQ(big.state, DescriptionResult::State::kOk);
  ASSERT_EQ(small.state, DescriptionResult::State::kOk);

  NodeUsage reused = fresh_usage(big.description);
  for (auto& d : reused.devices) {
    d.used = 3;
    d.usedmem = 4000;
    d.usedcores = 30;
    d.mig_in_use.push_back(device::MigInUse{"1g.10gb", {}, true});
    d.pods.push_back(device::DevicePod{nullptr, 30});
  }
  reset_usage(reused, small.description);
  const NodeUsage fresh = fresh_usage(small.description);
  ASSERT_EQ(reused.devices.size(), fresh.devices.size());
  const auto& r = reused.devices[0];
  const auto& f = fresh.devices[0];
  EXPECT_EQ(r.id, f.id);
  EXPECT_EQ(r.type, f.type);
  EXPECT_EQ(r.mode, f.mode);
  EXPECT_EQ(r.vendor, f.vendor);
  EXPECT_EQ(r.index, f.index);
  EXPECT_EQ(r.count, f.count);
  EXPECT_EQ(r.totalmem, f.totalmem);
  EXPECT_EQ(r.totalcore, f.totalcore);
  EXPECT_EQ(r.numa, f.numa);
  EXPECT_EQ(r.health, f.health);
  EXPECT_EQ(r.used, 0);
  EXPECT_EQ(r.usedmem, 0);
  EXPECT_EQ(r.usedcores, 0);
  EXPECT_TRUE(r.mig_in_use.empty());
  EXPECT_TRUE(r.pods.empty());
  EXPECT_EQ(r.mig_profiles, f.mig_profiles);
  EXPECT_EQ(r.custom_info, f.custom_info);
  EXPECT_EQ(r.pair_scores, &small.description.devices[0].pair_scores);
}

// ---- §4.3 usage from existing pods --------------------------------------------------------

class PodUsage : public ::testing::Test {
 protected:
  PodUsage() : h_({gpu("GPU-A"), gpu("GPU-B"), mig_gpu("GPU-M1"), mig_gpu("GPU-M2")}) {}
  Result<PodAllocation> decode(const model::Pod& pod) {
    return decode_pod_allocation(pod, h_.registry());
  }
  FitHarness h_;
};

// §4.3: Used += max(Slots,1) per entry; Usedmem/Usedcores added.
TEST_F(PodUsage, SlotsCountAppContainersPerGpu) {
  h_.add_existing(PodBuilder("p")
                      .app(gpu_container("c0", 1))
                      .app(gpu_container("c1", 2))
                      .node("node1")
                      .allocated("GPU-A,NVIDIA,1000,10:;GPU-A,NVIDIA,2000,20:GPU-B,NVIDIA,500,5:;")
                      .build());
  EXPECT_EQ(h_.device("GPU-A").used, 2);
  EXPECT_EQ(h_.device("GPU-A").usedmem, 3000);
  EXPECT_EQ(h_.device("GPU-A").usedcores, 30);
  EXPECT_EQ(h_.device("GPU-B").used, 1);
  EXPECT_EQ(h_.device("GPU-B").usedmem, 500);
}

// §4.3: several pods add up.
TEST_F(PodUsage, PodsAccumulate) {
  for (int i = 0; i < 3; ++i) {
    h_.add_existing(PodBuilder("p" + std::to_string(i))
                        .app(gpu_container("c", 1))
                        .node("node1")
                        .allocated("GPU-B,NVIDIA,1000,10:;")
                        .build());
  }
  EXPECT_EQ(h_.device("GPU-B").used, 3);
  EXPECT_EQ(h_.device("GPU-B").usedmem, 3000);
  EXPECT_EQ(h_.device("GPU-B").usedcores, 30);
}

// A planner's placed pod keeps its allocation beside the pending pod it shares: decoded with
// those annotations set over the pod's own, it counts as the pod carrying them would.
TEST_F(PodUsage, AddedAnnotationsCountAsThePodsOwnAndWinOverThem) {
  const model::Pod carrying = PodBuilder("p")
                                  .app(gpu_container("c", 1))
                                  .node("node1")
                                  .allocated("GPU-B,NVIDIA,1000,10:;")
                                  .build();
  const model::Pod stale = PodBuilder("p")
                               .app(gpu_container("c", 1))
                               .node("node1")
                               .allocated("GPU-A,NVIDIA,7000,70:;")
                               .build();
  const model::StringMap added{{"hami.io/vgpu-devices-allocated", "GPU-B,NVIDIA,1000,10:;"}};
  auto want = decode(carrying);
  auto got = decode_pod_allocation(stale, h_.registry(), &added);
  ASSERT_TRUE(want && got);
  ASSERT_EQ(got->charges.size(), want->charges.size());
  const auto& charges = got->charges.at("NVIDIA");
  ASSERT_EQ(charges.size(), 1u);
  EXPECT_EQ(charges[0].uuid, "GPU-B");
  EXPECT_EQ(charges[0].usedmem, 1000);
  EXPECT_EQ(charges[0].usedcores, 10);
}

// §4.3: terminated (Succeeded/Failed) pods are dropped.
TEST_F(PodUsage, TerminatedPodsDropped) {
  for (const char* phase : {"Succeeded", "Failed"}) {
    model::Pod pod = PodBuilder("done")
                         .app(gpu_container("c", 1))
                         .node("node1")
                         .allocated("GPU-A,NVIDIA,1000,10:;")
                         .phase(phase)
                         .build();
    auto alloc = decode(pod);
    ASSERT_TRUE(alloc);
    EXPECT_TRUE(alloc->empty()) << phase;
    h_.add_existing(pod);
  }
  EXPECT_EQ(h_.device("GPU-A").used, 0);
  // Running and Pending pods count.
  h_.add_existing(PodBuilder("run")
                      .app(gpu_container("c", 1))
                      .node("node1")
                      .allocated("GPU-A,NVIDIA,1000,10:;")
                      .phase("Running")
                      .build());
  EXPECT_EQ(h_.device("GPU-A").used, 1);
}

// §4.3: once all init containers succeeded the usage shrinks to app containers only.
TEST_F(PodUsage, InitUsageShrinksAfterInitSuccess) {
  auto pod = [](std::optional<int32_t> exit_code) {
    PodBuilder b("p");
    b.init(gpu_container("init", 1, 8000, 50))
        .app(gpu_container("main", 1, 1000, 10))
        .node("node1")
        .allocated("GPU-A,NVIDIA,8000,50:;GPU-A,NVIDIA,1000,10:;")
        .phase("Running");
    if (exit_code) b.init_terminated("init", *exit_code);
    return b.build();
  };
  auto before = decode(pod(std::nullopt));
  ASSERT_TRUE(before);
  ASSERT_EQ(before->charges.at("NVIDIA").size(), 1u);
  EXPECT_EQ(before->charges.at("NVIDIA")[0].usedmem, 8000);
  EXPECT_EQ(before->charges.at("NVIDIA")[0].usedcores, 50);

  auto failed = decode(pod(1));
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->charges.at("NVIDIA")[0].usedmem, 8000);

  auto after = decode(pod(0));
  ASSERT_TRUE(after);
  ASSERT_EQ(after->charges.at("NVIDIA").size(), 1u);
  EXPECT_EQ(after->charges.at("NVIDIA")[0].usedmem, 1000);
  EXPECT_EQ(after->charges.at("NVIDIA")[0].usedcores, 10);
  EXPECT_EQ(after->charges.at("NVIDIA")[0].slots, 1);
}

// §4.3 / hami-scheduler-core.md §5.3 (fix 98c520e9): unknown UUIDs change no usage or health.
TEST_F(PodUsage, UnknownUuidsIgnored) {
  h_.add_existing(PodBuilder("p")
                      .app(gpu_container("c", 2))
                      .node("node1")
                      .allocated("GPU-GONE,NVIDIA,1000,10:GPU-A,NVIDIA,500,5:;")
                      .build());
  EXPECT_EQ(h_.device("GPU-A").used, 1);
  EXPECT_EQ(h_.device("GPU-A").usedmem, 500);
  for (const auto& d : h_.usage().devices) {
    EXPECT_TRUE(d.health) << d.id;
    if (d.id != "GPU-A") {
      EXPECT_EQ(d.used, 0) << d.id;
    }
  }
}

// §4.5 decoding rules: a malformed devices annotation is an error naming the annotation.
TEST_F(PodUsage, MalformedAnnotationIsError) {
  for (const char* bad :
       {"GPU-A,NVIDIA,abc,0:;", "GPU-A,NVIDIA,1000:;", "GPU-A,NVIDIA,1000,99999999999:;"}) {
    auto r = decode(PodBuilder("p").node("node1").allocated(bad).build());
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("hami.io/vgpu-devices-allocated"), std::string::npos)
        << r.error().message;
  }
}

// §4.5: a malformed MIG allocation list is an error naming the annotation.
TEST_F(PodUsage, MalformedMigAllocationsIsError) {
  auto r = decode(
      PodBuilder("p")
          .node("node1")
          .allocated("GPU-M1,NVIDIA,5120,14:;")
          .mig_allocations(
              R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"","profile":"1g.5gb","placement":{"start":0,"size":1}}])")
          .build());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("hami.io/vgpu-mig-allocations"), std::string::npos);
}

// §4.5: both annotation forms (aligned and HAMi v2.10's unaligned) are read.
TEST_F(PodUsage, ReadsAlignedAndUnalignedForms) {
  for (const char* value : {";GPU-A,NVIDIA,2500,25:;GPU-B,NVIDIA,2500,25:;",
                            "GPU-A,NVIDIA,2500,25:;GPU-B,NVIDIA,2500,25:;"}) {
    auto r = decode(PodBuilder("p")
                        .init(plain_container("i"))
                        .app(gpu_container("a", 1))
                        .app(gpu_container("b", 1))
                        .node("node1")
                        .allocated(value)
                        .build());
    ASSERT_TRUE(r) << value;
    const auto& list = r->charges.at("NVIDIA");
    ASSERT_EQ(list.size(), 2u) << value;
    EXPECT_EQ(list[0].uuid, "GPU-A");
    EXPECT_EQ(list[0].usedmem, 2500);
    EXPECT_EQ(list[1].uuid, "GPU-B");
  }
}

// §4.5 (issue #2899) + product.md §3 "Read both forms": HAMi v2.10 drops the empty entries of
// containers without GPUs, so its value is not positional. Read positionally, the first app
// container's entry would be taken for the init container's: collapsed with peak semantics
// (max, one slot) instead of summed, and thrown away once the init container succeeded.
TEST_F(PodUsage, UnalignedFormAttributedToDeviceContainers) {
  auto pod = [](bool init_done) {
    PodBuilder b("p");
    b.init(plain_container("init"))
        .app(gpu_container("a", 1))
        .app(plain_container("log"))
        .app(gpu_container("b", 1))
        .node("node1")
        .allocated("GPU-A,NVIDIA,1000,10:;GPU-A,NVIDIA,2000,20:;")
        .phase("Running");
    if (init_done) b.init_terminated("init", 0);
    return b.build();
  };
  for (bool init_done : {false, true}) {
    auto r = decode(pod(init_done));
    ASSERT_TRUE(r);
    const auto& list = r->charges.at("NVIDIA");
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0].usedmem, 3000) << init_done;
    EXPECT_EQ(list[0].usedcores, 30) << init_done;
    EXPECT_EQ(list[0].slots, 2) << init_done;
  }
  // The aligned form of the same allocation gives the same charge.
  auto aligned = decode(PodBuilder("p")
                            .init(plain_container("init"))
                            .app(gpu_container("a", 1))
                            .app(plain_container("log"))
                            .app(gpu_container("b", 1))
                            .node("node1")
                            .allocated(";GPU-A,NVIDIA,1000,10:;;GPU-A,NVIDIA,2000,20:;")
                            .build());
  ASSERT_TRUE(aligned);
  EXPECT_EQ(aligned->charges.at("NVIDIA")[0].usedmem, 3000);
  EXPECT_EQ(aligned->charges.at("NVIDIA")[0].slots, 2);
}

// §4.5 variant "1 init container without GPU + 2 app containers": HAMi v2.10 writes
// `GPU-A,...:;GPU-B,...:;` (one segment fewer than containers + 1); both entries are app usage
// and stay charged after the init container finished.
TEST_F(PodUsage, UnalignedIssue2899ExampleKeepsAppUsage) {
  auto r = decode(PodBuilder("p")
                      .init(plain_container("init"))
                      .app(gpu_container("a", 1))
                      .app(gpu_container("b", 1))
                      .node("node1")
                      .allocated("GPU-A,NVIDIA,2500,25:;GPU-B,NVIDIA,2500,25:;")
                      .phase("Running")
                      .init_terminated("init", 0)
                      .build());
  ASSERT_TRUE(r);
  const auto& list = r->charges.at("NVIDIA");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].uuid, "GPU-A");
  EXPECT_EQ(list[0].usedmem, 2500);
  EXPECT_EQ(list[1].uuid, "GPU-B");
  EXPECT_EQ(list[1].usedmem, 2500);
}

// The unaligned form with an init container that has a GPU: entries map onto the containers
// that request GPUs, in order (init first).
TEST_F(PodUsage, UnalignedFormWithGpuInitContainer) {
  PodBuilder b("p");
  b.init(gpu_container("init", 1, 8000, 50))
      .app(plain_container("sidecar"))
      .app(gpu_container("main", 1, 1000, 10))
      .node("node1")
      .allocated("GPU-A,NVIDIA,8000,50:;GPU-B,NVIDIA,1000,10:;")
      .phase("Running")
      .init_terminated("init", 0);
  auto r = decode(b.build());
  ASSERT_TRUE(r);
  const auto& list = r->charges.at("NVIDIA");
  ASSERT_EQ(list.size(), 1u);  // the finished init container's GPU-A is released
  EXPECT_EQ(list[0].uuid, "GPU-B");
  EXPECT_EQ(list[0].usedmem, 1000);
}

const char* kMigOnM1 =
    R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-M1","profile":"2g.10gb","placement":{"start":0,"size":2},"migUUID":"MIG-1","gpuInstanceID":3,"computeInstanceID":0}])";

// §4.3: a MIG allocation matched by a device entry lands in MigAllocationsInUse
// (RuntimeReady when migUUID and both instance ids are present).
TEST_F(PodUsage, MigAllocationRecordedOnGpu) {
  h_.add_existing(PodBuilder("p")
                      .app(gpu_container("c", 1))
                      .node("node1")
                      .allocated("GPU-M1,NVIDIA,10240,28:;")
                      .mig_allocations(kMigOnM1)
                      .build());
  const auto& m1 = h_.device("GPU-M1");
  EXPECT_TRUE(m1.health);
  ASSERT_EQ(m1.mig_in_use.size(), 1u);
  EXPECT_EQ(m1.mig_in_use[0].profile, "2g.10gb");
  EXPECT_EQ(m1.mig_in_use[0].placement, (device::MigPlacement{0, 2}));
  EXPECT_TRUE(m1.mig_in_use[0].runtime_ready);
  EXPECT_EQ(m1.used, 1);
  EXPECT_EQ(m1.usedmem, 10240);
}

// §4.3 fail-closed: a device entry on a MIG GPU without a matching allocation -> unhealthy.
TEST_F(PodUsage, MigGpuWithoutAllocationUnhealthy) {
  h_.add_existing(PodBuilder("p")
                      .app(gpu_container("c", 1))
                      .node("node1")
                      .allocated("GPU-M1,NVIDIA,10240,28:;")
                      .build());
  EXPECT_FALSE(h_.device("GPU-M1").health);
  EXPECT_TRUE(h_.device("GPU-M2").health);
}

// §4.3 fail-closed: a MIG allocation on a hami-core GPU -> that GPU unhealthy.
TEST_F(PodUsage, MigAllocationOnHamiCoreGpuUnhealthy) {
  h_.add_existing(
      PodBuilder("p")
          .app(gpu_container("c", 1))
          .node("node1")
          .allocated("GPU-A,NVIDIA,10240,28:;")
          .mig_allocations(
              R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-A","profile":"2g.10gb","placement":{"start":0,"size":2}}])")
          .build());
  EXPECT_FALSE(h_.device("GPU-A").health);
  EXPECT_TRUE(h_.device("GPU-B").health);
  EXPECT_TRUE(h_.device("GPU-M1").health);
}

// §4.3 fail-closed: leftover allocations naming a non-MIG GPU (no device entry) -> unhealthy.
TEST_F(PodUsage, LeftoverAllocationOnNonMigGpuUnhealthy) {
  h_.add_existing(
      PodBuilder("p")
          .app(gpu_container("c", 1))
          .node("node1")
          .allocated("GPU-M1,NVIDIA,10240,28:;")
          .mig_allocations(
              R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-M1","profile":"2g.10gb","placement":{"start":0,"size":2}},)"
              R"({"containerIndex":0,"deviceIndex":1,"gpuUUID":"GPU-B","profile":"1g.5gb","placement":{"start":6,"size":1}}])")
          .build());
  EXPECT_FALSE(h_.device("GPU-B").health);
  EXPECT_TRUE(h_.device("GPU-A").health);
  EXPECT_TRUE(h_.device("GPU-M1").health);
}

// §4.3 fail-closed: leftover allocations naming an unknown GPU -> every MIG GPU unhealthy.
TEST_F(PodUsage, LeftoverAllocationOnUnknownGpuPoisonsAllMigGpus) {
  h_.add_existing(
      PodBuilder("p")
          .app(gpu_container("c", 1))
          .node("node1")
          .allocated("GPU-A,NVIDIA,1000,10:;")
          .mig_allocations(
              R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-GONE","profile":"1g.5gb","placement":{"start":6,"size":1}}])")
          .build());
  EXPECT_FALSE(h_.device("GPU-M1").health);
  EXPECT_FALSE(h_.device("GPU-M2").health);
  EXPECT_TRUE(h_.device("GPU-A").health);
  EXPECT_TRUE(h_.device("GPU-B").health);
}

// §4.3: extra allocations on a MIG GPU (more instances than collapsed entries) are all kept.
TEST_F(PodUsage, LeftoverAllocationsOnMigGpuKept) {
  h_.add_existing(
      PodBuilder("p")
          .app(gpu_container("c", 2))
          .node("node1")
          .allocated("GPU-M2,NVIDIA,5120,14:GPU-M2,NVIDIA,5120,14:;")
          .mig_allocations(
              R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-M2","profile":"1g.5gb","placement":{"start":6,"size":1}},)"
              R"({"containerIndex":0,"deviceIndex":1,"gpuUUID":"GPU-M2","profile":"1g.5gb","placement":{"start":5,"size":1}}])")
          .build());
  const auto& m2 = h_.device("GPU-M2");
  EXPECT_TRUE(m2.health);
  ASSERT_EQ(m2.mig_in_use.size(), 2u);
  EXPECT_EQ(m2.mig_in_use[0].placement.start, 6u);
  EXPECT_EQ(m2.mig_in_use[1].placement.start, 5u);
  EXPECT_FALSE(m2.mig_in_use[0].runtime_ready);
  EXPECT_EQ(m2.used, 2);
}

// A pod without any allocation annotation allocates nothing.
TEST_F(PodUsage, PodWithoutAnnotationAllocatesNothing) {
  auto r = decode(PodBuilder("p").app(gpu_container("c", 1)).build());
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->empty());
}

}  // namespace
}  // namespace hamisim::fit::testing
