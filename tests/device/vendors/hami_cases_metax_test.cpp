// HAMi's own MetaX test cases (pkg/device/metax/sdevice_test.go, device_multicontainer_test.go),
// their inputs and expected outputs ported to hamisim. Cases that metax_test.cpp already checks
// are not repeated.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/metax/metax_gpu.h"
#include "device/metax/metax_sgpu.h"
#include "vendor_test_support.h"

namespace hamisim::fit::testing {
namespace hami_metax {

using device::ContainerDeviceRequest;
using device::metax::MetaxGpuBackend;
using device::metax::MetaxSgpuBackend;
using ::testing::ElementsAre;

constexpr const char* kClass = "metax-tech.com/sgpu-app-class";

// TestMetaxSDevices_Fit's device: Count 100, Totalcore 100, healthy, type Metax-SGPU.
device::DeviceUsage sdev(std::string id, int32_t totalmem = 128) {
  device::DeviceUsage d;
  d.id = std::move(id);
  d.count = 100;
  d.totalmem = totalmem;
  d.totalcore = 100;
  d.type = d.vendor = "Metax-SGPU";
  d.health = true;
  return d;
}

// A pod already on the device with the given annotations.
device::DevicePod on_device(std::map<std::string, std::string, std::less<>> annotations,
                            int64_t cores = 10) {
  device::DevicePod p;
  p.annotations =
      std::make_shared<const std::map<std::string, std::string, std::less<>>>(annotations);
  p.usedcores = cores;
  return p;
}

struct Result {
  bool fits = false;
  std::vector<std::string> uuids;
  std::string reason;
};

Result fit(std::vector<device::DeviceUsage>& devs, ContainerDeviceRequest r,
           std::map<std::string, std::string> annotations = {}) {
  const MetaxSgpuBackend b;
  PodBuilder pb;
  for (auto& [k, v] : annotations) pb.annotate(k, v);
  const model::Pod pod = pb.build();
  std::vector<device::DeviceUsage*> ptrs;
  for (auto& d : devs) ptrs.push_back(&d);
  auto prepared = b.prepare(pod);
  device::FitContext ctx;
  ctx.pod = &pod;
  ctx.prepared = prepared.get();
  // The engine hands Fit the pod's hami.io/gpu-scheduler-policy (HAMi's Fit reads it there).
  auto policy = annotations.find("hami.io/gpu-scheduler-policy");
  ctx.gpu_policy =
      policy == annotations.end() ? std::string_view("spread") : std::string_view(policy->second);
  auto out = b.fit(ptrs, r, ctx);
  Result res;
  res.fits = out.fits;
  for (const auto& d : out.devices) res.uuids.push_back(d.uuid);
  res.reason = device::format_reasons(out.reasons, ptrs.size());
  return res;
}

ContainerDeviceRequest req(int32_t nums, int32_t mem, int32_t cores, int32_t pct = 0,
                           std::string type = "Metax-SGPU") {
  return {nums, std::move(type), mem, pct, cores};
}

// TestMetaxSDevices_Fit "fit success": two idle devices, the last one.
TEST(HamiMetaxSgpuFit, Success) {
  std::vector<device::DeviceUsage> d = {sdev("dev-0"), sdev("dev-1")};
  Result r = fit(d, req(1, 64, 50));
  EXPECT_TRUE(r.fits) << r.reason;
  EXPECT_THAT(r.uuids, ElementsAre("dev-1"));
}

// "fit fail: memory not enough", "core not enough", "type mismatch".
TEST(HamiMetaxSgpuFit, MemoryCoresAndType) {
  std::vector<device::DeviceUsage> d = {sdev("dev-0")};
  EXPECT_EQ(fit(d, req(1, 512, 50)).reason, "1/1 CardInsufficientMemory");
  d = {sdev("dev-0", 1024)};
  d[0].usedcores = 100;
  EXPECT_EQ(fit(d, req(1, 512, 50)).reason, "1/1 CardInsufficientCore");
  d = {sdev("dev-0")};
  EXPECT_EQ(fit(d, req(1, 512, 50, 0, "OtherType")).reason, "1/1 CardTypeMismatch");
}

// "fit fail: online task, app class unfit" and "fit fail: normal task, app class unfit": a
// device used by one pod (64 MiB, 10 cores).
TEST(HamiMetaxSgpuFit, AppClassMismatch) {
  std::vector<device::DeviceUsage> d = {sdev("dev-0")};
  d[0].used = 1;
  d[0].usedmem = 64;
  d[0].usedcores = 10;
  d[0].pods = {on_device({})};
  EXPECT_EQ(fit(d, req(1, 512, 50), {{kClass, "online"}}).reason, "1/1 CardAppClassMismatch");
  d[0].pods = {on_device({{kClass, "online"}})};
  EXPECT_EQ(fit(d, req(1, 512, 50)).reason, "1/1 CardAppClassMismatch");
}

// "fit fail: device unhealthy" (reported as CardUnhealthy) and "fit fail: card overused".
TEST(HamiMetaxSgpuFit, UnhealthyAndOverused) {
  std::vector<device::DeviceUsage> d = {sdev("dev-0")};
  d[0].health = false;
  EXPECT_EQ(fit(d, req(1, 512, 50)).reason, "1/1 CardUnhealthy");
  d = {sdev("dev-0", 1280)};
  d[0].used = 100;
  EXPECT_EQ(fit(d, req(1, 512, 50)).reason, "1/1 CardTimeSlicingExhausted");
}

// "fit fail: card exclusively", "fit fail: CardComputeUnitsExhausted",
// "fit fail: AllocatedCardsInsufficientRequest" and "fit success: memory percentage".
TEST(HamiMetaxSgpuFit, SharedDeviceChecks) {
  std::vector<device::DeviceUsage> d = {sdev("dev-0", 1280)};
  d[0].used = 20;
  EXPECT_EQ(fit(d, req(1, 512, 100)).reason, "1/1 ExclusiveDeviceAllocateConflict");
  d[0].usedcores = 100;
  EXPECT_EQ(fit(d, req(1, 512, 0)).reason, "1/1 CardComputeUnitsExhausted");
  d[0].usedcores = 10;
  EXPECT_EQ(fit(d, req(2, 512, 20)).reason, "1/1 AllocatedCardsInsufficientRequest");
  Result r = fit(d, req(1, 0, 20, 10));
  EXPECT_TRUE(r.fits) << r.reason;
  EXPECT_THAT(r.uuids, ElementsAre("dev-0"));
}

// "fit fail: user assign use uuid mismatch" and "... no use uuid match" (two asked, one
// device).
TEST(HamiMetaxSgpuFit, UuidAnnotations) {
  std::vector<device::DeviceUsage> d = {sdev("dev-1", 1280)};
  EXPECT_EQ(fit(d, req(2, 512, 50), {{"metax-tech.com/use-gpuuuid", "dev-0"}}).reason,
            "1/1 CardUuidMismatch");
  d = {sdev("dev-0", 1280)};
  EXPECT_EQ(fit(d, req(2, 512, 50), {{"metax-tech.com/nouse-gpuuuid", "dev-0"}}).reason,
            "1/1 CardUuidMismatch");
}

// "mutex policy rejects used device".
TEST(HamiMetaxSgpuFit, MutexRejectsAUsedDevice) {
  std::vector<device::DeviceUsage> d = {sdev("dev-0")};
  d[0].used = 1;
  EXPECT_EQ(fit(d, req(1, 64, 50), {{"hami.io/gpu-scheduler-policy", "mutex"}}).reason,
            "1/1 ExclusiveDeviceAllocateConflict");
}

// TestMetaxSDevices_AddResourceUsage (on the whole-GPU backend): {0, 15 cores, 2000 MiB} plus
// (50 cores, 1024 MiB).
TEST(HamiMetaxGpu, AddResourceUsage) {
  const MetaxGpuBackend b;
  device::DeviceUsage u;
  u.id = "dev-0";
  u.usedcores = 15;
  u.usedmem = 2000;
  device::ContainerDevice c;
  c.uuid = "dev-0";
  c.usedcores = 50;
  c.usedmem = 1024;
  ASSERT_TRUE(b.add_usage(u, c));
  EXPECT_EQ(u.used, 1);
  EXPECT_EQ(u.usedcores, 65);
  EXPECT_EQ(u.usedmem, 3024);
}

// TestPrioritizeExclusiveDevices: the cases metax_test.cpp does not have.
TEST(HamiMetaxSgpu, PrioritizeExclusiveDevices) {
  using device::metax::prioritize_exclusive;
  using device::metax::SgpuCandidate;
  // "require four device, best result": zone 2 holds four.
  std::vector<SgpuCandidate> c = {{"GPU-1", 1}, {"GPU-2", 1}, {"GPU-5", 2},
                                  {"GPU-6", 2}, {"GPU-7", 2}, {"GPU-8", 2}};
  EXPECT_THAT(prioritize_exclusive(c, 4), ElementsAre(2, 3, 4, 5));
  // "require four device, general result": zone 1 whole, then zone 2.
  c = {{"GPU-1", 1}, {"GPU-2", 1}, {"GPU-5", 2}, {"GPU-6", 2}, {"GPU-7", 2}};
  EXPECT_THAT(prioritize_exclusive(c, 4), ElementsAre(0, 1, 2, 3));
  // "no metalink, require two device".
  c = {{"GPU-5", 0}, {"GPU-6", 0}, {"GPU-7", 0}};
  EXPECT_THAT(prioritize_exclusive(c, 2), ElementsAre(0, 1));
  // "part metalink, require two device, best result".
  c = {{"GPU-3", 0}, {"GPU-4", 0}, {"GPU-7", 1}, {"GPU-8", 1}};
  EXPECT_THAT(prioritize_exclusive(c, 2), ElementsAre(2, 3));
  // "part metalink, require four device, bad result": zone 1, then GPU-3.
  c = {{"GPU-3", 0}, {"GPU-4", 0}, {"GPU-6", 1}, {"GPU-7", 1}, {"GPU-8", 1}};
  EXPECT_THAT(prioritize_exclusive(c, 4), ElementsAre(2, 3, 4, 0));
}

// TestScoreExclusiveDevices: the cases metax_test.cpp does not have. `available` is the
// snapshot's idle devices.
TEST(HamiMetaxSgpu, ScoreExclusiveDevices) {
  using device::metax::LinkDevice;
  using device::metax::score_exclusive;
  // "allocate two device, bad result": GPU-4 (zone 1) and GPU-5 (zone 2), the only idle ones.
  std::vector<LinkDevice> alloc = {{"GPU-4", 1}, {"GPU-5", 2}};
  EXPECT_EQ(score_exclusive(alloc, alloc), 0);
  // "allocate four device, best result": zone 1 whole, GPU-5 (zone 2) idle too.
  alloc = {{"GPU-1", 1}, {"GPU-2", 1}, {"GPU-3", 1}, {"GPU-4", 1}};
  std::vector<LinkDevice> avail = {
      {"GPU-1", 1}, {"GPU-2", 1}, {"GPU-3", 1}, {"GPU-4", 1}, {"GPU-5", 2}};
  EXPECT_EQ(score_exclusive(alloc, avail), 600);
  // "allocate four device, bad result".
  alloc = {{"GPU-3", 1}, {"GPU-4", 1}, {"GPU-5", 2}, {"GPU-6", 2}};
  avail = {{"GPU-2", 1}, {"GPU-3", 1}, {"GPU-4", 1}, {"GPU-5", 2}, {"GPU-6", 2}};
  EXPECT_EQ(score_exclusive(alloc, avail), 180);
  // "allocate eight device".
  alloc = {{"GPU-1", 1}, {"GPU-2", 1}, {"GPU-3", 1}, {"GPU-4", 1},
           {"GPU-5", 2}, {"GPU-6", 2}, {"GPU-7", 2}, {"GPU-8", 2}};
  EXPECT_EQ(score_exclusive(alloc, alloc), 1200);
}

// TestCheckAppClass: the cases metax_test.cpp does not have.
TEST(HamiMetaxSgpu, CheckAppClass) {
  using device::metax::app_class_allows;
  using device::metax::PodOnDevice;
  const std::vector<PodOnDevice> offline = {{"offline", "", 0}};
  const std::vector<PodOnDevice> both = {{"online", "", 0}, {"offline", "", 0}};
  EXPECT_FALSE(app_class_allows("", 1, offline));      // "normal task unfit offline device"
  EXPECT_TRUE(app_class_allows("online", 2, both));    // "online task fit online/offline device"
  EXPECT_FALSE(app_class_allows("offline", 2, both));  // "offline task unfit online device"
}

// TestPrioritizeOnlineDevices (one device asked).
TEST(HamiMetaxSgpu, PrioritizeOnlineDevices) {
  using device::metax::prioritize_online;
  using device::metax::SgpuCandidate;
  // "prioritize idle device".
  std::vector<SgpuCandidate> c = {{"GPU-1", 0, 0, 0}, {"GPU-2", 0, 1, 0}, {"GPU-3", 0, 2, 0},
                                  {"GPU-4", 0, 1, 1}, {"GPU-5", 0, 2, 1}, {"GPU-6", 0, 0, 1},
                                  {"GPU-7", 0, 0, 2}};
  EXPECT_THAT(prioritize_online(c, 1), ElementsAre(0));
  // "prioritize onlyOnline device".
  c = {{"GPU-1", 0, 1, 0}, {"GPU-2", 0, 2, 0}, {"GPU-3", 0, 3, 1}, {"GPU-4", 0, 0, 2}};
  EXPECT_THAT(prioritize_online(c, 1), ElementsAre(0));
  // "prioritize online&offline device".
  c = {{"GPU-1", 0, 3, 0},
       {"GPU-2", 0, 1, 1},
       {"GPU-3", 0, 2, 1},
       {"GPU-4", 0, 0, 1},
       {"GPU-5", 0, 0, 2}};
  EXPECT_THAT(prioritize_online(c, 1), ElementsAre(1));
  // "prioritize onlyOffline device".
  c = {{"GPU-1", 0, 0, 1}, {"GPU-2", 0, 0, 2}};
  EXPECT_THAT(prioritize_online(c, 1), ElementsAre(0));
}

// TestScoreOnlineDevices "test only online device" and "test online/offline device" (the idle
// and offline-only cases are in metax_test.cpp).
TEST(HamiMetaxSgpu, ScoreOnlineDevices) {
  using device::metax::score_online_device;
  EXPECT_EQ(score_online_device(2, 0), -40);
  EXPECT_EQ(score_online_device(2, 2), -44);
}

// TestMutateAdmission "qos policy fit" (burst-share kept) and "offline task with qos"
// (best-effortx rejected for an offline pod).
TEST(HamiMetaxSgpu, Admission) {
  using device::metax::sgpu_admission;
  const model::Quantity one = model::Quantity::from_int(1);
  auto r = sgpu_admission({{"metax-tech.com/sgpu-qos-policy", "burst-share"}}, one);
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
  r = sgpu_admission({{kClass, "offline"}, {"metax-tech.com/sgpu-qos-policy", "best-effortx"}},
                     one);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "metax-tech.com/sgpu-qos-policy must be set one of [best-effort, fixed-share, "
            "burst-share]");
}

// Test_Fit_MultiContainerPodSpreadsOverCards: eight idle whole GPUs, two containers of one
// card each. The stored HAMi test (newer than v2.10, "the removed same card filter") expects
// the second container on another card; v2.10 keeps the custom filter rule (every earlier
// container's card must be this card, hami-other-vendors.md B.10.a §4), so the second
// container finds its card taken. hamisim keeps v2.10's behaviour.
TEST(HamiMetaxGpu, SecondContainerIsBoundToTheFirstCardAsInV210) {
  const auto registry = chart_registry();
  const model::Node node = vendor_node("node", {}, {{"metax-tech.com/gpu", "8"}});
  model::Pod pod = PodBuilder()
                       .app(container("a", {{"metax-tech.com/gpu", "1"}}))
                       .app(container("b", {{"metax-tech.com/gpu", "1"}}))
                       .build();
  NodeFit f = fit_on(pod, node, registry);
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(f.reason, "1/8 CardTimeSlicingExhausted, 7/8 CardNotFoundCustomFilterRule");
}

// score_test.go TestLinkDeviceScore and TestLinkDevicesScore: 10 per pair of distinct devices
// sharing a non-zero zone.
TEST(HamiMetaxSgpu, LinkScores) {
  using device::metax::link_score;
  using device::metax::LinkDevice;
  auto score = [](std::vector<LinkDevice> v) { return link_score(v); };
  // Pairs.
  EXPECT_EQ(score({{"GPU-0", 1}, {"GPU-0", 1}}), 0);
  EXPECT_EQ(score({{"GPU-0", 0}, {"GPU-1", 1}}), 0);
  EXPECT_EQ(score({{"GPU-0", 1}, {"GPU-1", 0}}), 0);
  EXPECT_EQ(score({{"GPU-0", 0}, {"GPU-1", 0}}), 0);
  EXPECT_EQ(score({{"GPU-0", 1}, {"GPU-1", 1}}), 10);
  EXPECT_EQ(score({{"GPU-0", 1}, {"GPU-1", 2}}), 0);
  // Sets.
  EXPECT_EQ(score({}), 0);
  EXPECT_EQ(score({{"GPU-0", 1}}), 0);
  EXPECT_EQ(score({{"GPU-0", 1}, {"GPU-1", 1}, {"GPU-2", 1}}), 30);
  EXPECT_EQ(score({{"GPU-0", 1}, {"GPU-1", 1}, {"GPU-2", 2}}), 10);
}

// protocol_test.go TestConvertMetaxSDeviceToHAMIDevice: two sGPUs (16 and 8 slots, 64 and
// 32 GiB, 100 compute; the second on NUMA -1 and unhealthy) -> devices 0 and 1 of type and
// vendor Metax-SGPU.
TEST(HamiMetaxSgpu, RegistrationConversion) {
  const MetaxSgpuBackend b;
  const auto found = b.node_devices(vendor_node(
      "n",
      {{"metax-tech.com/node-gpu-devices",
        R"([{"uuid":"GPU-a16ac188-0592-5c8f-2b6e-8bd8e7a604a9","bdf":"0000:0a:00.0","model":"","totalDevCount":16,"totalCompute":100,"totalVRam":65536,"availableDevCount":6,"availableCompute":50,"availableVRam":32768,"numa":0,"healthy":true},)"
        R"({"uuid":"GPU-a16ac188-0592-5c8f-2b6e-8bd8e7a604a8","bdf":"0000:09:00.0","model":"","totalDevCount":8,"totalCompute":100,"totalVRam":32768,"availableDevCount":6,"availableCompute":50,"availableVRam":32768,"numa":-1,"healthy":false}])"}}));
  ASSERT_EQ(found.state, device::NodeDevices::State::kOk) << found.message;
  ASSERT_EQ(found.devices.size(), 2u);
  const auto& a = found.devices[0];
  const auto& c = found.devices[1];
  EXPECT_EQ(a.id, "GPU-a16ac188-0592-5c8f-2b6e-8bd8e7a604a9");
  EXPECT_EQ(a.index, 0u);
  EXPECT_EQ(a.count, 16);
  EXPECT_EQ(a.devmem, 65536);
  EXPECT_EQ(a.devcore, 100);
  EXPECT_EQ(a.type, "Metax-SGPU");
  EXPECT_EQ(a.device_vendor, "Metax-SGPU");
  EXPECT_EQ(a.numa, 0);
  EXPECT_TRUE(a.health);
  EXPECT_EQ(a.mode, "");
  EXPECT_EQ(c.index, 1u);
  EXPECT_EQ(c.count, 8);
  EXPECT_EQ(c.devmem, 32768);
  EXPECT_EQ(c.numa, -1);
  EXPECT_FALSE(c.health);
}

// device_test.go TestMetaxDevices_Fit (whole-GPU backend, the standard Fit): Count 100,
// Totalcore 100, healthy Metax-GPU devices.
TEST(HamiMetaxGpu, FitTable) {
  auto gpu = [](std::string id, int32_t mem) {
    device::DeviceUsage d;
    d.id = std::move(id);
    d.count = 100;
    d.totalmem = mem;
    d.totalcore = 100;
    d.type = d.vendor = "Metax-GPU";
    d.health = true;
    return d;
  };
  const MetaxGpuBackend b;
  std::vector<device::DeviceUsage> d = {gpu("dev-0", 128), gpu("dev-1", 128)};
  auto f = direct_fit(b, d, {1, "Metax-GPU", 64, 0, 50});
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_THAT(f.uuids(), ElementsAre("dev-1"));  // "fit success"
  d = {gpu("dev-0", 128)};
  EXPECT_EQ(direct_fit(b, d, {1, "Metax-GPU", 512, 0, 50}).reason, "1/1 CardInsufficientMemory");
  EXPECT_EQ(direct_fit(b, d, {1, "OtherType", 512, 0, 50}).reason, "1/1 CardTypeMismatch");
  d = {gpu("dev-0", 1024)};
  d[0].usedcores = 100;
  EXPECT_EQ(direct_fit(b, d, {1, "Metax-GPU", 512, 0, 50}).reason, "1/1 CardInsufficientCore");
  d = {gpu("dev-0", 1280)};
  d[0].used = 100;
  EXPECT_EQ(direct_fit(b, d, {1, "Metax-GPU", 512, 0, 50}).reason, "1/1 CardTimeSlicingExhausted");
  // "fit success: but core limit can't exceed 100".
  d = {gpu("dev-0", 1280)};
  f = direct_fit(b, d, {1, "Metax-GPU", 512, 0, 120});
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.outcome.devices[0].usedcores, 100);
}

// device_test.go TestGetNodeDevices: capacity 1 on node "test" -> test-metax-0, 65536 MiB, 100
// cores. (This stored version expects Count 100; v2.10 registers Count 1 per whole GPU,
// hami-other-vendors.md B.10.a §2, which hamisim keeps.)
TEST(HamiMetaxGpu, DevicesFromCapacity) {
  const auto found =
      MetaxGpuBackend{}.node_devices(vendor_node("test", {}, {{"metax-tech.com/gpu", "1"}}));
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0].id, "test-metax-0");
  EXPECT_EQ(found.devices[0].devmem, 65536);
  EXPECT_EQ(found.devices[0].devcore, 100);
  EXPECT_EQ(found.devices[0].count, 1);
}

}  // namespace hami_metax
}  // namespace hamisim::fit::testing
