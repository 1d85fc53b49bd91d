// The simulation filter (product spec §5.1–§5.4), called directly: every answer the HTTP route
// gives comes from here.

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "device/catalog/device_config.h"
#include "extender_fixtures.h"
#include "model/decode.h"
#include "server/simulation_filter.h"

namespace hamisim::server {
namespace {

using testing::args_json;
using testing::ArgsSpec;
using testing::k80_register;
using testing::node_json;
using testing::placed_pod_json;
using testing::pod_json;

constexpr const char* kRegister = "hami.io/node-nvidia-register";

class SimulationFilterTest : public ::testing::Test {
 protected:
  SimulationFilterTest()
      : registry_(device::build_registry({})), engine_(registry_, nullptr), filter_(engine_) {}

  boost::json::object run(const std::string& body) {
    last_ = filter_.filter(body);
    boost::json::value v = boost::json::parse(last_.body);
    return v.as_object();
  }
  static std::string error_of(const boost::json::object& r) {
    return std::string(r.at("Error").as_string());
  }
  static std::vector<std::string> node_names(const boost::json::object& r) {
    std::vector<std::string> out;
    if (r.at("Nodes").is_null()) return out;
    for (const auto& item : r.at("Nodes").as_object().at("items").as_array()) {
      out.emplace_back(item.as_object().at("metadata").as_object().at("name").as_string());
    }
    return out;
  }

  device::DeviceRegistry registry_;
  engine::Engine engine_;
  SimulationFilter filter_;
  SimulationResult last_;
};

std::string seed_pod(const std::string& gpumem) {
  return pod_json(
      "gpu-workload",
      {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem", gpumem}, {"nvidia.com/gpucores", "40"}});
}

// Design document, manual /filter check 1: gpu=1, gpumem=300, gpucores=40 fits the template.
TEST_F(SimulationFilterTest, SeedScenarioPodFitsTemplateWithTwoK80Entries) {
  ArgsSpec spec;
  spec.pod = seed_pod("300");
  spec.nodes = {node_json("template-node-a", {{kRegister, k80_register()}})};
  auto r = run(args_json(spec));
  EXPECT_EQ(error_of(r), "");
  EXPECT_EQ(node_names(r), std::vector<std::string>{"template-node-a"});
  EXPECT_TRUE(r.at("FailedNodes").as_object().empty());
  EXPECT_TRUE(r.at("NodeNames").is_null());
  EXPECT_TRUE(r.at("FailedAndUnresolvableNodes").is_null());
  const auto& alloc = r.at("Allocations").as_object().at("template-node-a").as_object();
  // spread (the default GPU policy) picks the idlest GPU; both are idle, the scan starts from
  // the end of the sorted list, so the second registered GPU is taken.
  EXPECT_EQ(alloc.at("hami.io/vgpu-devices-allocated").as_string(), "GPU-K80-1,NVIDIA,300,40:;");
  EXPECT_EQ(alloc.at("hami.io/vgpu-devices-to-allocate").as_string(), "GPU-K80-1,NVIDIA,300,40:;");
  const auto& diag = r.at("Diagnostics").as_object().at("template-node-a").as_object();
  EXPECT_EQ(diag.at("Class").as_string(), "Fits");
  EXPECT_EQ(diag.at("DeviceSource").as_string(), "annotation");
}

// Design document, manual check 2: gpumem=12000 against devmem 11441 on both entries.
TEST_F(SimulationFilterTest, SeedScenarioTooMuchMemoryFailsWithCardInsufficientMemory) {
  ArgsSpec spec;
  spec.pod = seed_pod("12000");
  spec.nodes = {node_json("template-node-a", {{kRegister, k80_register()}})};
  auto r = run(args_json(spec));
  EXPECT_EQ(error_of(r), "");
  EXPECT_TRUE(node_names(r).empty());
  EXPECT_EQ(r.at("FailedNodes").as_object().at("template-node-a").as_string(),
            "2/2 CardInsufficientMemory");
  EXPECT_EQ(
      r.at("Diagnostics").as_object().at("template-node-a").as_object().at("Class").as_string(),
      "InsufficientCapacity");
  EXPECT_FALSE(r.at("Allocations").as_object().contains("template-node-a"));
}

// Design document, manual check 3: without hami.io/node-nvidia-register.
TEST_F(SimulationFilterTest, SeedScenarioMissingRegistrationIsNodeUnregistered) {
  ArgsSpec spec;
  spec.pod = seed_pod("300");
  spec.nodes = {node_json("template-node-a", {})};
  auto r = run(args_json(spec));
  EXPECT_EQ(r.at("FailedNodes").as_object().at("template-node-a").as_string(), "node unregistered");
  EXPECT_EQ(
      r.at("Diagnostics").as_object().at("template-node-a").as_object().at("Class").as_string(),
      "NoDeviceDescription");
}

// Spec §5.3: a registration that cannot be decoded is not collapsed into "node unregistered".
TEST_F(SimulationFilterTest, MalformedRegistrationIsReportedWithTheDecoderMessage) {
  ArgsSpec spec;
  spec.pod = seed_pod("300");
  spec.nodes = {node_json("n1", {{kRegister, "[{\"id\":\"GPU-0\",\"devmem\":1.5}]"}})};
  auto r = run(args_json(spec));
  const auto& diag = r.at("Diagnostics").as_object().at("n1").as_object();
  EXPECT_EQ(diag.at("Class").as_string(), "MalformedDeviceDescription");
  EXPECT_NE(std::string(diag.at("Reason").as_string()).find("devmem"), std::string::npos)
      << diag.at("Reason").as_string();
  const std::string failed(r.at("FailedNodes").as_object().at("n1").as_string());
  EXPECT_NE(failed, "node unregistered");
  EXPECT_EQ(failed.rfind("malformed device registration: ", 0), 0u) << failed;
}

// Spec §5.1: every feasible node, in request order, not just the best one.
TEST_F(SimulationFilterTest, ReturnsEveryFeasibleNodeInRequestOrder) {
  ArgsSpec spec;
  spec.pod = seed_pod("5000");
  spec.nodes = {node_json("c", {{kRegister, k80_register(1)}}),
                node_json("a", {{kRegister, k80_register(1, 10, 4000)}}),
                node_json("b", {{kRegister, k80_register(2)}})};
  auto r = run(args_json(spec));
  EXPECT_EQ(node_names(r), (std::vector<std::string>{"c", "b"}));
  EXPECT_EQ(r.at("FailedNodes").as_object().at("a").as_string(), "1/1 CardInsufficientMemory");
  EXPECT_EQ(last_.outcomes.size(), 3u);
}

// Only device resources must fit HAMi's 32-bit fields.
TEST_F(SimulationFilterTest, LargeQuantitiesOfOtherResourcesAreAccepted) {
  ArgsSpec spec;
  spec.pod = pod_json("p", {{"memory", "64Gi"},
                            {"ephemeral-storage", "-1"},
                            {"nvidia.com/gpu", "1"},
                            {"nvidia.com/gpumem", "300"}});
  spec.nodes = {node_json("a", {{kRegister, k80_register()}})};
  auto r = run(args_json(spec));
  EXPECT_EQ(error_of(r), "");
  EXPECT_EQ(node_names(r), (std::vector<std::string>{"a"}));
}

// Spec §3: a pod without HAMi resources passes every node and Nodes is echoed.
TEST_F(SimulationFilterTest, PodWithoutManagedDevicesPassesEveryNode) {
  ArgsSpec spec;
  spec.pod = pod_json("cpu-only", {{"cpu", "2"}});
  spec.nodes = {node_json("x", {}), node_json("y", {{kRegister, k80_register()}})};
  auto r = run(args_json(spec));
  EXPECT_EQ(node_names(r), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(r.at("Diagnostics").as_object().at("x").as_object().at("Class").as_string(),
            "NotInterested");
}

// Spec §5.2: the caller packs pods onto one template by sending back the allocations; the
// node count follows from the devices, not from a server-side session.
TEST_F(SimulationFilterTest, SimulatedPodsPackATemplateUntilItIsFull) {
  const std::string node = node_json("template-node-for-gpu-0", {{kRegister, k80_register()}});
  const std::string pod = pod_json(
      "replica",
      {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem", "3000"}, {"nvidia.com/gpucores", "10"}});
  std::vector<std::string> placed;
  int fitted = 0;
  for (int i = 0; i < 10; ++i) {
    ArgsSpec spec;
    spec.pod = pod;
    spec.nodes = {node};
    if (!placed.empty()) spec.simulated_pods["template-node-for-gpu-0"] = placed;
    auto r = run(args_json(spec));
    ASSERT_EQ(error_of(r), "");
    if (node_names(r).empty()) {
      EXPECT_EQ(r.at("FailedNodes").as_object().at("template-node-for-gpu-0").as_string(),
                "2/2 CardInsufficientMemory");
      break;
    }
    ++fitted;
    const auto& a = r.at("Allocations").as_object().at("template-node-for-gpu-0").as_object();
    testing::Annotations annotations;
    for (const auto& [k, v] : a) annotations[std::string(k)] = std::string(v.as_string());
    placed.push_back(placed_pod_json("replica-" + std::to_string(i), annotations));
  }
  // 3 x 3000 MiB fit in 11441 MiB per GPU, two GPUs.
  EXPECT_EQ(fitted, 6);
}

// Issue #33: a caller that asks about the same template copy again for another pod, without
// sending the pod it placed there, is noted on that copy; the answers stay those of an empty
// copy (the note changes no answer).
class UnsentPlacementsTest : public SimulationFilterTest {
 protected:
  static constexpr const char* kCopy = "template-node-for-gpu-k80-0-e-0";
  std::string ask(const std::string& pod_name, const std::string& node_name = kCopy,
                  const std::vector<std::string>& placed = {}, int nodes = 1) {
    ArgsSpec spec;
    spec.pod = pod_json(
        pod_name,
        {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem", "3000"}, {"nvidia.com/gpucores", "30"}});
    spec.nodes = {node_json(node_name, {{kRegister, k80_register()}})};
    for (int i = 1; i < nodes; ++i) {
      spec.nodes.push_back(
          node_json(node_name + "-other-" + std::to_string(i), {{kRegister, k80_register()}}));
    }
    if (!placed.empty()) spec.simulated_pods[node_name] = placed;
    return args_json(spec);
  }
  std::vector<std::string> notes(const boost::json::object& r, const std::string& node) {
    std::vector<std::string> out;
    for (const auto& n :
         r.at("Diagnostics").as_object().at(node).as_object().at("Notes").as_array()) {
      out.emplace_back(n.as_string());
    }
    return out;
  }
  std::string allocated(const boost::json::object& r, const std::string& node) {
    return std::string(r.at("Allocations")
                           .as_object()
                           .at(node)
                           .as_object()
                           .at("hami.io/vgpu-devices-allocated")
                           .as_string());
  }
};

TEST_F(UnsentPlacementsTest, TheSameCopyAskedForAnotherPodWithoutSimulatedPodsIsNoted) {
  auto first = run(ask("job-0"));
  EXPECT_TRUE(notes(first, kCopy).empty());
  EXPECT_EQ(last_.unsent_placements_node, "");
  const std::string answer = allocated(first, kCopy);
  for (const char* pod : {"job-1", "job-2"}) {
    auto r = run(ask(pod));
    EXPECT_EQ(notes(r, kCopy), std::vector<std::string>{std::string(kUnsentPlacementsNote)});
    EXPECT_EQ(last_.unsent_placements_node, kCopy);
    // The answer is still the empty copy's: the note changes nothing else.
    EXPECT_EQ(node_names(r), std::vector<std::string>{kCopy});
    EXPECT_EQ(allocated(r, kCopy), answer);
  }
}

TEST_F(UnsentPlacementsTest, ACallerThatSendsWhatItPlacedIsNeverNoted) {
  std::vector<std::string> placed;
  for (int i = 0; i < 4; ++i) {
    auto r = run(ask("job-" + std::to_string(i), kCopy, placed));
    EXPECT_TRUE(notes(r, kCopy).empty()) << i;
    EXPECT_EQ(last_.unsent_placements_node, "");
    placed.push_back(placed_pod_json("job-" + std::to_string(i),
                                     {{"hami.io/vgpu-devices-allocated", allocated(r, kCopy)}}));
  }
}

// CA checks each pod group against the empty template itself (fork, add, revert): asking
// about the template for several pods is the convention, not a breach of it.
TEST_F(UnsentPlacementsTest, TheTemplateItselfAndRealNodesAreNeverNoted) {
  for (const char* node : {"template-node-for-gpu-k80-0", "k80-node-1"}) {
    for (int i = 0; i < 3; ++i) {
      auto r = run(ask("job-" + std::to_string(i), node));
      EXPECT_TRUE(notes(r, node).empty()) << node;
    }
  }
}

TEST_F(UnsentPlacementsTest, RetriesOfOnePodAndRequestsAboutSeveralNodesAreNotNoted) {
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(notes(run(ask("job-0")), kCopy).empty());
  // Several candidates: which one the caller places the pod on is unknown.
  for (int i = 1; i < 4; ++i) {
    EXPECT_TRUE(notes(run(ask("job-" + std::to_string(i), kCopy, {}, 2)), kCopy).empty());
  }
}

TEST(SimulatedPodsWatch, RemembersOnlyFitsWithinItsWindowPerCallerAndNode) {
  SimulatedPodsWatch w;
  const auto t0 = SimulatedPodsWatch::Clock::time_point{} + std::chrono::hours(1);
  const auto soon = t0 + std::chrono::seconds(1);
  const auto late = soon + SimulatedPodsWatch::kWindow + std::chrono::seconds(1);
  // A rejection is not remembered.
  EXPECT_FALSE(w.observe("ca", "c-e-0", 1, false, false, t0));
  EXPECT_FALSE(w.observe("ca", "c-e-0", 2, false, true, soon));
  // Another pod within the window: noted; another caller or node: not.
  EXPECT_TRUE(w.observe("ca", "c-e-0", 3, false, true, soon));
  EXPECT_FALSE(w.observe("planner", "c-e-0", 4, false, true, soon));
  EXPECT_FALSE(w.observe("ca", "c-e-1", 4, false, true, soon));
  // Past the window: a fresh start (CA's next loop may reuse the name).
  EXPECT_FALSE(w.observe("ca", "c-e-1", 5, false, true, late));
  // SimulatedPods for the node forget it, in either form.
  EXPECT_FALSE(w.observe("ca", "c-e-0", 6, true, true, soon));
  EXPECT_FALSE(w.observe("ca", "c-e-0", 7, false, true, soon));
  w.placements_sent("ca", "c-e-0");
  EXPECT_FALSE(w.observe("ca", "c-e-0", 8, false, true, soon));
  // Pods without any identity are never told apart.
  EXPECT_FALSE(w.observe("ca", "c-e-2", 0, false, true, soon));
  EXPECT_FALSE(w.observe("ca", "c-e-2", 0, false, true, soon));
}

TEST_F(SimulationFilterTest, SameRequestGivesByteIdenticalResponses) {
  ArgsSpec spec;
  spec.pod = seed_pod("300");
  spec.nodes = {node_json("n2", {{kRegister, k80_register()}}), node_json("n1", {}),
                node_json("n3", {{kRegister, k80_register(1, 10, 100)}})};
  const std::string body = args_json(spec);
  const std::string first = filter_.filter(body).body;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(filter_.filter(body).body, first);
}

// The Nodes sent back may be left out of the body and sent from the request's bytes; put back
// where they are listed, the body is the one with the Nodes copied in.
TEST_F(SimulationFilterTest, LeftOutNodeTextsPutBackGiveTheSameBody) {
  ArgsSpec spec;
  spec.pod = seed_pod("300");
  spec.nodes = {node_json("n2", {{kRegister, k80_register()}}), node_json("n1", {}),
                node_json("n3", {{kRegister, k80_register(1, 10, 100)}}),
                node_json("n4", {{kRegister, k80_register(2)}})};
  std::string body = args_json(spec);
  const std::string copied = filter_.filter(body).body;
  body.reserve(body.size() + model::kJsonPadding);  // decoded where it is, as HttpServer hands it
  for (int i = 0; i < 2; ++i) {                     // nodes decoded, then kept
    SimulationResult left_out = filter_.filter(body, SimulationFilter::NodeTexts::kLeftOut);
    ASSERT_EQ(left_out.insertions.size(), 2u);  // n2 and n4 fit
    std::string put_back;
    size_t from = 0;
    for (const auto& insertion : left_out.insertions) {
      EXPECT_GE(insertion.text.data(), body.data());
      EXPECT_LE(insertion.text.data() + insertion.text.size(), body.data() + body.size());
      put_back += left_out.body.substr(from, insertion.at - from);
      put_back += insertion.text;
      from = insertion.at;
    }
    put_back += left_out.body.substr(from);
    EXPECT_EQ(put_back, copied);
  }
  // A body without room for the parser's padding is copied to be decoded: nothing points
  // into it, and the Nodes are copied into the result.
  std::string tight = args_json(spec);
  tight.shrink_to_fit();
  if (tight.capacity() - tight.size() < model::kJsonPadding) {
    SimulationResult r = filter_.filter(tight, SimulationFilter::NodeTexts::kLeftOut);
    EXPECT_TRUE(r.insertions.empty());
    EXPECT_EQ(r.body, copied);
  }
}

TEST_F(SimulationFilterTest, KeysMatchCaseInsensitivelyAndUnknownKeysAreIgnored) {
  const std::string body =
      "{\"pod\":" + seed_pod("300") + ",\"nodes\":{\"metadata\":{},\"ITEMS\":[" +
      node_json("n1", {{kRegister, k80_register()}}) + "]},\"Extra\":{\"deep\":[1,2,3]}}";
  auto r = run(body);
  EXPECT_EQ(error_of(r), "");
  EXPECT_EQ(node_names(r), std::vector<std::string>{"n1"});
}

TEST_F(SimulationFilterTest, EmptyAndNullItemsAreAnEmptyNodeList) {
  auto r = run("{\"Pod\":" + seed_pod("300") + ",\"Nodes\":{\"metadata\":{},\"items\":null}}");
  EXPECT_EQ(error_of(r), "");
  EXPECT_TRUE(node_names(r).empty());
  EXPECT_TRUE(r.at("FailedNodes").as_object().empty());
}

// Spec §5.4: each invalid request is `invalid request: <what and where>`.
struct InvalidCase {
  const char* name;
  std::string body;
  const char* expected_fragment;
};

class SimulationValidationTest : public SimulationFilterTest,
                                 public ::testing::WithParamInterface<InvalidCase> {};

TEST_P(SimulationValidationTest, RejectsWithAClassifiedError) {
  auto r = run(GetParam().body);
  const std::string error = error_of(r);
  EXPECT_EQ(error.rfind("invalid request: ", 0), 0u) << error;
  EXPECT_NE(error.find(GetParam().expected_fragment), std::string::npos) << error;
  EXPECT_TRUE(last_.invalid_request);
  EXPECT_TRUE(r.at("Nodes").is_null());
}

std::vector<InvalidCase> invalid_cases() {
  const std::string node = node_json("n1", {{kRegister, k80_register()}});
  auto with = [](auto f) {
    ArgsSpec s;
    f(s);
    return args_json(s);
  };
  return {
      {"MissingPod", with([&](ArgsSpec& s) { s.nodes = {node}; }), "Pod is required"},
      {"NullPod", "{\"Pod\":null,\"Nodes\":{\"items\":[]}}", "Pod is required"},
      {"NodeNamesGiven", with([&](ArgsSpec& s) {
         s.pod = seed_pod("300");
         s.nodes = {node};
         s.with_node_names = true;
         s.node_names = {"n1"};
       }),
       "NodeNames is not accepted by the simulation filter"},
      {"NodesMissing", with([&](ArgsSpec& s) {
         s.pod = seed_pod("300");
         s.omit_nodes = true;
       }),
       "Nodes is required"},
      {"NodesNotAList", "{\"Pod\":" + seed_pod("300") + ",\"Nodes\":[1,2]}", "Nodes"},
      {"ItemsNotAList", "{\"Pod\":" + seed_pod("300") + ",\"Nodes\":{\"items\":{}}}",
       "Nodes.items"},
      {"NodeWithoutName", with([&](ArgsSpec& s) {
         s.pod = seed_pod("300");
         s.nodes = {"{\"metadata\":{}}"};
       }),
       "Nodes.items[0]: metadata.name is required"},
      {"DuplicateNodeNames", with([&](ArgsSpec& s) {
         s.pod = seed_pod("300");
         s.nodes = {node, node};
       }),
       "duplicate node name \"n1\""},
      {"UnparsableQuantity", with([&](ArgsSpec& s) {
         s.pod = seed_pod("12 GB");
         s.nodes = {node};
       }),
       "nvidia.com/gpumem"},
      {"NegativeAmount", with([&](ArgsSpec& s) {
         s.pod = seed_pod("-5");
         s.nodes = {node};
       }),
       "negative amount"},
      {"OverflowingAmount", with([&](ArgsSpec& s) {
         s.pod = seed_pod("16Gi");
         s.nodes = {node};
       }),
       "overflows"},
      // Large quantities of resources that are not devices are fine; the first device
      // resource out of range is named, wherever it is.
      {"OverflowingAmountAfterLargeMemory", with([&](ArgsSpec& s) {
         s.pod = pod_json("p", {{"memory", "64Gi"},
                                {"nvidia.com/gpu", "1"},
                                {"nvidia.com/gpumem", "-1"},
                                {"nvidia.com/gpucores", "-2"}});
         s.nodes = {node};
       }),
       "Pod.spec.containers[0].resources.limits[nvidia.com/gpumem]: negative amount -1"},
      {"NotJson", "{\"Pod\": {", "malformed JSON"},
      {"NotAnObject", "[1,2,3]", "expected a JSON object"},
      {"InvalidScoringWeights", with([&](ArgsSpec& s) {
         s.pod = pod_json("p", {{"nvidia.com/gpu", "1"}},
                          {{"hami.io/device-scoring-weights", "slot=1,core=x,memory=1"}});
         s.nodes = {node};
       }),
       "hami.io/device-scoring-weights"},
      {"MalformedSimulatedPod", with([&](ArgsSpec& s) {
         s.pod = seed_pod("300");
         s.nodes = {node};
         s.simulated_pods["n1"] = {placed_pod_json(
             "earlier", {{"hami.io/vgpu-devices-allocated", "GPU-K80-0,NVIDIA:;"}})};
       }),
       "SimulatedPods[n1][0] (pod \"earlier\")"},
  };
}

INSTANTIATE_TEST_SUITE_P(Spec54, SimulationValidationTest, ::testing::ValuesIn(invalid_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace hamisim::server
