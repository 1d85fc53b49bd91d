// File flags as kubectl users feed them (issue 25): the bare object, a List, a ConfigMap, `-`
// for standard input; wrong, unknown and empty inputs refused naming the file and the item.
// Each test runs the real binary.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dra/decode.h"
#include "model/decode.h"
#include "run_process.h"
#include "test_paths.h"

namespace hamisim {
namespace {

namespace fs = std::filesystem;
using testing::describe;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ProcessResult;

const std::string kExamples = hamisim::testing::examples_dir();
const std::string kFixtures =
    std::string(hamisim::testing::source_dir()) + "/tests/cli/fixtures" + "/inputs";
const std::string kSource = hamisim::testing::source_dir();
const std::string kPod = kExamples + "/fit/pod-fits.yaml";
const std::string kNode = kExamples + "/fit/node-k80.yaml";
const std::string kCluster = kExamples + "/plan/cluster.yaml";
const std::string kNodeGroups = kExamples + "/plan/node-groups.yaml";
const std::string kProfiles = kExamples + "/plan/device-profiles.yaml";

ProcessResult hamisim(std::vector<std::string> args) {
  args.insert(args.begin(), hamisim::testing::hamisim_bin());
  return testing::run_process(args);
}

// `hamisim args... < stdin_file`, through the shell.
ProcessResult hamisim_with_stdin(const std::string& args, const std::string& stdin_file) {
  return testing::run_process({"/bin/sh", "-c",
                               std::string("exec '") + hamisim::testing::hamisim_bin() + "' " +
                                   args + " < '" + stdin_file + "'"});
}

class CliInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hamisim-inputs-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::vector<std::string> plan(std::vector<std::string> extra) {
    std::vector<std::string> a{"plan", "--node-groups", kNodeGroups, "--device-profiles",
                               kProfiles};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  fs::path dir_;
};

// Issue #47, item 6: a typo in a pod's field is named with its file, line and path, as
// `kubectl --validate=warn` names it, and --strict makes it an error (exit 2, bad input).
constexpr const char* kTypoPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: default
spec:
  containers:
  - name: main
    image: cuda
    resourcez:
      limits:
        nvidia.com/gpu: 1
)";

TEST_F(CliInputs, PlanWarnsAboutAnUnknownPodFieldWithFileLineAndPath) {
  const std::string pods = write("pods.yaml", kTypoPod);
  const auto r = hamisim(plan({"--cluster", kCluster, "--pods", pods}));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("hamisim plan: warning: --pods: " + pods +
                               ":10: unknown field \"spec.containers[0].resourcez\"\n"))
      << describe(r);
}

TEST_F(CliInputs, PlanStrictRefusesAnUnknownPodField) {
  const std::string pods = write("pods.yaml", kTypoPod);
  const auto r = hamisim(plan({"--strict", "--cluster", kCluster, "--pods", pods}));
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("hamisim plan: --pods: " + pods +
                               ":10: unknown field \"spec.containers[0].resourcez\"; --strict "
                               "refuses unknown fields"))
      << describe(r);
}

TEST_F(CliInputs, UnknownFieldsInAClusterListNameTheItem) {
  const std::string cluster = write("cluster.json", R"({"apiVersion": "v1", "kind": "List",
"items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
  "spec": {"unschedulabel": true}}]})");
  auto r = hamisim(plan({"--cluster", cluster}));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("warning: --cluster: " + cluster +
                               ":3: items[0] (Node n1): unknown field \"spec.unschedulabel\""))
      << describe(r);
  r = hamisim(
      {"profile", "check", "--strict", "--device-profiles", kProfiles, "--cluster", cluster});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("unknown field \"spec.unschedulabel\"; --strict")) << describe(r);
  r = hamisim({"doctor", "--offline", "--strict", "--cluster", cluster});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("unknown field \"spec.unschedulabel\"; --strict")) << describe(r);
}

TEST_F(CliInputs, FitWarnsAboutUnknownFieldsOfItsPodAndStrictRefusesThem) {
  const std::string pod = write("pod.yaml", kTypoPod);
  auto r = hamisim({"fit", "--pod", pod, "--node", kNode});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("hamisim fit: warning: --pod: " + pod +
                               ":10: unknown field \"spec.containers[0].resourcez\""))
      << describe(r);
  r = hamisim({"fit", "--strict", "--pod", pod, "--node", kNode});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--strict refuses unknown fields")) << describe(r);
}

TEST_F(CliInputs, KnownFieldsGiveNoWarningEvenUnderStrict) {
  auto r = hamisim(plan({"--strict", "--cluster", kCluster}));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.err, Not(HasSubstr("unknown field"))) << describe(r);
  r = hamisim({"fit", "--strict", "--pod", kPod, "--node", kNode});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.err, Not(HasSubstr("unknown field"))) << describe(r);
  r = hamisim({"plan"});  // the bundled example
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.err, Not(HasSubstr("unknown field"))) << describe(r);
}

// Issue #47: `-o yaml` wherever `-o json` is, real YAML: read back (with the YAML reader every
// input goes through) it is the JSON output, key for key, in the same order. The plan's
// provenance names the command line, which differs between the two runs.
boost::json::value yaml_back(const std::string& yaml) {
  auto json = model::yaml_to_json(yaml);
  EXPECT_TRUE(json) << json.error().message << "\n" << yaml;
  return json ? boost::json::parse(*json) : boost::json::value();
}

TEST_F(CliInputs, YamlOutputReadsBackAsTheJsonOutput) {
  const std::vector<std::vector<std::string>> commands = {
      plan({"--cluster", kCluster}),
      {"plan"},
      {"fit", "--pod", kPod, "--node", kNode},
      {"fit", "--pod", kExamples + "/fit/pod-too-big.yaml", "--node", kNode},
      {"profile", "check", "--device-profiles", kExamples + "/profiles/device-profiles.yaml",
       "--cluster", kExamples + "/profiles/nodes.yaml"},
      {"doctor", "--offline", "--scheduler-config",
       kSource + "/deploy/cluster-autoscaler/scheduler-config.yaml"},
  };
  for (const auto& command : commands) {
    auto args = command;
    args.insert(args.end(), {"-o", "json"});
    const auto json = hamisim(args);
    args.back() = "yaml";
    const auto yaml = hamisim(args);
    EXPECT_EQ(yaml.exit_code, json.exit_code) << describe(yaml);
    ASSERT_FALSE(yaml.out.empty()) << describe(yaml);
    EXPECT_NE(yaml.out.front(), '{') << "not block YAML:\n" << yaml.out;
    boost::json::value want = boost::json::parse(json.out);
    boost::json::value got = yaml_back(yaml.out);
    ASSERT_TRUE(got.is_object()) << yaml.out;
    want.as_object().erase("provenance");
    got.as_object().erase("provenance");
    EXPECT_EQ(got, want) << command[0] << ":\n" << yaml.out;
  }
}

TEST_F(CliInputs, YamlOutputIsBlockYamlWithStringsQuoted) {
  // Strings quoted (a "" or "100" stays a string), booleans and numbers plain, null as `~`,
  // empty lists and maps in flow style, keys plain unless YAML would read them otherwise.
  const auto r = hamisim(plan({"--cluster", kCluster, "-o", "yaml"}));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("apiVersion: \"hamisim.io/v1\"\n"));
  EXPECT_THAT(r.out, HasSubstr("\nextenderFailed: false\n"));
  EXPECT_THAT(r.out, HasSubstr("\nwarnings: []\n"));
  EXPECT_THAT(r.out, HasSubstr("\n    deviceProfile: \"\"\n"));
  EXPECT_THAT(r.out, HasSubstr("\n    estimatedNodes: ~\n"));
  EXPECT_THAT(r.out, HasSubstr("\n    estimatedNodes: 1\n"));
  EXPECT_THAT(r.out, HasSubstr("\n      ml/trainer-2: \"HAMi: node unregistered\"\n"));
}

TEST_F(CliInputs, DoctorReadsOurShippedSchedulerConfigConfigMap) {
  const auto r =
      hamisim({"doctor", "--scheduler-config",
               kSource + "/deploy/cluster-autoscaler/scheduler-config.yaml", "--offline"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("scheduler-config.yaml:scheduler-config.yaml"));
}

TEST_F(CliInputs, PlanReadsOurShippedSchedulerConfigConfigMap) {
  const auto r = hamisim(
      plan({"--cluster", kCluster, "--scheduler-config",
            kSource + "/deploy/cluster-autoscaler/scheduler-config.yaml", "--output", "json"}));
  // The file was read: what stops the plan here is the mTLS material it names, which lives only
  // in the cluster.
  EXPECT_THAT(r.err, Not(HasSubstr("unknown field"))) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("tlsConfig.caFile /etc/hamisim/tls/ca.crt")) << describe(r);
}

TEST_F(CliInputs, PriorityConfigReadsCasPriorityExpanderConfigMap) {
  const std::string cm = write("prio.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-autoscaler-priority-expander
  namespace: kube-system
data:
  priorities: |-
    10:
      - .*
    50:
      - gpu-k80.*
)");
  const auto r =
      hamisim(plan({"--cluster", kCluster, "--expander", "priority", "--priority-config", cm}));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("scale up gpu-k80"));
}

TEST_F(CliInputs, AConfigMapWithSeveralPossibleKeysAsksForPathColonKey) {
  const std::string cm = write("cm.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata: {name: two}
data:
  a.yaml: |
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
  b.yaml: |
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
)");
  auto r = hamisim({"doctor", "--scheduler-config", cm, "--offline"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("name the key: --scheduler-config " + cm + ":KEY"));
  r = hamisim({"doctor", "--scheduler-config", cm + ":b.yaml", "--offline"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);  // read; and it has no extender, which doctor says
  EXPECT_THAT(r.out, HasSubstr(cm + ":b.yaml"));
}

TEST_F(CliInputs, FitNodeGivenAListOfTwoNodesIsRefusedNamingTheItems) {
  const std::string list = write("nodes.yaml", R"(apiVersion: v1
kind: NodeList
items:
- metadata: {name: a}
- metadata: {name: b}
)");
  const auto r = hamisim({"fit", "--pod", kPod, "--node", list});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("items[0] (Node \"a\")"));
  EXPECT_THAT(r.err, HasSubstr("--node reads one"));
}

TEST_F(CliInputs, FitNodeGivenAListOfOneNodeReadsIt) {
  std::ifstream in(kNode);
  std::string node((std::istreambuf_iterator<char>(in)), {});
  std::string indented;
  for (size_t i = 0; i < node.size(); ++i) {
    if (i == 0 || node[i - 1] == '\n') indented += "    ";
    indented += node[i];
  }
  const std::string list =
      write("list.yaml", "apiVersion: v1\nkind: List\nitems:\n  -\n" + indented);
  const auto r = hamisim({"fit", "--pod", kPod, "--node", list});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("FITS"));
}

// Issue #47: `FILE:NAME` picks one Node of a List (kubectl get nodes -o yaml).
TEST_F(CliInputs, FitNodeNamedInAListOfSeveralNodesReadsThatOne) {
  std::ifstream in(kNode);
  std::string node((std::istreambuf_iterator<char>(in)), {});
  std::string indented;
  for (size_t i = 0; i < node.size(); ++i) {
    if (i == 0 || node[i - 1] == '\n') indented += "    ";
    indented += node[i];
  }
  const std::string list = write("nodes.yaml",
                                 "apiVersion: v1\nkind: NodeList\nitems:\n"
                                 "  - metadata: {name: plain}\n  -\n" +
                                     indented);
  auto r = hamisim({"fit", "--pod", kPod, "--node", list});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--node reads one: name it as " + list + ":<name>"));
  r = hamisim({"fit", "--pod", kPod, "--node", list + ":gpu-node-a"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("FITS"));
  r = hamisim({"fit", "--pod", kPod, "--node", list + ":plain"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, Not(HasSubstr("FITS")));
  r = hamisim({"fit", "--pod", kPod, "--node", list + ":nope"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("nodes.yaml: no item is named \"nope\" (items[0] (Node \"plain\")"));
  // A single Node is not a List: its name is no key.
  r = hamisim({"fit", "--pod", kPod, "--node", kNode + ":gpu-node-a"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("names a ConfigMap key or a List's item, but the input is a Node"));
}

TEST_F(CliInputs, FitNodeGivenAPodIsRefused) {
  const auto r = hamisim({"fit", "--pod", kPod, "--node", kPod});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(kPod + ": kind \"Pod\": --node reads a Node"));
}

TEST_F(CliInputs, FitPodGivenANodeIsRefused) {
  const auto r = hamisim({"fit", "--pod", kNode, "--node", kNode});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(kNode + ": kind \"Node\": --pod reads a Pod"));
  EXPECT_THAT(r.out, Not(HasSubstr("FITS")));
}

TEST_F(CliInputs, PlanClusterWithAMisspeltKindIsRefusedNamingTheItem) {
  const std::string cluster = write("cluster.yaml", R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Nod
  metadata: {name: a100-1}
)");
  const auto r = hamisim(plan({"--cluster", cluster}));
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(cluster + ": items[0] (Nod \"a100-1\"): unknown kind \"Nod\""));
}

TEST_F(CliInputs, PlanClusterGivenAnEmptyFileIsRefused) {
  const std::string cluster = write("cluster.yaml", "# nothing\n");
  const auto r = hamisim(plan({"--cluster", cluster}));
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(cluster + ": empty"));
}

TEST_F(CliInputs, PlanClusterFromAKubectlGetAllDumpWarnsNamingWhatWasSkipped) {
  const auto r = hamisim(plan({"--cluster", kFixtures + "/kubectl-get-all.yaml"}));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("warning: --cluster: skipped 2 Event(s)"));
  EXPECT_THAT(r.err, HasSubstr("skipped 1 Service"));
  EXPECT_THAT(r.err, HasSubstr("skipped 1 Deployment"));
}

// The bundled DRA example, by hand (its cluster.yaml says why): three chat pods fit
// l40-node-1's shared GPUs, train-0 needs two 80 GiB GPUs only the cold-zero A100 group has, so
// that group grows by one node holding train-0 on two GPUs and the other three chat pods
// sharing a third (75 of 100 cores, 60 of 80 GiB).
TEST_F(CliInputs, PlanReadsTheBundledDraExample) {
  const std::string dir = kExamples + "/plan-dra/";
  auto r = hamisim({"plan", "--cluster", dir + "cluster.yaml", "--node-groups",
                    dir + "node-groups.yaml", "--device-profiles", dir + "device-profiles.yaml"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("Decision: scale up gpu-a100 by 1 node (0 -> 1)"));
  // The three chat pods that fit share one row.
  EXPECT_THAT(r.out, HasSubstr("3 pods      fits-existing-node  on l40-node-1\n"));
  EXPECT_THAT(r.out, HasSubstr("ml/chat-0, ml/chat-1, ml/chat-2\n"));
  EXPECT_THAT(r.out, HasSubstr("3 claims: ml/chat-3-gpu, ml/chat-4-gpu, ml/chat-5-gpu"));
  r = hamisim({"plan", "--cluster", dir + "cluster.yaml", "--node-groups", dir + "node-groups.yaml",
               "--device-profiles", dir + "device-profiles.yaml", "-o", "json"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(
      r.out,
      HasSubstr(
          R"("device":"hami-gpu-2","shareable":true,"capacity":[{"name":"cores","consumed":"75","total":"100"})"));
}

// `profile slices`: the A100 group's slice in HAMi k8s-dra-driver's shape, which the strict
// decoder reads back, in JSON and in YAML; from a profile with `dra:` and from one with only
// NVIDIA `devices:`.
TEST_F(CliInputs, ProfileSlicesPrintsSlicesTheDecoderReadsBack) {
  for (const std::string& profiles :
       {kExamples + "/plan-dra/device-profiles.yaml", kExamples + "/plan/device-profiles.yaml"}) {
    for (const char* output : {"json", "yaml"}) {
      const auto r = hamisim({"profile", "slices", "--device-profiles", profiles, "--node-group",
                              "gpu-a100", "--node-name", "a100-0", "-o", output});
      ASSERT_EQ(r.exit_code, 0) << describe(r);
      auto set = model::decode_objects(r.out, {.dra = true});
      ASSERT_TRUE(set) << set.error().message << "\n" << r.out;
      ASSERT_EQ(set->dra_objects.size(), 1u) << r.out;
      dra::Objects objects;
      const Status decoded =
          dra::decode_object(set->dra_objects[0].json, set->dra_objects[0].path, objects);
      ASSERT_TRUE(decoded.ok()) << decoded.error().message << "\n" << r.out;
      const dra::ResourceSlice& slice = objects.slices.at(0);
      EXPECT_EQ(slice.driver, "hami-core-gpu.project-hami.io");
      EXPECT_EQ(slice.scope.node_name, "a100-0");
      EXPECT_EQ(slice.pool.name, "a100-0");
      ASSERT_EQ(slice.devices.size(), 8u);
      EXPECT_EQ(slice.devices[7].name, "hami-gpu-7");
      EXPECT_EQ(slice.devices[7].capacity.at("memory").value,
                model::Quantity::parse("80Gi").value());
    }
  }
}

TEST_F(CliInputs, ProfileSlicesAsClusterapiAnnotationsSaysWhatTheyLose) {
  const auto r = hamisim({"profile", "slices", "--device-profiles",
                          kExamples + "/plan-dra/device-profiles.yaml", "--node-group", "gpu-a100",
                          "--format", "clusterapi"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("capacity.cluster-autoscaler.kubernetes.io/dra-driver: "
                               "\"hami-core-gpu.project-hami.io\""));
  EXPECT_THAT(r.out, HasSubstr("capacity.cluster-autoscaler.kubernetes.io/gpu-count: \"8\""));
  EXPECT_THAT(r.err, HasSubstr("loses every attribute, capacity and request policy"));
  const auto unknown = hamisim({"profile", "slices", "--device-profiles",
                                kExamples + "/plan-dra/device-profiles.yaml", "--node-group", "x"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("no profile names node group \"x\""));
}

// `profile check` under DRA: a real A100 node publishing 7 of the 8 GPUs its profile promises
// is one `mismatch` (same attribute names, another device count) for HAMi's driver; with all 8
// it matches.
TEST_F(CliInputs, ProfileCheckComparesANodesSlicesWithItsProfile) {
  const std::string profiles = kExamples + "/plan-dra/device-profiles.yaml";
  auto slices = hamisim({"profile", "slices", "--device-profiles", profiles, "--node-group",
                         "gpu-a100", "--node-name", "a100-1", "-o", "json"});
  ASSERT_EQ(slices.exit_code, 0) << describe(slices);
  const std::string node =
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"a100-1","labels":{"agentpool":"a100"}}})";
  // The List of slices with the node added to its items.
  std::string all = slices.out;
  all.insert(all.find(R"("items":[)") + 9, node + ",");
  const std::string good = write("good.json", all);
  auto r = hamisim({"profile", "check", "--device-profiles", profiles, "--cluster", good});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  // One GPU fewer.
  const size_t last = all.rfind(R"({"name":"hami-gpu-7")");
  ASSERT_NE(last, std::string::npos);
  const size_t end = all.find(R"("allowMultipleAllocations":true})", last) + 32;
  all.erase(last - 1, end - last + 1);  // with the comma before it
  const std::string short_one = write("short.json", all);
  r = hamisim({"profile", "check", "--device-profiles", profiles, "--cluster", short_one});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_THAT(r.out,
              HasSubstr("DRA hami-core-gpu.project-hami.io: 0 missing, 0 extra, 1 mismatch"));
}

TEST_F(CliInputs, PlanClusterDashReadsStandardInput) {
  const auto r = hamisim_with_stdin(
      "plan --cluster - --node-groups '" + kNodeGroups + "' --device-profiles '" + kProfiles + "'",
      kCluster);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("scale up gpu-k80"));
}

TEST_F(CliInputs, FitPodDashReadsStandardInput) {
  const auto r = hamisim_with_stdin("fit --pod - --node '" + kNode + "'", kPod);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("FITS"));
}

TEST_F(CliInputs, TwoFlagsReadingStandardInputIsAnError) {
  const auto r = hamisim_with_stdin("fit --pod - --node -", kPod);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--node and --pod both read standard input"));
}

TEST_F(CliInputs, DoctorAcceptsAKubeSchedulerConfigAlone) {
  const auto r = hamisim({"doctor", "--kube-scheduler-config",
                          kSource + "/deploy/live/scheduler-config.yaml", "--offline"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("kube-scheduler configuration"));
}

TEST_F(CliInputs, DoctorTreatsHamisChartInsecureLoopbackTlsLikePlainHttpToLoopback) {
  const auto r = hamisim({"doctor", "--kube-scheduler-config",
                          kFixtures + "/hami-scheduler-newversion.yaml", "--offline"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("INFO     extenders[0].urlPrefix  [tls]"));
  EXPECT_THAT(r.out, Not(HasSubstr("NOT OK")));
}

TEST_F(CliInputs, DoctorNetworkPolicyWithTheCaChartLabelsPasses) {
  const auto r = hamisim(
      {"doctor", "--scheduler-config", kSource + "/deploy/cluster-autoscaler/scheduler-config.yaml",
       "--network-policy", kFixtures + "/networkpolicy-chart-labels.yaml", "--offline"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("admits the CA Helm chart's pods for cloudProvider aws "
                               "(app.kubernetes.io/name: aws-cluster-autoscaler)"));
}

// The labels of a CA deployed otherwise (CA's example manifests), given on the command line.
TEST_F(CliInputs, DoctorNetworkPolicyChecksTheGivenCaPodLabels) {
  const std::string policy = kSource + "/deploy/simulation/networkpolicy.yaml";
  const std::string config = kSource + "/deploy/cluster-autoscaler/scheduler-config.yaml";
  auto r = hamisim({"doctor", "--scheduler-config", config, "--network-policy", policy,
                    "--ca-pod-labels", "app=cluster-autoscaler", "--offline"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("admits Cluster Autoscaler's pods (app: cluster-autoscaler)"));
  r = hamisim({"doctor", "--scheduler-config", config, "--network-policy", policy,
               "--ca-pod-labels", "app.kubernetes.io/name=my-ca", "--offline"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  r = hamisim({"doctor", "--scheduler-config", config, "--network-policy", policy,
               "--ca-pod-labels", "app", "--offline"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--ca-pod-labels: app must be formatted as key=value"));
}

TEST_F(CliInputs, DoctorNetworkPolicyWithGuessedCaLabelsIsAnError) {
  const auto r = hamisim(
      {"doctor", "--scheduler-config", kSource + "/deploy/cluster-autoscaler/scheduler-config.yaml",
       "--network-policy", kFixtures + "/networkpolicy-guessed-labels.yaml", "--offline"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("[network-policy-ca-labels]"));
  EXPECT_THAT(r.out, HasSubstr("app.kubernetes.io/name: aws-cluster-autoscaler"));
}

TEST_F(CliInputs, DoctorNetworkPolicyFollowsTheChartsCloudProvider) {
  const std::string np = write("np.yaml", R"(apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: x}
spec:
  ingress:
  - from:
    - podSelector:
        matchLabels: {app.kubernetes.io/name: gce-cluster-autoscaler, app.kubernetes.io/instance: ca}
)");
  auto r =
      hamisim({"doctor", "--kube-scheduler-config", kSource + "/deploy/live/scheduler-config.yaml",
               "--network-policy", np, "--offline"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  r = hamisim({"doctor", "--kube-scheduler-config", kSource + "/deploy/live/scheduler-config.yaml",
               "--network-policy", np, "--ca-cloud-provider", "gce", "--offline"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}

// An extender nobody answers on (port 1 of loopback refuses at once), not ignorable.
std::string unreachable_extender_config() {
  return R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: http://127.0.0.1:1
  filterVerb: filter-simulation
  nodeCacheCapable: false
  ignorable: false
  httpTimeout: 2s
  managedResources:
  - {name: nvidia.com/gpu, ignoredByScheduler: true}
  - {name: nvidia.com/gpumem, ignoredByScheduler: true}
  - {name: nvidia.com/gpumem-percentage, ignoredByScheduler: true}
  - {name: nvidia.com/gpucores, ignoredByScheduler: true}
  - {name: nvidia.com/priority, ignoredByScheduler: true}
)";
}

TEST_F(CliInputs, PlanExits3AndSaysSoWhenANonIgnorableExtenderFailed) {
  const std::string config = write("ca.yaml", unreachable_extender_config());
  auto r = hamisim(plan({"--cluster", kCluster, "--scheduler-config", config}));
  EXPECT_EQ(r.exit_code, 3) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("but an extender failed")) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("a non-ignorable extender failed"));
  r = hamisim(plan({"--cluster", kCluster, "--scheduler-config", config, "--output", "json"}));
  EXPECT_EQ(r.exit_code, 3) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("\"extenderFailed\":true"));
  EXPECT_THAT(r.out, HasSubstr("127.0.0.1:1"));
}

TEST_F(CliInputs, PlanWithoutExtenderFailuresSaysNoExtenderFailed) {
  const auto r = hamisim(plan({"--cluster", kCluster, "--output", "json"}));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("\"extenderFailed\":false"));
}

// README's "Using it" runs two `serve`s; the second then cannot have the default metrics port,
// and the error must say which flag moves it.
TEST(CliServeListen, ABusyMetricsPortNamesMetricsListen) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string busy = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  const auto r = hamisim({"serve", "--listen", "127.0.0.1:0", "--metrics-listen", busy});
  ::close(fd);
  EXPECT_NE(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--metrics-listen")) << describe(r);
}

// Issue #47: a flag given twice takes its last value in every subcommand, as pflag does in
// HAMi, kube-scheduler and Cluster Autoscaler (a chart's fixed flags, then extraArgs); list
// flags keep every value.
TEST(CliRepeatedFlags, EveryFlagTakesItsLastValue) {
  auto r = hamisim({"plan", "--cluster", kCluster, "--node-groups", kNodeGroups,
                    "--device-profiles", kProfiles, "-o", "json", "--output", "table"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("Decision:"));
  r = hamisim({"plan", "--cluster", kCluster, "--node-groups", kNodeGroups, "--device-profiles",
               kProfiles, "--output", "table", "-o", "json"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out.rfind("{", 0), 0u) << r.out;
  r = hamisim({"fit", "--pod", kPod, "--node", "/nonexistent.yaml", "--node", kNode, "-o", "json",
               "-o", "table"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("FITS"));
  // serve: hamisim's own flags and HAMi's alike; the last --log-format is the one refused.
  r = hamisim({"serve", "--log-format", "json", "--log-format", "yaml"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(R"(not "yaml")"));
  // A list flag keeps every value: both pod files are read.
  r = hamisim({"plan", "--cluster", kCluster, "--node-groups", kNodeGroups, "--device-profiles",
               kProfiles, "--pods", kPod, "--pods", kPod, "-o", "json"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}

TEST(CliVersion, TheVersionSubcommandPrintsTheVersionAndRevision) {
  const auto r = hamisim({"version"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, ::testing::MatchesRegex(R"(hamisim [0-9.]+ \(revision [^ ]+\)
)"));
  // HAMi's `scheduler version` keeps cobra's six lines on stderr.
  const auto hami = hamisim({"scheduler", "version"});
  EXPECT_EQ(hami.exit_code, 0) << describe(hami);
  EXPECT_THAT(hami.err, HasSubstr("revision:"));
}

TEST(CliServeLeaderElect, WithoutAClusterSourceItIsAnError) {
  const auto r = hamisim({"serve", "--listen", "127.0.0.1:0", "--metrics-listen", "",
                          "--leader-elect", "--leader-elect-resource-name", "hami-scheduler"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--leader-elect needs a cluster source"));
}

// --extender-bind (HAMi's flag) names itself when it cannot listen, and plain HTTP there obeys
// the same rule as --listen.
TEST(CliServeListen, ABadExtenderBindNamesTheFlag) {
  auto r = hamisim(
      {"serve", "--listen", "127.0.0.1:0", "--metrics-listen", "", "--extender-bind=localhost:x"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--extender-bind: bad listen address localhost:x"));
  r = hamisim(
      {"serve", "--listen", "127.0.0.1:0", "--metrics-listen", "", "--extender-bind=0.0.0.0:0"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("refusing plain HTTP on non-loopback address 0.0.0.0:0"));
}

}  // namespace
}  // namespace hamisim
