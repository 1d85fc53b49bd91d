// The offline checks of `hamisim doctor` (spec §8): one test per finding class, each with the
// configuration that triggers it and the corrected one that does not.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "doctor_test_support.h"

namespace hamisim::doctor {
namespace {

using ::testing::HasSubstr;
using namespace testing;
using namespace std::chrono_literals;

constexpr const char* kHeader =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n";

// A correct CA extender; `extra` lines are appended to it (YAML, 4-space indent).
std::string ca_yaml(const std::string& extra = "",
                    const std::string& url = "https://hamisim-simulation.hamisim.svc:8443",
                    const std::string& verb = "filter-simulation") {
  return std::string(kHeader) + "extenders:\n  - urlPrefix: " + url + "\n" +
         (verb.empty() ? "" : "    filterVerb: " + verb + "\n") +
         "    enableHTTPS: true\n"
         "    tlsConfig: {caFile: /etc/hamisim/tls/ca.crt, certFile: /etc/hamisim/tls/tls.crt,"
         " keyFile: /etc/hamisim/tls/tls.key}\n" +
         extra + all_managed();
}

// A correct live (kube-scheduler) extender.
std::string live_yaml(const std::string& extra = "", const std::string& verb = "filter",
                      const std::string& bind = "bind") {
  return std::string(kHeader) +
         "profiles:\n  - schedulerName: hamisim-scheduler\n"
         "extenders:\n  - urlPrefix: http://127.0.0.1:8443\n" +
         (verb.empty() ? "" : "    filterVerb: " + verb + "\n") +
         (bind.empty() ? "" : "    bindVerb: " + bind + "\n") +
         "    nodeCacheCapable: true\n    httpTimeout: 10s\n" + extra + all_managed();
}

std::vector<Finding> ca_check(const std::string& yaml, CheckOptions o = default_options()) {
  return check_config(parse(yaml), ConfigRole::kClusterAutoscaler, o);
}
std::vector<Finding> live_check(const std::string& yaml) {
  return check_config(parse(yaml, false), ConfigRole::kKubeScheduler, default_options());
}

// Nothing is wrong; doctor only notes what the file cannot show: the CA build must send
// SimulatedPods (issue #33).
TEST(DoctorChecks, CorrectCaConfigOnlyNotesTheSimulatedPodsContract) {
  auto f = ca_check(ca_yaml("    httpTimeout: 5s\n"));
  ASSERT_EQ(f.size(), 1u) << describe(f);
  EXPECT_EQ(f[0].check, "simulated-pods");
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_EQ(f[0].field, "extenders[0]");
  EXPECT_THAT(f[0].message, HasSubstr("must send SimulatedPods and keep Allocations"));
  EXPECT_THAT(f[0].message, HasSubstr("docs/ca-side.md"));
  EXPECT_THAT(f[0].why, HasSubstr("--compare-unpatched-ca"));
  // Not for kube-scheduler, and not for an extender that does not filter.
  EXPECT_FALSE(find(live_check(live_yaml()), "simulated-pods"));
  EXPECT_FALSE(
      find(ca_check(ca_yaml("    httpTimeout: 5s\n", "https://h:8443", "")), "simulated-pods"));
}

TEST(DoctorChecks, CorrectLiveConfigOnlyNotesLoopbackHttp) {
  auto f = live_check(live_yaml());
  ASSERT_EQ(f.size(), 1u) << describe(f);
  EXPECT_EQ(f[0].check, "tls");
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_EQ(f[0].role, ConfigRole::kKubeScheduler);
}

TEST(DoctorChecks, HamiResourceNamesComeFromTheRegistry) {
  const auto vendors = default_options().vendors;
  auto nvidia = std::find_if(vendors.begin(), vendors.end(),
                             [](const VendorResources& v) { return v.vendor == "NVIDIA"; });
  ASSERT_NE(nvidia, vendors.end());
  EXPECT_EQ(nvidia->names,
            (std::vector<std::string>{"nvidia.com/gpu", "nvidia.com/gpumem",
                                      "nvidia.com/gpumem-percentage", "nvidia.com/gpucores",
                                      "nvidia.com/priority"}));
  auto dcu = std::find_if(vendors.begin(), vendors.end(),
                          [](const VendorResources& v) { return v.vendor == "DCU"; });
  ASSERT_NE(dcu, vendors.end());
  EXPECT_EQ(dcu->names, (std::vector<std::string>{"hygon.com/dcunum", "hygon.com/dcumem",
                                                  "hygon.com/dcucores"}));
  auto config = device::parse_device_config(
      "nvidia:\n  resourceCountName: example.com/vgpu\n  resourceMemoryName: example.com/vmem\n");
  ASSERT_TRUE(config) << config.error().message;
  auto names = hami_resource_names(device::build_registry(*config));
  auto vgpu = std::find(names.begin(), names.end(), "example.com/vgpu");
  ASSERT_NE(vgpu, names.end());
  EXPECT_EQ(*(vgpu + 1), "example.com/vmem");
}

TEST(DoctorChecks, AVendorNotListedAtAllIsOnlyNotedButAPartialListingIsAnError) {
  const std::string nvidia_only =
      "    managedResources:\n"
      "      - {name: nvidia.com/gpu, ignoredByScheduler: true}\n"
      "      - {name: nvidia.com/gpumem, ignoredByScheduler: true}\n"
      "      - {name: nvidia.com/gpumem-percentage, ignoredByScheduler: true}\n"
      "      - {name: nvidia.com/gpucores, ignoredByScheduler: true}\n"
      "      - {name: nvidia.com/priority, ignoredByScheduler: true}\n";
  auto config = [](const std::string& managed) {
    return std::string(kHeader) +
           "extenders:\n  - urlPrefix: https://hamisim-simulation.hamisim.svc:8443\n"
           "    filterVerb: filter-simulation\n    enableHTTPS: true\n"
           "    tlsConfig: {caFile: /etc/hamisim/tls/ca.crt, certFile: /etc/hamisim/tls/tls.crt,"
           " keyFile: /etc/hamisim/tls/tls.key}\n    httpTimeout: 5s\n" +
           managed;
  };
  auto f = ca_check(config(nvidia_only));
  EXPECT_FALSE(find(f, "managed-resources")) << describe(f);
  auto note = find(f, "vendors-not-managed");
  ASSERT_TRUE(note) << describe(f);
  EXPECT_EQ(note->severity, Severity::kInfo);
  EXPECT_THAT(note->message, HasSubstr("DCU"));

  auto partial = ca_check(
      config(nvidia_only + "      - {name: hygon.com/dcunum, ignoredByScheduler: true}\n"));
  auto missing = find(partial, "managed-resources");
  ASSERT_TRUE(missing) << describe(partial);
  EXPECT_EQ(missing->severity, Severity::kError);
  EXPECT_THAT(missing->message, HasSubstr("hygon.com/dcumem"));
  EXPECT_THAT(missing->message, ::testing::Not(HasSubstr("nvidia.com")));
}

TEST(DoctorChecks, NoHamiExtenderIsAnError) {
  auto none = ca_check(std::string(kHeader));
  auto f = find(none, "hami-extender");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_EQ(f->field, "extenders");
  EXPECT_THAT(f->message, HasSubstr("no extender"));
  EXPECT_FALSE(f->fix.empty());

  auto other = ca_check(std::string(kHeader) +
                        "extenders:\n  - urlPrefix: http://other:80\n    filterVerb: filter\n"
                        "    managedResources: [{name: example.com/fpga}]\n");
  f = find(other, "hami-extender");
  ASSERT_TRUE(f);
  EXPECT_THAT(f->message, HasSubstr("none of the 1 extender(s)"));

  EXPECT_FALSE(find(ca_check(ca_yaml()), "hami-extender"));
}

TEST(DoctorChecks, HamiResourcesSplitAcrossExtendersIsAWarning) {
  auto f = ca_check(std::string(kHeader) +
                    "extenders:\n"
                    "  - {urlPrefix: 'http://a:80', filterVerb: filter-simulation,"
                    " managedResources: [{name: nvidia.com/gpu, ignoredByScheduler: true}]}\n"
                    "  - {urlPrefix: 'http://b:80', filterVerb: filter-simulation,"
                    " managedResources: [{name: nvidia.com/gpumem, ignoredByScheduler: true}]}\n");
  auto split = find(f, "hami-extender");
  ASSERT_TRUE(split);
  EXPECT_EQ(split->severity, Severity::kWarning);
  EXPECT_THAT(split->message, HasSubstr("extenders[0], extenders[1]"));
}

TEST(DoctorChecks, OtherExtenderInterestedInEveryPodIsNoted) {
  auto f = ca_check(ca_yaml() + "  - urlPrefix: http://policy:80\n    filterVerb: filter\n");
  auto other = find(f, "other-extender");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->severity, Severity::kInfo);
  EXPECT_EQ(other->field, "extenders[1].managedResources");
}

TEST(DoctorChecks, NodeCacheCapableMustBeFalseForCa) {
  auto f = ca_check(ca_yaml("    nodeCacheCapable: true\n"));
  auto n = find(f, "node-cache-capable");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->severity, Severity::kError);
  EXPECT_EQ(n->field, "extenders[0].nodeCacheCapable");
  EXPECT_EQ(n->fix, "nodeCacheCapable: false");
  EXPECT_THAT(n->why, HasSubstr("Template nodes"));
  EXPECT_FALSE(find(ca_check(ca_yaml("    nodeCacheCapable: false\n")), "node-cache-capable"));
}

TEST(DoctorChecks, NodeCacheCapableMustBeTrueForKubeScheduler) {
  auto yaml = live_yaml();
  yaml.replace(yaml.find("nodeCacheCapable: true"), 22, "nodeCacheCapable: false");
  auto n = find(live_check(yaml), "node-cache-capable");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->severity, Severity::kError);
  EXPECT_EQ(n->fix, "nodeCacheCapable: true");
  EXPECT_FALSE(find(live_check(live_yaml()), "node-cache-capable"));
}

TEST(DoctorChecks, CaFilterVerbMustReachTheSimulationRoute) {
  auto empty = ca_check(ca_yaml("", "https://h:8443", ""));
  ASSERT_TRUE(find(empty, "filter-verb"));
  EXPECT_EQ(find(empty, "filter-verb")->severity, Severity::kError);
  EXPECT_THAT(find(empty, "filter-verb")->message, HasSubstr("empty"));

  auto live_route = ca_check(ca_yaml("", "https://h:8443", "filter"));
  ASSERT_TRUE(find(live_route, "filter-verb"));
  EXPECT_EQ(find(live_route, "filter-verb")->severity, Severity::kWarning);
  EXPECT_THAT(find(live_route, "filter-verb")->why, HasSubstr("--legacy-nodes-filter=reject"));

  auto unknown = ca_check(ca_yaml("", "https://h:8443", "predicates"));
  ASSERT_TRUE(find(unknown, "filter-verb"));
  EXPECT_EQ(find(unknown, "filter-verb")->severity, Severity::kError);
  EXPECT_EQ(find(unknown, "filter-verb")->field, "extenders[0].filterVerb");
  EXPECT_THAT(find(unknown, "filter-verb")->message, HasSubstr("/predicates"));

  auto prefixed = ca_check(ca_yaml("", "https://h:8443/hamisim/", "filter-simulation"));
  ASSERT_TRUE(find(prefixed, "filter-verb"));
  EXPECT_EQ(find(prefixed, "filter-verb")->severity, Severity::kWarning);

  // A trailing slash on urlPrefix is trimmed, as kube-scheduler does.
  EXPECT_FALSE(find(ca_check(ca_yaml("", "https://h:8443/", "filter-simulation")), "filter-verb"));
}

TEST(DoctorChecks, KubeSchedulerFilterVerbMustReachTheLiveRoute) {
  auto sim = live_check(live_yaml("", "filter-simulation"));
  ASSERT_TRUE(find(sim, "filter-verb"));
  EXPECT_EQ(find(sim, "filter-verb")->severity, Severity::kError);
  EXPECT_THAT(find(sim, "filter-verb")->why, HasSubstr("never reads live state"));
  EXPECT_FALSE(find(live_check(live_yaml("", "filter")), "filter-verb"));
}

TEST(DoctorChecks, EveryHamiResourceMustBeManaged) {
  std::string yaml = std::string(kHeader) +
                     "extenders:\n  - urlPrefix: https://h:8443\n"
                     "    filterVerb: filter-simulation\n"
                     "    tlsConfig: {caFile: /ca, certFile: /c, keyFile: /k}\n"
                     "    managedResources: [{name: nvidia.com/gpu, ignoredByScheduler: true}]\n";
  auto m = find(ca_check(yaml), "managed-resources");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->severity, Severity::kError);
  EXPECT_EQ(m->field, "extenders[0].managedResources");
  EXPECT_THAT(m->message, HasSubstr("nvidia.com/gpumem, nvidia.com/gpumem-percentage, "
                                    "nvidia.com/gpucores, nvidia.com/priority"));
  EXPECT_THAT(m->why, HasSubstr("Insufficient nvidia.com/gpumem"));
  EXPECT_THAT(m->fix, HasSubstr("{name: nvidia.com/gpumem, ignoredByScheduler: true}"));
  EXPECT_FALSE(find(ca_check(ca_yaml()), "managed-resources"));
}

TEST(DoctorChecks, ManagedResourceNamesFollowTheDeviceConfig) {
  CheckOptions o = default_options();
  o.hami_resources = {"example.com/vgpu", "example.com/vmem"};
  o.vendors = {{"NVIDIA", o.hami_resources}};
  // The default names are then not HAMi's, so the extender is not a HAMi extender at all.
  EXPECT_TRUE(find(ca_check(ca_yaml(), o), "hami-extender"));
  auto yaml = std::string(kHeader) +
              "extenders:\n  - urlPrefix: https://h:8443\n    filterVerb: filter-simulation\n"
              "    tlsConfig: {caFile: /ca, certFile: /c, keyFile: /k}\n"
              "    managedResources: [{name: example.com/vgpu, ignoredByScheduler: true}]\n";
  auto m = find(ca_check(yaml, o), "managed-resources");
  ASSERT_TRUE(m);
  EXPECT_THAT(m->message, HasSubstr("example.com/vmem"));
}

TEST(DoctorChecks, ManagedHamiResourcesMustBeIgnoredByTheScheduler) {
  std::string yaml = ca_yaml();
  const std::string entry = "{name: nvidia.com/gpumem, ignoredByScheduler: true}";
  yaml.replace(yaml.find(entry), entry.size(), "{name: nvidia.com/gpumem}");
  auto f = ca_check(yaml);
  auto i = find(f, "ignored-by-scheduler");
  ASSERT_TRUE(i) << describe(f);
  EXPECT_EQ(i->severity, Severity::kError);
  EXPECT_EQ(i->field, "extenders[0].managedResources[1].ignoredByScheduler");
  EXPECT_THAT(i->message, HasSubstr("nvidia.com/gpumem"));
  EXPECT_EQ(i->fix, "ignoredByScheduler: true");
  EXPECT_FALSE(find(ca_check(ca_yaml()), "ignored-by-scheduler"));
  // The live configuration needs it just as much.
  std::string live = live_yaml();
  live.replace(live.find(entry), entry.size(), "{name: nvidia.com/gpumem}");
  EXPECT_TRUE(find(live_check(live), "ignored-by-scheduler"));
}

TEST(DoctorChecks, IgnorableMustBeFalse) {
  auto i = find(ca_check(ca_yaml("    ignorable: true\n")), "ignorable");
  ASSERT_TRUE(i);
  EXPECT_EQ(i->severity, Severity::kError);
  EXPECT_EQ(i->field, "extenders[0].ignorable");
  EXPECT_THAT(i->why, HasSubstr("keeps every candidate"));
  EXPECT_TRUE(find(live_check(live_yaml("    ignorable: true\n")), "ignorable"));
  EXPECT_FALSE(find(ca_check(ca_yaml("    ignorable: false\n")), "ignorable"));
}

TEST(DoctorChecks, PlainHttpOffLoopbackIsAWarning) {
  std::string yaml = std::string(kHeader) +
                     "extenders:\n  - urlPrefix: http://hamisim-simulation.hamisim.svc:8080\n"
                     "    filterVerb: filter-simulation\n" +
                     all_managed();
  auto t = find(ca_check(yaml), "tls");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->severity, Severity::kWarning);
  EXPECT_EQ(t->field, "extenders[0].urlPrefix");
  EXPECT_THAT(t->fix, HasSubstr("--tls-cert"));
}

TEST(DoctorChecks, PlainHttpOnLoopbackIsOnlyNoted) {
  std::string yaml = std::string(kHeader) +
                     "extenders:\n  - urlPrefix: http://localhost:8443\n"
                     "    filterVerb: filter-simulation\n" +
                     all_managed();
  auto t = find(ca_check(yaml), "tls");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->severity, Severity::kInfo);
}

TEST(DoctorChecks, EnableHttpsWithAnHttpUrlIsAWarning) {
  std::string yaml = std::string(kHeader) +
                     "extenders:\n  - urlPrefix: http://127.0.0.1:8443\n"
                     "    filterVerb: filter-simulation\n    enableHTTPS: true\n" +
                     all_managed();
  auto t = find(ca_check(yaml), "tls");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->severity, Severity::kWarning);
  EXPECT_EQ(t->field, "extenders[0].enableHTTPS");
}

TEST(DoctorChecks, InsecureTlsIsFlagged) {
  std::string yaml = std::string(kHeader) +
                     "extenders:\n  - urlPrefix: https://h:8443\n"
                     "    filterVerb: filter-simulation\n    enableHTTPS: true\n"
                     "    tlsConfig: {insecure: true, certFile: /c, keyFile: /k}\n" +
                     all_managed();
  auto t = find(ca_check(yaml), "tls-insecure");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->severity, Severity::kWarning);
  EXPECT_EQ(t->field, "extenders[0].tlsConfig.insecure");
  EXPECT_FALSE(find(ca_check(ca_yaml()), "tls-insecure"));
}

TEST(DoctorChecks, EnableHttpsWithoutCaMeansTheServerIsNotVerified) {
  std::string yaml = std::string(kHeader) +
                     "extenders:\n  - urlPrefix: https://h:8443\n"
                     "    filterVerb: filter-simulation\n    enableHTTPS: true\n"
                     "    tlsConfig: {certFile: /c, keyFile: /k}\n" +
                     all_managed();
  auto t = find(ca_check(yaml), "tls-verification");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->severity, Severity::kWarning);
  EXPECT_EQ(t->field, "extenders[0].tlsConfig");
  EXPECT_THAT(t->message, HasSubstr("not verified"));
  EXPECT_THAT(t->fix, HasSubstr("caFile"));
  EXPECT_FALSE(find(ca_check(ca_yaml()), "tls-verification"));
}

TEST(DoctorChecks, HttpsWithoutCaRelyOnTheSystemTrustStore) {
  std::string yaml = std::string(kHeader) +
                     "extenders:\n  - urlPrefix: https://h:8443\n"
                     "    filterVerb: filter-simulation\n"
                     "    tlsConfig: {certFile: /c, keyFile: /k}\n" +
                     all_managed();
  auto t = find(ca_check(yaml), "tls-verification");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->severity, Severity::kWarning);
  EXPECT_EQ(t->field, "extenders[0].tlsConfig.caFile");
}

TEST(DoctorChecks, MissingClientCertificateIsNoted) {
  std::string yaml = std::string(kHeader) +
                     "extenders:\n  - urlPrefix: https://h:8443\n"
                     "    filterVerb: filter-simulation\n    tlsConfig: {caFile: /ca}\n" +
                     all_managed();
  auto t = find(ca_check(yaml), "mtls");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->severity, Severity::kInfo);
  EXPECT_THAT(t->fix, HasSubstr("--allow-simulation-clients"));
  EXPECT_FALSE(find(ca_check(ca_yaml()), "mtls"));
}

TEST(DoctorChecks, MissingHttpTimeoutNotesTheDefault) {
  auto f = ca_check(ca_yaml());
  auto t = find(f, "http-timeout");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->severity, Severity::kInfo);
  EXPECT_THAT(t->message, HasSubstr("5s"));
  EXPECT_FALSE(find(ca_check(ca_yaml("    httpTimeout: 5s\n")), "http-timeout"));
}

TEST(DoctorChecks, TooShortHttpTimeoutIsAWarning) {
  auto t = find(ca_check(ca_yaml("    httpTimeout: 200ms\n")), "http-timeout");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->severity, Severity::kWarning);
  EXPECT_EQ(t->field, "extenders[0].httpTimeout");
  EXPECT_THAT(t->message, HasSubstr("200ms"));
}

TEST(DoctorChecks, HttpTimeoutBeyondCasBinpackingBudgetIsAWarning) {
  auto t = find(ca_check(ca_yaml("    httpTimeout: 30s\n")), "http-timeout");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->severity, Severity::kWarning);
  EXPECT_THAT(t->message, HasSubstr("--max-nodegroup-binpacking-duration"));
  CheckOptions o = default_options();
  o.ca_binpacking_budget = 60s;
  EXPECT_FALSE(find(ca_check(ca_yaml("    httpTimeout: 30s\n"), o), "http-timeout"));
}

TEST(DoctorChecks, VeryLongLiveHttpTimeoutIsAWarning) {
  auto yaml = live_yaml();
  yaml.replace(yaml.find("httpTimeout: 10s"), 16, "httpTimeout: 2m");
  auto t = find(live_check(yaml), "http-timeout");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->severity, Severity::kWarning);
  EXPECT_THAT(t->why, HasSubstr("one pod at a time"));
}

TEST(DoctorChecks, BindVerbInCaConfigIsAWarning) {
  auto b = find(ca_check(ca_yaml("    bindVerb: bind\n")), "bind-verb");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->severity, Severity::kWarning);
  EXPECT_EQ(b->field, "extenders[0].bindVerb");
  EXPECT_THAT(b->message, HasSubstr("never binds"));
}

TEST(DoctorChecks, KubeSchedulerNeedsBindVerbBind) {
  auto missing = find(live_check(live_yaml("", "filter", "")), "bind-verb");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->severity, Severity::kError);
  EXPECT_EQ(missing->fix, "bindVerb: bind");
  auto wrong = find(live_check(live_yaml("", "filter", "binder")), "bind-verb");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->severity, Severity::kError);
  EXPECT_THAT(wrong->message, HasSubstr("/binder"));
  EXPECT_FALSE(find(live_check(live_yaml()), "bind-verb"));
}

TEST(DoctorChecks, VerbsHamisimDoesNotServe) {
  auto ca =
      find(ca_check(ca_yaml("    prioritizeVerb: prioritize\n    weight: 1\n")), "unused-verb");
  ASSERT_TRUE(ca);
  EXPECT_EQ(ca->severity, Severity::kInfo);
  auto live =
      live_check(live_yaml("    prioritizeVerb: prioritize\n    weight: 1\n"
                           "    preemptVerb: preempt\n"));
  ASSERT_EQ(std::count_if(live.begin(), live.end(),
                          [](const Finding& f) {
                            return f.check == "unused-verb" && f.severity == Severity::kWarning;
                          }),
            2)
      << describe(live);
}

TEST(DoctorChecks, DisabledNodeResourcesFitIsAnError) {
  std::string yaml = ca_yaml() +
                     "profiles:\n  - plugins:\n      multiPoint:\n"
                     "        disabled: [{name: NodeResourcesFit}]\n";
  auto n = find(ca_check(yaml), "node-resources-fit");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->severity, Severity::kError);
  EXPECT_EQ(n->field, "profiles[0].plugins");
  EXPECT_THAT(n->why, HasSubstr("can't find NodeResourcesFitArgs"));
}

TEST(DoctorChecks, UserIgnoredResourcesReplacedByTheExtendersAreAWarning) {
  std::string yaml = ca_yaml() +
                     "profiles:\n  - pluginConfig:\n      - name: NodeResourcesFit\n"
                     "        args: {ignoredResources: [example.com/foo]}\n";
  auto n = find(ca_check(yaml), "node-resources-fit");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->severity, Severity::kWarning);
  EXPECT_EQ(n->field, "profiles[0].pluginConfig[0].args.ignoredResources");
  EXPECT_THAT(n->message, HasSubstr("example.com/foo"));
  std::string same = ca_yaml() +
                     "profiles:\n  - pluginConfig:\n      - name: NodeResourcesFit\n"
                     "        args: {ignoredResources: [nvidia.com/gpu]}\n";
  EXPECT_FALSE(find(ca_check(same), "node-resources-fit"));
}

TEST(DoctorChecks, EveryFindingNamesFileFieldWhyAndFix) {
  auto f = ca_check(std::string(kHeader) +
                    "extenders:\n  - urlPrefix: http://h:80\n    filterVerb: filter\n"
                    "    nodeCacheCapable: true\n    ignorable: true\n    bindVerb: bind\n"
                    "    httpTimeout: 1m\n    managedResources: [{name: nvidia.com/gpu}]\n");
  ASSERT_GE(bad(f).size(), 6u) << describe(f);
  for (const Finding* x : bad(f)) {
    EXPECT_EQ(x->file, "test.yaml");
    EXPECT_FALSE(x->field.empty()) << x->check;
    EXPECT_FALSE(x->why.empty()) << x->check;
    EXPECT_FALSE(x->fix.empty()) << x->check;
  }
}

}  // namespace
}  // namespace hamisim::doctor
