// Biren (reference: hami-other-vendors.md B.4), from the reference's examples: requests, the
// JSON registration (cores forced to 100), the slot-only Fit, annotations, usage and lock.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/allocation.h"
#include "device/biren/biren_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace biren_test {

using device::biren::BirenBackend;

constexpr const char* kRegister = "hami.io/node-biren-register";
constexpr const char* kAllocated = "hami.io/Biren-devices-allocated";
constexpr const char* kToAllocate = "hami.io/Biren-devices-to-allocate";

model::Node biren_node(
    std::string reg = R"([{"id":"dev-0","count":1,"devmem":32768,"type":"Biren","health":true},)"
                      R"({"id":"dev-1","count":1,"devmem":32768,"type":"Biren","health":true}])") {
  return vendor_node("biren-node", {{kRegister, std::move(reg)}});
}

device::DeviceUsage usage(std::string id, int32_t count, int64_t used = 0) {
  device::DeviceUsage d;
  d.id = std::move(id);
  d.count = count;
  d.used = used;
  d.totalmem = 32768;
  d.totalcore = 100;
  d.type = "Biren";
  d.vendor = "Biren";
  return d;
}

// Fit called directly (HAMi's unit tests do), bypassing the NodeInsufficientDevice pre-check.
DirectFit direct_fit(std::vector<device::DeviceUsage>& devices, device::ContainerDeviceRequest r,
                     const model::Pod& pod = PodBuilder().build(),
                     std::string_view policy = "spread") {
  return fit::testing::direct_fit(BirenBackend{}, devices, r, pod, policy);
}

device::ContainerDeviceRequest want(int32_t nums) {
  return {nums, "Biren", 0, 100, 0};
}

TEST(Biren, RequestsFollowTheReferenceExamples) {
  BirenBackend b;
  const device::ContainerDeviceRequest one{1, "Biren", 0, 100, 0};
  EXPECT_EQ(
      b.request_for(container("c", {{"birentech.com/gpu", "1"}}, {{"birentech.com/gpu", "1"}})),
      one);
  // Only requests: the count is read from requests when limits lack it.
  EXPECT_EQ(b.request_for(container("c", {}, {{"birentech.com/gpu", "1"}})), one);
  // Limits win over requests.
  EXPECT_EQ(
      b.request_for(container("c", {{"birentech.com/gpu", "3"}}, {{"birentech.com/gpu", "1"}}))
          .nums,
      3);
  EXPECT_EQ(b.request_for(container("c", {{"birentech.com/gpu", "0"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{"birentech.com/gpu", "-1"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{"birentech.com/gpu", "1.5"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{"nvidia.com/gpu", "1"}})).nums, 0);
  // int32(n) without a range check: 2^31 wraps negative (no request), 2^32+1 wraps to 1.
  EXPECT_EQ(b.request_for(container("c", {{"birentech.com/gpu", "2147483648"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{"birentech.com/gpu", "4294967297"}})).nums, 1);
}

TEST(Biren, RegistrationIsJsonWithCoresForcedTo100) {
  BirenBackend b;
  // The reference's fixture, with the v2.9-style extra key that is ignored.
  auto found = b.node_devices(vendor_node(
      "n",
      {{kRegister,
        R"([{"id":"7-0","count":1,"devmem":32768,"type":"Biren","health":true,"devicepairscore":{}}])"}}));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  const auto& d = found.devices[0];
  EXPECT_EQ(d.id, "7-0");
  EXPECT_EQ(d.count, 1);
  EXPECT_EQ(d.devmem, 32768);
  EXPECT_EQ(d.devcore, 100);
  EXPECT_EQ(d.type, "Biren");
  EXPECT_TRUE(d.health);
  EXPECT_EQ(d.device_vendor, "Biren");

  // A registered devcore is overwritten too; a missing health key means unhealthy.
  found = b.node_devices(
      vendor_node("n", {{kRegister, R"([{"id":"a","count":2,"devcore":7,"type":"Biren"}])"}}));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk);
  EXPECT_EQ(found.devices[0].devcore, 100);
  EXPECT_FALSE(found.devices[0].health);

  found = b.node_devices(vendor_node("n", {}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "annos not found hami.io/node-biren-register");
  found = b.node_devices(vendor_node("n", {{kRegister, "[]"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "no gpu found on node");
  found = b.node_devices(vendor_node("n", {{kRegister, R"([{"id":"a","count":"one"}])"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
  found = b.node_devices(vendor_node("n", {{kRegister, "[{"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
}

TEST(Biren, FitsTheLastIdleDeviceAndWritesBothKeys) {
  const auto registry = chart_registry();
  NodeFit fit = fit_on(pod_with({{"birentech.com/gpu", "1"}}), biren_node(), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  // Nothing but a slot is recorded: 0 MiB, 0 cores.
  EXPECT_EQ(fit.annotations.at(kToAllocate), "dev-1,Biren,0,0:;");
  EXPECT_EQ(fit.annotations.at(kAllocated), "dev-1,Biren,0,0:;");
  EXPECT_EQ(fit.devices.at("Biren")[0][0].type, "Biren");
  // Two devices for one container.
  fit = fit_on(pod_with({{"birentech.com/gpu", "2"}}), biren_node(), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.annotations.at(kAllocated), "dev-1,Biren,0,0:dev-0,Biren,0,0:;");
  // More than the node has is refused before Fit.
  fit = fit_on(pod_with({{"birentech.com/gpu", "3"}}), biren_node(), registry);
  EXPECT_EQ(fit.reason, "NodeInsufficientDevice");
}

TEST(Biren, DirectFitReportsPartialSelections) {
  std::vector<device::DeviceUsage> devices = {usage("dev-0", 1), usage("dev-1", 1)};
  DirectFit r = direct_fit(devices, want(1));
  ASSERT_TRUE(r.outcome.fits);
  ASSERT_EQ(r.outcome.devices.size(), 1u);
  EXPECT_EQ(r.outcome.devices[0].uuid, "dev-1");
  EXPECT_EQ(r.outcome.devices[0].usedmem, 0);
  EXPECT_EQ(r.outcome.devices[0].usedcores, 0);

  std::vector<device::DeviceUsage> one = {usage("dev-0", 1)};
  r = direct_fit(one, want(2));
  EXPECT_FALSE(r.outcome.fits);
  EXPECT_EQ(r.reason, "1/1 AllocatedCardsInsufficientRequest");
  EXPECT_EQ(r.outcome.devices.size(), 1u);
  r = direct_fit(devices, want(3));
  EXPECT_EQ(r.reason, "2/2 AllocatedCardsInsufficientRequest");
  EXPECT_EQ(r.outcome.devices.size(), 2u);
}

TEST(Biren, MutexSlotsHealthAndUuidFilters) {
  std::vector<device::DeviceUsage> shared = {usage("dev-0", 2, 1)};
  EXPECT_EQ(direct_fit(shared, want(1), PodBuilder().build(), "mutex").reason,
            "1/1 ExclusiveDeviceAllocateConflict");
  // Without mutex the free slot is used.
  EXPECT_TRUE(direct_fit(shared, want(1)).outcome.fits);
  // A request typed otherwise never matches.
  EXPECT_EQ(direct_fit(shared, {1, "biren", 0, 100, 0}).reason, "1/1 CardTypeMismatch");

  const auto registry = chart_registry();
  const model::Node node =
      biren_node(R"([{"id":"a","count":2,"devmem":1,"type":"Biren","health":true},)"
                 R"({"id":"b","count":1,"devmem":1,"type":"Biren","health":false}])");
  // Memory is never checked: a running pod's recorded memory does not matter, only slots.
  std::vector<model::Pod> running = {
      running_pod("r", "biren-node", {{kAllocated, "a,Biren,5000,1:;"}})};
  model::Pod mutex = PodBuilder()
                         .app(container("c", {{"birentech.com/gpu", "1"}}))
                         .annotate("hami.io/gpu-scheduler-policy", "binpack, mutex")
                         .build();
  EXPECT_EQ(fit_on(mutex, node, registry, running).reason,
            "1/2 CardNotHealth, 1/2 ExclusiveDeviceAllocateConflict");
  NodeFit fit = fit_on(pod_with({{"birentech.com/gpu", "1"}}), node, registry, running);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("Biren")[0][0].uuid, "a");
  running.push_back(running_pod("s", "biren-node", {{kAllocated, "a,Biren,0,0:;"}}));
  EXPECT_EQ(fit_on(pod_with({{"birentech.com/gpu", "1"}}), node, registry, running).reason,
            "1/2 CardNotHealth, 1/2 CardTimeSlicingExhausted");

  auto with = [](std::string key, std::string value) {
    return PodBuilder()
        .app(container("c", {{"birentech.com/gpu", "1"}}))
        .annotate(key, value)
        .build();
  };
  fit = fit_on(with("birentech.com/use-gpuuuid", "dev-0"), biren_node(), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("Biren")[0][0].uuid, "dev-0");
  EXPECT_EQ(
      fit_on(with("birentech.com/nouse-gpuuuid", "dev-0, dev-1"), biren_node(), registry).reason,
      "2/2 CardUuidMismatch");
  // The defined but unused type annotations change nothing.
  EXPECT_TRUE(fit_on(with("birentech.com/use-biren", "nothing"), biren_node(), registry).fits);
}

TEST(Biren, AnnotationsAndUsage) {
  BirenBackend b;
  std::map<std::string, std::string> annotations;
  device::ContainerDevice d;
  d.uuid = "test1";
  d.type = "Biren";
  d.usedmem = 2048;
  d.usedcores = 1;
  b.allocation_annotations({{d}}, annotations);
  EXPECT_EQ(annotations.at(kToAllocate), "test1,Biren,2048,1:;");
  EXPECT_EQ(annotations.at(kAllocated), "test1,Biren,2048,1:;");
  // Nothing chosen: nothing written.
  annotations.clear();
  b.allocation_annotations({}, annotations);
  EXPECT_TRUE(annotations.empty());

  device::DeviceUsage u = usage("dev-0", 4);
  device::ContainerDevice chosen;
  chosen.uuid = "dev-0";
  ASSERT_TRUE(b.add_usage(u, chosen));
  EXPECT_EQ(u.used, 1);
  EXPECT_EQ(u.usedmem, 0);
  EXPECT_EQ(u.usedcores, 0);
}

TEST(Biren, DeviceConfigSection) {
  const auto registry = registry_from_yaml("biren:\n  resourceCountName: example.com/br\n");
  const auto* b = registry.find("Biren");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->resource_names().count, "example.com/br");
  EXPECT_EQ(b->request_for(container("c", {{"example.com/br", "2"}})).nums, 2);
  EXPECT_EQ(b->managed_resources(), std::vector<std::string>{"example.com/br"});
  // Chart defaults without a file; a file without the section leaves the name empty.
  EXPECT_EQ(chart_registry().find("Biren")->resource_names().count, "birentech.com/gpu");
  const auto other = registry_from_yaml("nvidia: {}\n");
  ASSERT_NE(other.find("Biren"), nullptr);
  EXPECT_EQ(other.find("Biren")->request_for(container("c", {{"birentech.com/gpu", "1"}})).nums, 0);
  auto bad = device::parse_device_config("biren:\n  resourceCountName: [a, b]\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              ::testing::HasSubstr("biren.resourceCountName: expected a string at line 2"));
}

TEST(Biren, RegistrationBehaviour) {
  BirenBackend b;
  EXPECT_EQ(b.vendor(), "Biren");
  EXPECT_EQ(b.health_check(), device::HealthCheck::kHandshake);
  EXPECT_EQ(b.handshake_annotation(), "hami.io/node-handshake-biren");
  EXPECT_EQ(b.cleanup_annotation(), "hami.io/node-handshake-biren");
  EXPECT_TRUE(b.locks_node());
  EXPECT_EQ(b.to_allocate_annotation(), kToAllocate);
  EXPECT_EQ(b.allocated_annotation(), kAllocated);
  EXPECT_EQ(b.score_node({}, {}, "binpack"), 0);
}

}  // namespace biren_test
}  // namespace hamisim::fit::testing
