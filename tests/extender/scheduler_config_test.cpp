// KubeSchedulerConfiguration v1 loading as Cluster Autoscaler does it (reference §3.1, §5):
// decoding, defaulting, kube-scheduler's validation, CA's derived NodeResourcesFit ignore list
// and the facts `hamisim doctor` reports on.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "extender/extender_facts.h"
#include "extender/scheduler_config.h"

namespace hamisim::extender {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// The CA + HAMi example of reference §5.
constexpr const char* kCaHami = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      ignoredResources: []
      ignoredResourceGroups: []
extenders:
- urlPrefix: "http://hami-scheduler.kube-system.svc:80"
  filterVerb: filter
  nodeCacheCapable: false
  httpTimeout: 5s
  ignorable: false
  enableHTTPS: false
  managedResources:
  - name: nvidia.com/gpu
    ignoredByScheduler: false
  - name: nvidia.com/gpumem
    ignoredByScheduler: true
  - name: nvidia.com/gpucores
    ignoredByScheduler: true
  - name: nvidia.com/gpumem-percentage
    ignoredByScheduler: true
  - name: nvidia.com/priority
    ignoredByScheduler: true
)";

// A config whose extenders section is `extenders` (YAML, indented as a top-level key's value).
std::string with_extenders(const std::string& extenders, const std::string& profiles = "") {
  return "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" +
         profiles + "extenders:\n" + extenders;
}

std::string error_of(const std::string& text, const LoadOptions& options = {}) {
  auto r = parse_scheduler_config(text, "ca-config.yaml", options);
  if (r) return "<loaded>";
  return r.error().message;
}

TEST(SchedulerConfig, LoadsTheCaHamiExample) {
  auto r = parse_scheduler_config(kCaHami, "ca-config.yaml");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->profiles.size(), 1u);
  EXPECT_EQ(r->profiles[0].scheduler_name, "default-scheduler");
  ASSERT_TRUE(r->profiles[0].node_resources_fit);
  ASSERT_EQ(r->extenders.size(), 1u);
  const ExtenderConfig& e = r->extenders[0];
  EXPECT_EQ(e.url_prefix, "http://hami-scheduler.kube-system.svc:80");
  EXPECT_EQ(e.filter_verb, "filter");
  EXPECT_FALSE(e.node_cache_capable);
  EXPECT_EQ(e.http_timeout, 5s);
  EXPECT_FALSE(e.ignorable);
  EXPECT_FALSE(e.enable_https);
  EXPECT_FALSE(e.tls_config.has_value());
  ASSERT_EQ(e.managed_resources.size(), 5u);
  EXPECT_EQ(e.managed_resources[0].name, "nvidia.com/gpu");
  EXPECT_FALSE(e.managed_resources[0].ignored_by_scheduler);
  EXPECT_TRUE(e.managed_resources[1].ignored_by_scheduler);
}

TEST(SchedulerConfig, JsonIsAcceptedToo) {
  auto r = parse_scheduler_config(
      R"({"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration",
          "extenders":[{"urlPrefix":"https://h:443/","filterVerb":"filter-simulation",
                        "weight":1,"prioritizeVerb":"p","httpTimeout":"1m30s",
                        "nodeCacheCapable":true,"ignorable":true,"enableHTTPS":true,
                        "managedResources":[{"name":"example.com/foo"}]}]})",
      "ca.json");
  ASSERT_TRUE(r) << r.error().message;
  const ExtenderConfig& e = r->extenders[0];
  EXPECT_EQ(e.http_timeout, 90s);
  EXPECT_TRUE(e.node_cache_capable);
  EXPECT_TRUE(e.ignorable);
  EXPECT_TRUE(e.enable_https);
  EXPECT_EQ(e.weight, 1);
  EXPECT_EQ(e.prioritize_verb, "p");
  EXPECT_FALSE(e.managed_resources[0].ignored_by_scheduler);
}

TEST(SchedulerConfig, EveryExtenderFieldIsRead) {
  auto r = parse_scheduler_config(with_extenders(R"(- urlPrefix: https://10.0.0.1:8443/x
  filterVerb: scheduler/predicates
  preemptVerb: preempt
  prioritizeVerb: prioritize
  weight: 3
  bindVerb: bind
  enableHTTPS: true
  tlsConfig:
    insecure: false
    serverName: hami.example
    certFile: /c.crt
    keyFile: /c.key
    caFile: /ca.crt
    certData: Y2VydA==
    keyData: a2V5
    caData: "Y2E="
  httpTimeout: 500ms
  nodeCacheCapable: true
  ignorable: true
)"),
                                  "x.yaml");
  ASSERT_TRUE(r) << r.error().message;
  const ExtenderConfig& e = r->extenders[0];
  EXPECT_EQ(e.preempt_verb, "preempt");
  EXPECT_EQ(e.bind_verb, "bind");
  EXPECT_EQ(e.weight, 3);
  EXPECT_EQ(e.http_timeout, 500ms);
  ASSERT_TRUE(e.tls_config);
  EXPECT_EQ(e.tls_config->server_name, "hami.example");
  EXPECT_EQ(e.tls_config->cert_file, "/c.crt");
  EXPECT_EQ(e.tls_config->key_file, "/c.key");
  EXPECT_EQ(e.tls_config->ca_file, "/ca.crt");
  EXPECT_EQ(e.tls_config->cert_data, "cert");
  EXPECT_EQ(e.tls_config->key_data, "key");
  EXPECT_EQ(e.tls_config->ca_data, "ca");
}

TEST(SchedulerConfig, ErrorsNameTheFileThePathAndTheField) {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("hamisim-sc-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ca-config.yaml").string();
  std::ofstream(path) << with_extenders("- urlPrefix: http://h\n  httpTimeout: 30 seconds\n");
  auto r = load_scheduler_config(path);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            path + ": extenders[0].httpTimeout: \"30 seconds\" is not a duration");
}

TEST(SchedulerConfig, MissingFileIsAnError) {
  auto r = load_scheduler_config("/nonexistent/ca-config.yaml");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("/nonexistent/ca-config.yaml"));
}

TEST(SchedulerConfig, HttpTimeoutZeroOrAbsentMeansFiveSeconds) {
  auto r = parse_scheduler_config(
      with_extenders("- urlPrefix: http://a\n  httpTimeout: 0s\n- urlPrefix: http://b\n"
                     "- urlPrefix: http://c\n  httpTimeout: \"0\"\n- urlPrefix: http://d\n"
                     "  httpTimeout: 1m30s\n"),
      "x");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->extenders[0].effective_timeout(), 5s);
  EXPECT_EQ(r->extenders[1].effective_timeout(), 5s);
  EXPECT_EQ(r->extenders[2].effective_timeout(), 5s);
  EXPECT_EQ(r->extenders[3].effective_timeout(), 90s);
}

TEST(SchedulerConfig, HttpTimeoutMustBeADurationString) {
  EXPECT_THAT(error_of(with_extenders("- urlPrefix: http://h\n  httpTimeout: 30\n")),
              HasSubstr("extenders[0].httpTimeout: expected a duration string"));
  EXPECT_THAT(error_of(with_extenders("- urlPrefix: http://h\n  httpTimeout: -1s\n")),
              HasSubstr("extenders[0].httpTimeout: \"-1s\" must not be negative"));
  EXPECT_THAT(error_of(with_extenders("- urlPrefix: http://h\n  httpTimeout: \"\"\n")),
              HasSubstr("extenders[0].httpTimeout: \"\" is not a duration"));
}

// Issue #26: one number grammar for every file; "010" was read as 10 here and "1_000" as 1000.
TEST(SchedulerConfig, IntegersFollowTheOneGrammar) {
  EXPECT_THAT(
      error_of(with_extenders("- urlPrefix: http://h\n  prioritizeVerb: p\n  weight: 010\n")),
      HasSubstr("extenders[0].weight: \"010\" has a leading zero (octal in YAML 1.1, "
                "decimal in YAML 1.2): write 10, or 8 for octal (line"));
  EXPECT_THAT(error_of(with_extenders("- urlPrefix: http://h\n  weight: 1_000\n")),
              HasSubstr("extenders[0].weight: expected an integer, got number 1_000"));
}

TEST(SchedulerConfig, Base64DataFieldsAreDecoded) {
  auto r = parse_scheduler_config(with_extenders(R"(- urlPrefix: https://h
  tlsConfig:
    caData: "LS0tLS1CRUdJTg=="
    certData: |
      aGVs
      bG8=
    keyData: a2V5
)"),
                                  "x");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->extenders[0].tls_config->ca_data, "-----BEGIN");
  EXPECT_EQ(r->extenders[0].tls_config->cert_data, "hello");
  EXPECT_THAT(error_of(with_extenders("- urlPrefix: https://h\n  tlsConfig:\n    caData: '@@@'\n")),
              HasSubstr("ca-config.yaml: extenders[0].tlsConfig.caData: not valid base64"));
  EXPECT_THAT(error_of(with_extenders("- urlPrefix: https://h\n  tlsConfig:\n    keyData: abc\n")),
              HasSubstr("extenders[0].tlsConfig.keyData: not valid base64"));
}

TEST(SchedulerConfig, UrlPrefixIsRequiredAndMustBeHttp) {
  EXPECT_EQ(error_of(with_extenders("- filterVerb: filter\n")),
            "ca-config.yaml: extenders[0].urlPrefix: Required value");
  EXPECT_THAT(
      error_of(with_extenders("- urlPrefix: ftp://h\n")),
      HasSubstr("extenders[0].urlPrefix: \"ftp://h\": scheme \"ftp\" is not http or https"));
  EXPECT_THAT(error_of(with_extenders("- urlPrefix: h:80\n")),
              HasSubstr("extenders[0].urlPrefix: \"h:80\" is not an http:// or https:// URL"));
}

TEST(SchedulerConfig, PrioritizeVerbNeedsAPositiveWeight) {
  EXPECT_EQ(error_of(with_extenders("- urlPrefix: http://h\n  prioritizeVerb: p\n")),
            "ca-config.yaml: extenders[0].weight: 0: must have a positive weight applied to it");
  EXPECT_THAT(
      error_of(with_extenders("- urlPrefix: http://h\n  prioritizeVerb: p\n  weight: -1\n")),
      HasSubstr("must have a positive weight"));
  EXPECT_EQ(error_of(with_extenders("- urlPrefix: http://h\n  weight: 0\n")), "<loaded>");
}

TEST(SchedulerConfig, AtMostOneBinder) {
  EXPECT_EQ(error_of(with_extenders("- urlPrefix: http://a\n  bindVerb: bind\n"
                                    "- urlPrefix: http://b\n  bindVerb: bind\n")),
            "ca-config.yaml: extenders: found 2 extenders implementing bind: only one extender "
            "can implement bind");
}

TEST(SchedulerConfig, ManagedResourceNamesAreUniqueExtendedResourceNames) {
  EXPECT_THAT(error_of(with_extenders("- urlPrefix: http://a\n  managedResources:\n"
                                      "  - name: nvidia.com/gpu\n- urlPrefix: http://b\n"
                                      "  managedResources:\n  - name: nvidia.com/gpu\n")),
              HasSubstr("extenders[1].managedResources[0].name: \"nvidia.com/gpu\": duplicate "
                        "extender managed resource name"));
  for (const char* bad : {"cpu", "kubernetes.io/foo", "requests.example.com/x", "a/b/c",
                          "Example.com/x", "example.com/", "\"\""}) {
    EXPECT_THAT(error_of(with_extenders(std::string("- urlPrefix: http://a\n  managedResources:\n"
                                                    "  - name: ") +
                                        bad + "\n")),
                HasSubstr("extenders[0].managedResources[0].name: "))
        << bad;
  }
  EXPECT_TRUE(is_extended_resource_name("nvidia.com/gpumem-percentage"));
  EXPECT_FALSE(is_extended_resource_name("memory"));
  EXPECT_FALSE(is_extended_resource_name("node.kubernetes.io/x"));
}

TEST(SchedulerConfig, StrictDecodingRejectsUnknownAndDuplicateFields) {
  EXPECT_EQ(error_of(with_extenders("- urlPrefix: http://a\n  filterverb: filter\n")),
            "ca-config.yaml: extenders[0].filterverb: unknown field");
  EXPECT_EQ(error_of(with_extenders("- urlPrefix: http://a\n  urlPrefix: http://b\n")),
            "ca-config.yaml: extenders[0].urlPrefix: duplicate field");
  EXPECT_EQ(error_of(with_extenders("- urlPrefix: https://a\n  tlsConfig:\n    insecur: true\n")),
            "ca-config.yaml: extenders[0].tlsConfig.insecur: unknown field");
  EXPECT_EQ(error_of(with_extenders("- urlPrefix: https://a\n  managedResources:\n"
                                    "  - name: a.com/b\n    ignored: true\n")),
            "ca-config.yaml: extenders[0].managedResources[0].ignored: unknown field");
  EXPECT_EQ(error_of(std::string(kCaHami) + "bogus: 1\n"), "ca-config.yaml: bogus: unknown field");
  // Fields kube-scheduler has but CA ignores are fine.
  EXPECT_EQ(error_of(std::string(kCaHami) + "parallelism: 16\npercentageOfNodesToScore: 50\n"),
            "<loaded>");
}

TEST(SchedulerConfig, TypesAreCheckedAsGoDecodesThem) {
  EXPECT_EQ(error_of(with_extenders("- urlPrefix: http://a\n  ignorable: \"true\"\n")),
            "ca-config.yaml: extenders[0].ignorable: expected true or false, got string \"true\"");
  EXPECT_EQ(error_of(with_extenders("- urlPrefix: http://a\n  filterVerb: 5\n")),
            "ca-config.yaml: extenders[0].filterVerb: expected a string, got number 5");
  EXPECT_EQ(error_of(with_extenders("- urlPrefix: http://a\n  weight: heavy\n")),
            "ca-config.yaml: extenders[0].weight: expected an integer, got string \"heavy\"");
  EXPECT_EQ(error_of(with_extenders("- urlPrefix: http://a\n  managedResources: nvidia.com/gpu\n")),
            "ca-config.yaml: extenders[0].managedResources: expected a list, got string "
            "\"nvidia.com/gpu\"");
  // YAML 1.1 booleans, as sigs.k8s.io/yaml reads them.
  auto r = parse_scheduler_config(with_extenders("- urlPrefix: http://a\n  ignorable: yes\n"), "x");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->extenders[0].ignorable);
}

TEST(SchedulerConfig, ApiVersionAndKindAreChecked) {
  EXPECT_EQ(error_of("kind: KubeSchedulerConfiguration\n"),
            "ca-config.yaml: apiVersion: missing, want kubescheduler.config.k8s.io/v1");
  EXPECT_EQ(error_of("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: "
                     "KubeSchedulerConfiguration\n"),
            "ca-config.yaml: apiVersion: \"kubescheduler.config.k8s.io/v1beta3\" is not "
            "supported, want kubescheduler.config.k8s.io/v1");
  EXPECT_EQ(error_of("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n"),
            "ca-config.yaml: kind: \"Pod\", want KubeSchedulerConfiguration");
  EXPECT_THAT(error_of(""), HasSubstr("empty document"));
  // Malformed YAML is refused by the guard every YAML reader runs first (model/yaml_check.h).
  EXPECT_THAT(error_of("[1, 2"), HasSubstr("ca-config.yaml: yaml: line 1, column "));
  EXPECT_THAT(error_of("- a\n"), HasSubstr("expected a KubeSchedulerConfiguration mapping"));
}

TEST(SchedulerConfig, CaRequiresExactlyOneProfile) {
  const std::string two =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
      "- schedulerName: a\n- schedulerName: b\n";
  EXPECT_EQ(error_of(two), "ca-config.yaml: profiles: expected one scheduler profile only, got 2");
  LoadOptions kube_scheduler;
  kube_scheduler.require_single_profile = false;
  EXPECT_EQ(error_of(two, kube_scheduler), "<loaded>");
  EXPECT_THAT(error_of("apiVersion: kubescheduler.config.k8s.io/v1\nkind: "
                       "KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n"
                       "- schedulerName: a\n",
                       kube_scheduler),
              HasSubstr("profiles[1].schedulerName: Duplicate value: \"a\""));
}

TEST(SchedulerConfig, NoProfilesDefaultsToOneDefaultSchedulerProfile) {
  auto r = parse_scheduler_config(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n", "x");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->profiles.size(), 1u);
  EXPECT_EQ(r->profiles[0].scheduler_name, "default-scheduler");
  EXPECT_TRUE(r->profiles[0].node_resources_fit.has_value());
  EXPECT_THAT(r->profiles[0].plugin_config_names, ElementsAre("NodeResourcesFit"));
  EXPECT_TRUE(r->extenders.empty());
}

TEST(SchedulerConfig, EveryProblemIsReported) {
  const std::string message = error_of(with_extenders(
      "- filterVerb: f\n- urlPrefix: http://b\n  prioritizeVerb: p\n  managedResources:\n"
      "  - name: cpu\n"));
  EXPECT_THAT(message, HasSubstr("ca-config.yaml: extenders[0].urlPrefix: Required value"));
  EXPECT_THAT(message, HasSubstr("ca-config.yaml: extenders[1].weight:"));
  EXPECT_THAT(message, HasSubstr("ca-config.yaml: extenders[1].managedResources[0].name: \"cpu\""));
}

TEST(SchedulerConfig, TlsCombinationsClientGoRejects) {
  EXPECT_THAT(error_of(with_extenders("- urlPrefix: https://a\n  tlsConfig:\n    insecure: true\n"
                                      "    caFile: /ca.crt\n")),
              HasSubstr("extenders[0].tlsConfig.insecure: specifying a root certificates file "
                        "with the insecure flag is not allowed"));
  EXPECT_THAT(error_of(with_extenders("- urlPrefix: https://a\n  tlsConfig:\n    certFile: /c\n")),
              HasSubstr("extenders[0].tlsConfig: a client certificate needs both a key"));
}

TEST(SchedulerConfig, NodeResourcesFitArgsAreValidated) {
  auto profile = [](const std::string& args) {
    return "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n" + args;
  };
  EXPECT_THAT(error_of(with_extenders("- urlPrefix: http://a\n",
                                      profile("      ignoredResourceGroups: [example.com/x]\n"))),
              HasSubstr("profiles[0].pluginConfig[0].args.ignoredResourceGroups[0]: "
                        "\"example.com/x\": resource group name can't contain '/'"));
  EXPECT_THAT(error_of(with_extenders("- urlPrefix: http://a\n",
                                      profile("      ignoredResources: [\"bad name\"]\n"))),
              HasSubstr("profiles[0].pluginConfig[0].args.ignoredResources[0]: \"bad name\""));
  EXPECT_THAT(
      error_of(with_extenders("- urlPrefix: http://a\n",
                              profile("      kind: NodeResourcesBalancedAllocationArgs\n"))),
      HasSubstr("want args to be of type NodeResourcesFitArgs"));
  EXPECT_THAT(error_of(with_extenders("- urlPrefix: http://a\n",
                                      profile("      ignoredResources: [a.com/b]\n  - name: "
                                              "NodeResourcesFit\n"))),
              HasSubstr("profiles[0].pluginConfig[1].name: Duplicate value: \"NodeResourcesFit\""));
  EXPECT_EQ(
      error_of(with_extenders("- urlPrefix: http://a\n",
                              profile("      scoringStrategy:\n        type: MostAllocated\n"))),
      "<loaded>");
}

// Reference §2.5 / §3.2: any ignoredByScheduler: true REPLACES the user's ignoredResources.
TEST(EffectiveNodeResourcesFit, ExtenderIgnoredNamesOverwriteTheUserList) {
  const std::string text = with_extenders(
      "- urlPrefix: http://a\n  managedResources:\n  - name: nvidia.com/gpu\n"
      "  - name: nvidia.com/gpumem\n    ignoredByScheduler: true\n"
      "- urlPrefix: http://b\n  managedResources:\n  - name: example.com/z\n"
      "    ignoredByScheduler: true\n",
      "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
      "      ignoredResources: [user.com/r]\n      ignoredResourceGroups: [hami.io]\n");
  auto config = parse_scheduler_config(text, "x");
  ASSERT_TRUE(config) << config.error().message;
  auto fit = effective_node_resources_fit(*config);
  ASSERT_TRUE(fit) << fit.error().message;
  EXPECT_THAT(fit->ignored_resources, ElementsAre("nvidia.com/gpumem", "example.com/z"));
  EXPECT_THAT(fit->ignored_resource_groups, ElementsAre("hami.io"));
}

TEST(EffectiveNodeResourcesFit, UserListStaysWhenNothingIsIgnoredByScheduler) {
  auto config = parse_scheduler_config(
      with_extenders("- urlPrefix: http://a\n  managedResources:\n  - name: nvidia.com/gpu\n",
                     "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                     "      ignoredResources: [user.com/r]\n"),
      "x");
  ASSERT_TRUE(config) << config.error().message;
  auto fit = effective_node_resources_fit(*config);
  ASSERT_TRUE(fit);
  EXPECT_THAT(fit->ignored_resources, ElementsAre("user.com/r"));
}

TEST(EffectiveNodeResourcesFit, TheCaHamiExampleIgnoresEverythingButWholeGpus) {
  auto config = parse_scheduler_config(kCaHami, "x");
  ASSERT_TRUE(config);
  auto fit = effective_node_resources_fit(*config);
  ASSERT_TRUE(fit);
  EXPECT_THAT(fit->ignored_resources,
              ElementsAre("nvidia.com/gpumem", "nvidia.com/gpucores",
                          "nvidia.com/gpumem-percentage", "nvidia.com/priority"));
}

TEST(EffectiveNodeResourcesFit, DisabledNodeResourcesFitCannotTakeTheList) {
  const std::string disabled =
      "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: NodeResourcesFit\n";
  auto config = parse_scheduler_config(
      with_extenders("- urlPrefix: http://a\n  managedResources:\n  - name: nvidia.com/gpumem\n"
                     "    ignoredByScheduler: true\n",
                     disabled),
      "x");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_FALSE(config->profiles[0].node_resources_fit);
  auto fit = effective_node_resources_fit(*config);
  ASSERT_FALSE(fit);
  EXPECT_EQ(fit.error().message,
            "couldn't configure extender-managed resources: can't find NodeResourcesFitArgs in "
            "plugin config");

  auto quiet = parse_scheduler_config(
      with_extenders("- urlPrefix: http://a\n  managedResources:\n  - name: nvidia.com/gpumem\n",
                     disabled),
      "x");
  ASSERT_TRUE(quiet);
  EXPECT_TRUE(effective_node_resources_fit(*quiet));
}

TEST(GpuResourceNames, BuiltinsFirstThenEveryManagedResourceOnce) {
  auto config = parse_scheduler_config(kCaHami, "x");
  ASSERT_TRUE(config);
  EXPECT_THAT(gpu_resource_names(*config),
              ElementsAre("nvidia.com/gpu", "habana.ai/gaudi", "gpu.intel.com/xe", "amd.com/gpu",
                          "microsoft.com/directx", "nvidia.com/gpumem", "nvidia.com/gpucores",
                          "nvidia.com/gpumem-percentage", "nvidia.com/priority"));
}

TEST(DescribeExtenders, ReportsWhatDoctorChecks) {
  auto config = parse_scheduler_config(with_extenders(R"(- urlPrefix: https://hami:443
  filterVerb: filter
  enableHTTPS: true
  nodeCacheCapable: true
  managedResources:
  - name: nvidia.com/gpu
  - name: nvidia.com/gpumem
    ignoredByScheduler: true
- urlPrefix: https://other:443
  tlsConfig:
    insecure: true
  httpTimeout: 2s
  ignorable: true
- urlPrefix: https://verified:443
  tlsConfig:
    caData: Y2E=
    certFile: /c
    keyFile: /k
- urlPrefix: https://roots:443
- urlPrefix: http://plain
)"),
                                       "x");
  ASSERT_TRUE(config) << config.error().message;
  auto facts = describe_extenders(*config);
  ASSERT_EQ(facts.size(), 5u);
  EXPECT_TRUE(facts[0].https);
  EXPECT_EQ(facts[0].tls_verification, TlsVerification::kSkippedNoCa);
  EXPECT_TRUE(facts[0].looks_like_hami);
  EXPECT_TRUE(facts[0].node_cache_capable);
  EXPECT_TRUE(facts[0].timeout_defaulted);
  EXPECT_EQ(facts[0].timeout, 5s);
  EXPECT_THAT(facts[0].hami_resources_not_ignored, ElementsAre("nvidia.com/gpu"));
  EXPECT_THAT(
      facts[0].hami_resources_missing,
      ElementsAre("nvidia.com/gpucores", "nvidia.com/gpumem-percentage", "nvidia.com/priority"));
  EXPECT_EQ(facts[1].tls_verification, TlsVerification::kSkippedInsecure);
  EXPECT_FALSE(facts[1].looks_like_hami);
  EXPECT_TRUE(facts[1].empty_managed_resources);
  EXPECT_TRUE(facts[1].ignorable);
  EXPECT_FALSE(facts[1].filter);
  EXPECT_EQ(facts[1].timeout, 2s);
  EXPECT_EQ(facts[2].tls_verification, TlsVerification::kVerified);
  EXPECT_TRUE(facts[2].client_certificate);
  EXPECT_EQ(facts[3].tls_verification, TlsVerification::kSystemRoots);
  EXPECT_EQ(facts[4].tls_verification, TlsVerification::kNone);
  EXPECT_EQ(to_string(facts[0].tls_verification), "skipped-no-ca");
}

}  // namespace
}  // namespace hamisim::extender
