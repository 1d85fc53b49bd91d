#include "model/decode.h"
#include "test_paths.h"

#include <gtest/gtest.h>

#include <string>

namespace hamisim::model {
namespace {

std::string fixture(const std::string& name) {
  auto text =
      read_file(std::string(hamisim::testing::source_dir()) + "/tests/model/testdata/" + name);
  EXPECT_TRUE(text.ok()) << text.error().message;
  return text.ok() ? *text : std::string();
}

Quantity q(std::string_view text) {
  return *Quantity::parse(text);
}

Pod pod_ok(std::string_view json) {
  auto pod = decode_pod_json(json);
  EXPECT_TRUE(pod.ok()) << pod.error().message;
  return pod.ok() ? *pod : Pod{};
}

std::string pod_error(std::string_view json) {
  auto pod = decode_pod_json(json);
  EXPECT_FALSE(pod.ok()) << json;
  return pod.ok() ? std::string() : pod.error().message;
}

// ---- realistic objects ----

TEST(DecodePodTest, DecodesKubectlPodJson) {
  const Pod pod = pod_ok(fixture("pod.json"));
  const ObjectMeta& m = pod.metadata;
  EXPECT_EQ(m.name, "trainer-7d9c8b6f5-x2b4q");
  EXPECT_EQ(m.generate_name, "trainer-7d9c8b6f5-");
  EXPECT_EQ(m.namespace_, "ml");
  EXPECT_EQ(m.uid, "8f9e0d1c-2b3a-4958-8776-655443322110");
  EXPECT_EQ(m.resource_version, "123456");
  EXPECT_EQ(m.creation_timestamp, "2024-06-10T08:00:00Z");
  EXPECT_EQ(m.deletion_timestamp, std::nullopt);
  EXPECT_EQ(m.labels.size(), 2u);
  EXPECT_EQ(*find_label(m, "app"), "trainer");
  EXPECT_EQ(*find_annotation(m, "hami.io/vgpu-node"), "gpu-node-1");
  EXPECT_EQ(*find_annotation(m, "kubectl.kubernetes.io/last-applied-configuration"),
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}\n");
  ASSERT_EQ(m.owner_references.size(), 1u);
  EXPECT_EQ(m.owner_references[0].api_version, "apps/v1");
  EXPECT_EQ(m.owner_references[0].kind, "ReplicaSet");
  EXPECT_EQ(m.owner_references[0].name, "trainer-7d9c8b6f5");
  EXPECT_EQ(m.owner_references[0].uid, "5b1d7c1e-3f4a-4c8e-9a57-0b1b2c3d4e5f");
  EXPECT_TRUE(m.owner_references[0].controller);

  const PodSpec& s = pod.spec;
  EXPECT_EQ(s.node_name, "gpu-node-1");
  EXPECT_EQ(s.scheduler_name, "hami-scheduler");
  EXPECT_EQ(s.runtime_class_name, "nvidia");
  EXPECT_EQ(s.priority_class_name, "ml-high");
  EXPECT_EQ(s.priority, 1000);
  EXPECT_FALSE(s.host_network);
  EXPECT_EQ(s.node_selector.at("kubernetes.io/os"), "linux");
  EXPECT_EQ(s.overhead.at("cpu"), q("250m"));
  EXPECT_EQ(s.overhead.at("memory"), q("120Mi"));

  ASSERT_EQ(s.containers.size(), 2u);
  const Container& c0 = s.containers[0];
  EXPECT_EQ(c0.name, "trainer");
  EXPECT_EQ(c0.image, "nvcr.io/nvidia/pytorch:24.05-py3");
  EXPECT_EQ(c0.resources.limits.size(), 5u);
  EXPECT_EQ(c0.resources.limits.at("nvidia.com/gpu").as_int64(), 1);
  EXPECT_EQ(c0.resources.limits.at("nvidia.com/gpumem").as_int64(), 10240);
  EXPECT_EQ(c0.resources.limits.at("memory").as_int64(), 17179869184);
  EXPECT_EQ(c0.resources.requests.at("cpu").milli_value(), 3500);
  EXPECT_FALSE(c0.privileged);
  EXPECT_EQ(c0.restart_policy, std::nullopt);
  ASSERT_EQ(c0.ports.size(), 2u);
  EXPECT_EQ(c0.ports[0].container_port, 8080);
  EXPECT_EQ(c0.ports[0].host_port, 0);
  EXPECT_EQ(c0.ports[0].protocol, "TCP");
  EXPECT_EQ(c0.ports[1].container_port, 29500);
  EXPECT_EQ(c0.ports[1].host_port, 29500);
  EXPECT_EQ(c0.ports[1].protocol, "UDP");
  EXPECT_EQ(c0.ports[1].host_ip, "0.0.0.0");
  EXPECT_TRUE(s.containers[1].privileged);
  EXPECT_TRUE(s.containers[1].resources.limits.empty());

  ASSERT_EQ(s.init_containers.size(), 2u);
  EXPECT_EQ(s.init_containers[0].name, "fetch-data");
  EXPECT_EQ(s.init_containers[0].restart_policy, std::nullopt);
  EXPECT_EQ(s.init_containers[1].restart_policy, "Always");
  EXPECT_EQ(s.init_containers[1].resources.requests.at("cpu"), q("250m"));

  ASSERT_EQ(s.tolerations.size(), 2u);
  EXPECT_EQ(s.tolerations[0].key, "node.kubernetes.io/not-ready");
  EXPECT_EQ(s.tolerations[0].op, "Exists");
  EXPECT_EQ(s.tolerations[0].effect, "NoExecute");
  EXPECT_EQ(s.tolerations[0].toleration_seconds, 300);
  EXPECT_EQ(s.tolerations[1].value, "present");
  EXPECT_EQ(s.tolerations[1].op, "Equal");
  EXPECT_EQ(s.tolerations[1].toleration_seconds, std::nullopt);

  ASSERT_EQ(s.topology_spread_constraints.size(), 1u);
  const auto& tsc = s.topology_spread_constraints[0];
  EXPECT_EQ(tsc.max_skew, 1);
  EXPECT_EQ(tsc.topology_key, "topology.kubernetes.io/zone");
  EXPECT_EQ(tsc.when_unsatisfiable, "DoNotSchedule");
  ASSERT_TRUE(tsc.label_selector.has_value());
  EXPECT_EQ(tsc.label_selector->match_labels.at("app"), "trainer");
  EXPECT_EQ(tsc.min_domains, 2);
  EXPECT_EQ(tsc.match_label_keys, std::vector<std::string>{"pod-template-hash"});
  EXPECT_EQ(tsc.node_affinity_policy, "Honor");
  EXPECT_EQ(tsc.node_taints_policy, "Ignore");

  ASSERT_TRUE(s.affinity.has_value());
  ASSERT_TRUE(s.affinity->node_affinity.has_value());
  const NodeAffinity& na = *s.affinity->node_affinity;
  ASSERT_TRUE(na.required.has_value());
  ASSERT_EQ(na.required->terms.size(), 1u);
  const NodeSelectorTerm& term = na.required->terms[0];
  ASSERT_EQ(term.match_expressions.size(), 1u);
  EXPECT_EQ(term.match_expressions[0].key, "nvidia.com/gpu.product");
  EXPECT_EQ(term.match_expressions[0].op, "In");
  EXPECT_EQ(term.match_expressions[0].values,
            (std::vector<std::string>{"NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3"}));
  ASSERT_EQ(term.match_fields.size(), 1u);
  EXPECT_EQ(term.match_fields[0].key, "metadata.name");
  EXPECT_EQ(term.match_fields[0].op, "NotIn");
  ASSERT_EQ(na.preferred.size(), 1u);
  EXPECT_EQ(na.preferred[0].weight, 50);
  EXPECT_EQ(na.preferred[0].preference.match_expressions[0].values,
            std::vector<std::string>{"zone-a"});
  EXPECT_FALSE(s.affinity->pod_affinity.has_value());
  ASSERT_TRUE(s.affinity->pod_anti_affinity.has_value());
  const PodAffinity& anti = *s.affinity->pod_anti_affinity;
  ASSERT_EQ(anti.preferred.size(), 1u);
  EXPECT_EQ(anti.preferred[0].weight, 100);
  EXPECT_EQ(anti.preferred[0].term.topology_key, "kubernetes.io/hostname");
  EXPECT_EQ(anti.preferred[0].term.namespaces, std::vector<std::string>{"ml"});
  EXPECT_EQ(anti.preferred[0].term.label_selector->match_labels.at("app"), "trainer");
  EXPECT_FALSE(anti.preferred[0].term.namespace_selector.has_value());
  ASSERT_EQ(anti.required.size(), 1u);
  EXPECT_EQ(anti.required[0].label_selector->match_expressions[0].op, "Exists");
  ASSERT_TRUE(anti.required[0].namespace_selector.has_value());  // {} selects all namespaces
  EXPECT_TRUE(anti.required[0].namespace_selector->match_labels.empty());

  EXPECT_EQ(pod.status.phase, "Running");
  ASSERT_EQ(pod.status.init_container_statuses.size(), 2u);
  EXPECT_EQ(pod.status.init_container_statuses[0].name, "fetch-data");
  ASSERT_TRUE(pod.status.init_container_statuses[0].terminated.has_value());
  EXPECT_EQ(pod.status.init_container_statuses[0].terminated->exit_code, 0);
  EXPECT_EQ(pod.status.init_container_statuses[0].terminated->reason, "Completed");
  EXPECT_FALSE(pod.status.init_container_statuses[1].terminated.has_value());
}

TEST(DecodeNodeTest, DecodesKubectlNodeJson) {
  auto node = decode_node_json(fixture("node.json"));
  ASSERT_TRUE(node.ok()) << node.error().message;
  EXPECT_EQ(node->metadata.name, "gpu-node-1");
  EXPECT_EQ(node->metadata.labels.at("gpu"), "on");
  EXPECT_NE(find_annotation(node->metadata, "hami.io/node-nvidia-register"), nullptr);
  EXPECT_TRUE(node->spec.unschedulable);
  EXPECT_EQ(node->spec.provider_id, "aws:///us-east-1a/i-0123456789abcdef0");
  ASSERT_EQ(node->spec.taints.size(), 2u);
  EXPECT_EQ(node->spec.taints[0].key, "nvidia.com/gpu");
  EXPECT_EQ(node->spec.taints[0].value, "present");
  EXPECT_EQ(node->spec.taints[0].effect, "NoSchedule");
  EXPECT_EQ(node->spec.taints[1].value, "");
  EXPECT_EQ(node->status.capacity.at("cpu").as_int64(), 64);
  EXPECT_EQ(node->status.allocatable.at("cpu").milli_value(), 63500);
  EXPECT_EQ(node->status.capacity.at("memory").value(), 528330404LL * 1024);
  EXPECT_EQ(node->status.allocatable.at("nvidia.com/gpu").as_int64(), 80);
  EXPECT_EQ(node->status.allocatable.size(), 7u);
  ASSERT_EQ(node->status.conditions.size(), 2u);
  EXPECT_EQ(node->status.conditions[1].type, "Ready");
  EXPECT_EQ(node->status.conditions[1].status, "True");
}

TEST(DecodePodTest, EmptyObjectGivesDefaults) {
  const Pod pod = pod_ok("{}");
  EXPECT_EQ(pod.metadata.name, "");
  EXPECT_TRUE(pod.spec.containers.empty());
  EXPECT_FALSE(pod.spec.affinity.has_value());
  EXPECT_FALSE(pod.spec.priority.has_value());
}

// ---- Go encoding/json compatibility ----

TEST(DecodePodTest, KeysMatchCaseInsensitively) {
  const Pod pod = pod_ok(R"({"METADATA":{"Name":"p","NameSpace":"ns","LABELS":{"App":"x"}},
      "Spec":{"NODENAME":"n1","containers":[{"NAME":"c","Resources":{"LIMITS":{"CPU":"1"}}}],
              "HostNetwork":true}})");
  EXPECT_EQ(pod.metadata.name, "p");
  EXPECT_EQ(pod.metadata.namespace_, "ns");
  EXPECT_EQ(pod.metadata.labels.at("App"), "x");  // map keys are data: case kept
  EXPECT_EQ(pod.spec.node_name, "n1");
  ASSERT_EQ(pod.spec.containers.size(), 1u);
  EXPECT_EQ(pod.spec.containers[0].name, "c");
  EXPECT_EQ(pod.spec.containers[0].resources.limits.count("CPU"), 1u);
  EXPECT_EQ(pod.spec.containers[0].resources.limits.count("cpu"), 0u);
  EXPECT_TRUE(pod.spec.host_network);
}

// Issue #26: keys fold as Go folds them (go/json_key.h), not ASCII only: U+0131 (dotless i)
// and U+017F (long s) match 'i' and 's', as they do in HAMi.
TEST(DecodePodTest, KeysFoldAsGoFoldsThem) {
  const Pod pod = pod_ok(
      "{\"metadata\":{\"name\":\"p\",\"name\xC5\xBFpace\":\"ns\"},"
      "\"spec\":{\"pr\xC4\xB1or\xC4\xB1ty\":7,\"ho\xC5\xBFtNetwork\":true}}");
  EXPECT_EQ(pod.metadata.namespace_, "ns");
  EXPECT_EQ(pod.spec.priority, 7);
  EXPECT_TRUE(pod.spec.host_network);
}

TEST(DecodePodTest, EscapedKeysAreUnescapedBeforeMatching) {
  const Pod pod = pod_ok(R"({"metadata":{"n\u0061me":"p"},"spec":{"nodeName":"a\"b"}})");
  EXPECT_EQ(pod.metadata.name, "p");
  EXPECT_EQ(pod.spec.node_name, "a\"b");
}

TEST(DecodePodTest, UnknownKeysAreIgnoredWhateverTheyHold) {
  const Pod pod = pod_ok(R"({"kind":"Pod","extra":{"a":[1,2,{"b":null}],"c":"d"},
      "metadata":{"name":"p","x":[[[[]]]],"managedFields":[{"f":{"g":{}}}]},
      "spec":{"unknown":true,"containers":[{"name":"c","extra":1e999}]},
      "status":{"whatever":"x"}})");
  EXPECT_EQ(pod.metadata.name, "p");
  ASSERT_EQ(pod.spec.containers.size(), 1u);
  EXPECT_EQ(pod.spec.containers[0].name, "c");
}

TEST(DecodePodTest, NullLeavesPlainValuesAndResetsPointersMapsAndLists) {
  const Pod pod = pod_ok(R"({
    "metadata":{"name":"p","name":null,"labels":{"a":"b"},"annotations":null,
                "creationTimestamp":"2024-01-01T00:00:00Z","creationTimestamp":null,
                "deletionTimestamp":"2024-01-02T00:00:00Z","ownerReferences":null},
    "spec":{"runtimeClassName":"x","runtimeClassName":null,"priority":5,"priority":null,
            "hostNetwork":true,"hostNetwork":null,"affinity":null,"tolerations":null,
            "nodeSelector":{"a":"b"},"nodeSelector":null,
            "containers":[{"name":"c","resources":null,"securityContext":{"privileged":true},
                           "ports":[{"containerPort":80,"protocol":null}]},
                          {"name":"d","securityContext":{"privileged":true},"securityContext":null,
                           "resources":{"limits":{"cpu":"1","memory":null}}}]},
    "status":null})");
  EXPECT_EQ(pod.metadata.name, "p");  // Go: null into a string is a no-op
  EXPECT_EQ(pod.metadata.labels.size(), 1u);
  EXPECT_TRUE(pod.metadata.annotations.empty());
  EXPECT_EQ(pod.metadata.creation_timestamp, "");  // metav1.Time: null is the zero time
  EXPECT_EQ(pod.metadata.deletion_timestamp, "2024-01-02T00:00:00Z");
  EXPECT_FALSE(pod.spec.runtime_class_name.has_value());
  EXPECT_FALSE(pod.spec.priority.has_value());
  EXPECT_TRUE(pod.spec.host_network);
  EXPECT_FALSE(pod.spec.affinity.has_value());
  EXPECT_TRUE(pod.spec.node_selector.empty());
  ASSERT_EQ(pod.spec.containers.size(), 2u);
  EXPECT_TRUE(pod.spec.containers[0].privileged);
  EXPECT_EQ(pod.spec.containers[0].ports[0].protocol, "TCP");
  EXPECT_FALSE(pod.spec.containers[1].privileged);
  // A null quantity is zero (Quantity.UnmarshalJSON), and the entry exists as in Go.
  ASSERT_EQ(pod.spec.containers[1].resources.limits.count("memory"), 1u);
  EXPECT_TRUE(pod.spec.containers[1].resources.limits.at("memory").is_zero());
}

TEST(DecodePodTest, NullDeletionTimestampIsUnset) {
  const Pod pod = pod_ok(R"({"metadata":{"deletionTimestamp":null}})");
  EXPECT_FALSE(pod.metadata.deletion_timestamp.has_value());
}

TEST(DecodePodTest, LastDuplicateKeyWins) {
  const Pod pod = pod_ok(R"({"metadata":{"name":"a","NAME":"b"},
      "spec":{"nodeName":"n1","nodeName":"n2","priority":1,"priority":2}})");
  EXPECT_EQ(pod.metadata.name, "b");
  EXPECT_EQ(pod.spec.node_name, "n2");
  EXPECT_EQ(pod.spec.priority, 2);
}

TEST(DecodePodTest, DuplicateObjectsMergeLikeGo) {
  const Pod pod = pod_ok(R"({"spec":{"nodeName":"n"},"spec":{"schedulerName":"s"},
      "metadata":{"labels":{"a":"1","b":"2"}},"metadata":{"labels":{"b":"3","c":"4"}}})");
  EXPECT_EQ(pod.spec.node_name, "n");
  EXPECT_EQ(pod.spec.scheduler_name, "s");
  EXPECT_EQ(pod.metadata.labels, (StringMap{{"a", "1"}, {"b", "3"}, {"c", "4"}}));
}

TEST(DecodePodTest, DuplicateListsReuseElementsAndTakeTheNewLength) {
  const Pod pod = pod_ok(R"({"spec":{
      "containers":[{"name":"a","image":"x"},{"name":"b"}],
      "containers":[{"name":"c"}]}})");
  ASSERT_EQ(pod.spec.containers.size(), 1u);
  EXPECT_EQ(pod.spec.containers[0].name, "c");
  EXPECT_EQ(pod.spec.containers[0].image, "x");  // Go decodes into the existing element
}

TEST(DecodePodTest, QuantitiesAcceptJsonNumbersAndTrimmedStrings) {
  const Pod pod = pod_ok(R"({"spec":{"containers":[{"resources":{
      "limits":{"cpu":2,"memory":1e3,"a":0.5,"b":-1,"c":" 1Gi ","d":"\t3\n"}}}]}})");
  const auto& limits = pod.spec.containers[0].resources.limits;
  EXPECT_EQ(limits.at("cpu"), q("2"));
  EXPECT_EQ(limits.at("memory"), q("1000"));
  EXPECT_EQ(limits.at("a"), q("500m"));
  EXPECT_EQ(limits.at("b"), q("-1"));
  EXPECT_EQ(limits.at("c"), q("1Gi"));
  EXPECT_EQ(limits.at("d"), q("3"));
}

// ---- errors carry the field path ----

TEST(DecodePodTest, WrongTypeErrorsNameTheFieldPath) {
  EXPECT_EQ(pod_error(R"({"spec":{"containers":[{"name":"a"},
      {"resources":{"limits":{"nvidia.com/gpu":true}}}]}})"),
            "spec.containers[1].resources.limits[nvidia.com/gpu]: expected a quantity string, got "
            "boolean");
  EXPECT_EQ(pod_error(R"({"spec":{"containers":{"name":"a"}}})"),
            "spec.containers: expected an array, got object");
  EXPECT_EQ(pod_error(R"({"metadata":{"labels":{"app":5}}})"),
            "metadata.labels[app]: expected a string, got number");
  EXPECT_EQ(pod_error(R"({"metadata":"x"})"), "metadata: expected an object, got string");
  EXPECT_EQ(pod_error(R"({"spec":{"priority":"5"}})"),
            "spec.priority: expected an int32, got string");
  EXPECT_EQ(pod_error(R"({"spec":{"priority":1.5}})"),
            "spec.priority: expected an int32, got number 1.5");
  EXPECT_EQ(pod_error(R"({"spec":{"priority":2147483648}})"),
            "spec.priority: expected an int32, got number 2147483648");
  EXPECT_EQ(pod_error(R"({"spec":{"tolerations":[{"tolerationSeconds":"300"}]}})"),
            "spec.tolerations[0].tolerationSeconds: expected an int64, got string");
  EXPECT_EQ(pod_error(R"({"spec":{"hostNetwork":"true"}})"),
            "spec.hostNetwork: expected a boolean, got string");
  EXPECT_EQ(pod_error(R"({"spec":{"affinity":{"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
      {"matchFields":[{"values":"x"}]}]}}}}})"),
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
            "nodeSelectorTerms[0].matchFields[0].values: expected an array, got string");
  EXPECT_EQ(pod_error(R"({"status":{"initContainerStatuses":[{"state":{"terminated":
      {"exitCode":"1"}}}]}})"),
            "status.initContainerStatuses[0].state.terminated.exitCode: expected an int32, got "
            "string");
  EXPECT_EQ(pod_error(R"({"Spec":{"Containers":[{"Ports":[{"ContainerPort":{}}]}]}})"),
            "spec.containers[0].ports[0].containerPort: expected an int32, got object");
}

TEST(DecodePodTest, InvalidQuantityErrorNamesPathAndText) {
  const std::string err =
      pod_error(R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"1Kb"}}}]}})");
  EXPECT_EQ(err.rfind("spec.containers[0].resources.requests[cpu]: invalid quantity \"1Kb\"", 0),
            0u)
      << err;
  EXPECT_NE(pod_error(R"({"spec":{"overhead":{"cpu":"1e30"}}})").find("spec.overhead[cpu]: "),
            std::string::npos);
}

TEST(DecodePodTest, TopLevelMustBeAnObject) {
  EXPECT_EQ(pod_error("[]"), "expected an object, got array");
  EXPECT_EQ(pod_error("42"), "expected an object, got number");
  EXPECT_EQ(pod_error("null"), "expected an object, got null");
  EXPECT_FALSE(pod_error("").empty());
  EXPECT_FALSE(pod_error("   ").empty());
}

TEST(DecodePodTest, MalformedJsonIsAnError) {
  for (const char* bad :
       {R"({"metadata":{"name":nul}})", R"({"metadata":{"name":"x"})", R"({"metadata" {}})",
        R"({"spec":{"priority":01}})", R"({"spec":{"hostNetwork":tru}})",
        R"({"spec":{"overhead":{"cpu":1x}}})", R"({"spec":{"overhead":{"cpu":-}}})",
        "{\"metadata\":{\"name\":\"\xff\"}}", R"({"metadata":{"name":"\x"}})",
        R"({"metadata":{"name":"a)"}) {
    EXPECT_FALSE(decode_pod_json(bad).ok()) << bad;
  }
}

TEST(DecodePodTest, EveryTruncationOfARealPodIsAnError) {
  const std::string json = fixture("pod.json");
  const size_t end = json.find_last_of('}');
  for (size_t n = 0; n < end; ++n) {
    auto pod = decode_pod_json(std::string_view(json).substr(0, n));
    EXPECT_FALSE(pod.ok()) << "prefix of " << n << " bytes decoded";
  }
}

TEST(DecodePodTest, TrailingContentAfterTheObjectIsIgnored) {
  // Like Go's json.Decoder.Decode: only the first value is read.
  const Pod pod = pod_ok(R"({"metadata":{"name":"p"}} {"metadata":{"name":"q"}})");
  EXPECT_EQ(pod.metadata.name, "p");
}

TEST(DecodePodTest, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(decode_pod_json(deep).ok());
  EXPECT_FALSE(decode_objects_json(deep).ok());
  EXPECT_EQ(pod_error(R"({"spec":)" + deep + "}"), "spec: expected an object, got array");
  EXPECT_FALSE(decode_pod_json(R"({"spec":{"containers":[)" + deep + "]}}").ok());
  // Unbalanced deep nesting.
  EXPECT_FALSE(decode_pod_json(R"({"x":)" + std::string(100000, '[')).ok());
  EXPECT_FALSE(decode_pod_json(std::string(100000, '{')).ok());
  // Deep nesting in an ignored value is skipped without recursion.
  EXPECT_TRUE(decode_pod_json(R"({"x":)" + deep + "}").ok());
}

TEST(DecodePodTest, InBufferDecodesAViewAndPrefixesErrors) {
  std::string buffer = R"({"args":{"Pod":{"metadata":{"name":"p"}},"Nodes":null}})";
  const size_t begin = buffer.find(R"({"metadata")");
  const size_t len = std::string_view(R"({"metadata":{"name":"p"}})").size();
  buffer.append(kJsonPadding, ' ');
  auto pod = decode_pod_json_in_buffer(std::string_view(buffer).substr(begin, len), "args.Pod");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(pod->metadata.name, "p");

  std::string bad = R"({"spec":{"nodeName":1}}, "more")";
  bad.append(kJsonPadding, '\0');
  auto err = decode_pod_json_in_buffer(std::string_view(bad).substr(0, 23), "items[3]");
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.error().message, "items[3].spec.nodeName: expected a string, got number");

  std::string node = R"({"metadata":{"name":"n"}}xx)";
  node.append(kJsonPadding, 'x');
  auto n = decode_node_json_in_buffer(std::string_view(node).substr(0, 25));
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(n->metadata.name, "n");
}

// ---- lists and object sets ----

TEST(DecodeObjectsTest, ListDispatchesItemsOnKind) {
  const std::string json = R"({"apiVersion":"v1","kind":"List","metadata":{},"items":[
    {"kind":"Node","metadata":{"name":"n1"}},
    {"kind":"Pod","metadata":{"name":"p1"}},
    {"kind":"Service","metadata":{"name":"s1"},"spec":{"ports":"weird"}},
    {"kind":"ResourceQuota","metadata":{"name":"q1"},"spec":{"hard":{"pods":"10"}},
     "status":{"hard":{"pods":"10"},"used":{"pods":"3"}}},
    {"kind":"Node","metadata":{"name":"n2"}}   ]})";
  auto set = decode_objects_json(json);
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->nodes.size(), 2u);
  EXPECT_EQ(set->nodes[0].metadata.name, "n1");
  EXPECT_EQ(set->nodes[1].metadata.name, "n2");
  ASSERT_EQ(set->pods.size(), 1u);
  EXPECT_EQ(set->pods[0].metadata.name, "p1");
  ASSERT_EQ(set->quotas.size(), 1u);
  EXPECT_EQ(set->quotas[0].metadata.name, "q1");
  EXPECT_EQ(set->quotas[0].spec.hard.at("pods").as_int64(), 10);
  EXPECT_EQ(set->quotas[0].status.used.at("pods").as_int64(), 3);
  EXPECT_EQ(set->skipped_items, 1);
  ASSERT_EQ(set->node_json.size(), 2u);
  EXPECT_EQ(set->node_json[0], R"({"kind":"Node","metadata":{"name":"n1"}})");
  EXPECT_EQ(set->node_json[1], R"({"kind":"Node","metadata":{"name":"n2"}})");
}

// The items are counted before they are decoded, so the pods' vector is allocated once (in a
// List and in a top-level array alike).
TEST(DecodeObjectsTest, PodsOfAListAreAllocatedOnce) {
  for (const char* open : {R"({"kind":"List","items":[)", "["}) {
    std::string json = open;
    for (int i = 0; i < 100; ++i) {
      json += std::string(i == 0 ? "" : ",") + R"({"kind":"Pod","metadata":{"name":"p)" +
              std::to_string(i) + R"("}})";
    }
    json += std::string("]") + (open[0] == '{' ? "}" : "");
    auto set = decode_objects_json(json);
    ASSERT_TRUE(set.ok()) << set.error().message;
    ASSERT_EQ(set->pods.size(), 100u);
    EXPECT_EQ(set->pods.capacity(), 100u);
    EXPECT_EQ(set->pods[99].metadata.name, "p99");
  }
}

// An items array that cannot be counted (a comma missing between items) is decoded again
// without counting, so the error names the item where decoding stops, as it always did.
TEST(DecodeObjectsTest, AnItemsArrayThatCannotBeCountedFailsAtItsItem) {
  auto list = decode_objects_json(
      R"({"kind":"List","items":[{"kind":"Pod","metadata":{"name":"a"}} {"kind":"Pod"}]})");
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().message.find("items[1]"), std::string::npos) << list.error().message;
  auto nested = decode_objects_json(
      R"({"kind":"List","items":[{"kind":"List","items":[{"kind":"Pod","metadata":{"name":"a"}} 3]}]})");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.error().message.find("items[0].items[1]"), std::string::npos)
      << nested.error().message;
}

TEST(DecodeObjectsTest, TypedListItemsWithoutKindTakeTheListsKind) {
  auto set = decode_objects_json(R"({"kind":"NodeList","items":[{"metadata":{"name":"a"}},
      {"metadata":{"name":"b"}}]})");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->nodes.size(), 2u);
  auto pods = decode_objects_json(R"({"items":[{"metadata":{"name":"a"}}],"kind":"PodList"})");
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  EXPECT_EQ(pods->pods.size(), 1u);
  auto untyped = decode_objects_json(R"({"kind":"List","items":[{"metadata":{"name":"a"}}]})");
  ASSERT_TRUE(untyped.ok());
  EXPECT_EQ(untyped->skipped_items, 1);
}

TEST(DecodeObjectsTest, SingleObjectsDispatchOnKind) {
  const std::string node = fixture("node.json");
  auto set = decode_objects_json(node);
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->nodes.size(), 1u);
  EXPECT_EQ(set->nodes[0].metadata.name, "gpu-node-1");
  ASSERT_EQ(set->node_json.size(), 1u);
  EXPECT_EQ(set->node_json[0], node.substr(0, node.find_last_of('}') + 1));
  // The node's raw JSON decodes to the same node.
  auto again = decode_node_json(set->node_json[0]);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status.allocatable, set->nodes[0].status.allocatable);

  auto pod = decode_objects_json(fixture("pod.json"));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(pod->pods.size(), 1u);
  EXPECT_EQ(pod->pods[0].spec.containers.size(), 2u);

  auto other = decode_objects_json(R"({"kind":"ConfigMap","data":{"a":"b"}})");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->skipped_items, 1);
  EXPECT_TRUE(other->nodes.empty());
}

TEST(DecodeObjectsTest, KindMayComeAfterTheFields) {
  auto set = decode_objects_json(R"({"spec":{"containers":[{"name":"c"}]},"kind":"Pod"})");
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->pods.size(), 1u);
  EXPECT_EQ(set->pods[0].spec.containers[0].name, "c");
}

TEST(DecodeObjectsTest, ItemErrorsNameTheItem) {
  auto set = decode_objects_json(R"({"kind":"List","items":[{"kind":"Pod"},
      {"kind":"Pod","spec":{"containers":[{"resources":{"limits":{"cpu":[]}}}]}}]})");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message,
            "items[1].spec.containers[0].resources.limits[cpu]: expected a quantity string, got "
            "array");
  auto bad_item = decode_objects_json(R"({"kind":"List","items":[{"kind":"Pod"}, 7]})");
  ASSERT_FALSE(bad_item.ok());
  EXPECT_EQ(bad_item.error().message, "items[1]: expected an object, got number");
  auto bad_items = decode_objects_json(R"({"kind":"List","items":{}})");
  ASSERT_FALSE(bad_items.ok());
  EXPECT_EQ(bad_items.error().message, "items: expected an array, got object");
  auto bad_kind = decode_objects_json(R"({"kind":3})");
  ASSERT_FALSE(bad_kind.ok());
  EXPECT_EQ(bad_kind.error().message, "kind: expected a string, got number");
}

TEST(DecodeObjectsTest, NullOrMissingItemsIsAnEmptyList) {
  for (const char* json :
       {R"({"kind":"List","items":null})", R"({"kind":"NodeList"})", R"({"items":[]})", "[]"}) {
    auto set = decode_objects_json(json);
    ASSERT_TRUE(set.ok()) << json << ": " << set.error().message;
    EXPECT_TRUE(set->nodes.empty() && set->pods.empty() && set->quotas.empty()) << json;
    EXPECT_EQ(set->skipped_items, 0) << json;
  }
}

TEST(DecodeObjectsTest, LastItemsKeyWins) {
  auto set = decode_objects_json(
      R"({"kind":"List","items":[{"kind":"Pod"}],"ITEMS":[{"kind":"Node"},{"kind":"Node"}]})");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->pods.size(), 0u);
  EXPECT_EQ(set->nodes.size(), 2u);
}

TEST(DecodeObjectsTest, TopLevelArrayIsAListOfItems) {
  auto set = decode_objects_json(R"([{"kind":"Node"},{"kind":"Pod"},{"kind":"Secret"}])");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->nodes.size(), 1u);
  EXPECT_EQ(set->pods.size(), 1u);
  EXPECT_EQ(set->skipped_items, 1);
}

TEST(DecodeObjectsTest, NestedListsAreFlattenedUpToALimit) {
  auto set = decode_objects_json(R"({"kind":"List","items":[
      {"kind":"NodeList","items":[{"metadata":{"name":"a"}}]},{"kind":"Pod"}]})");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->nodes.size(), 1u);
  EXPECT_EQ(set->pods.size(), 1u);
  std::string deep = R"({"kind":"Node"})";
  for (int i = 0; i < 10; ++i) deep = R"({"kind":"List","items":[)" + deep + "]}";
  auto too_deep = decode_objects_json(deep);
  ASSERT_FALSE(too_deep.ok());
  EXPECT_NE(too_deep.error().message.find("lists nested too deeply"), std::string::npos);
}

TEST(DecodeObjectsTest, EveryTruncationOfAListIsAnError) {
  const std::string json =
      R"({"kind":"List","items":[{"kind":"Node","metadata":{"name":"n1"}},{"kind":"Pod"}]})";
  for (size_t n = 0; n + 1 < json.size(); ++n) {
    EXPECT_FALSE(decode_objects_json(json.substr(0, n)).ok()) << json.substr(0, n);
  }
}

TEST(ObjectSetTest, AppendMovesEverything) {
  ObjectSet a, b;
  a.nodes.resize(1);
  a.node_json.push_back("{}");
  a.skipped_items = 1;
  b.nodes.resize(2);
  b.node_json = {"{1}", "{2}"};
  b.pods.resize(3);
  b.quotas.resize(1);
  b.skipped_items = 2;
  a.append(std::move(b));
  EXPECT_EQ(a.nodes.size(), 3u);
  EXPECT_EQ(a.node_json, (std::vector<std::string>{"{}", "{1}", "{2}"}));
  EXPECT_EQ(a.pods.size(), 3u);
  EXPECT_EQ(a.quotas.size(), 1u);
  EXPECT_EQ(a.skipped_items, 3);
}

}  // namespace
}  // namespace hamisim::model
