#pragma once
// The structured allocator: which devices of a node a pod's unallocated ResourceClaims get, as
// kube-scheduler 1.37's DynamicResources plugin decides it with its default feature gates
// (../shared/reference/dra.md §2.3–§2.15; docs/dra.md says what is modelled and what is not).
//
// All claims of one pod are allocated together or not at all. The search is the scheduler's
// depth-first search: claims in the order given, requests in spec order, devices in first-fit
// order (the order of dra::gather_pools), combinations (never permutations) within one request,
// firstAvailable alternatives in list order, full backtracking across requests and claims, the
// first complete solution wins. Devices are checked in the scheduler's order: in use, selectors
// (class first), per-device node selection, consumable capacity, counters, taints,
// constraints. Consumable capacity is per device, summed over every share of every claim.
//
// Pure and deterministic: the same inputs give the same answer. Share IDs, random UUIDs in the
// scheduler, come from a counter the caller owns (ShareIds), so plans can be compared byte for
// byte. The search is bounded by a step budget instead of the scheduler's 10 s timeout.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cel/selector.h"
#include "dra/capacity.h"
#include "dra/objects.h"
#include "dra/pools.h"
#include "model/result.h"

namespace hamisim::dra {

// A device in the cluster: driver, pool, device name. `DeviceRef` is the same as views, for
// lookups that must not copy.
struct DeviceRef {
  std::string_view driver;
  std::string_view pool;
  std::string_view device;
  auto operator<=>(const DeviceRef&) const = default;
};

struct DeviceId {
  std::string driver;
  std::string pool;
  std::string device;
  DeviceRef ref() const { return {driver, pool, device}; }
};

struct DeviceIdLess {
  using is_transparent = void;
  static DeviceRef ref(const DeviceId& id) { return id.ref(); }
  static DeviceRef ref(const DeviceRef& r) { return r; }
  bool operator()(const auto& a, const auto& b) const { return ref(a) < ref(b); }
};

// What the allocated claims of the cluster hold (reference §2.3): devices held whole, shares
// of multi-allocatable devices by share ID, and the capacity all shares of a device consume
// together. Results with admin access are left out: they never block anything.
class AllocatedState {
 public:
  void add(const AllocationResult& allocation);
  // Undoes add() of the same allocation (a simulation taking a pod off a node).
  void remove(const AllocationResult& allocation);
  // Every allocated claim's allocation.
  static AllocatedState of(const std::vector<ResourceClaim>& claims);

  bool held_whole(DeviceRef device) const;
  bool has_share(DeviceRef device, std::string_view share_id) const;
  // What the shares of `device` consume together; nullptr when none recorded any.
  const Amounts* consumed(DeviceRef device) const;
  // Held whole, shared, or with capacity consumed (counters count these as taken).
  bool in_use(DeviceRef device) const;

 private:
  struct Shares {
    std::set<std::string, std::less<>> ids;
    Amounts consumed;
    int64_t consuming = 0;  // shares that recorded consumedCapacity
  };
  std::map<DeviceId, int64_t, DeviceIdLess> whole_;  // by how many allocations (0 never kept)
  std::map<DeviceId, Shares, DeviceIdLess> shares_;  // no entry without a share
};

// Share IDs for new shares: "00000000-0000-4000-8000-<12 hex digits of a counter>". Unique per
// device: an ID a committed share of the device already has is skipped.
class ShareIds {
 public:
  std::string next(const AllocatedState& committed, DeviceRef device);

 private:
  uint64_t next_ = 1;
};

// Compiled CEL selectors by expression text, kept across allocations (the scheduler keeps a
// cache of compiled expressions too). Not thread-safe.
class SelectorCache {
 public:
  const Result<cel::Selector>& get(std::string_view expression);

 private:
  NameMap<Result<cel::Selector>> compiled_;
};

// The outcome for one node: either one AllocationResult per claim (in the order the claims
// were given), or why the claims cannot be allocated on this node, as kube-scheduler words it:
// "cannot allocate all claims", "invalid resource pools were encountered", "timed out trying
// to allocate devices".
struct NodeAllocation {
  std::vector<AllocationResult> claims;
  std::string unschedulable;  // empty: allocated
};

class Allocator {
 public:
  // Steps of the search before it gives up ("timed out trying to allocate devices"). One step
  // is one device tried for one slot. Kubernetes 1.37's allocator gets through about 4 million
  // of the same steps a second here, so its 10 s filter timeout is about 40 million; hamisim
  // takes about 0.3 s for them. A budget of one million gave up on searches Kubernetes finishes
  // in 0.4 s (the differential test, -dra-seed 7 -dra-case 119631, needs 1.67 million).
  static constexpr int64_t kDefaultStepBudget = 40'000'000;
  // Results one claim can hold (resource.k8s.io AllocationResultsMaxSize).
  static constexpr int64_t kMaxResultsPerClaim = 32;

  // The classes, the cache and the share IDs must outlive the allocator.
  Allocator(const std::vector<DeviceClass>& classes, SelectorCache& selectors, ShareIds& share_ids,
            int64_t step_budget = kDefaultStepBudget);

  // Asked every kStopCheckSteps steps of the search (and as often while `All` requests gather
  // their devices, each a CEL evaluation): true ends it as the step budget does, "timed out
  // trying to allocate devices". The request it serves is over (its deadline passed): a
  // failing search on a node of 200,000 devices evaluated selectors for 40 s. May be empty.
  void set_stop(std::function<bool()> stop) { stop_ = std::move(stop); }
  static constexpr int64_t kStopCheckSteps = 64;

  // kube-scheduler's PreFilter check: "request <r>: device class <c> does not exist", or
  // nullopt when every class the claim's requests and subrequests name exists.
  std::optional<std::string> missing_device_class(const ResourceClaim& claim) const;

  // Allocates `claims` (the pod's unallocated claims, in pod order) on the node whose pools
  // are `pools` (dra::gather_pools for that node), given what `committed` already holds.
  // An error is what fails the pod's whole scheduling attempt in the scheduler, on every node:
  // a selector that does not compile or fails at run time, a missing class, more than 32
  // devices for one claim, an `All` request on an incomplete or invalid pool, a constraint an
  // `All` request cannot meet. Errors name the claim, the request and the device.
  Result<NodeAllocation> allocate(const std::vector<Pool>& pools, std::string_view node_name,
                                  const NodeSelectorMatch& matches_node,
                                  const std::vector<const ResourceClaim*>& claims,
                                  const AllocatedState& committed);

 private:
  NameMap<const DeviceClass*> classes_;
  SelectorCache& selectors_;
  ShareIds& share_ids_;
  int64_t step_budget_;
  std::function<bool()> stop_;
};

}  // namespace hamisim::dra
