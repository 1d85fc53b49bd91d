// The pools the allocator considers for one node (src/dra/pools.h), each case from the rules
// of ../shared/reference/dra.md §2.4 and its example A.4.

#include "dra/pools.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hamisim::dra {
namespace pools_test {

ResourceSlice slice(std::string name, std::string pool, int64_t generation, int64_t count,
                    std::optional<std::string> node, std::vector<std::string> devices,
                    std::string driver = "hami-core-gpu.project-hami.io") {
  ResourceSlice s;
  s.metadata.name = std::move(name);
  s.driver = std::move(driver);
  s.pool = {.name = std::move(pool), .generation = generation, .resource_slice_count = count};
  if (node) {
    s.scope.node_name = std::move(node);
  } else {
    s.scope.all_nodes = true;
  }
  for (auto& d : devices) s.devices.emplace_back().name = std::move(d);
  return s;
}

// Node "node-a" with the label zone=z1: selectors are matched by their first term's first
// expression's value, which is all these tests need.
bool in_zone_z1(const model::NodeSelector& selector) {
  return !selector.terms.empty() && !selector.terms[0].match_expressions.empty() &&
         selector.terms[0].match_expressions[0].values == std::vector<std::string>{"z1"};
}

std::vector<std::string> names(const std::vector<Pool>& pools) {
  std::vector<std::string> out;
  for (const auto& p : pools) out.push_back(p.driver + "/" + p.name);
  return out;
}

TEST(DraPools, NodeLocalSlicesOfTheNodeOnly) {
  const std::vector<ResourceSlice> slices = {
      slice("node-b-gpu", "node-b", 1, 1, "node-b", {"hami-gpu-0"}),
      slice("node-a-gpu", "node-a", 1, 1, "node-a", {"hami-gpu-0", "hami-gpu-1"}),
  };
  const auto pools = gather_pools(slices, "node-a", in_zone_z1);
  ASSERT_EQ(names(pools), std::vector<std::string>{"hami-core-gpu.project-hami.io/node-a"});
  EXPECT_FALSE(pools[0].incomplete);
  EXPECT_EQ(pools[0].invalid, "");
  ASSERT_EQ(pools[0].slices.size(), 1u);
  EXPECT_EQ(pools[0].slices[0]->devices.size(), 2u);
}

TEST(DraPools, OnlyTheNewestGenerationCounts) {
  const std::vector<ResourceSlice> slices = {
      slice("s-old", "node-a", 1, 1, "node-a", {"old"}),
      slice("s-new", "node-a", 2, 1, "node-a", {"new"}),
      slice("s-older", "node-a", 0, 1, "node-a", {"older"}),
  };
  const auto pools = gather_pools(slices, "node-a", in_zone_z1);
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0].generation, 2);
  ASSERT_EQ(pools[0].slices.size(), 1u);
  EXPECT_EQ(pools[0].slices[0]->devices[0].name, "new");
  EXPECT_FALSE(pools[0].incomplete);
}

TEST(DraPools, AnIncompletePoolAndAnObsoleteOne) {
  // Reference A.4: two slices announced at generation 4, one visible: incomplete.
  std::vector<ResourceSlice> slices = {slice("p-0", "p", 4, 2, std::nullopt, {"d0"}, "d.io")};
  auto pools = gather_pools(slices, "node-a", in_zone_z1);
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_TRUE(pools[0].incomplete);
  EXPECT_EQ(pools[0].invalid, "");
  // A slice of generation 5 anywhere (here for another node) makes generation 4 obsolete:
  // the pool is dropped until all of generation 5 is visible.
  slices.push_back(slice("p-5", "p", 5, 2, "node-b", {"d9"}, "d.io"));
  pools = gather_pools(slices, "node-a", in_zone_z1);
  EXPECT_TRUE(pools.empty());
}

TEST(DraPools, SlicesForOtherNodesCompleteAPool) {
  // One pool across two nodes (count 2): node-a sees its own slice and the pool is complete;
  // node-b's slice is kept apart, for counters shared across the pool.
  const std::vector<ResourceSlice> slices = {
      slice("p-b", "p", 3, 2, "node-b", {"db"}, "d.io"),
      slice("p-a", "p", 3, 2, "node-a", {"da"}, "d.io"),
  };
  const auto pools = gather_pools(slices, "node-a", in_zone_z1);
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_FALSE(pools[0].incomplete);
  ASSERT_EQ(pools[0].slices.size(), 1u);
  EXPECT_EQ(pools[0].slices[0]->metadata.name, "p-a");
  ASSERT_EQ(pools[0].other_slices.size(), 1u);
  EXPECT_EQ(pools[0].other_slices[0]->metadata.name, "p-b");
}

// Kubernetes 1.37 with DRADeviceCompatibilityGroups off (its default) ignores a slice whose
// devices declare compatibility groups: the pool it belongs to is incomplete, so none of its
// devices is allocated, whatever node the other slices are for.
TEST(DraPools, ASliceWithCompatibilityGroupsLeavesItsPoolIncomplete) {
  std::vector<ResourceSlice> slices = {
      slice("p-a", "p", 1, 2, "node-a", {"da"}, "d.io"),
      slice("p-b", "p", 1, 2, "node-b", {"db"}, "d.io"),
  };
  ASSERT_FALSE(gather_pools(slices, "node-a", in_zone_z1).at(0).incomplete);
  slices[1].devices[0].consumes_counters = {{"set", {}, {"group-1"}}};
  auto pools = gather_pools(slices, "node-a", in_zone_z1);
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_TRUE(pools[0].incomplete);
  // Only slices with groups for the node: no pool at all, as in Kubernetes.
  slices[0].devices[0].consumes_counters = {{"set", {}, {"group-1"}}};
  EXPECT_TRUE(gather_pools(slices, "node-a", in_zone_z1).empty());
}

TEST(DraPools, InvalidPools) {
  // The same device name in two slices of the node.
  std::vector<ResourceSlice> slices = {slice("s1", "p", 1, 2, "node-a", {"gpu-0"}, "d.io"),
                                       slice("s2", "p", 1, 2, "node-a", {"gpu-0"}, "d.io")};
  auto pools = gather_pools(slices, "node-a", in_zone_z1);
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0].invalid, "duplicate device name gpu-0");

  // A device consuming a counter set the pool does not have, or a counter the set lacks.
  ResourceSlice counters = slice("c", "q", 1, 2, "node-a", {}, "d.io");
  counters.shared_counters.push_back({.name = "gpu-0-counters", .counters = {{"memory", {}}}});
  ResourceSlice devices = slice("d", "q", 1, 2, "node-a", {"mig-0"}, "d.io");
  devices.devices[0].consumes_counters.push_back({.counter_set = "gpu-1-counters", .counters = {}});
  slices = {counters, devices};
  pools = gather_pools(slices, "node-a", in_zone_z1);
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0].invalid, "counter set gpu-1-counters not found");
  slices[1].devices[0].consumes_counters[0] = {.counter_set = "gpu-0-counters",
                                               .counters = {{"cores", {}}}};
  pools = gather_pools(slices, "node-a", in_zone_z1);
  EXPECT_EQ(pools[0].invalid, "counter cores not found in counter set gpu-0-counters");
  slices[1].devices[0].consumes_counters[0].counters = {{"memory", {}}};
  pools = gather_pools(slices, "node-a", in_zone_z1);
  EXPECT_EQ(pools[0].invalid, "");
  // Two counter sets of one name.
  slices.push_back(slice("e", "q", 1, 3, "node-a", {}, "d.io"));
  slices[2].shared_counters.push_back({.name = "gpu-0-counters", .counters = {}});
  for (auto& s : slices) s.pool.resource_slice_count = 3;
  pools = gather_pools(slices, "node-a", in_zone_z1);
  EXPECT_EQ(pools[0].invalid, "duplicate counter set name gpu-0-counters");
}

TEST(DraPools, OrderIsDriverPoolThenSliceNameWithBindingConditionsLast) {
  std::vector<ResourceSlice> slices = {
      slice("z", "pool-b", 1, 1, std::nullopt, {"d"}, "a.io"),
      slice("late", "pool-a", 1, 1, std::nullopt, {"d"}, "a.io"),
      slice("x", "pool-a", 1, 1, std::nullopt, {"d"}, "b.io"),
      slice("s2", "multi", 1, 2, std::nullopt, {"d2"}, "c.io"),
      slice("s1", "multi", 1, 2, std::nullopt, {"d1"}, "c.io"),
  };
  slices[1].devices[0].binding_conditions = {"attached"};
  const auto pools = gather_pools(slices, "node-a", in_zone_z1);
  EXPECT_EQ(names(pools),
            (std::vector<std::string>{"a.io/pool-b", "b.io/pool-a", "c.io/multi", "a.io/pool-a"}));
  EXPECT_TRUE(pools[3].has_binding_conditions);
  ASSERT_EQ(pools[2].slices.size(), 2u);
  EXPECT_EQ(pools[2].slices[0]->metadata.name, "s1");
  EXPECT_EQ(pools[2].slices[1]->metadata.name, "s2");
}

NodeScope scope_of(std::optional<std::string> node, std::optional<model::NodeSelector> selector) {
  NodeScope scope;
  scope.node_name = std::move(node);
  scope.node_selector = std::move(selector);
  return scope;
}

TEST(DraPools, NodeSelectorsAndPerDeviceNodeSelection) {
  model::NodeSelector z1, z2;
  z1.terms.emplace_back().match_expressions.push_back(
      {.key = "zone", .op = "In", .values = {"z1"}});
  z2.terms.emplace_back().match_expressions.push_back(
      {.key = "zone", .op = "In", .values = {"z2"}});
  ResourceSlice by_selector = slice("sel", "zonal", 1, 1, std::nullopt, {"d"}, "n.io");
  by_selector.scope = scope_of(std::nullopt, z1);
  ResourceSlice elsewhere = slice("other", "far", 1, 1, std::nullopt, {"d"}, "n.io");
  elsewhere.scope = scope_of(std::nullopt, z2);
  ResourceSlice per_device = slice("per", "mixed", 1, 1, std::nullopt, {"here", "there"}, "n.io");
  per_device.scope = {};
  per_device.per_device_node_selection = true;
  per_device.devices[0].node_scope = scope_of("node-a", std::nullopt);
  per_device.devices[1].node_scope = scope_of(std::nullopt, z2);
  const std::vector<ResourceSlice> slices = {by_selector, elsewhere, per_device};
  const auto pools = gather_pools(slices, "node-a", in_zone_z1);
  EXPECT_EQ(names(pools), (std::vector<std::string>{"n.io/mixed", "n.io/zonal"}));
  EXPECT_TRUE(device_on_node(per_device, per_device.devices[0], "node-a", in_zone_z1));
  EXPECT_FALSE(device_on_node(per_device, per_device.devices[1], "node-a", in_zone_z1));
  EXPECT_TRUE(device_on_node(by_selector, by_selector.devices[0], "node-a", in_zone_z1));
  // A slice with no recognizable scope is for no node.
  ResourceSlice none = slice("none", "p", 1, 1, std::nullopt, {"d"}, "n.io");
  none.scope = {};
  EXPECT_TRUE(gather_pools({none}, "node-a", in_zone_z1).empty());
}

}  // namespace pools_test
}  // namespace hamisim::dra
