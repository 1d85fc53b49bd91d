// Hygon DCU (reference: hami-other-vendors.md B.7), from the reference's examples: requests,
// the colon registration, the standard Fit with model filters, annotations and usage.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/hygon/hygon_backend.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace hygon_test {

using device::hygon::HygonBackend;

constexpr const char* kRegister = "hami.io/node-dcu-register";

model::Node dcu_node(std::string reg =
                         "dcu-0,10,65520,100,DCU-K100_AI,0,true,0,hami-core:"
                         "dcu-1,10,65520,100,DCU-K100_AI,0,true,1,hami-core:") {
  return vendor_node("dcu-node", {{kRegister, std::move(reg)}});
}

TEST(Hygon, RequestsFollowTheReferenceExamples) {
  HygonBackend b;
  auto r = b.request_for(container(
      "c", {{"hygon.com/dcunum", "1"}, {"hygon.com/dcucores", "1"}, {"hygon.com/dcumem", "1024"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{1, "DCU", 1024, 0, 1}));
  // Limits, else requests, per resource; cores default to 100.
  r = b.request_for(container("c", {{"hygon.com/dcunum", "1"}}, {{"hygon.com/dcucores", "1"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{1, "DCU", 0, 100, 1}));
  r = b.request_for(container("c", {{"hygon.com/dcunum", "2"}}));
  EXPECT_EQ(r, (device::ContainerDeviceRequest{2, "DCU", 0, 100, 100}));
  // 16Gi is an integer beyond int32: no request at all.
  EXPECT_EQ(
      b.request_for(container("c", {{"hygon.com/dcunum", "1"}, {"hygon.com/dcumem", "16Gi"}})).nums,
      0);
  EXPECT_EQ(b.request_for(container("c", {{"hygon.com/dcunum", "0"}})).nums, 0);
  EXPECT_EQ(b.request_for(container("c", {{"hygon.com/dcunum", "1.5"}})).nums, 0);
  // A non-integer memory is ignored rather than refusing the request.
  r = b.request_for(container("c", {{"hygon.com/dcunum", "1"}, {"hygon.com/dcumem", "1.5"}}));
  EXPECT_EQ(r.nums, 1);
  EXPECT_EQ(r.memreq, 0);
  EXPECT_EQ(r.mem_percentagereq, 100);
}

TEST(Hygon, MemoryFactorMultipliesAndOverflowIsNoRequest) {
  HygonBackend b({"hygon.com/dcunum", "hygon.com/dcumem", "hygon.com/dcucores", 4});
  auto r = b.request_for(container("c", {{"hygon.com/dcunum", "1"}, {"hygon.com/dcumem", "256"}}));
  EXPECT_EQ(r.memreq, 1024);
  EXPECT_EQ(
      b.request_for(container("c", {{"hygon.com/dcunum", "1"}, {"hygon.com/dcumem", "1000000000"}}))
          .nums,
      0);
}

TEST(Hygon, RegistrationIsTheLegacyColonFormat) {
  HygonBackend b;
  auto found =
      b.node_devices(vendor_node("n", {{kRegister, "test-0,1,1024,100,DCU,0,true,0,test:"}}));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 1u);
  const auto& d = found.devices[0];
  EXPECT_EQ(d.id, "test-0");
  EXPECT_EQ(d.count, 1);
  EXPECT_EQ(d.devmem, 1024);
  EXPECT_EQ(d.devcore, 100);
  EXPECT_EQ(d.type, "DCU");
  EXPECT_TRUE(d.health);
  EXPECT_EQ(d.mode, "test");
  EXPECT_EQ(d.device_vendor, "DCU");

  found = b.node_devices(vendor_node("n", {{kRegister, "test-0,1,1024,100,DCU:"}}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kMalformed);
  found = b.node_devices(vendor_node("n", {}));
  EXPECT_EQ(found.state, device::NodeDevices::State::kAbsent);
  EXPECT_EQ(found.message, "annos not found hami.io/node-dcu-register");
}

TEST(Hygon, FitsWritesItsAnnotationsAndClampsCores) {
  const auto registry = chart_registry();
  const model::Pod pod = pod_with(
      {{"hygon.com/dcunum", "1"}, {"hygon.com/dcumem", "2048"}, {"hygon.com/dcucores", "120"}});
  NodeFit fit = fit_on(pod, dcu_node(), registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  // Spread (the default GPU policy) on two idle devices keeps their registration order; the
  // standard Fit takes the last one first.
  EXPECT_EQ(fit.annotations.at("hami.io/dcu-devices-to-allocate"), "dcu-1,DCU,2048,100:;");
  EXPECT_EQ(fit.annotations.at("hami.io/dcu-devices-allocated"), "dcu-1,DCU,2048,100:;");
}

TEST(Hygon, RunningPodsUseMemoryAndTheReasonIsHamis) {
  const auto registry = chart_registry();
  const model::Node node = dcu_node(
      "dcu-0,10,4096,100,DCU-K100_AI,0,true,0,hami-core:dcu-1,10,4096,100,DCU-K100_AI,0,true,1,"
      "hami-core:");
  std::vector<model::Pod> running = {
      running_pod("a", "dcu-node", {{"hami.io/dcu-devices-allocated", "dcu-0,DCU,3000,10:;"}}),
      running_pod("b", "dcu-node", {{"hami.io/dcu-devices-allocated", "dcu-1,DCU,3000,10:;"}}),
  };
  NodeFit fit = fit_on(pod_with({{"hygon.com/dcunum", "1"}, {"hygon.com/dcumem", "2048"}}), node,
                       registry, running);
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.reason, "2/2 CardInsufficientMemory");
  EXPECT_EQ(fit.fit_class, FitClass::kInsufficientCapacity);
  // One more than the node has is refused before Fit.
  fit = fit_on(pod_with({{"hygon.com/dcunum", "3"}}), node, registry);
  EXPECT_EQ(fit.reason, "NodeInsufficientDevice");
}

TEST(Hygon, ModelAndUuidFilters) {
  const auto registry = chart_registry();
  const model::Node node = dcu_node(
      "a,10,1024,100,DCU-K100,0,true,0,x:b,10,1024,100,DCU-Z100,0,"
      "true,1,x:");
  auto with = [](std::string key, std::string value) {
    return PodBuilder()
        .app(container("c", {{"hygon.com/dcunum", "1"}}))
        .annotate(key, value)
        .build();
  };
  NodeFit fit = fit_on(with("hygon.com/use-dcutype", "k100"), node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("DCU")[0][0].uuid, "a");
  fit = fit_on(with("hygon.com/nouse-dcutype", "z100"), node, registry);
  ASSERT_TRUE(fit.fits) << fit.reason;
  EXPECT_EQ(fit.devices.at("DCU")[0][0].uuid, "a");
  fit = fit_on(with("hygon.com/use-dcutype", "k200"), node, registry);
  EXPECT_EQ(fit.reason, "2/2 CardTypeMismatch");
  // A blank filter excludes nothing.
  fit = fit_on(with("hygon.com/nouse-dcutype", " "), node, registry);
  EXPECT_TRUE(fit.fits);
  fit = fit_on(with("hygon.com/use-gpuuuid", "a"), node, registry);
  ASSERT_TRUE(fit.fits);
  EXPECT_EQ(fit.devices.at("DCU")[0][0].uuid, "a");
  fit = fit_on(with("hygon.com/nouse-gpuuuid", "a,b"), node, registry);
  EXPECT_EQ(fit.reason, "2/2 CardUuidMismatch");
}

TEST(Hygon, MutexPolicyAndExclusiveCores) {
  const auto registry = chart_registry();
  const model::Node node = dcu_node("a,10,4096,100,DCU,0,true,0,x:");
  std::vector<model::Pod> running = {
      running_pod("r", "dcu-node", {{"hami.io/dcu-devices-allocated", "a,DCU,1024,0:;"}})};
  model::Pod pod = PodBuilder()
                       .app(container("c", {{"hygon.com/dcunum", "1"}, {"hygon.com/dcumem", "10"}}))
                       .annotate("hami.io/gpu-scheduler-policy", "mutex")
                       .build();
  EXPECT_EQ(fit_on(pod, node, registry, running).reason, "1/1 ExclusiveDeviceAllocateConflict");
  // Default cores are 100: a whole device, which another task already shares.
  EXPECT_EQ(fit_on(pod_with({{"hygon.com/dcunum", "1"}, {"hygon.com/dcumem", "10"}}), node,
                   registry, running)
                .reason,
            "1/1 ExclusiveDeviceAllocateConflict");
}

TEST(Hygon, DeviceConfigSectionRenamesResources) {
  const auto registry = registry_from_yaml(R"(hygon:
  resourceCountName: example.com/dcu
  resourceMemoryName: example.com/dcumem
  resourceCoreName: example.com/dcucores
  memoryFactor: 2
)");
  const auto* b = registry.find("DCU");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->resource_names().count, "example.com/dcu");
  auto r = b->request_for(container("c", {{"example.com/dcu", "1"}, {"example.com/dcumem", "8"}}));
  EXPECT_EQ(r.memreq, 16);
  // A file without a hygon section leaves the names empty, as HAMi does.
  const auto other = registry_from_yaml("nvidia: {}\n");
  ASSERT_NE(other.find("DCU"), nullptr);
  EXPECT_EQ(other.find("DCU")->request_for(container("c", {{"hygon.com/dcunum", "1"}})).nums, 0);
  auto bad = device::parse_device_config("hygon:\n  memoryFactor: many\n");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message,
              ::testing::HasSubstr("hygon.memoryFactor: expected an integer at line 2"));
}

TEST(Hygon, RegistrationBehaviour) {
  HygonBackend b;
  EXPECT_EQ(b.health_check(), device::HealthCheck::kHandshake);
  EXPECT_EQ(b.handshake_annotation(), "hami.io/node-handshake-dcu");
  EXPECT_EQ(b.cleanup_annotation(), "hami.io/node-handshake-dcu");
  EXPECT_TRUE(b.locks_node());
}

}  // namespace hygon_test
}  // namespace hamisim::fit::testing
