// The pod's DRA fields (spec.resourceClaims, containers' resources.claims,
// status.resourceClaimStatuses): decoding as Go does, and the API's checks of
// spec.resourceClaims (reference dra.md §1.7).

#include <gtest/gtest.h>

#include <string>

#include "model/decode.h"
#include "model/objects.h"

namespace hamisim::model {
namespace pod_claims_test {

Pod pod_ok(std::string_view json) {
  auto pod = decode_pod_json(json);
  EXPECT_TRUE(pod.ok()) << pod.error().message << "\n" << json;
  return pod.ok() ? *pod : Pod{};
}

std::string pod_error(std::string_view json) {
  auto pod = decode_pod_json(json);
  EXPECT_FALSE(pod.ok()) << json;
  return pod.ok() ? std::string() : pod.error().message;
}

// A pod with `claims` as its spec.resourceClaims (JSON array text).
std::string pod_with_claims(std::string_view claims) {
  return R"({"kind":"Pod","spec":{"containers":[{"name":"c"}],"resourceClaims":)" +
         std::string(claims) + "}}";
}

// ---- decoding ----

// As the API server returns a pod whose template claim has been created by the controller.
constexpr std::string_view kDraPod = R"({
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"name": "trainer", "namespace": "ml"},
  "spec": {
    "initContainers": [{
      "name": "warmup",
      "image": "busybox",
      "resources": {"claims": [{"name": "gpus", "request": "first"}]}
    }],
    "containers": [{
      "name": "main",
      "image": "cuda",
      "resources": {
        "limits": {"cpu": "1"},
        "claims": [{"name": "gpus"}, {"name": "shared", "request": "nic"}]
      }
    }, {
      "name": "plain",
      "image": "busybox"
    }],
    "resourceClaims": [
      {"name": "gpus", "resourceClaimTemplateName": "two-gpus"},
      {"name": "shared", "resourceClaimName": "team-nic"}
    ]
  },
  "status": {
    "phase": "Pending",
    "resourceClaimStatuses": [
      {"name": "gpus", "resourceClaimName": "trainer-gpus-x7k2p"},
      {"name": "skipped"}
    ]
  }
})";

TEST(PodClaimsDecodeTest, DecodesClaimsOfSpecContainersAndStatus) {
  const Pod pod = pod_ok(kDraPod);
  ASSERT_EQ(pod.spec.resource_claims.size(), 2u);
  const PodResourceClaim& gpus = pod.spec.resource_claims[0];
  EXPECT_EQ(gpus.name, "gpus");
  EXPECT_EQ(gpus.resource_claim_name, std::nullopt);
  EXPECT_EQ(gpus.resource_claim_template_name, "two-gpus");
  const PodResourceClaim& shared = pod.spec.resource_claims[1];
  EXPECT_EQ(shared.name, "shared");
  EXPECT_EQ(shared.resource_claim_name, "team-nic");
  EXPECT_EQ(shared.resource_claim_template_name, std::nullopt);

  ASSERT_EQ(pod.spec.init_containers.size(), 1u);
  const auto& init_claims = pod.spec.init_containers[0].resources.claims;
  ASSERT_EQ(init_claims.size(), 1u);
  EXPECT_EQ(init_claims[0].name, "gpus");
  EXPECT_EQ(init_claims[0].request, "first");

  ASSERT_EQ(pod.spec.containers.size(), 2u);
  const auto& main_claims = pod.spec.containers[0].resources.claims;
  ASSERT_EQ(main_claims.size(), 2u);
  EXPECT_EQ(main_claims[0].name, "gpus");
  EXPECT_EQ(main_claims[0].request, "");
  EXPECT_EQ(main_claims[1].name, "shared");
  EXPECT_EQ(main_claims[1].request, "nic");
  EXPECT_EQ(pod.spec.containers[0].resources.limits.size(), 1u);  // read beside the claims
  EXPECT_TRUE(pod.spec.containers[1].resources.claims.empty());

  ASSERT_EQ(pod.status.resource_claim_statuses.size(), 2u);
  EXPECT_EQ(pod.status.resource_claim_statuses[0].name, "gpus");
  EXPECT_EQ(pod.status.resource_claim_statuses[0].resource_claim_name, "trainer-gpus-x7k2p");
  EXPECT_EQ(pod.status.resource_claim_statuses[1].name, "skipped");
  EXPECT_EQ(pod.status.resource_claim_statuses[1].resource_claim_name, std::nullopt);
}

TEST(PodClaimsDecodeTest, YamlPodDecodesTheSame) {
  auto pod = decode_pod(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    resources:
      claims:
      - name: gpu
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: one-gpu
status:
  resourceClaimStatuses:
  - {name: gpu, resourceClaimName: p-gpu-abcde}
)");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  ASSERT_EQ(pod->spec.resource_claims.size(), 1u);
  EXPECT_EQ(pod->spec.resource_claims[0].resource_claim_template_name, "one-gpu");
  ASSERT_EQ(pod->spec.containers[0].resources.claims.size(), 1u);
  EXPECT_EQ(pod->spec.containers[0].resources.claims[0].name, "gpu");
  ASSERT_EQ(pod->status.resource_claim_statuses.size(), 1u);
  EXPECT_EQ(pod->status.resource_claim_statuses[0].resource_claim_name, "p-gpu-abcde");
}

TEST(PodClaimsDecodeTest, KeysFoldAndUnknownKeysAreIgnoredAsElsewhere) {
  const Pod pod = pod_ok(R"({"spec":{"ResourceClaims":[
      {"NAME":"gpu","resourceclaimname":"c1","source":{"old":"shape"}}],
      "containers":[{"resources":{"CLAIMS":[{"name":"gpu","extra":[1]}]}}]},
      "status":{"resourceclaimstatuses":[{"Name":"gpu","future":true}]}})");
  ASSERT_EQ(pod.spec.resource_claims.size(), 1u);
  EXPECT_EQ(pod.spec.resource_claims[0].name, "gpu");
  EXPECT_EQ(pod.spec.resource_claims[0].resource_claim_name, "c1");
  ASSERT_EQ(pod.spec.containers[0].resources.claims.size(), 1u);
  EXPECT_EQ(pod.spec.containers[0].resources.claims[0].name, "gpu");
  ASSERT_EQ(pod.status.resource_claim_statuses.size(), 1u);
  EXPECT_EQ(pod.status.resource_claim_statuses[0].name, "gpu");
}

TEST(PodClaimsDecodeTest, NullResetsPointersAndLists) {
  const Pod pod = pod_ok(R"({"spec":{
      "resourceClaims":[{"name":"a","resourceClaimName":"x","resourceClaimTemplateName":"t",
                         "resourceClaimName":null}],
      "containers":[{"resources":{"claims":[{"name":"a"}],"claims":null}}]},
      "status":{"resourceClaimStatuses":[{"name":"a","resourceClaimName":"g"}],
                "resourceClaimStatuses":[{"resourceClaimName":null}]}})");
  ASSERT_EQ(pod.spec.resource_claims.size(), 1u);
  EXPECT_EQ(pod.spec.resource_claims[0].resource_claim_name, std::nullopt);
  EXPECT_EQ(pod.spec.resource_claims[0].resource_claim_template_name, "t");
  EXPECT_TRUE(pod.spec.containers[0].resources.claims.empty());
  // The second list decodes into the first one's element, as Go reuses it.
  ASSERT_EQ(pod.status.resource_claim_statuses.size(), 1u);
  EXPECT_EQ(pod.status.resource_claim_statuses[0].name, "a");
  EXPECT_EQ(pod.status.resource_claim_statuses[0].resource_claim_name, std::nullopt);
}

TEST(PodClaimsDecodeTest, WrongTypesNameTheFieldPath) {
  EXPECT_EQ(pod_error(R"({"spec":{"resourceClaims":{}}})"),
            "spec.resourceClaims: expected an array, got object");
  EXPECT_EQ(pod_error(R"({"spec":{"resourceClaims":[{"name":"a","resourceClaimName":3}]}})"),
            "spec.resourceClaims[0].resourceClaimName: expected a string, got number");
  EXPECT_EQ(pod_error(R"({"spec":{"containers":[{},{"resources":{"claims":[{"request":[]}]}}]}})"),
            "spec.containers[1].resources.claims[0].request: expected a string, got array");
  EXPECT_EQ(pod_error(R"({"status":{"resourceClaimStatuses":[7]}})"),
            "status.resourceClaimStatuses[0]: expected an object, got number");
}

TEST(PodClaimsDecodeTest, PodWithoutClaimsHasNone) {
  const Pod pod = pod_ok(R"({"spec":{"containers":[{"name":"c"}]}})");
  EXPECT_TRUE(pod.spec.resource_claims.empty());
  EXPECT_TRUE(pod.status.resource_claim_statuses.empty());
  EXPECT_FALSE(has_resource_claims(pod));
  EXPECT_TRUE(has_resource_claims(pod_ok(kDraPod)));
}

// ---- the API's checks of spec.resourceClaims ----

TEST(PodClaimsValidationTest, NameIsRequired) {
  EXPECT_EQ(pod_error(pod_with_claims(R"([{"resourceClaimName":"c"}])")),
            "spec.resourceClaims[0].name: is required");
  EXPECT_EQ(pod_error(pod_with_claims(R"([{"name":"a","resourceClaimName":"c"},
                                          {"name":"","resourceClaimName":"c"}])")),
            "spec.resourceClaims[1].name: is required");
}

TEST(PodClaimsValidationTest, NameIsADnsLabel) {
  const std::string suffix =
      R"( is not a DNS label (lower case letters, digits and '-', at most 63))";
  EXPECT_EQ(pod_error(pod_with_claims(R"([{"name":"GPU","resourceClaimName":"c"}])")),
            "spec.resourceClaims[0].name: \"GPU\"" + suffix);
  EXPECT_EQ(pod_error(pod_with_claims(R"([{"name":"my.gpu","resourceClaimName":"c"}])")),
            "spec.resourceClaims[0].name: \"my.gpu\"" + suffix);
  EXPECT_EQ(pod_error(pod_with_claims(R"([{"name":"-gpu","resourceClaimName":"c"}])")),
            "spec.resourceClaims[0].name: \"-gpu\"" + suffix);
  const std::string long_name(64, 'a');
  EXPECT_EQ(
      pod_error(pod_with_claims(R"([{"name":")" + long_name + R"(","resourceClaimName":"c"}])")),
      "spec.resourceClaims[0].name: \"" + long_name + "\"" + suffix);
  pod_ok(
      pod_with_claims(R"([{"name":")" + std::string(63, 'a') + R"(","resourceClaimName":"c"}])"));
  pod_ok(pod_with_claims(R"([{"name":"0-gpu-9","resourceClaimName":"c"}])"));
}

TEST(PodClaimsValidationTest, ControlCharactersInNamesAreQuotedInErrors) {
  EXPECT_EQ(pod_error(pod_with_claims(R"([{"name":"a\nb","resourceClaimName":"c"}])")),
            "spec.resourceClaims[0].name: \"a\\nb\" is not a DNS label (lower case letters, "
            "digits and '-', at most 63)");
}

TEST(PodClaimsValidationTest, NamesAreUniqueInThePod) {
  EXPECT_EQ(pod_error(pod_with_claims(R"([{"name":"gpu","resourceClaimName":"a"},
                                          {"name":"nic","resourceClaimName":"b"},
                                          {"name":"gpu","resourceClaimTemplateName":"t"}])")),
            "spec.resourceClaims[2].name: \"gpu\" is used twice");
}

TEST(PodClaimsValidationTest, ExactlyOneSourceIsSet) {
  const std::string message =
      "spec.resourceClaims[0]: exactly one of resourceClaimName and resourceClaimTemplateName "
      "must be set";
  EXPECT_EQ(pod_error(pod_with_claims(R"([{"name":"gpu"}])")), message);
  EXPECT_EQ(pod_error(pod_with_claims(
                R"([{"name":"gpu","resourceClaimName":"a","resourceClaimTemplateName":"t"}])")),
            message);
  // null unsets a Go pointer: the entry has no source.
  EXPECT_EQ(pod_error(pod_with_claims(R"([{"name":"gpu","resourceClaimName":null}])")), message);
}

TEST(PodClaimsValidationTest, TheSourceIsAnObjectName) {
  const std::string suffix =
      " is not an object name (a DNS subdomain: lower case letters, digits, '-' and '.', at most "
      "253)";
  // An empty string is set (a Go *string), and not a name.
  EXPECT_EQ(pod_error(pod_with_claims(R"([{"name":"gpu","resourceClaimName":""}])")),
            "spec.resourceClaims[0].resourceClaimName: \"\"" + suffix);
  EXPECT_EQ(pod_error(pod_with_claims(R"([{"name":"gpu","resourceClaimTemplateName":"A_b"}])")),
            "spec.resourceClaims[0].resourceClaimTemplateName: \"A_b\"" + suffix);
  pod_ok(pod_with_claims(R"([{"name":"gpu","resourceClaimName":"team.gpu-claim.v2"}])"));
}

TEST(PodClaimsValidationTest, CheckedOnTheMergedPodAsGoDecodesRepeatedKeys) {
  // The first spec alone would be refused; the second one completes its entry.
  const Pod pod = pod_ok(R"({"spec":{"resourceClaims":[{"name":"gpu"}]},
                             "spec":{"resourceClaims":[{"resourceClaimName":"c"}]}})");
  ASSERT_EQ(pod.spec.resource_claims.size(), 1u);
  EXPECT_EQ(pod.spec.resource_claims[0].name, "gpu");
  EXPECT_EQ(pod.spec.resource_claims[0].resource_claim_name, "c");
}

TEST(PodClaimsValidationTest, ErrorsInListsAndBuffersCarryTheItemPath) {
  auto set = decode_objects_json(R"({"kind":"List","items":[{"kind":"Pod"},
      {"kind":"Pod","spec":{"resourceClaims":[{"name":"g"},{"name":"g"}]}}]})");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message,
            "items[1].spec.resourceClaims[0]: exactly one of "
            "resourceClaimName and resourceClaimTemplateName must be set");

  std::string buffer = pod_with_claims(R"([{"name":"X","resourceClaimName":"c"}])");
  const size_t size = buffer.size();
  buffer.append(kJsonPadding, ' ');
  auto pod = decode_pod_json_in_buffer(std::string_view(buffer).substr(0, size), "args.Pod");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.error().message,
            "args.Pod.spec.resourceClaims[0].name: \"X\" is not a DNS label (lower case letters, "
            "digits and '-', at most 63)");
}

// Container claims and statuses are what the API server accepted, read as they are: they do
// not change what is allocated.
TEST(PodClaimsValidationTest, ContainerClaimsAndStatusesAreNotChecked) {
  const Pod pod =
      pod_ok(R"({"spec":{"containers":[{"resources":{"claims":[{"name":"Not A Label"}]}}]},
      "status":{"resourceClaimStatuses":[{"name":""},{"name":""}]}})");
  EXPECT_EQ(pod.spec.containers[0].resources.claims.size(), 1u);
  EXPECT_EQ(pod.status.resource_claim_statuses.size(), 2u);
}

}  // namespace pod_claims_test
}  // namespace hamisim::model
