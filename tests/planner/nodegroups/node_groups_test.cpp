// The node groups file (spec §7.3) and each group's template node (ca-scale-up.md §4.3).

#include "planner/nodegroups/node_groups.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

namespace hamisim::planner::nodegroups {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr std::string_view kHeader = "apiVersion: hamisim.io/v1\nkind: NodeGroups\n";

NodeGroups parse_ok(std::string_view yaml) {
  auto r = parse_node_groups(yaml, "groups.yaml");
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? std::move(r).value() : NodeGroups{};
}

std::string parse_error(std::string_view yaml) {
  auto r = parse_node_groups(yaml, "groups.yaml");
  EXPECT_FALSE(r.ok()) << "parsed: " << yaml;
  return r.ok() ? std::string() : r.error().message;
}

// One group in a document; `fields` are the group's lines after `- name: <name>`, each
// indented by four spaces.
std::string group_doc(std::string_view fields, std::string_view name = "ng") {
  return std::string(kHeader) + "nodeGroups:\n  - name: " + std::string(name) + "\n" +
         std::string(fields);
}

model::Quantity q(std::string_view text) {
  return model::Quantity::parse(text).value();
}

model::Node node(const std::string& name, bool ready = true) {
  model::Node n;
  n.metadata.name = name;
  n.metadata.uid = "uid-" + name;
  n.metadata.labels = {{"agentpool", "gpua100"}, {"kubernetes.io/hostname", name}};
  n.status.conditions = {{"MemoryPressure", "False"}, {"Ready", ready ? "True" : "False"}};
  return n;
}

model::Pod pod(const std::string& name, const std::string& node_name) {
  model::Pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "kube-system";
  p.metadata.uid = "uid-" + name;
  p.spec.node_name = node_name;
  return p;
}

model::Pod daemonset_pod(const std::string& name, const std::string& node_name) {
  model::Pod p = pod(name, node_name);
  p.metadata.owner_references = {{"apps/v1", "DaemonSet", "ds", "ds-uid", true}};
  return p;
}

std::vector<std::string> taint_keys(const std::vector<model::Taint>& taints) {
  std::vector<std::string> out;
  for (const auto& t : taints) out.push_back(t.key);
  return out;
}

std::vector<std::string> pod_names(const std::vector<model::Pod>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p.metadata.name);
  return out;
}

// ---- parsing ----

TEST(ParseNodeGroups, ReadsTheSpecExample) {
  const NodeGroups groups = parse_ok(R"(apiVersion: hamisim.io/v1
kind: NodeGroups
nodeGroups:
  - name: gpu-a100
    minSize: 0
    maxSize: 20
    targetSize: 2              # default: number of member nodes in the snapshot
    members: {agentpool: gpua100}   # label selector of member nodes
    template: {metadata: {labels: {}}, spec: {taints: []}, status: {allocatable: {}}}
    deviceProfile: nd96-a100-80g
    price: 27.2
    priority: 10
)");
  ASSERT_EQ(groups.groups.size(), 1u);
  const NodeGroupSpec& g = groups.groups[0];
  EXPECT_EQ(g.name, "gpu-a100");
  EXPECT_EQ(g.min_size, 0);
  EXPECT_EQ(g.max_size, 20);
  EXPECT_EQ(g.target_size, 2);
  EXPECT_EQ(g.members, (model::StringMap{{"agentpool", "gpua100"}}));
  ASSERT_TRUE(g.template_node.has_value());
  EXPECT_TRUE(g.template_node->metadata.labels.empty());
  EXPECT_TRUE(g.template_node->spec.taints.empty());
  EXPECT_TRUE(g.template_node->status.allocatable.empty());
  EXPECT_EQ(g.device_profile, "nd96-a100-80g");
  EXPECT_EQ(g.price, 27.2);
  EXPECT_EQ(g.priority, 10);
  EXPECT_EQ(groups.find("gpu-a100"), &groups.groups[0]);
  EXPECT_EQ(groups.find("gpu"), nullptr);
}

TEST(ParseNodeGroups, OptionalFieldsDefaultAndFileOrderIsKept) {
  const NodeGroups groups = parse_ok(std::string(kHeader) + R"(nodeGroups:
  - name: zeta
    maxSize: 3
  - name: alpha
    minSize: 1
    maxSize: 1
)");
  ASSERT_EQ(groups.groups.size(), 2u);
  const NodeGroupSpec& z = groups.groups[0];
  EXPECT_EQ(z.name, "zeta");
  EXPECT_EQ(z.min_size, 0);
  EXPECT_EQ(z.max_size, 3);
  EXPECT_FALSE(z.target_size.has_value());
  EXPECT_TRUE(z.members.empty());
  EXPECT_FALSE(z.template_node.has_value());
  EXPECT_TRUE(z.device_profile.empty());
  EXPECT_FALSE(z.price.has_value());
  EXPECT_FALSE(z.priority.has_value());
  EXPECT_EQ(groups.groups[1].name, "alpha");
  EXPECT_EQ(groups.find("alpha"), &groups.groups[1]);
}

TEST(ParseNodeGroups, NoNodeGroupsIsAnEmptyList) {
  EXPECT_TRUE(parse_ok(kHeader).groups.empty());
  EXPECT_TRUE(parse_ok(std::string(kHeader) + "nodeGroups: []\n").groups.empty());
}

TEST(ParseNodeGroups, ScalarsAreReadAsTextWhateverTheirQuoting) {
  const NodeGroups groups = parse_ok(group_doc(R"(    minSize: "1"
    maxSize: +40
    targetSize: 10
    price: 0
    priority: -3
    members: {zone: 1, gen: "2", on: true}
    template:
      metadata:
        labels: {version: "123", plain: 1.50}
        annotations: {note: "a: b"}
)"));
  ASSERT_EQ(groups.groups.size(), 1u);
  const NodeGroupSpec& g = groups.groups[0];
  EXPECT_EQ(g.min_size, 1);
  EXPECT_EQ(g.max_size, 40);
  EXPECT_EQ(g.target_size, 10);
  EXPECT_EQ(g.price, 0.0);
  EXPECT_EQ(g.priority, -3);
  EXPECT_EQ(g.members, (model::StringMap{{"gen", "2"}, {"on", "true"}, {"zone", "1"}}));
  EXPECT_EQ(g.template_node->metadata.labels,
            (model::StringMap{{"plain", "1.50"}, {"version", "123"}}));
  EXPECT_EQ(g.template_node->metadata.annotations, (model::StringMap{{"note", "a: b"}}));
}

TEST(ParseNodeGroups, ReadsEveryTemplateField) {
  const NodeGroups groups = parse_ok(group_doc(R"(    maxSize: 5
    template:
      metadata:
        labels: {node.kubernetes.io/instance-type: nd96}
        annotations: {hami.io/node-nvidia-register: "[]"}
      spec:
        unschedulable: true
        taints:
          - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
          - {key: dedicated, effect: NoExecute}
      status:
        capacity: {cpu: "96", memory: 900Gi, nvidia.com/gpu: 8}
        allocatable: {cpu: 95500m}
)"));
  ASSERT_EQ(groups.groups.size(), 1u);
  const model::Node& t = *groups.groups[0].template_node;
  EXPECT_EQ(t.metadata.name, "");
  EXPECT_EQ(t.metadata.labels.at("node.kubernetes.io/instance-type"), "nd96");
  EXPECT_EQ(t.metadata.annotations.at("hami.io/node-nvidia-register"), "[]");
  EXPECT_TRUE(t.spec.unschedulable);
  ASSERT_EQ(t.spec.taints.size(), 2u);
  EXPECT_EQ(t.spec.taints[0].key, "nvidia.com/gpu");
  EXPECT_EQ(t.spec.taints[0].value, "present");
  EXPECT_EQ(t.spec.taints[0].effect, "NoSchedule");
  EXPECT_EQ(t.spec.taints[1].value, "");
  EXPECT_EQ(t.spec.taints[1].effect, "NoExecute");
  EXPECT_EQ(
      t.status.capacity,
      (model::ResourceList{{"cpu", q("96")}, {"memory", q("900Gi")}, {"nvidia.com/gpu", q("8")}}));
  EXPECT_EQ(t.status.allocatable, (model::ResourceList{{"cpu", q("95500m")}}));
  EXPECT_TRUE(t.status.conditions.empty());
}

TEST(ParseNodeGroups, NullTemplateMeansNone) {
  const NodeGroups groups = parse_ok(group_doc("    maxSize: 1\n    template:\n"));
  ASSERT_EQ(groups.groups.size(), 1u);
  EXPECT_FALSE(groups.groups[0].template_node.has_value());
}

// Each message names the source, the group and the field, and the line it is on.
TEST(ParseNodeGroupsErrors, MaxSizeBelowMinSize) {
  EXPECT_EQ(parse_error(std::string(kHeader) + R"(nodeGroups:
  - name: cpu
    maxSize: 1
  - name: gpu-a100
    minSize: 2
    maxSize: 1
)"),
            "groups.yaml: nodeGroups[1] (gpu-a100).maxSize: must be >= minSize (2), got 1 "
            "(line 8)");
}

TEST(ParseNodeGroupsErrors, MaxSizeIsRequired) {
  EXPECT_EQ(parse_error(group_doc("    minSize: 0\n")),
            "groups.yaml: nodeGroups[0] (ng).maxSize: required (line 4)");
}

TEST(ParseNodeGroupsErrors, MinSizeMustNotBeNegative) {
  EXPECT_EQ(parse_error(group_doc("    minSize: -1\n    maxSize: 2\n")),
            "groups.yaml: nodeGroups[0] (ng).minSize: must be >= 0, got -1 (line 5)");
}

TEST(ParseNodeGroupsErrors, TargetSizeMustBeWithinZeroAndMaxSize) {
  EXPECT_EQ(parse_error(group_doc("    maxSize: 20\n    targetSize: 21\n")),
            "groups.yaml: nodeGroups[0] (ng).targetSize: must be within [0, maxSize (20)], got 21 "
            "(line 6)");
  EXPECT_THAT(parse_error(group_doc("    maxSize: 20\n    targetSize: -1\n")),
              HasSubstr("nodeGroups[0] (ng).targetSize: must be within [0, maxSize (20)], got -1"));
}

TEST(ParseNodeGroupsErrors, IntegersMustBeDecimalIntegers) {
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1.5\n")),
              HasSubstr("groups.yaml: nodeGroups[0] (ng).maxSize: \"1.5\" is not an integer"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 0x10\n")),
              HasSubstr("nodeGroups[0] (ng).maxSize: \"0x10\" is not an integer"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: [1]\n")),
              HasSubstr("nodeGroups[0] (ng).maxSize: expected an integer"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 99999999999999999999\n")),
              HasSubstr("nodeGroups[0] (ng).maxSize: \"99999999999999999999\" is out of the "
                        "64-bit integer range"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 3\n    priority: high\n")),
              HasSubstr("nodeGroups[0] (ng).priority: \"high\" is not an integer"));
}

// Issue #26: one number grammar for every file; "010" was 10 here and octal 8 elsewhere.
TEST(ParseNodeGroupsErrors, ALeadingZeroIsAnErrorNamingBothReadings) {
  EXPECT_EQ(parse_error(group_doc("    maxSize: 010\n")),
            "groups.yaml: nodeGroups[0] (ng).maxSize: \"010\" has a leading zero (octal in YAML "
            "1.1, decimal in YAML 1.2): write 10, or 8 for octal (line 5)");
  EXPECT_THAT(parse_error(group_doc("    maxSize: 3\n    priority: -09\n")),
              HasSubstr("nodeGroups[0] (ng).priority: \"-09\" has a leading zero (octal in "
                        "YAML 1.1, decimal in YAML 1.2): write -9 (line 6)"));
  EXPECT_EQ(parse_ok(group_doc("    maxSize: 0\n")).groups[0].max_size, 0);
}

TEST(ParseNodeGroupsErrors, NameIsRequiredNonEmptyAndWithoutWhitespace) {
  EXPECT_EQ(parse_error(std::string(kHeader) + "nodeGroups:\n  - maxSize: 1\n"),
            "groups.yaml: nodeGroups[0].name: required (line 4)");
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n", "\"\"")),
              HasSubstr("groups.yaml: nodeGroups[0] ().name: must be non-empty without "
                        "whitespace or control characters"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n", "gpu a100")),
              HasSubstr("nodeGroups[0] (gpu a100).name: must be non-empty without whitespace"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n", "\"gpu\\ta100\"")),
              HasSubstr(".name: must be non-empty without whitespace"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n", "[a]")),
              HasSubstr("nodeGroups[0].name: expected a string"));
}

TEST(ParseNodeGroupsErrors, NamesAreUnique) {
  EXPECT_EQ(parse_error(std::string(kHeader) + R"(nodeGroups:
  - name: a
    maxSize: 1
  - name: b
    maxSize: 1
  - name: a
    maxSize: 2
)"),
            "groups.yaml: nodeGroups[2] (a).name: duplicate node group name (also nodeGroups[0]) "
            "(line 8)");
}

TEST(ParseNodeGroupsErrors, MembersAreAMappingOfStrings) {
  EXPECT_EQ(parse_error(group_doc("    maxSize: 1\n    members: {pool: [a, b]}\n")),
            "groups.yaml: nodeGroups[0] (ng).members[pool]: expected a string (line 6)");
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    members: {pool: }\n")),
              HasSubstr("nodeGroups[0] (ng).members[pool]: expected a string"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    members: [pool]\n")),
              HasSubstr("nodeGroups[0] (ng).members: expected a mapping of label -> value"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    members: {pool: a, pool: b}\n")),
              HasSubstr("nodeGroups[0] (ng).members[pool]: duplicate key"));
}

TEST(ParseNodeGroupsErrors, PriceIsAFiniteNonNegativeNumber) {
  EXPECT_EQ(parse_error(group_doc("    maxSize: 1\n    price: -0.5\n")),
            "groups.yaml: nodeGroups[0] (ng).price: must be >= 0, got -0.5 (line 6)");
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    price: cheap\n")),
              HasSubstr("nodeGroups[0] (ng).price: \"cheap\" is not a finite number"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    price: .nan\n")),
              HasSubstr("nodeGroups[0] (ng).price: \".nan\" is not a finite number"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    price: 1e999\n")),
              HasSubstr("nodeGroups[0] (ng).price: \"1e999\" is not a finite number"));
}

TEST(ParseNodeGroupsErrors, DeviceProfileIsANonEmptyString) {
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    deviceProfile: \"\"\n")),
              HasSubstr("nodeGroups[0] (ng).deviceProfile: must not be empty"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    deviceProfile: {a: b}\n")),
              HasSubstr("nodeGroups[0] (ng).deviceProfile: expected a string"));
}

TEST(ParseNodeGroupsErrors, DocumentHeader) {
  EXPECT_EQ(parse_error("apiVersion: hamisim.io/v2\nkind: NodeGroups\n"),
            "groups.yaml: apiVersion: expected hamisim.io/v1 (line 1)");
  EXPECT_EQ(parse_error("apiVersion: hamisim.io/v1\nkind: DeviceProfiles\n"),
            "groups.yaml: kind: expected NodeGroups (line 2)");
  EXPECT_THAT(parse_error("kind: NodeGroups\n"), StartsWith("groups.yaml: apiVersion: expected"));
  EXPECT_EQ(parse_error("- a\n"), "groups.yaml: expected a NodeGroups document");
  EXPECT_EQ(parse_error(""), "groups.yaml: expected a NodeGroups document, got none");
  EXPECT_EQ(parse_error("# nothing\n"), "groups.yaml: expected a NodeGroups document, got none");
  EXPECT_EQ(parse_error(std::string(kHeader) + "---\n" + std::string(kHeader)),
            "groups.yaml: expected one YAML document, got 2");
  EXPECT_THAT(parse_error(std::string(kHeader) + "nodeGroups: [\n"), StartsWith("groups.yaml: "));
  EXPECT_EQ(parse_error(std::string(kHeader) + "nodeGroups: {a: 1}\n"),
            "groups.yaml: nodeGroups: expected a list (line 3)");
  EXPECT_EQ(parse_error(std::string(kHeader) + "nodeGroups: [a]\n"),
            "groups.yaml: nodeGroups[0]: expected a node group mapping (line 3)");
}

TEST(ParseNodeGroupsErrors, UnknownKeysAreRejectedAtEveryLevel) {
  EXPECT_EQ(parse_error(std::string(kHeader) + "nodegroups: []\n"),
            "groups.yaml: nodegroups: unknown field (expected one of: apiVersion, kind, "
            "nodeGroups) (line 3)");
  EXPECT_EQ(parse_error(group_doc("    maxSize: 1\n    maxsize: 2\n")),
            "groups.yaml: nodeGroups[0] (ng).maxsize: unknown field (expected one of: name, "
            "minSize, maxSize, targetSize, members, template, deviceProfile, price, priority) "
            "(line 6)");
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    template: {kind: Node}\n")),
              HasSubstr("nodeGroups[0] (ng).template.kind: unknown field (expected one of: "
                        "metadata, spec, status)"));
  EXPECT_THAT(
      parse_error(group_doc("    maxSize: 1\n    template: {metadata: {name: x}}\n")),
      HasSubstr("nodeGroups[0] (ng).template.metadata.name: unknown field (expected one of: "
                "labels, annotations)"));
  // Matching is exact: the tolerant JSON decoder would take `Labels`, this file does not.
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    template: {metadata: {Labels: {}}}\n")),
              HasSubstr("template.metadata.Labels: unknown field"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    template: {spec: {providerID: x}}\n")),
              HasSubstr("template.spec.providerID: unknown field (expected one of: taints, "
                        "unschedulable)"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    template: {status: {conditions: []}}\n")),
              HasSubstr("template.status.conditions: unknown field (expected one of: capacity, "
                        "allocatable)"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    template: {spec: {taints: [{key: a, "
                                    "effect: NoSchedule, timeAdded: x}]}}\n")),
              HasSubstr("template.spec.taints[0].timeAdded: unknown field (expected one of: key, "
                        "value, effect)"));
}

TEST(ParseNodeGroupsErrors, RepeatedFieldsAreRejected) {
  EXPECT_EQ(parse_error(group_doc("    maxSize: 1\n    maxSize: 5\n")),
            "groups.yaml: nodeGroups[0] (ng).maxSize: duplicate field (line 6)");
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    template: {status: {capacity: {cpu: 1, "
                                    "cpu: 2}}}\n")),
              HasSubstr("nodeGroups[0] (ng).template.status.capacity[cpu]: duplicate key"));
}

TEST(ParseNodeGroupsErrors, TemplateFields) {
  const auto err = [](std::string_view tmpl) {
    return parse_error(group_doc("    maxSize: 1\n    template: " + std::string(tmpl) + "\n"));
  };
  EXPECT_EQ(err("[a]"),
            "groups.yaml: nodeGroups[0] (ng).template: expected a node mapping {metadata, spec, "
            "status} (line 6)");
  EXPECT_THAT(err("{metadata: [a]}"),
              HasSubstr("(ng).template.metadata: expected a mapping {labels, annotations}"));
  EXPECT_THAT(err("{metadata: {labels: {a: {b: c}}}}"),
              HasSubstr("(ng).template.metadata.labels[a]: expected a string"));
  EXPECT_THAT(err("{metadata: {annotations: [x]}}"),
              HasSubstr("(ng).template.metadata.annotations: expected a mapping of annotation "
                        "-> value"));
  EXPECT_THAT(err("{spec: {taints: {key: a}}}"),
              HasSubstr("(ng).template.spec.taints: expected a list of taints"));
  EXPECT_THAT(err("{spec: {taints: [{key: a}]}}"),
              HasSubstr("(ng).template.spec.taints[0].effect: required"));
  EXPECT_THAT(err("{spec: {taints: [{effect: NoSchedule}]}}"),
              HasSubstr("(ng).template.spec.taints[0].key: required"));
  EXPECT_THAT(err("{spec: {taints: [{key: \"\", effect: NoSchedule}]}}"),
              HasSubstr("(ng).template.spec.taints[0].key: must not be empty"));
  EXPECT_THAT(err("{spec: {taints: [{key: a, effect: NoSchedul}]}}"),
              HasSubstr("(ng).template.spec.taints[0].effect: \"NoSchedul\" is not one of "
                        "NoSchedule, PreferNoSchedule, NoExecute"));
  EXPECT_THAT(err("{spec: {unschedulable: yes}}"),
              HasSubstr("(ng).template.spec.unschedulable: expected true or false"));
  EXPECT_THAT(err("{status: {capacity: {cpu: 1x}}}"),
              HasSubstr("(ng).template.status.capacity[cpu]: "));
  EXPECT_THAT(err("{status: {allocatable: {memory: -1Gi}}}"),
              HasSubstr("(ng).template.status.allocatable[memory]: must not be negative"));
  EXPECT_THAT(err("{status: {capacity: {cpu: [1]}}}"),
              HasSubstr("(ng).template.status.capacity[cpu]: expected a quantity"));
}

// Hostile YAML: aliases that make cycles, non-scalar keys, deep nesting, input on which
// yaml-cpp makes no progress. Each is an error naming the position, never a crash or a hang
// (the guarded YAML walker sees them before yaml-cpp's loader does).
TEST(ParseNodeGroupsErrors, HostileInputIsAnErrorNotACrash) {
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    template: &t {metadata: *t}\n")),
              HasSubstr("alias refers to the node that contains it"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    members: &m {a: *m}\n")),
              HasSubstr("alias refers to the node that contains it"));
  EXPECT_THAT(parse_error(std::string(kHeader) + "nodeGroups: &l [*l]\n"),
              HasSubstr("groups.yaml: yaml: line 3, column 17: alias refers to the node"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    ? [a]\n    : b\n")),
              HasSubstr("mapping keys must be scalars"));
  EXPECT_THAT(parse_error(group_doc("    maxSize: 1\n    members: {[a]: b}\n")),
              HasSubstr("mapping keys must be scalars"));
  EXPECT_THAT(parse_error(",nvidia:\n  a: b\n"), StartsWith("groups.yaml: "));
  EXPECT_THAT(parse_error(std::string(kHeader) + "nodeGroups: " + std::string(5000, '[') +
                          std::string(5000, ']') + "\n"),
              StartsWith("groups.yaml: "));
  EXPECT_THAT(parse_error(std::string("\xff\xfe\x00garbage", 10)), StartsWith("groups.yaml: "));
}

TEST(LoadNodeGroups, ReadsAFileAndNamesItInErrors) {
  const std::string dir = testing::TempDir();
  const std::string good = dir + "/node_groups_good_" + std::to_string(::getpid()) + ".yaml";
  const std::string bad = dir + "/node_groups_bad_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(good) << group_doc("    maxSize: 4\n");
  std::ofstream(bad) << group_doc("    maxSize: x\n");
  auto ok = load_node_groups(good);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  ASSERT_EQ(ok->groups.size(), 1u);
  EXPECT_EQ(ok->groups[0].max_size, 4);
  auto err = load_node_groups(bad);
  ASSERT_FALSE(err.ok());
  EXPECT_THAT(err.error().message,
              StartsWith(bad + ": nodeGroups[0] (ng).maxSize: \"x\" is not an integer"));
  auto missing = load_node_groups(dir + "/no-such-node-groups.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("no-such-node-groups.yaml"));
  std::filesystem::remove(good);
  std::filesystem::remove(bad);
}

// ---- members and candidates ----

TEST(IsMember, EveryMemberLabelMustMatch) {
  NodeGroupSpec g;
  g.members = {{"agentpool", "gpua100"}, {"zone", "a"}};
  model::Node n = node("n1");
  EXPECT_FALSE(is_member(g, n));  // no zone label
  n.metadata.labels["zone"] = "b";
  EXPECT_FALSE(is_member(g, n));
  n.metadata.labels["zone"] = "a";
  EXPECT_TRUE(is_member(g, n));
  n.metadata.labels["agentpool"] = "gpuh100";
  EXPECT_FALSE(is_member(g, n));
}

TEST(IsMember, AGroupWithoutMembersSelectorHasNoMembers) {
  NodeGroupSpec g;
  EXPECT_FALSE(is_member(g, node("n1")));
}

TEST(GoodTemplateCandidate, ReadySchedulableAndNotBeingDeleted) {
  EXPECT_TRUE(is_good_template_candidate(node("n1")));
  EXPECT_FALSE(is_good_template_candidate(node("n1", /*ready=*/false)));

  model::Node unknown = node("n1");
  unknown.status.conditions[1].status = "Unknown";
  EXPECT_FALSE(is_good_template_candidate(unknown));

  model::Node no_ready = node("n1");
  no_ready.status.conditions = {{"MemoryPressure", "False"}};
  EXPECT_FALSE(is_good_template_candidate(no_ready));

  model::Node cordoned = node("n1");
  cordoned.spec.unschedulable = true;
  EXPECT_FALSE(is_good_template_candidate(cordoned));

  model::Node deleting = node("n1");
  deleting.spec.taints = {{"ToBeDeletedByClusterAutoscaler", "1700000000", "NoSchedule"}};
  EXPECT_FALSE(is_good_template_candidate(deleting));

  // Other taints, even CA's soft deletion candidate taint, do not disqualify.
  model::Node tainted = node("n1");
  tainted.spec.taints = {{"nvidia.com/gpu", "", "NoSchedule"},
                         {"DeletionCandidateOfClusterAutoscaler", "1", "PreferNoSchedule"}};
  EXPECT_TRUE(is_good_template_candidate(tainted));
}

TEST(SanitizeTaints, DropsCaAndNodeConditionTaintsAndKeepsTheRest) {
  const std::vector<model::Taint> in = {
      {"nvidia.com/gpu", "present", "NoSchedule"},
      {"ToBeDeletedByClusterAutoscaler", "1", "NoSchedule"},
      {"DeletionCandidateOfClusterAutoscaler", "1", "PreferNoSchedule"},
      {"node.kubernetes.io/not-ready", "", "NoExecute"},
      {"node.kubernetes.io/unreachable", "", "NoExecute"},
      {"node.kubernetes.io/unschedulable", "", "NoSchedule"},
      {"node.kubernetes.io/memory-pressure", "", "NoSchedule"},
      {"node.kubernetes.io/disk-pressure", "", "NoSchedule"},
      {"node.kubernetes.io/pid-pressure", "", "NoSchedule"},
      {"node.kubernetes.io/network-unavailable", "", "NoSchedule"},
      {"node.kubernetes.io/out-of-disk", "", "NoSchedule"},
      {"startup-taint.cluster-autoscaler.kubernetes.io/cni", "", "NoSchedule"},
      {"status-taint.cluster-autoscaler.kubernetes.io/gpu-driver", "", "NoSchedule"},
      {"ignore-taint.cluster-autoscaler.kubernetes.io/agent", "", "NoSchedule"},
      {"dedicated", "ml", "NoExecute"},
      // Near misses stay: another node.kubernetes.io taint, the cloud provider's
      // uninitialized taint, and a prefix without its slash.
      {"node.kubernetes.io/not-ready-soon", "", "NoSchedule"},
      {"node.cloudprovider.kubernetes.io/uninitialized", "true", "NoSchedule"},
      {"startup-taint.cluster-autoscaler.kubernetes.io", "", "NoSchedule"},
  };
  const std::vector<model::Taint> out = sanitize_taints(in);
  EXPECT_THAT(taint_keys(out),
              ElementsAre("nvidia.com/gpu", "dedicated", "node.kubernetes.io/not-ready-soon",
                          "node.cloudprovider.kubernetes.io/uninitialized",
                          "startup-taint.cluster-autoscaler.kubernetes.io"));
  EXPECT_EQ(out[0].value, "present");
  EXPECT_EQ(out[0].effect, "NoSchedule");
  EXPECT_EQ(out[1].effect, "NoExecute");
  EXPECT_TRUE(sanitize_taints({}).empty());
}

// ---- templates ----

NodeGroupSpec gpu_group(std::string profile = "nd96-a100-80g") {
  NodeGroupSpec g;
  g.name = "gpu-a100";
  g.max_size = 10;
  g.members = {{"agentpool", "gpua100"}};
  g.device_profile = std::move(profile);
  return g;
}

TEST(BuildTemplate, WarmTemplateIsTheFirstGoodMemberSanitized) {
  const NodeGroupSpec g = gpu_group();
  model::Node unready = node("n0", /*ready=*/false);
  model::Node good = node("n1");
  good.metadata.annotations = {
      {"hami.io/node-nvidia-register", "GPU-0,10,81920,100,NVIDIA-A100,0,true,0,hami-core"},
      {"hami.io/node-handshake", "Reported 2024-01-01"}};
  good.metadata.labels["nvidia.com/gpu.product"] = "A100";
  good.metadata.annotations["hamisim.io/device-profile"] = "stale";  // the group's wins
  good.spec.taints = {{"nvidia.com/gpu", "present", "NoSchedule"},
                      {"node.kubernetes.io/memory-pressure", "", "NoSchedule"},
                      {"DeletionCandidateOfClusterAutoscaler", "1", "PreferNoSchedule"}};
  good.spec.provider_id = "azure:///n1";
  good.status.capacity = {{"cpu", q("96")}, {"nvidia.com/gpu", q("8")}};
  good.status.allocatable = {{"cpu", q("95")}, {"nvidia.com/gpu", q("8")}};
  model::Node later = node("n2");

  TemplateInput in;
  in.group = &g;
  in.members = {&unready, &good, &later};
  in.index = 7;
  const auto t = build_template(in);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->source, GroupTemplate::Source::kWarm);
  EXPECT_EQ(t->sample_node, "n1");
  const model::Node& n = t->node;
  EXPECT_EQ(n.metadata.name, "template-node-for-gpu-a100-7");
  EXPECT_EQ(n.metadata.uid, "template-node-for-gpu-a100-7");
  EXPECT_EQ(n.metadata.labels.at("kubernetes.io/hostname"), "template-node-for-gpu-a100-7");
  EXPECT_EQ(n.metadata.labels.at("cluster-autoscaler.kubernetes.io/template-node"), "true");
  EXPECT_EQ(n.metadata.labels.at("agentpool"), "gpua100");
  EXPECT_EQ(n.metadata.labels.at("nvidia.com/gpu.product"), "A100");
  EXPECT_EQ(n.metadata.annotations.at("hami.io/node-nvidia-register"),
            good.metadata.annotations.at("hami.io/node-nvidia-register"));
  EXPECT_EQ(n.metadata.annotations.at("hami.io/node-handshake"), "Reported 2024-01-01");
  EXPECT_EQ(n.metadata.annotations.at("hamisim.io/device-profile"), "nd96-a100-80g");
  EXPECT_THAT(taint_keys(n.spec.taints), ElementsAre("nvidia.com/gpu"));
  EXPECT_EQ(n.status.capacity, good.status.capacity);
  EXPECT_EQ(n.status.allocatable, good.status.allocatable);
  EXPECT_EQ(n.status.conditions.size(), good.status.conditions.size());
  EXPECT_EQ(n.spec.provider_id, "azure:///n1");
  EXPECT_TRUE(t->pods.empty());
}

TEST(BuildTemplate, WarmTemplateFallsBackToTheFirstMemberWhenNoneIsGood) {
  NodeGroupSpec g = gpu_group("");
  model::Node unready = node("n0", /*ready=*/false);
  unready.spec.taints = {{"node.kubernetes.io/not-ready", "", "NoExecute"}};
  unready.metadata.annotations["hamisim.io/device-profile"] = "from-sample";
  model::Node cordoned = node("n1");
  cordoned.spec.unschedulable = true;
  g.template_node = model::Node{};  // a member, even a bad one, wins over the file's template

  TemplateInput in;
  in.group = &g;
  in.members = {nullptr, &unready, &cordoned};
  const auto t = build_template(in);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->source, GroupTemplate::Source::kWarm);
  EXPECT_EQ(t->sample_node, "n0");
  EXPECT_EQ(t->node.metadata.name, "template-node-for-gpu-a100-0");
  EXPECT_TRUE(t->node.spec.taints.empty());
  ASSERT_EQ(t->node.status.conditions.size(), 2u);
  EXPECT_EQ(t->node.status.conditions[1].type, "Ready");
  EXPECT_EQ(t->node.status.conditions[1].status, "False");
  // No device profile named: the sample's annotation is left as it is.
  EXPECT_EQ(t->node.metadata.annotations.at("hamisim.io/device-profile"), "from-sample");
}

TEST(BuildTemplate, WarmTemplateKeepsTheSamplesDaemonSetAndMirrorPods) {
  const NodeGroupSpec g = gpu_group();
  const model::Node sample = node("n1");
  const model::Node other = node("n2");

  std::vector<model::Pod> pods;
  pods.push_back(daemonset_pod("hami-device-plugin-abc", "n1"));
  model::Pod mirror = pod("kube-proxy-n1", "n1");
  mirror.metadata.annotations["kubernetes.io/config.mirror"] = "hash";
  pods.push_back(mirror);
  model::Pod deleting = daemonset_pod("node-exporter-xyz", "n1");
  deleting.metadata.deletion_timestamp = "2024-01-01T00:00:00Z";
  pods.push_back(deleting);
  model::Pod deployment = pod("web-1", "n1");
  deployment.metadata.owner_references = {{"apps/v1", "ReplicaSet", "web", "rs", true}};
  pods.push_back(deployment);
  // A DaemonSet owner that is not the controller does not make a DaemonSet pod.
  model::Pod not_controller = pod("odd", "n1");
  not_controller.metadata.owner_references = {{"apps/v1", "DaemonSet", "ds", "ds", false}};
  pods.push_back(not_controller);
  model::Pod annotated = pod("ca-ds", "n1");
  annotated.metadata.annotations["cluster-autoscaler.kubernetes.io/daemonset-pod"] = "true";
  pods.push_back(annotated);
  pods.push_back(daemonset_pod("hami-device-plugin-def", "n2"));  // another node's
  pods.push_back(pod("bare", "n1"));
  pods.push_back(daemonset_pod("pending-ds", ""));

  TemplateInput in;
  in.group = &g;
  in.members = {&sample, &other};
  in.pods = &pods;
  in.index = 3;
  const auto t = build_template(in);
  ASSERT_TRUE(t.has_value());
  EXPECT_THAT(pod_names(t->pods),
              ElementsAre("hami-device-plugin-abc-3", "kube-proxy-n1-3", "ca-ds-3"));
  for (const model::Pod& p : t->pods) {
    EXPECT_EQ(p.spec.node_name, "template-node-for-gpu-a100-3");
    EXPECT_EQ(p.metadata.namespace_, "kube-system");
  }
  EXPECT_EQ(t->pods[0].metadata.uid,
            "template-node-for-gpu-a100-3/kube-system/hami-device-plugin-abc");
  EXPECT_NE(t->pods[0].metadata.uid, t->pods[1].metadata.uid);
  EXPECT_EQ(t->pods[0].metadata.owner_references.size(), 1u);
  EXPECT_EQ(t->pods[1].metadata.annotations.at("kubernetes.io/config.mirror"), "hash");
}

TEST(BuildTemplate, ColdTemplateIsBuiltFromTheFileTemplate) {
  const NodeGroups groups = parse_ok(group_doc(R"(    maxSize: 5
    deviceProfile: nd96-a100-80g
    template:
      metadata:
        labels: {agentpool: gpua100, cluster-autoscaler.kubernetes.io/template-node: "false"}
        annotations: {example.com/rack: r1}
      spec:
        taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
      status:
        capacity: {cpu: "96", memory: 900Gi}
        allocatable: {cpu: 95, nvidia.com/gpu: 8}
)",
                                               "gpu-a100"));
  ASSERT_EQ(groups.groups.size(), 1u);
  TemplateInput in;
  in.group = &groups.groups[0];
  in.index = 2;
  const auto t = build_template(in);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->source, GroupTemplate::Source::kCold);
  EXPECT_EQ(t->sample_node, "");
  EXPECT_TRUE(t->pods.empty());
  const model::Node& n = t->node;
  EXPECT_EQ(n.metadata.name, "template-node-for-gpu-a100-2");
  EXPECT_EQ(n.metadata.uid, "template-node-for-gpu-a100-2");
  EXPECT_EQ(n.metadata.labels,
            (model::StringMap{{"agentpool", "gpua100"},
                              {"cluster-autoscaler.kubernetes.io/template-node", "true"},
                              {"kubernetes.io/hostname", "template-node-for-gpu-a100-2"}}));
  EXPECT_EQ(n.metadata.annotations,
            (model::StringMap{{"example.com/rack", "r1"},
                              {"hamisim.io/device-profile", "nd96-a100-80g"}}));
  EXPECT_THAT(taint_keys(n.spec.taints), ElementsAre("nvidia.com/gpu"));
  EXPECT_FALSE(n.spec.unschedulable);
  // Each list lends the other the resources it lacks; given values are not overwritten.
  EXPECT_EQ(
      n.status.capacity,
      (model::ResourceList{{"cpu", q("96")}, {"memory", q("900Gi")}, {"nvidia.com/gpu", q("8")}}));
  EXPECT_EQ(
      n.status.allocatable,
      (model::ResourceList{{"cpu", q("95")}, {"memory", q("900Gi")}, {"nvidia.com/gpu", q("8")}}));
  ASSERT_EQ(n.status.conditions.size(), 1u);
  EXPECT_EQ(n.status.conditions[0].type, "Ready");
  EXPECT_EQ(n.status.conditions[0].status, "True");
}

TEST(BuildTemplate, ColdTemplateDefaultsAWholeMissingList) {
  NodeGroupSpec g = gpu_group("");
  g.template_node = model::Node{};
  g.template_node->status.capacity = {{"cpu", q("8")}};
  g.template_node->spec.unschedulable = true;
  TemplateInput in;
  in.group = &g;
  auto t = build_template(in);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->node.status.allocatable, (model::ResourceList{{"cpu", q("8")}}));
  EXPECT_TRUE(t->node.spec.unschedulable);
  EXPECT_FALSE(t->node.metadata.annotations.contains("hamisim.io/device-profile"));

  g.template_node->status.capacity.clear();
  g.template_node->status.allocatable = {{"memory", q("1Gi")}};
  t = build_template(in);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->node.status.capacity, (model::ResourceList{{"memory", q("1Gi")}}));
}

TEST(BuildTemplate, ColdTemplateIgnoresSnapshotPods) {
  NodeGroupSpec g = gpu_group();
  g.template_node = model::Node{};
  const std::vector<model::Pod> pods = {daemonset_pod("ds", ""), daemonset_pod("ds2", "n1")};
  TemplateInput in;
  in.group = &g;
  in.pods = &pods;
  const auto t = build_template(in);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->source, GroupTemplate::Source::kCold);
  EXPECT_TRUE(t->pods.empty());
}

TEST(BuildTemplate, NoMemberAndNoTemplateIsNoTemplate) {
  const NodeGroupSpec g = gpu_group();  // a device profile alone is not a template
  TemplateInput in;
  in.group = &g;
  EXPECT_FALSE(build_template(in).has_value());
  in.members = {nullptr};
  EXPECT_FALSE(build_template(in).has_value());
  EXPECT_FALSE(build_template(TemplateInput{}).has_value());
}

}  // namespace
}  // namespace hamisim::planner::nodegroups
