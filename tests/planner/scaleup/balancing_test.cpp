// Similar node groups and BalanceScaleUpBetweenGroups (ca-scale-up.md §4.7).

#include "planner/scaleup/balancing.h"

#include <gtest/gtest.h>

#include "model/decode.h"

namespace hamisim::planner::scaleup {
namespace {

model::Node node(const std::string& yaml) {
  auto n = model::decode_node(yaml);
  EXPECT_TRUE(n) << n.error().message;
  return n.value_or(model::Node{});
}

const char* kBase = R"(
kind: Node
metadata: {name: a, labels: {pool: x, kubernetes.io/hostname: a, topology.kubernetes.io/zone: z1}}
status:
  capacity: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "4"}
  allocatable: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "4"}
)";

TEST(Similarity, IgnoredLabelsAndSmallMemoryDifferencesAreSimilar) {
  model::Node a = node(kBase);
  model::Node b = a;
  b.metadata.labels["kubernetes.io/hostname"] = "b";
  b.metadata.labels["topology.kubernetes.io/zone"] = "z2";
  b.status.capacity["memory"] = *model::Quantity::parse("32500Mi");  // 0.8% less
  std::string why;
  EXPECT_TRUE(similar_templates({&a, nullptr}, {&b, nullptr}, {}, &why)) << why;
}

TEST(Similarity, DifferencesThatMatter) {
  model::Node a = node(kBase);
  std::string why;
  model::Node gpu = a;
  gpu.status.capacity["nvidia.com/gpu"] = model::Quantity::from_int(8);
  EXPECT_FALSE(similar_templates({&a, nullptr}, {&gpu, nullptr}, {}, &why));
  EXPECT_EQ(why, "capacity nvidia.com/gpu differs: 4 vs 8");
  model::Node label = a;
  label.metadata.labels["pool"] = "y";
  EXPECT_FALSE(similar_templates({&a, nullptr}, {&label, nullptr}, {}, &why));
  EXPECT_EQ(why, "label pool differs");
  model::Node missing = a;
  missing.status.capacity.erase("nvidia.com/gpu");
  EXPECT_FALSE(similar_templates({&a, nullptr}, {&missing, nullptr}, {}, &why));
  // Free capacity: a template pod using 1 of 8 cpus makes free cpu differ by 12.5%.
  std::vector<model::Pod> pods(1);
  pods[0].spec.containers.resize(1);
  pods[0].spec.containers[0].resources.requests["cpu"] = model::Quantity::from_int(1);
  EXPECT_FALSE(similar_templates({&a, &pods}, {&a, nullptr}, {}, &why));
  EXPECT_EQ(why, "free cpu differs: 7000 vs 8000");
}

TEST(Balance, LevelsSizesAndRespectsMax) {
  auto out = balance_scale_up({{"a", 3, 10}, {"b", 1, 10}, {"c", 1, 2}}, 5);
  // b and c go first (smallest); c stops at 2; then b and a level out.
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].name, "b");
  EXPECT_EQ(out[0].new_size, 4);
  EXPECT_EQ(out[1].name, "c");
  EXPECT_EQ(out[1].new_size, 2);
  EXPECT_EQ(out[2].name, "a");
  EXPECT_EQ(out[2].new_size, 4);
}

TEST(Balance, CapsToFreeCapacityAndDropsFullGroups) {
  auto out = balance_scale_up({{"full", 5, 5}, {"a", 0, 2}}, 10);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "a");
  EXPECT_EQ(out[0].new_size, 2);
  EXPECT_TRUE(balance_scale_up({}, 3).empty());
}

}  // namespace
}  // namespace hamisim::planner::scaleup
