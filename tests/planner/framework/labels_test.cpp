// Label selectors and node selectors (apimachinery labels.Selector semantics).
// Reference: kubernetes.io/docs/concepts/overview/working-with-objects/labels/ and
// kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/ (operators).

#include "planner/framework/labels.h"

#include <gtest/gtest.h>

#include "framework_test_support.h"

namespace hamisim::planner::framework {
namespace {

using testing::expr;
using testing::NodeBuilder;

// A nil LabelSelector selects nothing; an empty one selects everything.
TEST(Selector, NilMatchesNothingEmptyMatchesEverything) {
  auto nil = Selector::from_label_selector(nullptr);
  ASSERT_TRUE(nil.ok());
  EXPECT_FALSE(nil->matches({}));
  EXPECT_FALSE(nil->matches({{"a", "b"}}));
  model::LabelSelector empty_sel;
  auto empty = Selector::from_label_selector(&empty_sel);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->matches({}));
  EXPECT_TRUE(empty->empty());
  EXPECT_FALSE(nil->empty());
}

// matchLabels and matchExpressions are ANDed; NotIn and DoesNotExist match absent keys.
TEST(Selector, OperatorsAndAbsentKeys) {
  model::LabelSelector s;
  s.match_labels = {{"app", "web"}};
  s.match_expressions = {{"tier", "NotIn", {"db"}}, {"canary", "DoesNotExist", {}}};
  auto sel = Selector::from_label_selector(&s);
  ASSERT_TRUE(sel.ok());
  EXPECT_TRUE(sel->matches({{"app", "web"}}));
  EXPECT_TRUE(sel->matches({{"app", "web"}, {"tier", "fe"}}));
  EXPECT_FALSE(sel->matches({{"app", "web"}, {"tier", "db"}}));
  EXPECT_FALSE(sel->matches({{"app", "web"}, {"canary", ""}}));
  EXPECT_FALSE(sel->matches({{"app", "api"}}));
}

// Invalid selectors are errors: unknown operator, In without values, Exists with values,
// Gt in a pod label selector (node selectors only).
TEST(Selector, InvalidSelectorsAreErrors) {
  for (auto e : {model::LabelSelectorRequirement{"a", "Like", {"x"}},
                 model::LabelSelectorRequirement{"a", "In", {}},
                 model::LabelSelectorRequirement{"a", "Exists", {"x"}},
                 model::LabelSelectorRequirement{"a", "Gt", {"1"}},
                 model::LabelSelectorRequirement{"bad key!", "Exists", {}}}) {
    model::LabelSelector s;
    s.match_expressions = {e};
    EXPECT_FALSE(Selector::from_label_selector(&s).ok()) << e.op;
  }
}

// Gt/Lt parse both sides as base-10 int64 (strconv.ParseInt): a non-integer requirement
// value makes the term invalid, a non-integer node label makes it not match.
TEST(Requirement, GtLtWithNonIntegerValues) {
  EXPECT_FALSE(Requirement::make("n", SelectorOp::kGt, {"1.5"}).ok());
  EXPECT_FALSE(Requirement::make("n", SelectorOp::kGt, {"1", "2"}).ok());
  EXPECT_FALSE(Requirement::make("n", SelectorOp::kLt, {"abc"}).ok());
  auto gt = Requirement::make("n", SelectorOp::kGt, {"5"});
  ASSERT_TRUE(gt.ok());
  EXPECT_TRUE(gt->matches({{"n", "6"}}));
  EXPECT_FALSE(gt->matches({{"n", "5"}}));
  EXPECT_FALSE(gt->matches({{"n", "6.0"}}));
  EXPECT_FALSE(gt->matches({{"n", "1e3"}}));
  EXPECT_FALSE(gt->matches({}));
  EXPECT_TRUE(gt->matches({{"n", "0010"}}));
  auto lt = Requirement::make("n", SelectorOp::kLt, {"0"});
  ASSERT_TRUE(lt.ok());
  EXPECT_FALSE(lt->matches({{"n", "0"}}));
  // Negative numbers are not valid label values, so they cannot be requirement values.
  EXPECT_FALSE(Requirement::make("n", SelectorOp::kLt, {"-1"}).ok());
}

TEST(ParseInt64, MatchesGoParseInt) {
  EXPECT_EQ(parse_int64("42"), 42);
  EXPECT_EQ(parse_int64("+7"), 7);
  EXPECT_EQ(parse_int64("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(parse_int64("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parse_int64("9223372036854775808"), std::nullopt);
  EXPECT_EQ(parse_int64(""), std::nullopt);
  EXPECT_EQ(parse_int64("-"), std::nullopt);
  EXPECT_EQ(parse_int64("1_000"), std::nullopt);
  EXPECT_EQ(parse_int64(" 1"), std::nullopt);
}

TEST(QualifiedName, PrefixAndName) {
  EXPECT_TRUE(is_qualified_name("app"));
  EXPECT_TRUE(is_qualified_name("kubernetes.io/hostname"));
  EXPECT_TRUE(is_qualified_name("a.b-c/X_y.z"));
  EXPECT_FALSE(is_qualified_name("/x"));
  EXPECT_FALSE(is_qualified_name("A.com/x"));
  EXPECT_FALSE(is_qualified_name("a/b/c"));
  EXPECT_FALSE(is_qualified_name("-x"));
  EXPECT_FALSE(is_qualified_name(std::string(64, 'a')));
}

// Node selector terms are ORed; an empty term matches nothing; an invalid term is dropped
// (matches nothing) while valid terms still match.
TEST(NodeSelectorMatcher, TermsOredInvalidAndEmptyTermsMatchNothing) {
  model::Node node = NodeBuilder("n1").label("disk", "ssd");
  model::NodeSelector ns;
  ns.terms.push_back({});                              // empty
  ns.terms.push_back({{expr("n", "Gt", {"x"})}, {}});  // invalid
  auto only_bad = NodeSelectorMatcher::compile(ns);
  EXPECT_FALSE(only_bad.matches(node));
  EXPECT_TRUE(only_bad.parse_error().has_value());
  ns.terms.push_back({{expr("disk", "In", {"ssd", "nvme"})}, {}});
  EXPECT_TRUE(NodeSelectorMatcher::compile(ns).matches(node));
}

// matchFields supports metadata.name with In/NotIn and exactly one value.
TEST(NodeSelectorMatcher, MatchFieldsOnMetadataName) {
  model::Node node = NodeBuilder("n1");
  auto compile_fields = [](model::NodeSelectorRequirement r) {
    model::NodeSelector ns;
    ns.terms.push_back({{}, {std::move(r)}});
    return NodeSelectorMatcher::compile(ns);
  };
  EXPECT_TRUE(compile_fields(expr("metadata.name", "In", {"n1"})).matches(node));
  EXPECT_FALSE(compile_fields(expr("metadata.name", "In", {"n2"})).matches(node));
  EXPECT_TRUE(compile_fields(expr("metadata.name", "NotIn", {"n2"})).matches(node));
  EXPECT_FALSE(compile_fields(expr("metadata.name", "In", {"n1", "n2"})).matches(node));
  EXPECT_FALSE(compile_fields(expr("metadata.uid", "In", {"n1"})).matches(node));
  EXPECT_FALSE(compile_fields(expr("metadata.name", "Exists")).matches(node));
}

}  // namespace
}  // namespace hamisim::planner::framework
