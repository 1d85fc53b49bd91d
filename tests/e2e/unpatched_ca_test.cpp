// Issue #33: Cluster Autoscaler builds that do not send `SimulatedPods`.
// - `serve` recognises a caller that asks about the same template copy again for another pod
//   without the pods it placed there: a counter, a rate-limited warning and a note on that
//   copy; the planner, which sends them (ExtenderDeviceStage), triggers none of it.
// - `/v1/plan` and the planner through serve plan as such a CA would when asked, next to the
//   correct plan (the hand-derived numbers are in tests/planner/scaleup/plan_test.cpp).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <boost/json.hpp>
#include <sstream>

#include "device/catalog/device_config.h"
#include "http_test_client.h"
#include "model/decode.h"
#include "model/encode.h"
#include "plan_http_support.h"
#include "planner/report/report.h"
#include "planner/scaleup/planning.h"
#include "server/simulation_filter.h"

namespace hamisim::planner::scaleup {
namespace {

using hamisim::testing::http_request;
using testing::ca_config;
using testing::Example;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::read_example;
using testing::Serve;

// spdlog's default logger (the one `serve` logs with), captured for one test.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("captured", sink));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

std::string missing_counter(Serve& serve) {
  const std::string metrics = serve.metrics().render();
  const std::string name = "hamisim_simulated_pods_missing_total{route=\"/filter-simulation\"} ";
  const size_t at = metrics.find(name);
  if (at == std::string::npos) return "absent";
  return metrics.substr(at + name.size(), metrics.find('\n', at) - at - name.size());
}

// A memory-bound workload on the example's cold A100 group (the only group left): `count`
// pods of 1 GPU, 30000 MiB, 10% of its cores, 4 CPUs and 8 GiB each.
PlanInput a100_workload(const Example& e, int count) {
  PlanInput input = e.input;
  input.pods.clear();
  input.nodes.clear();
  std::vector<model::Pod> pending;
  for (int i = 0; i < count; ++i) {
    auto pod = model::decode_pod(
        "kind: Pod\nmetadata: {name: job-" + std::to_string(i) +
        ", namespace: ml}\nspec:\n  containers:\n  - name: c\n    resources:\n      requests: "
        "{cpu: '4', memory: 8Gi}\n      limits: "
        "{nvidia.com/gpu: 1, nvidia.com/gpumem: 30000, nvidia.com/gpucores: 10}\n");
    EXPECT_TRUE(pod) << pod.error().message;
    if (pod) pending.push_back(std::move(pod).value());
  }
  input.pending = pending;
  std::erase_if(input.node_groups.groups,
                [](const nodegroups::NodeGroupSpec& g) { return g.name != "gpu-a100"; });
  return input;
}

// What an unpatched CA sends while it packs one estimate's new node: the same template copy,
// one pod after another, and never the pods it already put there.
TEST(UnpatchedCa, ServeCountsWarnsAndNotesACallerThatDoesNotSendSimulatedPods) {
  Example e;
  CapturedLog log;
  Serve serve(e.registry, e.profiles);
  auto cluster = model::yaml_to_json(read_example("cluster.yaml"));
  ASSERT_TRUE(cluster);
  auto list = boost::json::parse(*cluster).as_object();
  boost::json::value node, pod;
  for (const auto& item : list["items"].as_array()) {
    const auto& name = item.at("metadata").at("name").as_string();
    if (name == "k80-node-1") node = item;
    if (name == "trainer-2") pod = item;
  }
  ASSERT_TRUE(node.is_object() && pod.is_object());
  const std::string copy = "template-node-for-gpu-k80-0-e-0";
  node.as_object()["metadata"].as_object()["name"] = copy;
  std::vector<std::string> notes_seen;
  for (int i = 0; i < 4; ++i) {
    pod.as_object()["metadata"].as_object()["name"] = "trainer-" + std::to_string(10 + i);
    boost::json::object args{{"Pod", pod},
                             {"Nodes", boost::json::object{{"metadata", boost::json::object{}},
                                                           {"items", boost::json::array{node}}}},
                             {"NodeNames", nullptr}};
    auto r =
        http_request(serve.client(), "POST", "/filter-simulation", boost::json::serialize(args));
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->status, 200);
    auto body = boost::json::parse(r->body).as_object();
    // Every answer is the empty copy's: the pod fits.
    ASSERT_EQ(body.at("Nodes").at("items").as_array().size(), 1u) << r->body;
    const auto& notes = body.at("Diagnostics").at(copy).at("Notes").as_array();
    notes_seen.push_back(notes.empty() ? "" : std::string(notes.back().as_string()));
  }
  const std::string note(server::kUnsentPlacementsNote);
  EXPECT_EQ(notes_seen, (std::vector<std::string>{"", note, note, note}));
  EXPECT_EQ(missing_counter(serve), "3");
  // One warning (rate-limited), naming the remedy.
  const std::string text = log.text();
  EXPECT_THAT(text, HasSubstr("does not send SimulatedPods"));
  EXPECT_THAT(text, HasSubstr(copy));
  EXPECT_THAT(text, HasSubstr("the Cluster Autoscaler build must send SimulatedPods, see "
                              "docs/ca-side.md"));
  size_t lines = 0;
  for (size_t at = text.find("does not send SimulatedPods"); at != std::string::npos;
       at = text.find("does not send SimulatedPods", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << text;
}

// The planner's extender client sends the pods it placed on each template copy: nothing to
// report, however many pods it packs onto one copy.
TEST(UnpatchedCa, ThePlannerThroughServeIsNeverReported) {
  Example e;
  CapturedLog log;
  Serve serve(e.registry, e.profiles);
  PlanInput input = a100_workload(e, 40);
  auto planning = Planning::create(e.registry, e.profiles, ca_config(serve.port()));
  ASSERT_TRUE(planning) << planning.error().message;
  auto plan = (*planning)->plan(input, {});
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->decision, Plan::Decision::kScaleUp) << report::render_table(*plan);
  EXPECT_EQ(plan->scale_ups[0].delta(), 3);
  EXPECT_EQ(missing_counter(serve), "absent");
  EXPECT_THAT(log.text(), Not(HasSubstr("SimulatedPods")));
}

// The example's A100 template has 95 allocatable CPUs: such a CA packs floor(95 / 4) = 23 pods
// per node, 40 pods on 2 nodes; with devices counted a node takes 16 (2 per GPU by memory), so
// 40 pods need 3 and 8 stay pending after its 2-node scale-up.
void expect_a100_comparison(const UnpatchedCaPlan& u) {
  EXPECT_EQ(u.decision, Plan::Decision::kScaleUp);
  ASSERT_EQ(u.scale_ups.size(), 1u);
  EXPECT_EQ(u.scale_ups[0].group, "gpu-a100");
  EXPECT_EQ(u.scale_ups[0].delta(), 2);
  bool found = false;
  for (const auto& g : u.groups) {
    if (g.name != "gpu-a100") continue;
    found = true;
    EXPECT_EQ(g.estimated_nodes, 3);
    EXPECT_EQ(g.other_estimated_nodes, 2);
  }
  EXPECT_TRUE(found);
  ASSERT_EQ(u.left_pending.size(), 8u);
  EXPECT_EQ(u.left_pending[0].pod, "ml/job-32");
}

// A /v1/plan body: the A100 workload of 40 pods as pendingPods, the example's node groups,
// an empty cluster and `options`.
boost::json::object a100_plan_body(const Example& e, boost::json::object options) {
  PlanInput input = a100_workload(e, 40);
  boost::json::array pending;
  for (const model::Pod& p : *input.pending) {
    pending.push_back(boost::json::parse(model::encode_pod_json(p)));
  }
  auto groups = model::yaml_to_json(read_example("node-groups.yaml"));
  EXPECT_TRUE(groups);
  return {{"cluster", boost::json::parse(R"({"kind":"List","items":[]})")},
          {"nodeGroups", boost::json::parse(groups.value_or("{}"))},
          {"pendingPods", pending},
          {"options", std::move(options)}};
}

TEST(UnpatchedCa, PlanRouteComparesWhenAsked) {
  Example e;
  Serve serve(e.registry, e.profiles);
  auto groups = model::yaml_to_json(read_example("node-groups.yaml"));
  ASSERT_TRUE(groups);
  auto body = [&](bool compare) {
    return boost::json::serialize(a100_plan_body(
        e, compare ? boost::json::object{{"compareUnpatchedCa", true}} : boost::json::object{}));
  };
  auto plain = http_request(serve.client(), "POST", "/v1/plan", body(false));
  ASSERT_TRUE(plain) << plain.error().message;
  ASSERT_EQ(plain->status, 200) << plain->body;
  EXPECT_TRUE(boost::json::parse(plain->body).at("unpatchedCa").is_null());

  auto r = http_request(serve.client(), "POST", "/v1/plan", body(true));
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->status, 200) << r->body;
  auto doc = boost::json::parse(r->body).as_object();
  const auto& u = doc.at("unpatchedCa").as_object();
  EXPECT_EQ(u.at("decision"), "scale-up");
  EXPECT_EQ(u.at("scaleUps").at(0).at("delta"), 2);
  for (const auto& g : u.at("groups").as_array()) {
    if (g.at("name") != "gpu-a100") continue;
    EXPECT_EQ(g.at("estimatedNodes"), 3);
    EXPECT_EQ(g.at("unpatchedEstimatedNodes"), 2);
    EXPECT_EQ(g.at("newNodes"), 3);
    EXPECT_EQ(g.at("unpatchedNewNodes"), 2);
  }
  EXPECT_EQ(u.at("leftPending").as_array().size(), 8u);
  EXPECT_EQ(doc.at("scaleUps").at(0).at("delta"), 3);  // the plan itself is the correct one

  auto bad =
      http_request(serve.client(), "POST", "/v1/plan",
                   "{\"cluster\":{\"kind\":\"List\",\"items\":[]},\"nodeGroups\":" + *groups +
                       ",\"options\":{\"compareUnpatchedCa\":1}}");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("options.compareUnpatchedCa: must be true or false"));
}

// `/v1/plan` with options.compareModes (issue #29): the A100 workload in HAMi's DRA mode. Its
// pods set gpumem 30000 and gpucores 10, so DRA's shares pack as HAMi's do: 2 per GPU by
// memory, 16 per node, 3 nodes in both modes.
TEST(ModeComparison, PlanRouteComparesModesWhenAsked) {
  Example e;
  Serve serve(e.registry, e.profiles);
  boost::json::object o = a100_plan_body(e, {{"compareModes", true}});
  auto r = http_request(serve.client(), "POST", "/v1/plan", boost::json::serialize(o));
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->status, 200) << r->body;
  auto doc = boost::json::parse(r->body).as_object();
  EXPECT_TRUE(doc.at("unpatchedCa").is_null());
  const auto& m = doc.at("modeComparison").as_object();
  EXPECT_EQ(m.at("decision"), "scale-up");
  EXPECT_EQ(m.at("converted").at("pendingPods"), 40);
  for (const auto& g : m.at("groups").as_array()) {
    if (g.at("name") != "gpu-a100") continue;
    EXPECT_EQ(g.at("estimatedNodes"), 3);
    EXPECT_EQ(g.at("draEstimatedNodes"), 3);
  }
  EXPECT_EQ(m.at("sameOutcome").as_int64() + static_cast<int64_t>(m.at("pods").as_array().size()),
            40);

  o["options"] = boost::json::object{{"compareModes", "yes"}};
  auto bad = http_request(serve.client(), "POST", "/v1/plan", boost::json::serialize(o));
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("options.compareModes: must be true or false"));
}

// Through extenders, the comparison asks serve exactly as such a CA does (no SimulatedPods),
// gets the in-process numbers, and serve reports it as such a caller.
TEST(UnpatchedCa, ComparedThroughServeTheUnpatchedRunIsWhatServeReports) {
  Example e;
  CapturedLog log;
  Serve serve(e.registry, e.profiles);
  PlanInput input = a100_workload(e, 40);
  PlannerOptions o;
  o.compare_unpatched_ca = true;
  for (bool remote : {false, true}) {
    auto planning = Planning::create(
        e.registry, e.profiles, remote ? std::optional(ca_config(serve.port())) : std::nullopt);
    ASSERT_TRUE(planning) << planning.error().message;
    auto plan = (*planning)->plan(input, o);
    ASSERT_TRUE(plan) << plan.error().message;
    ASSERT_NE(plan->unpatched_ca, nullptr);
    EXPECT_EQ(plan->scale_ups[0].delta(), 3);
    expect_a100_comparison(*plan->unpatched_ca);
  }
  EXPECT_NE(missing_counter(serve), "absent");
  EXPECT_THAT(log.text(), HasSubstr("does not send SimulatedPods"));
}

}  // namespace
}  // namespace hamisim::planner::scaleup
