// The CA-side extender chain (reference §3.7, spec §6.3) against the real `hamisim serve`
// routes and against scripted, misbehaving extenders, all over loopback HTTP.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "extender/extender_chain.h"
#include "extender_fixtures.h"
#include "fake_extender.h"
#include "model/decode.h"

namespace hamisim::extender {
namespace extender_chain_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::LiveService;
using testing::nodes_result;
using testing::ScriptedExtender;
using testing::sent_node_names;
using namespace std::chrono_literals;

constexpr const char* kRegister = "hami.io/node-nvidia-register";

const std::vector<ManagedResource> kHamiResources = {{"nvidia.com/gpu", false},
                                                     {"nvidia.com/gpumem", true},
                                                     {"nvidia.com/gpucores", true},
                                                     {"nvidia.com/gpumem-percentage", true}};

// A pod as the planner holds it: decoded, plus the JSON sent to extenders.
struct TestPod {
  std::string json;
  model::Pod pod;
  explicit TestPod(std::string j) : json(std::move(j)) {
    auto p = model::decode_pod_json(json);
    EXPECT_TRUE(p) << p.error().message;
    if (p) pod = *p;
  }
};

TestPod gpu_pod(const std::string& name, const std::string& gpumem) {
  return TestPod(hamisim::testing::pod_json(
      name,
      {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem", gpumem}, {"nvidia.com/gpucores", "40"}}));
}
TestPod cpu_pod() {
  return TestPod(hamisim::testing::pod_json("cpu-only", {{"cpu", "1"}}));
}

struct Nodes {
  std::vector<std::string> names;
  std::vector<std::string> json;
  std::vector<CandidateNode> candidates;
  void add(const std::string& name, bool registered = true, int devmem = 11441) {
    names.push_back(name);
    hamisim::testing::Annotations a;
    if (registered) a[kRegister] = hamisim::testing::k80_register(2, 10, devmem);
    json.push_back(hamisim::testing::node_json(name, a));
  }
  std::span<const CandidateNode> span() {
    candidates.clear();
    for (size_t i = 0; i < names.size(); ++i) candidates.push_back({names[i], json[i]});
    return candidates;
  }
};

ExtenderConfig extender(const std::string& url, const std::string& verb,
                        std::vector<ManagedResource> managed = kHamiResources) {
  ExtenderConfig c;
  c.url_prefix = url;
  c.filter_verb = verb;
  c.managed_resources = std::move(managed);
  return c;
}

ExtenderChain chain_of(std::vector<ExtenderConfig> extenders) {
  SchedulerConfig config;
  config.profiles.emplace_back();
  config.extenders = std::move(extenders);
  auto chain = ExtenderChain::create(config);
  if (!chain) throw std::runtime_error(chain.error().message);
  return std::move(*chain);
}

server::HttpResponse json(std::string body, int status = 200) {
  return server::HttpResponse::json(status, std::move(body));
}

// ---- against the real extender: the design document's seed scenarios ----------------------

TEST(ExtenderChainLive, SeedScenarioFits) {
  LiveService live;
  auto chain = chain_of({extender(live.url(), "filter-simulation")});
  Nodes nodes;
  nodes.add("template-node-a");
  const TestPod pod = gpu_pod("gpu-workload", "300");
  auto r = chain.filter(pod.pod, pod.json, nodes.span());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->consulted);
  EXPECT_THAT(r->survivors, ElementsAre("template-node-a"));
  EXPECT_THAT(r->rejections, IsEmpty());
  ASSERT_TRUE(r->allocations.count("template-node-a"));
  EXPECT_TRUE(r->allocations.at("template-node-a").count("hami.io/vgpu-devices-allocated"));
  ASSERT_EQ(r->calls.size(), 1u);
  EXPECT_EQ(r->calls[0].diagnostics.at("template-node-a").fit_class, "Fits");
}

TEST(ExtenderChainLive, SeedScenarioDoesNotFit) {
  LiveService live;
  auto chain = chain_of({extender(live.url(), "filter-simulation")});
  Nodes nodes;
  nodes.add("template-node-a");
  const TestPod pod = gpu_pod("gpu-workload", "12000");
  auto r = chain.filter(pod.pod, pod.json, nodes.span());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_THAT(r->survivors, IsEmpty());
  ASSERT_TRUE(r->rejections.count("template-node-a"));
  const NodeRejection& why = r->rejections.at("template-node-a");
  EXPECT_EQ(why.reason, "2/2 CardInsufficientMemory");
  EXPECT_FALSE(why.unresolvable);
  EXPECT_EQ(why.extender, live.url());
  EXPECT_THAT(r->allocations, IsEmpty());
}

TEST(ExtenderChainLive, SeedScenarioUnregistered) {
  LiveService live;
  auto chain = chain_of({extender(live.url(), "filter-simulation")});
  Nodes nodes;
  nodes.add("template-node-a", /*registered=*/false);
  const TestPod pod = gpu_pod("gpu-workload", "300");
  auto r = chain.filter(pod.pod, pod.json, nodes.span());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_THAT(r->survivors, IsEmpty());
  EXPECT_EQ(r->rejections.at("template-node-a").reason, "node unregistered");
}

TEST(ExtenderChainLive, SeveralCandidatesKeepCandidateOrder) {
  LiveService live;
  auto chain = chain_of({extender(live.url(), "filter-simulation")});
  Nodes nodes;
  nodes.add("n-3");
  nodes.add("n-1", /*registered=*/false);
  nodes.add("n-2");
  nodes.add("n-0", true, /*devmem=*/100);
  const TestPod pod = gpu_pod("gpu-workload", "300");
  auto r = chain.filter(pod.pod, pod.json, nodes.span());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_THAT(r->survivors, ElementsAre("n-3", "n-2"));
  EXPECT_EQ(r->rejections.at("n-1").reason, "node unregistered");
  EXPECT_EQ(r->rejections.at("n-0").reason, "2/2 CardInsufficientMemory");
}

// Binpacking through the extension: allocations sent back as SimulatedPods fill the node.
TEST(ExtenderChainLive, AllocationsSentBackAsSimulatedPodsFillTheNode) {
  LiveService live;
  auto chain = chain_of({extender(live.url(), "filter-simulation")});
  Nodes nodes;
  nodes.add("template-node-a");  // two K80s of 11441 MiB
  SimulatedPods placed;
  int fitted = 0;
  for (int i = 0; i < 4; ++i) {
    const TestPod pod = gpu_pod("p" + std::to_string(i), "11000");
    auto r = chain.filter(pod.pod, pod.json, nodes.span(), &placed);
    ASSERT_TRUE(r) << r.error().message;
    if (r->survivors.empty()) {
      EXPECT_EQ(r->rejections.at("template-node-a").reason, "2/2 CardInsufficientMemory");
      break;
    }
    ++fitted;
    std::map<std::string, std::string> annotations(r->allocations.at("template-node-a").begin(),
                                                   r->allocations.at("template-node-a").end());
    placed["template-node-a"].push_back(
        hamisim::testing::placed_pod_json("p" + std::to_string(i), annotations));
  }
  EXPECT_EQ(fitted, 2);
}

// ---- interest and the fast path ------------------------------------------------------------

TEST(ExtenderChain, FastPathWhenNoExtenderIsInterested) {
  ScriptedExtender fake(
      {{"/filter", [](const server::HttpRequest&) { return json(nodes_result({})); }}});
  auto chain = chain_of({extender(fake.url(), "filter")});
  Nodes nodes;
  nodes.add("a");
  nodes.add("b");
  const TestPod pod = cpu_pod();
  EXPECT_FALSE(chain.interested(pod.pod));
  auto r = chain.filter(pod.pod, pod.json, nodes.span());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->consulted);
  EXPECT_THAT(r->survivors, ElementsAre("a", "b"));
  EXPECT_EQ(fake.calls(), 0);
}

TEST(ExtenderChain, EmptyManagedResourcesMeansInterestedInEveryPod) {
  ScriptedExtender fake(
      {{"/filter", [](const server::HttpRequest&) { return json(nodes_result({"b"})); }}});
  auto chain = chain_of({extender(fake.url(), "filter", {})});
  Nodes nodes;
  nodes.add("a");
  nodes.add("b");
  const TestPod pod = cpu_pod();
  EXPECT_TRUE(chain.interested(pod.pod));
  auto r = chain.filter(pod.pod, pod.json, nodes.span());
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->consulted);
  EXPECT_THAT(r->survivors, ElementsAre("b"));
  EXPECT_EQ(fake.calls(), 1);
  EXPECT_EQ(r->rejections.at("a").reason, "");  // dropped without a reason
}

TEST(ExtenderChain, ExtenderWithoutFilterVerbIsNeverConsulted) {
  ScriptedExtender fake({});
  auto chain = chain_of({extender(fake.url(), "", {})});
  Nodes nodes;
  nodes.add("a");
  const TestPod pod = gpu_pod("p", "1");
  EXPECT_FALSE(chain.interested(pod.pod));
  auto r = chain.filter(pod.pod, pod.json, nodes.span());
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->consulted);
  EXPECT_THAT(r->survivors, ElementsAre("a"));
  EXPECT_EQ(fake.calls(), 0);
}

TEST(ExtenderChain, NoCandidatesNoCalls) {
  ScriptedExtender fake(
      {{"/filter", [](const server::HttpRequest&) { return json(nodes_result({})); }}});
  auto chain = chain_of({extender(fake.url(), "filter", {})});
  const TestPod pod = gpu_pod("p", "1");
  auto r = chain.filter(pod.pod, pod.json, {});
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->consulted);
  EXPECT_EQ(fake.calls(), 0);
}

// ---- order ---------------------------------------------------------------------------------

TEST(ExtenderChain, EachExtenderSeesOnlyThePreviousSurvivorsInConfigOrder) {
  ScriptedExtender first(
      {{"/first", [](const server::HttpRequest&) {
          // Returned out of order: survivors keep candidate order.
          return json(nodes_result({"d", "b"}, R"({"a":"first says no"})", R"({"c":"never"})"));
        }}});
  ScriptedExtender second({{"/second", [](const server::HttpRequest&) {
                              return json(nodes_result({"d"}, R"({"b":"second says no"})"));
                            }}});
  // The second one is ignorable: CA-exp does not move it last, so order stays as configured.
  auto second_cfg = extender(second.url(), "second", {});
  second_cfg.ignorable = true;
  auto chain = chain_of({extender(first.url(), "first"), second_cfg});
  Nodes nodes;
  for (const char* n : {"a", "b", "c", "d"}) nodes.add(n);
  const TestPod pod = gpu_pod("p", "1");
  auto r = chain.filter(pod.pod, pod.json, nodes.span());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_THAT(r->survivors, ElementsAre("d"));
  ASSERT_EQ(first.requests().size(), 1u);
  ASSERT_EQ(second.requests().size(), 1u);
  EXPECT_THAT(sent_node_names(first.requests()[0].body), ElementsAre("a", "b", "c", "d"));
  EXPECT_THAT(sent_node_names(second.requests()[0].body), ElementsAre("b", "d"));
  // The second extender gets the planner's own Node objects, not the first one's echo.
  EXPECT_THAT(second.requests()[0].body, HasSubstr(nodes.json[1]));

  EXPECT_EQ(r->rejections.at("a").reason, "first says no");
  EXPECT_EQ(r->rejections.at("a").extender_index, 0u);
  EXPECT_EQ(r->rejections.at("c").reason, "never");
  EXPECT_TRUE(r->rejections.at("c").unresolvable);
  EXPECT_EQ(r->rejections.at("b").reason, "second says no");
  EXPECT_EQ(r->rejections.at("b").extender_index, 1u);
  ASSERT_EQ(r->calls.size(), 2u);
  EXPECT_EQ(r->calls[0].candidates, 4u);
  EXPECT_THAT(r->calls[0].passed, ElementsAre("b", "d"));
  EXPECT_EQ(r->calls[1].candidates, 2u);
}

TEST(ExtenderChain, UnresolvableReasonWinsOverFailed) {
  ScriptedExtender fake({{"/filter", [](const server::HttpRequest&) {
                            return json(nodes_result({}, R"({"a":"maybe"})", R"({"a":"never"})"));
                          }}});
  auto chain = chain_of({extender(fake.url(), "filter", {})});
  Nodes nodes;
  nodes.add("a");
  const TestPod pod = cpu_pod();
  auto r = chain.filter(pod.pod, pod.json, nodes.span());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rejections.at("a").reason, "never");
  EXPECT_TRUE(r->rejections.at("a").unresolvable);
  EXPECT_EQ(r->calls[0].failed_nodes.at("a"), "maybe");
}

TEST(ExtenderChain, StopsWhenNoCandidateIsLeft) {
  ScriptedExtender first(
      {{"/filter", [](const server::HttpRequest&) { return json(nodes_result({})); }}});
  ScriptedExtender second(
      {{"/filter", [](const server::HttpRequest&) { return json(nodes_result({"a"})); }}});
  auto chain =
      chain_of({extender(first.url(), "filter", {}), extender(second.url(), "filter", {})});
  Nodes nodes;
  nodes.add("a");
  const TestPod pod = cpu_pod();
  auto r = chain.filter(pod.pod, pod.json, nodes.span());
  ASSERT_TRUE(r);
  EXPECT_THAT(r->survivors, IsEmpty());
  EXPECT_EQ(second.calls(), 0);
}

TEST(ExtenderChain, NamesThatWereNotCandidatesAreDroppedWithAWarning) {
  ScriptedExtender fake(
      {{"/filter", [](const server::HttpRequest&) { return json(nodes_result({"a", "ghost"})); }}});
  auto chain = chain_of({extender(fake.url(), "filter", {})});
  Nodes nodes;
  nodes.add("a");
  const TestPod pod = cpu_pod();
  auto r = chain.filter(pod.pod, pod.json, nodes.span());
  ASSERT_TRUE(r);
  EXPECT_THAT(r->survivors, ElementsAre("a"));
  EXPECT_THAT(r->calls[0].unknown_nodes, ElementsAre("ghost"));
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_THAT(r->warnings[0].message, HasSubstr("\"ghost\""));
}

// ---- misbehaving extenders: ignorable or not ----------------------------------------------

struct Misbehaviour {
  const char* name;
  std::function<server::HttpResponse(const server::HttpRequest&)> script;
  bool node_cache_capable;
  const char* error_part;
};

std::vector<Misbehaviour> misbehaviours() {
  return {
      {"Timeout",
       [](const server::HttpRequest&) {
         std::this_thread::sleep_for(1s);
         return json(nodes_result({"a"}));
       },
       false, "timeout after 200ms"},
      {"ErrorSet",
       [](const server::HttpRequest&) {
         return json(R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,)"
                     R"("FailedAndUnresolvableNodes":null,"Error":"calcScore failed"})");
       },
       false, "calcScore failed"},
      {"Non200", [](const server::HttpRequest&) { return json("{}", 500); }, false, "code 500"},
      {"UnknownNodeName",
       [](const server::HttpRequest&) { return json(R"({"NodeNames":["a","ghost"]})"); }, true,
       "claims a filtered node \"ghost\""},
      {"GarbageJson", [](const server::HttpRequest&) { return json("{not json"); }, false,
       "failed to decode filter response"},
  };
}

TEST(ExtenderChain, NonIgnorableExtenderErrorsFailTheEvaluation) {
  for (const auto& m : misbehaviours()) {
    SCOPED_TRACE(m.name);
    ScriptedExtender fake({{"/filter", m.script}});
    auto cfg = extender(fake.url(), "filter", {});
    // Only the Timeout case may time out: the others get a generous limit so that a slow
    // (sanitized, loaded) machine cannot turn their answer into a timeout.
    cfg.http_timeout = std::string_view(m.name) == "Timeout" ? 200ms : 30s;
    cfg.node_cache_capable = m.node_cache_capable;
    auto chain = chain_of({cfg});
    Nodes nodes;
    nodes.add("a");
    nodes.add("b");
    const TestPod pod = cpu_pod();
    auto r = chain.filter(pod.pod, pod.json, nodes.span());
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr("extender \"" + fake.url() + "\" filter failed: "));
    EXPECT_THAT(r.error().message, HasSubstr(m.error_part));
  }
}

TEST(ExtenderChain, IgnorableExtenderErrorsKeepTheCandidatesWithAWarning) {
  for (const auto& m : misbehaviours()) {
    SCOPED_TRACE(m.name);
    ScriptedExtender fake({{"/filter", m.script}});
    ScriptedExtender next(
        {{"/filter", [](const server::HttpRequest&) { return json(nodes_result({"b"})); }}});
    auto cfg = extender(fake.url(), "filter", {});
    // Only the Timeout case may time out: the others get a generous limit so that a slow
    // (sanitized, loaded) machine cannot turn their answer into a timeout.
    cfg.http_timeout = std::string_view(m.name) == "Timeout" ? 200ms : 30s;
    cfg.node_cache_capable = m.node_cache_capable;
    cfg.ignorable = true;
    auto chain = chain_of({cfg, extender(next.url(), "filter", {})});
    Nodes nodes;
    nodes.add("a");
    nodes.add("b");
    const TestPod pod = cpu_pod();
    auto r = chain.filter(pod.pod, pod.json, nodes.span());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_THAT(r->survivors, ElementsAre("b"));
    ASSERT_EQ(next.requests().size(), 1u);
    EXPECT_THAT(sent_node_names(next.requests()[0].body), ElementsAre("a", "b"));
    ASSERT_EQ(r->warnings.size(), 1u);
    EXPECT_EQ(r->warnings[0].extender, fake.url());
    EXPECT_THAT(r->warnings[0].message, HasSubstr(m.error_part));
    ASSERT_TRUE(r->calls[0].ignored_error.has_value());
  }
}

TEST(ExtenderChain, UnbuildableExtenderFailsTheChain) {
  SchedulerConfig config;
  config.profiles.emplace_back();
  ExtenderConfig e = extender("https://127.0.0.1:1", "filter");
  e.tls_config.emplace();
  e.tls_config->ca_file = "/nonexistent/ca.crt";
  config.extenders.push_back(e);
  auto chain = ExtenderChain::create(config);
  ASSERT_FALSE(chain);
  EXPECT_THAT(chain.error().message,
              HasSubstr("couldn't create HTTP extender for \"https://127.0.0.1:1\": "));
}

}  // namespace extender_chain_test
}  // namespace hamisim::extender
