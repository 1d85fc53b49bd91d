// The strict decoder of resource.k8s.io objects (src/dra/decode.h): the shapes of v1,
// v1beta2, v1beta1 and v1alpha3, the API's validation rules that placement depends on, and
// errors that name the field.

#include "dra/decode.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "dra/names.h"

namespace hamisim::dra {
namespace decode_test {

using model::Quantity;
using ::testing::HasSubstr;

Quantity q(std::string_view text) {
  return Quantity::parse(text).value();
}

// The slice HAMi's k8s-dra-driver publishes for a node with one 80 GiB A100
// (../shared/reference/dra.md §1.10).
const std::string kHamiSlice = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
  "metadata": {"name": "node-a-hami-core-gpu.project-hami.io-7xk2q", "uid": "u1",
               "managedFields": [{"manager": "kubelet"}], "generation": 3},
  "spec": {
    "driver": "hami-core-gpu.project-hami.io",
    "nodeName": "node-a",
    "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
    "devices": [{
      "name": "hami-gpu-0",
      "allowMultipleAllocations": true,
      "attributes": {
        "type": {"string": "hami-gpu"},
        "minor": {"int": 0},
        "cudaComputeCapability": {"version": "8.0.0"},
        "resource.kubernetes.io/pcieRoot": {"string": "pci0000:5a"}
      },
      "capacity": {
        "cores": {"value": "100",
                  "requestPolicy": {"default": "100", "validRange": {"min": "0", "max": "100", "step": "1"}}},
        "memory": {"value": "80Gi",
                   "requestPolicy": {"default": "80Gi", "validRange": {"min": "1Mi", "max": "80Gi", "step": "1Mi"}}}
      }
    }]
  }
})";

// kHamiSlice with `from` replaced by `to` (once), to make one thing wrong.
std::string hami_slice_with(std::string_view from, std::string_view to) {
  std::string s = kHamiSlice;
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

std::string slice_error(const std::string& json) {
  auto s = decode_resource_slice(json);
  EXPECT_FALSE(s) << json;
  return s ? std::string() : s.error().message;
}

TEST(DraDecode, HamiDriverSlice) {
  auto s = decode_resource_slice(kHamiSlice);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->metadata.name, "node-a-hami-core-gpu.project-hami.io-7xk2q");
  EXPECT_EQ(s->driver, "hami-core-gpu.project-hami.io");
  EXPECT_EQ(s->scope.node_name, "node-a");
  EXPECT_FALSE(s->scope.all_nodes);
  EXPECT_EQ(s->pool.name, "node-a");
  EXPECT_EQ(s->pool.generation, 1);
  EXPECT_EQ(s->pool.resource_slice_count, 1);
  ASSERT_EQ(s->devices.size(), 1u);
  const Device& d = s->devices[0];
  EXPECT_EQ(d.name, "hami-gpu-0");
  EXPECT_TRUE(d.allow_multiple_allocations);
  EXPECT_EQ(std::get<std::string>(d.attributes.at("type")), "hami-gpu");
  EXPECT_EQ(std::get<int64_t>(d.attributes.at("minor")), 0);
  const auto& cc = std::get<cel::Semver>(d.attributes.at("cudaComputeCapability"));
  EXPECT_EQ(cc.major, 8u);
  EXPECT_EQ(cc.minor, 0u);
  EXPECT_EQ(std::get<std::string>(d.attributes.at("resource.kubernetes.io/pcieRoot")),
            "pci0000:5a");
  const DeviceCapacity& memory = d.capacity.at("memory");
  EXPECT_EQ(memory.value, q("80Gi"));
  ASSERT_TRUE(memory.request_policy);
  EXPECT_EQ(memory.request_policy->default_value, q("81920Mi"));
  ASSERT_TRUE(memory.request_policy->valid_range);
  EXPECT_EQ(memory.request_policy->valid_range->min, q("1Mi"));
  EXPECT_EQ(memory.request_policy->valid_range->step, q("1048576"));
  EXPECT_EQ(d.capacity.at("cores").value, q("100"));
}

TEST(DraDecode, OlderVersionsWrapDevicesInBasic) {
  // v1beta1: the device's fields under `basic`. v1alpha3: also, with bare quantities.
  const std::string beta1 = R"({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice",
    "metadata": {"name": "s"},
    "spec": {"driver": "gpu.example.com", "nodeName": "n", "pool": {"name": "n", "generation": 0, "resourceSliceCount": 1},
      "devices": [{"name": "gpu-0", "basic": {"attributes": {"model": {"string": "A"}},
                   "capacity": {"memory": {"value": "40Gi"}}}}]}})";
  auto s = decode_resource_slice(beta1);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(std::get<std::string>(s->devices[0].attributes.at("model")), "A");
  EXPECT_EQ(s->devices[0].capacity.at("memory").value, q("40Gi"));

  std::string alpha3 = beta1;
  alpha3.replace(alpha3.find("v1beta1"), 7, "v1alpha3");
  alpha3.replace(alpha3.find(R"({"value": "40Gi"})"), 17, R"("40Gi")");
  s = decode_resource_slice(alpha3);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->devices[0].capacity.at("memory").value, q("40Gi"));

  // v1 has no `basic`; v1beta1 has no flat device fields.
  std::string v1 = beta1;
  v1.replace(v1.find("v1beta1"), 7, "v1");
  EXPECT_EQ(slice_error(v1), "spec.devices[0]: unknown field \"basic\"");
  const std::string flat = R"({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice",
    "metadata": {"name": "s"},
    "spec": {"driver": "d.io", "allNodes": true, "pool": {"name": "p", "generation": 0, "resourceSliceCount": 1},
      "devices": [{"name": "gpu-0", "attributes": {}}]}})";
  EXPECT_EQ(slice_error(flat), "spec.devices[0]: unknown field \"attributes\"");
}

TEST(DraDecode, UnknownAndRepeatedFieldsAreErrors) {
  EXPECT_EQ(slice_error(hami_slice_with(R"("name": "hami-gpu-0",)",
                                        R"("name": "hami-gpu-0", "colour": "green",)")),
            "spec.devices[0]: unknown field \"colour\"");
  EXPECT_EQ(slice_error(hami_slice_with(R"("nodeName": "node-a",)",
                                        R"("nodeName": "node-a", "nodeName": "node-b",)")),
            "spec: repeated field \"nodeName\"");
  EXPECT_EQ(slice_error(hami_slice_with(R"("minor": {"int": 0},)",
                                        R"("minor": {"int": 0}, "minor": {"int": 1},)")),
            "spec.devices[0].attributes: repeated key \"minor\"");
  // Keys match exactly, as the API server's decoder matches them.
  EXPECT_EQ(slice_error(hami_slice_with(R"("nodeName")", R"("NodeName")")),
            "spec: unknown field \"NodeName\"");
  // The API server's bookkeeping in metadata is not an error.
  EXPECT_TRUE(decode_resource_slice(kHamiSlice));
}

TEST(DraDecode, TypeErrorsNameTheField) {
  EXPECT_EQ(slice_error(hami_slice_with(R"("generation": 1)", R"("generation": "1")")),
            "spec.pool.generation: expected an integer, got string");
  EXPECT_EQ(slice_error(hami_slice_with(R"("value": "100",)", R"("value": "lots",)")),
            "spec.devices[0].capacity[cores].value: " + Quantity::parse("lots").error().message);
  EXPECT_EQ(slice_error(hami_slice_with(R"("devices": [)", R"("devices": 7, "x": [)")),
            "spec.devices: expected an array, got number");
}

TEST(DraDecode, AttributesHoldExactlyOneTypedValue) {
  EXPECT_EQ(slice_error(hami_slice_with(R"({"int": 0})", R"({"int": 0, "string": "0"})")),
            "spec.devices[0].attributes[minor]: exactly one of int, bool, string and version "
            "must be set (list attributes are not supported: docs/dra.md)");
  EXPECT_THAT(slice_error(hami_slice_with(R"("8.0.0")", R"("v8.0.0")")),
              HasSubstr("spec.devices[0].attributes[cudaComputeCapability].version: "));
  EXPECT_THAT(slice_error(hami_slice_with(R"("8.0.0")", R"("08.0.0")")),
              HasSubstr("attributes[cudaComputeCapability].version: "));
  EXPECT_EQ(slice_error(hami_slice_with(R"("hami-gpu")", "\"" + std::string(65, 'x') + "\"")),
            "spec.devices[0].attributes[type].string: 65 bytes, more than 64");
  EXPECT_THAT(slice_error(hami_slice_with(R"("type":)", R"("9type":)")),
              HasSubstr("spec.devices[0].attributes[9type]: \"9type\" is not a qualified name"));
}

TEST(DraDecode, RequestPoliciesFollowTheApiRules) {
  // Only shareable devices have request policies.
  EXPECT_EQ(slice_error(hami_slice_with(R"("allowMultipleAllocations": true,)", "")),
            "spec.devices[0]: capacity[cores].requestPolicy needs allowMultipleAllocations: true");
  EXPECT_EQ(slice_error(hami_slice_with(R"("default": "100", )", "")),
            "spec.devices[0].capacity[cores].requestPolicy: default is required with validValues "
            "or validRange");
  EXPECT_EQ(
      slice_error(hami_slice_with(R"("max": "100", "step": "1")", R"("max": "100", "step": "3")")),
      "spec.devices[0].capacity[cores].requestPolicy: default - validRange.min is not a "
      "multiple of validRange.step");
  EXPECT_EQ(slice_error(hami_slice_with(R"("max": "100", "step": "1")", R"("max": "101")")),
            "spec.devices[0].capacity[cores].requestPolicy: validRange.max must be between "
            "validRange.min and the capacity");
  EXPECT_EQ(slice_error(hami_slice_with(R"("validRange": {"min": "0", "max": "100", "step": "1"})",
                                        R"("validValues": ["50", "10", "100"])")),
            "spec.devices[0].capacity[cores].requestPolicy: validValues must be in ascending "
            "order without repeats");
  EXPECT_EQ(slice_error(hami_slice_with(R"("validRange": {"min": "0", "max": "100", "step": "1"})",
                                        R"("validValues": ["10", "50"])")),
            "spec.devices[0].capacity[cores].requestPolicy: default must be one of validValues");
  auto s = decode_resource_slice(
      hami_slice_with(R"("validRange": {"min": "0", "max": "100", "step": "1"})",
                      R"("validValues": ["10", "50", "100"])"));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->devices[0].capacity.at("cores").request_policy->valid_values.size(), 3u);
}

// `kubectl get -o json` sorts keys, so requestPolicy comes before value; the policy is checked
// against the value wherever it stands (found by the interop suite's real API server).
TEST(DraDecode, RequestPolicyBeforeValue) {
  auto s = decode_resource_slice(hami_slice_with(
      R"("cores": {"value": "100",
                  "requestPolicy": {"default": "100", "validRange": {"min": "0", "max": "100", "step": "1"}}})",
      R"("cores": {"requestPolicy": {"default": "100", "validRange": {"max": "100", "min": "0", "step": "1"}},
                  "value": "100"})"));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->devices[0].capacity.at("cores").value, q("100"));
  EXPECT_EQ(slice_error(hami_slice_with(R"("cores": {"value": "100",)", R"("cores": {)")),
            "spec.devices[0].capacity[cores]: value is required");
  EXPECT_EQ(
      slice_error(hami_slice_with(
          R"("cores": {"value": "100",
                  "requestPolicy": {"default": "100", "validRange": {"min": "0", "max": "100", "step": "1"}}})",
          R"("cores": {"requestPolicy": {"default": "100", "validRange": {"min": "0", "max": "101"}},
                  "value": "100"})")),
      "spec.devices[0].capacity[cores].requestPolicy: validRange.max must be between "
      "validRange.min and the capacity");
}

TEST(DraDecode, APoolAndOneNodeScopeAreRequired) {
  EXPECT_EQ(slice_error(hami_slice_with(R"("nodeName": "node-a",)", "")),
            "spec: exactly one of nodeName, nodeSelector, allNodes and perDeviceNodeSelection "
            "must be set");
  EXPECT_EQ(slice_error(hami_slice_with(R"("nodeName": "node-a",)",
                                        R"("nodeName": "node-a", "allNodes": true,)")),
            "spec: exactly one of nodeName, nodeSelector, allNodes and perDeviceNodeSelection "
            "must be set");
  EXPECT_EQ(slice_error(hami_slice_with(R"("nodeName": "node-a",)", R"("allNodes": false,)")),
            "spec.allNodes: may only be true");
  EXPECT_EQ(
      slice_error(hami_slice_with(R"("resourceSliceCount": 1)", R"("resourceSliceCount": 0)")),
      "spec.pool.resourceSliceCount: must be greater than zero");
  EXPECT_EQ(slice_error(hami_slice_with(R"("generation": 1)", R"("generation": -1)")),
            "spec.pool.generation: must not be negative");
  EXPECT_EQ(slice_error(hami_slice_with(R"("driver": "hami-core-gpu.project-hami.io",)", "")),
            "spec.driver: is required");
  EXPECT_EQ(slice_error(hami_slice_with(R"("name": "node-a", "generation")",
                                        R"("name": "Node_A", "generation")")),
            "spec.pool.name: \"Node_A\" is not one or more DNS subdomains separated by '/'");
  EXPECT_EQ(slice_error(hami_slice_with(R"("nodeName": "node-a",)",
                                        R"("nodeSelector": {"nodeSelectorTerms": [{}, {}]},)")),
            "spec.nodeSelector: must have exactly one nodeSelectorTerms entry");
}

TEST(DraDecode, PerDeviceNodeSelection) {
  const std::string json = R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    "metadata": {"name": "s"},
    "spec": {"driver": "d.io", "perDeviceNodeSelection": true,
      "pool": {"name": "p", "generation": 2, "resourceSliceCount": 1},
      "devices": [{"name": "a", "nodeName": "n1"},
                  {"name": "b", "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                     {"key": "zone", "operator": "In", "values": ["z1"]}]}]}}]}})";
  auto s = decode_resource_slice(json);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(s->per_device_node_selection);
  EXPECT_EQ(s->devices[0].node_scope->node_name, "n1");
  ASSERT_TRUE(s->devices[1].node_scope->node_selector);
  EXPECT_EQ(s->devices[1].node_scope->node_selector->terms[0].match_expressions[0].values[0], "z1");

  std::string missing = json;
  missing.replace(missing.find(R"(, "nodeName": "n1")"), 18, "");
  EXPECT_EQ(slice_error(missing),
            "spec.devices[0]: exactly one of nodeName, nodeSelector and allNodes must be set "
            "(the slice sets perDeviceNodeSelection)");
  EXPECT_EQ(slice_error(hami_slice_with(R"("name": "hami-gpu-0",)",
                                        R"("name": "hami-gpu-0", "nodeName": "node-a",)")),
            "spec.devices[0]: nodeName, nodeSelector and allNodes may only be set when the slice "
            "sets perDeviceNodeSelection");
  std::string bad_op = json;
  bad_op.replace(bad_op.find(R"("In")"), 4, R"("Near")");
  EXPECT_EQ(slice_error(bad_op),
            "spec.devices[1].nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator: "
            "unknown operator \"Near\" (In, NotIn, Exists, DoesNotExist, Gt, Lt)");
}

TEST(DraDecode, DevicesAreNamedOnceAndBounded) {
  EXPECT_EQ(slice_error(hami_slice_with(R"("name": "hami-gpu-0",)", R"("name": "GPU0",)")),
            "spec.devices[0]: \"GPU0\" is not a DNS label (lower case letters, digits and '-', "
            "at most 63)");
  std::string devices;
  for (int i = 0; i < 129; ++i) {
    devices += fmt::format(R"({}{{"name": "d{}"}})", i == 0 ? "" : ",", i);
  }
  const std::string many = R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    "metadata": {"name": "s"}, "spec": {"driver": "d.io", "allNodes": true,
    "pool": {"name": "p", "generation": 0, "resourceSliceCount": 1}, "devices": [)" +
                           devices + "]}}";
  EXPECT_EQ(slice_error(many), "spec.devices: more than 128 entries");
  std::string twice = many;
  twice.replace(twice.find(R"("name": "d1")"), 12, R"("name": "d0")");
  twice.resize(twice.find(R"(,{"name": "d2")"));
  twice += "]}}";
  EXPECT_EQ(slice_error(twice), "spec.devices[1]: device name \"d0\" is used twice in the slice");
}

TEST(DraDecode, CountersAndTaints) {
  const std::string json = R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    "metadata": {"name": "s"},
    "spec": {"driver": "d.io", "nodeName": "n", "pool": {"name": "p", "generation": 0, "resourceSliceCount": 2},
      "sharedCounters": [{"name": "gpu-0-counters", "counters": {"memory": {"value": "40Gi"}}}],
      "devices": [{"name": "mig-1g", "consumesCounters": [{"counterSet": "gpu-0-counters",
                   "counters": {"memory": {"value": "5Gi"}}}],
                   "taints": [{"key": "maintenance", "effect": "NoSchedule", "timeAdded": "2026-01-01T00:00:00Z"}]}]}})";
  auto s = decode_resource_slice(json);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->shared_counters[0].counters.at("memory"), q("40Gi"));
  EXPECT_EQ(s->devices[0].consumes_counters[0].counter_set, "gpu-0-counters");
  EXPECT_EQ(s->devices[0].consumes_counters[0].counters.at("memory"), q("5Gi"));
  EXPECT_EQ(s->devices[0].taints[0].effect, "NoSchedule");
  std::string no_effect = json;
  no_effect.replace(no_effect.find(R"(, "effect": "NoSchedule")"), 24, "");
  EXPECT_EQ(slice_error(no_effect), "spec.devices[0].taints[0]: effect is required");
}

const std::string kClaim = R"({
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
  "metadata": {"name": "infer-0", "namespace": "team-a", "uid": "c1"},
  "spec": {"devices": {
    "requests": [
      {"name": "gpu", "exactly": {"deviceClassName": "hami-gpu",
        "selectors": [{"cel": {"expression": "device.attributes['hami-core-gpu.project-hami.io'].type == 'hami-gpu'"}}],
        "capacity": {"requests": {"cores": "30", "memory": "4Gi"}}}},
      {"name": "any", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu.example.com", "count": 2},
        {"name": "all", "deviceClassName": "gpu.example.com", "allocationMode": "All"}]}
    ],
    "constraints": [{"requests": ["gpu", "any/big"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}],
    "config": [{"opaque": {"driver": "d.io", "parameters": {"any": ["thing", {"deep": 1}]}}}]
  }},
  "status": {
    "allocation": {"devices": {"results": [{"request": "gpu", "driver": "hami-core-gpu.project-hami.io",
        "pool": "node-a", "device": "hami-gpu-0", "shareID": "6f1c2a5e-8a55-4bb5-9a8e-1d2a3b4c5d6e",
        "consumedCapacity": {"cores": "30", "memory": "4Gi"}}]},
      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}]}},
    "reservedFor": [{"resource": "pods", "name": "infer-0-pod", "uid": "p1"}],
    "devices": [{"driver": "hami-core-gpu.project-hami.io", "pool": "node-a", "device": "hami-gpu-0"}]
  }
})";

std::string claim_with(std::string_view from, std::string_view to) {
  std::string s = kClaim;
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

std::string claim_error(const std::string& json) {
  auto c = decode_resource_claim(json);
  EXPECT_FALSE(c) << json;
  return c ? std::string() : c.error().message;
}

TEST(DraDecode, ClaimWithRequestsConstraintsAndAllocation) {
  auto c = decode_resource_claim(kClaim);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->metadata.namespace_, "team-a");
  ASSERT_EQ(c->spec.requests.size(), 2u);
  const DeviceRequest& gpu = c->spec.requests[0];
  ASSERT_TRUE(gpu.exactly);
  EXPECT_EQ(gpu.exactly->device_class_name, "hami-gpu");
  EXPECT_EQ(gpu.exactly->allocation_mode, AllocationMode::kExactCount);
  EXPECT_EQ(gpu.exactly->count, 1);  // defaulted
  EXPECT_EQ(gpu.exactly->capacity_requests.at("memory"), q("4Gi"));
  ASSERT_EQ(gpu.exactly->selectors.size(), 1u);
  const DeviceRequest& any = c->spec.requests[1];
  EXPECT_FALSE(any.exactly);
  ASSERT_EQ(any.first_available.size(), 2u);
  EXPECT_EQ(any.first_available[0].request.count, 2);
  EXPECT_EQ(any.first_available[1].request.allocation_mode, AllocationMode::kAll);
  EXPECT_EQ(any.first_available[1].request.count, 0);
  EXPECT_EQ(c->spec.constraints[0].match_attribute, "resource.kubernetes.io/pcieRoot");
  ASSERT_TRUE(c->status.allocation);
  const auto& result = c->status.allocation->results[0];
  EXPECT_EQ(result.device, "hami-gpu-0");
  EXPECT_EQ(result.share_id, "6f1c2a5e-8a55-4bb5-9a8e-1d2a3b4c5d6e");
  EXPECT_EQ(result.consumed_capacity.at("cores"), q("30"));
  EXPECT_EQ(c->status.allocation->node_selector->terms[0].match_fields[0].values[0], "node-a");
  EXPECT_EQ(c->status.reserved_for[0].uid, "p1");
}

TEST(DraDecode, V1beta1RequestsAreWrittenFlat) {
  const std::string json = R"({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "ns"},
    "spec": {"devices": {"requests": [
      {"name": "gpu", "deviceClassName": "hami-gpu", "count": 2, "capacity": {"requests": {"memory": "20000Mi"}}},
      {"name": "alt", "firstAvailable": [{"name": "one", "deviceClassName": "x"}]}]}}})";
  auto c = decode_resource_claim(json);
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_TRUE(c->spec.requests[0].exactly);
  EXPECT_EQ(c->spec.requests[0].exactly->count, 2);
  EXPECT_EQ(c->spec.requests[0].exactly->capacity_requests.at("memory"), q("20000Mi"));
  EXPECT_FALSE(c->spec.requests[1].exactly);
  EXPECT_EQ(c->spec.requests[1].first_available[0].name, "one");
  // v1 writes them under `exactly`.
  std::string v1 = json;
  v1.replace(v1.find("v1beta1"), 7, "v1");
  EXPECT_EQ(claim_error(v1),
            "spec.devices.requests[0].deviceClassName: belongs under exactly in this API version");
}

TEST(DraDecode, ClaimRulesAreChecked) {
  EXPECT_EQ(claim_error(claim_with(R"("deviceClassName": "hami-gpu",)", "")),
            "spec.devices.requests[0].exactly: deviceClassName is required");
  EXPECT_EQ(claim_error(claim_with(R"("count": 2})", R"("count": 2, "allocationMode": "Most"})")),
            "spec.devices.requests[1].firstAvailable[0]: allocationMode \"Most\" is neither "
            "ExactCount nor All");
  EXPECT_EQ(claim_error(claim_with(R"("allocationMode": "All"})",
                                   R"("allocationMode": "All", "count": 3})")),
            "spec.devices.requests[1].firstAvailable[1]: count must be 0 with allocationMode All");
  EXPECT_EQ(claim_error(claim_with(R"("count": 2})", R"("count": -2})")),
            "spec.devices.requests[1].firstAvailable[0]: count -2 must be greater than zero");
  EXPECT_EQ(claim_error(claim_with(
                R"({"name": "any", "firstAvailable")",
                R"({"name": "any", "exactly": {"deviceClassName": "x"}, "firstAvailable")")),
            "spec.devices.requests[1]: exactly one of exactly and firstAvailable must be set");
  EXPECT_EQ(claim_error(claim_with(R"({"name": "any",)", R"({"name": "gpu",)")),
            "spec.devices.requests: request name \"gpu\" is used twice");
  EXPECT_EQ(claim_error(claim_with(R"("any/big")", R"("any/small")")),
            "spec.devices.constraints[0]: requests names \"any/small\", which is not a request of "
            "this claim");
  EXPECT_EQ(claim_error(claim_with(R"("matchAttribute": "resource.kubernetes.io/pcieRoot")",
                                   R"("matchAttribute": "pcieRoot")")),
            "spec.devices.constraints[0]: \"pcieRoot\" is not a fully qualified name "
            "(<domain>/<identifier>)");
  EXPECT_EQ(claim_error(claim_with(R"("cores": "30", "memory": "4Gi"}}})", R"("cores": "-30"}}})")),
            "spec.devices.requests[0].exactly.capacity.requests[cores]: must not be negative");
  EXPECT_EQ(
      claim_error(claim_with(R"({"name": "big",)", R"({"name": "big", "adminAccess": true,)")),
      "spec.devices.requests[1].firstAvailable[0].adminAccess: subrequests cannot ask for "
      "admin access");
  EXPECT_EQ(
      claim_error(claim_with(R"("expression": "device)", R"("expression": "", "x": "device)")),
      "spec.devices.requests[0].exactly.selectors[0].cel: unknown field \"x\"");
  EXPECT_EQ(claim_error(claim_with(R"("reservedFor": [)", R"("reservedFor": 1, "x": [)")),
            "status.reservedFor: expected an array, got number");
}

TEST(DraDecode, DeviceClassAndClaimTemplate) {
  auto c = decode_device_class(R"({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
    "metadata": {"name": "hami-gpu"},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'hami-core-gpu.project-hami.io'"}}],
             "config": [{"opaque": {"driver": "d", "parameters": {}}}],
             "extendedResourceName": "nvidia.com/gpu"}})");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->selectors,
            std::vector<std::string>{"device.driver == 'hami-core-gpu.project-hami.io'"});
  EXPECT_EQ(c->extended_resource_name, "nvidia.com/gpu");

  auto t = decode_resource_claim_template(R"({"apiVersion": "resource.k8s.io/v1beta2",
    "kind": "ResourceClaimTemplate", "metadata": {"name": "t", "namespace": "ns"},
    "spec": {"metadata": {"labels": {"app": "infer"}},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "hami-gpu"}}]}}}})");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->claim_labels.at("app"), "infer");
  EXPECT_EQ(t->spec.requests[0].exactly->device_class_name, "hami-gpu");

  auto no_spec = decode_device_class(
      R"({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "x"}})");
  ASSERT_FALSE(no_spec);
  EXPECT_EQ(no_spec.error().message, "spec is required");
  auto status = decode_device_class(
      R"({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "x"}, "spec": {}, "status": {}})");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message, "status: this kind has no status");
}

// Kubernetes 1.37: DeviceTaintRules are on by default (kube-scheduler applies their taints to
// the slices it allocates from), and a slice may carry compatibilityGroups (alpha, off: the
// allocator ignores the slice, dra/pools.h).
TEST(DraDecode, DeviceTaintRulesAreAppliedToTheSlicesTheySelect) {
  const std::string slice = R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    "metadata": {"name": "s"},
    "spec": {"driver": "d.io", "nodeName": "n", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
      "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}})";
  const std::string rule = R"({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
    "metadata": {"name": "r"},
    "spec": {"deviceSelector": {"driver": "d.io", "pool": "p", "device": "gpu-1"},
      "taint": {"key": "broken", "value": "yes", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}},
    "status": {"conditions": [{"type": "EvictionInProgress", "status": "False"}]}})";
  Objects objects;
  ASSERT_TRUE(decode_object(slice, "items[0]", objects));
  ASSERT_TRUE(decode_object(rule, "items[1]", objects));
  ASSERT_EQ(objects.taint_rules.size(), 1u);
  EXPECT_EQ(objects.taint_rules[0].device, "gpu-1");
  // Not yet applied: decode_object reads one object.
  EXPECT_TRUE(objects.slices[0].devices[1].taints.empty());
  apply_device_taint_rules(objects);
  EXPECT_TRUE(objects.slices[0].devices[0].taints.empty());
  ASSERT_EQ(objects.slices[0].devices[1].taints.size(), 1u);
  EXPECT_EQ(objects.slices[0].devices[1].taints[0].effect, "NoExecute");

  // An empty selector selects every device; none at all selects nothing; another pool, none.
  auto with = [&](std::string_view from, std::string_view to) {
    std::string r = rule;
    r.replace(r.find(from), from.size(), to);
    Objects o;
    EXPECT_TRUE(decode_object(slice, "items[0]", o));
    auto st = decode_object(r, "items[1]", o);
    EXPECT_TRUE(st) << st.error().message;
    apply_device_taint_rules(o);
    return o.slices[0].devices[0].taints.size() + o.slices[0].devices[1].taints.size();
  };
  const std::string_view sel =
      R"("deviceSelector": {"driver": "d.io", "pool": "p", "device": "gpu-1"},)";
  EXPECT_EQ(with(sel, R"("deviceSelector": {},)"), 2u);
  EXPECT_EQ(with(sel, ""), 0u);
  EXPECT_EQ(with(R"("pool": "p",)", R"("pool": "q",)"), 0u);
  EXPECT_EQ(with(R"(, "device": "gpu-1")", ""), 2u);
  EXPECT_TRUE(is_dra_kind("resource.k8s.io/v1", "DeviceTaintRule"));
}

TEST(DraDecode, CompatibilityGroupsAreRead) {
  const std::string json = R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    "metadata": {"name": "s"},
    "spec": {"driver": "d.io", "nodeName": "n", "pool": {"name": "p", "generation": 0, "resourceSliceCount": 2},
      "devices": [{"name": "mig-1g", "consumesCounters": [{"counterSet": "gpu-0-counters",
                   "counters": {"memory": {"value": "5Gi"}}, "compatibilityGroups": ["a", "b"]}]}]}})";
  auto s = decode_resource_slice(json);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->devices[0].consumes_counters[0].compatibility_groups,
            (std::vector<std::string>{"a", "b"}));
}

TEST(DraDecode, ObjectsAreSortedByKindAndOthersRefused) {
  Objects objects;
  ASSERT_TRUE(decode_object(kHamiSlice, "items[0]", objects));
  ASSERT_TRUE(decode_object(kClaim, "items[1]", objects));
  EXPECT_EQ(objects.slices.size(), 1u);
  EXPECT_EQ(objects.claims.size(), 1u);
  auto bad = decode_object(claim_with(R"("count": 2})", R"("count": "2"})"), "items[2]", objects);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "items[2].spec.devices.requests[1].firstAvailable[0].count: expected an integer, got "
            "string");
  EXPECT_EQ(objects.claims.size(), 1u);  // nothing half-decoded is kept
  auto pod = decode_object(R"({"apiVersion": "v1", "kind": "Pod"})", "items[3]", objects);
  ASSERT_FALSE(pod);
  EXPECT_EQ(pod.error().message,
            "items[3]: not a resource.k8s.io object (apiVersion \"v1\", kind \"Pod\")");
  auto wrong = decode_device_class(kClaim);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().message, "expected kind DeviceClass");
  EXPECT_TRUE(is_dra_kind("resource.k8s.io/v1beta2", "ResourceSlice"));
  EXPECT_FALSE(is_dra_kind("resource.k8s.io/v2", "ResourceSlice"));
  EXPECT_FALSE(decode_object("{\"kind\": ", "", objects));
  EXPECT_FALSE(decode_object("[]", "", objects));
}

TEST(DraNames, Grammars) {
  EXPECT_TRUE(is_dns_label("hami-gpu-0"));
  EXPECT_FALSE(is_dns_label("-a"));
  EXPECT_FALSE(is_dns_label("a-"));
  EXPECT_FALSE(is_dns_label("A"));
  EXPECT_FALSE(is_dns_label(std::string(64, 'a')));
  EXPECT_TRUE(is_dns_subdomain("hami-core-gpu.project-hami.io", 63));
  EXPECT_FALSE(is_dns_subdomain("a..b", 63));
  EXPECT_FALSE(is_dns_subdomain(std::string(64, 'a'), 63));
  EXPECT_TRUE(is_pool_name("node-a/gpu.pool", 253));
  EXPECT_FALSE(is_pool_name("node-a//x", 253));
  EXPECT_TRUE(is_qualified_name("pcieRoot"));
  EXPECT_TRUE(is_qualified_name("resource.kubernetes.io/pcieRoot"));
  EXPECT_TRUE(is_qualified_name("_x9"));
  EXPECT_FALSE(is_qualified_name("9x"));
  EXPECT_FALSE(is_qualified_name(std::string(33, 'x')));
  EXPECT_FALSE(is_qualified_name("Bad.Domain/x"));
  EXPECT_FALSE(is_qualified_name("/x"));
}

}  // namespace decode_test
}  // namespace hamisim::dra
