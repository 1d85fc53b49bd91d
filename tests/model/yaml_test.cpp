#include <gtest/gtest.h>

#include <string>

#include "model/decode.h"
#include "model/yaml_check.h"

namespace hamisim::model {
namespace {

std::string json_of(std::string_view yaml) {
  auto json = yaml_to_json(yaml);
  EXPECT_TRUE(json.ok()) << yaml << ": " << json.error().message;
  return json.ok() ? *json : std::string();
}

std::string yaml_error(std::string_view yaml) {
  auto json = yaml_to_json(yaml);
  EXPECT_FALSE(json.ok()) << yaml;
  return json.ok() ? std::string() : json.error().message;
}

TEST(YamlToJsonTest, SingleDocumentStaysItself) {
  EXPECT_EQ(json_of("a: b\nc: [1, x]\n"), R"({"a":"b","c":[1,"x"]})");
  EXPECT_EQ(json_of("---\na: b\n...\n"), R"({"a":"b"})");
}

TEST(YamlToJsonTest, ManyDocumentsBecomeAList) {
  EXPECT_EQ(json_of("a: 1\n---\nb: 2\n"), R"({"kind":"List","items":[{"a":1},{"b":2}]})");
  // Empty documents are dropped.
  EXPECT_EQ(json_of("---\n---\na: 1\n---\n# only a comment\n"), R"({"a":1})");
  EXPECT_EQ(json_of(""), R"({"kind":"List","items":[]})");
}

TEST(YamlToJsonTest, PlainScalarsResolveWithTheCoreSchema) {
  EXPECT_EQ(json_of("[1, -2, +3, 007, 0x1F, 0o17, 1.5, .5, 5., -1e3, 1E+3, 2.5e-3]"),
            "[1,-2,3,7,31,15,1.5,0.5,5,-1e3,1E+3,2.5e-3]");
  EXPECT_EQ(json_of("[true, False, TRUE, false, null, ~, Null, '']"),
            R"([true,false,true,false,null,null,null,""])");
  EXPECT_EQ(
      json_of("[yes, no, on, off, 1Gi, 100m, 1_000, 0x, .inf, .nan, 1e, 0xFFFFFFFFFFFFFFFFF]"),
      R"(["yes","no","on","off","1Gi","100m","1_000","0x",".inf",".nan","1e","0xFFFFFFFFFFFFFFFFF"])");
  EXPECT_EQ(json_of("a:\nb: \n"), R"({"a":null,"b":null})");
}

TEST(YamlToJsonTest, QuotedAndTaggedScalarsStayStrings) {
  EXPECT_EQ(json_of(R"(["1", '2', "true", 'null', !!str 3, !!int 4, "a\tb", "<&>"])"),
            R"(["1","2","true","null","3",4,"a\tb","\u003c\u0026\u003e"])");
  EXPECT_EQ(json_of("a: |\n  line1\n  line2\n"), R"({"a":"line1\nline2\n"})");
}

TEST(YamlToJsonTest, KeysBecomeStrings) {
  EXPECT_EQ(json_of("1: a\ntrue: b\n~: c\n"), R"({"1":"a","true":"b","null":"c"})");
  EXPECT_NE(yaml_error("? [a, b]\n: c\n").find("mapping keys must be scalars"), std::string::npos);
}

TEST(YamlToJsonTest, AliasesExpand) {
  EXPECT_EQ(json_of("a: &x {b: 1}\nc: *x\n"), R"({"a":{"b":1},"c":{"b":1}})");
}

TEST(YamlToJsonTest, SyntaxErrorsCarryLineAndColumn) {
  const std::string err = yaml_error("a: b\nc: [1, 2\nd: e\n");
  EXPECT_EQ(err.rfind("yaml: line ", 0), 0u) << err;
  EXPECT_NE(err.find(", column "), std::string::npos) << err;
  const std::string err2 = yaml_error("a: b\n  c: d\n");
  EXPECT_EQ(err2.rfind("yaml: line 2, column ", 0), 0u) << err2;
}

// Go's YAML reader refuses text that is not UTF-8; the error points at the first bad byte,
// its column counted in characters.
TEST(YamlToJsonTest, InvalidUtf8IsRefusedWithLineAndColumn) {
  EXPECT_EQ(yaml_error("a: b\nc: d\xff\n"), "yaml: line 2, column 5: invalid UTF-8 (byte 0xff)");
  // "é" is one character of two bytes; then a lead byte without its continuation.
  EXPECT_EQ(yaml_error("k: \xc3\xa9\xc3("), "yaml: line 1, column 5: invalid UTF-8 (byte 0xc3)");
  EXPECT_EQ(yaml_error("- x\n- \"\xc0\xaf\"\n"),  // an overlong "/"
            "yaml: line 2, column 4: invalid UTF-8 (byte 0xc0)");
  EXPECT_EQ(yaml_error("# \xed\xa0\x80\n"),  // a surrogate, even in a comment
            "yaml: line 1, column 3: invalid UTF-8 (byte 0xed)");
  // Every reader of YAML runs the same check.
  ASSERT_FALSE(check_yaml("a: \xfe\n").ok());
  EXPECT_EQ(check_yaml("a: \xfe\n").error().message,
            "yaml: line 1, column 4: invalid UTF-8 (byte 0xfe)");
  // Valid UTF-8 of every length passes through.
  EXPECT_EQ(json_of("k: \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"\n"),
            "{\"k\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}");
}

TEST(YamlToJsonTest, DeepNestingIsAnErrorNotACrash) {
  EXPECT_FALSE(yaml_to_json(std::string(100000, '[') + std::string(100000, ']')).ok());
  EXPECT_FALSE(yaml_to_json(std::string(100000, '{')).ok());
  std::string block;
  for (int i = 0; i < 3000; ++i) block += std::string(static_cast<size_t>(i), ' ') + "a:\n";
  EXPECT_FALSE(yaml_to_json(block).ok());
  std::string dashes;
  for (int i = 0; i < 3000; ++i) dashes += "- ";
  EXPECT_FALSE(yaml_to_json(dashes + "x\n").ok());
}

TEST(YamlToJsonTest, RecursiveAliasIsAnError) {
  const std::string err = yaml_error("a: &x [1, *x]\n");
  EXPECT_EQ(err, "yaml: line 1, column 11: alias refers to the node that contains it");
}

TEST(YamlToJsonTest, InputWhereYamlCppStallsIsAnError) {
  // yaml-cpp 0.7 emits empty documents forever on these; they must fail, not hang.
  for (const char* yaml : {R"("a",{})", R"("a",{b}c":[)", "'a',[]", "\"a\",{}\n---\nb: 1\n"}) {
    auto json = yaml_to_json(yaml);
    ASSERT_FALSE(json.ok()) << yaml;
    EXPECT_EQ(json.error().message.rfind("yaml: line 1, column ", 0), 0u) << json.error().message;
  }
}

TEST(YamlToJsonTest, AnchorsOnKeysAndScalars) {
  EXPECT_EQ(json_of("&k a: &v 1\nb: *k\n*v : c\n"), R"({"a":1,"b":"a","1":"c"})");
  EXPECT_EQ(json_of("- &n ~\n- *n\n"), "[null,null]");
  EXPECT_NE(yaml_error("a: &m {x: 1}\n*m : c\n").find("mapping keys must be scalars"),
            std::string::npos);
}

TEST(YamlToJsonTest, AliasBombIsAnError) {
  std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 12; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) yaml += (k ? ", " : "") + prev;
    yaml += "]\n";
  }
  const std::string err = yaml_error(yaml);
  EXPECT_NE(err.find("expands to more than"), std::string::npos) << err;
}

TEST(DecodeYamlTest, DecodePodFromYaml) {
  auto pod = decode_pod(R"(
apiVersion: v1
kind: Pod
metadata:
  name: p
  labels: {app: "1"}
spec:
  priority: 10
  containers:
  - name: c
    resources:
      limits: {nvidia.com/gpu: 2, cpu: 0.5, memory: 1Gi}
)");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(pod->metadata.name, "p");
  EXPECT_EQ(pod->metadata.labels.at("app"), "1");
  EXPECT_EQ(pod->spec.priority, 10);
  const auto& limits = pod->spec.containers.at(0).resources.limits;
  EXPECT_EQ(limits.at("nvidia.com/gpu").as_int64(), 2);
  EXPECT_EQ(limits.at("cpu").milli_value(), 500);
  EXPECT_EQ(limits.at("memory").as_int64(), 1073741824);
}

TEST(DecodeYamlTest, DecodePodRejectsManyDocuments) {
  auto pod = decode_pod("kind: Pod\n---\nkind: Pod\n");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.error().message, "yaml: expected one document, got 2");
}

TEST(DecodeYamlTest, UnquotedNumberForAStringFieldIsAnError) {
  // As kubectl: "json: cannot unmarshal number into ... labels of type string".
  auto pod = decode_pod("metadata:\n  labels:\n    version: 1.0\n");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.error().message, "metadata.labels[version]: expected a string, got number");
}

TEST(DecodeYamlTest, SniffsJsonByFirstCharacter) {
  auto node = decode_node("  \n {\"metadata\":{\"name\":\"n\"}}");
  ASSERT_TRUE(node.ok()) << node.error().message;
  EXPECT_EQ(node->metadata.name, "n");
  auto yaml_node = decode_node("metadata:\n  name: n\n");
  ASSERT_TRUE(yaml_node.ok()) << yaml_node.error().message;
  EXPECT_EQ(yaml_node->metadata.name, "n");
  auto list = decode_objects(" [{\"kind\":\"Node\"}]");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->nodes.size(), 1u);
}

TEST(DecodeYamlTest, DecodeObjectsFromMultiDocumentYaml) {
  auto set = decode_objects(R"(
kind: Node
metadata: {name: n1}
status:
  allocatable: {nvidia.com/gpu: 4}
---
kind: Pod
metadata: {name: p1}
---
kind: NodeList
items:
- metadata: {name: n2}
---
kind: ConfigMap
data: {a: b}
)");
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->nodes.size(), 2u);
  EXPECT_EQ(set->nodes[0].metadata.name, "n1");
  EXPECT_EQ(set->nodes[0].status.allocatable.at("nvidia.com/gpu").as_int64(), 4);
  EXPECT_EQ(set->nodes[1].metadata.name, "n2");
  EXPECT_EQ(set->pods.size(), 1u);
  EXPECT_EQ(set->skipped_items, 1);
  ASSERT_EQ(set->node_json.size(), 2u);
  EXPECT_EQ(
      set->node_json[0],
      R"({"kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"nvidia.com/gpu":4}}})");
}

TEST(DecodeYamlTest, YamlErrorsAreReported) {
  auto set = decode_objects("kind: Pod\nspec: [\n");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message.rfind("yaml: line ", 0), 0u) << set.error().message;
}

}  // namespace
}  // namespace hamisim::model
