// The planner against a live `hamisim serve` over loopback (spec §6.3, issue "Done when"): the
// same scenario planned in process and through the extender chain gives the same decision and
// packing; SimulatedPods make device packing right over HTTP; extender failures are kept as
// reasons; /v1/plan and /v1/estimate answer with the CLI's JSON.

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "device/catalog/device_config.h"
#include "dra/decode.h"
#include "http_test_client.h"
#include "model/decode.h"
#include "plan_http_support.h"
#include "planner/report/report.h"
#include "planner/scaleup/planning.h"
#include "server/extender_service.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/plan_api.h"

namespace hamisim::planner::scaleup {
namespace {

using hamisim::testing::ClientOptions;
using hamisim::testing::http_request;
using testing::ca_config;
using testing::Example;
using testing::read_example;
using testing::Serve;

Plan plan_with(const Example& e, std::optional<extender::SchedulerConfig> config,
               const PlanInput* input = nullptr) {
  auto planning = Planning::create(e.registry, e.profiles, std::move(config));
  EXPECT_TRUE(planning) << planning.error().message;
  auto p = (*planning)->plan(input ? *input : e.input, {});
  EXPECT_TRUE(p) << p.error().message;
  return std::move(p).value();
}

void expect_same_decision(const Plan& a, const Plan& b) {
  EXPECT_EQ(a.decision, b.decision);
  EXPECT_EQ(a.summary, b.summary);
  ASSERT_EQ(a.scale_ups.size(), b.scale_ups.size());
  for (size_t i = 0; i < a.scale_ups.size(); ++i) {
    EXPECT_EQ(a.scale_ups[i].group, b.scale_ups[i].group);
    EXPECT_EQ(a.scale_ups[i].new_size, b.scale_ups[i].new_size);
  }
  ASSERT_EQ(a.pods.size(), b.pods.size());
  for (size_t i = 0; i < a.pods.size(); ++i) {
    EXPECT_EQ(a.pods[i].pod, b.pods[i].pod);
    EXPECT_EQ(a.pods[i].state, b.pods[i].state) << a.pods[i].pod;
    EXPECT_EQ(a.pods[i].node, b.pods[i].node) << a.pods[i].pod;
    EXPECT_EQ(a.pods[i].allocations, b.pods[i].allocations) << a.pods[i].pod;
  }
  ASSERT_EQ(a.new_nodes.size(), b.new_nodes.size());
  for (size_t i = 0; i < a.new_nodes.size(); ++i) {
    EXPECT_EQ(a.new_nodes[i].pods, b.new_nodes[i].pods);
    ASSERT_EQ(a.new_nodes[i].devices.size(), b.new_nodes[i].devices.size());
    for (size_t d = 0; d < a.new_nodes[i].devices.size(); ++d) {
      EXPECT_EQ(a.new_nodes[i].devices[d].used_memory, b.new_nodes[i].devices[d].used_memory);
    }
  }
}

TEST(PlanOverHttp, SameDecisionInProcessAndThroughServe) {
  Example e;
  Serve serve(e.registry, e.profiles);
  Plan local = plan_with(e, std::nullopt);
  Plan remote = plan_with(e, ca_config(serve.port()));
  EXPECT_EQ(local.device_stage, "in-process");
  EXPECT_EQ(remote.device_stage, "extenders: http://127.0.0.1:" + std::to_string(serve.port()));
  ASSERT_EQ(remote.decision, Plan::Decision::kScaleUp);
  expect_same_decision(local, remote);
  // The extender's own reason survives the chain.
  for (const auto& g : remote.groups) {
    if (g.name == "cpu") {
      EXPECT_EQ(g.rejected_pods.at("ml/trainer-2"), "ExtenderFilter: node unregistered");
    }
  }
}

// Pods already placed on a template copy go back as SimulatedPods, so the extender counts their
// devices: 25 pods using 30% of a GPU each need two 8-GPU nodes, not one.
TEST(PlanOverHttp, SimulatedPodsKeepDevicePackingRight) {
  Example e;
  Serve serve(e.registry, e.profiles);
  PlanInput input = e.input;
  input.pods.clear();
  input.nodes.clear();
  std::vector<model::Pod> pending;
  for (int i = 0; i < 25; ++i) {
    auto pod = model::decode_pod(
        "kind: Pod\nmetadata: {name: job-" + std::to_string(i) +
        ", namespace: ml}\nspec:\n  containers:\n  - name: c\n    resources:\n      limits: "
        "{nvidia.com/gpu: 1, nvidia.com/gpumem: 8000, nvidia.com/gpucores: 30}\n");
    ASSERT_TRUE(pod) << pod.error().message;
    pending.push_back(std::move(pod).value());
  }
  input.pending = pending;
  // Only the A100 group (80 GB GPUs, split 10): 3 pods per GPU by cores, 24 per node.
  std::erase_if(input.node_groups.groups,
                [](const nodegroups::NodeGroupSpec& g) { return g.name != "gpu-a100"; });
  Plan local = plan_with(e, std::nullopt, &input);
  Plan remote = plan_with(e, ca_config(serve.port()), &input);
  ASSERT_EQ(remote.decision, Plan::Decision::kScaleUp);
  EXPECT_EQ(remote.scale_ups[0].delta(), 2);
  expect_same_decision(local, remote);
}

// A test extender that fails every call.
class FailingExtender {
 public:
  FailingExtender() {
    server::ServerConfig config;
    config.listen = "127.0.0.1:0";
    config.metrics_listen = "";
    std::vector<server::Route> routes = {
        {"POST", "/filter-simulation", server::AuthGroup::kNone, [](const server::HttpRequest&) {
           return server::HttpResponse::json(500, "{\"Error\":\"boom\"}");
         }}};
    server_ = server::HttpServer::create(std::move(config), std::move(routes)).value();
    server_->start();
  }
  ~FailingExtender() { server_->shutdown(std::chrono::seconds(5)); }
  uint16_t port() const { return server_->port(); }

 private:
  std::unique_ptr<server::HttpServer> server_;
};

// A failing extender that is not ignorable makes every template reject the pod, with the
// failure kept as the reason (CA would drop it); an ignorable one is skipped with a warning.
// Skipping it also skips the device check on existing nodes, so (as in CA) the pending pod
// then "fits" the warm node whose GPUs are full and no scale-up is planned.
TEST(PlanOverHttp, ExtenderFailuresAreReasonsOrWarnings) {
  Example e;
  FailingExtender bad;
  Plan strict = plan_with(e, ca_config(bad.port()));
  EXPECT_EQ(strict.decision, Plan::Decision::kNoScaleUpPossible) << report::render_table(strict);
  for (const auto& g : strict.groups) {
    if (g.skip_reason.empty()) {
      ASSERT_EQ(g.rejected_pods.count("ml/trainer-2"), 1u) << g.name;
      EXPECT_NE(g.rejected_pods.at("ml/trainer-2").find("filter failed"), std::string::npos)
          << g.rejected_pods.at("ml/trainer-2");
    }
  }
  Plan lenient = plan_with(e, ca_config(bad.port(), "filter-simulation", true));
  EXPECT_EQ(lenient.decision, Plan::Decision::kNoScaleUpNeeded) << report::render_table(lenient);
  EXPECT_FALSE(lenient.warnings.empty());
  bool trainer_found = false;
  for (const auto& pod : lenient.pods) {
    if (pod.pod != "ml/trainer-2") continue;
    trainer_found = true;
    EXPECT_EQ(pod.state, PodOutcome::State::kFitsExistingNode);
  }
  EXPECT_TRUE(trainer_found);
}

// Issue 25: a non-ignorable extender failure is not hidden in per-group reasons: the plan
// lists it, its summary (the decision line) says so, and so does the JSON /v1/plan answers with.
TEST(PlanOverHttp, ANonIgnorableExtenderFailureIsInTheDecisionLineAndTheJson) {
  Example e;
  FailingExtender bad;
  Plan strict = plan_with(e, ca_config(bad.port()));
  ASSERT_FALSE(strict.extender_failures.empty()) << report::render_table(strict);
  EXPECT_NE(strict.extender_failures[0].find("filter failed"), std::string::npos);
  EXPECT_NE(strict.summary.find("an extender failed"), std::string::npos) << strict.summary;
  EXPECT_NE(report::render_json(strict).find("\"extenderFailed\":true"), std::string::npos);
  Plan lenient = plan_with(e, ca_config(bad.port(), "filter-simulation", true));
  EXPECT_TRUE(lenient.extender_failures.empty());
  EXPECT_NE(report::render_json(lenient).find("\"extenderFailed\":false"), std::string::npos);
}

// /v1/plan answers with exactly the JSON `hamisim plan -o json` prints for the same input.
TEST(PlanOverHttp, PlanRouteMatchesTheCli) {
  Example e;
  Serve serve(e.registry, e.profiles);
  auto yaml_json = [](const std::string& yaml) {
    auto j = model::yaml_to_json(yaml);
    EXPECT_TRUE(j) << j.error().message;
    return j.value_or("null");
  };
  const std::string body = "{\"cluster\":" + yaml_json(read_example("cluster.yaml")) +
                           ",\"nodeGroups\":" + yaml_json(read_example("node-groups.yaml")) +
                           ",\"options\":{\"expander\":\"least-waste\",\"seed\":7}}";
  auto r = http_request(serve.client(), "POST", "/v1/plan", body);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 200) << r->body;
  Plan local = plan_with(e, std::nullopt);
  EXPECT_EQ(r->body, report::render_json(local));

  auto bad = http_request(serve.client(), "POST", "/v1/plan",
                          "{\"cluster\":{\"kind\":\"List\",\"items\":[]},\"nodeGroups\":"
                          "{\"apiVersion\":\"hamisim.io/v1\",\"kind\":\"NodeGroups\","
                          "\"nodeGroups\":[]},\"options\":{\"expandr\":\"x\"}}");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("invalid request: options.expandr: unknown option"), std::string::npos)
      << bad->body;
}

// /v1/plan reads DRA objects from `cluster` as `plan --cluster` does: a pod whose claim comes
// from a template shares the node's one HAMi GPU (20000 MiB, 25 cores of 80Gi, 100). A DRA
// object the strict decoder refuses is a 400 naming the item.
TEST(PlanOverHttp, PlanRouteReadsDraObjects) {
  Example e;
  Serve serve(e.registry, e.profiles);
  const std::string slice = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
    "metadata":{"name":"gpu-node-1-hami"},"spec":{"driver":"hami-core-gpu.project-hami.io",
    "nodeName":"gpu-node-1","pool":{"name":"gpu-node-1","generation":1,"resourceSliceCount":1},
    "devices":[{"name":"hami-gpu-0","allowMultipleAllocations":true,
      "attributes":{"type":{"string":"hami-gpu"}},"capacity":{
      "cores":{"value":"100","requestPolicy":{"default":"100","validRange":{"min":"0","max":"100","step":"1"}}},
      "memory":{"value":"80Gi","requestPolicy":{"default":"80Gi","validRange":{"min":"1Mi","step":"1Mi"}}}}}]}})";
  const std::string device_class = R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",
    "metadata":{"name":"hami-gpu"},"spec":{"selectors":[{"cel":{"expression":
    "device.attributes['hami-core-gpu.project-hami.io'].type == 'hami-gpu'"}}]}})";
  const std::string claim_template = R"({"apiVersion":"resource.k8s.io/v1",
    "kind":"ResourceClaimTemplate","metadata":{"name":"share","namespace":"ml"},
    "spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"hami-gpu",
    "capacity":{"requests":{"memory":"20971520000","cores":"25"}}}}]}}}})";
  const std::string node = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-node-1",
    "labels":{"pool":"gpu"}},"status":{"allocatable":{"cpu":"8","memory":"32Gi","pods":"110"},
    "conditions":[{"type":"Ready","status":"True"}]}})";
  const std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml"},
    "spec":{"containers":[{"name":"main"}],
    "resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"share"}]}})";
  const std::string groups = R"({"apiVersion":"hamisim.io/v1","kind":"NodeGroups",
    "nodeGroups":[{"name":"gpu","minSize":1,"maxSize":3,"members":{"pool":"gpu"}}]})";
  auto body = [&](const std::string& cls) {
    return R"({"cluster":{"kind":"List","items":[)" + node + "," + slice + "," + cls + "," +
           claim_template + "," + pod + R"(]},"nodeGroups":)" + groups + "}";
  };
  auto r = http_request(serve.client(), "POST", "/v1/plan", body(device_class));
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_NE(r->body.find(R"("node":"gpu-node-1")"), std::string::npos) << r->body;

  std::string bad_class = device_class;
  bad_class.replace(bad_class.find("\"spec\""), 6, "\"spek\"");
  r = http_request(serve.client(), "POST", "/v1/plan", body(bad_class));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("cluster: items[2]"), std::string::npos) << r->body;
}

// /v1/plan reads its parts by the rules `hamisim plan` reads files by (issue #44): a key
// repeated inside a DRA object is refused by the strict DRA decoder (it once reached the
// decoder with the last value only: 7 pods placed where the CLI refused the slice); repeated
// keys of the request itself have no meaning and are refused; so are negative limits.
TEST(PlanOverHttp, PlanRouteIsAsStrictAsTheCli) {
  Example e;
  Serve serve(e.registry, e.profiles);
  const std::string slice = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",)"
                            R"("metadata":{"name":"s"},"spec":{"driver":"a.example.com",)"
                            R"("driver":"b.example.com","nodeName":"n","pool":{"name":"n",)"
                            R"("generation":1,"resourceSliceCount":1},"devices":[]}})";
  const std::string groups = R"({"apiVersion":"hamisim.io/v1","kind":"NodeGroups",)"
                             R"("nodeGroups":[{"name":"g","minSize":0,"maxSize":3,)"
                             R"("members":{"pool":"gpu"}}]})";
  auto post = [&](const std::string& body) {
    auto r = http_request(serve.client(), "POST", "/v1/plan", body);
    EXPECT_TRUE(r) << r.error().message;
    return r.value_or(hamisim::testing::ClientResponse{});
  };
  auto r =
      post(R"({"cluster":{"kind":"List","items":[)" + slice + R"(]},"nodeGroups":)" + groups + "}");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find(R"(cluster: items[0])"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"(repeated field \"driver\")"), std::string::npos) << r.body;
  // The same text as a `plan --cluster` file is refused the same way.
  auto objects =
      model::decode_objects_json(R"({"kind":"List","items":[)" + slice + "]}", {.dra = true});
  ASSERT_TRUE(objects) << objects.error().message;
  dra::Objects dra_objects;
  Status cli = dra::decode_objects(objects->dra_objects, dra_objects);
  ASSERT_FALSE(cli.ok());
  EXPECT_NE(cli.error().message.find("repeated field \"driver\""), std::string::npos)
      << cli.error().message;

  const std::string empty = R"({"kind":"List","items":[]})";
  for (auto [body, want] : std::vector<std::pair<std::string, std::string>>{
           {R"({"cluster":)" + empty + R"(,"nodeGroups":)" + groups + R"(,"cluster":)" + empty +
                "}",
            R"(invalid request: body: duplicate key \"cluster\")"},
           {R"({"cluster":)" + empty + R"(,"nodeGroups":)" + groups +
                R"(,"options":{"seed":1,"seed":2}})",
            R"(invalid request: options: duplicate key \"seed\")"},
           {R"({"cluster":)" + empty + R"(,"nodeGroups":)" + groups +
                R"(,"options":{"maxNodesTotal":-5}})",
            "invalid request: options.maxNodesTotal: must be a non-negative integer"},
           {R"({"cluster":)" + empty +
                R"(,"nodeGroups":{"apiVersion":"hamisim.io/v1",)"
                R"("apiVersion":"hamisim.io/v1","kind":"NodeGroups","nodeGroups":[]}})",
            "duplicate"},
           {R"({"cluster":)" + empty + "", "invalid request: body is not JSON: "},
           {R"([])", "invalid request: body: must be an object"}}) {
    SCOPED_TRACE(body);
    r = post(body);
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(r.body.find(want), std::string::npos) << r.body;
  }
  // The envelope without repetitions is fine.
  r = post(R"({"cluster":)" + empty + R"(,"nodeGroups":)" + groups +
           R"(,"options":{"maxNodesTotal":0}})");
  EXPECT_EQ(r.status, 200) << r.body;
}

// The example's K80 node as a CA template, and a trainer pod (1 GPU, 8000 MiB).
std::pair<boost::json::value, boost::json::value> k80_template_and_trainer() {
  auto cluster = model::yaml_to_json(read_example("cluster.yaml"));
  EXPECT_TRUE(cluster);
  auto list = boost::json::parse(cluster.value_or("{\"items\":[]}")).as_object();
  boost::json::value k80, trainer;
  for (const auto& item : list["items"].as_array()) {
    const auto& name = item.at("metadata").at("name").as_string();
    if (name == "k80-node-1") k80 = item;
    if (name == "trainer-2") trainer = item;
  }
  EXPECT_TRUE(k80.is_object() && trainer.is_object());
  if (k80.is_object()) {
    k80.as_object()["metadata"].as_object()["name"] = "template-node-for-gpu-k80-0";
  }
  return {k80, trainer};
}

// /v1/estimate packs pods onto copies of one template, standard resources and devices together.
TEST(PlanOverHttp, EstimateRoute) {
  Example e;
  Serve serve(e.registry, e.profiles);
  auto [k80, trainer] = k80_template_and_trainer();
  boost::json::array pods;
  for (int i = 0; i < 5; ++i) {
    boost::json::value p = trainer;
    p.as_object()["metadata"].as_object()["name"] = "t-" + std::to_string(i);
    pods.push_back(p);
  }
  boost::json::object req{{"template", k80}, {"pods", pods}, {"maxNodes", 2}};
  auto r = http_request(serve.client(), "POST", "/v1/estimate", boost::json::serialize(req));
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->status, 200) << r->body;
  auto out = boost::json::parse(r->body).as_object();
  // One 8000 MiB pod per 11441 MiB K80 entry, two per node, at most two nodes: 4 of 5 placed.
  EXPECT_EQ(out["nodeCount"].as_int64(), 2);
  EXPECT_EQ(out["placements"].as_array().size(), 4u);
  ASSERT_EQ(out["unplaced"].as_array().size(), 1u);
  EXPECT_EQ(out["placements"].as_array()[1].at("node").as_string(),
            "template-node-for-gpu-k80-0-e-0");
  EXPECT_FALSE(out["placements"].as_array()[0].at("allocations").as_object().empty());

  auto bad = http_request(serve.client(), "POST", "/v1/estimate", "{\"pods\":[]}");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("invalid request: template"), std::string::npos) << bad->body;
}

// A Pod in a what-if request is decoded from its own text, as from a file: repeated keys merge
// as Go's decoder merges them (both halves of a repeated `metadata` count), where a parsed and
// re-serialized body kept only the last.
TEST(PlanOverHttp, EstimatePodsAreDecodedAsGoDecodesThem) {
  Example e;
  Serve serve(e.registry, e.profiles);
  auto [k80, trainer] = k80_template_and_trainer();
  const std::string spec = boost::json::serialize(trainer.at("spec"));
  const std::string pod =
      R"({"metadata":{"name":"dup"},"metadata":{"namespace":"ml"},"spec":)" + spec + "}";
  const std::string body =
      R"({"template":)" + boost::json::serialize(k80) + R"(,"pods":[)" + pod + R"(],"maxNodes":1})";
  auto r = http_request(serve.client(), "POST", "/v1/estimate", body);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->status, 200) << r->body;
  auto out = boost::json::parse(r->body).as_object();
  ASSERT_EQ(out["placements"].as_array().size(), 1u) << r->body;
  EXPECT_EQ(out["placements"].as_array()[0].at("pod").as_string(), "ml/dup");

  auto twice =
      http_request(serve.client(), "POST", "/v1/estimate",
                   R"({"pods":[],"template":)" + boost::json::serialize(k80) + R"(,"pods":[]})");
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->status, 400);
  EXPECT_NE(twice->body.find(R"(body: duplicate key \"pods\")"), std::string::npos) << twice->body;
}

// An unplaced pod's reason summarizes the copies that rejected it (counts and a few names), so
// the answer grows with the request, not with pods x nodes: 520 pods that fit none of 40
// copies used to carry 40 node reasons each.
TEST(PlanOverHttp, EstimateReasonsDoNotGrowWithTheNodeCount) {
  Example e;
  Serve serve(e.registry, e.profiles);
  auto [k80, trainer] = k80_template_and_trainer();
  boost::json::array pods;
  for (int i = 0; i < 600; ++i) {
    boost::json::value p = trainer;
    p.as_object()["metadata"].as_object()["name"] = "t-" + std::to_string(i);
    if (i >= 80) {
      // Too big for any K80, packed after the trainers (smaller CPU and memory requests): the
      // first of them finds the node limit reached; the rest, another equivalence group, are
      // tried on every copy there is.
      auto& resources =
          p.as_object()["spec"].as_object()["containers"].as_array()[0].as_object()["resources"];
      resources.as_object()["requests"] =
          boost::json::object{{"cpu", i == 80 ? "1" : "500m"}, {"memory", "1Gi"}};
      resources.as_object()["limits"].as_object()["nvidia.com/gpumem"] = 12000;
    }
    pods.push_back(p);
  }
  const std::string body = boost::json::serialize(
      boost::json::object{{"template", k80}, {"pods", pods}, {"maxNodes", 40}});
  auto r = http_request(serve.client(), "POST", "/v1/estimate", body);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->status, 200) << r->body.substr(0, 500);
  auto out = boost::json::parse(r->body).as_object();
  EXPECT_EQ(out["nodeCount"].as_int64(), 40);
  const auto& unplaced = out["unplaced"].as_array();
  ASSERT_EQ(unplaced.size(), 600u - 80u);
  // Tried on the 40 copies and rejected by all: one summarized line instead of one per copy.
  const std::string reason(unplaced.back().at("reason").as_string());
  EXPECT_NE(reason.find("40 nodes (template-node-for-gpu-k80-0-e-"), std::string::npos) << reason;
  EXPECT_NE(reason.find(", ...): "), std::string::npos) << reason;
  EXPECT_LT(reason.size(), 400u) << reason;
  EXPECT_LT(r->body.size(), body.size()) << "the answer outgrew the request";
}

}  // namespace
}  // namespace hamisim::planner::scaleup
