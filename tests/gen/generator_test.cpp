// `hamisim gen` (issue #8): the same seed gives the same bytes, everything it writes decodes
// with the project's own decoders, no device is over-committed, and the planner runs on it.

#include "gen/generator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include <map>
#include <set>

#include "device/catalog/device_config.h"
#include "device/codec.h"
#include "fit/inventory.h"
#include "model/decode.h"
#include "planner/nodegroups/node_groups.h"
#include "planner/scaleup/planning.h"
#include "profile/device_profiles.h"
#include "state/snapshot_source.h"

namespace hamisim::gen {
namespace {

GenOptions small() {
  GenOptions o;
  o.nodes = 12;
  o.pods_per_node = 20;
  o.pending = 40;
  o.groups = 4;
  o.node_groups = 5;  // every GPU model; group 3 (t4) is cold-zero
  o.seed = 7;
  return o;
}

GeneratedCluster generated(const GenOptions& o) {
  auto c = generate(o);
  EXPECT_TRUE(c) << c.error().message;
  return c.value_or(GeneratedCluster{});
}

TEST(Generator, SameSeedSameBytesOtherSeedOtherBytes) {
  const GeneratedCluster a = generated(small());
  const GeneratedCluster b = generated(small());
  EXPECT_EQ(a.cluster_json, b.cluster_json);
  EXPECT_EQ(a.node_groups_yaml, b.node_groups_yaml);
  EXPECT_EQ(a.device_profiles_yaml, b.device_profiles_yaml);
  GenOptions other = small();
  other.seed = 8;
  EXPECT_NE(generated(other).cluster_json, a.cluster_json);
}

TEST(Generator, RejectsOptionsOutOfRange) {
  GenOptions o = small();
  o.groups = 0;
  EXPECT_FALSE(generate(o));
  o = small();
  o.gpus_per_node = 0;
  EXPECT_FALSE(generate(o));
}

TEST(Generator, EveryObjectDecodesAndNodesAreRealisticallyLarge) {
  const GenOptions o = small();
  const GeneratedCluster c = generated(o);
  auto objects = model::decode_objects_json(c.cluster_json);
  ASSERT_TRUE(objects) << objects.error().message;
  EXPECT_EQ(objects->nodes.size(), 12u);
  EXPECT_EQ(objects->pods.size(), static_cast<size_t>(12 * 20 + 40));
  EXPECT_EQ(objects->skipped_items, 0);
  EXPECT_EQ(c.stats.running_pods, 240);
  EXPECT_EQ(c.stats.pending_pods, 40);
  // A real GPU node is ~12 KB (images and managedFields most of it).
  EXPECT_GT(c.stats.largest_node_bytes, 10000u);
  EXPECT_LT(c.stats.largest_node_bytes, 20000u);

  const device::DeviceRegistry registry = device::build_registry({});
  std::set<std::string> modes;
  for (const auto& json : objects->node_json) {
    auto node = model::decode_node_json(json);
    ASSERT_TRUE(node) << node.error().message;
    const fit::InventoryResult inv = fit::read_registered_inventory(*node, registry);
    ASSERT_EQ(inv.state, fit::InventoryResult::State::kOk) << inv.message;
    EXPECT_EQ(inv.inventory.devices.size(), 8u);
    for (const auto& d : inv.inventory.devices) modes.insert(d.mode);
    EXPECT_EQ(node->status.allocatable.at("nvidia.com/gpu").value(),
              8 * inv.inventory.devices[0].count);
  }
  EXPECT_EQ(modes, (std::set<std::string>{"hami-core", "mig"}));

  auto groups = planner::nodegroups::parse_node_groups(c.node_groups_yaml, "node-groups.yaml");
  ASSERT_TRUE(groups) << groups.error().message;
  EXPECT_EQ(groups->groups.size(), 5u);
  EXPECT_EQ(groups->groups[3].device_profile, "t4-x8");
  ASSERT_TRUE(groups->groups[3].template_node);
  auto profiles =
      profile::parse_device_profiles(c.device_profiles_yaml, "device-profiles.yaml", registry);
  ASSERT_TRUE(profiles) << profiles.error().message;
  EXPECT_NE(profiles->find("a100mig-x8"), nullptr);
  EXPECT_NE(profiles->find("t4-x8"), nullptr);
}

// Pods carry what the live filter, bind and the device plugin leave; their allocations,
// summed per device, stay within every device's slots, memory, cores and MIG slices.
TEST(Generator, RunningPodsCarryLiveAnnotationsAndNeverOverCommit) {
  GenOptions o = small();
  o.pods_per_node = 60;  // more than fits: some pods must run without devices
  const GeneratedCluster c = generated(o);
  auto objects = model::decode_objects_json(c.cluster_json);
  ASSERT_TRUE(objects) << objects.error().message;
  const device::DeviceRegistry registry = device::build_registry({});

  std::map<std::string, fit::NodeInventory> inventories;
  std::map<std::string, fit::NodeUsage> usage;
  for (const auto& n : objects->nodes) {
    auto inv = fit::read_registered_inventory(n, registry);
    usage[n.metadata.name] = fit::fresh_usage(inv.inventory);
    inventories[n.metadata.name] = std::move(inv.inventory);
  }
  int device_pods = 0, mig_pods = 0, pending = 0;
  std::set<std::string> owners, names;
  for (const auto& p : objects->pods) {
    EXPECT_TRUE(names.insert(p.metadata.namespace_ + "/" + p.metadata.name).second)
        << "duplicate pod " << p.metadata.name;
    if (p.spec.node_name.empty()) {
      ++pending;
      EXPECT_EQ(p.status.phase, "Pending");
      ASSERT_EQ(p.metadata.owner_references.size(), 1u);
      owners.insert(p.metadata.owner_references[0].name);
      EXPECT_GT(p.spec.containers[0].resources.limits.at("nvidia.com/gpumem").value(), 0);
      continue;
    }
    EXPECT_EQ(p.status.phase, "Running");
    const std::string* node = model::find_annotation(p.metadata, device::kAssignedNodeAnnotation);
    if (node == nullptr) {
      EXPECT_FALSE(p.spec.containers[0].resources.limits.contains("nvidia.com/gpu"));
      continue;
    }
    ++device_pods;
    EXPECT_EQ(*node, p.spec.node_name);
    EXPECT_EQ(p.metadata.labels.at("hami.io/vgpu-node"), *node);
    EXPECT_EQ(*model::find_annotation(p.metadata, device::kBindPhaseAnnotation), "success");
    const std::string* allocated =
        model::find_annotation(p.metadata, device::kNvidiaAllocatedAnnotation);
    ASSERT_NE(allocated, nullptr);
    EXPECT_EQ(*allocated, *model::find_annotation(p.metadata, device::kNvidiaToAllocateAnnotation));
    if (model::find_annotation(p.metadata, device::kMigAllocationsAnnotation)) ++mig_pods;
    auto a = fit::decode_pod_allocation(p, registry);
    ASSERT_TRUE(a) << a.error().message;
    fit::add_pod_usage(usage[*node], *a);
  }
  EXPECT_EQ(pending, 40);
  EXPECT_EQ(owners.size(), 4u);
  EXPECT_EQ(device_pods, c.stats.running_device_pods);
  EXPECT_GT(device_pods, 12 * 10);
  EXPECT_LT(device_pods, 12 * 60);  // the nodes filled up
  EXPECT_GT(mig_pods, 0);
  for (const auto& [name, u] : usage) {
    for (const auto& d : u.devices) {
      EXPECT_LE(d.used, d.count) << name << " " << d.id;
      EXPECT_LE(d.usedmem, d.totalmem) << name << " " << d.id;
      EXPECT_LE(d.usedcores, d.totalcore) << name << " " << d.id;
      uint32_t slices = 0;
      for (const auto& m : d.mig_in_use) slices += m.placement.size;
      EXPECT_LE(slices, 8u) << name << " " << d.id;
    }
  }
}

TEST(Generator, PlannerRunsOnASmallGeneratedCluster) {
  const GeneratedCluster c = generated(small());
  auto objects = model::decode_objects_json(c.cluster_json);
  ASSERT_TRUE(objects) << objects.error().message;
  auto registry = std::make_shared<const device::DeviceRegistry>(device::build_registry({}));
  auto profiles =
      profile::parse_device_profiles(c.device_profiles_yaml, "device-profiles.yaml", *registry);
  ASSERT_TRUE(profiles) << profiles.error().message;
  planner::scaleup::PlanInput input;
  input.nodes = objects->nodes;
  input.pods = objects->pods;
  auto groups = planner::nodegroups::parse_node_groups(c.node_groups_yaml, "node-groups.yaml");
  ASSERT_TRUE(groups) << groups.error().message;
  input.node_groups = std::move(groups).value();
  auto planning = planner::scaleup::Planning::create(
      registry, std::make_shared<const profile::DeviceProfiles>(std::move(profiles).value()),
      std::nullopt);
  ASSERT_TRUE(planning) << planning.error().message;
  auto plan = (*planning)->plan(input, {});
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->pods.size(), 40u);
  EXPECT_EQ(plan->groups.size(), 5u);
  EXPECT_EQ(plan->cluster_nodes, 12);
  EXPECT_NE(plan->decision, planner::scaleup::Plan::Decision::kNoScaleUpNeeded) << plan->summary;
}

// `hamisim serve --cluster-snapshot DIR` reads the written directory (the live path validates
// every object as the API server would: label syntax, names, ...).
TEST(Generator, WrittenDirectoryLoadsAsAClusterSnapshot) {
  const GeneratedCluster c = generated(small());
  const auto dir =
      std::filesystem::temp_directory_path() / ("hamisim-gen-test-" + std::to_string(::getpid()));
  ASSERT_TRUE(write_cluster(c, dir.string()));
  auto source = state::SnapshotSource::load({dir.string()}, {});
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(source) << source.error().message;
  EXPECT_EQ((*source)->store().list(state::Kind::kNode).items.size(), 12u);
  EXPECT_EQ((*source)->store().list(state::Kind::kPod).items.size(), 280u);
}

}  // namespace
}  // namespace hamisim::gen
