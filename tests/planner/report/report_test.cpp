#include "planner/report/report.h"
#include "test_paths.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace hamisim::planner::report {
namespace {

using scaleup::DeviceUse;
using scaleup::GroupEvaluation;
using scaleup::Plan;
using scaleup::PlannedNode;
using scaleup::PodOutcome;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Source = nodegroups::GroupTemplate::Source;
using State = PodOutcome::State;

// ---- plans built by hand, shaped like the planner's ----

const char* const kAllocated = "hami.io/vgpu-devices-allocated";

PodOutcome placed(std::string pod, std::string node, std::string alloc) {
  PodOutcome p;
  p.pod = std::move(pod);
  p.state = PodOutcome::State::kTriggersScaleUp;
  p.node = std::move(node);
  p.allocations[kAllocated] = std::move(alloc);
  return p;
}

PlannedNode gpu_node(std::string name, std::vector<std::string> pods, int64_t used0,
                     int64_t used1) {
  PlannedNode n;
  n.name = std::move(name);
  n.group = "gpu-a100";
  n.pods = std::move(pods);
  n.cpu_requested_milli = 3500;
  n.cpu_allocatable_milli = 8000;
  n.memory_requested = int64_t{12} << 30;
  n.memory_allocatable = int64_t{64} << 30;
  const auto slots = static_cast<int64_t>(n.pods.size());
  n.devices.push_back({"GPU-0001", "NVIDIA-A100", used0, 81920, 50, 100, slots, 10});
  n.devices.push_back({"GPU-0002", "NVIDIA-A100", used1, 81920, 0, 100, 0, 10});
  return n;
}

// gpu-a100 grows 3 -> 5 for three training pods; cpu-pool rejects them; one pod fits nowhere.
Plan scale_up_plan() {
  Plan plan;
  plan.decision = Plan::Decision::kScaleUp;
  plan.summary = "scale up gpu-a100 by 2 nodes (3 -> 5): 3 pods placed on new nodes";
  plan.scale_ups.push_back({"gpu-a100", 3, 5});
  plan.warnings.push_back("expander: price: no price for node group cpu-pool");
  plan.cluster_nodes = 7;
  plan.cluster_pods = 31;
  plan.device_stage = "in-process";

  GroupEvaluation a;
  a.name = "gpu-a100";
  a.min_size = 1;
  a.max_size = 10;
  a.target_size = 3;
  a.members = 3;
  a.template_source = Source::kWarm;
  a.template_node = "template-node-for-gpu-a100-0";
  a.sample_node = "a100-node-1";
  a.device_source = "annotation";
  a.schedulable_pods = {"ml/train-0"};
  a.rejected_pods["ml/huge"] = "HAMi: 2/2 CardInsufficientMemory";
  a.estimated_nodes = 2;
  a.estimated_pods = {"ml/train-0", "ml/train-1", "ml/train-2"};
  a.option = true;
  a.chosen = true;
  a.expander_note = "least-waste score 0.1250";
  plan.groups.push_back(a);

  GroupEvaluation c;
  c.name = "cpu-pool";
  c.max_size = 20;
  c.target_size = 4;
  c.members = 4;
  c.template_source = Source::kCold;
  c.template_node = "template-node-for-cpu-pool-1";
  c.device_source = "profile";
  c.device_profile = "none";
  c.rejected_pods["ml/train-0"] = "HAMi: node unregistered";
  c.rejected_pods["ml/huge"] = "HAMi: node unregistered";
  plan.groups.push_back(c);

  plan.pods.push_back(
      placed("ml/train-0", "template-node-for-gpu-a100-0-e-0", "GPU-0001,NVIDIA,40000,50:;"));
  plan.pods.push_back(
      placed("ml/train-1", "template-node-for-gpu-a100-0-e-0", "GPU-0001,NVIDIA,20000,0:;"));
  plan.pods.push_back(
      placed("ml/train-2", "template-node-for-gpu-a100-0-e-1", "GPU-0001,NVIDIA,40000,50:;"));
  PodOutcome huge;
  huge.pod = "ml/huge";
  huge.state = PodOutcome::State::kNoScaleUpHelps;
  huge.reason = "no node group's template can take it";
  huge.group_reasons = {{"cpu-pool", "HAMi: node unregistered"},
                        {"gpu-a100", "HAMi: 2/2 CardInsufficientMemory"}};
  plan.pods.push_back(huge);

  plan.new_nodes.push_back(
      gpu_node("template-node-for-gpu-a100-0-e-0", {"ml/train-0", "ml/train-1"}, 60000, 0));
  plan.new_nodes.push_back(gpu_node("template-node-for-gpu-a100-0-e-1", {"ml/train-2"}, 40000, 0));
  return plan;
}

Plan no_scale_up_possible_plan() {
  Plan plan;
  plan.decision = Plan::Decision::kNoScaleUpPossible;
  plan.summary = "no scale-up: no node group can take any pending pod";
  plan.cluster_nodes = 2;
  plan.cluster_pods = 5;
  plan.device_stage = "extenders: hamisim";
  GroupEvaluation g;
  g.name = "gpu-t4";
  g.max_size = 2;
  g.target_size = 2;
  g.members = 2;
  g.skip_reason = "max size reached (2)";
  plan.groups.push_back(g);
  GroupEvaluation k;
  k.name = "gpu-k80";
  k.max_size = 5;
  k.template_source = Source::kCold;
  k.template_node = "template-node-for-gpu-k80-1";
  k.device_source = "profile";
  k.device_profile = "k80";
  k.rejected_pods["team/big"] = "ExtenderFilter: 2/2 CardInsufficientMemory";
  plan.groups.push_back(k);
  PodOutcome big;
  big.pod = "team/big";
  big.state = PodOutcome::State::kNoScaleUpHelps;
  big.reason = "no node group's template can take it";
  big.group_reasons["gpu-k80"] = "ExtenderFilter: 2/2 CardInsufficientMemory";
  plan.pods.push_back(big);
  PodOutcome quota;
  quota.pod = "team/over-quota";
  quota.state = PodOutcome::State::kBlocked;
  quota.reason = "device quota exceeded: limits.nvidia.com/gpumem 10000, used 9000, asks 2000";
  plan.pods.push_back(quota);
  return plan;
}

Plan no_scale_up_needed_plan() {
  Plan plan;
  plan.decision = Plan::Decision::kNoScaleUpNeeded;
  plan.summary =
      "every pending pod fits an existing node or cannot be helped by a new one: no scale-up "
      "needed";
  plan.cluster_nodes = 3;
  plan.cluster_pods = 9;
  plan.device_stage = "in-process";
  GroupEvaluation g;
  g.name = "gpu-a100";
  g.max_size = 4;
  g.target_size = 3;
  g.members = 3;
  g.template_source = Source::kWarm;
  g.template_node = "template-node-for-gpu-a100-0";
  g.sample_node = "a100-node-1";
  g.device_source = "annotation";
  plan.groups.push_back(g);
  PodOutcome p;
  p.pod = "ml/small";
  p.state = PodOutcome::State::kFitsExistingNode;
  p.node = "a100-node-2";
  plan.pods.push_back(p);
  return plan;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string line_with(const std::string& text, std::string_view needle) {
  for (const auto& l : lines_of(text)) {
    if (l.find(needle) != std::string::npos) return l;
  }
  return {};
}

size_t count(std::string_view text, std::string_view needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

// Declared here, defined with the JSON tests: a plan using every optional field.
Plan small_plan();

// scale_up_plan() compared with a CA that does not send SimulatedPods (issue #33).
Plan unpatched_plan() {
  Plan plan = scale_up_plan();
  auto u = std::make_shared<scaleup::UnpatchedCaPlan>();
  u->decision = Plan::Decision::kScaleUp;
  u->summary = "scale up gpu-a100 by 1 node (3 -> 4): 3 pods placed on new nodes";
  u->scale_ups.push_back({"gpu-a100", 3, 4});
  u->groups.push_back({"gpu-a100", 2, 1, 2, 1});
  u->groups.push_back({"cpu-pool", std::nullopt, std::nullopt, 0, 0});
  u->left_pending.push_back({"ml/train-2", "no <room>"});
  plan.unpatched_ca = std::move(u);
  return plan;
}

// ---- table ----

TEST(Table, FirstLineIsTheDecisionWithItsNumbers) {
  const std::string t = render_table(scale_up_plan());
  const std::string first = lines_of(t).at(0);
  EXPECT_THAT(first, StartsWith("Decision: "));
  EXPECT_THAT(first, HasSubstr("gpu-a100"));
  EXPECT_THAT(first, HasSubstr("3 -> 5"));
  EXPECT_THAT(first, HasSubstr("2 nodes"));
  // The scale-ups follow as aligned rows: group, current -> new, +delta.
  EXPECT_EQ(lines_of(t).at(2), "  gpu-a100  3  ->  5  +2");
}

TEST(Table, DecisionOfPlansWithoutScaleUp) {
  EXPECT_EQ(lines_of(render_table(no_scale_up_possible_plan())).at(0),
            "Decision: no scale-up: no node group can take any pending pod");
  EXPECT_THAT(lines_of(render_table(no_scale_up_needed_plan())).at(0),
              StartsWith("Decision: every pending pod fits an existing node"));
  Plan empty;
  EXPECT_EQ(lines_of(render_table(empty)).at(0), "Decision: no-scale-up-needed");
}

TEST(Table, SectionsComeInOrder) {
  const std::string t = render_table(scale_up_plan());
  const size_t warnings = t.find("Warnings (1)");
  const size_t groups = t.find("Node groups (2)");
  const size_t pods = t.find("Pending pods (4)");
  const size_t nodes = t.find("New nodes (2)");
  ASSERT_NE(warnings, std::string::npos);
  EXPECT_LT(t.find("Decision"), warnings);
  EXPECT_LT(warnings, groups);
  EXPECT_LT(groups, pods);
  EXPECT_LT(pods, nodes);
  EXPECT_THAT(t, HasSubstr("! expander: price: no price for node group cpu-pool"));
}

TEST(Table, TheUnpatchedCaComparisonFollowsTheDecision) {
  EXPECT_THAT(render_table(scale_up_plan()), Not(HasSubstr("SimulatedPods")));
  const std::string t = render_table(unpatched_plan());
  const size_t at = t.find("Compared with a Cluster Autoscaler that does not send SimulatedPods");
  ASSERT_NE(at, std::string::npos) << t;
  EXPECT_LT(t.find("Warnings (1)"), at);
  EXPECT_LT(at, t.find("Node groups (2)"));
  EXPECT_THAT(t, HasSubstr("\n  its decision: scale up gpu-a100 by 1 node (3 -> 4): 3 pods placed "
                           "on new nodes\n"
                           "  node group  estimate  its estimate  adds  it adds\n"
                           "  gpu-a100    2 nodes   1 node        +2    +1\n"
                           "  cpu-pool    -         -             0     0\n"
                           "  left pending by its decision: 1 pod\n"
                           "    ml/train-2  no <room>\n"));
}

TEST(Table, GroupsShowSizesTemplateStatusAndReasons) {
  const std::string t = render_table(scale_up_plan());
  // Header lines are aligned across groups; the chosen one is starred.
  EXPECT_EQ(line_with(t, "* gpu-a100"),
            "  * gpu-a100  min  1  max  10  target  3  members  3  chosen");
  EXPECT_EQ(line_with(t, "    cpu-pool  min"),
            "    cpu-pool  min  0  max  20  target  4  members  4  rejects all");
  EXPECT_THAT(t, HasSubstr("template  warm, template-node-for-gpu-a100-0 (from node a100-node-1)"));
  EXPECT_THAT(t, HasSubstr("      devices   profile\n      profile   none\n"));
  EXPECT_THAT(t, HasSubstr("estimate  2 nodes, 3 pods"));
  EXPECT_THAT(t, HasSubstr("expander  least-waste score 0.1250"));
  EXPECT_THAT(t, HasSubstr("      rejects   ml/huge  HAMi: 2/2 CardInsufficientMemory\n"));
  EXPECT_THAT(t, HasSubstr("      rejects   ml/huge     HAMi: node unregistered\n"
                           "                ml/train-0  HAMi: node unregistered"));

  const std::string n = render_table(no_scale_up_possible_plan());
  EXPECT_THAT(n, HasSubstr("skipped   max size reached (2)"));
  EXPECT_THAT(n, HasSubstr("profile   k80"));
  EXPECT_THAT(n, HasSubstr("rejects   team/big  ExtenderFilter: 2/2 CardInsufficientMemory"));
}

TEST(Table, PodsShowStateReasonAndIndentedGroupReasons) {
  TableOptions verbose;
  verbose.verbose = true;
  const std::string t = render_table(scale_up_plan(), verbose);
  EXPECT_EQ(line_with(t, "ml/train-0  triggers"),
            "  ml/train-0  triggers-scale-up  on template-node-for-gpu-a100-0-e-0");
  const std::vector<std::string> ls = lines_of(t);
  size_t i = 0;
  while (i < ls.size() && ls[i].find("  ml/huge  ") != 0) ++i;
  ASSERT_LT(i + 2, ls.size());
  EXPECT_EQ(ls[i], "  ml/huge     no-scale-up-helps  no node group's template can take it");
  // Under the reason column, one step in; group names aligned.
  const std::string indent(2 + 10 + 2 + 17 + 2 + 2, ' ');
  EXPECT_EQ(ls[i + 1], indent + "cpu-pool:  HAMi: node unregistered");
  EXPECT_EQ(ls[i + 2], indent + "gpu-a100:  HAMi: 2/2 CardInsufficientMemory");

  // Without --verbose the three train pods (no owner, one state, no reason) are one row, the
  // pod names under it; ml/huge keeps its own row.
  const std::string grouped = render_table(scale_up_plan());
  EXPECT_THAT(grouped, HasSubstr("  3 pods   triggers-scale-up  on 2 nodes\n"
                                 "                                ml/train-0, ml/train-1, "
                                 "ml/train-2\n"));
  EXPECT_THAT(grouped, HasSubstr("  ml/huge  no-scale-up-helps  no node group's template"));
  EXPECT_THAT(grouped, HasSubstr("Pending pods: 3 triggers-scale-up, 1 no-scale-up-helps\n"));

  const std::string n = render_table(no_scale_up_possible_plan());
  EXPECT_THAT(n, HasSubstr("team/over-quota  blocked            device quota exceeded"));
  EXPECT_THAT(render_table(no_scale_up_needed_plan()),
              HasSubstr("ml/small  fits-existing-node  on a100-node-2"));
}

TEST(Table, NewNodesShowPodsResourcesAndDeviceUsage) {
  const std::string t = render_table(scale_up_plan());
  EXPECT_THAT(t, HasSubstr("  template-node-for-gpu-a100-0-e-0  (group gpu-a100, 2 pods)\n"
                           "      pods      ml/train-0\n"
                           "                ml/train-1\n"
                           "      cpu       3.5 / 8 cores  44%\n"
                           "      memory    12 GiB / 64 GiB  19%\n"));
  EXPECT_EQ(line_with(t, "GPU-0001"),
            "      GPU-0001  NVIDIA-A100  mem  [###############.....]  60000/81920 MiB  cores  "
            "50/100 %  slots  2/10");
  // Numbers are right-aligned: the units of both devices sit in the same column.
  const std::string second = line_with(t, "GPU-0002");
  EXPECT_EQ(second,
            "      GPU-0002  NVIDIA-A100  mem  [....................]      0/81920 MiB  cores  "
            " 0/100 %  slots  0/10");
  EXPECT_EQ(line_with(t, "GPU-0001").find("MiB"), second.find("MiB"));
}

TEST(Table, BarWidthIsAnOption) {
  TableOptions o;
  o.bar_width = 4;
  EXPECT_THAT(render_table(scale_up_plan(), o), HasSubstr("mem  [###.]  60000/81920 MiB"));
  // Light use still shows one mark, and nearly full is not drawn full.
  Plan plan = small_plan();
  plan.new_nodes[0].devices.push_back({"GPU-2", "A100", 40959, 40960, 0, 100, 1, 10});
  const std::string t = render_table(plan, o);
  EXPECT_THAT(t, HasSubstr("mem  [#...]    300/40960 MiB"));
  EXPECT_THAT(t, HasSubstr("mem  [###.]  40959/40960 MiB"));
}

TEST(Table, NodeWithoutDevicesSaysSo) {
  Plan plan = scale_up_plan();
  plan.new_nodes[1].devices.clear();
  EXPECT_THAT(render_table(plan), HasSubstr("devices   none described by the template"));
}

TEST(Table, ColourOnlyWhenAsked) {
  const Plan plan = scale_up_plan();
  EXPECT_EQ(render_table(plan).find('\x1b'), std::string::npos);
  TableOptions o;
  o.color = true;
  const std::string c = render_table(plan, o);
  EXPECT_THAT(lines_of(c).at(0), StartsWith("\x1b[1;32mDecision: "));
  // Colour never shifts alignment: without the escapes the text is the plain table.
  std::string stripped;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i] == '\x1b') {
      while (i < c.size() && c[i] != 'm') ++i;
      continue;
    }
    stripped += c[i];
  }
  EXPECT_EQ(stripped, render_table(plan));
}

TEST(Table, ControlCharactersAndInvalidUtf8AreNeutralized) {
  Plan plan = no_scale_up_possible_plan();
  plan.pods[1].reason = "bad\x1b[2Jreason\nnext \xff end";
  const std::string t = render_table(plan);
  EXPECT_EQ(t.find('\x1b'), std::string::npos);
  EXPECT_THAT(t, HasSubstr("bad\\u001B[2Jreason\\nnext \xEF\xBF\xBD end"));
}

TEST(Table, WideCharactersKeepColumnsAligned) {
  Plan plan = no_scale_up_needed_plan();
  plan.pods[0].pod = "ml/\xE6\xA8\xA1\xE5\x9E\x8B";  // two CJK runes, two columns each
  PodOutcome other;
  other.pod = "ml/abcdefg";
  other.state = PodOutcome::State::kIgnored;
  other.reason = "expendable";
  plan.pods.push_back(other);
  const std::string t = render_table(plan);
  EXPECT_THAT(t, HasSubstr("  ml/\xE6\xA8\xA1\xE5\x9E\x8B     fits-existing-node"));
  EXPECT_THAT(t, HasSubstr("  ml/abcdefg  ignored   "));
}

TEST(Table, BalancedScaleUpShowsEveryGroupAndTheTotal) {
  Plan plan = scale_up_plan();
  plan.scale_ups.push_back({"gpu-a100-zone-b", 12, 13});
  const std::vector<std::string> ls = lines_of(render_table(plan));
  EXPECT_EQ(ls.at(2), "  gpu-a100          3  ->   5  +2");
  EXPECT_EQ(ls.at(3), "  gpu-a100-zone-b  12  ->  13  +1");
  EXPECT_EQ(ls.at(4), "  total +3 nodes");
}

TEST(Table, EstimateDetailsOfAGroup) {
  Plan plan = small_plan();
  plan.groups[0].similar_groups = {"g-b", "g-c"};
  const std::string t = render_table(plan);
  EXPECT_THAT(t, HasSubstr("  * g  min  0  max  3  target  0  members  0  chosen\n"
                           "      template  cold, template-node-for-g-0\n"
                           "      devices   profile\n"
                           "      profile   a100\n"
                           "      fits      ns/p\n"
                           "      estimate  1 node, 1 pod\n"
                           "      expander  least-waste score 0.5000\n"
                           "      similar   g-b, g-c\n"
                           "      unplaced  ns/q  no room\n"
                           "    h  min  0  max  0  target  0  members  0  skipped\n"
                           "      template  none\n"
                           "      skipped   no template\n"));
  EXPECT_THAT(t, HasSubstr("      memory    1 KiB / 4 KiB  25%\n"));
  EXPECT_THAT(t, HasSubstr("      cpu       0.5 / 4 cores  12%\n"));
}

TEST(Table, NodeThatCouldNotBeSimulatedHasNoPercentages) {
  Plan plan = small_plan();
  PlannedNode bare;
  bare.name = "n-0";
  bare.group = "g";
  bare.pods = {"ns/p"};
  plan.new_nodes[0] = bare;
  const std::string t = render_table(plan);
  EXPECT_THAT(t, HasSubstr("      cpu       0 / 0 cores  -\n"
                           "      memory    0 B / 0 B  -\n"
                           "      devices   none described by the template\n"));
}

// ---- JSON ----

Plan small_plan() {
  Plan plan;
  plan.decision = Plan::Decision::kScaleUp;
  plan.summary = "scale up g by 1 node (0 -> 1): 1 pod placed on new nodes";
  plan.scale_ups.push_back({"g", 0, 1});
  plan.warnings.push_back("a <warning> & more");
  plan.cluster_nodes = 2;
  plan.cluster_pods = 3;
  plan.device_stage = "in-process";
  GroupEvaluation g;
  g.name = "g";
  g.max_size = 3;
  g.template_source = Source::kCold;
  g.template_node = "template-node-for-g-0";
  g.device_source = "profile";
  g.device_profile = "a100";
  g.schedulable_pods = {"ns/p"};
  g.estimated_nodes = 1;
  g.estimated_pods = {"ns/p"};
  g.unplaced.push_back({"ns/q", "no room"});
  g.option = true;
  g.chosen = true;
  g.expander_note = "least-waste score 0.5000";
  plan.groups.push_back(g);
  GroupEvaluation h;
  h.name = "h";
  h.skip_reason = "no template";
  plan.groups.push_back(h);
  PodOutcome p = placed("ns/p", "n-0", "GPU-1,NVIDIA,300,40:;");
  p.allocations["hami.io/a"] = "x";
  plan.pods.push_back(p);
  PodOutcome q;
  q.pod = "ns/q";
  q.state = PodOutcome::State::kAwaitsEvaluation;
  q.reason = "not placed";
  q.group_reasons = {{"h", "no template"}, {"b", "z"}};
  plan.pods.push_back(q);
  PlannedNode n;
  n.name = "n-0";
  n.group = "g";
  n.pods = {"ns/p"};
  n.cpu_requested_milli = 500;
  n.cpu_allocatable_milli = 4000;
  n.memory_requested = 1024;
  n.memory_allocatable = 4096;
  n.devices.push_back({"GPU-1", "A100", 300, 40960, 40, 100, 1, 10});
  plan.new_nodes.push_back(n);
  return plan;
}

// Issue #47: a device rejection carries hamisim's numbers after HAMi's reason, in every form;
// HAMi's reason itself stays as HAMi writes it.
TEST(Report, DeviceRejectionsShowTheirNumbersAfterHamisReason) {
  Plan plan = scale_up_plan();
  plan.groups[0].rejected_details["ml/huge"] =
      "asks 1 NVIDIA GPU with 90000 MiB and 0% cores; most free on one GPU: 81920 of 81920 MiB "
      "and 100% cores (GPU 0); 8 of 8 GPUs have a free slot";
  EXPECT_THAT(render_table(plan),
              HasSubstr("      rejects   ml/huge  HAMi: 2/2 CardInsufficientMemory (asks 1 NVIDIA "
                        "GPU with 90000 MiB and 0% cores; most free on one GPU: 81920 of 81920 "
                        "MiB and 100% cores (GPU 0); 8 of 8 GPUs have a free slot)\n"));
  const std::string json = render_json(plan);
  EXPECT_THAT(json,
              HasSubstr(R"("rejectedPods":{"ml/huge":"HAMi: 2/2 CardInsufficientMemory"},)"
                        R"("rejectedPodDetails":{"ml/huge":"asks 1 NVIDIA GPU with 90000 MiB)"));
  EXPECT_THAT(render_html(plan),
              HasSubstr("HAMi: 2/2 CardInsufficientMemory (asks 1 NVIDIA GPU with 90000 MiB"));
}

TEST(Json, SmallPlanIsExact) {
  const std::string expected =
      R"({"apiVersion":"hamisim.io/v1","kind":"Plan","decision":"scale-up",)"
      R"("summary":"scale up g by 1 node (0 -\u003e 1): 1 pod placed on new nodes",)"
      R"("scaleUps":[{"group":"g","currentSize":0,"newSize":1,"delta":1}],)"
      R"("warnings":["a \u003cwarning\u003e \u0026 more"],"extenderFailed":false,)"
      R"("extenderFailures":[],"clusterNodes":2,"clusterPods":3,)"
      R"("deviceStage":"in-process","expander":"","groups":[{"name":"g","minSize":0,"maxSize":3,)"
      R"("targetSize":0,"members":0,"templateSource":"cold",)"
      R"("templateNode":"template-node-for-g-0","sampleNode":"","deviceSource":"profile",)"
      R"("deviceProfile":"a100","skipReason":"","schedulablePods":["ns/p"],"rejectedPods":{},)"
      R"("rejectedPodDetails":{},)"
      R"("estimatedNodes":1,"estimatedPods":["ns/p"],)"
      R"("unplaced":[{"pod":"ns/q","reason":"no room"}],"similarGroups":[],"option":true,)"
      R"("chosen":true,"expanderNote":"least-waste score 0.5000"},)"
      R"({"name":"h","minSize":0,"maxSize":0,"targetSize":0,"members":0,)"
      R"("templateSource":null,"templateNode":"","sampleNode":"","deviceSource":"",)"
      R"("deviceProfile":"","skipReason":"no template","schedulablePods":[],"rejectedPods":{},)"
      R"("rejectedPodDetails":{},)"
      R"("estimatedNodes":null,"estimatedPods":[],"unplaced":[],"similarGroups":[],)"
      R"("option":false,"chosen":false,"expanderNote":""}],)"
      R"("pods":[{"pod":"ns/p","owner":"","state":"triggers-scale-up","node":"n-0",)"
      R"("allocations":{"hami.io/a":"x","hami.io/vgpu-devices-allocated":"GPU-1,NVIDIA,300,40:;"},)"
      R"("reason":"","groupReasons":{}},)"
      R"({"pod":"ns/q","owner":"","state":"awaits-evaluation","node":"","allocations":{},)"
      R"("reason":"not placed","groupReasons":{"b":"z","h":"no template"}}],)"
      R"("newNodes":[{"name":"n-0","group":"g","pods":["ns/p"],"cpuRequestedMilli":500,)"
      R"("cpuAllocatableMilli":4000,"memoryRequestedBytes":1024,"memoryAllocatableBytes":4096,)"
      R"("devices":[{"id":"GPU-1","type":"A100","usedMemoryMiB":300,"totalMemoryMiB":40960,)"
      R"("usedCores":40,"totalCores":100,"usedSlots":1,"totalSlots":10}],"draDevices":[]}],)"
      R"("unpatchedCa":null,"modeComparison":null,"provenance":null})"
      "\n";
  EXPECT_EQ(render_json(small_plan()), expected);
}

TEST(Json, ParsesBackWithEveryValue) {
  const std::string json = render_json(scale_up_plan());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["apiVersion"]), "hamisim.io/v1");
  EXPECT_EQ(std::string_view(doc["kind"]), "Plan");
  EXPECT_EQ(std::string_view(doc["decision"]), "scale-up");
  EXPECT_EQ(int64_t(doc["scaleUps"].at(0)["newSize"]), 5);
  EXPECT_EQ(int64_t(doc["scaleUps"].at(0)["delta"]), 2);
  EXPECT_EQ(int64_t(doc["clusterPods"]), 31);
  simdjson::dom::array groups = doc["groups"];
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(std::string_view(groups.at(0)["templateSource"]), "warm");
  EXPECT_EQ(std::string_view(groups.at(1)["rejectedPods"]["ml/huge"]), "HAMi: node unregistered");
  simdjson::dom::array pods = doc["pods"];
  ASSERT_EQ(pods.size(), 4u);
  EXPECT_EQ(std::string_view(pods.at(3)["state"]), "no-scale-up-helps");
  EXPECT_EQ(std::string_view(pods.at(3)["groupReasons"]["gpu-a100"]),
            "HAMi: 2/2 CardInsufficientMemory");
  simdjson::dom::array nodes = doc["newNodes"];
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(int64_t(nodes.at(0)["memoryAllocatableBytes"]), int64_t{64} << 30);
  simdjson::dom::array devices = nodes.at(0)["devices"];
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(int64_t(devices.at(0)["usedMemoryMiB"]), 60000);
  EXPECT_EQ(int64_t(devices.at(0)["totalSlots"]), 10);
}

// Keys whose object values are data (pod names, annotation keys, group names), not schema.
const std::set<std::string, std::less<>> kMapKeys = {"allocations", "rejectedPods", "groupReasons"};

void collect_keys(simdjson::dom::element e, std::set<std::string>& keys) {
  if (e.is_array()) {
    for (simdjson::dom::element item : e.get_array()) collect_keys(item, keys);
  } else if (e.is_object()) {
    for (auto field : e.get_object()) {
      keys.emplace(field.key);
      if (!kMapKeys.contains(field.key)) collect_keys(field.value, keys);
    }
  }
}

TEST(Json, EveryKeyIsDocumented) {
  std::ifstream in(std::string(hamisim::testing::source_dir()) + "/docs/plan-json.md");
  ASSERT_TRUE(in) << "docs/plan-json.md";
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::set<std::string> keys;
  simdjson::dom::parser parser;
  for (const Plan& plan :
       {scale_up_plan(), small_plan(), no_scale_up_possible_plan(), unpatched_plan()}) {
    simdjson::dom::element root;
    const std::string json = render_json(plan);
    ASSERT_EQ(parser.parse(json).get(root), simdjson::SUCCESS);
    collect_keys(root, keys);
  }
  EXPECT_GE(keys.size(), 50u);  // the walk reached every level
  for (const std::string& key : keys) {
    EXPECT_THAT(doc, HasSubstr("`" + key + "`")) << "undocumented key " << key;
  }
  // And the other way round for the enum words the schema promises.
  for (auto state : {PodOutcome::State::kFitsExistingNode, PodOutcome::State::kTriggersScaleUp,
                     PodOutcome::State::kAwaitsEvaluation, PodOutcome::State::kNoScaleUpHelps,
                     PodOutcome::State::kBlocked, PodOutcome::State::kIgnored}) {
    EXPECT_THAT(doc, HasSubstr("`" + std::string(scaleup::to_string(state)) + "`"));
  }
  for (auto d : {Plan::Decision::kNoScaleUpNeeded, Plan::Decision::kScaleUp,
                 Plan::Decision::kNoScaleUpPossible}) {
    EXPECT_THAT(doc, HasSubstr("`" + std::string(scaleup::to_string(d)) + "`"));
  }
}

TEST(Json, EmptyPlanHasEveryTopLevelKey) {
  EXPECT_EQ(
      render_json(Plan{}),
      R"({"apiVersion":"hamisim.io/v1","kind":"Plan","decision":"no-scale-up-needed",)"
      R"("summary":"","scaleUps":[],"warnings":[],"extenderFailed":false,"extenderFailures":[],)"
      R"("clusterNodes":0,"clusterPods":0,)"
      R"("deviceStage":"","expander":"","groups":[],"pods":[],"newNodes":[],"unpatchedCa":null,)"
      R"("modeComparison":null,"provenance":null})"
      "\n");
}

// Issue #47: `plan -o json` carries where it came from, as the HTML report's footer does; last,
// so the plan's own keys read the same with or without it.
TEST(Json, ProvenanceIsTheLastKeyWhenGiven) {
  Provenance p;
  p.version = "0.1.0 abc";
  p.time = "2026-12-07T10:00:00Z";
  p.inputs = {{"--cluster", "c.yaml", "ab12"}, {"--pods", "-", ""}};
  p.command = "hamisim plan --cluster c.yaml";
  const std::string doc = render_json(Plan{}, &p);
  EXPECT_THAT(doc, HasSubstr(R"("modeComparison":null,"provenance":{"version":"0.1.0 abc",)"
                             R"("time":"2026-12-07T10:00:00Z","inputs":[{"flag":"--cluster",)"
                             R"("path":"c.yaml","sha256":"ab12"},{"flag":"--pods","path":"-",)"
                             R"("sha256":""}],"command":"hamisim plan --cluster c.yaml"}})"
                             "\n"));
}

TEST(Json, TheUnpatchedCaComparisonIsAnObjectOnlyWhenAsked) {
  EXPECT_THAT(render_json(scale_up_plan()), HasSubstr(R"("unpatchedCa":null,)"));
  EXPECT_THAT(
      render_json(unpatched_plan()),
      HasSubstr(R"("unpatchedCa":{"decision":"scale-up","summary":"scale up gpu-a100 by 1 node )"
                R"((3 -\u003e 4): 3 pods placed on new nodes","scaleUps":[{"group":"gpu-a100",)"
                R"("currentSize":3,"newSize":4,"delta":1}],"groups":[{"name":"gpu-a100",)"
                R"("estimatedNodes":2,"unpatchedEstimatedNodes":1,"newNodes":2,)"
                R"("unpatchedNewNodes":1},{"name":"cpu-pool","estimatedNodes":null,)"
                R"("unpatchedEstimatedNodes":null,"newNodes":0,"unpatchedNewNodes":0}],)"
                R"("leftPending":[{"pod":"ml/train-2","reason":"no \u003croom\u003e"}]},)"
                R"("modeComparison":null,"provenance":null})"));
}

// `plan --compare-modes`: the DRA-mode plan next to this one, in each output.
Plan mode_plan() {
  Plan plan = small_plan();
  auto m = std::make_shared<scaleup::ModeComparison>();
  m->decision = Plan::Decision::kScaleUp;
  m->summary = "scale up g by 4 nodes (0 -> 4): 4 pods placed on new nodes";
  m->scale_ups = {{"g", 0, 4}};
  m->groups = {{"g", 1, 4, 1, 4}};
  m->nodes_converted = 2;
  m->profiles_converted = 1;
  m->pending_pods_converted = 4;
  m->pods.push_back({.pod = "ns/p",
                     .state = State::kTriggersScaleUp,
                     .node = "n-0",
                     .dra_state = State::kTriggersScaleUp,
                     .dra_node = "n-1",
                     .why = ""});
  m->pods.push_back({.pod = "ns/<r>",
                     .state = State::kTriggersScaleUp,
                     .node = "n-0",
                     .dra_state = std::nullopt,
                     .dra_node = "",
                     .why = "DRA mode: refused"});
  m->same_outcome = 3;
  m->not_modelled = {"policies"};
  plan.mode_comparison = m;
  return plan;
}

TEST(Json, TheModeComparisonIsAnObjectOnlyWhenAsked) {
  EXPECT_THAT(
      render_json(mode_plan()),
      HasSubstr(R"("modeComparison":{"decision":"scale-up","summary":"scale up g by 4 nodes )"
                R"((0 -\u003e 4): 4 pods placed on new nodes","scaleUps":[{"group":"g",)"
                R"("currentSize":0,"newSize":4,"delta":4}],"groups":[{"name":"g",)"
                R"("estimatedNodes":1,"draEstimatedNodes":4,"newNodes":1,"draNewNodes":4}],)"
                R"("converted":{"nodes":2,"deviceProfiles":1,"pendingPods":4,"runningPods":0},)"
                R"("sameOutcome":3,"pods":[{"pod":"ns/p","state":"triggers-scale-up",)"
                R"("node":"n-0","draState":"triggers-scale-up","draNode":"n-1","why":""},)"
                R"({"pod":"ns/\u003cr\u003e","state":"triggers-scale-up","node":"n-0",)"
                R"("draState":"refused","draNode":"","why":"DRA mode: refused"}],)"
                R"("notModelled":["policies"],"warnings":[]},"provenance":null})"));
}

TEST(Table, TheModeComparisonListsCountsAndThePodsThatDiffer) {
  const std::string t = render_table(mode_plan());
  EXPECT_THAT(t,
              HasSubstr("Compared with HAMi's DRA mode\n"
                        "  converted: 2 nodes, 1 device profile, 4 pending pods, 0 running pods\n"
                        "  DRA mode's decision: scale up g by 4 nodes (0 -> 4): 4 pods placed "
                        "on new nodes\n"
                        "  node group  estimate  DRA estimate  adds  DRA adds\n"
                        "  g           1 node    4 nodes       +1    +4\n"
                        "  pending pods: 3 pods the same in both modes, 2 pods differ\n"));
  EXPECT_THAT(t, HasSubstr("ns/<r>  triggers-scale-up n-0  refused"));
  EXPECT_THAT(t, HasSubstr("    - policies\n"));
}

TEST(Html, TheModeComparisonIsASectionOfItsOwn) {
  const std::string h = render_html(mode_plan());
  EXPECT_THAT(h, HasSubstr("<h2 id=\"mode-comparison\">Compared with HAMi's DRA mode</h2>"));
  EXPECT_THAT(h, HasSubstr("ns/&lt;r&gt;"));
  EXPECT_THAT(h, HasSubstr("<th>DRA estimate</th>"));
  EXPECT_THAT(h, Not(HasSubstr("ns/<r>")));
}

TEST(Json, InvalidUtf8IsReplacedAndStillParses) {
  Plan plan = small_plan();
  plan.pods[1].reason = "bad \xff\xfe byte";
  const std::string json = render_json(plan);
  // As Go's encoding/json writes it.
  EXPECT_THAT(json, HasSubstr(R"("bad \ufffd\ufffd byte")"));
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  EXPECT_EQ(parser.parse(json).get(root), simdjson::SUCCESS);
}

// ---- HTML ----

TEST(Html, IsOneSelfContainedDocument) {
  for (const Plan& plan : {scale_up_plan(), no_scale_up_possible_plan(), no_scale_up_needed_plan(),
                           unpatched_plan()}) {
    const std::string h = render_html(plan);
    EXPECT_THAT(h, StartsWith("<!DOCTYPE html>\n"));
    EXPECT_THAT(h, HasSubstr("<meta charset=\"utf-8\">"));
    EXPECT_THAT(h, HasSubstr("<style>"));
    EXPECT_TRUE(h.ends_with("</html>\n"));
    for (std::string_view ref : {"http://", "https://", "<link", "src=", "@import", "url("}) {
      EXPECT_EQ(h.find(ref), std::string::npos) << ref;
    }
    // One script, ours, inline: search, filters and sorting (issue #47).
    EXPECT_EQ(count(h, "<script"), 1u);
    EXPECT_EQ(count(h, "<script>"), 1u);
    // Links only within the page.
    EXPECT_EQ(count(h, "href="), count(h, "href=\"#"));
    // Elements open and close in pairs.
    for (std::string_view tag : {"table", "tr", "td", "ul", "li", "details", "section", "svg"}) {
      EXPECT_EQ(count(h, "<" + std::string(tag) + ">") + count(h, "<" + std::string(tag) + " "),
                count(h, "</" + std::string(tag) + ">"))
          << tag;
    }
  }
}

TEST(Html, ShowsDecisionGroupsAndPods) {
  const std::string h = render_html(scale_up_plan());
  EXPECT_THAT(
      h,
      HasSubstr("<p class=\"decision\" data-decision=\"scale-up\"><span class=\"badge scale-up\">"
                "scale-up</span> scale up gpu-a100 by 2 nodes (3 -&gt; 5): 3 pods "
                "placed on new nodes</p>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>gpu-a100</td><td class=\"num\">3</td><td class=\"num\">5"
                           "</td><td class=\"num scale-up\">+2</td></tr>"));
  EXPECT_THAT(h, HasSubstr("<tr class=\"chosen-row\" data-filter data-groups=\"0\" "
                           "data-outcomes=\"1 3\"><td><strong>gpu-a100</strong></td>"));
  EXPECT_THAT(h, HasSubstr("<span class=\"badge rejects-all\">rejects all</span>"));
  EXPECT_THAT(h, HasSubstr("HAMi: 2/2 CardInsufficientMemory"));
  EXPECT_THAT(h, HasSubstr("<span class=\"badge no-scale-up-helps\">no-scale-up-helps</span>"));
  EXPECT_THAT(h, HasSubstr("no node group&#39;s template can take it"));
  EXPECT_THAT(h, HasSubstr("GPU-0001,NVIDIA,40000,50:;"));  // the allocation, per pod
}

TEST(Html, ShowsTheUnpatchedCaComparison) {
  EXPECT_THAT(render_html(scale_up_plan()), Not(HasSubstr("unpatched-ca")));
  const std::string h = render_html(unpatched_plan());
  EXPECT_THAT(h, HasSubstr("<h2 id=\"unpatched-ca\">Compared with a Cluster Autoscaler that "
                           "does not send SimulatedPods</h2>"));
  EXPECT_THAT(h, HasSubstr("its decision: <span class=\"badge scale-up\">scale-up</span> scale "
                           "up gpu-a100 by 1 node (3 -&gt; 4)"));
  EXPECT_THAT(h, HasSubstr("<tr><td>gpu-a100</td><td>2 nodes</td><td>1 node</td>"
                           "<td class=\"num\">2</td><td class=\"num\">1</td></tr>"));
  EXPECT_THAT(h, HasSubstr("Left pending by its decision: 1 pod"));
  EXPECT_THAT(h, HasSubstr("<span class=\"mono\">ml/train-2</span>: no &lt;room&gt;"));
}

TEST(Html, OneDevicePicturePerNode) {
  const std::string h = render_html(scale_up_plan());
  // One strip per new node, a memory and a cores column per device.
  EXPECT_EQ(count(h, "<svg class=\"device\""), 2u);
  EXPECT_EQ(count(h, "<rect class=\"mem\""), 4u);
  // 60000 of 81920 MiB on a 48-unit column: 35.2 high; cores 50 of 100: 24.
  EXPECT_THAT(h,
              HasSubstr("<rect class=\"mem\" x=\"1\" y=\"12.8\" width=\"11\" height=\"35.2\"/>"));
  EXPECT_THAT(
      h, HasSubstr("<rect class=\"cores\" x=\"13\" y=\"24.0\" width=\"11\" height=\"24.0\"/>"));
  EXPECT_THAT(h, HasSubstr("<title>0: 60000/81920 MiB, 50/100 % cores, 2/10 slots</title>"));
  EXPECT_THAT(h, HasSubstr("<td>60000 / 81920</td>"));
  EXPECT_THAT(h, HasSubstr("<td>2 / 10</td>"));  // slots
  EXPECT_THAT(h, HasSubstr("3.5 / 8 cores"));
  EXPECT_EQ(count(render_html(no_scale_up_possible_plan()), "<svg class=\"device\""), 0u);
}

// Issue #30: summary first (pods per state, a line per group, the options side by side),
// identical packings as one card, and the provenance footer when given.
TEST(Html, SummaryGroupingAndProvenance) {
  const std::string h = render_html(scale_up_plan());
  EXPECT_THAT(h, HasSubstr("<h2 id=\"summary\">Summary</h2>"));
  EXPECT_THAT(h,
              HasSubstr("<span class=\"count\">3</span><span class=\"badge triggers-scale-up\">"));
  // The pods without owner are one row: 3 placed on 2 nodes, 1 no node group helps, whose
  // reason the row shows; the names folded under it, the common stem once.
  EXPECT_THAT(h, HasSubstr("<td class=\"num\">4</td><td><span class=\"count\">3</span>"));
  EXPECT_THAT(h, HasSubstr("3 pods on 2 nodes<p class=\"names\">ml/train-{0, 1, 2}</p>"));
  EXPECT_THAT(h, HasSubstr("</td><td>no node group&#39;s template can take it</td></tr>"));
  // Two nodes packed identically are one card.
  Plan twins = scale_up_plan();
  twins.new_nodes[1] = twins.new_nodes[0];
  twins.new_nodes[1].name = "template-node-for-gpu-a100-0-e-1";
  const std::string t = render_html(twins);
  EXPECT_THAT(t, HasSubstr("2 &times; this packing"));
  EXPECT_EQ(count(t, "<section class=\"node\""), 1u);

  Provenance p;
  p.version = "1.2.3";
  p.time = "2026-12-05T17:00:00Z";
  p.inputs = {{"--cluster", "c<1>.json", "abc123"}};
  p.command = "hamisim plan --cluster 'c<1>.json'";
  const std::string f = render_html(scale_up_plan(), &p);
  EXPECT_THAT(f, HasSubstr("<dt>version</dt><dd>1.2.3</dd>"));
  EXPECT_THAT(f,
              HasSubstr("<dt>--cluster</dt><dd><code>c&lt;1&gt;.json</code> sha256:abc123</dd>"));
  EXPECT_THAT(f, HasSubstr("hamisim plan --cluster &#39;c&lt;1&gt;.json&#39;"));
}

TEST(Html, EscapesEveryPlanString) {
  Plan plan = scale_up_plan();
  const std::string evil = "ml/<script>alert('x')</script>&\"";
  plan.pods[0].pod = evil;
  plan.new_nodes[0].pods[0] = evil;
  plan.groups[1].rejected_pods[evil] = "<b>bold</b>";
  plan.warnings.push_back("<img src=x onerror=alert(1)>");
  plan.new_nodes[0].devices[0].id = "GPU-<i>";
  plan.summary = "</title><script>";
  const std::string h = render_html(plan);
  EXPECT_EQ(count(h, "<script"), 1u);  // ours alone
  EXPECT_EQ(h.find("<img"), std::string::npos);
  EXPECT_EQ(h.find("<b>"), std::string::npos);
  EXPECT_EQ(h.find("<i>"), std::string::npos);
  EXPECT_THAT(h, HasSubstr("ml/&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"));
  EXPECT_THAT(h, HasSubstr("<title>hamisim plan: &lt;/title&gt;&lt;script&gt;</title>"));
  EXPECT_THAT(h, HasSubstr("GPU-&lt;i&gt;"));
}

}  // namespace
}  // namespace hamisim::planner::report
