// CA's expanders and chains (ca-scale-up.md §4.6; the price expander's GPU rule §4.9).

#include "planner/expander/expander.h"

#include <gtest/gtest.h>

#include "framework_test_support.h"

namespace hamisim::planner::expander {
namespace {

using framework::PodInfo;
using framework::testing::NodeBuilder;
using framework::testing::PodBuilder;
using framework::testing::res;

// A template whose capacity and allocatable are both cpu / mem / 110 pods.
model::Node tmpl(const std::string& cpu, const std::string& mem) {
  model::Node n =
      NodeBuilder("t").allocatable(res({{"cpu", cpu}, {"memory", mem}, {"pods", "110"}}));
  n.status.capacity = n.status.allocatable;
  return n;
}

Option option(std::string group, int64_t nodes, int pods, const std::string& pod_cpu,
              const std::string& pod_mem, std::optional<model::Node> t) {
  Option o;
  o.node_group = std::move(group);
  o.node_count = nodes;
  for (int i = 0; i < pods; ++i) {
    o.pods.push_back(PodInfo::make(PodBuilder("p" + std::to_string(i))
                                       .container(res({{"cpu", pod_cpu}, {"memory", pod_mem}}))));
  }
  o.template_node = std::move(t);
  return o;
}

std::vector<std::string> groups(const std::vector<Option>& options) {
  std::vector<std::string> out;
  for (const auto& o : options) out.push_back(o.node_group);
  return out;
}

// §4.6 least-waste: wasted cpu share + wasted memory share on template capacity × nodes.
TEST(LeastWaste, ScoreIsWastedCpuPlusMemoryShareOfCapacity) {
  Option o = option("a", 2, 3, "1", "1Gi", tmpl("4", "8Gi"));
  // cpu: (8000-3000)/8000 = 0.625; memory: (16Gi-3Gi)/16Gi = 0.8125.
  EXPECT_DOUBLE_EQ(*LeastWaste::waste_score(o), 0.625 + 0.8125);
}

// §4.6 least-waste: capacity, not allocatable.
TEST(LeastWaste, UsesCapacityNotAllocatable) {
  model::Node t = tmpl("4", "8Gi");
  t.status.allocatable = res({{"cpu", "2"}, {"memory", "4Gi"}});
  Option o = option("a", 1, 2, "1", "2Gi", t);
  EXPECT_DOUBLE_EQ(*LeastWaste::waste_score(o), 0.5 + 0.5);
}

// §4.6 least-waste: the minimum wins, exact ties are all kept in input order, options
// without a template are skipped.
TEST(LeastWaste, KeepsAllMinimumScoresAndSkipsOptionsWithoutTemplate) {
  Warnings w;
  std::vector<Option> in = {option("big", 1, 1, "1", "1Gi", tmpl("16", "64Gi")),
                            option("fit1", 1, 4, "1", "2Gi", tmpl("4", "8Gi")),
                            option("none", 1, 4, "1", "2Gi", std::nullopt),
                            option("fit2", 2, 8, "1", "2Gi", tmpl("4", "8Gi"))};
  EXPECT_EQ(groups(LeastWaste().best_options(in, w)), (std::vector<std::string>{"fit1", "fit2"}));
}

// §4.6 most-pods.
TEST(MostPods, KeepsOptionsWithMostPods) {
  Warnings w;
  std::vector<Option> in = {option("a", 1, 2, "1", "1Gi", tmpl("4", "8Gi")),
                            option("b", 1, 3, "1", "1Gi", tmpl("4", "8Gi")),
                            option("c", 3, 3, "1", "1Gi", tmpl("4", "8Gi"))};
  EXPECT_EQ(groups(MostPods().best_options(in, w)), (std::vector<std::string>{"b", "c"}));
}

// §4.6 least-nodes: the smallest positive node count; 0-node options ignored.
TEST(LeastNodes, KeepsSmallestPositiveNodeCount) {
  Warnings w;
  std::vector<Option> in = {option("zero", 0, 2, "1", "1Gi", tmpl("4", "8Gi")),
                            option("two", 2, 3, "1", "1Gi", tmpl("4", "8Gi")),
                            option("one", 1, 3, "1", "1Gi", tmpl("4", "8Gi"))};
  EXPECT_EQ(groups(LeastNodes().best_options(in, w)), (std::vector<std::string>{"one"}));
}

// §4.6 random: one pick; the same seed gives the same picks.
TEST(RandomExpander, SeededPickIsDeterministic) {
  std::vector<Option> in;
  for (int i = 0; i < 10; ++i) in.push_back(option("g" + std::to_string(i), 1, 1, "1", "1Gi", {}));
  Warnings w;
  Random a(42), b(42);
  for (int round = 0; round < 5; ++round) {
    auto pa = a.best_options(in, w);
    auto pb = b.best_options(in, w);
    ASSERT_EQ(pa.size(), 1u);
    EXPECT_EQ(pa[0].node_group, pb[0].node_group);
  }
}

// §4.6 priority: CA's ConfigMap format, unanchored regex search on the group id, the highest
// matching priority wins, non-matching groups dropped with a warning.
TEST(PriorityExpander, HighestMatchingPriorityWins) {
  auto cfg = PriorityConfig::parse("10:\n  - .*t2\\.large.*\n50:\n  - m4\\.4xlarge\n");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  Priority p(std::move(cfg));
  Warnings w;
  std::vector<Option> in = {
      option("ng-t2.large", 1, 1, "1", "1Gi", {}), option("ng-m4.4xlarge-a", 1, 1, "1", "1Gi", {}),
      option("other", 1, 1, "1", "1Gi", {}), option("ng-m4.4xlarge-b", 1, 1, "1", "1Gi", {})};
  EXPECT_EQ(groups(p.best_options(in, w)),
            (std::vector<std::string>{"ng-m4.4xlarge-a", "ng-m4.4xlarge-b"}));
  ASSERT_EQ(w.messages.size(), 1u);
  EXPECT_NE(w.messages[0].find("other"), std::string::npos);
}

// §4.6 priority: nothing matches, or no valid config -> every option, with a warning.
TEST(PriorityExpander, NoMatchOrInvalidConfigKeepsAllOptions) {
  std::vector<Option> in = {option("a", 1, 1, "1", "1Gi", {}), option("b", 1, 1, "1", "1Gi", {})};
  Warnings w1;
  EXPECT_EQ(Priority(PriorityConfig::parse("5: [zzz]")).best_options(in, w1).size(), 2u);
  EXPECT_FALSE(w1.messages.empty());
  Warnings w2;
  EXPECT_EQ(Priority(PriorityConfig::parse("5: [\"(\"]")).best_options(in, w2).size(), 2u);
  EXPECT_FALSE(w2.messages.empty());
}

// §4.6 priority: parse errors name the line.
// Issue #26: one number grammar for every file (std::stoll read "010" as 10).
TEST(PriorityConfigParse, APriorityWithALeadingZeroIsAnError) {
  auto r = PriorityConfig::parse("10:\n  - a\n010:\n  - b\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "priority config: line 3: priority \"010\" has a leading zero (octal in YAML 1.1, "
            "decimal in YAML 1.2): write 10, or 8 for octal");
  ASSERT_TRUE(PriorityConfig::parse("-5:\n  - a\n0:\n  - b\n").ok());
}

TEST(PriorityConfigParse, ErrorsNameTheLine) {
  auto not_int = PriorityConfig::parse("10:\n  - a\nhigh:\n  - b\n");
  ASSERT_FALSE(not_int.ok());
  EXPECT_NE(not_int.error().message.find("line 3"), std::string::npos) << not_int.error().message;
  auto not_list = PriorityConfig::parse("10:\n  - a\n20: b\n");
  ASSERT_FALSE(not_list.ok());
  EXPECT_NE(not_list.error().message.find("line 3"), std::string::npos) << not_list.error().message;
  auto bad_regex = PriorityConfig::parse("10:\n  - a\n  - \"[\"\n");
  ASSERT_FALSE(bad_regex.ok());
  EXPECT_NE(bad_regex.error().message.find("line 3"), std::string::npos)
      << bad_regex.error().message;
  auto bad_yaml = PriorityConfig::parse("10: [a\n20: b\n");
  ASSERT_FALSE(bad_yaml.ok());
  EXPECT_NE(bad_yaml.error().message.find("line "), std::string::npos);
  auto not_map = PriorityConfig::parse("- a\n");
  EXPECT_FALSE(not_map.ok());
}

// Product §6.1: without --priority-config the node groups' own priorities are used, each
// matching exactly its group id (regex metacharacters in ids are literal).
TEST(PriorityConfigParse, FromNodeGroupPrioritiesMatchesExactIds) {
  auto cfg = PriorityConfig::from_node_groups({{"a.b", 5}, {"gpu(x)", 9}, {"c", 5}});
  EXPECT_EQ(cfg.priority_of("a.b"), std::optional<int64_t>(5));
  EXPECT_EQ(cfg.priority_of("axb"), std::nullopt);
  EXPECT_EQ(cfg.priority_of("gpu(x)"), std::optional<int64_t>(9));
  EXPECT_EQ(cfg.priority_of("c"), std::optional<int64_t>(5));
  EXPECT_EQ(cfg.priority_of("cc"), std::nullopt);
  ASSERT_EQ(cfg.entries.size(), 2u);
  EXPECT_EQ(cfg.entries[0].priority, 9);
}

// §4.6 price: preferred node size by cluster size.
TEST(PriceExpander, PreferredNodeCpuByClusterSize) {
  EXPECT_EQ(Price::preferred_cpu(2), 1);
  EXPECT_EQ(Price::preferred_cpu(6), 2);
  EXPECT_EQ(Price::preferred_cpu(20), 4);
  EXPECT_EQ(Price::preferred_cpu(60), 8);
  EXPECT_EQ(Price::preferred_cpu(200), 16);
  EXPECT_EQ(Price::preferred_cpu(201), 32);
}

// §4.6 price: the score formula; a preferred-size node that is cheaper wins.
TEST(PriceExpander, ScoreFormulaAndLowestWins) {
  PriceConfig cfg;
  cfg.cluster_node_count = 10;  // preferred 4 cpu
  Price price(cfg);
  Option a = option("a", 1, 2, "1", "1Gi", tmpl("4", "8Gi"));
  a.node_price = 0.2;
  const double stab = cfg.pricing.pod_price(500, 500.0 * 1024 * 1024);
  const double pods = cfg.pricing.pod_price(2000, 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*price.score(a), 1.0 * (0.2 + stab) / (pods + stab));
  Option b = option("b", 1, 2, "1", "1Gi", tmpl("16", "64Gi"));
  b.node_price = 0.2;
  // unfitness 4, suppressed (4-1)(1-tanh(0))+1 = 4.
  EXPECT_DOUBLE_EQ(*price.score(b), 4.0 * (0.2 + stab) / (pods + stab));
  a.similar_node_groups = {"x"};
  Warnings w;
  auto best = price.best_options({a, b}, w);
  ASSERT_EQ(groups(best), (std::vector<std::string>{"a"}));
  EXPECT_TRUE(best[0].similar_node_groups.empty());
}

// §4.9 / §4.6 price: a GPU template's unfitness is 1000; a group not created yet costs ×2.
TEST(PriceExpander, GpuTemplateUnfitnessAndNonExistingGroupPenalty) {
  PriceConfig cfg;
  Price price(cfg);
  model::Node gpu = tmpl("1", "8Gi");
  gpu.status.allocatable["nvidia.com/gpu"] = framework::testing::q("1");
  EXPECT_TRUE(price.node_has_gpu(gpu));
  Option g = option("gpu", 1, 1, "1", "1Gi", gpu);
  g.node_price = 1;
  Option c = option("cpu", 1, 1, "1", "1Gi", tmpl("1", "8Gi"));
  c.node_price = 1;
  EXPECT_DOUBLE_EQ(*price.score(g), 1000 * *price.score(c));
  model::Node labelled = NodeBuilder("t").label("cloud.google.com/gke-accelerator", "t4");
  EXPECT_TRUE(price.node_has_gpu(labelled));
  Option later = c;
  later.node_group_exists = false;
  EXPECT_DOUBLE_EQ(*price.score(later), 2 * *price.score(c));
}

// §4.6 chain: priority filters, least-waste breaks the tie.
TEST(ExpanderChain, PriorityThenLeastWasteBreaksTies) {
  ChainConfig cfg;
  cfg.priority = PriorityConfig::parse("10: [\"^gpu-\"]\n1: [\".*\"]\n");
  auto chain = Chain::make("priority,least-waste", std::move(cfg));
  ASSERT_TRUE(chain.ok()) << chain.error().message;
  std::vector<Option> in = {option("cpu-a", 1, 4, "1", "2Gi", tmpl("4", "8Gi")),
                            option("gpu-big", 1, 1, "1", "1Gi", tmpl("16", "64Gi")),
                            option("gpu-fit", 1, 4, "1", "2Gi", tmpl("4", "8Gi"))};
  Warnings w;
  auto best = chain->best_option(in, w);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->node_group, "gpu-fit");
}

// §4.6 chain: survivors of every filter go to the seeded random pick.
TEST(ExpanderChain, RemainingTieGoesToSeededRandom) {
  std::vector<Option> in = {option("a", 1, 4, "1", "2Gi", tmpl("4", "8Gi")),
                            option("b", 1, 4, "1", "2Gi", tmpl("4", "8Gi"))};
  std::string first;
  for (int i = 0; i < 3; ++i) {
    ChainConfig cfg;
    cfg.seed = 7;
    auto chain = Chain::make("least-waste", std::move(cfg));
    ASSERT_TRUE(chain.ok());
    Warnings w;
    auto best = chain->best_option(in, w);
    ASSERT_TRUE(best);
    if (i == 0) first = best->node_group;
    EXPECT_EQ(best->node_group, first);
  }
  Warnings w;
  EXPECT_FALSE(Chain::make("most-pods", {}).value().best_option({}, w));
}

// §4.6 chain: no repeats, nothing after a strategy, known names only.
TEST(ExpanderChain, RejectsRepeatsUnknownNamesAndAnythingAfterRandom) {
  EXPECT_FALSE(Chain::make("least-waste,least-waste", {}).ok());
  EXPECT_FALSE(Chain::make("random,least-waste", {}).ok());
  EXPECT_FALSE(Chain::make("cheapest", {}).ok());
  EXPECT_FALSE(Chain::make("priority,", {}).ok());
  EXPECT_TRUE(Chain::make("priority,most-pods,least-waste,random", {}).ok());
}

}  // namespace
}  // namespace hamisim::planner::expander
