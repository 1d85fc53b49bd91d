// HAMi's own NVIDIA test cases (Project-HAMi/HAMi pkg/device/nvidia/*_test.go and the shared
// pkg/device/*_test.go), their inputs and expected outputs restated against hamisim. Each TEST
// names the HAMi test function it comes from (and the table entry names in comments).
//
// hamisim reproduces HAMi v2.10.0 (4707fb02). HAMi's stored test files are sometimes from a
// later commit; where such a case expects behaviour that v2.10.0 does not have
// (hami-device-model.md says otherwise), the case asserts hamisim's documented v2.10 behaviour
// and says so, or is left out with a note.

#include <gtest/gtest.h>

#include <limits>

#include <boost/json/parse.hpp>

#include "device/allocation.h"
#include "device/codec.h"
#include "fit/policy.h"
#include "fit/quota.h"
#include "fit_test_support.h"
#include "webhook/mutation.h"

namespace hamisim::fit::testing {
namespace hami_cases_nvidia_test {

using device::ContainerDeviceRequest;
using device::DeviceUsage;
using device::kNoMemPercentage;
using device::nvidia::kNoUseGpuTypeAnnotation;
using device::nvidia::kNoUseGpuUuidAnnotation;
using device::nvidia::kUseGpuTypeAnnotation;
using device::nvidia::kUseGpuUuidAnnotation;

// A DeviceUsage as HAMi's tests write them: Type "NVIDIA", no mode.
struct Dev {
  DeviceUsage u;
  explicit Dev(std::string id, int32_t count = 100, int32_t totalmem = 1280,
               int32_t totalcore = 100) {
    u.id = std::move(id);
    u.count = count;
    u.totalmem = totalmem;
    u.totalcore = totalcore;
    u.type = std::string(device::kNvidiaVendor);
    u.vendor = std::string(device::kNvidiaVendor);
    u.health = true;
  }
  Dev& index(uint64_t v) {
    u.index = v;
    return *this;
  }
  Dev& used(int64_t v) {
    u.used = v;
    return *this;
  }
  Dev& usedmem(int64_t v) {
    u.usedmem = v;
    return *this;
  }
  Dev& usedcores(int64_t v) {
    u.usedcores = v;
    return *this;
  }
  Dev& numa(int64_t v) {
    u.numa = v;
    return *this;
  }
  Dev& type(std::string v) {
    u.type = std::move(v);
    return *this;
  }
  Dev& unhealthy() {
    u.health = false;
    return *this;
  }
  operator DeviceUsage() const { return u; }  // NOLINT(google-explicit-constructor)
};

ContainerDeviceRequest req(int32_t nums, int32_t memreq, int32_t pct, int32_t cores,
                           std::string type = std::string(device::kNvidiaVendor)) {
  return ContainerDeviceRequest{nums, std::move(type), memreq, pct, cores};
}

// What HAMi's Fit is given besides the devices and the request.
struct Call {
  model::Pod pod = PodBuilder().build();
  std::string policy = "spread";
  bool numa_bind = false;
  std::optional<std::set<std::string, std::less<>>> cordoned;
  const device::QuotaView* quota = nullptr;
  const device::PodDevices* allocated = nullptr;
  size_t init_containers = 0;
  size_t container_index = 0;
};

// NvidiaGPUDevices.Fit called directly, as HAMi's unit tests do.
DirectFit nvidia_fit(std::vector<DeviceUsage> devices, const ContainerDeviceRequest& request,
                     const Call& call = {}) {
  device::nvidia::NvidiaBackend backend;
  std::vector<DeviceUsage*> ptrs;
  for (auto& d : devices) ptrs.push_back(&d);
  auto prepared = backend.prepare(call.pod);
  device::FitContext ctx;
  ctx.pod = &call.pod;
  ctx.prepared = prepared.get();
  ctx.gpu_policy = call.policy;
  ctx.numa_bind = call.numa_bind;
  ctx.cordoned = call.cordoned ? &*call.cordoned : nullptr;
  ctx.quota = call.quota;
  ctx.allocated = call.allocated;
  ctx.init_container_count = call.init_containers;
  ctx.container_index = call.container_index;
  DirectFit out;
  out.outcome = backend.fit(ptrs, request, ctx);
  out.reason = device::format_reasons(out.outcome.reasons, ptrs.size());
  return out;
}

model::Pod annotated(std::map<std::string, std::string> annotations, std::string ns = "default") {
  PodBuilder b("pod", std::move(ns));
  for (auto& [k, v] : annotations) b.annotate(k, v);
  return b.build();
}

// ---- Fit, table by table ------------------------------------------------------------------

// device_test.go TestDevices_Fit (every table entry; denominators = devices given to Fit).
TEST(HamiNvidiaFit, DevicesFitTable) {
  struct Case {
    const char* name;
    std::vector<DeviceUsage> devices;
    ContainerDeviceRequest request;
    std::map<std::string, std::string> annos;
    bool fits;
    std::vector<std::string> ids;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"fit success",
       {Dev("dev-0", 100, 128), Dev("dev-1", 100, 128)},
       req(1, 64, 0, 50),
       {},
       true,
       {"dev-1"},
       ""},
      {"fit fail: memory not enough",
       {Dev("dev-0", 100, 128)},
       req(1, 512, 0, 50),
       {},
       false,
       {},
       "1/1 CardInsufficientMemory"},
      {"fit fail: core not enough",
       {Dev("dev-0", 100, 1024).usedcores(100)},
       req(1, 512, 0, 50),
       {},
       false,
       {},
       "1/1 CardInsufficientCore"},
      {"fit fail: type mismatch",
       {Dev("dev-0", 100, 128)},
       req(1, 512, 0, 50, "OtherType"),
       {},
       false,
       {},
       "1/1 CardTypeMismatch"},
      {"fit fail: user assign use uuid mismatch",
       {Dev("dev-1")},
       req(2, 512, 0, 50),
       {{std::string(kUseGpuUuidAnnotation), "dev-0"}},
       false,
       {},
       "1/1 CardUuidMismatch"},
      {"fit fail: user assign no use uuid match",
       {Dev("dev-0")},
       req(2, 512, 0, 50),
       {{std::string(kNoUseGpuUuidAnnotation), "dev-0"}},
       false,
       {},
       "1/1 CardUuidMismatch"},
      {"fit fail: card overused",
       {Dev("dev-0").used(100)},
       req(1, 512, 0, 50),
       {},
       false,
       {},
       "1/1 CardTimeSlicingExhausted"},
      {"fit success: but core limit can't exceed 100",
       {Dev("dev-0")},
       req(1, 512, 0, 120),
       {},
       true,
       {"dev-0"},
       ""},
      {"fit fail:  card exclusively",
       {Dev("dev-0").used(20)},
       req(1, 512, 0, 100),
       {},
       false,
       {},
       "1/1 ExclusiveDeviceAllocateConflict"},
      {"fit fail:  CardComputeUnitsExhausted",
       {Dev("dev-0").used(20).usedcores(100)},
       req(1, 512, 0, 0),
       {},
       false,
       {},
       "1/1 CardComputeUnitsExhausted"},
      {"fit fail:  AllocatedCardsInsufficientRequest",
       {Dev("dev-0").used(20).usedcores(10)},
       req(2, 512, 0, 20),
       {},
       false,
       {},
       "1/1 AllocatedCardsInsufficientRequest"},
      {"fit fail: partial allocation AllocatedCardsInsufficientRequest for multiple cards",
       {Dev("dev-0"), Dev("dev-1").index(1)},
       req(3, 512, 0, 20),
       {},
       false,
       {},
       "2/2 AllocatedCardsInsufficientRequest"},
      {"fit success:  memory percentage",
       {Dev("dev-0").used(20).usedcores(10)},
       req(1, 0, 10, 20),
       {},
       true,
       {"dev-0"},
       ""},
      {"fit fail:  CardNotHealth",
       {Dev("dev-0").used(20).usedcores(10).unhealthy()},
       req(1, 0, 10, 20),
       {},
       false,
       {},
       "1/1 CardNotHealth"},
  };
  for (const Case& c : cases) {
    Call call;
    call.pod = annotated(c.annos);
    DirectFit f = nvidia_fit(c.devices, c.request, call);
    EXPECT_EQ(f.outcome.fits, c.fits) << c.name;
    EXPECT_EQ(f.reason, c.reason) << c.name;
    if (c.fits) {
      EXPECT_EQ(f.uuids(), c.ids) << c.name;
    }
  }
}

// device_test.go TestFit_DeviceCordon (its four sub-tests).
TEST(HamiNvidiaFit, DeviceCordon) {
  auto two = [] {
    return std::vector<DeviceUsage>{Dev("dev-0", 100, 128), Dev("dev-1", 100, 128)};
  };
  const ContainerDeviceRequest r = req(1, 64, kNoMemPercentage, 50);
  auto cordon = [](std::string_view annotation) {
    Call c;
    c.cordoned = device::parse_cordon(annotation);
    return c;
  };
  // "cordoned device is skipped, healthy sibling still fits"
  DirectFit f = nvidia_fit(two(), r, cordon("dev-1, "));
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.uuids(), std::vector<std::string>{"dev-0"});
  // "all devices cordoned fails with CardCordoned reason"
  f = nvidia_fit(two(), r, cordon("dev-0,dev-1"));
  EXPECT_FALSE(f.outcome.fits);
  EXPECT_EQ(f.reason, "2/2 CardCordoned");
  // "running pods on a cordoned device are unaffected"
  std::vector<DeviceUsage> busy = two();
  busy[1].used = 1;
  busy[1].usedcores = 50;
  busy[1].usedmem = 64;
  f = nvidia_fit(busy, r, cordon("dev-1"));
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.uuids(), std::vector<std::string>{"dev-0"});
  EXPECT_EQ(busy[1].used, 1);
  // "no annotation or no node info means nothing cordoned"
  EXPECT_TRUE(nvidia_fit(two(), r).outcome.fits);
  EXPECT_TRUE(nvidia_fit(two(), r, cordon("")).outcome.fits);
}

// device_test.go Test_checkType (use-gputype / nouse-gputype against the device type).
TEST(HamiNvidiaFit, CheckType) {
  struct Case {
    const char* name;
    std::map<std::string, std::string> annos;
    std::string type;
    bool want;
  };
  const std::vector<Case> cases = {
      {"use set GPUInUse don't set GPUNoUse annotation,device match",
       {{std::string(kUseGpuTypeAnnotation), "A10"}},
       "NVIDIA A100",
       true},
      {"use set GPUInUse set GPUNoUse annotation,device don't match",
       {{std::string(kUseGpuTypeAnnotation), "A10"},
        {std::string(kNoUseGpuTypeAnnotation), "A100"}},
       "NVIDIA A100",
       false},
      {"use set GPUInUse set GPUNoUse annotation,device match",
       {{std::string(kUseGpuTypeAnnotation), "A10"},
        {std::string(kNoUseGpuTypeAnnotation), "A100"}},
       "NVIDIA A10",
       true},
  };
  for (const Case& c : cases) {
    Call call;
    call.pod = annotated(c.annos);
    DirectFit f = nvidia_fit({Dev("dev-0").type(c.type)}, req(1, 100, kNoMemPercentage, 0), call);
    EXPECT_EQ(f.outcome.fits, c.want) << c.name;
    if (!c.want) {
      EXPECT_EQ(f.reason, "1/1 CardTypeMismatch") << c.name;
    }
  }
}

// device_test.go TestZeroMemoryPercentageIsAccountedAsWholeCard: a gpumem-percentage of 0 is
// "unset", so the request books the whole card.
TEST(HamiNvidiaFit, ZeroMemoryPercentageIsAccountedAsWholeCard) {
  device::nvidia::NvidiaBackend backend;
  ContainerDeviceRequest r =
      backend.request_for(container("test", {{kGpu, "1"}, {kGpuMemPct, "0"}}));
  auto card = [](int64_t usedmem) {
    return std::vector<DeviceUsage>{Dev("dev-0", 10, 11264).usedmem(usedmem)};
  };
  DirectFit f = nvidia_fit(card(0), r);
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.outcome.devices.at(0).usedmem, 11264);
  f = nvidia_fit(card(11260), r);
  EXPECT_FALSE(f.outcome.fits);
  EXPECT_NE(f.reason.find("CardInsufficientMemory"), std::string::npos) << f.reason;
}

// device_test.go TestComputeWorstSingleCard (gpu0 sums 300, gpu1 250, gpu2 350: the worst
// connected is gpu1) and TestComputeBestCombination ([gpu0,gpu2] = 200 is the best pair),
// through topology-aware Fit. The devices are given in reverse so that the scan (from the end)
// visits gpu0, gpu1, gpu2, the candidate order of HAMi's tests.
TEST(HamiNvidiaFit, TopologyWorstSingleCardAndBestCombination) {
  const std::map<std::string, int32_t, std::less<>> s0{{"gpu1", 100}, {"gpu2", 200}};
  const std::map<std::string, int32_t, std::less<>> s1{{"gpu0", 100}, {"gpu2", 150}};
  const std::map<std::string, int32_t, std::less<>> s2{{"gpu0", 200}, {"gpu1", 150}};
  auto devices = [&] {
    std::vector<DeviceUsage> d{Dev("gpu2", 10, 8192), Dev("gpu1", 10, 8192), Dev("gpu0", 10, 8192)};
    d[0].pair_scores = &s2;
    d[1].pair_scores = &s1;
    d[2].pair_scores = &s0;
    return d;
  };
  Call call;
  call.policy = "topology-aware";
  DirectFit one = nvidia_fit(devices(), req(1, 100, kNoMemPercentage, 0), call);
  ASSERT_TRUE(one.outcome.fits) << one.reason;
  EXPECT_EQ(one.uuids(), std::vector<std::string>{"gpu1"});
  DirectFit two = nvidia_fit(devices(), req(2, 100, kNoMemPercentage, 0), call);
  ASSERT_TRUE(two.outcome.fits) << two.reason;
  EXPECT_EQ(two.uuids(), (std::vector<std::string>{"gpu0", "gpu2"}));
}

// ---- Fit's checks one by one (fit_checks_test.go), each through the whole Fit on one card ---
//
// HAMi tests each check function alone; here the card goes through every check, so "passes"
// means the check's reason is not the one reported (a later check may still reject the card),
// and "fails" means Fit reports exactly that reason for the one card.

struct CheckCase {
  const char* name;
  DeviceUsage device;
  ContainerDeviceRequest request;
  bool pass;
};

void expect_check(const char* reason, const std::vector<CheckCase>& cases,
                  const model::Pod& pod = PodBuilder().build()) {
  for (const CheckCase& c : cases) {
    Call call;
    call.pod = pod;
    DirectFit f = nvidia_fit({c.device}, c.request, call);
    if (c.pass) {
      EXPECT_EQ(f.reason.find(reason), std::string::npos) << c.name << ": " << f.reason;
    } else {
      EXPECT_FALSE(f.outcome.fits) << c.name;
      EXPECT_EQ(f.reason, std::string("1/1 ") + reason) << c.name;
    }
  }
}

// fit_checks_test.go TestCheckCardHealth.
TEST(HamiNvidiaFitChecks, CardHealth) {
  expect_check("CardNotHealth",
               {{"healthy card passes", Dev("dev-0"), req(1, 0, 101, 0), true},
                {"unhealthy card fails", Dev("dev-0").unhealthy(), req(1, 0, 101, 0), false}});
}

// fit_checks_test.go TestCheckCardUUID.
TEST(HamiNvidiaFitChecks, CardUuid) {
  struct Case {
    const char* name;
    std::string id;
    std::map<std::string, std::string> annos;
    bool pass;
  };
  const std::string use(kUseGpuUuidAnnotation), nouse(kNoUseGpuUuidAnnotation);
  const std::vector<Case> cases = {
      {"no annotation constraint passes", "GPU-aaa", {}, true},
      {"use-gpuuuid matches passes", "GPU-aaa", {{use, "GPU-aaa,GPU-bbb"}}, true},
      {"use-gpuuuid mismatch fails", "GPU-ccc", {{use, "GPU-aaa,GPU-bbb"}}, false},
      {"nouse-gpuuuid match fails", "GPU-aaa", {{nouse, "GPU-aaa,GPU-bbb"}}, false},
      {"nouse-gpuuuid mismatch passes", "GPU-ccc", {{nouse, "GPU-aaa,GPU-bbb"}}, true},
      {"empty use-gpuuuid is no constraint", "GPU-aaa", {{use, ""}}, true},
  };
  for (const Case& c : cases) {
    expect_check("CardUuidMismatch", {{c.name, Dev(c.id), req(1, 0, 101, 0), c.pass}},
                 annotated(c.annos));
  }
}

// fit_checks_test.go TestCheckCardTimeSlicing (count, used).
TEST(HamiNvidiaFitChecks, CardTimeSlicing) {
  const ContainerDeviceRequest r = req(1, 0, 101, 0);
  expect_check("CardTimeSlicingExhausted",
               {{"plenty of slots", Dev("dev-0", 100), r, true},
                {"one slot remaining", Dev("dev-0", 10).used(9), r, true},
                {"exactly exhausted", Dev("dev-0", 10).used(10), r, false},
                {"over-committed", Dev("dev-0", 10).used(15), r, false}});
}

// fit_checks_test.go TestNormalizeCoresreq: the cores recorded on the chosen card.
TEST(HamiNvidiaFitChecks, NormalizeCoresreq) {
  for (auto [in, want] : std::vector<std::pair<int32_t, int32_t>>{
           {0, 0}, {50, 50}, {100, 100}, {101, 100}, {200, 100}}) {
    DirectFit f = nvidia_fit({Dev("dev-0", 10, 8192)}, req(1, 100, 101, in));
    ASSERT_TRUE(f.outcome.fits) << in << ": " << f.reason;
    EXPECT_EQ(f.outcome.devices.at(0).usedcores, want) << in;
  }
}

// fit_checks_test.go TestComputeMemreq: the memory recorded on the chosen card
// (memreq, percentage, card memory).
TEST(HamiNvidiaFitChecks, ComputeMemreq) {
  struct Case {
    const char* name;
    int32_t memreq, pct, totalmem, want;
  };
  for (const Case& c : std::vector<Case>{
           {"explicit memreq wins", 2048, 50, 8192, 2048},
           {"percentage applied when memreq zero", 0, 50, 8192, 4096},
           {"percentage 101 (unset) with memreq zero gives zero", 0, 101, 8192, 0},
           {"percentage 100 of 16GB", 0, 100, 16384, 16384},
           {"percentage 25 of 8GB", 0, 25, 8192, 2048},
       }) {
    DirectFit f = nvidia_fit({Dev("dev-0", 10, c.totalmem)}, req(1, c.memreq, c.pct, 10));
    ASSERT_TRUE(f.outcome.fits) << c.name << ": " << f.reason;
    EXPECT_EQ(f.outcome.devices.at(0).usedmem, c.want) << c.name;
  }
}

// fit_checks_test.go TestCheckCardMemory (total, used, request).
TEST(HamiNvidiaFitChecks, CardMemory) {
  auto c = [](const char* name, int32_t total, int64_t used, int32_t memreq, bool pass) {
    return CheckCase{name, Dev("dev-0", 10, total).usedmem(used), req(1, memreq, 101, 0), pass};
  };
  expect_check("CardInsufficientMemory",
               {c("plenty of memory", 8192, 0, 100, true), c("exact fit", 1024, 512, 512, true),
                c("one byte short", 1024, 512, 513, false), c("all used", 1024, 1024, 1, false),
                c("zero request fits", 1024, 1024, 0, true)});
}

// fit_checks_test.go TestCheckCardCore (totalcore, usedcores, request).
TEST(HamiNvidiaFitChecks, CardCore) {
  auto c = [](const char* name, int32_t total, int64_t used, int32_t cores, bool pass) {
    return CheckCase{name, Dev("dev-0", 10, 8192, total).usedcores(used), req(1, 0, 101, cores),
                     pass};
  };
  expect_check("CardInsufficientCore",
               {c("plenty of cores", 100, 0, 10, true), c("exact fit", 100, 50, 50, true),
                c("one short", 100, 50, 51, false), c("all used with request", 100, 100, 1, false),
                c("zero request with cores used", 100, 100, 0, true),
                c("zero totalcore with non-zero request fails", 0, 0, 50, false),
                c("zero totalcore with zero request passes", 0, 0, 0, true)});
}

// fit_checks_test.go TestCheckCardExclusive (totalcore, request, used).
TEST(HamiNvidiaFitChecks, CardExclusive) {
  auto c = [](const char* name, int32_t total, int32_t cores, int64_t used, bool pass) {
    return CheckCase{name, Dev("dev-0", 100, 8192, total).used(used), req(1, 0, 101, cores), pass};
  };
  expect_check("ExclusiveDeviceAllocateConflict",
               {c("non-exclusive passes even when shared", 100, 50, 5, true),
                c("exclusive request on free card passes", 100, 100, 0, true),
                c("exclusive request on shared card fails", 100, 100, 1, false),
                c("exclusive request on heavily shared card fails", 100, 100, 10, false),
                c("exclusive request on non-100 totalcore passes", 200, 100, 5, true),
                c("coresreq below 100 never exclusive", 100, 99, 10, true)});
}

// fit_checks_test.go TestCheckCardComputeExhausted (totalcore, usedcores, request).
TEST(HamiNvidiaFitChecks, CardComputeExhausted) {
  auto c = [](const char* name, int32_t total, int64_t used, int32_t cores, bool pass) {
    return CheckCase{name, Dev("dev-0", 10, 8192, total).usedcores(used), req(1, 0, 101, cores),
                     pass};
  };
  expect_check(
      "CardComputeUnitsExhausted",
      {c("cores available, request zero passes", 100, 50, 0, true),
       c("cores full, request zero fails", 100, 100, 0, false),
       c("cores full but request non-zero passes (handled by core check)", 100, 100, 10, true),
       c("zero totalcore passes", 0, 0, 0, true),
       c("cores partial, request zero passes", 100, 30, 0, true)});
}

// fit_checks_test.go TestCheckCardCustomRule_NonMigPasses: a non-MIG card has no custom rule.
TEST(HamiNvidiaFitChecks, CustomRuleNonMigPasses) {
  DeviceUsage d = Dev("dev-0", 10, 8192);
  d.mode = "hami-core";
  EXPECT_TRUE(nvidia_fit({d}, req(1, 100, 101, 0)).outcome.fits);
}

// ---- Quota (device_test.go TestFitQuota, fit_checks_test.go TestCheckCardQuota_*,
// fit_extra_test.go TestFit_ResourceQuotaNotFitReason) -------------------------------------

model::ResourceQuota gpumem_quota(std::string ns, std::string_view limit) {
  model::ResourceQuota q;
  q.metadata.name = "q";
  q.metadata.namespace_ = std::move(ns);
  q.spec.hard = resource_list({{"limits.nvidia.com/gpumem", limit}});
  return q;
}

device::PodDevices allocated_nvidia(std::vector<device::ContainerDevices> containers) {
  return device::PodDevices{{std::string(device::kNvidiaVendor), std::move(containers)}};
}

device::ContainerDevice charged(std::string uuid, int32_t mem, int32_t cores) {
  device::ContainerDevice d;
  d.uuid = std::move(uuid);
  d.type = std::string(device::kNvidiaVendor);
  d.usedmem = mem;
  d.usedcores = cores;
  return d;
}

// fit_checks_test.go TestCheckCardQuota_NoConstraint and TestCheckCardQuota_Exceeded;
// fit_extra_test.go TestFit_ResourceQuotaNotFitReason (limit 100 MiB, 500 asked).
TEST(HamiNvidiaQuota, CheckCardQuota) {
  auto registry = nvidia_registry();
  DeviceQuota quota(*registry);
  quota.add_quota(gpumem_quota("limited", "100"));
  Call call;
  call.quota = &quota;
  call.pod = annotated({}, "default");
  const std::vector<DeviceUsage> card{Dev("dev-0", 10, 8192)};
  EXPECT_TRUE(nvidia_fit(card, req(1, 100, 101, 10), call).outcome.fits);
  call.pod = annotated({}, "limited");
  DirectFit f = nvidia_fit(card, req(1, 500, 101, 10), call);
  EXPECT_FALSE(f.outcome.fits);
  EXPECT_EQ(f.reason, "1/1 ResourceQuotaNotFit");
}

// device_test.go TestFitQuota, limit limits.nvidia.com/gpumem = 2048 in "default". HAMi calls
// fitQuota with the container's devices chosen so far (tmpDevs) and the pod's earlier
// containers (allocated); here the same totals come out of Fit: a percentage request on cards
// of different memory gives different amounts per card, the first scanned card being "tmp".
// The entries "exceed quota" and "fit" (the same UUID twice in one container) cannot come out
// of a Fit and are left out.
TEST(HamiNvidiaQuota, FitQuotaTable) {
  auto registry = nvidia_registry();
  DeviceQuota quota(*registry);
  quota.add_quota(gpumem_quota("default", "2048"));
  auto fits = [&](std::vector<DeviceUsage> cards, ContainerDeviceRequest r,
                  const device::PodDevices* allocated, size_t inits, size_t index) {
    Call call;
    call.quota = &quota;
    call.allocated = allocated;
    call.init_containers = inits;
    call.container_index = index;
    DirectFit f = nvidia_fit(std::move(cards), r, call);
    if (!f.outcome.fits) {
      EXPECT_NE(f.reason.find("ResourceQuotaNotFit"), std::string::npos);
    }
    return f.outcome.fits;
  };
  // "no tmp and no allocated" / "request exceed quota"
  EXPECT_TRUE(fits({Dev("gpu-0", 10, 8192)}, req(1, 100, 101, 1), nullptr, 0, 0));
  EXPECT_FALSE(fits({Dev("gpu-0", 10, 8192)}, req(1, 3000, 101, 1), nullptr, 0, 0));
  // "tmpdev": gpu-1 taken with 1024 (50 % of 2048), then gpu-0 with 100 (50 % of 200).
  EXPECT_TRUE(
      fits({Dev("gpu-0", 10, 200), Dev("gpu-1", 10, 2048)}, req(2, 0, 50, 1), nullptr, 0, 0));
  // "tmpdev exceed quota": then gpu-0 with 2000 (50 % of 4000).
  EXPECT_FALSE(
      fits({Dev("gpu-0", 10, 4000), Dev("gpu-1", 10, 2048)}, req(2, 0, 50, 1), nullptr, 0, 0));
  // "allocated devs" / "allocated devs exceed quota": container 0 holds gpu-0 with 1024.
  const device::PodDevices first = allocated_nvidia({{charged("gpu-0", 1024, 2)}});
  EXPECT_TRUE(fits({Dev("gpu-1", 10, 8192)}, req(1, 100, 101, 1), &first, 0, 1));
  EXPECT_FALSE(fits({Dev("gpu-1", 10, 8192)}, req(1, 2000, 101, 1), &first, 0, 1));
  // "fitting second init container maxes against first": 2 init containers, init 0 holds
  // gpu-0 with 1500, init 1 asks 1500 on gpu-0: peak 1500, not 3000.
  const device::PodDevices init0 = allocated_nvidia({{charged("gpu-0", 1500, 2)}});
  EXPECT_TRUE(fits({Dev("gpu-0", 10, 8192)}, req(1, 1500, 101, 1), &init0, 2, 1));
  // "sequential init containers counted as peak not sum": both init containers hold gpu-0
  // with 1024; the app container asks 500 on gpu-0.
  const device::PodDevices inits =
      allocated_nvidia({{charged("gpu-0", 1024, 2)}, {charged("gpu-0", 1024, 2)}});
  EXPECT_TRUE(fits({Dev("gpu-0", 10, 8192)}, req(1, 500, 101, 1), &inits, 2, 2));
  // "collapsed init peak still enforces quota": the init container held gpu-0 with 2100.
  const device::PodDevices big_init = allocated_nvidia({{charged("gpu-0", 2100, 2)}});
  EXPECT_FALSE(fits({Dev("gpu-1", 10, 8192)}, req(1, 100, 101, 1), &big_init, 1, 1));
}

// ---- fit_extra_test.go --------------------------------------------------------------------

// TestFit_NumaNotFitReason: dev-2 and dev-1 (NUMA 0) are taken, then dev-0 (NUMA 1) restarts
// the group. HAMi's stored test expects NumaNotFit 1 (the size of the per-vendor map, before
// HAMi #2238); v2.10.0 counts the discarded cards of this vendor (hami-device-model.md §3.2
// step 4, §3.3 "NumaNotFit counts GPUs discarded"): 2.
TEST(HamiNvidiaFitExtra, NumaNotFitReason) {
  Call call;
  call.numa_bind = true;
  DirectFit f = nvidia_fit({Dev("dev-0", 10, 8192).numa(1), Dev("dev-1", 10, 8192).index(1),
                            Dev("dev-2", 10, 8192).index(2)},
                           req(3, 100, 101, 10), call);
  EXPECT_FALSE(f.outcome.fits);
  EXPECT_EQ(device::parse_reasons(f.reason).at("NumaNotFit"), 2);
  EXPECT_EQ(f.reason, "1/3 AllocatedCardsInsufficientRequest, 2/3 NumaNotFit");
}

// TestFit_MultiCardFailureReasonCount: three cards short of memory.
TEST(HamiNvidiaFitExtra, MultiCardFailureReasonCount) {
  std::vector<DeviceUsage> cards;
  for (const char* id : {"dev-0", "dev-1", "dev-2"}) cards.push_back(Dev(id, 10, 100).usedmem(80));
  DirectFit f = nvidia_fit(cards, req(1, 50, 101, 10));
  EXPECT_FALSE(f.outcome.fits);
  EXPECT_EQ(f.reason, "3/3 CardInsufficientMemory");
}

// TestFit_TopologyModeWithPartialSelection: 4 cards wanted, 3 healthy, topology-aware. The
// partial selection (3 cards) is returned. HAMi's stored test expects
// AllocatedCardsInsufficientRequest 1 (the per-vendor map size, before HAMi #2238); v2.10.0
// reports the number selected (hami-device-model.md §3.2 "set AllocatedCardsInsufficientRequest
// = len(selected)", §3.8 "fewer -> failure with AllocatedCardsInsufficientRequest = count"): 3.
TEST(HamiNvidiaFitExtra, TopologyModeWithPartialSelection) {
  Call call;
  call.policy = "topology-aware";
  DirectFit f =
      nvidia_fit({Dev("dev-0", 10, 8192), Dev("dev-1", 10, 8192).index(1),
                  Dev("dev-2", 10, 8192).index(2), Dev("dev-3", 10, 8192).index(3).unhealthy()},
                 req(4, 100, 101, 10), call);
  EXPECT_FALSE(f.outcome.fits);
  EXPECT_EQ(f.outcome.devices.size(), 3u);
  EXPECT_EQ(f.reason, "1/4 CardNotHealth, 3/4 AllocatedCardsInsufficientRequest");
}

// TestFit_EmptyDeviceList: no devices, no reasons, nothing chosen.
TEST(HamiNvidiaFitExtra, EmptyDeviceList) {
  DirectFit f = nvidia_fit({}, req(1, 100, 101, 10));
  EXPECT_FALSE(f.outcome.fits);
  EXPECT_TRUE(f.outcome.devices.empty());
  EXPECT_EQ(f.reason, "");
}

// TestFit_ZeroNumRequest: Nums 0 is satisfied at once.
TEST(HamiNvidiaFitExtra, ZeroNumRequest) {
  EXPECT_TRUE(nvidia_fit({Dev("dev-0", 10, 8192)}, req(0, 100, 101, 10)).outcome.fits);
}

// TestFit_HealthPrecedenceOverTypeMismatch: an unhealthy card of the wrong type is counted as
// CardNotHealth only.
TEST(HamiNvidiaFitExtra, HealthPrecedenceOverTypeMismatch) {
  Call call;
  call.pod = annotated({{std::string(kUseGpuTypeAnnotation), "NonMatchingModel"}});
  DirectFit f = nvidia_fit({Dev("dev-0", 10, 8192).type("WrongType").unhealthy()},
                           req(1, 100, 101, 10), call);
  EXPECT_FALSE(f.outcome.fits);
  EXPECT_EQ(f.reason, "1/1 CardNotHealth");
}

// ---- Requests from container resources (device_test.go) ------------------------------------

device::nvidia::NvidiaConfig config_with(int32_t memory_factor = 1, int32_t default_memory = 0) {
  device::nvidia::NvidiaConfig c;
  c.memory_factor = memory_factor;
  c.default_memory = default_memory;
  return c;
}

ContainerDeviceRequest want(int32_t nums, int32_t mem, int32_t pct, int32_t cores) {
  return req(nums, mem, pct, cores);
}

// device_test.go TestGenerateResourceRequests, the entries whose expectation v2.10.0 shares.
// Left out (a later HAMi carries out-of-range percentages to the webhook, which rejects them;
// v2.10.0 clamps them to 100 and ignores values <= 0, hami-device-model.md §2.3 step 3,
// tested in nvidia_request_test.cpp): "memory percentage above 100" (150), "beyond int32
// range" (2^32+50), "equal to sentinel 101", "negative memory percentage" (-1).
TEST(HamiNvidiaRequests, GenerateResourceRequests) {
  device::nvidia::NvidiaBackend backend(config_with());
  struct Case {
    const char* name;
    model::Container ctr;
    ContainerDeviceRequest want;
  };
  const std::vector<Case> cases = {
      {"gpu count only - defaults to 100% memory", container("c", {{kGpu, "1"}}),
       want(1, 0, 100, 0)},
      {"gpu count + explicit memory", container("c", {{kGpu, "2"}, {kGpuMem, "4096"}}),
       want(2, 4096, 101, 0)},
      {"gpu count + memory percentage", container("c", {{kGpu, "1"}, {kGpuMemPct, "50"}}),
       want(1, 0, 50, 0)},
      {"gpu count + explicit cores", container("c", {{kGpu, "1"}, {kGpuCores, "50"}}),
       want(1, 0, 100, 50)},
      {"no gpu resource - returns empty request", container("c", {}), ContainerDeviceRequest{}},
      {"gpu in Requests (not Limits) - falls back to Requests", container("c", {}, {{kGpu, "1"}}),
       want(1, 0, 100, 0)},
      {"gpu count + memory percentage of 0 - treated as unset",
       container("c", {{kGpu, "1"}, {kGpuMemPct, "0"}}), want(1, 0, 100, 0)},
      {"memory percentage of 0 in Requests - treated as unset",
       container("c", {}, {{kGpu, "1"}, {kGpuMemPct, "0"}}), want(1, 0, 100, 0)},
      {"memory percentage of 0 + explicit memory - explicit memory wins",
       container("c", {{kGpu, "1"}, {kGpuMem, "2000"}, {kGpuMemPct, "0"}}), want(1, 2000, 101, 0)},
      {"byte-scale memory quantity that overflows int32 is rejected",
       container("c", {{kGpu, "1"}, {kGpuMem, "16Gi"}}), ContainerDeviceRequest{}},
      {"decimal-form memory request is rejected, not treated as zero",
       container("c", {{kGpu, "1"}, {kGpuMem, "16.0Gi"}}), ContainerDeviceRequest{}},
  };
  for (const Case& c : cases) EXPECT_EQ(backend.request_for(c.ctr), c.want) << c.name;
}

// device_test.go TestGenerateResourceRequests_MemoryFactor: 1024 x 2 = 2048; 1Gi x 2 exceeds
// int32, so the request is dropped.
TEST(HamiNvidiaRequests, MemoryFactor) {
  device::nvidia::NvidiaBackend backend(config_with(2));
  EXPECT_EQ(backend.request_for(container("c", {{kGpu, "1"}, {kGpuMem, "1024"}})).memreq, 2048);
  EXPECT_EQ(backend.request_for(container("c", {{kGpu, "1"}, {kGpuMem, "1Gi"}})),
            ContainerDeviceRequest{});
}

// device_test.go TestGenerateResourceRequests_DefaultMemory: defaultMemory 512 applies when no
// memory is asked, when the percentage is 0, and when gpumem is 0 (all the same request).
TEST(HamiNvidiaRequests, DefaultMemory) {
  device::nvidia::NvidiaBackend backend(config_with(1, 512));
  const ContainerDeviceRequest only = backend.request_for(container("c", {{kGpu, "1"}}));
  EXPECT_EQ(only.memreq, 512);
  EXPECT_EQ(only.mem_percentagereq, 101);
  const ContainerDeviceRequest zero_pct =
      backend.request_for(container("c", {{kGpu, "1"}, {kGpuMemPct, "0"}}));
  EXPECT_EQ(zero_pct.memreq, 512);
  EXPECT_EQ(zero_pct.mem_percentagereq, 101);
  EXPECT_EQ(backend.request_for(container("c", {{kGpu, "1"}, {kGpuMem, "0"}})), zero_pct);
}

// ---- Node registration, usage and pod annotations (device_test.go) ------------------------

// device_test.go Test_GetNodeDevices.
TEST(HamiNvidiaNode, GetNodeDevices) {
  device::nvidia::NvidiaBackend backend;
  model::Node node = NodeBuilder("node-01")
                         .annotate(std::string(device::kNvidiaRegisterAnnotation),
                                   R"([{"id":"GPU-0","count":5,"devmem":8192,"devcore":100,)"
                                   R"("type":"NVIDIA-Tesla P4","numa":0,"health":true,"index":0}])")
                         .build();
  device::NodeDevices got = backend.node_devices(node);
  ASSERT_EQ(got.state, device::NodeDevices::State::kOk) << got.message;
  ASSERT_EQ(got.devices.size(), 1u);
  const device::DeviceInfo& d = got.devices[0];
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.id, "GPU-0");
  EXPECT_EQ(d.devcore, 100);
  EXPECT_TRUE(d.health);
  EXPECT_EQ(d.numa, 0);
  EXPECT_EQ(d.type, "NVIDIA-Tesla P4");
  EXPECT_EQ(d.count, 5);
  EXPECT_EQ(d.device_vendor, "NVIDIA");
  // "no gpu devices"
  got = backend.node_devices(NodeBuilder("node-02")
                                 .annotate(std::string(device::kNvidiaRegisterAnnotation), "[]")
                                 .build());
  EXPECT_NE(got.state, device::NodeDevices::State::kOk);
  EXPECT_TRUE(got.devices.empty());
  EXPECT_EQ(got.message, "no gpu found on node");
  // "no annotation"
  got = backend.node_devices(NodeBuilder("node-03").build());
  EXPECT_NE(got.state, device::NodeDevices::State::kOk);
  EXPECT_EQ(got.message, "annos not found hami.io/node-nvidia-register");
}

// device_test.go TestDevices_AddResourceUsage.
TEST(HamiNvidiaUsage, AddResourceUsage) {
  device::nvidia::NvidiaBackend backend;
  DeviceUsage usage;
  usage.id = "dev-0";
  usage.usedcores = 15;
  usage.usedmem = 2000;
  device::ContainerDevice ctr = charged("dev-0", 1024, 50);
  ASSERT_TRUE(backend.add_usage(usage, ctr));
  EXPECT_EQ(usage.used, 1);
  EXPECT_EQ(usage.usedcores, 65);
  EXPECT_EQ(usage.usedmem, 3024);
}

// device_test.go Test_PatchAnnotations "exist device": both device keys carry the encoding.
TEST(HamiNvidiaAnnotations, PatchAnnotations) {
  device::nvidia::NvidiaBackend backend;
  device::ContainerDevice d = charged("nvidia-device-0", 2000, 1);
  std::map<std::string, std::string> annotations;
  const model::Pod pod = PodBuilder().build();
  device::AnnotationContext ctx;
  ctx.pod = &pod;
  backend.annotate_allocation(device::PodSingleDevice{{d}}, ctx, annotations);
  EXPECT_EQ(annotations,
            (std::map<std::string, std::string>{
                {"hami.io/vgpu-devices-to-allocate", "nvidia-device-0,NVIDIA,2000,1:;"},
                {"hami.io/vgpu-devices-allocated", "nvidia-device-0,NVIDIA,2000,1:;"},
            }));
}

// ---- More of device_test.go: NUMA, topology, percentages, type checks -----------------------

// device_test.go TestFit_NumaSwitching: scanned dev-2 (NUMA 0), dev-1, dev-0 (NUMA 1); dev-2 is
// dropped at the switch and the pair comes from NUMA 1, in scan order.
TEST(HamiNvidiaFit, NumaSwitching) {
  Call call;
  call.numa_bind = true;
  DirectFit f = nvidia_fit({Dev("dev-0", 10, 8192).numa(1), Dev("dev-1", 10, 8192).index(1).numa(1),
                            Dev("dev-2", 10, 8192).index(2)},
                           req(2, 100, 101, 10), call);
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.uuids(), (std::vector<std::string>{"dev-1", "dev-0"}));
}

// Three cards with pair scores, in registration order (device_test.go's topology tests).
struct ScoredCards {
  std::vector<std::map<std::string, int32_t, std::less<>>> scores;
  std::vector<DeviceUsage> cards() const {
    std::vector<DeviceUsage> out;
    for (size_t i = 0; i < scores.size(); ++i) {
      out.push_back(Dev("dev-" + std::to_string(i), 10, 8192).index(i));
      out.back().pair_scores = &scores[i];
    }
    return out;
  }
};

std::set<std::string> uuid_set(const DirectFit& f) {
  auto ids = f.uuids();
  return {ids.begin(), ids.end()};
}

// device_test.go TestFit_TopologyExactMatch, TestFit_TopologyWorstSingleCard,
// TestFit_TopologyBestCombination, TestFit_TopologyBestCombinationZeroScores and
// TestFit_TopologyNegativeScores.
TEST(HamiNvidiaFit, TopologyAware) {
  Call call;
  call.policy = "topology-aware";
  const ContainerDeviceRequest one = req(1, 100, 101, 10), two = req(2, 100, 101, 10);
  // Exact match: two cards, two wanted, no scores.
  DirectFit f = nvidia_fit({Dev("dev-0", 10, 8192), Dev("dev-1", 10, 8192).index(1)}, two, call);
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.outcome.devices.size(), 2u);
  // dev-0 sums 300, dev-1 250, dev-2 350.
  const ScoredCards scored{{{{"dev-1", 100}, {"dev-2", 200}},
                            {{"dev-0", 100}, {"dev-2", 150}},
                            {{"dev-0", 200}, {"dev-1", 150}}}};
  f = nvidia_fit(scored.cards(), one, call);
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.uuids(), std::vector<std::string>{"dev-1"});
  f = nvidia_fit(scored.cards(), two, call);
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(uuid_set(f), (std::set<std::string>{"dev-0", "dev-2"}));
  // All scores zero: any two cards.
  const ScoredCards zero{
      {{{"dev-1", 0}, {"dev-2", 0}}, {{"dev-0", 0}, {"dev-2", 0}}, {{"dev-0", 0}, {"dev-1", 0}}}};
  f = nvidia_fit(zero.cards(), two, call);
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.outcome.devices.size(), 2u);
  // Negative scores: dev-0 sums -8 (the worst), the best pair is dev-1/dev-2 (-1).
  const ScoredCards negative{{{{"dev-1", -5}, {"dev-2", -3}},
                              {{"dev-0", -5}, {"dev-2", -1}},
                              {{"dev-0", -3}, {"dev-1", -1}}}};
  f = nvidia_fit(negative.cards(), one, call);
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.uuids(), std::vector<std::string>{"dev-0"});
  f = nvidia_fit(negative.cards(), two, call);
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(uuid_set(f), (std::set<std::string>{"dev-1", "dev-2"}));
}

// device_test.go TestFit_MemoryPercentageValidation, the entries v2.10.0 shares: 50 % of 8192
// books 4096, 100 % books 8192, 0 % means unset (100 %). Left out: 101, 150, -1, 50m and 99.1,
// which a later HAMi carries to Fit so that the card is rejected; v2.10.0 clamps to 100 and
// ignores values <= 0 or fractional (hami-device-model.md §2.3 step 3; nvidia_request_test.cpp).
TEST(HamiNvidiaFit, MemoryPercentageValidation) {
  device::nvidia::NvidiaBackend backend;
  for (auto [pct, want] :
       std::vector<std::pair<const char*, int32_t>>{{"50", 4096}, {"100", 8192}, {"0", 8192}}) {
    ContainerDeviceRequest r =
        backend.request_for(container("test", {{kGpu, "1"}, {kGpuMemPct, pct}}));
    EXPECT_EQ(r.nums, 1);
    DirectFit f = nvidia_fit({Dev("GPU-0", 10, 8192)}, r);
    ASSERT_TRUE(f.outcome.fits) << pct << ": " << f.reason;
    EXPECT_EQ(f.outcome.devices.at(0).usedmem, want) << pct;
  }
}

// device_test.go TestCheckGPUtype_NoUse, TestCheckGPUtype_InUseMismatch and
// TestCheckGPUtype_EmptyAnnotation (a blank use or nouse list is no constraint).
TEST(HamiNvidiaFit, CheckGpuType) {
  auto fits = [](std::map<std::string, std::string> annos, std::string type) {
    Call call;
    call.pod = annotated(std::move(annos));
    return nvidia_fit({Dev("dev-0").type(std::move(type))}, req(1, 100, 101, 0), call).outcome.fits;
  };
  const std::string use(kUseGpuTypeAnnotation), nouse(kNoUseGpuTypeAnnotation);
  EXPECT_FALSE(fits({{nouse, "A100"}}, "NVIDIA-A100"));
  EXPECT_TRUE(fits({{nouse, "A100"}}, "NVIDIA-V100"));
  EXPECT_FALSE(fits({{use, "A100"}}, "NVIDIA-V100"));
  for (const char* blank : {"", "   "}) {
    EXPECT_TRUE(fits({{use, blank}}, "NVIDIA-A100")) << "use '" << blank << "'";
    EXPECT_TRUE(fits({{nouse, blank}}, "NVIDIA-A100")) << "nouse '" << blank << "'";
  }
}

// ---- Node registration (device_test.go) -----------------------------------------------------

model::Node registered(std::string devices, std::optional<std::string> scores = std::nullopt) {
  NodeBuilder b("node");
  b.annotate(std::string(device::kNvidiaRegisterAnnotation), std::move(devices));
  if (scores) b.annotate(std::string(device::kNvidiaScoreAnnotation), std::move(*scores));
  return b.build();
}

// device_test.go TestGetNodeDevices_InvalidJSON, TestGetNodeDevices_MigProfilesFromNode,
// TestGetNodeDevices_PairScores and TestGetNodeDevices_InvalidPairScores.
TEST(HamiNvidiaNode, GetNodeDevicesVariants) {
  device::nvidia::NvidiaBackend backend;
  EXPECT_NE(backend.node_devices(registered("not-valid-json")).state,
            device::NodeDevices::State::kOk);

  device::NodeDevices mig = backend.node_devices(registered(
      R"([{"id":"GPU-0","count":7,"devmem":40960,"devcore":100,"type":"NVIDIA-A100-SXM4-40GB",)"
      R"("numa":0,"health":true,"mode":"mig","migProfiles":[{"name":"1g.5gb","memoryMB":5120,)"
      R"("core":14,"sliceCount":1,"instanceCount":7,"multiprocessorCount":14,)"
      R"("placements":[{"start":6,"size":1}]}]}])"));
  ASSERT_EQ(mig.state, device::NodeDevices::State::kOk) << mig.message;
  ASSERT_EQ(mig.devices.size(), 1u);
  ASSERT_EQ(mig.devices[0].mig_profiles.size(), 1u);
  EXPECT_EQ(mig.devices[0].mig_profiles[0].name, "1g.5gb");
  EXPECT_EQ(mig.devices[0].mig_profiles[0].placements, (std::vector<device::MigPlacement>{{6, 1}}));

  const std::string two =
      R"([{"id":"GPU-0","count":1,"devmem":8192,"devcore":100,"type":"NVIDIA-V100","health":true},)"
      R"({"id":"GPU-1","count":1,"devmem":8192,"devcore":100,"type":"NVIDIA-V100","health":true}])";
  device::NodeDevices scored = backend.node_devices(registered(
      two, R"([{"uuid":"GPU-0","score":{"GPU-1":100}},{"uuid":"GPU-1","score":{"GPU-0":100}}])"));
  ASSERT_EQ(scored.state, device::NodeDevices::State::kOk) << scored.message;
  ASSERT_EQ(scored.devices.size(), 2u);
  EXPECT_EQ(scored.devices[0].pair_scores.at("GPU-1"), 100);

  EXPECT_NE(backend.node_devices(registered(two, "not-valid-json")).state,
            device::NodeDevices::State::kOk);
}

// ---- MIG (mig_capability_test.go, mig_preference_test.go) ---------------------------------

// The A100-40GB profiles of HAMi's MIG tests (a100_mig_profiles), optionally with 4g.20gb
// (one placement at 0, 52 cores) as in mig_preference_test.go.
std::vector<device::MigProfile> a100_profiles(bool with_4g = false) {
  auto profiles = a100_mig_profiles();
  if (with_4g) {
    device::MigProfile p;
    p.name = "4g.20gb";
    p.memory_mb = 20480;
    p.core = 52;
    p.slice_count = 4;
    p.placements = {{0, 4}};
    p.placements_null = false;
    profiles.push_back(p);
  }
  return profiles;
}

DeviceUsage mig_card(const std::vector<device::MigProfile>& profiles) {
  DeviceUsage d = Dev("GPU-a", 7, 40960);
  d.mode = "mig";
  d.mig_profiles = &profiles;
  return d;
}

// mig_capability_test.go TestAddResourceUsageUsesReportedProfileAndPlacement: 10000 MiB on an
// empty A100 commits 2g.10gb at {0,2} with its 10240 MiB and 28 cores; the UUID stays physical.
TEST(HamiNvidiaMig, AddResourceUsageUsesReportedProfileAndPlacement) {
  device::nvidia::NvidiaBackend backend;
  const auto profiles = a100_profiles();
  DeviceUsage usage = mig_card(profiles);
  device::ContainerDevice ctr = charged("GPU-a", 10000, 0);
  ASSERT_TRUE(backend.add_usage(usage, ctr));
  EXPECT_EQ(ctr.uuid, "GPU-a");
  EXPECT_EQ(ctr.usedmem, 10240);
  EXPECT_EQ(ctr.usedcores, 28);
  EXPECT_EQ(ctr.mig_profile, std::optional<std::string>("2g.10gb"));
  EXPECT_EQ(ctr.mig_placement, std::optional<device::MigPlacement>(device::MigPlacement{0, 2}));
}

// mig_capability_test.go TestCustomFilterUsesReportedPlacementCapacity: with the three 2g
// placements taken, a fourth 2g (10000 MiB) does not fit, a 1g (5000 MiB) does (slice 6).
TEST(HamiNvidiaMig, CustomFilterUsesReportedPlacementCapacity) {
  const auto profiles = a100_profiles();
  auto card = [&] {
    DeviceUsage d = mig_card(profiles);
    for (uint32_t start : {0u, 2u, 4u}) d.mig_in_use.push_back({"2g.10gb", {start, 2}, false});
    d.used = 3;
    d.usedmem = 3 * 10240;
    d.usedcores = 3 * 28;
    return d;
  };
  DirectFit f = nvidia_fit({card()}, req(1, 10000, 101, 0));
  EXPECT_FALSE(f.outcome.fits);
  EXPECT_EQ(f.reason, "1/1 CardMigTopologyInfeasible");
  EXPECT_TRUE(nvidia_fit({card()}, req(1, 5000, 101, 0)).outcome.fits);
}

// mig_preference_test.go, the cases without a preference (the nvidia.com/mig-profile-preference
// annotation came after v2.10.0, hami-device-model.md §3.7 has none; its other cases are left
// out): TestSelectMigCandidateHonorsPreference and TestFitHonorsMigProfilePreference "no
// preference keeps the smallest profile" (20000 MiB -> 3g.20gb, not the 4g.20gb of equal
// memory), and TestAddResourceUsageFallsBackToPreferredProfile "A nil pod keeps the default
// profile".
TEST(HamiNvidiaMig, NoPreferenceKeepsSmallestProfile) {
  device::nvidia::NvidiaBackend backend;
  const auto profiles = a100_profiles(true);
  DirectFit f = nvidia_fit({mig_card(profiles)}, req(1, 20000, 101, 0));
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  DeviceUsage usage = mig_card(profiles);
  device::ContainerDevice ctr = f.outcome.devices.at(0);
  ASSERT_TRUE(backend.add_usage(usage, ctr));
  EXPECT_EQ(ctr.mig_profile, std::optional<std::string>("3g.20gb"));
  EXPECT_EQ(ctr.mig_placement, std::optional<device::MigPlacement>(device::MigPlacement{4, 4}));
}

// mig_preference_test.go TestPlanMigContainerNeverRejectsForAPreference, its default layout:
// 20000 + 10000 + 10000 MiB fill an empty A100 as 3g.20gb + 2g.10gb + 2g.10gb; three 20000 MiB
// instances never fit.
TEST(HamiNvidiaMig, DefaultLayoutOfSeveralInstances) {
  device::nvidia::NvidiaBackend backend;
  const auto profiles = a100_profiles(true);
  DeviceUsage usage = mig_card(profiles);
  std::vector<std::string> names;
  for (int32_t mem : {20000, 10000, 10000}) {
    device::ContainerDevice ctr = charged("GPU-a", mem, 0);
    ASSERT_TRUE(backend.add_usage(usage, ctr)) << mem;
    names.push_back(ctr.mig_profile.value_or(""));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"3g.20gb", "2g.10gb", "2g.10gb"}));
  DeviceUsage fresh = mig_card(profiles);
  int committed = 0;
  for (int i = 0; i < 3; ++i) {
    device::ContainerDevice ctr = charged("GPU-a", 20000, 0);
    if (backend.add_usage(fresh, ctr)) ++committed;
  }
  EXPECT_EQ(committed, 2);
}

// ---- Init containers (pkg/device/initContainer_test.go, initcontainer_usage_test.go) -------

using Charges = std::vector<device::DeviceCharge>;

std::map<std::string, Charges, std::less<>> collapse(
    std::map<std::string, device::PodSingleDevice> raw, size_t inits) {
  device::PodDevices pd;
  for (auto& [vendor, list] : raw) pd[vendor] = std::move(list);
  return device::collapse_init_container_usage(pd, inits);
}

device::ContainerDevice on(std::string uuid, int32_t mem, int32_t cores,
                           std::string type = "NVIDIA") {
  device::ContainerDevice d = charged(std::move(uuid), mem, cores);
  d.type = std::move(type);
  return d;
}

void expect_charges(const Charges& got, const Charges& want, const char* name) {
  ASSERT_EQ(got.size(), want.size()) << name;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].uuid, want[i].uuid) << name;
    EXPECT_EQ(got[i].usedmem, want[i].usedmem) << name << " " << want[i].uuid;
    EXPECT_EQ(got[i].usedcores, want[i].usedcores) << name << " " << want[i].uuid;
    EXPECT_EQ(got[i].slots, want[i].slots) << name << " " << want[i].uuid;
  }
}

// initContainer_test.go TestCollapseInitContainerUsage_* (the cases without sidecars: native
// sidecar accounting came after v2.10.0, hami-device-model.md §4.4 has init = max, app = sum).
TEST(HamiInitContainers, CollapseInitContainerUsage) {
  // NoInitContainers: two app containers on gpu0 add up, two slots.
  expect_charges(
      collapse({{"NVIDIA", {{on("gpu0", 100, 10)}, {on("gpu0", 200, 20)}}}}, 0).at("NVIDIA"),
      {{"gpu0", 300, 30, 2}}, "NoInitContainers");
  // OnlyInitContainers: the peak, one slot.
  expect_charges(
      collapse({{"NVIDIA", {{on("gpu0", 100, 10)}, {on("gpu0", 200, 30)}}}}, 2).at("NVIDIA"),
      {{"gpu0", 200, 30, 1}}, "OnlyInitContainers");
  // MixedInitAndApp / InitLargerThanApp: the init container's larger usage wins.
  expect_charges(
      collapse({{"NVIDIA", {{on("gpu0", 500, 50)}, {on("gpu0", 100, 10)}}}}, 1).at("NVIDIA"),
      {{"gpu0", 500, 50, 1}}, "MixedInitAndApp");
  expect_charges(
      collapse({{"NVIDIA", {{on("gpu0", 1000, 80)}, {on("gpu0", 200, 20)}}}}, 1).at("NVIDIA"),
      {{"gpu0", 1000, 80, 1}}, "InitLargerThanApp");
  // AppLargerThanInit: the apps' sum wins, two slots.
  expect_charges(
      collapse({{"NVIDIA", {{on("gpu0", 100, 10)}, {on("gpu0", 200, 20)}, {on("gpu0", 300, 30)}}}},
               1)
          .at("NVIDIA"),
      {{"gpu0", 500, 50, 2}}, "AppLargerThanInit");
  // MultipleInitContainersPeak.
  expect_charges(collapse({{"NVIDIA",
                            {{on("gpu0", 100, 10)},
                             {on("gpu0", 300, 30)},
                             {on("gpu0", 200, 20)},
                             {on("gpu0", 50, 5)}}}},
                          3)
                     .at("NVIDIA"),
                 {{"gpu0", 300, 30, 1}}, "MultipleInitContainersPeak");
  // MultipleDeviceTypes: each vendor on its own.
  auto both =
      collapse({{"NVIDIA", {{on("gpu0", 500, 50)}, {on("gpu0", 100, 10)}}},
                {"kunlun", {{on("xpu0", 200, 20, "kunlun")}, {on("xpu0", 300, 30, "kunlun")}}}},
               1);
  expect_charges(both.at("NVIDIA"), {{"gpu0", 500, 50, 1}}, "MultipleDeviceTypes NVIDIA");
  expect_charges(both.at("kunlun"), {{"xpu0", 300, 30, 1}}, "MultipleDeviceTypes kunlun");
  // MultipleDevicesSameContainer: per UUID, sorted by UUID.
  expect_charges(collapse({{"NVIDIA",
                            {{on("gpu0", 200, 20), on("gpu1", 300, 30)},
                             {on("gpu0", 100, 10), on("gpu1", 150, 15)}}}},
                          1)
                     .at("NVIDIA"),
                 {{"gpu0", 200, 20, 1}, {"gpu1", 300, 30, 1}}, "MultipleDevicesSameContainer");
  // EmptyContainerDeviceList: no devices at all.
  auto empty = collapse({{"NVIDIA", {{}, {}, {}, {}}}}, 2);
  EXPECT_TRUE(empty.count("NVIDIA") == 0 || empty.at("NVIDIA").empty());
  // MultiAppSameGPUSlots: three app containers on one GPU are three slots.
  expect_charges(
      collapse({{"NVIDIA", {{on("gpu0", 100, 10)}, {on("gpu0", 100, 10)}, {on("gpu0", 100, 10)}}}},
               0)
          .at("NVIDIA"),
      {{"gpu0", 300, 30, 3}}, "MultiAppSameGPUSlots");
}

// A pod on node1 whose containers each ask for one GPU, with the given allocation.
model::Pod placed_pod(size_t inits, size_t apps, std::string allocated) {
  PodBuilder b("p");
  for (size_t i = 0; i < inits; ++i) b.init(gpu_container("init-" + std::to_string(i), 1, 10));
  for (size_t i = 0; i < apps; ++i) b.app(gpu_container("app-" + std::to_string(i), 1, 10));
  b.node("node1").phase("Running").allocated(std::move(allocated));
  return b.build();
}

// initContainer_test.go TestSteadyStateDeviceUsage_* (no sidecars): once every init container
// succeeded, a placed pod is charged its app containers only (hami-device-model.md §4.3), seen
// here through the usage hamisim reads from the pod.
TEST(HamiInitContainers, SteadyStateDeviceUsage) {
  auto registry = nvidia_registry();
  auto charges = [&](const model::Pod& pod) {
    auto a = decode_pod_allocation(pod, *registry);
    EXPECT_TRUE(a) << (a ? "" : a.error().message);
    return a ? a->charges.at("NVIDIA") : Charges{};
  };
  // OnlyAppContainers.
  expect_charges(charges(placed_pod(0, 2, "gpu0,NVIDIA,100,10:;gpu0,NVIDIA,200,20:;")),
                 {{"gpu0", 300, 30, 2}}, "OnlyAppContainers");
  // IgnoresInitContainers / MultiAppSameGPUSlots: init 999 then two apps; the init succeeded.
  PodBuilder b("p");
  b.init(gpu_container("init-0", 1, 10))
      .app(gpu_container("app-0", 1, 10))
      .app(gpu_container("app-1", 1, 10))
      .node("node1")
      .phase("Running")
      .allocated("gpu0,NVIDIA,999,99:;gpu0,NVIDIA,100,10:;gpu0,NVIDIA,200,20:;")
      .init_terminated("init-0", 0);
  expect_charges(charges(b.build()), {{"gpu0", 300, 30, 2}}, "IgnoresInitContainers");
  // MultipleDevicesPerContainer: the init's two GPUs are dropped, the app's two kept.
  PodBuilder m("p");
  m.init(gpu_container("init-0", 2, 10))
      .app(gpu_container("app-0", 2, 10))
      .node("node1")
      .phase("Running")
      .allocated(
          "gpu0,NVIDIA,1000,100:gpu1,NVIDIA,2000,200:;gpu0,NVIDIA,100,10:gpu1,NVIDIA,200,20:;")
      .init_terminated("init-0", 0);
  expect_charges(charges(m.build()), {{"gpu0", 100, 10, 1}, {"gpu1", 200, 20, 1}},
                 "MultipleDevicesPerContainer");
}

// initcontainer_usage_test.go TestInitContainerUsageLifecycle: init 20 and app 10 MiB on uuid1
// are charged 20 while the init container runs (quota used 20 of 24), 10 once it exited 0,
// and deleting the pod gives back exactly what was charged.
TEST(HamiInitContainers, InitContainerUsageLifecycle) {
  auto registry = nvidia_registry();
  DeviceQuota quota(*registry);
  quota.add_quota(gpumem_quota("default", "24"));
  auto pod = [](bool init_done) {
    PodBuilder b("p");
    b.init(gpu_container("init", 1, 20))
        .app(gpu_container("app", 1, 10))
        .node("node1")
        .phase("Running")
        .allocated("uuid1,NVIDIA,20,0:;uuid1,NVIDIA,10,0:;");
    if (init_done) b.init_terminated("init", 0);
    return b.build();
  };
  auto running = decode_pod_allocation(pod(false), *registry);
  ASSERT_TRUE(running);
  EXPECT_EQ(running->charges.at("NVIDIA").at(0).usedmem, 20);
  quota.add_usage("default", *running);
  EXPECT_TRUE(quota.fits("default", "NVIDIA", 4, 0));
  EXPECT_FALSE(quota.fits("default", "NVIDIA", 5, 0));
  auto shrunk = decode_pod_allocation(pod(true), *registry);
  ASSERT_TRUE(shrunk);
  EXPECT_EQ(shrunk->charges.at("NVIDIA").at(0).usedmem, 10);
  quota.add_usage("default", *running, -1);
  quota.add_usage("default", *shrunk);
  EXPECT_TRUE(quota.fits("default", "NVIDIA", 14, 0));
  EXPECT_FALSE(quota.fits("default", "NVIDIA", 15, 0));
  quota.add_usage("default", *shrunk, -1);
  EXPECT_TRUE(quota.fits("default", "NVIDIA", 24, 0));
  EXPECT_FALSE(quota.fits("default", "NVIDIA", 25, 0));
}

// ---- Annotation codecs (pkg/device/devices_test.go) -----------------------------------------

// devices_test.go TestDecodeContainerDevices, the entries v2.10.0 shares (hami-device-model.md
// §4.5 "Decoding": pieces without a ',' are ignored, fewer than 4 fields or a field 3-4 that is
// no int32 is an error, fields after the 4th are ignored; Idx is not encoded and decodes as 0).
// Left out: a later HAMi also rejects pieces without a ',' ("garbage", "garbage:", either next
// to a valid device), negative memory or cores, and an empty UUID or type; v2.10.0 accepts
// them (§4.5 grammar: "integers in decimal, may be negative").
TEST(HamiCodec, DecodeContainerDevices) {
  struct Case {
    const char* name;
    const char* input;
    bool error;
    device::ContainerDevices want;
  };
  const std::vector<Case> cases = {
      {"empty string returns empty ContainerDevices", "", false, {}},
      {"trailing delimiters only returns empty ContainerDevices", ":::", false, {}},
      {"valid single device",
       "GPU-8dcd427f-483b-b48f-d7e5-75fb19a52b76,NVIDIA,500,3:",
       false,
       {on("GPU-8dcd427f-483b-b48f-d7e5-75fb19a52b76", 500, 3)}},
      {"valid single device with zero resources",
       "GPU-zero,NVIDIA,0,0:",
       false,
       {on("GPU-zero", 0, 0)}},
      {"multiple valid devices",
       "GPU-1,NVIDIA,1000,10:GPU-2,Cambricon,2000,20:",
       false,
       {on("GPU-1", 1000, 10), on("GPU-2", 2000, 20, "Cambricon")}},
      {"existing valid fields preserved with extra optional fields",
       "GPU-1,NVIDIA,1000,10,extra1,extra2:",
       false,
       {on("GPU-1", 1000, 10)}},
      {"missing required fields (only 2 fields)", "GPU-1,NVIDIA:", true, {}},
      {"missing required fields (only 3 fields)", "GPU-1,NVIDIA,1000:", true, {}},
      {"invalid non-numeric memory", "GPU-1,NVIDIA,invalid,10:", true, {}},
      {"invalid non-numeric core", "GPU-1,NVIDIA,500,invalid:", true, {}},
      {"memory integer overflow", "GPU-1,NVIDIA,99999999999999999999999999,10:", true, {}},
      {"core integer overflow", "GPU-1,NVIDIA,500,99999999999999999999999999:", true, {}},
  };
  for (const Case& c : cases) {
    auto got = device::decode_container_devices(c.input);
    EXPECT_EQ(!got, c.error) << c.name;
    if (got && !c.error) {
      EXPECT_EQ(*got, c.want) << c.name;
    }
  }
}

// devices_test.go TestEmptyContainerDevicesCoding, TestEmptyPodDeviceCoding,
// TestPodDevicesCoding and Test_DecodePodDevices: encode then decode; the final ';' decodes
// to one more, empty, container.
TEST(HamiCodec, PodDevicesCoding) {
  EXPECT_EQ(device::encode_container_devices({}), "");
  EXPECT_EQ(device::decode_container_devices("").value(), device::ContainerDevices{});
  EXPECT_EQ(device::encode_pod_devices({}), "");
  // "one pod one container use zero device": "" decodes to one empty container.
  EXPECT_EQ(device::decode_pod_devices("").value(), device::PodSingleDevice{{}});
  const device::ContainerDevice d1 = on("UUID1", 1000, 30, "Type1");
  const device::ContainerDevice d2 = on("UUID2", 1000, 30, "Type1");
  struct Case {
    const char* name;
    device::PodSingleDevice args, want;
  };
  const std::vector<Case> cases = {
      {"one pod one container use one device", {{d1}}, {{d1}, {}}},
      {"one pod two container, every container use one device", {{d1}, {d1}}, {{d1}, {d1}, {}}},
      {"one pod one container use two devices", {{d1, d2}}, {{d1, d2}, {}}},
  };
  for (const Case& c : cases) {
    auto got = device::decode_pod_devices(device::encode_pod_devices(c.args));
    ASSERT_TRUE(got) << c.name;
    EXPECT_EQ(*got, c.want) << c.name;
  }
  EXPECT_EQ(device::encode_pod_devices({{d1}}), "UUID1,Type1,1000,30:;");
  // Test_DecodePodDevices "annos having two device".
  auto two = device::decode_pod_devices(
      "GPU-8dcd427f-483b-b48f-d7e5-75fb19a52b76,NVIDIA,500,3:;"
      "GPU-ebe7c3f7-303d-558d-435e-99a160631fe4,NVIDIA,500,3:;");
  ASSERT_TRUE(two);
  EXPECT_EQ(*two, (device::PodSingleDevice{{on("GPU-8dcd427f-483b-b48f-d7e5-75fb19a52b76", 500, 3)},
                                           {on("GPU-ebe7c3f7-303d-558d-435e-99a160631fe4", 500, 3)},
                                           {}}));
}

// devices_test.go TestDecodePodDevices_BadAnnotation, the entry v2.10.0 shares: a device with
// only 3 fields fails the whole value (the others, negative values, empty UUID or type and a
// piece without ',', are accepted by v2.10.0, see DecodeContainerDevices above).
TEST(HamiCodec, DecodePodDevicesBadAnnotation) {
  EXPECT_FALSE(device::decode_pod_devices("uuid,type,100:;"));
}

// devices_test.go TestUnMarshalNodeDevices and TestMarshalNodeDevices: the register JSON;
// health false is left out when written (omitempty) and read back as false.
TEST(HamiCodec, NodeDevicesJson) {
  auto one = device::decode_register_json(
      "[{\"index\":1,\"id\":\"id-1\",\"count\":1,\"devmem\":1024,\"devcore\":10,\"type\":\"type\","
      "\"health\":true}]\n");
  ASSERT_TRUE(one) << one.error().message;
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].index, 1u);
  EXPECT_EQ((*one)[0].id, "id-1");
  EXPECT_EQ((*one)[0].count, 1);
  EXPECT_EQ((*one)[0].devmem, 1024);
  EXPECT_EQ((*one)[0].devcore, 10);
  EXPECT_EQ((*one)[0].type, "type");
  EXPECT_EQ((*one)[0].numa, 0);
  EXPECT_TRUE((*one)[0].health);
  auto two = device::decode_register_json(
      "[{\"index\":1,\"id\":\"id-1\",\"count\":1,\"devmem\":1024,\"devcore\":10,\"type\":\"type\","
      "\"health\":true},{\"index\":2,\"id\":\"id-2\",\"count\":2,\"devmem\":4096,\"devcore\":20,"
      "\"type\":\"type2\",\"health\":false}]");
  ASSERT_TRUE(two) << two.error().message;
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[1].id, "id-2");
  EXPECT_EQ((*two)[1].devmem, 4096);
  EXPECT_FALSE((*two)[1].health);
  // TestMarshalNodeDevices "test multiple": what is written reads back the same.
  auto again = device::decode_register_json(device::encode_register_json(*two));
  ASSERT_TRUE(again);
  ASSERT_EQ(again->size(), 2u);
  EXPECT_EQ((*again)[0].id, "id-1");
  EXPECT_TRUE((*again)[0].health);
  EXPECT_EQ((*again)[1].count, 2);
  EXPECT_FALSE((*again)[1].health);
  EXPECT_EQ(device::encode_register_json({}), "[]");
}

// devices_test.go Test_DecodeNodeDevices and Test_EncodeNodeDevices: the legacy colon format
// (hami-device-model.md §1.6). The error texts of the stored test are a later HAMi's and are
// not compared.
TEST(HamiCodec, LegacyNodeDevices) {
  struct Case {
    const char* name;
    const char* input;
    bool error;
  };
  for (const Case& c : std::vector<Case>{
           {"args is empty", "", true},
           {"args is only delimiter", ":", false},
           {"args is multiple delimiters", "::", false},
           {"args missing delimiter with comma", ",", true},
           {"args has comma and delimiter but empty fields", ",:", true},
           {"args is invalid format missing split symbol", "a", true},
           {"malformed segment without comma", "garbage:", true},
           {"invalid count field", "GPU-e,notanint,7680,100,NVIDIA-Tesla P4,0,true:", true},
           {"invalid memory field", "GPU-e,10,notanint,100,NVIDIA-Tesla P4,0,true:", true},
           {"invalid core field", "GPU-e,10,7680,notanint,NVIDIA-Tesla P4,0,true:", true},
           {"invalid numa field", "GPU-e,10,7680,100,NVIDIA-Tesla P4,notanint,true:", true},
           {"invalid health field", "GPU-e,10,7680,100,NVIDIA-Tesla P4,0,notabool:", true},
           {"unexpected field count", "GPU-e,10,7680,100,NVIDIA-Tesla P4:", true},
           {"invalid index field in new format",
            "GPU-e,10,7680,100,NVIDIA-Tesla P4,0,true,notanint,hami-core:", true},
           {"negative index field in new format",
            "GPU-e,10,7680,100,NVIDIA-Tesla P4,0,true,-1,hami-core:", true},
       }) {
    auto got = device::decode_legacy_devices(c.input);
    EXPECT_EQ(!got, c.error) << c.name;
    if (got) {
      EXPECT_TRUE(got->empty()) << c.name;
    }
  }
  const std::string id = "GPU-ebe7c3f7-303d-558d-435e-99a160631fe4";
  auto old_format = device::decode_legacy_devices(id + ",10,7680,100,NVIDIA-Tesla P4,0,true:");
  ASSERT_TRUE(old_format) << old_format.error().message;
  ASSERT_EQ(old_format->size(), 1u);
  const device::DeviceInfo& o = (*old_format)[0];
  EXPECT_EQ(o.id, id);
  EXPECT_EQ(o.index, 0u);
  EXPECT_EQ(o.count, 10);
  EXPECT_EQ(o.devmem, 7680);
  EXPECT_EQ(o.devcore, 100);
  EXPECT_EQ(o.type, "NVIDIA-Tesla P4");
  EXPECT_EQ(o.mode, "hami-core");
  EXPECT_EQ(o.numa, 0);
  EXPECT_TRUE(o.health);
  auto new_format =
      device::decode_legacy_devices(id + ",10,7680,100,NVIDIA-Tesla P4,0,true,1,hami-core:");
  ASSERT_TRUE(new_format) << new_format.error().message;
  ASSERT_EQ(new_format->size(), 1u);
  EXPECT_EQ((*new_format)[0].index, 1u);
  EXPECT_EQ((*new_format)[0].mode, "hami-core");
  // Test_EncodeNodeDevices: always nine fields.
  device::DeviceInfo d = o;
  EXPECT_EQ(device::encode_legacy_devices({d}),
            id + ",10,7680,100,NVIDIA-Tesla P4,0,true,0,hami-core:");
  d.index = 1;
  EXPECT_EQ(device::encode_legacy_devices({d}),
            id + ",10,7680,100,NVIDIA-Tesla P4,0,true,1,hami-core:");
}

// devices_test.go TestEncodeDecodeNodeDevicesRoundtrip: the legacy format reads back what it
// wrote.
TEST(HamiCodec, LegacyNodeDevicesRoundtrip) {
  auto info = [](std::string id, uint64_t index, int32_t devmem, std::string type) {
    device::DeviceInfo d;
    d.id = std::move(id);
    d.index = index;
    d.count = 10;
    d.devmem = devmem;
    d.devcore = 100;
    d.type = std::move(type);
    d.mode = "hami-core";
    d.numa = 0;
    d.health = true;
    return d;
  };
  const std::vector<std::vector<device::DeviceInfo>> lists = {
      {info("GPU-ebe7c3f7-303d-558d-435e-99a160631fe4", 0, 7680, "NVIDIA-Tesla P4")},
      {info("GPU-ebe7c3f7-303d-558d-435e-99a160631fe4", 1, 7680, "NVIDIA-Tesla P4")},
      {info("GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec", 0, 32768, "NVIDIA-Tesla V100-PCIE-32GB"),
       info("GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448", 1, 32768, "NVIDIA-Tesla V100-PCIE-32GB")},
  };
  for (const auto& list : lists) {
    auto decoded = device::decode_legacy_devices(device::encode_legacy_devices(list));
    ASSERT_TRUE(decoded) << decoded.error().message;
    ASSERT_EQ(decoded->size(), list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ((*decoded)[i].id, list[i].id);
      EXPECT_EQ((*decoded)[i].index, list[i].index);
      EXPECT_EQ((*decoded)[i].count, list[i].count);
      EXPECT_EQ((*decoded)[i].devmem, list[i].devmem);
      EXPECT_EQ((*decoded)[i].devcore, list[i].devcore);
      EXPECT_EQ((*decoded)[i].type, list[i].type);
      EXPECT_EQ((*decoded)[i].mode, list[i].mode);
      EXPECT_EQ((*decoded)[i].health, list[i].health);
    }
  }
}

// ---- Device selection annotations (pkg/device/devices_test.go), through NVIDIA's Fit -------

// devices_test.go TestCheckUUID (nvidia.com/use-gpuuuid and nouse-gpuuuid).
TEST(HamiNvidiaSelection, CheckUuid) {
  const std::string use(kUseGpuUuidAnnotation), nouse(kNoUseGpuUuidAnnotation);
  struct Case {
    const char* name;
    std::map<std::string, std::string> annos;
    const char* id;
    bool want;
  };
  for (const Case& c : std::vector<Case>{
           {"don't set GPUUseUUID and GPUNoUseUUID annotation", {}, "abc", true},
           {"use set, device match", {{use, "abc,123"}}, "abc", true},
           {"use set, device don't match", {{use, "abc,123"}}, "1abc", false},
           {"nouse set, device match", {{nouse, "abc,123"}}, "abc", false},
           {"nouse set, device don't match", {{nouse, "abc,123"}}, "1abc", true},
           {"both set, device in use list but also in nouse list",
            {{use, "abc,123"}, {nouse, "abc"}},
            "abc",
            false},
           {"both set, device in use list and not in nouse list",
            {{use, "abc,123"}, {nouse, "456"}},
            "abc",
            true},
           {"use list with spaces around uuids, device matches after trim",
            {{use, " abc , 123 "}},
            "abc",
            true},
           {"empty GPUUseUUID annotation should not filter out any device",
            {{use, ""}},
            "abc",
            true},
           {"whitespace-only GPUUseUUID annotation should not filter out any device",
            {{use, "   "}},
            "abc",
            true},
           {"empty GPUNoUseUUID annotation should not exclude any device",
            {{nouse, ""}},
            "abc",
            true},
       }) {
    Call call;
    call.pod = annotated(c.annos);
    DirectFit f = nvidia_fit({Dev(c.id)}, req(1, 100, 101, 0), call);
    EXPECT_EQ(f.outcome.fits, c.want) << c.name;
    if (!c.want) {
      EXPECT_EQ(f.reason, "1/1 CardUuidMismatch") << c.name;
    }
  }
}

// devices_test.go TestCheckType (nvidia.com/use-gputype and nouse-gputype): substring match,
// blank values and empty list items constrain nothing.
TEST(HamiNvidiaSelection, CheckType) {
  const std::string use(kUseGpuTypeAnnotation), nouse(kNoUseGpuTypeAnnotation);
  struct Case {
    const char* name;
    std::map<std::string, std::string> annos;
    bool want;
  };
  for (const Case& c : std::vector<Case>{
           {"no annotation is no constraint", {}, true},
           {"use list matches by substring", {{use, "A100,V100"}}, true},
           {"use list does not match", {{use, "V100"}}, false},
           {"nouse list matches excludes the device", {{nouse, "A100"}}, false},
           {"nouse list does not match keeps the device", {{nouse, "V100"}}, true},
           {"empty use value is no constraint", {{use, ""}}, true},
           {"whitespace-only nouse value excludes nothing", {{nouse, "   "}}, true},
           {"use satisfied and nouse matches still excludes",
            {{use, "A100"}, {nouse, "A100"}},
            false},
           {"nouse with trailing comma only excludes named type", {{nouse, "V100,"}}, true},
           {"nouse with leading comma only excludes named type", {{nouse, ",V100"}}, true},
           {"use with trailing comma matches named type only", {{use, "V100,"}}, false},
       }) {
    Call call;
    call.pod = annotated(c.annos);
    DirectFit f = nvidia_fit({Dev("dev-0").type("NVIDIA-A100")}, req(1, 100, 101, 0), call);
    EXPECT_EQ(f.outcome.fits, c.want) << c.name;
    if (!c.want) {
      EXPECT_EQ(f.reason, "1/1 CardTypeMismatch") << c.name;
    }
  }
}

// ---- Device scores and GPU ordering (pkg/scheduler) -----------------------------------------

// pkg/scheduler/score_model_type_test.go TestBinpackPacksSmallerCardOnMixedCapacityNode: two
// model-typed cards, a 40 GB idle one and an 80 GB one with 1 task, 5 cores and 4096 MiB;
// binpack places 20480 MiB / 30 cores on the 40 GB card (9.0 after placement against 8.5).
// v2.10.0 never counted the request for model-typed cards and would pick the 80 GB one
// (hami-device-model.md §5.1 "v2.10.0 quirk"); hamisim counts it, deliberately
// (docs/deviations.md #2, HAMi fix #2870), so HAMi's expectation holds.
TEST(HamiNvidiaScore, BinpackPacksSmallerCardOnMixedCapacityNode) {
  FitHarness h({gpu("gpu-40g", 40960).with_type("NVIDIA A100-SXM4-40GB"),
                gpu("gpu-80g", 81920).with_type("NVIDIA A100-SXM4-80GB").with_index(1)});
  h.book("gpu-80g", 1, 4096, 5);
  NodeFit f = h.fit(PodBuilder("trainer").app(gpu_container("main", 1, 20480, 30)).build(),
                    FitPolicy{"binpack", "binpack"});
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(chosen_uuids(f, 0), std::vector<std::string>{"gpu-40g"});
}

// pkg/scheduler/policy/gpu_policy_test.go TestComputeScore "ContainerDeviceRequests has no
// data": 10 * (2/10 + 1/4 + 2048/8192) = 7. (Its other entries come from a HAMi that counted
// requests of any type on any device; v2.10.0 and hamisim count only the device's own vendor,
// hami-device-model.md §5.1, so they are left out.)
TEST(HamiNvidiaScore, ComputeScoreWithoutRequests) {
  DeviceUsage d = Dev("test-device", 10, 8192, 4).used(2).usedcores(1).usedmem(2048);
  EXPECT_EQ(device_score(d, device::ContainerRequests{}, ScoringWeights{}), 7.0f);
}

// pkg/scheduler/policy/gpu_policy_test.go TestDeviceUsageList_Less, the entries v2.10.0
// shares (no numa-bind: binpack puts the lower score first, spread the higher; NUMA only
// breaks ties, hami-device-model.md §5.2). Left out: "Binpack policy with different Numa
// false" and "Spread policy with different Numa true", from a HAMi that compared NUMA first.
TEST(HamiNvidiaScore, DeviceUsageListLess) {
  struct Case {
    const char* name;
    const char* policy;
    int64_t numa0, numa1;
    float score0, score1;
    bool less;  // device 0 sorts before device 1
  };
  for (const Case& c : std::vector<Case>{
           {"Binpack policy with same Numa", "binpack", 0, 0, 10, 20, true},
           {"Binpack policy with different Numa true", "binpack", 1, 0, 10, 20, true},
           {"Spread policy with same Numa", "spread", 0, 0, 10, 20, false},
           {"Spread policy with different Numa false", "spread", 1, 0, 10, 20, false},
       }) {
    std::vector<DeviceUsage> usage{Dev("d0").numa(c.numa0), Dev("d1").numa(c.numa1)};
    const std::vector<float> values{c.score0, c.score1};
    std::vector<DeviceUsage*> order{&usage[0], &usage[1]};
    sort_devices(order, DeviceScores{usage.data(), values}, c.policy, false);
    EXPECT_EQ(order[0]->id, c.less ? "d0" : "d1") << c.name;
  }
}

// ---- MIG usage from running pods (pkg/scheduler/mig_allocation_test.go) --------------------

Gpu one_slot_mig_gpu() {
  Gpu g = gpu("GPU-a", 40960);
  g.count = 7;
  g.mode = "mig";
  device::MigProfile p;
  p.name = "1g.5gb";
  p.memory_mb = 5120;
  p.core = 14;
  p.slice_count = 0;
  p.placements = {{6, 1}};
  p.placements_null = false;
  g.mig_profiles = {p};
  return g;
}

// TestGetNodesUsageRestoresMigAllocationByProfileAndPlacement: a running pod's
// hami.io/vgpu-mig-allocations entry is restored on its GPU with profile, placement and, the
// runtime fields being present, runtime-ready.
TEST(HamiNvidiaMig, UsageRestoresMigAllocationByProfileAndPlacement) {
  FitHarness h({one_slot_mig_gpu()});
  h.add_existing(
      PodBuilder("pod-1")
          .node("node1")
          .phase("Running")
          .allocated("GPU-a,NVIDIA,5120,14:;")
          .mig_allocations(R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a",)"
                           R"("profile":"1g.5gb","placement":{"start":6,"size":1},)"
                           R"("migUUID":"MIG-a","gpuInstanceID":7,"computeInstanceID":0}])")
          .build());
  const DeviceUsage& d = h.device("GPU-a");
  ASSERT_EQ(d.mig_in_use.size(), 1u);
  EXPECT_EQ(d.mig_in_use[0].profile, "1g.5gb");
  EXPECT_EQ(d.mig_in_use[0].placement, (device::MigPlacement{6, 1}));
  EXPECT_TRUE(d.mig_in_use[0].runtime_ready);
  EXPECT_TRUE(d.health);
  EXPECT_EQ(d.used, 1);
  EXPECT_EQ(d.usedmem, 5120);
}

// TestGetNodesUsageFailsClosedWithoutMigAllocation: a pod on a MIG GPU without its MIG
// allocation makes the GPU unhealthy (hami-device-model.md §4.3 fail-closed rules).
TEST(HamiNvidiaMig, UsageFailsClosedWithoutMigAllocation) {
  FitHarness h({one_slot_mig_gpu()});
  h.add_existing(PodBuilder("pod-1")
                     .node("node1")
                     .phase("Running")
                     .allocated("GPU-a,NVIDIA,5120,14:;")
                     .build());
  EXPECT_FALSE(h.device("GPU-a").health);
}

// The devices in the order HAMi's fitInDevices gives them to Fit: sorted by the GPU policy
// with the given scores (pkg/scheduler/numa_sort_test.go sortedDevices).
std::vector<DeviceUsage> sorted_by_policy(std::vector<DeviceUsage> devices,
                                          const std::vector<float>& scores, std::string_view policy,
                                          bool numa_bind) {
  std::vector<DeviceUsage*> order;
  for (auto& d : devices) order.push_back(&d);
  sort_devices(order, DeviceScores{devices.data(), scores}, policy, numa_bind);
  std::vector<DeviceUsage> out;
  for (const DeviceUsage* d : order) out.push_back(*d);
  return out;
}

// pkg/scheduler/numa_sort_test.go TestNumaBindSortPreservesAffinity: A (NUMA 0, score 5),
// B (NUMA 0, score 1), C (NUMA 1, score 3), two cards with numa-bind. Sorted by score alone
// C sits between A and B and Fit fails; sorted with numa-bind the NUMA 0 pair fits.
TEST(HamiNvidiaScore, NumaBindSortPreservesAffinity) {
  const std::vector<DeviceUsage> devs{Dev("A_n0", 10, 8192), Dev("B_n0", 10, 8192),
                                      Dev("C_n1", 10, 8192).numa(1)};
  const std::vector<float> scores{5, 1, 3};
  Call call;
  call.numa_bind = true;
  const ContainerDeviceRequest r = req(2, 100, 101, 10);
  EXPECT_FALSE(nvidia_fit(sorted_by_policy(devs, scores, "spread", false), r, call).outcome.fits);
  DirectFit f = nvidia_fit(sorted_by_policy(devs, scores, "spread", true), r, call);
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(uuid_set(f), (std::set<std::string>{"A_n0", "B_n0"}));
}

// pkg/scheduler/numa_sort_test.go TestScorePrimarySelectsAcrossNuma: without numa-bind spread
// picks the idlest card whatever its NUMA node: P (NUMA 0, score 1) over Q (8) and R (5).
TEST(HamiNvidiaScore, ScorePrimarySelectsAcrossNuma) {
  const std::vector<DeviceUsage> devs{Dev("P_n0", 10, 8192), Dev("Q_n1", 10, 8192).numa(1),
                                      Dev("R_n1", 10, 8192).numa(1)};
  DirectFit f =
      nvidia_fit(sorted_by_policy(devs, {1, 8, 5}, "spread", false), req(1, 100, 101, 10));
  ASSERT_TRUE(f.outcome.fits) << f.reason;
  EXPECT_EQ(f.uuids(), std::vector<std::string>{"P_n0"});
}

// pkg/scheduler/policy/gpu_policy_model_type_test.go, NVIDIA's cases: the request counts on a
// model-named NVIDIA card (10 * (1/10 + 30/100 + 20480/40960) = 9), also on one typed exactly
// "NVIDIA", once per request of the card's vendor (two containers' requests add up to 8), and
// not at all for another vendor's request. v2.10.0 never counted it on model-named cards
// (hami-device-model.md §5.1); hamisim does, deliberately (docs/deviations.md #2).
TEST(HamiNvidiaScore, ComputeScoreCountsRequestForModelNamedDeviceTypes) {
  for (const char* type : {"NVIDIA A100-SXM4-40GB", "NVIDIA"}) {
    DeviceUsage d = Dev("card-0", 10, 40960).type(type);
    device::ContainerRequests requests{{"NVIDIA", req(1, 20480, 101, 30)}};
    EXPECT_EQ(device_score(d, requests, ScoringWeights{}), 10.0f * 0.9f) << type;
  }
  DeviceUsage d = Dev("card-0", 10, 40960).type("NVIDIA A100-SXM4-40GB");
  // TestComputeScoreIgnoresOtherVendorRequests.
  EXPECT_EQ(device_score(d, {{"MLU", req(1, 20480, 101, 30, "MLU")}}, ScoringWeights{}), 0.0f);
  // TestComputeScoreStillAggregatesRequestsOfOneType.
  device::ContainerRequests two{{"container1", req(1, 4096, 101, 10)},
                                {"container2", req(1, 8192, 101, 20)}};
  EXPECT_EQ(device_score(d, two, ScoringWeights{}), 10.0f * 0.8f);
}

// pkg/scheduler/policy_fallback_placement_test.go TestPlacementUnderUnrecognizedPolicy: three
// cards (idle; 2 tasks, 50 cores, 4096 MiB; 3 tasks, 75 cores, 6144 MiB), 1024 MiB / 10 cores
// asked. binpack picks the busy card, spread the idle one, no annotation follows the
// configured default. For an unrecognised annotation ("binpakc") the stored test expects the
// configured default; in v2.10.0 the annotation still replaces the default and any unknown
// value orders as spread (hami-device-model.md §2.5 "Unknown value = spread ordering", §5.2),
// which hamisim follows: the idle card, whatever the default.
TEST(HamiNvidiaScore, PlacementUnderUnrecognizedPolicy) {
  auto place = [](std::string annotation, std::string cluster_default) {
    FitHarness h({gpu("gpu-idle", 8192), gpu("gpu-mid", 8192), gpu("gpu-busy", 8192)});
    h.book("gpu-mid", 2, 4096, 50);
    h.book("gpu-busy", 3, 6144, 75);
    PodBuilder b("fallback-pod");
    if (!annotation.empty()) b.annotate(std::string(kGpuSchedulerPolicyAnnotation), annotation);
    NodeFit f = h.fit(b.app(gpu_container("main", 1, 1024, 10)).build(),
                      FitPolicy{std::move(cluster_default), "binpack"});
    EXPECT_TRUE(f.fits) << f.reason;
    auto ids = chosen_uuids(f, 0);
    return ids.empty() ? std::string() : ids[0];
  };
  EXPECT_EQ(place("binpack", "binpack"), "gpu-busy");
  EXPECT_EQ(place("spread", "binpack"), "gpu-idle");
  EXPECT_EQ(place("", "binpack"), "gpu-busy");
  EXPECT_EQ(place("", "spread"), "gpu-idle");
  EXPECT_EQ(place("binpakc", "binpack"), "gpu-idle");
  EXPECT_EQ(place("binpakc", "spread"), "gpu-idle");
}

// ---- Reason strings (pkg/device/common/common_test.go) -------------------------------------

// TestGenReason, TestParseReason and TestGenAndParseReasonRoundTrip.
TEST(HamiReasons, GenAndParseReason) {
  using device::Reason;
  EXPECT_EQ(device::format_reasons(device::ReasonCounts{}, 8), "");
  EXPECT_EQ(device::format_reasons({{Reason::kCardInsufficientMemory, 3}}, 8),
            "3/8 CardInsufficientMemory");
  EXPECT_EQ(device::format_reasons({{Reason::kCardInsufficientMemory, 3},
                                    {Reason::kCardInsufficientCore, 2},
                                    {Reason::kCardNotHealth, 3}},
                                   8),
            "2/8 CardInsufficientCore, 3/8 CardInsufficientMemory, 3/8 CardNotHealth");
  using Parsed = std::map<std::string, int, std::less<>>;
  EXPECT_EQ(
      device::parse_reasons(
          "3/8 CardInsufficientMemory, 2/8 CardInsufficientCore, 3/8 CardNotHealth"),
      (Parsed{{"CardInsufficientMemory", 3}, {"CardInsufficientCore", 2}, {"CardNotHealth", 3}}));
  EXPECT_EQ(device::parse_reasons(""), Parsed{});
  EXPECT_EQ(device::parse_reasons("invalid_reason_format"), Parsed{});
  EXPECT_EQ(device::parse_reasons("4/4 CardTypeMismatch"), (Parsed{{"CardTypeMismatch", 4}}));
  EXPECT_EQ(device::parse_reasons(device::format_reasons(
                {{Reason::kCardInsufficientMemory, 5}, {Reason::kCardInsufficientCore, 2}}, 8)),
            (Parsed{{"CardInsufficientMemory", 5}, {"CardInsufficientCore", 2}}));
}

// ---- Admission (device_test.go MutateAdmission tests) ---------------------------------------

// One container (its JSON) admitted with NVIDIA's mutation; the mutated container and pod.
struct Admitted {
  Result<bool> found = false;
  boost::json::object container, pod;
  std::optional<int64_t> limit(std::string_view name) const { return quantity_in("limits", name); }
  std::optional<int64_t> request(std::string_view name) const {
    return quantity_in("requests", name);
  }
  std::optional<std::string> env(std::string_view name) const {
    const auto* list = container.if_contains("env");
    if (list == nullptr) return std::nullopt;
    for (const auto& e : list->as_array()) {
      if (e.as_object().at("name").as_string() == name)
        return std::string(e.as_object().at("value").as_string());
    }
    return std::nullopt;
  }

 private:
  std::optional<int64_t> quantity_in(std::string_view list, std::string_view name) const {
    const auto* res = container.if_contains("resources");
    if (res == nullptr) return std::nullopt;
    const auto* l = res->as_object().if_contains(list);
    if (l == nullptr) return std::nullopt;
    const auto* v = l->as_object().if_contains(name);
    if (v == nullptr) return std::nullopt;
    auto q = model::Quantity::parse(v->is_string() ? std::string(v->as_string())
                                                   : std::to_string(v->to_number<int64_t>()));
    if (!q) return std::nullopt;
    return q->value();
  }
};

Admitted admit(const device::nvidia::NvidiaConfig& config, std::string_view container_json) {
  Admitted a;
  a.container = boost::json::parse(container_json).as_object();
  a.pod = boost::json::object{{"spec", boost::json::object{}}};
  boost::json::object& spec = a.pod["spec"].as_object();
  a.found = webhook::mutate_nvidia_container(config,
                                             webhook::ContainerAdmission{a.container, spec, a.pod});
  return a;
}

// device_test.go Test_MutateAdmission: the count in limits, or any of cores, memory and
// percentage (the default count is then added), marks the container; nothing else does.
TEST(HamiNvidiaAdmission, MutateAdmission) {
  const device::nvidia::NvidiaConfig config;
  struct Case {
    const char* name;
    const char* container;
    bool want;
  };
  for (const Case& c : std::vector<Case>{
           {"having ResourceName set to resource limits.",
            R"({"name":"test","resources":{"limits":{"nvidia.com/gpu":"1"}}})", true},
           {"don't having ResourceName, but having ResourceCores set to resource limits",
            R"({"name":"test","resources":{"limits":{"nvidia.com/gpucores":"1"}}})", true},
           {"don't having ResourceName, but having ResourceMem set to resource limits",
            R"({"name":"test","resources":{"limits":{"nvidia.com/gpumem":"1"}}})", true},
           {"don't having ResourceName, but having ResourceMemPercentage set to resource limits",
            R"({"name":"test","resources":{"limits":{"nvidia.com/gpumem-percentage":"1"}}})", true},
           {"don't having math resources.", R"({"name":"test","resources":{"limits":{}}})", false},
       }) {
    Admitted a = admit(config, c.container);
    ASSERT_TRUE(a.found) << c.name;
    EXPECT_EQ(*a.found, c.want) << c.name;
  }
}

// device_test.go Test_MutateAdmission_MemoryPercentageValidation, in limits and in requests:
// 0, 50 and 100 are accepted, 101, 150 and -1 reject the pod. The stored test also rejects
// "50m", "50.5" and "99.1" as fractional: that came after v2.10.0 (HAMi issue #2788, filed
// two days after the release, says admission "obtains the percentage through
// resource.Quantity.Value()", which rounds up; hami-device-model.md §2.2 step 1 checks only
// the range). As v2.10.0 does, hamisim accepts them.
TEST(HamiNvidiaAdmission, MemoryPercentageValidation) {
  const device::nvidia::NvidiaConfig config;
  for (auto [pct, ok] : std::vector<std::pair<const char*, bool>>{{"0", true},
                                                                  {"50", true},
                                                                  {"100", true},
                                                                  {"101", false},
                                                                  {"150", false},
                                                                  {"-1", false}}) {
    const std::string in_limits =
        std::string(R"({"name":"test","resources":{"limits":{"nvidia.com/gpu":"1",)") +
        R"("nvidia.com/gpumem-percentage":")" + pct + R"("}}})";
    EXPECT_EQ(bool(admit(config, in_limits).found), ok) << "limits " << pct;
    const std::string in_requests =
        std::string(R"({"name":"test","resources":{"limits":{"nvidia.com/gpu":"1"},)") +
        R"("requests":{"nvidia.com/gpumem-percentage":")" + pct + R"("}}})";
    EXPECT_EQ(bool(admit(config, in_requests).found), ok) << "requests " << pct;
  }
  for (const char* fractional : {"50m", "50.5", "99.1"}) {
    const std::string c =
        std::string(R"({"name":"test","resources":{"limits":{"nvidia.com/gpu":"1",)") +
        R"("nvidia.com/gpumem-percentage":")" + fractional + R"("}}})";
    EXPECT_TRUE(admit(config, c).found) << "v2.10.0 rounds " << fractional << " up";
  }
}

// device_test.go TestMutateAdmissionDefaultsExclusiveCore: a whole-card container gets cores
// 100 in its limits. "fractional percentage 99.1 treated as non-exclusive" is a later HAMi's
// (issue #2788): v2.10.0 reads 99.1 as 100 (Quantity.Value() rounds up), so the container is
// exclusive; asserted as such (see MemoryPercentageValidation).
TEST(HamiNvidiaAdmission, DefaultsExclusiveCore) {
  const device::nvidia::NvidiaConfig defaults;
  device::nvidia::NvidiaConfig no_memory_name;
  no_memory_name.resource_memory_name = "";
  device::nvidia::NvidiaConfig custom;
  custom.resource_count_name = "hami.io/gpu";
  custom.resource_memory_name = "hami.io/gpumem";
  custom.resource_memory_percentage_name = "hami.io/gpumem-percentage";
  custom.resource_core_name = "hami.io/gpucores";
  struct Case {
    const char* name;
    const device::nvidia::NvidiaConfig* config;
    const char* resources;
    std::optional<int64_t> core;          // limits
    std::optional<int64_t> request_core;  // requests, when the case checks it
  };
  for (const Case& c : std::vector<Case>{
           {"exclusive via percentage", &defaults,
            R"({"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem-percentage":"100"}})", 100,
            std::nullopt},
           {"exclusive via percentage in requests only", &defaults,
            R"({"requests":{"nvidia.com/gpu":"1","nvidia.com/gpumem-percentage":"100"}})", 100,
            std::nullopt},
           {"non-exclusive percentage", &defaults,
            R"({"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem-percentage":"50"}})",
            std::nullopt, std::nullopt},
           {"no memory fields defaults to exclusive", &defaults,
            R"({"limits":{"nvidia.com/gpu":"1"}})", 100, std::nullopt},
           {"explicit cores remains unchanged", &defaults,
            R"({"limits":{"nvidia.com/gpu":"1","nvidia.com/gpucores":"70"}})", 70, std::nullopt},
           {"explicit cores in requests remains unchanged", &defaults,
            R"({"requests":{"nvidia.com/gpu":"1","nvidia.com/gpucores":"55"}})", std::nullopt, 55},
           {"memory size present treated as shareable", &defaults,
            R"({"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem":"8192"}})", std::nullopt,
            std::nullopt},
           {"memory name empty treated as exclusive", &no_memory_name,
            R"({"limits":{"nvidia.com/gpu":"1"}})", 100, std::nullopt},
           {"fractional percentage 99.1 (v2.10.0: rounded up to 100, exclusive)", &defaults,
            R"({"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem-percentage":"99.1"}})", 100,
            std::nullopt},
           {"custom resource names", &custom,
            R"({"limits":{"hami.io/gpu":"1","hami.io/gpumem-percentage":"100"}})", 100,
            std::nullopt},
       }) {
    Admitted a = admit(*c.config, std::string(R"({"name":"c","resources":)") + c.resources + "}");
    EXPECT_EQ(a.limit(c.config->resource_core_name), c.core) << c.name;
    if (c.request_core) {
      EXPECT_EQ(a.request(c.config->resource_core_name), c.request_core) << c.name;
    }
  }
}

// device_test.go TestMutateAdmission_Priority, _CorePolicy, _RuntimeClassName and
// _OverwriteEnv.
TEST(HamiNvidiaAdmission, EnvironmentAndRuntimeClass) {
  device::nvidia::NvidiaConfig config;
  Admitted priority = admit(
      config,
      R"({"name":"c","resources":{"limits":{"nvidia.com/gpu":"1","nvidia.com/priority":"5"}}})");
  ASSERT_TRUE(priority.found);
  EXPECT_TRUE(*priority.found);
  EXPECT_EQ(priority.env("CUDA_TASK_PRIORITY"), std::optional<std::string>("5"));

  config.gpu_core_policy = "force";
  Admitted policy = admit(config, R"({"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}})");
  EXPECT_EQ(policy.env("GPU_CORE_UTILIZATION_POLICY"), std::optional<std::string>("force"));

  config = {};
  config.runtime_class_name = "nvidia";
  Admitted runtime = admit(config, R"({"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}})");
  const auto* rc = runtime.pod.at("spec").as_object().if_contains("runtimeClassName");
  ASSERT_NE(rc, nullptr);
  EXPECT_EQ(rc->as_string(), "nvidia");

  config = {};
  config.overwrite_env = true;
  Admitted none = admit(config, R"({"name":"c","resources":{"limits":{}}})");
  ASSERT_TRUE(none.found);
  EXPECT_FALSE(*none.found);
  EXPECT_EQ(none.env("NVIDIA_VISIBLE_DEVICES"), std::optional<std::string>("none"));
}

// mig_profiles_test.go TestEncodeDecodeMigAllocations,
// TestDecodeMigAllocationsRejectsDuplicateDeviceIndex,
// TestDecodeMigAllocationsPreservesZeroRuntimeInstanceIDs and
// TestDecodeMigAllocationsRejectsPartialRuntimeIdentity (hami-device-model.md §4.5 decoder
// rules). TestValidateMigProfileAllowlist is left out: hamisim reads no allowlist (the
// profiles come registered on the node).
TEST(HamiNvidiaMig, MigAllocationsCodec) {
  // The allocation an instance of 1g.5gb at {6,1} on GPU-a gets from a fit, read back.
  device::nvidia::NvidiaBackend backend;
  device::ContainerDevice d = charged("GPU-a", 5120, 14);
  d.mig_profile = "1g.5gb";
  d.mig_placement = device::MigPlacement{6, 1};
  std::map<std::string, std::string> annotations;
  const model::Pod pod = PodBuilder().build();
  device::AnnotationContext ctx;
  ctx.pod = &pod;
  backend.annotate_allocation(device::PodSingleDevice{{d}}, ctx, annotations);
  ASSERT_EQ(annotations.count(std::string(device::kMigAllocationsAnnotation)), 1u);
  auto decoded = device::decode_mig_allocations(
      annotations.at(std::string(device::kMigAllocationsAnnotation)));
  ASSERT_TRUE(decoded) << decoded.error().message;
  ASSERT_EQ(decoded->size(), 1u);
  EXPECT_EQ((*decoded)[0].container_index, 0);
  EXPECT_EQ((*decoded)[0].device_index, 0);
  EXPECT_EQ((*decoded)[0].gpu_uuid, "GPU-a");
  EXPECT_EQ((*decoded)[0].profile, "1g.5gb");
  EXPECT_EQ((*decoded)[0].placement, (device::MigPlacement{6, 1}));

  EXPECT_FALSE(device::decode_mig_allocations(
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.5gb",)"
      R"("placement":{"start":6,"size":1}},{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a",)"
      R"("profile":"1g.5gb","placement":{"start":5,"size":1}}])"));

  auto runtime = device::decode_mig_allocations(
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"2g.10gb",)"
      R"("placement":{"start":0,"size":2},"migUUID":"MIG-a","gpuInstanceID":4,)"
      R"("computeInstanceID":0}])");
  ASSERT_TRUE(runtime) << runtime.error().message;
  ASSERT_EQ(runtime->size(), 1u);
  EXPECT_EQ((*runtime)[0].gpu_instance_id, std::optional<int64_t>(4));
  EXPECT_EQ((*runtime)[0].compute_instance_id, std::optional<int64_t>(0));

  EXPECT_FALSE(device::decode_mig_allocations(
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"2g.10gb",)"
      R"("placement":{"start":0,"size":2},"migUUID":"MIG-a"}])"));
}

// pkg/scheduler/mig_allocation_test.go TestGetNodesUsageRestoresUnconsumedMigReservations: two
// MIG allocations of one container on GPU-a (slices 6 and 5) with one device entry: both are
// restored, in order, and the GPU stays healthy.
TEST(HamiNvidiaMig, UsageRestoresUnconsumedMigReservations) {
  Gpu g = one_slot_mig_gpu();
  g.mig_profiles[0].placements = {{5, 1}, {6, 1}};
  FitHarness h({g});
  h.add_existing(PodBuilder("pod-1")
                     .node("node1")
                     .phase("Running")
                     .allocated("GPU-a,NVIDIA,5120,14:;")
                     .mig_allocations(R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a",)"
                                      R"("profile":"1g.5gb","placement":{"start":6,"size":1}},)"
                                      R"({"containerIndex":0,"deviceIndex":1,"gpuUUID":"GPU-a",)"
                                      R"("profile":"1g.5gb","placement":{"start":5,"size":1}}])")
                     .build());
  const DeviceUsage& d = h.device("GPU-a");
  EXPECT_TRUE(d.health);
  ASSERT_EQ(d.mig_in_use.size(), 2u);
  EXPECT_EQ(d.mig_in_use[0].placement, (device::MigPlacement{6, 1}));
  EXPECT_EQ(d.mig_in_use[1].placement, (device::MigPlacement{5, 1}));
}

// One GPU-a in `mode`; in MIG mode with 1g.5gb at the given placements
// (mig_allocation_test.go singleNvidiaGPUNode).
Gpu single_gpu(std::string mode, std::vector<device::MigPlacement> placements = {}) {
  Gpu g = gpu("GPU-a", 40960);
  g.count = 7;
  g.mode = mode;
  if (mode == "mig") {
    device::MigProfile p;
    p.name = "1g.5gb";
    p.memory_mb = 5120;
    p.core = 14;
    p.placements = std::move(placements);
    p.placements_null = false;
    g.mig_profiles = {p};
  }
  return g;
}

// Two GPUs of 4000 MiB in one container, nvidia.com/vgpu-mode `mode`
// (mig_allocation_test.go twoNvidiaDeviceRequest).
model::Pod two_gpu_pod(std::string mode) {
  return PodBuilder("two-nvidia-devices", "multi-device-test")
      .annotate(std::string(device::nvidia::kVgpuModeAnnotation), std::move(mode))
      .app(gpu_container("workload", 2, 4000))
      .build();
}

// mig_allocation_test.go TestIsMIGRequest (NVIDIA requests: the non-NVIDIA entry has no
// counterpart, hamisim asks only the NVIDIA backend).
TEST(HamiNvidiaMig, IsMigRequest) {
  device::nvidia::NvidiaBackend backend;
  auto is_mig = [&](const model::Pod& pod, std::string mode) {
    DeviceUsage d = Dev("GPU-a");
    d.mode = std::move(mode);
    std::vector<DeviceUsage*> devices{&d};
    return backend.is_mig_request(*backend.prepare(pod), devices);
  };
  EXPECT_FALSE(is_mig(two_gpu_pod("hami-core"), "mig")) << "explicit HAMi-core mode";
  EXPECT_TRUE(is_mig(PodBuilder().build(), "mig")) << "MIG mode without Pod (annotation)";
  EXPECT_TRUE(is_mig(two_gpu_pod("mig"), "mig")) << "MIG mode annotation";
  EXPECT_FALSE(is_mig(PodBuilder().build(), "hami-core")) << "no MIG device";
}

// mig_allocation_test.go TestFitInDevicesAllowsMultipleMigPlacementsOnSingleGPU,
// TestFitInDevicesRejectsInsufficientMigPlacementsOnSingleGPU and
// TestFitInDevicesRetainsPhysicalCountCheckForNonMigGPU: two instances fit one MIG GPU with
// seven 1g slices, on two distinct placements; with one slice the node fails with Fit's own
// reason (one CardMigTopologyInfeasible); a hami-core GPU fails the count pre-check.
TEST(HamiNvidiaMig, FitInDevicesOnSingleGpu) {
  FitHarness seven({single_gpu("mig", {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}})});
  NodeFit f = seven.fit(two_gpu_pod("mig"));
  ASSERT_TRUE(f.fits) << f.reason;
  EXPECT_EQ(chosen_uuids(f, 0), (std::vector<std::string>{"GPU-a", "GPU-a"}));
  auto mig = device::decode_mig_allocations(
      f.annotations.at(std::string(device::kMigAllocationsAnnotation)));
  ASSERT_TRUE(mig);
  ASSERT_EQ(mig->size(), 2u);
  EXPECT_NE((*mig)[0].placement, (*mig)[1].placement);

  FitHarness one({single_gpu("mig", {{6, 1}})});
  NodeFit no = one.fit(two_gpu_pod("mig"));
  EXPECT_FALSE(no.fits);
  EXPECT_EQ(device::parse_reasons(no.reason).at("CardMigTopologyInfeasible"), 1);
  std::vector<DeviceUsage> direct{Dev("GPU-a", 7, 40960)};
  const std::vector<device::MigProfile> profiles = single_gpu("mig", {{6, 1}}).mig_profiles;
  direct[0].mode = "mig";
  direct[0].mig_profiles = &profiles;
  Call call;
  call.pod = two_gpu_pod("mig");
  EXPECT_EQ(no.reason, nvidia_fit(direct, req(2, 4000, 101, 0), call).reason);

  FitHarness core({single_gpu("hami-core")});
  NodeFit count = core.fit(two_gpu_pod("hami-core"));
  EXPECT_FALSE(count.fits);
  EXPECT_EQ(count.reason, "NodeInsufficientDevice");
}

// pkg/scheduler/score_test.go Test_calcScore, its single-node NVIDIA entries (the two-node
// entries are the same per node): cards of 8000 MiB and 10 slots, each container asking 1000
// MiB and 30 cores per GPU, spread. The node score is the usage before the pod
// (10 * (used/count + cores/total + mem/total)); equal cards go in scan order (the later one
// first).
TEST(HamiNvidiaScore, CalcScore) {
  struct Case {
    const char* name;
    std::vector<bool> half_used;  // per card (uuid1, uuid2, ...): 5 tasks, 50 cores, 4000 MiB
    int gpus;
    std::vector<std::string> want;
    float score;
  };
  for (const Case& c : std::vector<Case>{
           {"one node one device one pod one container use one device.", {false}, 1, {"uuid1"}, 0},
           {"one node one device one pod one container use one device,but this device before "
            "having use.",
            {true},
            1,
            {"uuid1"},
            15},
           {"one node two device one pod one container use one device",
            {false, false},
            1,
            {"uuid2"},
            0},
           {"one node two device one pod one container use one device,but having use 50%",
            {false, true},
            1,
            {"uuid1"},
            7.5},
           {"one node two device one pod one container use two device",
            {false, false},
            2,
            {"uuid2", "uuid1"},
            0},
           {"one node two device one pod one container use two device,but this two device "
            "before having use.",
            {true, true},
            2,
            {"uuid2", "uuid1"},
            15},
       }) {
    std::vector<Gpu> gpus;
    for (size_t i = 0; i < c.half_used.size(); ++i)
      gpus.push_back(gpu("uuid" + std::to_string(i + 1), 8000));
    FitHarness h(gpus);
    for (size_t i = 0; i < c.half_used.size(); ++i) {
      if (c.half_used[i]) h.book("uuid" + std::to_string(i + 1), 5, 4000, 50);
    }
    NodeFit f = h.fit(PodBuilder("test1").app(gpu_container("gpu-burn", c.gpus, 1000, 30)).build());
    ASSERT_TRUE(f.fits) << c.name << ": " << f.reason;
    EXPECT_EQ(chosen_uuids(f, 0), c.want) << c.name;
    EXPECT_EQ(f.node_score, c.score) << c.name;
  }
}

}  // namespace hami_cases_nvidia_test
}  // namespace hamisim::fit::testing
