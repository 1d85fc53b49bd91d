// ObjectSet::dra_objects: items of the resource.k8s.io kinds kept as JSON when
// DecodeKinds::dra asks for them, skipped as any other kind when it does not.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/decode.h"
#include "model/input.h"

namespace hamisim::model {
namespace dra_objects_test {

using ::testing::HasSubstr;

constexpr DecodeKinds kWithDra{.dra = true};

// Parses `json` on its own, as the DRA layer will.
bool parses(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  return parser.parse(json).get(root) == simdjson::SUCCESS && root.is_object();
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hamisim-dra-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A cluster dump as `kubectl get nodes,pods,resourceslices,deviceclasses -o json` prints it.
constexpr std::string_view kMixedList = R"({
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-node-1"}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer"},
     "spec": {"containers": [{"name": "c"}],
              "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
     "metadata": {"name": "gpu-node-1-gpu.example.com-abcde"},
     "spec": {"driver": "gpu.example.com", "nodeName": "gpu-node-1",
              "pool": {"name": "gpu-node-1", "generation": 1, "resourceSliceCount": 1},
              "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a 100"}}}]}},
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-node-2"}},
    {"apiVersion": "resource.k8s.io/v1beta1", "kind": "DeviceClass",
     "metadata": {"name": "gpu.example.com"},
     "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}]}}
  ]
})";

constexpr std::string_view kSliceMinified =
    R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",)"
    R"("metadata":{"name":"gpu-node-1-gpu.example.com-abcde"},)"
    R"("spec":{"driver":"gpu.example.com","nodeName":"gpu-node-1",)"
    R"("pool":{"name":"gpu-node-1","generation":1,"resourceSliceCount":1},)"
    R"("devices":[{"name":"gpu-0","attributes":{"model":{"string":"a 100"}}}]}})";

constexpr std::string_view kClassMinified =
    R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"DeviceClass",)"
    R"("metadata":{"name":"gpu.example.com"},)"
    R"("spec":{"selectors":[{"cel":{"expression":"device.driver == \"gpu.example.com\""}}]}})";

void expect_mixed_list(const ObjectSet& set) {
  ASSERT_EQ(set.nodes.size(), 2u);
  EXPECT_EQ(set.nodes[0].metadata.name, "gpu-node-1");
  EXPECT_EQ(set.nodes[1].metadata.name, "gpu-node-2");
  ASSERT_EQ(set.pods.size(), 1u);
  EXPECT_EQ(set.pods[0].spec.resource_claims.at(0).name, "gpu");
  EXPECT_EQ(set.skipped_items, 0);
  EXPECT_TRUE(set.skipped.empty());
  ASSERT_EQ(set.dra_objects.size(), 2u);
  const RawObject& slice = set.dra_objects[0];
  EXPECT_EQ(slice.path, "items[2]");
  EXPECT_EQ(slice.kind, "ResourceSlice");
  EXPECT_EQ(slice.api_version, "resource.k8s.io/v1");
  EXPECT_EQ(slice.json, kSliceMinified);
  EXPECT_TRUE(parses(slice.json)) << slice.json;
  const RawObject& device_class = set.dra_objects[1];
  EXPECT_EQ(device_class.path, "items[4]");
  EXPECT_EQ(device_class.kind, "DeviceClass");
  EXPECT_EQ(device_class.api_version, "resource.k8s.io/v1beta1");
  EXPECT_EQ(device_class.json, kClassMinified);
  EXPECT_TRUE(parses(device_class.json)) << device_class.json;
}

TEST(DraObjectsTest, JsonListKeepsDraItemsBesideDecodedNodesAndPods) {
  auto set = decode_objects_json(kMixedList, kWithDra);
  ASSERT_TRUE(set.ok()) << set.error().message;
  expect_mixed_list(*set);
}

TEST(DraObjectsTest, YamlDocumentsKeepDraItemsBesideDecodedNodesAndPods) {
  auto set = decode_objects(R"(apiVersion: v1
kind: Node
metadata: {name: gpu-node-1}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  containers: [{name: c}]
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: one-gpu
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: gpu-node-1-gpu.example.com-abcde
spec:
  driver: gpu.example.com
  nodeName: gpu-node-1
  pool: {name: gpu-node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      model: {string: a 100}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-node-2}
---
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
)",
                            kWithDra);
  ASSERT_TRUE(set.ok()) << set.error().message;
  expect_mixed_list(*set);
}

TEST(DraObjectsTest, WithoutDraTheyAreSkippedAsBefore) {
  for (const DecodeKinds& kinds : {DecodeKinds{}, DecodeKinds{.dra = false}}) {
    auto set = decode_objects_json(kMixedList, kinds);
    ASSERT_TRUE(set.ok()) << set.error().message;
    EXPECT_EQ(set->nodes.size(), 2u);
    EXPECT_EQ(set->pods.size(), 1u);
    EXPECT_TRUE(set->dra_objects.empty());
    EXPECT_EQ(set->skipped_items, 2);
    ASSERT_EQ(set->skipped.size(), 2u);
    EXPECT_EQ(set->skipped[0].path, "items[2]");
    EXPECT_EQ(set->skipped[0].kind, "ResourceSlice");
    EXPECT_EQ(set->skipped[0].api_version, "resource.k8s.io/v1");
    EXPECT_EQ(set->skipped[0].name, "gpu-node-1-gpu.example.com-abcde");
    EXPECT_EQ(set->skipped[1].path, "items[4]");
    EXPECT_EQ(set->skipped[1].kind, "DeviceClass");
  }
}

TEST(DraObjectsTest, EveryKindAndVersionIsKept) {
  std::string items;
  int n = 0;
  for (const char* version : {"v1", "v1beta2", "v1beta1", "v1alpha3"}) {
    for (const char* kind :
         {"ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate"}) {
      EXPECT_TRUE(is_dra_kind(std::string("resource.k8s.io/") + version, kind));
      if (n++ > 0) items += ",";
      items += std::string(R"({"apiVersion":"resource.k8s.io/)") + version + R"(","kind":")" +
               kind + R"("})";
    }
  }
  auto set = decode_objects_json("[" + items + "]", kWithDra);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->dra_objects.size(), 16u);
  EXPECT_EQ(set->skipped_items, 0);
  EXPECT_EQ(set->dra_objects[15].path, "[15]");
  EXPECT_EQ(set->dra_objects[15].kind, "ResourceClaimTemplate");
  EXPECT_EQ(set->dra_objects[15].api_version, "resource.k8s.io/v1alpha3");
}

TEST(DraObjectsTest, OtherVersionsKindsAndGroupsAreStillSkipped) {
  EXPECT_FALSE(is_dra_kind("resource.k8s.io/v2", "ResourceSlice"));
  EXPECT_TRUE(is_dra_kind("resource.k8s.io/v1", "DeviceTaintRule"));  // read from 1.37
  EXPECT_FALSE(is_dra_kind("resource.k8s.io/v1", "DeviceTaintRuleStatus"));
  EXPECT_FALSE(is_dra_kind("example.com/v1", "ResourceClaim"));
  EXPECT_FALSE(is_dra_kind("", "ResourceClaim"));
  EXPECT_FALSE(is_dra_kind("resource.k8s.io/v1", "resourceslice"));
  auto set = decode_objects_json(R"({"kind":"List","items":[
      {"apiVersion":"resource.k8s.io/v2","kind":"ResourceSlice"},
      {"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule"},
      {"apiVersion":"example.com/v1","kind":"ResourceClaim"},
      {"kind":"ResourceClaim"},
      {"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim"}]})",
                                 kWithDra);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->skipped_items, 3);
  ASSERT_EQ(set->dra_objects.size(), 2u);
  EXPECT_EQ(set->dra_objects[0].path, "items[1]");  // the DeviceTaintRule
  EXPECT_EQ(set->dra_objects[1].path, "items[4]");
}

TEST(DraObjectsTest, TypedListItemsTakeKindAndApiVersionFromTheList) {
  auto set = decode_objects_json(R"({"apiVersion":"resource.k8s.io/v1beta2",
      "kind":"ResourceSliceList","metadata":{"resourceVersion":"7"},
      "items":[{"metadata":{"name":"s1"},"spec":{"driver":"d"}},{},
               {"apiVersion":"resource.k8s.io/v1","metadata":{"name":"s3"}}]})",
                                 kWithDra);
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->dra_objects.size(), 3u);
  EXPECT_EQ(set->dra_objects[0].kind, "ResourceSlice");
  EXPECT_EQ(set->dra_objects[0].api_version, "resource.k8s.io/v1beta2");
  EXPECT_EQ(set->dra_objects[0].json,
            R"({"metadata":{"name":"s1"},"spec":{"driver":"d"},)"
            R"("kind":"ResourceSlice","apiVersion":"resource.k8s.io/v1beta2"})");
  EXPECT_EQ(set->dra_objects[1].json,
            R"({"kind":"ResourceSlice","apiVersion":"resource.k8s.io/v1beta2"})");
  // An item's own apiVersion stays (and is not written twice).
  EXPECT_EQ(set->dra_objects[2].api_version, "resource.k8s.io/v1");
  EXPECT_EQ(
      set->dra_objects[2].json,
      R"({"apiVersion":"resource.k8s.io/v1","metadata":{"name":"s3"},"kind":"ResourceSlice"})");
  for (const RawObject& o : set->dra_objects) EXPECT_TRUE(parses(o.json)) << o.json;

  // Without dra, the list's items are skipped as before, with no apiVersion of their own.
  auto skipped = decode_objects_json(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSliceList","items":[{}]})");
  ASSERT_TRUE(skipped.ok()) << skipped.error().message;
  ASSERT_EQ(skipped->skipped.size(), 1u);
  EXPECT_EQ(skipped->skipped[0].kind, "ResourceSlice");
  EXPECT_EQ(skipped->skipped[0].api_version, "");
}

// What the items mean here is what their JSON means alone: an empty kind or apiVersion of
// their own is overridden by the list's, written after it (Go's last key wins).
TEST(DraObjectsTest, KeptJsonReadAloneIsKeptAgainAsItself) {
  auto set = decode_objects_json(R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClassList",
      "items":[{"kind":"","apiVersion":""},{"apiVersion":7},{"kind":null,"spec":{}}]})",
                                 kWithDra);
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->dra_objects.size(), 3u);
  EXPECT_EQ(
      set->dra_objects[0].json,
      R"({"kind":"","apiVersion":"","kind":"DeviceClass","apiVersion":"resource.k8s.io/v1"})");
  for (const RawObject& o : set->dra_objects) {
    auto again = decode_objects_json(o.json, kWithDra);
    ASSERT_TRUE(again.ok()) << again.error().message;
    ASSERT_EQ(again->dra_objects.size(), 1u) << o.json;
    EXPECT_EQ(again->dra_objects[0].json, o.json);
    EXPECT_EQ(again->dra_objects[0].kind, "DeviceClass");
    EXPECT_EQ(again->dra_objects[0].api_version, "resource.k8s.io/v1");
  }
}

// The decoder checks only the structure of what it does not read; a kept item must be JSON,
// or minifying would change it (`[1 2]` into `[12]`).
TEST(DraObjectsTest, AKeptItemMustBeValidJson) {
  const std::string json = R"({"kind":"List","items":[{"kind":"Node"},
      {"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","spec":{"x":[1 2]}}]})";
  auto set = decode_objects_json(json, kWithDra);
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.error().message, ::testing::StartsWith("items[1]: invalid JSON: "));
  EXPECT_TRUE(decode_objects_json(json).ok());  // skipped, as any other item it does not read
}

TEST(DraObjectsTest, ALoneObjectIsKeptWithoutWhatFollowsIt) {
  auto set = decode_objects_json(
      "  {\"apiVersion\": \"resource.k8s.io/v1\",\n \"kind\": \"DeviceClass\"}\n  {\"more\":1}",
      kWithDra);
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->dra_objects.size(), 1u);
  EXPECT_EQ(set->dra_objects[0].path, "");
  EXPECT_EQ(set->dra_objects[0].json,
            R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass"})");
}

TEST(DraObjectsTest, StringsKeepTheirSpacesAndEscapes) {
  auto set = decode_objects_json(R"([{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",
      "metadata":{"name":"a b\t\"c\" \u00e9"}}])",
                                 kWithDra);
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->dra_objects.size(), 1u);
  EXPECT_EQ(set->dra_objects[0].json, R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",)"
                                      R"("metadata":{"name":"a b\t\"c\" \u00e9"}})");
}

TEST(DraObjectsTest, AppendMovesThem) {
  ObjectSet a, b;
  a.dra_objects.push_back({"a.yaml", "DeviceClass", "resource.k8s.io/v1", "{}"});
  b.dra_objects.push_back({"b.yaml: items[0]", "ResourceSlice", "resource.k8s.io/v1", "{}"});
  b.dra_objects.push_back({"b.yaml: items[1]", "ResourceClaim", "resource.k8s.io/v1", "{}"});
  a.append(std::move(b));
  ASSERT_EQ(a.dra_objects.size(), 3u);
  EXPECT_EQ(a.dra_objects[1].path, "b.yaml: items[0]");
  EXPECT_EQ(a.dra_objects[2].kind, "ResourceClaim");
  EXPECT_TRUE(b.dra_objects.empty());
}

// ---- files ----

constexpr std::string_view kSliceYaml = R"(apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec: {driver: d, allNodes: true, pool: {name: p, generation: 1, resourceSliceCount: 1}}
)";

TEST(DraObjectsTest, LoadObjectsPrefixesPathsWithTheFile) {
  TempDir dir;
  dir.write("a-nodes.json", R"({"kind":"List","items":[{"kind":"Node","metadata":{"name":"n"}},
      {"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"c"}}]})");
  const std::string slice = dir.write("b-slice.yaml", std::string(kSliceYaml));
  auto set = load_objects(dir.path(), kWithDra);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->nodes.size(), 1u);
  ASSERT_EQ(set->dra_objects.size(), 2u);
  EXPECT_EQ(set->dra_objects[0].path, dir.path() + "/a-nodes.json: items[1]");
  EXPECT_EQ(set->dra_objects[0].kind, "DeviceClass");
  EXPECT_EQ(set->dra_objects[1].path, slice);  // a lone object: the file is its path
  EXPECT_EQ(set->dra_objects[1].kind, "ResourceSlice");
  EXPECT_TRUE(parses(set->dra_objects[1].json)) << set->dra_objects[1].json;
}

TEST(DraObjectsTest, CheckedLoadKeepsThemWithoutWarnings) {
  TempDir dir;
  const std::string slice = dir.write("slice.yaml", std::string(kSliceYaml));
  std::vector<std::string> warnings;
  auto set = load_checked_objects(slice, {"--cluster", kWithDra, {}, {}}, warnings);
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->dra_objects.size(), 1u);
  EXPECT_EQ(set->dra_objects[0].path, slice);
  EXPECT_TRUE(warnings.empty());

  // A flag that does not read them skips them with a warning, as before.
  auto without = load_checked_objects(slice, {"--cluster", {}, {}, {}}, warnings);
  ASSERT_TRUE(without.ok()) << without.error().message;
  EXPECT_TRUE(without->dra_objects.empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("skipped 1 ResourceSlice"));
}

TEST(DraObjectsTest, CheckedLoadRefusesADraKindInAVersionItDoesNotRead) {
  TempDir dir;
  const std::string file = dir.write("slices.json", R"({"kind":"List","items":[
      {"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"ok"}},
      {"apiVersion":"resource.k8s.io/v2","kind":"ResourceSlice","metadata":{"name":"s"}}]})");
  std::vector<std::string> warnings;
  auto set = load_checked_objects(file, {"--cluster", kWithDra, {}, {}}, warnings);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message,
            file +
                ": items[1] (ResourceSlice \"s\"): apiVersion \"resource.k8s.io/v2\"; --cluster "
                "reads ResourceSlice in resource.k8s.io/v1, v1beta2, v1beta1 and v1alpha3");

  const std::string no_version =
      dir.write("claim.yaml", "kind: ResourceClaim\nmetadata: {name: c}\n");
  auto unversioned = load_checked_objects(no_version, {"--cluster", kWithDra, {}, {}}, warnings);
  ASSERT_FALSE(unversioned.ok());
  EXPECT_THAT(unversioned.error().message, HasSubstr("(ResourceClaim \"c\"): no apiVersion"));

  // Messages name what the flag reads.
  auto typo = check_skipped_items({{"f: items[0]", "ResourceSlise", "resource.k8s.io/v1", "", ""}},
                                  {"--cluster", kWithDra, {}, {}});
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(
      typo.error().message,
      HasSubstr("--cluster reads Nodes, Pods, ResourceQuotas, DRA objects (resource.k8s.io)"));

  // Another group's kind of the same name is a custom resource: skipped with a warning.
  const std::string custom = dir.write(
      "custom.yaml", "apiVersion: example.com/v1\nkind: ResourceClaim\nmetadata: {name: c}\n");
  warnings.clear();
  auto cr = load_checked_objects(custom, {"--cluster", kWithDra, {}, {}}, warnings);
  ASSERT_TRUE(cr.ok()) << cr.error().message;
  EXPECT_EQ(warnings.size(), 1u);
}

}  // namespace dra_objects_test
}  // namespace hamisim::model
