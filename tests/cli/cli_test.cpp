// The `hamisim` command line as a user meets it: the real binary, its exit codes (spec §6.5:
// 0 when a plan was made, 2 on bad input, 1 on internal failure; `profile check` 1 on a
// mismatch), what it prints on stdout and what it says on stderr.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_apiserver.h"
#include "model/decode.h"
#include "run_process.h"
#include "state/object_store.h"
#include "test_paths.h"

namespace hamisim {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using testing::describe;
using ::testing::HasSubstr;
using testing::ProcessResult;
using ::testing::StartsWith;

const std::string kExamples = hamisim::testing::examples_dir();
const std::string kPlanDir = kExamples + "/plan";
const std::string kClusterYaml = kPlanDir + "/cluster.yaml";
const std::string kNodeGroupsYaml = kPlanDir + "/node-groups.yaml";
const std::string kDeviceProfilesYaml = kPlanDir + "/device-profiles.yaml";
const std::string kFitDir = kExamples + "/fit";
const std::string kProfilesDir = kExamples + "/profiles";

ProcessResult hamisim(std::vector<std::string> args) {
  args.insert(args.begin(), hamisim::testing::hamisim_bin());
  return testing::run_process(args);
}

// The bundled plan example given explicitly, plus `extra`.
std::vector<std::string> plan_args(std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      "plan",          "--cluster",         kClusterYaml,       "--node-groups",
      kNodeGroupsYaml, "--device-profiles", kDeviceProfilesYaml};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// A run that finished by itself (no crash, no hang, started at all).
void expect_ran(const ProcessResult& r) {
  ASSERT_TRUE(r.spawn_error.empty()) << describe(r);
  ASSERT_FALSE(r.timed_out) << describe(r);
  ASSERT_EQ(r.term_signal, 0) << describe(r);
}

json::value parse_json(const std::string& text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  EXPECT_FALSE(ec) << "not JSON (" << ec.message() << "): " << text;
  return v;
}

const json::object* find_by(const json::array& a, std::string_view key, std::string_view value) {
  for (const auto& item : a) {
    const auto* o = item.if_object();
    if (o == nullptr) continue;
    const auto* v = o->if_contains(key);
    if (v != nullptr && v->is_string() && v->get_string() == value) return o;
  }
  return nullptr;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "hamisim-test-cli-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Writes `text` to a file in this test's own temporary directory and returns its path.
  std::string write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }
  fs::path dir_;
};

// ---------------------------------------------------------------------------------------------
// hamisim plan: the bundled example

TEST_F(CliTest, PlanWithoutArgumentsPlansTheBundledExample) {
  const auto r = hamisim({"plan"});
  expect_ran(r);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, StartsWith("Decision: scale up gpu-k80 by 1 node (1 -> 2)"));
  // The cold group: no member, its template from the node groups file and its devices from
  // the nd96-a100-80g profile.
  EXPECT_THAT(r.out, HasSubstr("gpu-a100"));
  EXPECT_THAT(r.out, HasSubstr("cold, template-node-for-gpu-a100-"));
  EXPECT_THAT(r.out, HasSubstr("nd96-a100-80g"));
  // The CPU group has no HAMi registration, so its template rejects the GPU pod.
  EXPECT_THAT(r.out, HasSubstr("rejects   ml/trainer-2  HAMi: node unregistered"));
  // Not a terminal: no colour escapes.
  EXPECT_EQ(r.out.find('\033'), std::string::npos);
  EXPECT_THAT(r.err, HasSubstr("no input files; planning the bundled example in"));
  EXPECT_THAT(r.err, HasSubstr(kPlanDir));
}

TEST_F(CliTest, PlanWithTheExamplePathsGivenPrintsWhatTheNoArgumentRunPrints) {
  const auto bundled = hamisim({"plan"});
  expect_ran(bundled);
  ASSERT_EQ(bundled.exit_code, 0) << describe(bundled);
  const auto explicit_paths = hamisim(plan_args());
  expect_ran(explicit_paths);
  ASSERT_EQ(explicit_paths.exit_code, 0) << describe(explicit_paths);
  EXPECT_EQ(explicit_paths.out, bundled.out);
  // Only the no-argument run says it is using the bundled example.
  EXPECT_EQ(explicit_paths.err, "");
}

// Issue #30: options without input files (an output format, CA's knobs) plan the bundled
// example too; one input file makes the others required.
TEST_F(CliTest, PlanWithOnlyAnOutputFormatPlansTheBundledExample) {
  for (const char* format : {"json", "html", "table"}) {
    const auto r = hamisim({"plan", "-o", format, "--expander", "price"});
    expect_ran(r);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_THAT(r.err, HasSubstr("no input files; planning the bundled example in"));
    EXPECT_THAT(r.out, HasSubstr("gpu-k80"));
  }
  const auto partial =
      hamisim({"plan", "--node-groups", std::string(kPlanDir) + "/node-groups.yaml"});
  expect_ran(partial);
  EXPECT_EQ(partial.exit_code, 2) << describe(partial);
  EXPECT_THAT(partial.err, HasSubstr("--cluster (or --live, --kubeconfig, --in-cluster) is "
                                     "required, or no input file at all"));
  EXPECT_EQ(partial.out, "");
}

TEST_F(CliTest, PlanJsonFollowsTheDocumentedSchema) {
  const auto r = hamisim(plan_args({"-o", "json"}));
  expect_ran(r);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  ASSERT_FALSE(r.out.empty());
  // One compact document and a newline (docs/plan-json.md, encoding rules).
  EXPECT_EQ(r.out.back(), '\n');
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1);
  const json::value doc = parse_json(r.out);
  ASSERT_TRUE(doc.is_object()) << r.out;
  const json::object& plan = doc.as_object();

  for (const char* key :
       {"apiVersion", "kind", "decision", "summary", "scaleUps", "warnings", "clusterNodes",
        "clusterPods", "deviceStage", "groups", "pods", "newNodes", "unpatchedCa"}) {
    EXPECT_TRUE(plan.contains(key)) << "missing top-level key " << key;
  }
  EXPECT_EQ(plan.at("apiVersion"), "hamisim.io/v1");
  EXPECT_EQ(plan.at("kind"), "Plan");
  EXPECT_EQ(plan.at("decision"), "scale-up");
  EXPECT_THAT(std::string(plan.at("summary").as_string()),
              StartsWith("scale up gpu-k80 by 1 node (1 -> 2)"));
  EXPECT_EQ(plan.at("clusterNodes"), 2);
  EXPECT_EQ(plan.at("clusterPods"), 4);
  EXPECT_EQ(plan.at("deviceStage"), "in-process");

  const json::array& ups = plan.at("scaleUps").as_array();
  ASSERT_EQ(ups.size(), 1u) << r.out;
  EXPECT_EQ(ups[0].at("group"), "gpu-k80");
  EXPECT_EQ(ups[0].at("currentSize"), 1);
  EXPECT_EQ(ups[0].at("newSize"), 2);
  EXPECT_EQ(ups[0].at("delta"), 1);

  // Every node group, in node-groups file order, with every documented key.
  const json::array& groups = plan.at("groups").as_array();
  ASSERT_EQ(groups.size(), 3u) << r.out;
  EXPECT_EQ(groups[0].at("name"), "gpu-k80");
  EXPECT_EQ(groups[1].at("name"), "gpu-a100");
  EXPECT_EQ(groups[2].at("name"), "cpu");
  for (const auto& g : groups) {
    for (const char* key :
         {"name",           "minSize",         "maxSize",      "targetSize",     "members",
          "templateSource", "templateNode",    "sampleNode",   "deviceSource",   "deviceProfile",
          "skipReason",     "schedulablePods", "rejectedPods", "estimatedNodes", "estimatedPods",
          "unplaced",       "similarGroups",   "option",       "chosen",         "expanderNote"}) {
      EXPECT_TRUE(g.as_object().contains(key)) << "group " << g.at("name") << " lacks " << key;
    }
  }
  const json::object& k80 = groups[0].as_object();
  EXPECT_EQ(k80.at("templateSource"), "warm");
  EXPECT_EQ(k80.at("sampleNode"), "k80-node-1");
  EXPECT_EQ(k80.at("chosen"), true);
  EXPECT_EQ(k80.at("estimatedNodes"), 1);

  const json::object& a100 = groups[1].as_object();
  EXPECT_EQ(a100.at("templateSource"), "cold");
  EXPECT_EQ(a100.at("deviceSource"), "profile");
  EXPECT_EQ(a100.at("deviceProfile"), "nd96-a100-80g");
  EXPECT_EQ(a100.at("members"), 0);
  EXPECT_EQ(a100.at("option"), true);
  EXPECT_EQ(a100.at("chosen"), false);

  const json::object& cpu = groups[2].as_object();
  EXPECT_EQ(cpu.at("deviceSource"), "none");
  EXPECT_TRUE(cpu.at("estimatedNodes").is_null());
  EXPECT_EQ(cpu.at("option"), false);
  const json::object& rejected = cpu.at("rejectedPods").as_object();
  ASSERT_TRUE(rejected.contains("ml/trainer-2")) << r.out;
  EXPECT_EQ(rejected.at("ml/trainer-2"), "HAMi: node unregistered");

  const json::array& pods = plan.at("pods").as_array();
  const json::object* trainer = find_by(pods, "pod", "ml/trainer-2");
  ASSERT_NE(trainer, nullptr) << r.out;
  EXPECT_EQ(trainer->at("state"), "triggers-scale-up");
  const json::object* web = find_by(pods, "pod", "shop/web-0");
  ASSERT_NE(web, nullptr) << r.out;
  EXPECT_EQ(web->at("state"), "fits-existing-node");
  EXPECT_EQ(web->at("node"), "cpu-node-1");

  const json::array& new_nodes = plan.at("newNodes").as_array();
  ASSERT_EQ(new_nodes.size(), 1u) << r.out;
  EXPECT_EQ(new_nodes[0].at("group"), "gpu-k80");
  EXPECT_EQ(new_nodes[0].at("devices").as_array().size(), 2u);
}

// The plan's JSON without its provenance (which names the inputs and the time it was made):
// the part that must be the same for the same inputs.
std::string plan_without_provenance(const std::string& out) {
  boost::json::value doc = boost::json::parse(out);
  doc.as_object().erase("provenance");
  return boost::json::serialize(doc);
}

// Everything but the provenance, the document's last key (its time changes from run to run),
// is the same bytes every run.
TEST_F(CliTest, PlanJsonIsTheSameBytesEveryRun) {
  const auto first = hamisim(plan_args({"--output", "json"}));
  const auto second = hamisim(plan_args({"--output", "json"}));
  expect_ran(first);
  expect_ran(second);
  ASSERT_EQ(first.exit_code, 0) << describe(first);
  const auto before_provenance = [](const std::string& out) {
    return out.substr(0, out.rfind(R"(,"provenance":{)"));
  };
  EXPECT_EQ(before_provenance(first.out), before_provenance(second.out));
  EXPECT_NE(first.out.rfind(R"(,"provenance":{"version":)"), std::string::npos) << first.out;
  EXPECT_EQ(plan_without_provenance(first.out), plan_without_provenance(second.out));
}

// The provenance names each input file by its SHA-256 (taken while the plan is made). A pipe
// gets none: reading it for a digest would take bytes from the plan, which reads it too.
TEST_F(CliTest, PlanJsonProvenanceDigestsFilesAndLeavesPipesToThePlan) {
  const auto from_file = hamisim(plan_args({"-o", "json"}));
  expect_ran(from_file);
  ASSERT_EQ(from_file.exit_code, 0) << describe(from_file);
  const auto sum = testing::run_process({"/usr/bin/sha256sum", kClusterYaml});
  if (!sum.spawn_error.empty() || sum.exit_code != 0) GTEST_SKIP() << "no /usr/bin/sha256sum here";
  const std::string want = sum.out.substr(0, sum.out.find(' '));
  const json::value file_plan = parse_json(from_file.out);
  const json::array& inputs = file_plan.at("provenance").at("inputs").as_array();
  const json::object* cluster = find_by(inputs, "flag", "--cluster");
  ASSERT_NE(cluster, nullptr) << from_file.out;
  EXPECT_EQ(cluster->at("sha256").as_string(), want);

  const std::string fifo = (dir_ / "cluster-pipe.yaml").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::ifstream in(kClusterYaml, std::ios::binary);
    std::ofstream out(fifo, std::ios::binary);
    out << in.rdbuf();
  });
  const auto from_pipe = hamisim({"plan", "--cluster", fifo, "--node-groups", kNodeGroupsYaml,
                                  "--device-profiles", kDeviceProfilesYaml, "-o", "json"});
  writer.join();
  expect_ran(from_pipe);
  ASSERT_EQ(from_pipe.exit_code, 0) << describe(from_pipe);
  EXPECT_EQ(plan_without_provenance(from_pipe.out), plan_without_provenance(from_file.out));
  const json::value pipe_plan = parse_json(from_pipe.out);
  const json::array& pipe_inputs = pipe_plan.at("provenance").at("inputs").as_array();
  const json::object* piped = find_by(pipe_inputs, "flag", "--cluster");
  ASSERT_NE(piped, nullptr) << from_pipe.out;
  EXPECT_EQ(piped->at("sha256").as_string(), "");
}

TEST_F(CliTest, PlanHtmlIsASelfContainedDocument) {
  const auto r = hamisim(plan_args({"-o", "html"}));
  expect_ran(r);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(r.out, HasSubstr("</html>"));
  EXPECT_THAT(r.out, HasSubstr("scale up gpu-k80 by 1 node"));
  EXPECT_THAT(r.out, HasSubstr("<svg"));  // the device-usage picture of the new node
  // Nothing fetched from elsewhere: no remote src/href, stylesheet link, import or url().
  const std::regex remote(R"re((src|href)\s*=\s*["']?\s*(https?:)?//)re", std::regex::icase);
  EXPECT_FALSE(std::regex_search(r.out, remote)) << r.out;
  const std::regex fetches(R"re(<link\b|@import|url\(\s*["']?\s*(https?:)?//|<script[^>]*\bsrc)re",
                           std::regex::icase);
  EXPECT_FALSE(std::regex_search(r.out, fetches)) << r.out;
}

// ---------------------------------------------------------------------------------------------
// hamisim plan: bad input exits 2 and says which file and what is wrong

TEST_F(CliTest, PlanWithAMissingClusterFileExits2NamingIt) {
  const std::string missing = (dir_ / "no-such-cluster.yaml").string();
  const auto r = hamisim({"plan", "--cluster", missing, "--node-groups", kNodeGroupsYaml,
                          "--device-profiles", kDeviceProfilesYaml});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("hamisim plan: cannot open " + missing));
  EXPECT_THAT(r.err, HasSubstr("No such file or directory"));
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, PlanWithAMissingNodeGroupsFileExits2NamingIt) {
  const std::string missing = (dir_ / "no-such-node-groups.yaml").string();
  const auto r = hamisim({"plan", "--cluster", kClusterYaml, "--node-groups", missing});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("cannot open " + missing));
}

TEST_F(CliTest, PlanWithAMissingDeviceProfilesFileExits2NamingIt) {
  const std::string missing = (dir_ / "no-such-profiles.yaml").string();
  const auto r = hamisim({"plan", "--cluster", kClusterYaml, "--node-groups", kNodeGroupsYaml,
                          "--device-profiles", missing});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("cannot open " + missing));
}

TEST_F(CliTest, PlanWithMalformedNodeGroupsYamlExits2NamingTheFileAndLine) {
  const std::string path = write("node-groups.yaml",
                                 "apiVersion: hamisim.io/v1\n"
                                 "kind: NodeGroups\n"
                                 "nodeGroups:\n"
                                 "  - name: [unclosed\n");
  const auto r = hamisim({"plan", "--cluster", kClusterYaml, "--node-groups", path});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("hamisim plan: " + path + ": "));
  EXPECT_THAT(r.err, HasSubstr("line "));
  EXPECT_THAT(r.err, HasSubstr("end of sequence flow not found"));
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, PlanWithAnUnknownNodeGroupFieldExits2NamingGroupFieldAndLine) {
  const std::string path = write("node-groups.yaml",
                                 "apiVersion: hamisim.io/v1\n"
                                 "kind: NodeGroups\n"
                                 "nodeGroups:\n"
                                 "  - name: g1\n"
                                 "    minSize: 0\n"
                                 "    maxSize: 3\n"
                                 "    members: {agentpool: x}\n"
                                 "    colour: blue\n");
  const auto r = hamisim({"plan", "--cluster", kClusterYaml, "--node-groups", path});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(path + ": nodeGroups[0] (g1).colour: unknown field"));
  EXPECT_THAT(r.err, HasSubstr("(line 8)"));
}

TEST_F(CliTest, PlanWithAnEmptyNodeGroupsFileExits2) {
  const std::string path = write("node-groups.yaml", "");
  const auto r = hamisim({"plan", "--cluster", kClusterYaml, "--node-groups", path});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(path + ": empty, want a NodeGroups document"));
}

TEST_F(CliTest, PlanWithMalformedClusterYamlExits2NamingTheFile) {
  const std::string path = write("cluster.yaml", "apiVersion: v1\nkind: List\nitems: [\n");
  const auto r = hamisim({"plan", "--cluster", path, "--node-groups", kNodeGroupsYaml,
                          "--device-profiles", kDeviceProfilesYaml});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("hamisim plan: " + path + ": "));
}

TEST_F(CliTest, PlanWithADeviceProfileButNoDeviceProfilesFileExits2) {
  // The bundled node groups name nd96-a100-80g for the cold gpu-a100 group.
  const auto r = hamisim({"plan", "--cluster", kClusterYaml, "--node-groups", kNodeGroupsYaml});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(kNodeGroupsYaml + ": node group gpu-a100 names deviceProfile "
                                                 "\"nd96-a100-80g\" but no --device-profiles "
                                                 "was given"));
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, PlanWithADeviceProfileMissingFromTheProfilesFileExits2) {
  const std::string path = write("node-groups.yaml",
                                 "apiVersion: hamisim.io/v1\n"
                                 "kind: NodeGroups\n"
                                 "nodeGroups:\n"
                                 "  - name: g1\n"
                                 "    minSize: 0\n"
                                 "    maxSize: 3\n"
                                 "    members: {agentpool: x}\n"
                                 "    deviceProfile: no-such-profile\n");
  const auto r = hamisim({"plan", "--cluster", kClusterYaml, "--node-groups", path,
                          "--device-profiles", kDeviceProfilesYaml});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(path +
                               ": node group g1: deviceProfile \"no-such-profile\" is not "
                               "in " +
                               kDeviceProfilesYaml));
}

TEST_F(CliTest, PlanWithAnUnknownOutputFormatExits2) {
  const auto r = hamisim(plan_args({"-o", "xml"}));
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--output must be table, json, yaml or html, not \"xml\""));
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, PlanWithAnUnknownExpanderExits2) {
  for (const std::string chain : {"bogus", "priority,bogus"}) {
    SCOPED_TRACE(chain);
    const auto r = hamisim(plan_args({"--expander", chain}));
    expect_ran(r);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_THAT(r.err, HasSubstr("--expander: expander: unknown expander \"bogus\""));
    EXPECT_THAT(r.err, HasSubstr("the expanders are least-waste, most-pods, least-nodes, price, "
                                 "priority and random"));
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(CliTest, PlanWithABadBinpackingDurationExits2) {
  const auto r = hamisim(plan_args({"--max-nodegroup-binpacking-duration", "10parsecs"}));
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--max-nodegroup-binpacking-duration: time: invalid duration "
                               "\"10parsecs\""));
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, PlanWithANegativeBinpackingDurationExits2) {
  const auto r = hamisim(plan_args({"--max-nodegroup-binpacking-duration", "-1s"}));
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--max-nodegroup-binpacking-duration: must not be negative"));
}

TEST_F(CliTest, PlanWithABadBinpackingTimeExits2) {
  const auto r = hamisim(plan_args({"--max-binpacking-time", "abc"}));
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--max-binpacking-time: time: invalid duration \"abc\""));
}

TEST_F(CliTest, PlanWithANegativeMaxNodesPerScaleUpExits2) {
  const auto r = hamisim(plan_args({"--max-nodes-per-scaleup", "-1"}));
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--max-nodes-per-scaleup: must not be negative"));
}

TEST_F(CliTest, PlanWithANegativeMaxNodesTotalExits2) {
  const auto r = hamisim(plan_args({"--max-nodes-total", "-5"}));
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--max-nodes-total: must not be negative"));
}

TEST_F(CliTest, PlanWithANonNumericMaxNodesTotalExits2) {
  const auto r = hamisim(plan_args({"--max-nodes-total", "abc"}));
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--max-nodes-total"));
}

TEST_F(CliTest, PlanWithAnUnknownFlagExits2) {
  const auto r = hamisim(plan_args({"--no-such-flag"}));
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--no-such-flag"));
}

// ---------------------------------------------------------------------------------------------
// hamisim fit

TEST_F(CliTest, FitExplainsAPodThatFits) {
  const auto r =
      hamisim({"fit", "--pod", kFitDir + "/pod-fits.yaml", "--node", kFitDir + "/node-k80.yaml"});
  expect_ran(r);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, StartsWith("Pod default/gpu-workload -> node gpu-node-a: FITS"));
  EXPECT_THAT(r.out, HasSubstr("container 0 \"main\" gets:"));
  EXPECT_THAT(r.out, HasSubstr("300 MiB of 11441 MiB, 40% cores"));
  EXPECT_THAT(r.out, HasSubstr("hami.io/vgpu-devices-allocated: "));
  EXPECT_EQ(r.err, "");
}

// `fit` explains; a pod that does not fit is an answer, not an error: exit 0.
TEST_F(CliTest, FitExplainsAPodTooBigForEveryGpu) {
  const auto r = hamisim(
      {"fit", "--pod", kFitDir + "/pod-too-big.yaml", "--node", kFitDir + "/node-k80.yaml"});
  expect_ran(r);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, StartsWith("Pod default/gpu-too-big -> node gpu-node-a: DOES NOT FIT "
                                "(InsufficientCapacity)"));
  EXPECT_THAT(r.out, HasSubstr("HAMi reason: 2/2 CardInsufficientMemory"));
  EXPECT_THAT(r.out, HasSubstr("CardInsufficientMemory: needs 12000 MiB, 11441 of 11441 MiB free"));
}

TEST_F(CliTest, FitCountsThePodsAlreadyOnTheNode) {
  const auto r =
      hamisim({"fit", "--pod", kFitDir + "/pod-two-gpus.yaml", "--node", kFitDir + "/node-k80.yaml",
               "--pods-on-node", kFitDir + "/pods-on-node.yaml"});
  expect_ran(r);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("DOES NOT FIT"));
  EXPECT_THAT(r.out, HasSubstr("1/2 AllocatedCardsInsufficientRequest"));
  EXPECT_THAT(r.out, HasSubstr("only 1 GPU(s) could take the container"));
}

TEST_F(CliTest, FitJsonForAPodThatFits) {
  const auto r = hamisim({"fit", "--pod", kFitDir + "/pod-fits.yaml", "--node",
                          kFitDir + "/node-k80.yaml", "--output", "json"});
  expect_ran(r);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json::value doc = parse_json(r.out);
  ASSERT_TRUE(doc.is_object()) << r.out;
  EXPECT_EQ(doc.at("pod"), "default/gpu-workload");
  EXPECT_EQ(doc.at("node"), "gpu-node-a");
  EXPECT_EQ(doc.at("fits"), true);
  EXPECT_EQ(doc.at("class"), "Fits");
  const json::array& allocations = doc.at("allocations").as_array();
  ASSERT_EQ(allocations.size(), 1u) << r.out;
  EXPECT_EQ(allocations[0].at("usedmem"), 300);
  EXPECT_EQ(allocations[0].at("usedcores"), 40);
  EXPECT_TRUE(doc.at("annotations").as_object().contains("hami.io/vgpu-devices-allocated"));
  EXPECT_EQ(doc.at("devices").as_array().size(), 2u);
}

TEST_F(CliTest, FitJsonForAPodTooBig) {
  const auto r = hamisim({"fit", "--pod", kFitDir + "/pod-too-big.yaml", "--node",
                          kFitDir + "/node-k80.yaml", "-o", "json"});
  expect_ran(r);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json::value doc = parse_json(r.out);
  ASSERT_TRUE(doc.is_object()) << r.out;
  EXPECT_EQ(doc.at("fits"), false);
  EXPECT_EQ(doc.at("class"), "InsufficientCapacity");
  EXPECT_EQ(doc.at("reason"), "2/2 CardInsufficientMemory");
  const json::array& verdicts = doc.at("verdicts").as_array();
  ASSERT_EQ(verdicts.size(), 2u) << r.out;
  for (const auto& v : verdicts) EXPECT_EQ(v.at("reason"), "CardInsufficientMemory");
  EXPECT_TRUE(doc.at("allocations").as_array().empty());
}

TEST_F(CliTest, FitWithAMissingPodFileExits2NamingIt) {
  const std::string missing = (dir_ / "no-such-pod.yaml").string();
  const auto r = hamisim({"fit", "--pod", missing, "--node", kFitDir + "/node-k80.yaml"});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("hamisim fit: cannot open " + missing));
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, FitWithAMalformedPodExits2NamingTheFile) {
  const std::string path = write("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: [oops\n");
  const auto r = hamisim({"fit", "--pod", path, "--node", kFitDir + "/node-k80.yaml"});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("hamisim fit: " + path + ": "));
}

TEST_F(CliTest, FitWithAnUnknownOutputFormatExits2) {
  const auto r = hamisim({"fit", "--pod", kFitDir + "/pod-fits.yaml", "--node",
                          kFitDir + "/node-k80.yaml", "-o", "xml"});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--output must be table, json or yaml, not \"xml\""));
}

TEST_F(CliTest, FitWithoutANodeExits2) {
  const auto r = hamisim({"fit", "--pod", kFitDir + "/pod-fits.yaml"});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("--node is required"));
}

// ---------------------------------------------------------------------------------------------
// hamisim profile check

// The first real A100 node registered what its profile says.
constexpr const char* kMatchingNode = R"({"apiVersion":"v1","kind":"List","items":[{
  "apiVersion":"v1","kind":"Node","metadata":{"name":"a100-good","labels":{"agentpool":"gpu-a100"},
  "annotations":{"hami.io/node-nvidia-register":"[{\"id\":\"GPU-0\",\"index\":0,\"count\":10,\"devmem\":81920,\"devcore\":100,\"type\":\"NVIDIA A100-SXM4-80GB\",\"numa\":0,\"mode\":\"hami-core\",\"health\":true},{\"id\":\"GPU-1\",\"index\":1,\"count\":10,\"devmem\":81920,\"devcore\":100,\"type\":\"NVIDIA A100-SXM4-80GB\",\"numa\":0,\"mode\":\"hami-core\",\"health\":true},{\"id\":\"GPU-2\",\"index\":2,\"count\":10,\"devmem\":81920,\"devcore\":100,\"type\":\"NVIDIA A100-SXM4-80GB\",\"numa\":0,\"mode\":\"hami-core\",\"health\":true},{\"id\":\"GPU-3\",\"index\":3,\"count\":10,\"devmem\":81920,\"devcore\":100,\"type\":\"NVIDIA A100-SXM4-80GB\",\"numa\":0,\"mode\":\"hami-core\",\"health\":true},{\"id\":\"GPU-4\",\"index\":4,\"count\":10,\"devmem\":81920,\"devcore\":100,\"type\":\"NVIDIA A100-SXM4-80GB\",\"numa\":1,\"mode\":\"hami-core\",\"health\":true},{\"id\":\"GPU-5\",\"index\":5,\"count\":10,\"devmem\":81920,\"devcore\":100,\"type\":\"NVIDIA A100-SXM4-80GB\",\"numa\":1,\"mode\":\"hami-core\",\"health\":true},{\"id\":\"GPU-6\",\"index\":6,\"count\":10,\"devmem\":81920,\"devcore\":100,\"type\":\"NVIDIA A100-SXM4-80GB\",\"numa\":1,\"mode\":\"hami-core\",\"health\":true},{\"id\":\"GPU-7\",\"index\":7,\"count\":10,\"devmem\":81920,\"devcore\":100,\"type\":\"NVIDIA A100-SXM4-80GB\",\"numa\":1,\"mode\":\"hami-core\",\"health\":true}]"}}}]})";

TEST_F(CliTest, ProfileCheckOnTheExampleFindsTheMismatchingNodeAndExits1) {
  const auto r =
      hamisim({"profile", "check", "--device-profiles", kProfilesDir + "/device-profiles.yaml",
               "--cluster", kProfilesDir + "/nodes.yaml"});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("aks-gpua100-0"));
  EXPECT_THAT(r.out, HasSubstr("aks-gpua100-1"));
  EXPECT_THAT(r.out, HasSubstr("MISMATCH"));
  EXPECT_THAT(r.out, HasSubstr("devmem: profile 81920 x8, node 40960 x8"));
  EXPECT_EQ(r.err, "");
}

TEST_F(CliTest, ProfileCheckJsonOnTheExample) {
  const auto r =
      hamisim({"profile", "check", "--device-profiles", kProfilesDir + "/device-profiles.yaml",
               "--cluster", kProfilesDir + "/nodes.yaml", "-o", "json"});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  const json::value doc = parse_json(r.out);
  ASSERT_TRUE(doc.is_object()) << r.out;
  EXPECT_EQ(doc.at("mismatch"), true);
  const json::array& nodes = doc.at("nodes").as_array();
  const json::object* good = find_by(nodes, "node", "aks-gpua100-0");
  const json::object* bad = find_by(nodes, "node", "aks-gpua100-1");
  ASSERT_NE(good, nullptr) << r.out;
  ASSERT_NE(bad, nullptr) << r.out;
  EXPECT_EQ(good->at("profile"), "nd96-a100-80g");
  EXPECT_EQ(good->at("matches"), true);
  EXPECT_EQ(bad->at("matches"), false);
  EXPECT_FALSE(bad->at("mismatches").as_array().empty());
}

TEST_F(CliTest, ProfileCheckWithOnlyMatchingNodesExits0) {
  const std::string nodes = write("nodes.json", kMatchingNode);
  const auto r = hamisim({"profile", "check", "--device-profiles",
                          kProfilesDir + "/device-profiles.yaml", "--cluster", nodes});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("a100-good"));
  EXPECT_THAT(r.out, HasSubstr("matches"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("MISMATCH")));

  const auto j =
      hamisim({"profile", "check", "--device-profiles", kProfilesDir + "/device-profiles.yaml",
               "--cluster", nodes, "--output", "json"});
  expect_ran(j);
  EXPECT_EQ(j.exit_code, 0) << describe(j);
  const json::value doc = parse_json(j.out);
  ASSERT_TRUE(doc.is_object()) << j.out;
  EXPECT_EQ(doc.at("mismatch"), false);
}

TEST_F(CliTest, ProfileCheckWithAMissingProfilesFileExits2) {
  const std::string missing = (dir_ / "no-such-profiles.yaml").string();
  const auto r = hamisim({"profile", "check", "--device-profiles", missing, "--cluster",
                          kProfilesDir + "/nodes.yaml"});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("hamisim profile check: cannot open " + missing));
}

TEST_F(CliTest, ProfileWithoutASubcommandExits2) {
  const auto r = hamisim({"profile"});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("A subcommand is required"));
}

// ---------------------------------------------------------------------------------------------
// hamisim gen

TEST_F(CliTest, GenWritesAClusterThatPlanReads) {
  const std::string out = (dir_ / "gen").string();
  const auto g = hamisim({"gen", "--nodes", "6", "--pods-per-node", "10", "--pending", "12",
                          "--groups", "3", "--node-groups", "4", "--seed", "5", "--out", out});
  expect_ran(g);
  ASSERT_EQ(g.exit_code, 0) << describe(g);
  EXPECT_THAT(g.err, HasSubstr("6 nodes"));
  EXPECT_THAT(g.err, HasSubstr("12 pending pods"));
  const auto p = hamisim({"plan", "--cluster", out + "/cluster.json", "--node-groups",
                          out + "/node-groups.yaml", "--device-profiles",
                          out + "/device-profiles.yaml", "-o", "json"});
  expect_ran(p);
  ASSERT_EQ(p.exit_code, 0) << describe(p);
  EXPECT_THAT(p.out, HasSubstr("\"clusterNodes\":6"));
}

// Issue #47: gen never mixes its files into a folder holding something else, unless --force.
TEST_F(CliTest, GenRefusesANonEmptyOutDirectoryUnlessForced) {
  const std::string out = (dir_ / "busy").string();
  std::filesystem::create_directories(out);
  std::ofstream(out + "/mine.txt") << "keep me\n";
  const std::vector<std::string> gen = {"gen", "--nodes",       "2", "--pending", "2", "--groups",
                                        "1",   "--node-groups", "1", "--out",     out};
  auto r = hamisim(gen);
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("hamisim gen: --out " + out +
                               " is not empty (it holds mine.txt): choose an empty or new "
                               "directory, or --force to write into it"));
  EXPECT_FALSE(std::filesystem::exists(out + "/cluster.json"));
  auto forced = gen;
  forced.push_back("--force");
  r = hamisim(forced);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(std::filesystem::exists(out + "/cluster.json"));
  EXPECT_TRUE(std::filesystem::exists(out + "/mine.txt"));
}

TEST_F(CliTest, GenRejectsOptionsOutOfRange) {
  const auto r = hamisim({"gen", "--groups", "0", "--out", (dir_ / "gen").string()});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("hamisim gen: --groups"));
}

// ---------------------------------------------------------------------------------------------
// hamisim itself

TEST_F(CliTest, HelpListsTheSubcommands) {
  const auto r = hamisim({"--help"});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("Usage:"));
  for (const char* sub : {"fit", "serve", "plan", "profile"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("  ") + sub + " ")) << sub;
  }
}

TEST_F(CliTest, PlanHelpListsItsOptions) {
  const auto r = hamisim({"plan", "--help"});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  for (const char* flag : {"--cluster", "--node-groups", "--device-profiles", "--expander",
                           "--max-nodegroup-binpacking-duration", "--output"}) {
    EXPECT_THAT(r.out, HasSubstr(flag)) << flag;
  }
}

TEST_F(CliTest, VersionPrintsTheVersion) {
  const auto r = hamisim({"--version"});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.out, StartsWith("hamisim "));
}

TEST_F(CliTest, UnknownSubcommandExitsNonZeroAndSaysSoOnStderr) {
  const auto r = hamisim({"no-such-command"});
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("no-such-command"));
  EXPECT_THAT(r.err, HasSubstr("--help"));
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace hamisim

namespace hamisim {
namespace {

// The runner itself: a hang is killed and reported, and a child filling both pipes at once
// never blocks it.
TEST(RunProcess, KillsAChildThatOutlivesItsLimit) {
  const auto r =
      testing::run_process({"/bin/sh", "-c", "exec sleep 60"}, std::chrono::milliseconds(200));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_EQ(r.exit_code, -1);
}

TEST(RunProcess, DrainsLargeOutputOnBothStreams) {
  const auto r = testing::run_process(
      {"/bin/sh", "-c", "head -c 1000000 /dev/zero; head -c 1000000 /dev/zero >&2; exit 3"});
  ASSERT_FALSE(r.timed_out) << r.spawn_error;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out.size(), 1000000u);
  EXPECT_EQ(r.err.size(), 1000000u);
}

TEST(RunProcess, ReportsAProgramThatCannotStart) {
  const auto r = testing::run_process({"/nonexistent/hamisim"});
  EXPECT_FALSE(r.spawn_error.empty()) << describe(r);
}

}  // namespace
}  // namespace hamisim

namespace hamisim {
namespace {

// `serve` until its log shows `line` (at most 120 s), then SIGTERM, as an operator stops it.
// Waiting for the line rather than a fixed time keeps the test right on a loaded machine and
// under sanitizers, where starting up alone can take seconds. Exit code: serve's own.
ProcessResult serve_until(const std::string& line, std::vector<std::string> args) {
  const std::string log =
      (fs::temp_directory_path() / ("hamisim-cli-serve-" + std::to_string(::getpid()) + ".log"))
          .string();
  std::vector<std::string> argv = {
      "/bin/sh",
      "-c",
      "log=$1; line=$2; shift 2; \"$@\" 2>\"$log\" & pid=$!; i=0; "
      "while ! grep -qF -- \"$line\" \"$log\" && kill -0 $pid 2>/dev/null && [ $i -lt 1200 ]; "
      "do sleep 0.1; i=$((i+1)); done; sleep 0.5; kill -TERM $pid 2>/dev/null; wait $pid; "
      "code=$?; cat \"$log\" >&2; rm -f \"$log\"; exit $code",
      "serve_until",
      log,
      line,
      hamisim::testing::hamisim_bin(),
      "serve",
      "--listen",
      "127.0.0.1:0",
      "--metrics-listen",
      ""};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::run_process(argv, std::chrono::seconds(180));
}

TEST(CliServe, LiveSnapshotReconcilesDeviceProfilesAndWritesTheSnapshotOnShutdown) {
  const std::string out =
      (fs::temp_directory_path() / ("hamisim-cli-serve-" + std::to_string(::getpid()) + ".json"))
          .string();
  auto r = serve_until("does not match device profile",
                       {"--cluster-snapshot", kProfilesDir + "/nodes.yaml", "--device-profiles",
                        kProfilesDir + "/device-profiles.yaml", "--snapshot-out", out});
  ASSERT_TRUE(r.spawn_error.empty()) << describe(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);  // a graceful stop on SIGTERM
  EXPECT_THAT(r.err, HasSubstr("node aks-gpua100-1 does not match device profile nd96-a100-80g"));
  EXPECT_THAT(r.err, HasSubstr("wrote the cluster snapshot to " + out));
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const json::value dump = parse_json(text);
  int mismatch_events = 0;
  for (const auto& item : dump.at("items").as_array()) {
    const auto& o = item.as_object();
    if (o.at("kind") != "Event" || o.at("reason") != "DeviceProfileMismatch") continue;
    ++mismatch_events;
    EXPECT_EQ(o.at("involvedObject").at("kind"), "Node");
    EXPECT_EQ(o.at("involvedObject").at("name"), "aks-gpua100-1");
  }
  EXPECT_EQ(mismatch_events, 1);
  fs::remove(out);
}

// HAMi's chart runs the extender with klog's -v=4 and may add --legacy-metrics=true; the
// startup line says the metrics listener is off rather than "metrics on ,".
TEST(CliServe, KlogFormatVerbosityAndLegacyMetricsFlagsAreAccepted) {
  auto r = serve_until("hamisim serve: listening",
                       {"--cluster-snapshot", kExamples + "/live", "--log-format", "klog", "-v=4",
                        "--legacy-metrics=true"});
  ASSERT_TRUE(r.spawn_error.empty()) << describe(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.err, ::testing::ContainsRegex(
                         "I[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6} +[0-9]+ "
                         "serve_command\\.cpp:[0-9]+\\] \"hamisim serve: listening\" "))
      << describe(r);
  EXPECT_THAT(r.err, HasSubstr("metrics=\"off (--metrics-listen '')\""));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("metrics on ,")));
}

TEST(CliServe, VerbosityAndLegacyMetricsTakeEveryFlagForm) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--v=2", "--legacy-metrics"}, {"-v", "3", "--legacy-metrics=false"}, {"--v", "0"}}) {
    auto r = serve_until("hamisim serve: listening", args);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
  }
  auto negative = hamisim({"serve", "--v=-1"});
  expect_ran(negative);
  EXPECT_EQ(negative.exit_code, 2) << describe(negative);
}

TEST(CliServe, JsonLogsPutTheStartupFieldsUnderTheirOwnKeys) {
  auto r = serve_until("hamisim serve: listening", {"--log-format", "json"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  std::string listening;
  std::istringstream in(r.err);
  for (std::string line; std::getline(in, line);) {
    if (line.find("hamisim serve: listening") != std::string::npos) listening = line;
  }
  ASSERT_FALSE(listening.empty()) << describe(r);
  const json::value v = parse_json(listening);
  EXPECT_EQ(v.at("msg"), "hamisim serve: listening");
  EXPECT_EQ(v.at("listen"), "127.0.0.1:0");
  EXPECT_TRUE(v.at("port").is_int64());
  EXPECT_EQ(v.at("metrics"), "off (--metrics-listen '')");
}

TEST(CliServe, LiveSourceFlagsAreCheckedBeforeStarting) {
  auto both =
      hamisim({"serve", "--cluster-snapshot", kExamples + "/live", "--kubeconfig", "/nonexistent"});
  expect_ran(both);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err,
              HasSubstr("--cluster-snapshot, --kubeconfig, --in-cluster and --live are exclusive"));
  auto out_alone = hamisim({"serve", "--snapshot-out", "/tmp/x.json"});
  expect_ran(out_alone);
  EXPECT_EQ(out_alone.exit_code, 2);
  EXPECT_THAT(out_alone.err, HasSubstr("--snapshot-out needs --cluster-snapshot"));
  auto bad_lock = hamisim(
      {"serve", "--cluster-snapshot", kExamples + "/live", "--node-lock-timeout", "five minutes"});
  expect_ran(bad_lock);
  EXPECT_EQ(bad_lock.exit_code, 2);
  EXPECT_THAT(bad_lock.err, HasSubstr("--node-lock-timeout: invalid duration \"five minutes\""));
  // Issue #26: every duration flag reads Go's time.ParseDuration, as plan's do ("1500us" was
  // refused here); the flags are checked in order, so reaching --leader-elect's check shows
  // the duration was taken. Negative durations stay refused.
  auto micro_lock =
      hamisim({"serve", "--cluster-snapshot", kExamples + "/live", "--node-lock-timeout", "1500us",
               "--node-lock-retry-timeout", "+1.5s", "--leader-elect"});
  expect_ran(micro_lock);
  EXPECT_EQ(micro_lock.exit_code, 2);
  EXPECT_THAT(micro_lock.err, HasSubstr("--leader-elect needs --leader-elect-resource-name"));
  auto negative_lock = hamisim(
      {"serve", "--cluster-snapshot", kExamples + "/live", "--node-lock-retry-timeout", "-5s"});
  expect_ran(negative_lock);
  EXPECT_EQ(negative_lock.exit_code, 2);
  EXPECT_THAT(negative_lock.err, HasSubstr("--node-lock-retry-timeout: invalid duration \"-5s\""));
  auto leader = hamisim({"serve", "--cluster-snapshot", kExamples + "/live", "--leader-elect"});
  expect_ran(leader);
  EXPECT_EQ(leader.exit_code, 2);
  EXPECT_THAT(leader.err, HasSubstr("--leader-elect needs --leader-elect-resource-name"));
  auto missing = hamisim({"serve", "--kubeconfig", "/nonexistent/kubeconfig"});
  expect_ran(missing);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("--kubeconfig: "));
}

}  // namespace
}  // namespace hamisim

namespace hamisim {
namespace {

// `profile check --kubeconfig` against a fake API server holding examples/profiles/nodes.yaml
// (as JSON in tests/cli/fixtures): the same verdicts as `--cluster` on the file.
// Issue #47: `plan --kubeconfig` reads the cluster through serve's client, paged, and decides
// exactly what it decides on the same objects piped from `kubectl get -o json`.
TEST(CliPlanLive, ReadsTheClusterAndPlansAsOnTheFile) {
  std::ifstream in(kClusterYaml);
  const std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto json = model::yaml_to_json(yaml);
  ASSERT_TRUE(json.ok()) << json.error().message;
  state::ObjectStore store;
  ASSERT_TRUE(store.load(*json));
  hamisim::testing::FakeApiServer server(store);
  ASSERT_TRUE(server.start());
  const fs::path kubeconfig =
      fs::temp_directory_path() / ("hamisim-plan-kubeconfig-" + std::to_string(::getpid()));
  std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n"
                               "    server: "
                            << server.url()
                            << "\nusers:\n- name: nobody\n  user: {}\ncontexts:\n- name: fake\n"
                               "  context: {cluster: fake, user: nobody}\ncurrent-context: fake\n";
  const std::vector<std::string> groups = {
      "--node-groups", kNodeGroupsYaml, "--device-profiles", kDeviceProfilesYaml, "-o", "json"};
  std::vector<std::string> live = {"plan", "--kubeconfig", kubeconfig.string()};
  live.insert(live.end(), groups.begin(), groups.end());
  std::vector<std::string> file = {"plan", "--cluster", kClusterYaml};
  file.insert(file.end(), groups.begin(), groups.end());
  const auto from_cluster = hamisim(live);
  const auto from_file = hamisim(file);
  expect_ran(from_cluster);
  ASSERT_EQ(from_cluster.exit_code, 0) << describe(from_cluster);
  ASSERT_EQ(from_file.exit_code, 0) << describe(from_file);
  EXPECT_EQ(plan_without_provenance(from_cluster.out), plan_without_provenance(from_file.out));
  EXPECT_THAT(from_cluster.out, HasSubstr(R"("scaleUps":[{"group":)"));
  // One LIST per collection; the fake serves no DeviceClasses, which the warning says.
  EXPECT_EQ(server.request_count("LIST", "/api/v1/nodes"), 1);
  EXPECT_EQ(server.request_count("LIST", "/api/v1/pods"), 1);
  EXPECT_EQ(server.request_count("LIST", "/api/v1/resourcequotas"), 1);
  EXPECT_THAT(from_cluster.err, HasSubstr("the DeviceClass list: the API server serves no "
                                          "/apis/resource.k8s.io/v1/deviceclasses (no DRA there)"));
  // The provenance says where the cluster came from.
  EXPECT_THAT(from_cluster.out, HasSubstr(R"({"flag":"--kubeconfig","path":"kubeconfig )"));

  // --live with --kubeconfig reads that kubeconfig's cluster, as --kubeconfig alone does
  // (issue #47: the docs' `plan --live --kubeconfig FILE`).
  std::vector<std::string> live_kubeconfig = {"plan", "--live", "--kubeconfig",
                                              kubeconfig.string()};
  live_kubeconfig.insert(live_kubeconfig.end(), groups.begin(), groups.end());
  const auto with_live = hamisim(live_kubeconfig);
  ASSERT_EQ(with_live.exit_code, 0) << describe(with_live);
  EXPECT_EQ(plan_without_provenance(with_live.out), plan_without_provenance(from_file.out));
  EXPECT_THAT(with_live.out, HasSubstr(R"({"flag":"--kubeconfig","path":"kubeconfig )"));
  const auto two_sources =
      hamisim({"plan", "--in-cluster", "--kubeconfig", kubeconfig.string(), "-o", "json"});
  EXPECT_EQ(two_sources.exit_code, 2) << describe(two_sources);
  EXPECT_THAT(two_sources.err, HasSubstr("give --kubeconfig or --in-cluster, not both"));

  auto both = hamisim({"plan", "--kubeconfig", kubeconfig.string(), "--cluster", kClusterYaml});
  EXPECT_EQ(both.exit_code, 2) << describe(both);
  EXPECT_THAT(both.err, HasSubstr("give one of --cluster, --live, --kubeconfig, --in-cluster"));
  server.stop();
  auto down = hamisim(live);
  EXPECT_EQ(down.exit_code, 2) << describe(down);
  EXPECT_THAT(down.err, HasSubstr("--kubeconfig: "));
  fs::remove(kubeconfig);
}

TEST(CliProfileCheck, ReadsTheNodesFromACluster) {
  state::ObjectStore store;
  std::ifstream in(std::string(hamisim::testing::source_dir()) + "/tests/cli/fixtures" +
                   "/profile-nodes.json");
  const std::string nodes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(store.load(nodes));
  hamisim::testing::FakeApiServer server(store);
  ASSERT_TRUE(server.start());
  const fs::path kubeconfig =
      fs::temp_directory_path() / ("hamisim-cli-kubeconfig-" + std::to_string(::getpid()));
  std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n"
                               "    server: "
                            << server.url()
                            << "\nusers:\n- name: nobody\n  user: {}\ncontexts:\n- name: fake\n"
                               "  context: {cluster: fake, user: nobody}\ncurrent-context: fake\n";
  const std::string profiles = kProfilesDir + "/device-profiles.yaml";
  auto from_cluster = hamisim({"profile", "check", "--device-profiles", profiles, "--kubeconfig",
                               kubeconfig.string(), "-o", "json"});
  auto from_file = hamisim({"profile", "check", "--device-profiles", profiles, "--cluster",
                            kProfilesDir + "/nodes.yaml", "-o", "json"});
  expect_ran(from_cluster);
  EXPECT_EQ(from_cluster.exit_code, 1) << describe(from_cluster);  // aks-gpua100-1 mismatches
  EXPECT_EQ(from_cluster.out, from_file.out);
  EXPECT_EQ(server.request_count("LIST", "/api/v1/nodes"), 1);

  auto both = hamisim({"profile", "check", "--device-profiles", profiles, "--kubeconfig",
                       kubeconfig.string(), "--cluster", kProfilesDir + "/nodes.yaml"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("give at most one of --cluster, --kubeconfig, --in-cluster"));

  // No source flag: the cluster kubectl would use. $KUBECONFIG is a path list whose missing
  // files are skipped; ~/.kube/config is not read when it is set.
  const std::string home = (fs::temp_directory_path() / "hamisim-cli-no-home").string();
  auto from_env = testing::run_process({"/usr/bin/env", "HOME=" + home,
                                        "KUBECONFIG=/nonexistent/a.yaml:" + kubeconfig.string(),
                                        hamisim::testing::hamisim_bin(), "profile", "check",
                                        "--device-profiles", profiles, "-o", "json"});
  expect_ran(from_env);
  EXPECT_EQ(from_env.exit_code, 1) << describe(from_env);
  EXPECT_EQ(from_env.out, from_file.out);
  EXPECT_THAT(from_env.err, HasSubstr("skipped missing file(s) /nonexistent/a.yaml"));
  // Nothing anywhere: the error says what was tried.
  auto nothing = testing::run_process(
      {"/usr/bin/env", "-u", "KUBECONFIG", "-u", "KUBERNETES_SERVICE_HOST", "HOME=" + home,
       hamisim::testing::hamisim_bin(), "profile", "check", "--device-profiles", profiles});
  EXPECT_EQ(nothing.exit_code, 2) << describe(nothing);
  EXPECT_THAT(nothing.err, HasSubstr("no Kubernetes configuration: no kubeconfig file (tried " +
                                     home + "/.kube/config)"));
  server.stop();
  auto down = hamisim(
      {"profile", "check", "--device-profiles", profiles, "--kubeconfig", kubeconfig.string()});
  EXPECT_EQ(down.exit_code, 2) << describe(down);
  EXPECT_THAT(down.err, HasSubstr("hamisim profile check: "));
  fs::remove(kubeconfig);
}

// A fake API server with node n1 (label pool=nic) and the ResourceSlices a test serves, a
// kubeconfig for it, and profile nic-a promising n1 one NIC of nic.example.com.
struct DraCluster {
  state::ObjectStore store;
  std::unique_ptr<hamisim::testing::FakeApiServer> server;
  fs::path dir = fs::temp_directory_path() / ("hamisim-cli-dra-" + std::to_string(::getpid()));
  std::string kubeconfig = (dir / "kubeconfig").string();
  std::string profiles = (dir / "profiles.yaml").string();

  DraCluster() {
    if (!store.load(R"({"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1",)"
                    R"("kind":"Node","metadata":{"name":"n1","labels":{"pool":"nic"}}}]})")) {
      throw std::runtime_error("the node does not load");
    }
    server = std::make_unique<hamisim::testing::FakeApiServer>(store);
    if (!server->start()) throw std::runtime_error("the fake API server does not start");
    fs::create_directories(dir);
    std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n"
                                 "  cluster:\n    server: "
                              << server->url()
                              << "\nusers:\n- name: nobody\n  user: {}\ncontexts:\n"
                                 "- name: fake\n  context: {cluster: fake, user: nobody}\n"
                                 "current-context: fake\n";
    std::ofstream(profiles)
        << "apiVersion: hamisim.io/v1\nkind: DeviceProfiles\nprofiles:\n  - name: nic-a\n"
           "    match: {labels: {pool: nic}}\n    dra:\n      resourceSlices:\n"
           "        - apiVersion: resource.k8s.io/v1\n          kind: ResourceSlice\n"
           "          metadata: {name: nics}\n          spec:\n"
           "            driver: nic.example.com\n            nodeName: any\n"
           "            pool: {name: nics, generation: 1, resourceSliceCount: 1}\n"
           "            devices: [{name: nic-0, attributes: {speed: {int: 400}}}]\n";
  }
  ~DraCluster() {
    server->stop();
    fs::remove_all(dir);
  }
  // n1's slice `name`: `devices` NICs, its pool announcing `slice_count` slices.
  static std::string slice(const std::string& name, int devices, int slice_count) {
    std::string list;
    for (int i = 0; i < devices; ++i) {
      list += (i ? "," : "") + std::string(R"({"name":"nic-)") + std::to_string(i) +
              R"(","attributes":{"speed":{"int":400}}})";
    }
    return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":")" +
           name + R"("},"spec":{"driver":"nic.example.com","nodeName":"n1","pool":{"name":")" +
           name + R"(","generation":1,"resourceSliceCount":)" + std::to_string(slice_count) +
           R"(},"devices":[)" + list + "]}}";
  }
};

// Under DRA, `profile check --kubeconfig` compares the slices the cluster LISTs (as serve's
// reconciler lists them) with the profile's; a slice the strict decoder refuses is an input
// error naming its place in the list.
TEST(CliProfileCheck, ComparesTheSlicesTheClusterLists) {
  DraCluster cluster;
  const std::vector<std::string> check = {"profile",        "check",        "--device-profiles",
                                          cluster.profiles, "--kubeconfig", cluster.kubeconfig};
  ASSERT_TRUE(cluster.server->serve_resource_slices({DraCluster::slice("a", 2, 1)}));
  auto r = hamisim(check);
  expect_ran(r);
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_THAT(r.out, HasSubstr("DRA nic.example.com: 0 missing, 0 extra, 1 mismatch"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("warning")));

  ASSERT_TRUE(cluster.server->serve_resource_slices(
      {DraCluster::slice("a", 1, 1), DraCluster::slice("b", 1, 0)}));
  r = hamisim(check);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("the slice list: items[1]: spec.pool.resourceSliceCount: must be "
                               "greater than zero"));
}

// serve with a live source lists the slices through its own client and its reconciler
// reports the node whose slices differ from its profile's.
TEST(CliServe, LiveSourceComparesTheClustersSlicesWithDraProfiles) {
  DraCluster cluster;
  ASSERT_TRUE(cluster.server->serve_resource_slices({DraCluster::slice("a", 2, 1)}));
  auto r = serve_until("does not match device profile",
                       {"--kubeconfig", cluster.kubeconfig, "--device-profiles", cluster.profiles});
  ASSERT_TRUE(r.spawn_error.empty()) << describe(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_THAT(r.err, HasSubstr("node n1 does not match device profile nic-a: DRA "
                               "nic.example.com: 0 missing, 0 extra, 1 mismatch"));
  EXPECT_GE(cluster.server->request_count("LIST", "/apis/resource.k8s.io/v1/resourceslices"), 1);
}

}  // namespace
}  // namespace hamisim
