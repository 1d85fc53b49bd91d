#pragma once
// `hamisim gen`: a seeded synthetic cluster for benchmarks and scale tests (issue #8).
//
// Everything is derived from one seed with our own PRNG (splitmix64) and our own range
// reduction, never std::uniform_*_distribution, whose output differs between standard
// libraries: the same options and seed give the same bytes on every machine.
//
// What comes out is meant to cost what a real cluster costs to read:
// - Nodes the size of real ones (~12 KB: labels, taints, images, managedFields, conditions),
//   each registering a GPU model with HAMi (A100 80GB, A100 80GB in MIG mode, A10, T4, K80),
//   allocatable nvidia.com/gpu = devices x split;
// - running pods placed by the project's own Fit engine, so their annotations are exactly what
//   the live filter writes (to-allocate, allocated, MIG allocations, vgpu-node) plus what bind
//   and the device plugin leave (bind-phase success, spec.nodeName), and no device is ever
//   over-committed;
// - pending fractional-GPU pods in equivalence groups (one ReplicaSet owner and one spec per
//   group);
// - node groups in the planner's NodeGroups format (warm groups with members, every fourth
//   group cold-zero with a template and a device profile) and the device profiles of every
//   GPU model in use.
//
// With `dra` the same cluster (same seed: same nodes, pods, placements and node groups) is
// written in the form of HAMi's DRA mode (issue #28; reference dra.md §4.1, §4.2) instead:
// - each node publishes one ResourceSlice of HAMi's k8s-dra-driver (`hami-gpu-<minor>`
//   devices, shareable, `cores` 100 and `memory` in bytes with the driver's request policies)
//   and keeps no HAMi registration (device-plugin and DRA mode do not share a cluster);
// - one DeviceClass `hami-gpu`;
// - a running GPU pod holds an allocated ResourceClaim `<pod>-gpu` naming the devices the
//   annotation form gave it, with the capacity the allocator would consume;
// - a pending GPU pod refers to its equivalence group's ResourceClaimTemplate, and its HAMi
//   limits are gone (HAMi-DRA's webhook conversion).
// A pod that asks no gpucores asks cores 0 in its claim: HAMi's default cores in annotation
// mode. Without it DRA's default (all 100 cores) would make each such share exclusive.
// Placements are checked against both forms in either mode, so no device is over-committed
// in either.

#include <cstdint>
#include <string>

#include "model/result.h"

namespace hamisim::gen {

struct GenOptions {
  int nodes = 100;
  int pods_per_node = 20;  // running pods per node (GPU pods while devices have room)
  int pending = 100;       // pending pods
  int groups = 10;         // equivalence groups among the pending pods
  int node_groups = 4;
  int gpus_per_node = 8;
  uint64_t seed = 1;
  bool dra = false;  // write the DRA form (see above)
};

struct GenStats {
  int nodes = 0;
  int running_pods = 0;
  int running_device_pods = 0;  // running pods holding devices
  int pending_pods = 0;
  int node_groups = 0;
  int resource_slices = 0;  // DRA form only, as the three below
  int resource_claims = 0;
  int claim_templates = 0;
  size_t cluster_bytes = 0;
  size_t largest_node_bytes = 0;
};

struct GeneratedCluster {
  // A `kind: List` (kubectl's shape) of Nodes then Pods; in DRA form Nodes, ResourceSlices,
  // the DeviceClass, ResourceClaimTemplates, ResourceClaims, then Pods.
  std::string cluster_json;
  std::string node_groups_yaml;      // kind NodeGroups
  std::string device_profiles_yaml;  // kind DeviceProfiles
  GenStats stats;
};

// Errors: options out of range.
Result<GeneratedCluster> generate(const GenOptions& options);

// Writes cluster.json, node-groups.yaml and device-profiles.yaml into `dir` (created). They
// can share a directory: `serve --cluster-snapshot DIR` skips kinds it does not read.
Status write_cluster(const GeneratedCluster& cluster, const std::string& dir);

}  // namespace hamisim::gen
