// The in-process device stage: its per-node rejection memo follows the node's pods (a fork
// reverted, a pod added), and each pod is fitted with its own request even when a freed
// pod's address comes back.

#include "planner/scaleup/device_stage.h"

#include <gtest/gtest.h>

#include "device/catalog/device_config.h"
#include "model/decode.h"

namespace hamisim::planner::scaleup {
namespace {

using framework::ClusterSnapshot;
using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;

const device::DeviceRegistry& registry() {
  static const device::DeviceRegistry r = device::build_registry({});
  return r;
}

// One GPU of 10000 MiB.
model::Node one_gpu_node() {
  auto objects = model::decode_objects(R"(
apiVersion: v1
kind: Node
metadata:
  name: gpu-1
  annotations:
    hami.io/node-handshake: Reported 2026-12-02 08:00:00.000000000 +0000 UTC
    hami.io/node-nvidia-register: '[{"id":"GPU-1","count":10,"devmem":10000,"devcore":100,"type":"NVIDIA A10","health":true}]'
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
)");
  EXPECT_TRUE(objects) << objects.error().message;
  return objects->nodes.at(0);
}

model::Pod pod_with_memory(const std::string& name, int mib) {
  model::Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespace_ = "ml";
  model::Container c;
  c.name = "main";
  c.resources.limits["nvidia.com/gpu"] = model::Quantity::parse("1").value();
  c.resources.limits["nvidia.com/gpumem"] = model::Quantity::parse(std::to_string(mib)).value();
  pod.spec.containers.push_back(std::move(c));
  return pod;
}

struct Stage {
  engine::Engine engine{registry(), nullptr};
  DeviceCache cache{engine};
  InProcessDeviceStage stage{cache};
  ClusterSnapshot snapshot;

  Stage() { EXPECT_TRUE(snapshot.add_node(one_gpu_node()).ok()); }

  // Empty when the pod fits gpu-1, else the rejection.
  std::string verdict(const PodInfo& pod) {
    const NodeInfo* node = snapshot.node("gpu-1");
    auto v = stage.filter(pod, std::span(&node, 1));
    EXPECT_TRUE(v) << v.error().message;
    return v ? v->rejections.at(0) : "error";
  }

  // Places the pod with the allocation the stage chose.
  void place(const PodInfoPtr& pod) {
    const NodeInfo* node = snapshot.node("gpu-1");
    auto v = stage.filter(*pod, std::span(&node, 1));
    ASSERT_TRUE(v && v->survived(0));
    model::Pod placed = pod->pod();
    for (const auto& [k, val] : v->allocations[0]) placed.metadata.annotations[k] = val;
    ASSERT_TRUE(snapshot.add_pod(PodInfo::make(std::move(placed)), "gpu-1").ok());
  }
};

TEST(InProcessDeviceStage, ARejectionIsForgottenWhenTheNodesPodsChange) {
  Stage s;
  PodInfoPtr wants_6000 = PodInfo::make(pod_with_memory("b", 6000));
  s.snapshot.fork();
  s.place(PodInfo::make(pod_with_memory("a", 6000)));
  EXPECT_EQ(s.verdict(*wants_6000), "1/1 CardInsufficientMemory");
  EXPECT_EQ(s.verdict(*wants_6000), "1/1 CardInsufficientMemory");  // from the memo
  // The fork reverted, the node is empty again: the remembered rejection must not stay.
  ASSERT_TRUE(s.snapshot.revert().ok());
  EXPECT_EQ(s.verdict(*wants_6000), "");
  // A pod added since: what fitted before is asked again.
  s.place(PodInfo::make(pod_with_memory("c", 5000)));
  EXPECT_EQ(s.verdict(*wants_6000), "1/1 CardInsufficientMemory");
}

TEST(InProcessDeviceStage, PodsThatReadAlikeShareARejectionOthersDoNot) {
  Stage s;
  s.place(PodInfo::make(pod_with_memory("a", 6000)));
  EXPECT_EQ(s.verdict(*PodInfo::make(pod_with_memory("b", 6000))), "1/1 CardInsufficientMemory");
  // Another name, the same request: the same answer.
  EXPECT_EQ(s.verdict(*PodInfo::make(pod_with_memory("c", 6000))), "1/1 CardInsufficientMemory");
  // A request that fits is not answered from b's rejection.
  EXPECT_EQ(s.verdict(*PodInfo::make(pod_with_memory("d", 4000))), "");
  // Nor is a pod that differs only in an annotation the fit reads.
  model::Pod pinned = pod_with_memory("e", 4000);
  pinned.metadata.annotations["nvidia.com/nouse-gpuuuid"] = "GPU-1";
  EXPECT_NE(s.verdict(*PodInfo::make(std::move(pinned))), "");
}

// A pod freed and another made right after usually get the same address: the stage must
// still fit the second with its own request.
TEST(InProcessDeviceStage, EachPodIsFittedWithItsOwnRequestWhenAddressesAreReused) {
  Stage s;
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(s.verdict(*PodInfo::make(pod_with_memory("small", 1000))), "");
    EXPECT_EQ(s.verdict(*PodInfo::make(pod_with_memory("big", 20000))),
              "1/1 CardInsufficientMemory");
  }
}

// The cache remembers a pod's allocation by serial and does not keep the pod: the pods an
// estimation placed are freed when it reverts (a large plan kept every one until its end).
TEST(InProcessDeviceStage, PlacedPodsAreFreedWhenTheForkReverts) {
  Stage s;
  std::weak_ptr<const PodInfo> placed;
  s.snapshot.fork();
  {
    PodInfoPtr pod = PodInfo::make(pod_with_memory("a", 6000));
    s.place(pod);
    placed = s.snapshot.node("gpu-1")->pods().at(0);
  }
  EXPECT_EQ(s.verdict(*PodInfo::make(pod_with_memory("b", 6000))), "1/1 CardInsufficientMemory");
  ASSERT_TRUE(s.snapshot.revert().ok());
  EXPECT_TRUE(placed.expired());
  EXPECT_EQ(s.verdict(*PodInfo::make(pod_with_memory("c", 6000))), "");
}

// What an estimate cached is forgotten at the end of its scope; the node's answers stay the
// same, made again from the snapshot.
TEST(InProcessDeviceStage, AnEndedScopeForgetsItsEntriesAndAnswersAlike) {
  Stage s;
  s.place(PodInfo::make(pod_with_memory("a", 3000)));
  s.cache.begin_scope();
  s.snapshot.fork();
  s.place(PodInfo::make(pod_with_memory("b", 3000)));
  EXPECT_EQ(s.verdict(*PodInfo::make(pod_with_memory("c", 6000))), "1/1 CardInsufficientMemory");
  ASSERT_TRUE(s.snapshot.revert().ok());
  s.cache.end_scope();
  EXPECT_EQ(s.verdict(*PodInfo::make(pod_with_memory("d", 6000))), "");
  EXPECT_EQ(s.verdict(*PodInfo::make(pod_with_memory("e", 8000))), "1/1 CardInsufficientMemory");
}

}  // namespace
}  // namespace hamisim::planner::scaleup
