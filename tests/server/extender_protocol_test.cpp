// decode_extender_args: the items of the body (Pod, Nodes, SimulatedPods) are decoded from the
// body's own document; what callers see (the objects, each Node's raw bytes, the error of a
// broken body) is what decoding each item from its own bytes gives.

#include "server/extender_protocol.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/decode.h"
#include "model/encode.h"
#include "server/decoded_cache.h"

namespace hamisim::server {
namespace {

std::string decode_error(const std::string& body) {
  auto args = decode_extender_args(body);
  EXPECT_FALSE(args.ok()) << body;
  return args.ok() ? std::string() : args.error().message;
}

constexpr const char* kStructure =
    "The JSON document has an improper structure: missing or superfluous commas, braces, "
    "missing keys, etc.";

TEST(ExtenderArgsTest, DecodesEveryItemAsItsOwnBytesWould) {
  const std::string node_a = R"({"metadata":{"name":"a","labels":{"z":"1","y":"2"}},
    "status":{"allocatable":{"nvidia.com/gpu":"4","cpu":1.5}}})";
  const std::string node_b = R"({"metadata":{"name":"b"},"spec":{"unschedulable":true}})";
  const std::string pod = R"({"metadata":{"name":"p","annotations":{"k":"v\u00e9"}},
    "spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
  const std::string placed = R"({"metadata":{"name":"earlier"},"status":{"phase":"Running"}})";
  const std::string body = R"({"Pod":{"metadata":{"name":"old","labels":{"old":"1"}}},"pod":)" +
                           pod + R"(,"Nodes":{"metadata":{},"items":[ )" + node_a + " \n, " +
                           node_b + "\t]},\"NodeNames\":[\"a\"],\"SimulatedPods\":{\"a\":[" +
                           placed + "," + pod + "],\"b\":null},\"Unknown\":{\"x\":[1,{}]}}";
  auto args = decode_extender_args(body);
  ASSERT_TRUE(args.ok()) << args.error().message;

  // The last "Pod" replaces the first (it is not merged into it).
  ASSERT_NE(args->pod, nullptr);
  EXPECT_EQ(model::encode_pod_json(*args->pod),
            model::encode_pod_json(*model::decode_pod_json(pod)));
  EXPECT_TRUE(args->nodes_present);
  ASSERT_EQ(args->nodes.size(), 2u);
  EXPECT_EQ(model::encode_node_json(args->nodes[0].node()),
            model::encode_node_json(*model::decode_node_json(node_a)));
  EXPECT_EQ(model::encode_node_json(args->nodes[1].node()),
            model::encode_node_json(*model::decode_node_json(node_b)));
  // Each Node's bytes as received, with the whitespace up to the next comma or bracket.
  EXPECT_EQ(args->nodes[0].raw, node_a + " \n");
  EXPECT_EQ(args->nodes[1].raw, node_b + "\t");
  EXPECT_EQ(args->node_names, std::vector<std::string>{"a"});
  ASSERT_EQ(args->simulated_pods.size(), 2u);
  const auto& placed_on_a = args->simulated_pods.at("a");
  ASSERT_EQ(placed_on_a.size(), 2u);
  EXPECT_EQ(placed_on_a[0].metadata.name, "earlier");
  EXPECT_EQ(model::encode_pod_json(placed_on_a[1]), model::encode_pod_json(*args->pod));
  EXPECT_TRUE(args->simulated_pods.at("b").empty());
}

// A body that decoding in place rejects is decoded again item by item from the items' own
// bytes, so its error is the one that way reports.
TEST(ExtenderArgsTest, BrokenBodiesKeepTheirErrors) {
  // Truncated: skipping the item to find its end fails first.
  EXPECT_EQ(decode_error(R"({"Pod":{"metadata":{"name":"p"})"),
            std::string("Pod: malformed JSON (") + kStructure + ")");
  EXPECT_EQ(decode_error(R"({"Nodes":{"items":[{"metadata":{"name":"a"}})"),
            std::string("Nodes.items[1]: malformed JSON (") + kStructure + ")");
  // An ignored value that is no value: the item's own bytes end after "x":}}, where the
  // body's document would go on.
  EXPECT_EQ(decode_error(R"({"Pod":{"metadata":{"name":"p","x":}},"spec":{}}})"),
            std::string("Pod: invalid JSON: ") + kStructure);
  EXPECT_EQ(decode_error(R"({"Nodes":{"items":[{"metadata":{"name":"a"},"x":"k":1}]}})"),
            std::string("Nodes.items[0]: invalid JSON: ") + kStructure);
  EXPECT_EQ(decode_error(R"({"SimulatedPods":{"n":[{"metadata":{"name":"q","x":,"y":1}}]}})"),
            std::string("SimulatedPods[n][0]: invalid JSON: ") + kStructure);
  // Errors inside an item carry the item's path.
  EXPECT_EQ(decode_error(R"({"Nodes":{"items":[{"metadata":{"name":1}}]}})"),
            "Nodes.items[0].metadata.name: expected a string, got number");
  EXPECT_EQ(decode_error(R"({"Nodes":{"items":[{},"n"]}})"),
            "Nodes.items[1]: expected an object, got string");
}

// Decoding in the caller's padded buffer gives what decoding a copy gives, and points into the
// caller's bytes; with a cache too, and for broken bodies.
TEST(ExtenderArgsTest, DecodingInTheCallersBufferAgreesWithDecodingACopy) {
  const std::string node = R"({"metadata":{"name":"a","labels":{"k":"v"}}})";
  const std::vector<std::string> bodies = {
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[)" + node + "]}}",
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[)" + node + "," + node + "]}}",
      R"({"Nodes":{"items":[{"metadata":{"name":"a"}})",
      R"({"Nodes":{"items":[{"metadata":{"name":1}}]}})",
  };
  DecodedObjects cache;
  for (DecodedObjects* decoded : {static_cast<DecodedObjects*>(nullptr), &cache}) {
    for (const std::string& body : bodies) {
      std::string padded = body;
      padded.reserve(body.size() + model::kJsonPadding);
      auto copied = decode_extender_args(body, decoded);
      auto in_place = decode_extender_args_in_buffer(padded, decoded);
      ASSERT_EQ(copied.ok(), in_place.ok()) << body;
      if (!copied.ok()) {
        EXPECT_EQ(copied.error().message, in_place.error().message);
        continue;
      }
      EXPECT_EQ(in_place->buffer, nullptr);
      ASSERT_EQ(in_place->nodes.size(), copied->nodes.size());
      for (size_t i = 0; i < copied->nodes.size(); ++i) {
        EXPECT_EQ(in_place->nodes[i].raw, copied->nodes[i].raw);
        EXPECT_GE(in_place->nodes[i].raw.data(), padded.data());
        EXPECT_LE(in_place->nodes[i].raw.data() + in_place->nodes[i].raw.size(),
                  padded.data() + padded.size());
        EXPECT_EQ(model::encode_node_json(in_place->nodes[i].node()),
                  model::encode_node_json(copied->nodes[i].node()));
      }
      EXPECT_EQ(model::encode_pod_json(*in_place->pod), model::encode_pod_json(*copied->pod));
    }
  }
}

}  // namespace
}  // namespace hamisim::server
