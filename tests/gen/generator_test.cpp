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
#include "dra/decode.h"
#include "fit/description.h"
#include "model/decode.h"
#include "planner/framework/dra_cluster.h"
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
    const fit::DescriptionResult inv = fit::read_registered_description(*node, registry);
    ASSERT_EQ(inv.state, fit::DescriptionResult::State::kOk) << inv.message;
    EXPECT_EQ(inv.description.devices.size(), 8u);
    for (const auto& d : inv.description.devices) modes.insert(d.mode);
    EXPECT_EQ(node->status.allocatable.at("nvidia.com/gpu").value(),
              8 * inv.description.devices[0].count);
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

  std::map<std::string, fit::DeviceDescription> descriptions;
  std::map<std::string, fit::NodeUsage> usage;
  for (const auto& n : objects->nodes) {
    auto inv = fit::read_registered_description(n, registry);
    usage[n.metadata.name] = fit::fresh_usage(inv.description);
    descriptions[n.metadata.name] = std::move(inv.description);
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

// Plans `input` (its nodes, pods and DRA objects) with the generated node groups and device
// profiles.
Result<planner::scaleup::Plan> plan_generated(const GeneratedCluster& c,
                                              planner::scaleup::PlanInput input) {
  auto registry = std::make_shared<const device::DeviceRegistry>(device::build_registry({}));
  auto profiles =
      profile::parse_device_profiles(c.device_profiles_yaml, "device-profiles.yaml", *registry);
  if (!profiles) return profiles.error();
  auto groups = planner::nodegroups::parse_node_groups(c.node_groups_yaml, "node-groups.yaml");
  if (!groups) return groups.error();
  input.node_groups = std::move(groups).value();
  auto planning = planner::scaleup::Planning::create(
      registry, std::make_shared<const profile::DeviceProfiles>(std::move(profiles).value()),
      std::nullopt);
  if (!planning) return planning.error();
  return (*planning)->plan(input, {});
}

TEST(Generator, PlannerRunsOnASmallGeneratedCluster) {
  const GeneratedCluster c = generated(small());
  auto objects = model::decode_objects_json(c.cluster_json);
  ASSERT_TRUE(objects) << objects.error().message;
  planner::scaleup::PlanInput input;
  input.nodes = objects->nodes;
  input.pods = objects->pods;
  auto plan = plan_generated(c, std::move(input));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->pods.size(), 40u);
  EXPECT_EQ(plan->groups.size(), 5u);
  EXPECT_EQ(plan->cluster_nodes, 12);
  EXPECT_NE(plan->decision, planner::scaleup::Plan::Decision::kNoScaleUpNeeded) << plan->summary;
}

// ---- DRA form (issue #28) ------------------------------------------------------------------

GenOptions small_dra() {
  GenOptions o = small();
  o.dra = true;
  return o;
}

struct DraCluster {
  model::ObjectSet objects;
  dra::Objects dra;
};

// Loads a DRA cluster as `plan --cluster` does: DRA kinds kept, each read by the strict
// decoder.
DraCluster load_dra(const GeneratedCluster& c) {
  DraCluster out;
  auto objects = model::decode_objects_json(c.cluster_json, {.dra = true});
  EXPECT_TRUE(objects) << objects.error().message;
  if (!objects) return out;
  out.objects = std::move(objects).value();
  for (const model::RawObject& raw : out.objects.dra_objects) {
    const Status st = dra::decode_object(raw.json, raw.path, out.dra);
    EXPECT_TRUE(st.ok()) << st.error().message;
  }
  return out;
}

std::string attribute_string(const dra::Device& d, const std::string& name) {
  auto it = d.attributes.find(name);
  if (it == d.attributes.end() || !std::holds_alternative<std::string>(it->second)) return "";
  return std::get<std::string>(it->second);
}

TEST(GeneratorDra, SameSeedSameBytesAndTheSameNodesAndPodsAsTheAnnotationForm) {
  const GeneratedCluster a = generated(small_dra());
  EXPECT_EQ(a.cluster_json, generated(small_dra()).cluster_json);
  const GeneratedCluster annotated = generated(small());
  EXPECT_EQ(a.node_groups_yaml, annotated.node_groups_yaml);
  // The same profiles, each publishing its devices to DRA.
  std::string profiles = a.device_profiles_yaml;
  const std::string dra_line = "    dra: {hamiDriver: true}\n";
  size_t dra_lines = 0;
  for (size_t at; (at = profiles.find(dra_line)) != std::string::npos; ++dra_lines) {
    profiles.erase(at, dra_line.size());
  }
  EXPECT_EQ(profiles, annotated.device_profiles_yaml);
  EXPECT_GT(dra_lines, 0u);
  EXPECT_EQ(a.stats.running_device_pods, annotated.stats.running_device_pods);

  auto anno = model::decode_objects_json(annotated.cluster_json);
  ASSERT_TRUE(anno) << anno.error().message;
  const DraCluster d = load_dra(a);
  ASSERT_EQ(d.objects.nodes.size(), anno->nodes.size());
  ASSERT_EQ(d.objects.pods.size(), anno->pods.size());
  for (size_t i = 0; i < anno->nodes.size(); ++i) {
    EXPECT_EQ(d.objects.nodes[i].metadata.name, anno->nodes[i].metadata.name);
    EXPECT_EQ(d.objects.nodes[i].metadata.uid, anno->nodes[i].metadata.uid);
  }
  for (size_t i = 0; i < anno->pods.size(); ++i) {
    EXPECT_EQ(d.objects.pods[i].metadata.name, anno->pods[i].metadata.name);
    EXPECT_EQ(d.objects.pods[i].spec.node_name, anno->pods[i].spec.node_name);
    EXPECT_EQ(d.objects.pods[i].spec.containers[0].resources.requests,
              anno->pods[i].spec.containers[0].resources.requests);
  }
}

// Every object decodes with the strict decoder; nodes carry no HAMi registration, GPU pods
// carry claims instead of HAMi limits and annotations, and a running pod's claim holds the
// devices its annotation form got, consuming what the allocator computes, never more than a
// device has.
TEST(GeneratorDra, ObjectsDecodeStrictlyAndClaimsHoldTheAnnotationFormsDevices) {
  GenOptions o = small_dra();
  o.pods_per_node = 60;  // more than fits, as in the annotation test
  const GeneratedCluster c = generated(o);
  const DraCluster d = load_dra(c);
  EXPECT_EQ(d.objects.skipped_items, 0);
  EXPECT_EQ(d.dra.slices.size(), 12u);
  ASSERT_EQ(d.dra.classes.size(), 1u);
  EXPECT_EQ(d.dra.classes[0].metadata.name, "hami-gpu");
  EXPECT_EQ(d.dra.claim_templates.size(), 4u);
  EXPECT_EQ(d.dra.claims.size(), static_cast<size_t>(c.stats.running_device_pods));
  EXPECT_EQ(c.stats.resource_slices, 12);
  EXPECT_EQ(c.stats.resource_claims, c.stats.running_device_pods);
  EXPECT_EQ(c.stats.claim_templates, 4);

  for (const auto& n : d.objects.nodes) {
    EXPECT_EQ(model::find_annotation(n.metadata, device::kNvidiaRegisterAnnotation), nullptr);
    EXPECT_FALSE(n.status.allocatable.contains("nvidia.com/gpu"));
  }
  // Slices: one pool per node named after it, one slice, 8 shareable devices.
  std::map<std::pair<std::string, std::string>, const dra::Device*> devices;  // (pool, name)
  std::map<std::pair<std::string, std::string>, std::string> by_uuid;         // -> name
  for (const auto& s : d.dra.slices) {
    EXPECT_EQ(s.driver, "hami-core-gpu.project-hami.io");
    EXPECT_EQ(s.pool.name, s.scope.node_name.value_or(""));
    EXPECT_EQ(s.pool.resource_slice_count, 1);
    EXPECT_GE(s.pool.generation, 1);
    ASSERT_EQ(s.devices.size(), 8u);
    for (size_t i = 0; i < s.devices.size(); ++i) {
      const dra::Device& dev = s.devices[i];
      EXPECT_EQ(dev.name, "hami-gpu-" + std::to_string(i));
      EXPECT_TRUE(dev.allow_multiple_allocations);
      EXPECT_EQ(attribute_string(dev, "type"), "hami-gpu");
      EXPECT_EQ(dev.capacity.at("cores").value, model::Quantity::from_int(100));
      devices[{s.pool.name, dev.name}] = &dev;
      by_uuid[{s.pool.name, attribute_string(dev, "uuid")}] = dev.name;
    }
  }

  // The annotation form of the same cluster: which devices each running pod got.
  const GenOptions ao = [&] {
    GenOptions x = o;
    x.dra = false;
    return x;
  }();
  auto anno = model::decode_objects_json(generated(ao).cluster_json);
  ASSERT_TRUE(anno) << anno.error().message;
  const device::DeviceRegistry registry = device::build_registry({});
  std::map<std::string, std::multiset<std::string>> anno_devices;  // pod -> device names
  std::map<std::string, std::vector<device::DeviceCharge>> anno_charges;
  for (const auto& p : anno->pods) {
    if (!model::find_annotation(p.metadata, device::kAssignedNodeAnnotation)) continue;
    auto a = fit::decode_pod_allocation(p, registry);
    ASSERT_TRUE(a) << a.error().message;
    for (const auto& ch : a->charges.at("NVIDIA")) {
      anno_devices[p.metadata.name].insert(by_uuid.at({p.spec.node_name, ch.uuid}));
    }
    anno_charges[p.metadata.name] = a->charges.at("NVIDIA");
  }

  std::map<std::string, const dra::ResourceClaim*> claims;
  for (const auto& cl : d.dra.claims) claims[cl.metadata.namespace_ + "/" + cl.metadata.name] = &cl;
  std::map<std::pair<std::string, std::string>, dra::Amounts> consumed;  // per device
  std::set<std::string> share_ids;
  int running_with_claims = 0;
  for (const auto& p : d.objects.pods) {
    const auto& limits = p.spec.containers[0].resources.limits;
    EXPECT_FALSE(limits.contains("nvidia.com/gpu")) << p.metadata.name;
    EXPECT_FALSE(limits.contains("nvidia.com/gpumem")) << p.metadata.name;
    EXPECT_FALSE(model::find_annotation(p.metadata, device::kNvidiaAllocatedAnnotation));
    if (p.spec.resource_claims.empty()) {
      EXPECT_FALSE(anno_devices.contains(p.metadata.name)) << p.metadata.name;
      continue;
    }
    ASSERT_EQ(p.spec.resource_claims.size(), 1u);
    const model::PodResourceClaim& ref = p.spec.resource_claims[0];
    EXPECT_EQ(ref.name, "gpu");
    if (p.spec.node_name.empty()) {
      EXPECT_TRUE(ref.resource_claim_template_name.has_value()) << p.metadata.name;
      continue;
    }
    ++running_with_claims;
    ASSERT_EQ(ref.resource_claim_name, p.metadata.name + "-gpu");
    const dra::ResourceClaim* cl =
        claims.at(p.metadata.namespace_ + "/" + *ref.resource_claim_name);
    ASSERT_TRUE(cl->status.allocation.has_value());
    ASSERT_EQ(cl->status.reserved_for.size(), 1u);
    EXPECT_EQ(cl->status.reserved_for[0].name, p.metadata.name);
    EXPECT_EQ(cl->status.reserved_for[0].uid, p.metadata.uid);
    const dra::ExactDeviceRequest& req = *cl->spec.requests.at(0).exactly;
    EXPECT_EQ(req.device_class_name, "hami-gpu");
    std::multiset<std::string> got;
    for (const auto& r : cl->status.allocation->results) {
      EXPECT_EQ(r.pool, p.spec.node_name);
      got.insert(r.device);
      ASSERT_TRUE(r.share_id.has_value());
      EXPECT_TRUE(share_ids.insert(*r.share_id).second) << "share ID used twice";
      const dra::Device& dev = *devices.at({r.pool, r.device});
      EXPECT_EQ(r.consumed_capacity, dra::consumed_capacity(dev, req.capacity_requests));
      for (const auto& [cap, q] : r.consumed_capacity) consumed[{r.pool, r.device}][cap] += q;
    }
    EXPECT_EQ(static_cast<int64_t>(got.size()), req.count);
    EXPECT_EQ(got, anno_devices.at(p.metadata.name)) << p.metadata.name;
    // On a HAMi-core GPU (not a MIG one, where HAMi charges the instance's profile) the
    // claim consumes what HAMi charged: memory in MiB, cores.
    if (p.spec.node_name.find("a100mig") == std::string::npos) {
      for (const auto& ch : anno_charges.at(p.metadata.name)) {
        const std::string name = by_uuid.at({p.spec.node_name, ch.uuid});
        for (const auto& r : cl->status.allocation->results) {
          if (r.device != name) continue;
          EXPECT_EQ(r.consumed_capacity.at("memory"),
                    model::Quantity::from_int(int64_t{ch.usedmem} * 1048576));
          EXPECT_EQ(r.consumed_capacity.at("cores"), model::Quantity::from_int(ch.usedcores));
        }
      }
    }
  }
  EXPECT_EQ(running_with_claims, c.stats.running_device_pods);
  EXPECT_EQ(anno_devices.size(), static_cast<size_t>(running_with_claims));
  for (const auto& [key, amounts] : consumed) {
    const dra::Device& dev = *devices.at(key);
    for (const auto& [cap, q] : amounts) {
      EXPECT_LE(q, dev.capacity.at(cap).value) << key.first << " " << key.second << " " << cap;
    }
  }
}

TEST(GeneratorDra, PlannerPlansTheGeneratedDraCluster) {
  const GeneratedCluster c = generated(small_dra());
  DraCluster d = load_dra(c);
  planner::scaleup::PlanInput input;
  input.nodes = d.objects.nodes;
  input.pods = d.objects.pods;
  input.dra = std::make_shared<const planner::framework::DraCluster>(std::move(d.dra));
  auto plan = plan_generated(c, std::move(input));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->pods.size(), 40u);
  EXPECT_EQ(plan->cluster_nodes, 12);
  using State = planner::scaleup::PodOutcome::State;
  int placed = 0;
  for (const auto& p : plan->pods) {
    placed += p.state == State::kFitsExistingNode || p.state == State::kTriggersScaleUp;
  }
  EXPECT_GT(placed, 0) << plan->summary;
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
