// Vendors a pod does not ask for, on a node that registers several (reference:
// hami-other-vendors.md A.5, A.9; issue #22). HAMi pads the pod's device map with an empty entry
// per container under every device type on the node, then lets every backend write its
// annotations and every key of the map add its ScoreNode. A vendor whose devices are typed
// exactly with its vendor key (Cambricon's "MLU", Ascend's chip names, MetaX's "Metax-GPU", ...)
// thus writes all-empty annotations for a pod of another vendor; one whose devices carry model
// names (NVIDIA, Hygon's "DCU-K100_AI") does not. hamisim writes those lists aligned, one ';'
// per container, as it writes its own.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace mixed_node_test {

using Annotations = std::map<std::string, std::string>;

constexpr const char* kDcuRegister = "hami.io/node-dcu-register";
constexpr const char* kModelTypedDcus =
    "dcu-0,10,65520,100,DCU-K100_AI,0,true,0,hami-core:"
    "dcu-1,10,65520,100,DCU-K100_AI,0,true,1,hami-core:";

// Two DCUs and two MLUs of 8192 MiB.
model::Node dcu_mlu_node(std::string dcus = kModelTypedDcus) {
  return vendor_node(
      "mixed", {{kDcuRegister, std::move(dcus)}},
      {{"cambricon.com/mlu.smlu.vcore", "200"}, {"cambricon.com/mlu.smlu.vmemory", "64"}});
}

model::Container dcu_container(std::string name = "main") {
  return container(std::move(name), {{"hygon.com/dcunum", "1"}, {"hygon.com/dcumem", "2048"}});
}

model::Container mlu_container(std::string name = "main") {
  return container(std::move(name),
                   {{"cambricon.com/vmlu", "1"}, {"cambricon.com/mlu.smlu.vcore", "10"}});
}

Annotations both_keys(const std::string& to_allocate, const std::string& allocated,
                      const std::string& value) {
  return {{to_allocate, value}, {allocated, value}};
}

Annotations merged(Annotations a, const Annotations& b) {
  a.insert(b.begin(), b.end());
  return a;
}

// Cambricon's annotations for a pod that asks no MLU: one empty entry per container.
Annotations mlu_padding(const std::string& value) {
  Annotations a = both_keys("hami.io/cambricon-mlu-devices-to-allocate",
                            "hami.io/cambricon-mlu-devices-allocated", value);
  a["CAMBRICON_DSMLU_ASSIGNED"] = "false";
  return a;
}

class MixedNode : public ::testing::Test {
 protected:
  const device::DeviceRegistry registry_ = chart_registry();
};

TEST_F(MixedNode, DcuPodOnDcuAndMluNodeGetsHamisEmptyMluAnnotations) {
  const NodeFit f = fit_on(PodBuilder("p").app(dcu_container()).build(), dcu_mlu_node(), registry_);
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(f.annotations,
            merged(both_keys("hami.io/dcu-devices-to-allocate", "hami.io/dcu-devices-allocated",
                             "dcu-1,DCU,2048,100:;"),
                   mlu_padding(";")));
  // The padding is not an allocation: only DCU devices are given to the pod.
  EXPECT_EQ(f.devices.size(), 1u);
  EXPECT_TRUE(f.devices.contains("DCU"));
}

TEST_F(MixedNode, PaddingHasOneEntryPerContainerInitContainersFirst) {
  const model::Pod pod = PodBuilder("p")
                             .init(plain_container("setup"))
                             .app(plain_container("sidecar"))
                             .app(dcu_container())
                             .build();
  const NodeFit f = fit_on(pod, dcu_mlu_node(), registry_);
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(f.annotations,
            merged(both_keys("hami.io/dcu-devices-to-allocate", "hami.io/dcu-devices-allocated",
                             ";;dcu-1,DCU,2048,100:;"),
                   mlu_padding(";;;")));
}

TEST_F(MixedNode, ModelTypedDevicesAreNotPaddedCommonWordTypedOnesAre) {
  // Hygon's plugin names its devices by model ("DCU-K100_AI"): HAMi's padding lands under that
  // type, which no backend reads, so an MLU pod carries Cambricon's annotations only.
  const model::Pod pod = PodBuilder("p").app(mlu_container()).build();
  NodeFit f = fit_on(pod, dcu_mlu_node(), registry_);
  ASSERT_TRUE(f.fits) << f.reason;
  const Annotations mlu_only = f.annotations;
  EXPECT_FALSE(mlu_only.contains("hami.io/dcu-devices-allocated"));
  EXPECT_EQ(mlu_only.at("CAMBRICON_DSMLU_ASSIGNED"), "false");
  EXPECT_EQ(mlu_only.at("hami.io/cambricon-mlu-devices-allocated"),
            "mixed-cambricon-mlu-1,MLU,8192,10:;");

  // DCUs typed exactly "DCU" (as HAMi's own tests type them) are padded like the MLUs.
  f = fit_on(pod,
             dcu_mlu_node("dcu-0,10,65520,100,DCU,0,true,0,hami-core:"
                          "dcu-1,10,65520,100,DCU,0,true,1,hami-core:"),
             registry_);
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(f.annotations, merged(mlu_only, both_keys("hami.io/dcu-devices-to-allocate",
                                                      "hami.io/dcu-devices-allocated", ";")));
}

TEST_F(MixedNode, SingleVendorNodesAreUnchanged) {
  NodeFit f = fit_on(PodBuilder("p").app(dcu_container()).build(),
                     vendor_node("dcu-only", {{kDcuRegister, kModelTypedDcus}}), registry_);
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(f.annotations, both_keys("hami.io/dcu-devices-to-allocate",
                                     "hami.io/dcu-devices-allocated", "dcu-1,DCU,2048,100:;"));

  f = fit_on(PodBuilder("p").app(mlu_container()).build(),
             vendor_node("mlu-only", {},
                         {{"cambricon.com/mlu.smlu.vcore", "200"},
                          {"cambricon.com/mlu.smlu.vmemory", "64"}}),
             registry_);
  ASSERT_TRUE(f.fits) << f.reason;
  Annotations mlu = both_keys("hami.io/cambricon-mlu-devices-to-allocate",
                              "hami.io/cambricon-mlu-devices-allocated",
                              "mlu-only-cambricon-mlu-1,MLU,8192,10:;");
  mlu["CAMBRICON_DSMLU_ASSIGNED"] = "false";
  mlu["CAMBRICON_DSMLU_PROFILE"] = "1_10_32";
  EXPECT_EQ(f.annotations, mlu);
}

TEST_F(MixedNode, AFailedFitWritesNothing) {
  const model::Pod pod =
      PodBuilder("p")
          .app(container("main", {{"hygon.com/dcunum", "1"}, {"hygon.com/dcumem", "999999"}}))
          .build();
  const NodeFit f = fit_on(pod, dcu_mlu_node(), registry_);
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(f.reason, "2/2 CardInsufficientMemory");
  EXPECT_TRUE(f.annotations.empty());
}

TEST_F(MixedNode, AscendPaddingOnTheLivePathCarriesItsTimeAndNullRuntimeList) {
  const model::Node node = vendor_node(
      "gpu-npu",
      {{"hami.io/node-nvidia-register", register_json({gpu("GPU-0"), gpu("GPU-1").with_index(1)})},
       {"hami.io/node-register-Ascend910B3",
        R"([{"id":"npu-0","count":4,"devmem":65536,"devcore":20,"type":"Ascend910B3","health":true}])"}});
  const model::Pod pod = PodBuilder("p").app(gpu_container("main", 1, 1000)).build();
  const DescriptionResult inv = read_registered_description(node, registry_);
  ASSERT_EQ(inv.state, DescriptionResult::State::kOk) << inv.message;
  auto prepared = prepare_pod(pod, registry_, FitPolicy{});
  ASSERT_TRUE(prepared);
  // Live: a node and a time. The Ascend chip the pod does not ask for writes its keys, the
  // time-stamped one included (HAMi's `predicate-time`, Unix seconds).
  NodeFit f = fit_pod(*prepared, fresh_usage(inv.description), inv.description, registry_, nullptr,
                      AllocationSite{"gpu-npu", int64_t{1'700'000'000'123'456'789}});
  ASSERT_TRUE(f.fits) << f.reason;
  Annotations want = both_keys("hami.io/vgpu-devices-to-allocate", "hami.io/vgpu-devices-allocated",
                               "GPU-1,NVIDIA,1000,0:;");
  want.merge(both_keys("hami.io/Ascend910B3-devices-to-allocate",
                       "hami.io/Ascend910B3-devices-allocated", ";"));
  want["huawei.com/Ascend910B3"] = "null";
  want["predicate-time"] = "1700000000";
  EXPECT_EQ(f.annotations, want);
  // Simulation: no time, no time-stamped key.
  f = fit_pod(*prepared, fresh_usage(inv.description), inv.description, registry_);
  want.erase("predicate-time");
  EXPECT_EQ(f.annotations, want);
}

TEST_F(MixedNode, PaddedVendorsAddTheirScoreNode) {
  // MetaX GPU's ScoreNode for an all-empty list reads the loss of 0 cards: absent, so 2000
  // under binpack (B.10.a §6). HAMi adds it to the node score of a DCU pod on this node.
  auto node = [&](bool losses) {
    model::Node n =
        vendor_node("dcu-metax", {{kDcuRegister, kModelTypedDcus}}, {{"metax-tech.com/gpu", "2"}});
    if (losses) n.metadata.annotations["metax-tech.com/gpu.topology.losses"] = R"({"1":100})";
    return n;
  };
  const model::Pod pod = PodBuilder("p").app(dcu_container()).build();
  const NodeFit without = fit_on(pod, node(false), registry_);
  const NodeFit with = fit_on(pod, node(true), registry_);
  ASSERT_TRUE(without.fits && with.fits);
  EXPECT_FLOAT_EQ(with.node_score - without.node_score, 2000.0f);
  EXPECT_EQ(with.annotations.at("hami.io/metax-gpu-devices-allocated"), ";");
  EXPECT_EQ(with.annotations.at("hami.io/metax-gpu-devices-to-allocate"), ";");
}

TEST_F(MixedNode, PaddedAnnotationsChargeNothingWhenReadBack) {
  const model::Node node = dcu_mlu_node();
  const NodeFit first = fit_on(PodBuilder("p").app(dcu_container()).build(), node, registry_);
  ASSERT_TRUE(first.fits) << first.reason;
  // The pod as the live path patches it, and as CA sends it back in SimulatedPods.
  PodBuilder placed("p");
  placed.node("mixed").phase("Running").app(dcu_container());
  for (const auto& [k, v] : first.annotations) placed.annotate(k, v);
  auto allocation = decode_pod_allocation(placed.build(), registry_);
  ASSERT_TRUE(allocation) << allocation.error().message;
  EXPECT_EQ(allocation->charges.size(), 1u);
  EXPECT_TRUE(allocation->charges.contains("DCU"));
  PodBuilder bare("bare");
  for (const auto& [k, v] : first.annotations) bare.annotate(k, v);
  allocation = decode_pod_allocation(bare.build(), registry_);
  ASSERT_TRUE(allocation) << allocation.error().message;
  EXPECT_EQ(allocation->charges.size(), 1u);

  // The MLUs stay whole for an MLU pod after it.
  const NodeFit mlu =
      fit_on(PodBuilder("q").app(container("main", {{"cambricon.com/vmlu", "1"}})).build(), node,
             registry_, {placed.build()});
  ASSERT_TRUE(mlu.fits) << mlu.reason;
  EXPECT_EQ(mlu.annotations.at("hami.io/cambricon-mlu-devices-allocated"),
            "mixed-cambricon-mlu-1,MLU,8192,100:;");
}

}  // namespace mixed_node_test
}  // namespace hamisim::fit::testing
