// `doctor --network-policy` (check network-policy-ca-labels) over the providers the Cluster
// Autoscaler Helm chart templates: the shipped policy (deploy/simulation/networkpolicy.yaml)
// admits the chart's pods of each, doctor says which label did, and a policy that lacks a
// provider, or that admits only `app: cluster-autoscaler` (which the chart never sets), fails
// for that provider.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "doctor/doctor.h"
#include "test_paths.h"

namespace hamisim::doctor {
namespace network_policy_test {

using ::testing::HasSubstr;

// The cloudProvider values the CA chart has branches for in its templates (deployment.yaml,
// secret.yaml: aws, azure, gce, magnum, clusterapi, oci, hetzner, exoscale, kwok, civo,
// rancher; coreweave, huaweicloud and vultr in newer charts), plus providers CA builds that
// users set as cloudProvider with the chart's generic wiring. The chart names its pods
// app.kubernetes.io/name: <cloudProvider>-cluster-autoscaler for any of them.
const char* const kChartProviders[] = {
    "aws",     "azure",        "gce",    "alicloud", "clusterapi", "magnum",      "oci",
    "hetzner", "exoscale",     "kwok",   "civo",     "rancher",    "coreweave",   "huaweicloud",
    "vultr",   "digitalocean", "linode", "ovhcloud", "scaleway",   "externalgrpc"};

std::string shipped_policy() {
  std::ifstream in(std::string(hamisim::testing::source_dir()) +
                   "/deploy/simulation/networkpolicy.yaml");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The one finding of a check (a copy: the vector is a temporary).
Finding only(const std::vector<Finding>& findings) {
  EXPECT_EQ(findings.size(), 1u);
  return findings.empty() ? Finding{} : findings.front();
}

TEST(DoctorNetworkPolicy, TheShippedPolicyAdmitsEveryProviderOfTheChartNamingTheLabel) {
  const std::string policy = shipped_policy();
  ASSERT_FALSE(policy.empty());
  for (const char* provider : kChartProviders) {
    const auto findings = check_network_policy(policy, "networkpolicy.yaml", {provider, {}});
    ASSERT_EQ(findings.size(), 1u) << provider;
    EXPECT_EQ(findings[0].severity, Severity::kInfo) << provider << ": " << findings[0].message;
    EXPECT_EQ(findings[0].field, "spec.ingress[0].from[0].podSelector") << provider;
    EXPECT_THAT(findings[0].message,
                HasSubstr(std::string("for cloudProvider ") + provider +
                          " (app.kubernetes.io/name: " + provider + "-cluster-autoscaler)"));
  }
}

// Each provider taken out of the list in turn: doctor fails for it, although the policy still
// admits app: cluster-autoscaler, and says that label is not the chart's.
TEST(DoctorNetworkPolicy, APolicyWithoutAProviderFailsForThatProvider) {
  const std::string policy = shipped_policy();
  for (const char* provider : kChartProviders) {
    const std::string line =
        std::string("                  - ") + provider + "-cluster-autoscaler\n";
    std::string without = policy;
    const auto at = without.find(line);
    ASSERT_NE(at, std::string::npos) << provider << " is not in the shipped policy";
    without.erase(at, line.size());
    const Finding f = only(check_network_policy(without, "np.yaml", {provider, {}}));
    EXPECT_EQ(f.severity, Severity::kError) << provider;
    EXPECT_THAT(f.message, HasSubstr(std::string("no ingress rule admits the CA Helm chart's pods "
                                                 "for cloudProvider ") +
                                     provider));
    EXPECT_THAT(f.message, HasSubstr("spec.ingress[0].from[1].podSelector admits app: "
                                     "cluster-autoscaler, which CA's example manifests set and "
                                     "the Helm chart never does"));
    EXPECT_THAT(f.fix, HasSubstr(std::string("admit app.kubernetes.io/name: ") + provider +
                                 "-cluster-autoscaler"));
    // The other providers are still admitted.
    const char* other = provider == std::string("aws") ? "gce" : "aws";
    EXPECT_EQ(only(check_network_policy(without, "np.yaml", {other, {}})).severity,
              Severity::kInfo);
  }
}

TEST(DoctorNetworkPolicy, APodLabelsOverrideIsCheckedInsteadOfTheChartsLabels) {
  const std::string policy = shipped_policy();
  // CA's example manifests: the second peer admits them.
  const Finding manifests =
      only(check_network_policy(policy, "np.yaml", {"aws", {{"app", "cluster-autoscaler"}}}));
  EXPECT_EQ(manifests.severity, Severity::kInfo);
  EXPECT_EQ(manifests.field, "spec.ingress[0].from[1].podSelector");
  EXPECT_THAT(manifests.message, HasSubstr("admits Cluster Autoscaler's pods (app: "
                                           "cluster-autoscaler)"));
  // A nameOverride the policy does not list.
  const Finding renamed = only(check_network_policy(
      policy, "np.yaml", {"aws", {{"app.kubernetes.io/name", "my-autoscaler"}}}));
  EXPECT_EQ(renamed.severity, Severity::kError);
  EXPECT_THAT(renamed.message, HasSubstr("app.kubernetes.io/name: my-autoscaler"));
}

TEST(DoctorNetworkPolicy, TheChartNameIsCutTo63CharactersAsHelmDoes) {
  EXPECT_EQ(ca_chart_name("aws"), "aws-cluster-autoscaler");
  // 44 characters + "-cluster-autoscaler" (19) = 63; one more cuts into the suffix.
  const std::string long_provider(45, 'x');
  EXPECT_EQ(ca_chart_name(long_provider).size(), 63u);
  EXPECT_EQ(ca_chart_name(std::string(44, 'y')), std::string(44, 'y') + "-cluster-autoscaler");
  // A cut that ends on '-' drops it (trimSuffix "-").
  EXPECT_EQ(ca_chart_name(std::string(63, 'z')), std::string(63, 'z'));
  EXPECT_EQ(ca_chart_name(std::string(62, 'z')), std::string(62, 'z'));
}

}  // namespace network_policy_test
}  // namespace hamisim::doctor
