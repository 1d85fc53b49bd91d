#pragma once
// The resource.k8s.io objects of Dynamic Resource Allocation that placement depends on:
// ResourceSlice, DeviceClass, ResourceClaim and ResourceClaimTemplate, in the shape of `v1`
// (decode.h also reads v1beta1, v1beta2 and v1alpha3 into it). Field names follow the API in
// snake_case; the reference is ../shared/reference/dra.md §1. Fields that do not affect
// placement (opaque configuration, driver-written device status) are read and dropped, and
// docs/dra.md lists them.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cel/selector.h"
#include "model/objects.h"
#include "model/quantity.h"

namespace hamisim::dra {

using model::Quantity;
template <class V>
using NameMap = std::map<std::string, V, std::less<>>;

// ---- ResourceSlice ------------------------------------------------------------------------

struct CapacityRange {
  Quantity min;
  std::optional<Quantity> max;
  std::optional<Quantity> step;
};

// How much of a consumable capacity one allocation takes (KEP-5075).
struct CapacityRequestPolicy {
  std::optional<Quantity> default_value;  // `default`
  std::vector<Quantity> valid_values;     // ascending, unique
  std::optional<CapacityRange> valid_range;
};

struct DeviceCapacity {
  Quantity value;
  std::optional<CapacityRequestPolicy> request_policy;
};

// Counters by name (a CounterSet's, or what a device consumes of one).
using Counters = NameMap<Quantity>;

struct CounterSet {
  std::string name;
  Counters counters;
};

struct DeviceCounterConsumption {
  std::string counter_set;
  Counters counters;
  // compatibilityGroups (gate DRADeviceCompatibilityGroups, alpha and off in 1.37): a slice
  // that sets any is ignored by the allocator, so its pool is incomplete (dra/pools.h).
  std::vector<std::string> compatibility_groups{};
};

struct DeviceTaint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule and NoExecute block; None and anything else do not
};

// Where a slice's (or, with per-device node selection, a device's) devices can be used:
// exactly one of the three.
struct NodeScope {
  std::optional<std::string> node_name{};
  std::optional<model::NodeSelector> node_selector{};
  bool all_nodes = false;
};

struct Device {
  std::string name;
  // Keyed by the name as written: "type", or "resource.kubernetes.io/pcieRoot". A name
  // without a domain belongs to the slice's driver.
  NameMap<cel::Attribute> attributes;
  NameMap<DeviceCapacity> capacity;
  std::vector<DeviceCounterConsumption> consumes_counters;
  std::optional<NodeScope> node_scope;  // only with spec.perDeviceNodeSelection
  std::vector<DeviceTaint> taints;
  bool binds_to_node = false;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  bool allow_multiple_allocations = false;
};

struct ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t resource_slice_count = 0;
};

struct ResourceSlice {
  model::ObjectMeta metadata;
  std::string driver;
  ResourcePool pool;
  NodeScope scope;  // unset (all empty) when per_device_node_selection
  bool per_device_node_selection = false;
  std::vector<Device> devices;
  std::vector<CounterSet> shared_counters;
};

// ---- DeviceClass --------------------------------------------------------------------------

struct DeviceClass {
  model::ObjectMeta metadata;
  std::vector<std::string> selectors;  // CEL expressions, all of which must match
  std::optional<std::string> extended_resource_name;
};

// ---- ResourceClaim and ResourceClaimTemplate ----------------------------------------------

struct DeviceToleration {
  std::string key;  // empty: every key (operator Exists)
  std::string op = "Equal";
  std::string value{};
  std::string effect{};  // empty: every effect
  std::optional<int64_t> toleration_seconds{};
};

enum class AllocationMode { kExactCount, kAll };

// What one request (or one alternative of firstAvailable) asks for.
struct ExactDeviceRequest {
  std::string device_class_name;
  std::vector<std::string> selectors;  // CEL expressions
  AllocationMode allocation_mode = AllocationMode::kExactCount;
  int64_t count = 1;  // ExactCount: > 0 (0 and unset mean 1); All: 0
  bool admin_access = false;
  std::vector<DeviceToleration> tolerations;
  NameMap<Quantity> capacity_requests;  // per allocated device (capacity.requests)
};

struct DeviceSubRequest {
  std::string name;
  ExactDeviceRequest request;  // admin_access is always false here
};

struct DeviceRequest {
  std::string name;
  std::optional<ExactDeviceRequest> exactly;      // exactly one of the two
  std::vector<DeviceSubRequest> first_available;  // in order of preference
};

struct DeviceConstraint {
  std::vector<std::string> requests{};  // empty: every request of the claim
  std::optional<std::string> match_attribute{};
  std::optional<std::string> distinct_attribute{};
};

struct ResourceClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
};

struct DeviceRequestAllocationResult {
  std::string request;  // "<request>" or "<request>/<subrequest>"
  std::string driver;
  std::string pool;
  std::string device;
  bool admin_access = false;
  std::optional<std::string> share_id{};
  NameMap<Quantity> consumed_capacity{};
  std::vector<DeviceToleration> tolerations{};
};

struct AllocationResult {
  std::vector<DeviceRequestAllocationResult> results;
  std::optional<model::NodeSelector> node_selector;  // unset: usable on every node
};

struct ResourceClaimConsumerReference {
  std::string api_group;
  std::string resource;
  std::string name;
  std::string uid;
};

struct ResourceClaimStatus {
  std::optional<AllocationResult> allocation;
  std::vector<ResourceClaimConsumerReference> reserved_for;
};

struct ResourceClaim {
  model::ObjectMeta metadata;
  ResourceClaimSpec spec;
  ResourceClaimStatus status;
};

struct ResourceClaimTemplate {
  model::ObjectMeta metadata;
  model::StringMap claim_labels;  // spec.metadata of the claims it makes
  model::StringMap claim_annotations;
  ResourceClaimSpec spec;  // spec.spec
};

// A DeviceTaintRule (on by default from 1.37): its taint on every device the selector matches.
// No selector (or none of the three fields) matches nothing, or every device respectively, as
// kube-scheduler's slice tracker applies them.
struct DeviceTaintRule {
  model::ObjectMeta metadata;
  bool has_selector = false;
  std::optional<std::string> driver;
  std::optional<std::string> pool;
  std::optional<std::string> device;
  DeviceTaint taint;
};

// Every DRA object of a cluster input.
struct Objects {
  std::vector<ResourceSlice> slices;
  std::vector<DeviceTaintRule> taint_rules;
  std::vector<DeviceClass> classes;
  std::vector<ResourceClaim> claims;
  std::vector<ResourceClaimTemplate> claim_templates;
};

}  // namespace hamisim::dra
