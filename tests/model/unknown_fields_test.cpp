// model/unknown_fields.h: unknown fields of the Kubernetes objects in an input file, with the
// line and the field path `kubectl --validate=warn` names (issue #47, item 6).

#include "model/unknown_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/input.h"
#include "test_paths.h"

namespace hamisim::model {
namespace unknown_fields_test {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

std::vector<UnknownField> find(std::string_view text) {
  auto found = find_unknown_fields(text);
  EXPECT_TRUE(found) << found.error().message;
  return found ? *found : std::vector<UnknownField>{};
}

std::vector<std::string> described(std::string_view text, std::string_view file = "in.yaml") {
  std::vector<std::string> out;
  for (const auto& f : find(text)) out.push_back(describe_unknown_field(file, f));
  return out;
}

constexpr std::string_view kTypoPod = R"(apiVersion: v1
kind: Pod
metadata:
  name: train
  labels:
    anything.example.com/goes: "yes"
spec:
  containers:
  - name: main
    image: cuda
    resourcez:
      limits:
        nvidia.com/gpu: 1
)";

TEST(UnknownFields, ATypoInAYamlPodIsNamedWithItsLineAndPath) {
  EXPECT_THAT(described(kTypoPod, "pod.yaml"),
              ElementsAre("pod.yaml:11: unknown field \"spec.containers[0].resourcez\""));
}

TEST(UnknownFields, ATypoInAJsonListNamesTheItemAndTheLine) {
  const std::string json = R"({
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "ml"},
     "spec": {"containers": [{"name": "c"}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "namespace": "ml"},
     "spec": {"containers": [{"name": "c",
       "resources": {"limits": {"nvidia.com/gpu": "1"}, "limitz": {}}}]}}
  ]
})";
  EXPECT_THAT(described(json, "pods.json"),
              ElementsAre("pods.json:9: items[1] (Pod ml/b): unknown field "
                          "\"spec.containers[0].resources.limitz\""));
}

TEST(UnknownFields, ItemsOfATypedListTakeTheirKindFromIt) {
  const std::string json = R"({"apiVersion": "v1", "kind": "NodeList", "items": [
    {"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "8"}, "allocatabel": {}}}]})";
  EXPECT_THAT(described(json, "nodes.json"),
              ElementsAre("nodes.json:2: items[0] (Node n1): unknown field "
                          "\"status.allocatabel\""));
}

TEST(UnknownFields, SeveralYamlDocumentsKeepTheirOwnLines) {
  const std::string yaml = R"(apiVersion: v1
kind: Node
metadata:
  name: n1
---
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  nodeName: n1
  tolerationz: []
)";
  const auto found = find(yaml);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].line, 12u);
  EXPECT_EQ(found[0].field, "spec.tolerationz");
  EXPECT_EQ(found[0].object, "items[1] (Pod p)");
}

TEST(UnknownFields, AKeyThatDiffersOnlyInCaseSaysWhatHamisimReadsItAs) {
  const auto found = find("apiVersion: v1\nkind: Pod\nSpec:\n  containers: []\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].field, "Spec");
  EXPECT_EQ(found[0].same_but_case, "spec");
  EXPECT_EQ(describe_unknown_field("p.yaml", found[0]),
            "p.yaml:3: unknown field \"Spec\" (hamisim reads it as \"spec\"; the API server "
            "would not)");
}

TEST(UnknownFields, MapsAndFreeFormValuesTakeAnyKey) {
  // Labels, annotations, resource lists, nodeSelector and a DRA opaque config's parameters are
  // maps or free-form JSON: any key is known.
  const std::string yaml = R"(apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations: {hami.io/whatever: x, anything: y}
spec:
  nodeSelector: {gpu: "true"}
  overhead: {cpu: 100m}
  containers:
  - name: c
    resources:
      limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 3000, example.com/thing: 2}
)";
  EXPECT_THAT(find(yaml), IsEmpty());
  const std::string claim = R"(apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com, count: 1}
    config:
    - opaque: {driver: gpu.nvidia.com, parameters: {any: {nested: [1, 2]}}}
)";
  EXPECT_THAT(find(claim), IsEmpty());
}

TEST(UnknownFields, DraObjectsAreCheckedInTheirOwnVersion) {
  // v1beta1 still has `basic` devices; v1 does not.
  const std::string v1beta1 = R"(apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.nvidia.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    basic: {attributes: {model: {string: A100}}, capacity: {memory: {value: 40Gi}}}
)";
  EXPECT_THAT(find(v1beta1), IsEmpty());
  std::string v1 = v1beta1;
  v1.replace(v1.find("v1beta1"), 7, "v1");
  EXPECT_THAT(described(v1, "s.yaml"),
              ElementsAre("s.yaml:10: unknown field \"spec.devices[0].basic\""));
}

TEST(UnknownFields, KindsWithoutASchemaAreNotLookedInto) {
  // A Service in a cluster dump (model/input.h skips it), a configuration, an ExtenderArgs.
  EXPECT_THAT(find("apiVersion: v1\nkind: Service\nspec: {whatever: 1}\n"), IsEmpty());
  EXPECT_THAT(find("kind: NodeGroups\nnodeGroupz: []\n"), IsEmpty());
  EXPECT_THAT(find(R"({"Pod": {"spec": {"containerz": []}}, "NodeNames": ["a"]})"), IsEmpty());
}

// Found by the fuzz smoke: a List item's keys cut short (`{"kinddeList",...`) threw out of the
// walker and ended the process. A malformed document is an error, or no finding, never a throw.
TEST(UnknownFields, AMalformedItemIsAnErrorNotAThrow) {
  const std::string text =
      R"([{"kind":"Node"},{"kinddeList","items":[{"metadata":{"name":"x"}}]},null])";
  auto found = find_unknown_fields(text);
  if (!found) {
    EXPECT_FALSE(found.error().message.empty());
  }
}

TEST(UnknownFields, AnAliasExpansionHasTheAliasLine) {
  const std::string yaml = R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - &c {name: a, imagez: x}
  - *c
)";
  EXPECT_THAT(described(yaml),
              ElementsAre("in.yaml:6: unknown field \"spec.containers[0].imagez\"",
                          "in.yaml:7: unknown field \"spec.containers[1].imagez\""));
}

TEST(UnknownFields, TheWarnPolicyAddsLinesAndTheErrorPolicyStopsOnTheFirst) {
  std::vector<std::string> warnings;
  ASSERT_TRUE(judge_unknown_fields(kTypoPod, "pod.yaml", "--pods", UnknownFields::kWarn, warnings));
  EXPECT_THAT(warnings,
              ElementsAre("--pods: pod.yaml:11: unknown field \"spec.containers[0].resourcez\""));
  warnings.clear();
  const Status strict =
      judge_unknown_fields(kTypoPod, "pod.yaml", "--pods", UnknownFields::kError, warnings);
  ASSERT_FALSE(strict);
  EXPECT_EQ(strict.error().message,
            "--pods: pod.yaml:11: unknown field \"spec.containers[0].resourcez\"; --strict "
            "refuses unknown fields");
  EXPECT_THAT(warnings, IsEmpty());
  EXPECT_TRUE(
      judge_unknown_fields(kTypoPod, "pod.yaml", "--pods", UnknownFields::kIgnore, warnings));
  EXPECT_THAT(warnings, IsEmpty());
}

// Every input we ship or show must be free of unknown fields: the bundled examples and every
// YAML or JSON block of the docs that parses.
TEST(UnknownFields, NoShippedExampleOrDocsBlockHasAnUnknownField) {
  namespace fs = std::filesystem;
  const fs::path source = hamisim::testing::source_dir();
  size_t files = 0, blocks = 0;
  auto read = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  for (const auto& entry : fs::recursive_directory_iterator(source / "examples")) {
    const std::string ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".yaml" && ext != ".json")) continue;
    ++files;
    auto found = find_unknown_fields(read(entry.path()));
    ASSERT_TRUE(found) << entry.path() << ": " << found.error().message;
    for (const auto& f : *found) ADD_FAILURE() << describe_unknown_field(entry.path().string(), f);
  }
  for (const auto& entry : fs::directory_iterator(source / "docs")) {
    if (entry.path().extension() != ".md") continue;
    std::istringstream in(read(entry.path()));
    std::string line, block;
    bool inside = false;
    size_t start = 0, number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (!inside && (line == "```yaml" || line == "```json")) {
        inside = true;
        block.clear();
        start = number;
      } else if (inside && line == "```") {
        inside = false;
        auto found = find_unknown_fields(block);
        if (!found) continue;  // a fragment with placeholders: not an object anyone would feed
        ++blocks;
        for (const auto& f : *found) {
          ADD_FAILURE() << entry.path().filename().string() << " (block at line " << start
                        << "): " << describe_unknown_field("block", f);
        }
      } else if (inside) {
        block += line + "\n";
      }
    }
  }
  EXPECT_GT(files, 10u);
  EXPECT_GT(blocks, 10u);
}

}  // namespace unknown_fields_test
}  // namespace hamisim::model
