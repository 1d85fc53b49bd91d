// Issue #30: the plan reports stay readable at any size. The four inputs of the issue are
// generated here (`hamisim gen`'s library, fixed seeds) and planned in process; the HTML report
// of 500 nodes must stay within 150 KB and that of the +98-node plan within 200 KB (printed
// pages are counted by scripts/report-pictures.sh in headless Chromium, where it is installed;
// docs/plan.md shows its pictures). The text table, summary first, stays short without
// --verbose.

#include <gtest/gtest.h>

#include <string>

#include "device/catalog/device_config.h"
#include "gen/generator.h"
#include "model/decode.h"
#include "planner/report/report.h"
#include "planner/scaleup/planning.h"
#include "profile/device_profiles.h"

namespace hamisim::planner::report {
namespace {

struct Rendered {
  scaleup::Plan plan;
  std::string html;
  std::string table;
};

Rendered render_generated(const gen::GenOptions& o) {
  auto c = gen::generate(o);
  EXPECT_TRUE(c) << c.error().message;
  if (!c) return {};
  auto registry = std::make_shared<const device::DeviceRegistry>(device::build_registry({}));
  auto profiles =
      profile::parse_device_profiles(c->device_profiles_yaml, "device-profiles.yaml", *registry);
  EXPECT_TRUE(profiles) << profiles.error().message;
  auto groups = nodegroups::parse_node_groups(c->node_groups_yaml, "node-groups.yaml");
  EXPECT_TRUE(groups) << groups.error().message;
  auto objects = model::decode_objects_json(c->cluster_json);
  EXPECT_TRUE(objects) << objects.error().message;
  if (!profiles || !groups || !objects) return {};
  scaleup::PlanInput input;
  input.nodes = std::move(objects->nodes);
  input.pods = std::move(objects->pods);
  input.node_groups = std::move(groups).value();
  auto planning = scaleup::Planning::create(
      registry, std::make_shared<const profile::DeviceProfiles>(std::move(profiles).value()),
      std::nullopt);
  EXPECT_TRUE(planning);
  auto plan = (*planning)->plan(input, {});
  EXPECT_TRUE(plan) << plan.error().message;
  if (!plan) return {};
  Rendered r;
  r.html = render_html(*plan);
  r.table = render_table(*plan);
  r.plan = std::move(plan).value();
  return r;
}

size_t lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

TEST(ReportSize, TheDefaultGeneratedCluster) {
  const Rendered r = render_generated({});
  EXPECT_LE(r.html.size(), 60u * 1024) << r.html.size();
  EXPECT_LE(lines(r.table), 150u);
}

TEST(ReportSize, FiveHundredNodesStayWithin150KB) {
  gen::GenOptions o;
  o.nodes = 500;
  o.pending = 1000;
  o.groups = 40;
  o.node_groups = 12;
  const Rendered r = render_generated(o);
  ASSERT_EQ(r.plan.decision, scaleup::Plan::Decision::kScaleUp) << r.plan.summary;
  EXPECT_LE(r.html.size(), 150u * 1024) << r.html.size();
  // Was 3,025 lines before the table grouped pods and packings.
  EXPECT_LE(lines(r.table), 800u) << lines(r.table);
}

TEST(ReportSize, NinetyEightNewNodesStayWithin200KB) {
  gen::GenOptions o;
  o.nodes = 300;
  o.pending = 2000;
  o.groups = 20;
  o.node_groups = 8;
  o.pods_per_node = 30;
  o.seed = 4;
  const Rendered r = render_generated(o);
  ASSERT_EQ(r.plan.decision, scaleup::Plan::Decision::kScaleUp) << r.plan.summary;
  // +98 when the issue was filed; +97 since gen places running pods to fit both of its forms.
  EXPECT_GE(r.plan.new_nodes.size(), 90u);
  EXPECT_LE(r.html.size(), 200u * 1024) << r.html.size();
}

}  // namespace
}  // namespace hamisim::planner::report
