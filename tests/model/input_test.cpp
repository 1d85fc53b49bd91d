// model/input.h: the one place that unwraps a List or ConfigMap around a flag's document and
// judges the kinds of a cluster dump.

#include "model/input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hamisim::model {
namespace {

using ::testing::HasSubstr;

const DocumentSpec kScheduler{"--scheduler-config",
                              {"KubeSchedulerConfiguration"},
                              "a KubeSchedulerConfiguration",
                              {"scheduler-config.yaml", "config.yaml"}};
const DocumentSpec kPriorities{"--priority-config", {}, "the priorities", {"priorities"}};

constexpr const char* kConfig =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

TEST(UnwrapDocument, TheBareDocumentIsReturnedUnchangedSoLineNumbersStay) {
  auto doc = unwrap_document(kConfig, "a.yaml", "", kScheduler);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_EQ(doc->text, kConfig);
  EXPECT_EQ(doc->source, "a.yaml");
}

TEST(UnwrapDocument, AConfigMapGivesTheKeyTheFlagExpects) {
  const std::string cm = std::string("kind: ConfigMap\nmetadata: {name: x}\ndata:\n  other: hi\n") +
                         "  config.yaml: |\n    apiVersion: kubescheduler.config.k8s.io/v1\n" +
                         "    kind: KubeSchedulerConfiguration\n";
  auto doc = unwrap_document(cm, "cm.yaml", "", kScheduler);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_EQ(doc->source, "cm.yaml:config.yaml");
  EXPECT_THAT(doc->text, HasSubstr("kind: KubeSchedulerConfiguration"));
}

TEST(UnwrapDocument, AConfigMapKeyOfTheWrongKindIsRefused) {
  auto doc = unwrap_document("kind: ConfigMap\ndata:\n  config.yaml: 'kind: Pod'\n", "cm.yaml", "",
                             kScheduler);
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.error().message, HasSubstr("cm.yaml:config.yaml: kind \"Pod\""));
}

TEST(UnwrapDocument, AKindlessDocumentGivenSomethingWithAKindIsRefused) {
  auto doc = unwrap_document(kConfig, "p.yaml", "", kPriorities);
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.error().message, HasSubstr("p.yaml: kind \"KubeSchedulerConfiguration\""));
}

TEST(UnwrapDocument, AListItemOfAnotherKindIsNamedByIndexAndName) {
  auto doc = unwrap_document("kind: List\nitems:\n- kind: Service\n  metadata: {name: web}\n",
                             "l.yaml", "", kScheduler);
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.error().message, HasSubstr("l.yaml: items[0] (Service \"web\")"));
}

TEST(UnwrapDocument, EmptyInputIsRefused) {
  auto doc = unwrap_document("# only a comment\n", "e.yaml", "", kScheduler);
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.error().message, HasSubstr("e.yaml: empty"));
}

TEST(UnwrapDocument, AKeyGivenForSomethingThatIsNotAConfigMapIsRefused) {
  auto doc = unwrap_document(kConfig, "a.yaml", "x", kScheduler);
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.error().message, HasSubstr("a.yaml:x names a ConfigMap key"));
}

TEST(CheckStdinOnce, TwoFlagsOnStandardInputAreRefusedNamingBoth) {
  auto st = check_stdin_once({{"--pod", "-"}, {"--node", "n.yaml"}, {"--cluster", "-"}});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr("--cluster and --pod"));
  EXPECT_TRUE(check_stdin_once({{"--pod", "-"}, {"--node", "n.yaml"}}).ok());
}

TEST(CheckSkippedItems, KubernetesKindsAndCustomResourcesAreWarningsTyposAreErrors) {
  const ObjectKinds kinds{"--cluster", {}, {}, {}};
  auto ok = check_skipped_items({{"f: items[0]", "Event", "v1", "e", "default"},
                                 {"f: items[1]", "Event", "v1", "e2", "default"},
                                 {"f: items[2]", "Widget", "example.com/v1", "w", ""}},
                                kinds);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  ASSERT_EQ(ok->lines.size(), 2u);
  EXPECT_THAT(ok->lines[0], HasSubstr("skipped 2 Event(s)"));
  auto typo = check_skipped_items({{"f: items[0]", "Nod", "v1", "a100", ""}}, kinds);
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(typo.error().message, HasSubstr("f: items[0] (Nod \"a100\"): unknown kind"));
  auto config = check_skipped_items({{"f", "NodeGroups", "hamisim.io/v1", "", ""}}, kinds);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.error().message, HasSubstr("read by --node-groups"));
  auto nokind = check_skipped_items({{"f: items[0]", "", "", "x", ""}}, kinds);
  ASSERT_FALSE(nokind.ok());
}

TEST(CheckSkippedItems, OtherFilesOfADirectoryAreSkippedWithAWarningButNotNamedFiles) {
  const ObjectKinds kinds{"--cluster-snapshot", {}, {}, {}};
  auto in_dir = check_skipped_items({{"", "", "", "", ""}}, kinds, "live/bind-1.json", true);
  ASSERT_TRUE(in_dir.ok()) << in_dir.error().message;
  ASSERT_EQ(in_dir->lines.size(), 1u);
  EXPECT_THAT(in_dir->lines[0], HasSubstr("skipped live/bind-1.json: not a Kubernetes object"));
  auto named = check_skipped_items({{"", "", "", "", ""}}, kinds, "live/bind-1.json", false);
  EXPECT_FALSE(named.ok());
  auto list_item =
      check_skipped_items({{"items[0]", "Nod", "v1", "", ""}}, kinds, "d/c.yaml", true);
  EXPECT_FALSE(list_item.ok());
}

// resource.k8s.io's fifth kind (v1alpha3 from 1.33, v1beta2 from 1.36, v1 from 1.37) is a
// Kubernetes kind, not a typo: skipped with a warning by a flag that does not read DRA objects.
// (One that does reads it: DeviceTaintRules are on by default from 1.37, docs/dra.md.)
TEST(CheckSkippedItems, DeviceTaintRulesAreSkippedWithAWarning) {
  const ObjectKinds kinds{"--cluster", {.dra = false}, {}, {}};
  auto r = check_skipped_items(
      {{"f: items[0]", "DeviceTaintRule", "resource.k8s.io/v1alpha3", "r", ""}}, kinds);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->lines.size(), 1u);
  EXPECT_THAT(r->lines[0], HasSubstr("skipped 1 DeviceTaintRule"));
}

TEST(CheckSkippedItems, ANodeGivenToAPodsFlagIsRefused) {
  const ObjectKinds pods{"--pods", {.nodes = false, .pods = true, .quotas = false}, {}, {}};
  auto r = check_skipped_items({{"f: items[0]", "Node", "v1", "n1", ""}}, pods);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("kind Node is not for --pods"));
}

TEST(DecodeObjects, SkippedItemsAreListedWithPathKindAndName) {
  auto set = decode_objects_json(
      R"({"kind":"List","items":[{"kind":"Node","metadata":{"name":"n"}},)"
      R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"d"}}]})",
      DecodeKinds{.nodes = false});
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->skipped.size(), 2u);
  EXPECT_EQ(set->skipped[0].path, "items[0]");
  EXPECT_EQ(set->skipped[0].kind, "Node");
  EXPECT_EQ(set->skipped[1].name, "s");
  EXPECT_EQ(set->skipped[1].namespace_, "d");
  EXPECT_EQ(set->skipped[1].api_version, "v1");
}

}  // namespace
}  // namespace hamisim::model
