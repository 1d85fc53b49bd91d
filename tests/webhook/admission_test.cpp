// The /webhook handler: HAMi's webhook.Handle steps (reference hami-scheduler-core.md §10), the
// NVIDIA mutation (hami-device-model.md §2.2) and controller-runtime's AdmissionReview answers.
// Every patch is decoded and applied to the original pod with a small RFC 6902 applier, and the
// result compared with the pod HAMi would produce.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "device/catalog/device_config.h"
#include "device/nvidia/nvidia_backend.h"
#include "json_patch_apply.h"
#include "webhook/admission.h"

namespace hamisim::webhook {
namespace {

namespace json = boost::json;
using ::hamisim::testing::apply_patch;
using ::hamisim::testing::base64_decode;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string review_body(std::string_view pod, std::string_view api_version = "admission.k8s.io/v1",
                        std::string_view uid = "705ab4f5-6393-11e8-b7cc-42010a800002") {
  return std::string(R"({"kind":"AdmissionReview","apiVersion":")") + std::string(api_version) +
         R"(","request":{"uid":")" + std::string(uid) +
         R"(","kind":{"group":"","version":"v1","kind":"Pod"},)"
         R"("resource":{"group":"","version":"v1","resource":"pods"},)"
         R"("namespace":"team-a","operation":"CREATE","object":)" +
         std::string(pod) + "}}";
}

struct Answer {
  AdmissionResult result;
  json::object review;
  json::object response;
  json::array ops;
  json::value patched;  // the original pod with the patch applied
  int code() const { return int(response.at("status").at("code").as_int64()); }
  std::string message() const {
    const auto* m = response.at("status").as_object().if_contains("message");
    return m ? std::string(m->as_string()) : std::string();
  }
  bool allowed() const { return response.at("allowed").as_bool(); }
};

class Admission : public ::testing::Test {
 protected:
  Answer run_body(std::string_view body, std::string_view content_type = "application/json",
                  std::string_view pod_for_patch = {}) {
    device::DeviceConfig dc;
    dc.nvidia = config;
    dc.enable_ascend = enable_gated_vendors;
    dc.enable_iluvatar = enable_gated_vendors;
    const device::DeviceRegistry registry = device::build_registry(dc);
    Answer a;
    a.result = handle_admission(body, content_type, registry, options, quota);
    EXPECT_EQ(a.result.http_status, 200);
    EXPECT_FALSE(a.result.body.empty());
    EXPECT_EQ(a.result.body.back(), '\n');
    std::error_code ec;
    json::value parsed = json::parse(a.result.body, ec);
    EXPECT_FALSE(ec) << a.result.body;
    if (ec || !parsed.is_object()) return a;
    a.review = parsed.as_object();
    a.response = a.review.at("response").as_object();
    if (const auto* p = a.response.if_contains("patch")) {
      EXPECT_EQ(a.response.at("patchType").as_string(), "JSONPatch");
      a.ops = json::parse(base64_decode(std::string(p->as_string()))).as_array();
      if (!pod_for_patch.empty()) a.patched = apply_patch(json::parse(pod_for_patch), a.ops);
    } else {
      EXPECT_FALSE(a.response.contains("patchType"));
      if (!pod_for_patch.empty()) a.patched = json::parse(pod_for_patch);
    }
    return a;
  }
  Answer run(std::string_view pod) { return run_body(review_body(pod), "application/json", pod); }

  device::nvidia::NvidiaConfig config;
  bool enable_gated_vendors = false;  // --enable-ascend and --enable-iluvatar
  WebhookOptions options{"hami-scheduler", true};
  QuotaCheck quota;
};

void expect_json_eq(const json::value& got, std::string_view want) {
  EXPECT_EQ(got, json::parse(want)) << "got  " << json::serialize(got) << "\nwant " << want;
}

// --- step 8: the patch ---------------------------------------------------------------------

// --- other vendors ---------------------------------------------------------------------------

TEST_F(Admission, AnyVendorsCountMakesAHamiPod) {
  const std::string pod = R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c",)"
                          R"("resources":{"limits":{"hygon.com/dcunum":"1"}}}]}})";
  Answer a = run(pod);
  expect_json_eq(a.patched, R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c",)"
                            R"("resources":{"limits":{"hygon.com/dcunum":"1"}}}],)"
                            R"("schedulerName":"hami-scheduler"}})");
}

TEST_F(Admission, IluvatarGetsWholeCardCoresAndItsContainerNameWhenEnabled) {
  const std::string pod =
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c1",)"
      R"("resources":{"limits":{"iluvatar.ai/MR-V100-vgpu":"2","iluvatar.ai/MR-V100.vCore":"1"}}}]}})";
  // Not enabled: not a device pod at all.
  EXPECT_EQ(run(pod).result.outcome, "allowed");
  enable_gated_vendors = true;
  Answer a = run(pod);
  expect_json_eq(
      a.patched,
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c1",)"
      R"("resources":{"limits":{"iluvatar.ai/MR-V100-vgpu":"2","iluvatar.ai/MR-V100.vCore":"200"}},)"
      R"("env":[{"name":"SOL_CONTINER_NAME","value":"c1"}]}],"schedulerName":"hami-scheduler"}})");
}

TEST_F(Admission, AmdCoresOutsideAPercentageRejectThePod) {
  const std::string pod =
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c",)"
      R"("resources":{"limits":{"amd.com/gpu":"1","amd.com/gpucores":"150"}}}]}})";
  Answer a = run(pod);
  EXPECT_FALSE(a.allowed());
  EXPECT_THAT(a.message(), HasSubstr("amd.com/gpucores must be an integer percentage"));
  // Memory alone makes an AMD pod too.
  Answer m = run(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c",)"
                 R"("resources":{"limits":{"amd.com/gpumem":"1024"}}}]}})");
  EXPECT_EQ(m.patched.at("spec").at("schedulerName"), "hami-scheduler");
}

TEST_F(Admission, AscendMemoryIsRoundedUpToATemplate) {
  enable_gated_vendors = true;
  const std::string pod =
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c",)"
      R"("resources":{"limits":{"huawei.com/Ascend910B3":"1","huawei.com/Ascend910B3-memory":"2000"}}}]}})";
  Answer a = run(pod);
  const json::object& c = a.patched.at("spec").at("containers").at(0).as_object();
  EXPECT_EQ(c.at("resources").at("limits").at("huawei.com/Ascend910B3-memory"), "16384")
      << json::serialize(a.patched);
  EXPECT_EQ(c.at("resources").at("requests").at("huawei.com/Ascend910B3-memory"), "16384");
  EXPECT_EQ(a.patched.at("spec").at("schedulerName"), "hami-scheduler");
}

TEST_F(Admission, WholeCardRequestGetsExclusiveCoresAndTheSchedulerName) {
  const std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"team-a"},)"
      R"("spec":{"containers":[{"name":"c","image":"cuda",)"
      R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
  Answer a = run(pod);
  EXPECT_EQ(a.result.outcome, "patched");
  EXPECT_TRUE(a.allowed());
  EXPECT_EQ(a.code(), 200);
  expect_json_eq(a.patched,
                 R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"team-a"},)"
                 R"("spec":{"containers":[{"name":"c","image":"cuda","resources":{"limits":)"
                 R"({"nvidia.com/gpu":"1","nvidia.com/gpucores":"100"}}}],)"
                 R"("schedulerName":"hami-scheduler"}})");
  // Resource names contain "/", escaped as "~1" in the pointer.
  expect_json_eq(a.ops[0],
                 R"({"op":"add","path":"/spec/containers/0/resources/limits/nvidia.com~1gpucores",)"
                 R"("value":"100"})");
}

TEST_F(Admission, AnswerHasControllerRuntimesExactShape) {
  const std::string pod = R"({"spec":{"containers":[{"name":"c"}]}})";
  Answer a = run(pod);
  EXPECT_EQ(a.result.outcome, "allowed");
  EXPECT_EQ(a.result.body,
            R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":)"
            R"({"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":true,)"
            R"("status":{"metadata":{},"code":200}}})"
            "\n");
}

TEST_F(Admission, NothingToChangeMeansNoPatch) {
  Answer a = run(R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"nginx",)"
                 R"("resources":{"limits":{"cpu":"1"}}}]}})");
  EXPECT_EQ(a.result.outcome, "allowed");
  EXPECT_TRUE(a.allowed());
  EXPECT_FALSE(a.response.contains("patch"));
}

TEST_F(Admission, MemoryOnlyRequestGetsTheDefaultCountButNoExclusiveCores) {
  const std::string pod = R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                          R"({"nvidia.com/gpumem":"3000"}}}]}})";
  Answer a = run(pod);
  EXPECT_EQ(a.result.outcome, "patched");
  expect_json_eq(a.patched, R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                            R"({"nvidia.com/gpumem":"3000","nvidia.com/gpu":"1"}}}],)"
                            R"("schedulerName":"hami-scheduler"}})");
}

TEST_F(Admission, DefaultGpuNumIsConfigurableAndZeroDisablesTheInjection) {
  const std::string pod = R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                          R"({"nvidia.com/gpucores":"30"}}}]}})";
  config.default_gpu_num = 2;
  Answer two = run(pod);
  expect_json_eq(two.patched, R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                              R"({"nvidia.com/gpucores":"30","nvidia.com/gpu":"2"}}}],)"
                              R"("schedulerName":"hami-scheduler"}})");
  config.default_gpu_num = 0;
  Answer none = run(pod);
  EXPECT_EQ(none.result.outcome, "allowed");  // no device: not HAMi's pod, nothing changes
}

TEST_F(Admission, PercentageDecidesExclusivity) {
  Answer whole = run(R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                     R"({"nvidia.com/gpu":"1","nvidia.com/gpumem-percentage":"100"}}}]}})");
  expect_json_eq(
      whole.patched,
      R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1",)"
      R"("nvidia.com/gpumem-percentage":"100","nvidia.com/gpucores":"100"}}}],)"
      R"("schedulerName":"hami-scheduler"}})");
  Answer half = run(R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                    R"({"nvidia.com/gpu":"1","nvidia.com/gpumem-percentage":"50"}}}]}})");
  expect_json_eq(
      half.patched,
      R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1",)"
      R"("nvidia.com/gpumem-percentage":"50"}}}],"schedulerName":"hami-scheduler"}})");
}

TEST_F(Admission, ExplicitCoresAreKeptAndRequestsCountForExclusivity) {
  Answer cores = run(R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                     R"({"nvidia.com/gpu":"1","nvidia.com/gpucores":"20"}}}]}})");
  ASSERT_EQ(cores.ops.size(), 1u);
  EXPECT_EQ(cores.ops[0].at("path").as_string(), "/spec/schedulerName");
  // Cores given only in requests still count as given.
  Answer req = run(R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":)"
                   R"("1"},"requests":{"nvidia.com/gpu":"1","nvidia.com/gpucores":"20"}}}]}})");
  ASSERT_EQ(req.ops.size(), 1u);
}

TEST_F(Admission, NoMemoryResourceNameMakesEveryCountRequestExclusive) {
  config.resource_memory_name = "";
  Answer a = run(R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                 R"({"nvidia.com/gpu":"1","nvidia.com/gpumem":"1000"}}}]}})");
  expect_json_eq(
      a.patched,
      R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1",)"
      R"("nvidia.com/gpumem":"1000","nvidia.com/gpucores":"100"}}}],)"
      R"("schedulerName":"hami-scheduler"}})");
}

TEST_F(Admission, PriorityResourceBecomesCudaTaskPriority) {
  const std::string pod =
      R"({"spec":{"containers":[{"name":"c","env":[{"name":"A","value":"a"}],"resources":)"
      R"({"limits":{"nvidia.com/gpu":1,"nvidia.com/gpucores":50,"nvidia.com/priority":"1"}}}]}})";
  Answer a = run(pod);
  expect_json_eq(a.patched,
                 R"({"spec":{"containers":[{"name":"c","env":[{"name":"A","value":"a"},)"
                 R"({"name":"CUDA_TASK_PRIORITY","value":"1"}],"resources":{"limits":)"
                 R"({"nvidia.com/gpu":1,"nvidia.com/gpucores":50,"nvidia.com/priority":"1"}}}],)"
                 R"("schedulerName":"hami-scheduler"}})");
}

TEST_F(Admission, PriorityInRequestsOnlyIsIgnored) {
  Answer a =
      run(R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1",)"
          R"("nvidia.com/gpucores":"10"},"requests":{"nvidia.com/priority":"0"}}}]}})");
  ASSERT_EQ(a.ops.size(), 1u);  // only schedulerName
}

TEST_F(Admission, CorePolicyEnvGoesToEveryContainerUnlessDefault) {
  const std::string pod =
      R"({"spec":{"containers":[{"name":"gpu","resources":{"limits":{"nvidia.com/gpu":"1",)"
      R"("nvidia.com/gpucores":"10"}}},{"name":"sidecar"}]}})";
  config.gpu_core_policy = "default";
  EXPECT_EQ(run(pod).ops.size(), 1u);
  config.gpu_core_policy = "force";
  Answer a = run(pod);
  expect_json_eq(
      a.patched,
      R"({"spec":{"containers":[{"name":"gpu","resources":{"limits":{"nvidia.com/gpu":"1",)"
      R"("nvidia.com/gpucores":"10"}},"env":[{"name":"GPU_CORE_UTILIZATION_POLICY",)"
      R"("value":"force"}]},{"name":"sidecar","env":[{"name":)"
      R"("GPU_CORE_UTILIZATION_POLICY","value":"force"}]}],)"
      R"("schedulerName":"hami-scheduler"}})");
}

TEST_F(Admission, RuntimeClassNameIsSetOnlyOnGpuPodsWithoutOne) {
  config.runtime_class_name = "nvidia";
  const std::string gpu = R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                          R"({"nvidia.com/gpu":"1","nvidia.com/gpucores":"10"}}}]}})";
  Answer a = run(gpu);
  expect_json_eq(a.patched, R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                            R"({"nvidia.com/gpu":"1","nvidia.com/gpucores":"10"}}}],)"
                            R"("runtimeClassName":"nvidia","schedulerName":"hami-scheduler"}})");
  Answer kept =
      run(R"({"spec":{"runtimeClassName":"kata","containers":[{"name":"c",)"
          R"("resources":{"limits":{"nvidia.com/gpu":"1","nvidia.com/gpucores":"10"}}}]}})");
  ASSERT_EQ(kept.ops.size(), 1u);
  EXPECT_EQ(kept.ops[0].at("path").as_string(), "/spec/schedulerName");
  Answer cpu = run(R"({"spec":{"containers":[{"name":"c"}]}})");
  EXPECT_EQ(cpu.result.outcome, "allowed");
}

TEST_F(Admission, OverwriteEnvHidesGpusFromContainersWithoutOne) {
  config.overwrite_env = true;
  const std::string pod =
      R"({"spec":{"containers":[{"name":"gpu","resources":{"limits":{"nvidia.com/gpu":"1",)"
      R"("nvidia.com/gpucores":"10"}}},{"name":"log","env":[]}]}})";
  Answer a = run(pod);
  expect_json_eq(
      a.patched,
      R"({"spec":{"containers":[{"name":"gpu","resources":{"limits":{"nvidia.com/gpu":"1",)"
      R"("nvidia.com/gpucores":"10"}}},{"name":"log","env":[{"name":)"
      R"("NVIDIA_VISIBLE_DEVICES","value":"none"}]}],"schedulerName":"hami-scheduler"}})");
  // A pod without any GPU container is patched too, but keeps its scheduler.
  Answer cpu = run(R"({"spec":{"containers":[{"name":"c"}]}})");
  EXPECT_EQ(cpu.result.outcome, "patched");
  expect_json_eq(cpu.patched, R"({"spec":{"containers":[{"name":"c","env":[{"name":)"
                              R"("NVIDIA_VISIBLE_DEVICES","value":"none"}]}]}})");
}

TEST_F(Admission, InitContainersAreMutatedToo) {
  const std::string pod =
      R"({"spec":{"initContainers":[{"name":"warmup","resources":{"limits":{"nvidia.com/gpumem":)"
      R"("1000"}}}],"containers":[{"name":"c"}]}})";
  Answer a = run(pod);
  expect_json_eq(
      a.patched,
      R"({"spec":{"initContainers":[{"name":"warmup","resources":{"limits":{)"
      R"("nvidia.com/gpumem":"1000","nvidia.com/gpu":"1"}}}],"containers":[{"name":"c"}],)"
      R"("schedulerName":"hami-scheduler"}})");
}

TEST_F(Admission, ConfiguredResourceNamesAreUsed) {
  config.resource_count_name = "example.com/vgpu";
  config.resource_core_name = "example.com/vcores";
  Answer a =
      run(R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"example.com/vgpu":2,)"
          R"("nvidia.com/gpu":"1"}}}]}})");
  expect_json_eq(
      a.patched,
      R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"example.com/vgpu":2,)"
      R"("nvidia.com/gpu":"1","example.com/vcores":"100"}}}],)"
      R"("schedulerName":"hami-scheduler"}})");
}

TEST_F(Admission, ContainerWithoutResourcesGetsThemCreated) {
  // A count only in requests (the API server would refuse it, but the webhook must not crash).
  Answer a = run(R"({"spec":{"containers":[{"name":"c","resources":{"requests":{"nvidia.com/gpu":)"
                 R"("1"}}}]}})");
  expect_json_eq(a.patched,
                 R"({"spec":{"containers":[{"name":"c","resources":{"requests":)"
                 R"({"nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpucores":"100"}}}]}})");
}

// --- step 4 errors: invalid percentage -----------------------------------------------------

TEST_F(Admission, PercentageOutsideZeroToHundredIsAnInternalError) {
  for (const char* value : {"101", "-1", "\"1Ki\""}) {
    SCOPED_TRACE(value);
    Answer a = run(std::string(R"({"spec":{"containers":[{"name":"train","resources":{"limits":)") +
                   R"({"nvidia.com/gpu":"1","nvidia.com/gpumem-percentage":)" + value + "}}}]}}");
    EXPECT_EQ(a.result.outcome, "error");
    EXPECT_FALSE(a.allowed());
    EXPECT_EQ(a.code(), 500);
    EXPECT_THAT(a.message(), StartsWith("invalid nvidia.com/gpumem-percentage value "));
    EXPECT_THAT(a.message(),
                HasSubstr(" in container train: must be an integer between 0 and 100"));
    EXPECT_EQ(a.response.at("uid").as_string(), "705ab4f5-6393-11e8-b7cc-42010a800002");
  }
  Answer exact = run(R"({"spec":{"containers":[{"name":"train","resources":{"requests":)"
                     R"({"nvidia.com/gpumem-percentage":"101"}}}]}})");
  EXPECT_EQ(exact.message(),
            "invalid nvidia.com/gpumem-percentage value 101 in container train: must be an "
            "integer between 0 and 100");
  Answer edge = run(R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                    R"({"nvidia.com/gpu":"1","nvidia.com/gpumem-percentage":"0"}}}]}})");
  EXPECT_TRUE(edge.allowed());
}

// --- step 2, 5, 6: denials -----------------------------------------------------------------

TEST_F(Admission, PodWithoutContainersIsDenied) {
  for (const char* pod : {R"({"spec":{"containers":[]}})", R"({"spec":{}})", R"({})",
                          R"({"metadata":{"name":"x"}})"}) {
    SCOPED_TRACE(pod);
    Answer a = run(pod);
    EXPECT_EQ(a.result.outcome, "denied");
    EXPECT_FALSE(a.allowed());
    EXPECT_EQ(a.code(), 403);
    EXPECT_EQ(a.message(), "pod has no containers");
    EXPECT_EQ(a.response.at("status").at("reason").as_string(), "Forbidden");
  }
}

TEST_F(Admission, DenialHasControllerRuntimesExactShape) {
  Answer a = run_body(review_body(R"({"spec":{"containers":[]}})", "admission.k8s.io/v1", "u-1"));
  EXPECT_EQ(
      a.result.body,
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"u-1",)"
      R"("allowed":false,"status":{"metadata":{},"message":"pod has no containers",)"
      R"("reason":"Forbidden","code":403}}})"
      "\n");
}

TEST_F(Admission, PrivilegedContainerInAGpuPodIsDenied) {
  Answer a = run(R"({"spec":{"initContainers":[{"name":"setup","securityContext":{"privileged":)"
                 R"(true}}],"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":)"
                 R"("1"}}}]}})");
  EXPECT_EQ(a.result.outcome, "denied");
  EXPECT_EQ(a.code(), 403);
  EXPECT_EQ(a.message(), "container setup is privileged");

  Answer same = run(R"({"spec":{"containers":[{"name":"c","securityContext":{"privileged":true},)"
                    R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})");
  EXPECT_EQ(same.message(), "container c is privileged");
}

TEST_F(Admission, PrivilegedContainerWithoutGpusIsLeftAlone) {
  Answer a = run(R"({"spec":{"containers":[{"name":"c","securityContext":{"privileged":true}}]}})");
  EXPECT_EQ(a.result.outcome, "allowed");
  Answer unprivileged =
      run(R"({"spec":{"containers":[{"name":"c","securityContext":{"privileged":false},)"
          R"("resources":{"limits":{"nvidia.com/gpu":"1","nvidia.com/gpucores":"5"}}}]}})");
  EXPECT_EQ(unprivileged.result.outcome, "patched");
}

TEST_F(Admission, GpuPodWithANodeAlreadyAssignedIsDenied) {
  const std::string pod = R"({"spec":{"nodeName":"gpu-1","containers":[{"name":"c","resources":)"
                          R"({"limits":{"nvidia.com/gpu":"1"}}}]}})";
  Answer a = run(pod);
  EXPECT_EQ(a.result.outcome, "denied");
  EXPECT_EQ(a.message(), "pod has node assigned");
  // Without a scheduler name to set, HAMi never looks at nodeName.
  options.scheduler_name = "";
  Answer b = run(pod);
  EXPECT_EQ(b.result.outcome, "patched");
  expect_json_eq(b.patched, R"({"spec":{"nodeName":"gpu-1","containers":[{"name":"c","resources":)"
                            R"({"limits":{"nvidia.com/gpu":"1","nvidia.com/gpucores":"100"}}}]}})");
  // A pod without devices on a node is none of HAMi's business.
  options.scheduler_name = "hami-scheduler";
  EXPECT_EQ(run(R"({"spec":{"nodeName":"n","containers":[{"name":"c"}]}})").result.outcome,
            "allowed");
}

// --- step 3: the scheduler-name gate --------------------------------------------------------

TEST_F(Admission, PodOfAnotherSchedulerIsAllowedUntouched) {
  const std::string pod = R"({"spec":{"schedulerName":"volcano","containers":[{"name":"c",)"
                          R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
  Answer a = run(pod);
  EXPECT_EQ(a.result.outcome, "allowed");
  EXPECT_TRUE(a.allowed());
  EXPECT_EQ(a.code(), 200);
  EXPECT_EQ(a.message(), "pod already has different scheduler assigned");
  EXPECT_FALSE(a.response.contains("patch"));
  EXPECT_FALSE(a.response.at("status").as_object().contains("reason"));
  // Also when no scheduler name is configured.
  options.scheduler_name = "";
  EXPECT_EQ(run(pod).message(), "pod already has different scheduler assigned");
}

TEST_F(Admission, DefaultSchedulerIsTakenOverOnlyWithForceOverwrite) {
  const std::string pod = R"({"spec":{"schedulerName":"default-scheduler","containers":[{"name":)"
                          R"("c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
  Answer forced = run(pod);
  EXPECT_EQ(forced.result.outcome, "patched");
  EXPECT_EQ(forced.patched.at("spec").at("schedulerName").as_string(), "hami-scheduler");
  // Changed keys come in the original's order: schedulerName precedes containers there.
  expect_json_eq(forced.ops.front(),
                 R"({"op":"replace","path":"/spec/schedulerName","value":"hami-scheduler"})");

  options.force_overwrite_default_scheduler = false;
  Answer kept = run(pod);
  EXPECT_EQ(kept.result.outcome, "allowed");
  EXPECT_EQ(kept.message(), "pod already has different scheduler assigned");
}

TEST_F(Admission, PodAlreadyNamingOurSchedulerIsProcessed) {
  Answer a = run(R"({"spec":{"schedulerName":"hami-scheduler","containers":[{"name":"c",)"
                 R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})");
  EXPECT_EQ(a.result.outcome, "patched");
  ASSERT_EQ(a.ops.size(), 1u);  // the cores; the scheduler name is already right
  EXPECT_EQ(a.ops[0].at("path").as_string(),
            "/spec/containers/0/resources/limits/nvidia.com~1gpucores");
}

// --- step 7: quota ---------------------------------------------------------------------------

TEST_F(Admission, QuotaIsCheckedOnTheMutatedPodAndDeniesWithTheDetail) {
  std::optional<model::Pod> seen;
  quota = [&](const model::Pod& pod) -> std::optional<std::string> {
    seen = pod;
    return "nvidia.com/gpucores: used 100 + requested 100 > limit 150 in namespace team-a";
  };
  Answer a = run(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":)"
                 R"({"limits":{"nvidia.com/gpu":"1"}}}]}})");
  EXPECT_EQ(a.result.outcome, "denied");
  EXPECT_EQ(a.code(), 403);
  EXPECT_EQ(a.message(),
            "exceeding resource quota: nvidia.com/gpucores: used 100 + requested 100 > limit 150 "
            "in namespace team-a");
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->metadata.name, "p");
  EXPECT_EQ(seen->metadata.namespace_, "team-a") << "taken from the request";
  EXPECT_EQ(seen->spec.scheduler_name, "hami-scheduler");
  ASSERT_EQ(seen->spec.containers.size(), 1u);
  EXPECT_EQ(seen->spec.containers[0].resources.limits.at("nvidia.com/gpucores").as_int64(), 100);
}

TEST_F(Admission, QuotaDenialWithoutDetailIsHamisMessage) {
  quota = [](const model::Pod&) -> std::optional<std::string> { return ""; };
  Answer a = run(R"({"spec":{"containers":[{"name":"c"}]}})");
  EXPECT_EQ(a.result.outcome, "denied");
  EXPECT_EQ(a.message(), "exceeding resource quota");
}

TEST_F(Admission, QuotaThatFitsLetsThePatchThrough) {
  int calls = 0;
  quota = [&](const model::Pod&) -> std::optional<std::string> {
    ++calls;
    return std::nullopt;
  };
  Answer a = run(R"({"metadata":{"namespace":"ml"},"spec":{"containers":[{"name":"c",)"
                 R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})");
  EXPECT_EQ(a.result.outcome, "patched");
  EXPECT_EQ(calls, 1);
  // Gated and denied pods never reach the quota check.
  run(R"({"spec":{"schedulerName":"other","containers":[{"name":"c"}]}})");
  run(R"({"spec":{"containers":[]}})");
  EXPECT_EQ(calls, 1);
}

// --- AdmissionReview versions and echo --------------------------------------------------------

TEST_F(Admission, BothReviewVersionsAreAnsweredInTheirOwnVersion) {
  const std::string pod = R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                          R"({"nvidia.com/gpu":"1"}}}]}})";
  for (const char* version : {"admission.k8s.io/v1", "admission.k8s.io/v1beta1"}) {
    SCOPED_TRACE(version);
    Answer a =
        run_body(review_body(pod, version, "uid-" + std::string(version)), "application/json", pod);
    EXPECT_EQ(a.review.at("apiVersion").as_string(), version);
    EXPECT_EQ(a.review.at("kind").as_string(), "AdmissionReview");
    EXPECT_EQ(a.response.at("uid").as_string(), "uid-" + std::string(version));
    EXPECT_EQ(a.result.outcome, "patched");
    EXPECT_EQ(a.patched.at("spec").at("schedulerName").as_string(), "hami-scheduler");
  }
}

TEST_F(Admission, MissingKindAndApiVersionDefaultToV1) {
  Answer a = run_body(R"({"request":{"uid":"x","object":{"spec":{"containers":[{"name":"c"}]}}}})");
  EXPECT_EQ(a.review.at("apiVersion").as_string(), "admission.k8s.io/v1");
  EXPECT_EQ(a.response.at("uid").as_string(), "x");
  EXPECT_TRUE(a.allowed());
}

// --- untrusted input ---------------------------------------------------------------------------

void expect_generic_error(const Answer& a, int code, std::string_view message_part) {
  EXPECT_EQ(a.result.outcome, "error");
  EXPECT_FALSE(a.allowed());
  EXPECT_EQ(a.code(), code);
  EXPECT_THAT(a.message(), HasSubstr(std::string(message_part)));
  EXPECT_FALSE(a.review.contains("apiVersion")) << "controller-runtime cannot name a version";
  EXPECT_EQ(a.response.at("uid").as_string(), "");
}

TEST_F(Admission, EmptyBodyAndWrongContentTypeAreBadRequests) {
  expect_generic_error(run_body(""), 400, "request body is empty");
  const std::string ok = review_body(R"({"spec":{"containers":[{"name":"c"}]}})");
  Answer a = run_body(ok, "text/plain");
  expect_generic_error(a, 400, "contentType=text/plain, expected application/json");
  EXPECT_EQ(a.result.body,
            R"({"response":{"uid":"","allowed":false,"status":{"metadata":{},"message":)"
            R"("contentType=text/plain, expected application/json","code":400}}})"
            "\n");
  // controller-runtime compares the header exactly.
  expect_generic_error(run_body(ok, "application/json; charset=utf-8"), 400, "contentType=");
  expect_generic_error(run_body(ok, ""), 400, "contentType=, expected");
}

TEST_F(Admission, GarbageBodiesAreBadRequests) {
  for (std::string body :
       {std::string("not json"), std::string("{"), std::string("[]"), std::string("null"),
        std::string("42"), std::string("\"AdmissionReview\""), std::string("{} trailing"),
        std::string("{\"kind\":\"AdmissionReview\",\"x\":\"\xff\"}"), std::string("{\"kind\":1}"),
        std::string("{\"apiVersion\":[]}"), std::string("{\"request\":[]}"),
        std::string("{\"request\":{\"uid\":7}}"),
        std::string("{\"request\":{\"uid\":\"u\",\"namespace\":{}}}"), std::string("\0{}", 3)}) {
    SCOPED_TRACE(body);
    Answer a = run_body(body);
    expect_generic_error(a, 400, "");
  }
}

TEST_F(Admission, OtherKindsAndVersionsAreNotAdmissionReviews) {
  expect_generic_error(run_body(R"({"apiVersion":"v1","kind":"Pod"})"), 400,
                       "no kind \"Pod\" is registered for version \"v1\"");
  expect_generic_error(run_body(R"({"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview"})"),
                       400, "admission.k8s.io/v2");
}

TEST_F(Admission, MissingRequestOrObjectHasNoContentToDecode) {
  for (const char* body :
       {R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"})",
        R"({"apiVersion":"admission.k8s.io/v1beta1","request":null})",
        R"({"apiVersion":"admission.k8s.io/v1beta1","request":{"uid":"u"}})",
        R"({"apiVersion":"admission.k8s.io/v1beta1","request":{"uid":"u","object":null}})"}) {
    SCOPED_TRACE(body);
    Answer a = run_body(body);
    EXPECT_EQ(a.result.outcome, "error");
    EXPECT_EQ(a.code(), 400);
    EXPECT_EQ(a.message(), "there is no content to decode");
    EXPECT_EQ(a.review.at("kind").as_string(), "AdmissionReview");  // decoded: typed answer
  }
}

TEST_F(Admission, ObjectThatIsNotAPodIsABadRequest) {
  Answer node = run_body(review_body(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}})",
                                     "admission.k8s.io/v1beta1", "u-node"));
  EXPECT_EQ(node.result.outcome, "error");
  EXPECT_EQ(node.code(), 400);
  EXPECT_EQ(node.message(), "unable to decode /v1, Kind=Node into *v1.Pod");
  EXPECT_EQ(node.review.at("apiVersion").as_string(), "admission.k8s.io/v1beta1");
  EXPECT_EQ(node.response.at("uid").as_string(), "u-node");

  Answer deploy = run_body(review_body(R"({"apiVersion":"apps/v1","kind":"Deployment"})"));
  EXPECT_EQ(deploy.message(), "unable to decode apps/v1, Kind=Deployment into *v1.Pod");

  for (const char* object : {"\"pod\"", "[]", "17", "true"}) {
    SCOPED_TRACE(object);
    Answer a = run_body(review_body(object));
    EXPECT_EQ(a.result.outcome, "error");
    EXPECT_EQ(a.code(), 400);
  }
}

TEST_F(Admission, PodTheModelDecoderRefusesIsABadRequest) {
  for (
      const char* pod :
      {R"({"spec":{"containers":{"name":"c"}}})",
       R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"lots"}}}]}})",
       R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":1e300}}}]}})",
       R"({"spec":{"containers":[{"name":"c","securityContext":{"privileged":"yes"}}]}})"}) {
    SCOPED_TRACE(pod);
    Answer a = run(pod);
    EXPECT_EQ(a.result.outcome, "error");
    EXPECT_EQ(a.code(), 400);
    EXPECT_THAT(a.message(), StartsWith("couldn't decode the pod: "));
  }
}

TEST_F(Admission, HugeNumbersAndDeepNestingNeverCrash) {
  const std::string big = std::string(400, '9');
  for (const std::string& pod : std::vector<std::string>{
           R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":)" + big +
               "}}}]}}",
           R"({"spec":{"priority":)" + big + R"(,"containers":[{"name":"c"}]}})",
           R"({"metadata":{"x":1e999999},"spec":{"containers":[{"name":"c"}]}})",
           R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1",)"
           R"("nvidia.com/gpumem-percentage":"9223372036854775807000"}}}]}})"}) {
    Answer a = run(pod);
    EXPECT_FALSE(a.result.outcome.empty());
  }
  for (size_t depth : {100u, 127u, 1000u, 100000u}) {
    SCOPED_TRACE(depth);
    const std::string deep = R"({"spec":{"containers":[{"name":"c"}]},"metadata":{"x":)" +
                             std::string(depth, '[') + std::string(depth, ']') + "}}";
    Answer a = run_body(review_body(deep));
    EXPECT_FALSE(a.result.outcome.empty());
    if (depth >= 1000) expect_generic_error(a, 400, "");
  }
}

TEST_F(Admission, CaseOfKeysMattersAsInKubernetes) {
  // Go's Kubernetes decoder matches keys exactly: "Spec" is not the spec.
  Answer a = run(R"({"Spec":{"containers":[{"name":"c","resources":{"limits":)"
                 R"({"nvidia.com/gpu":"1"}}}]}})");
  EXPECT_EQ(a.result.outcome, "denied");
  EXPECT_EQ(a.message(), "pod has no containers");
}

TEST_F(Admission, RepeatedKeysAreBadRequestsAsInTheApiServersStrictDecoding) {
  // Two uids: which one would the answer echo? Boost.JSON alone would keep one silently.
  const std::string two_uids =
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"a",)"
      R"("uid":"b","object":{"spec":{"containers":[{"name":"c"}]}}}})";
  expect_generic_error(run_body(two_uids), 400,
                       "couldn't decode AdmissionReview: duplicate key \"uid\" at request");
  // Anywhere in the pod too: a repeated limit could hide the device request HAMi would see.
  Answer pod = run_body(review_body(R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                                    R"({"nvidia.com/gpu":"1","nvidia.com/gpu":"2"}}}]}})"));
  expect_generic_error(pod, 400,
                       "duplicate key \"nvidia.com/gpu\" at "
                       "request.object.spec.containers[0].resources.limits");
  // The same key in two objects is no repetition.
  EXPECT_EQ(run(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"},{"name":"b"}]}})")
                .result.outcome,
            "allowed");
}

TEST_F(Admission, NumbersBeyondFloat64AreBadRequests) {
  for (const char* number : {"1e999", "-1e400", "1234567890e300"}) {
    SCOPED_TRACE(number);
    Answer a = run_body(review_body(std::string(R"({"metadata":{"x":[1,)") + number +
                                    R"(]},"spec":{"containers":[{"name":"c"}]}})"));
    expect_generic_error(a, 400, "is out of range of a float64 at request.object.metadata.x[1]");
  }
  // NaN and Infinity are no JSON at all.
  for (const char* number : {"NaN", "Infinity", "-Infinity"}) {
    SCOPED_TRACE(number);
    Answer a = run_body(review_body(std::string(R"({"metadata":{"x":)") + number +
                                    R"(},"spec":{"containers":[{"name":"c"}]}})"));
    expect_generic_error(a, 400, "couldn't decode AdmissionReview: invalid JSON");
  }
  // The largest finite numbers still pass.
  EXPECT_EQ(run(R"({"metadata":{"x":1.7976931348623157e308},"spec":{"containers":[{"name":"c"}]}})")
                .result.outcome,
            "allowed");
}

// A review with the request's own fields set (the API server always sends them).
std::string review_with(std::string_view request_fields, std::string_view pod) {
  return std::string(R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1",)"
                     R"("request":{"uid":"u-1","namespace":"team-a",)") +
         std::string(request_fields) + R"(,"object":)" + std::string(pod) + "}}";
}

TEST_F(Admission, OnlyPodCreationsAreMutatedAsTheRegistrationSays) {
  const std::string gpu_pod = R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c",)"
                              R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
  const std::string pod_kind = R"("kind":{"group":"","version":"v1","kind":"Pod"})";
  const std::string pods = R"("resource":{"group":"","version":"v1","resource":"pods"})";
  // The same pod on CREATE is patched: each case below differs in one field only.
  Answer create =
      run_body(review_with(R"("operation":"CREATE",)" + pod_kind + "," + pods, gpu_pod));
  ASSERT_EQ(create.result.outcome, "patched");
  struct Case {
    std::string fields;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {R"("operation":"DELETE",)" + pod_kind + "," + pods, "operation DELETE is not handled"},
           {R"("operation":"UPDATE",)" + pod_kind + "," + pods, "operation UPDATE is not handled"},
           {R"("operation":"CREATE","kind":{"group":"","version":"v1","kind":"Node"},)"
            R"("resource":{"group":"","version":"v1","resource":"nodes"})",
            "kind v1, Kind=Node is not handled"},
           {R"("operation":"CREATE","kind":{"group":"apps","version":"v1","kind":"Pod"},)" + pods,
            "kind apps/v1, Kind=Pod is not handled"},
           {R"("operation":"CREATE",)" + pod_kind +
                R"(,"resource":{"group":"","version":"v1","resource":"nodes"})",
            "resource v1, Resource=nodes is not handled"},
           {R"("operation":"CREATE",)" + pod_kind + "," + pods + R"(,"subResource":"status")",
            "subresource status is not handled"}}) {
    SCOPED_TRACE(c.fields);
    Answer a = run_body(review_with(c.fields, gpu_pod));
    EXPECT_EQ(a.result.outcome, "allowed");
    EXPECT_TRUE(a.allowed());
    EXPECT_FALSE(a.response.contains("patch"));
    EXPECT_EQ(a.code(), 200);
    EXPECT_THAT(a.message(), StartsWith(c.message));
    EXPECT_EQ(a.response.at("uid").as_string(), "u-1");
  }
  // The fields have Kubernetes' types.
  for (const char* fields : {R"("operation":7)", R"("kind":"Pod")", R"("kind":{"kind":1})",
                             R"("resource":[])", R"("subResource":{})"}) {
    SCOPED_TRACE(fields);
    expect_generic_error(run_body(review_with(fields, gpu_pod)), 400,
                         "couldn't decode AdmissionReview: request.");
  }
}

// --- vendors -------------------------------------------------------------------------------

class OtherVendor final : public device::DeviceBackend {
 public:
  std::string_view vendor() const override { return "Acme"; }
  const device::ResourceNames& resource_names() const override { return names_; }
  std::string_view to_allocate_annotation() const override { return "acme/to-allocate"; }
  std::string_view allocated_annotation() const override { return "acme/allocated"; }
  device::ContainerDeviceRequest request_for(const model::Container&) const override { return {}; }
  device::NodeDevices node_devices(const model::Node&) const override { return {}; }
  std::unique_ptr<device::PreparedPod> prepare(const model::Pod&) const override { return nullptr; }
  bool is_mig_request(const device::PreparedPod&,
                      std::span<device::DeviceUsage* const>) const override {
    return false;
  }
  device::FitOutcome fit(std::span<device::DeviceUsage* const>,
                         const device::ContainerDeviceRequest&,
                         const device::FitContext&) const override {
    return {};
  }
  Status add_usage(device::DeviceUsage&, device::ContainerDevice&) const override {
    return ok_status();
  }
  void annotate_allocation(const device::PodSingleDevice&, const device::AnnotationContext&,
                           std::map<std::string, std::string>&) const override {}

 private:
  device::ResourceNames names_{"acme.com/gpu", "", "", "", 1};
};

TEST(AdmissionVendors, AVendorWithoutMutationOnlyMarksItsPodsAndNoBackendsMeansNoMutation) {
  const std::string pod = R"({"spec":{"containers":[{"name":"c","resources":{"limits":)"
                          R"({"acme.com/gpu":"1","nvidia.com/gpu":"1"}}}]}})";
  device::DeviceRegistry acme_only;
  acme_only.add(std::make_shared<OtherVendor>());
  AdmissionResult r = handle_admission(review_body(pod), "application/json", acme_only,
                                       {"hami-scheduler", true}, {});
  ASSERT_EQ(r.outcome, "patched") << r.body;
  // The scheduler name and nothing else: NVIDIA's mutation is not configured here.
  const std::string patch =
      base64_decode(std::string(json::parse(r.body).at("response").at("patch").as_string()));
  EXPECT_EQ(json::parse(patch),
            json::parse(R"([{"op":"add","path":"/spec/schedulerName","value":"hami-scheduler"}])"));

  device::DeviceRegistry both;
  both.add(std::make_shared<OtherVendor>());
  both.add(std::make_shared<device::nvidia::NvidiaBackend>());
  r = handle_admission(review_body(pod), "application/json", both, {"hami-scheduler", true}, {});
  EXPECT_EQ(r.outcome, "patched") << r.body;

  device::DeviceRegistry none;
  r = handle_admission(review_body(pod), "application/json", none, {"hami-scheduler", true}, {});
  EXPECT_EQ(r.outcome, "allowed") << r.body;
}

}  // namespace
}  // namespace hamisim::webhook
