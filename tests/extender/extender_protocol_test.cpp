// decode_extender_args: the items of the body (Pod, Nodes, SimulatedPods) are decoded from the
// body's own document; what callers see (the objects, each Node's raw bytes, the error of a
// broken body) is what decoding each item from its own bytes gives.

#include "extender/extender_protocol.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "extender/decoded_cache.h"
#include "model/decode.h"
#include "model/encode.h"

namespace hamisim::extender {
namespace extender_protocol_test {

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
  EXPECT_EQ(args->nodes[0].json, node_a + " \n");
  EXPECT_EQ(args->nodes[1].json, node_b + "\t");
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
        EXPECT_EQ(in_place->nodes[i].json, copied->nodes[i].json);
        EXPECT_GE(in_place->nodes[i].json.data(), padded.data());
        EXPECT_LE(in_place->nodes[i].json.data() + in_place->nodes[i].json.size(),
                  padded.data() + padded.size());
        EXPECT_EQ(model::encode_node_json(in_place->nodes[i].node()),
                  model::encode_node_json(copied->nodes[i].node()));
      }
      EXPECT_EQ(model::encode_pod_json(*in_place->pod), model::encode_pod_json(*copied->pod));
    }
  }
}

// Where two long texts first differ, for a readable failure.
std::string first_difference(const std::string& a, const std::string& b) {
  size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
  const size_t from = at < 40 ? 0 : at - 40;
  return "differ at " + std::to_string(at) + ": ..." + a.substr(from, 80) + "\nversus ..." +
         b.substr(from, 80);
}
#define EXPECT_SAME_TEXT(a, b) EXPECT_TRUE((a) == (b)) << first_difference((a), (b))

// Everything callers read from ExtenderArgs, as one text.
std::string describe(const ExtenderArgs& args) {
  std::string out = args.pod ? model::encode_pod_json(*args.pod) : "no pod";
  out += args.nodes_present ? "\nnodes:" : "\nno nodes:";
  for (const ExtenderNode& n : args.nodes) {
    out += "\n" + model::encode_node_json(n.node()) + "\nraw=" + std::string(n.json);
  }
  out += args.node_names_present ? "\nnames:" : "\nno names:";
  for (const auto& name : args.node_names) out += " " + name;
  for (const auto& [node, pods] : args.simulated_pods) {
    out += "\nplaced on " + node + ":";
    for (const auto& pod : pods) out += " " + model::encode_pod_json(pod);
  }
  return out;
}

std::string padded(const std::string& body) {
  std::string out = body;
  out.reserve(body.size() + model::kJsonPadding);
  return out;
}

// A Pod and two Nodes longer than DecodedCache::kPrefix (found by the hash of their start),
// and a short Pod (found by looking for its end).
const std::string kPod = R"({"metadata":{"name":"p","annotations":{"pad":")" +
                         std::string(1500, 'p') +
                         R"("}},"spec":{"containers":[{"name":"c",)"
                         R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
const std::string kShortPod = R"({"metadata":{"name":"s","labels":{"k":"a}\"{"}}})";
std::string node_json(const std::string& name) {
  return R"({"metadata":{"name":")" + name + R"(","labels":{"pad":")" + std::string(2000, 'x') +
         R"("}},"status":{"allocatable":{"nvidia.com/gpu":"4"}}})";
}
const std::string kNodeA = node_json("a"), kNodeB = node_json("b");

// Bodies of kept objects are read without the full decoder, and give what it gives.
TEST(ExtenderArgsTest, BodiesOfKeptObjectsDecodeAsTheFullDecoderDoes) {
  const std::vector<std::string> bodies = {
      R"({"Pod":)" + kPod + R"(,"Nodes":{"metadata":{},"items":[)" + kNodeA + "," + kNodeB +
          R"(]},"NodeNames":null})",
      // Whitespace everywhere; keys in other cases and order.
      " \n{ \"nodes\" :\t{ \"Items\" : [ " + kNodeB + " \r\n, " + kNodeA +
          " ] , \"METADATA\" : { } } , \"pod\" : " + kShortPod +
          " , \"SimulatedPods\" : null , \"nodeNames\":null }\n",
      R"({"Pod":null,"Nodes":{"items":null}})",
      R"({"Pod":)" + kShortPod + R"(,"Nodes":{"items":[]}})",
      R"({"Pod":)" + kShortPod + R"(,"Nodes":{}})",
      R"({"Pod":)" + kShortPod + R"(,"Nodes":null})",
      "{}",
  };
  DecodedObjects cache;
  for (const std::string& text : bodies) {
    const std::string body = padded(text);
    auto full = decode_extender_args_in_buffer(body);
    ASSERT_TRUE(full.ok()) << full.error().message;
    // The first time, objects are not kept yet (except those of earlier bodies).
    ASSERT_TRUE(decode_extender_args_in_buffer(body, &cache).ok());
    auto kept = decode_kept_extender_args(body, cache);
    ASSERT_TRUE(kept.has_value()) << text.substr(0, 80);
    EXPECT_SAME_TEXT(describe(*kept), describe(*full));
    for (const ExtenderNode& n : kept->nodes) {  // the raw texts point into the body
      EXPECT_GE(n.json.data(), body.data());
      EXPECT_LE(n.json.data() + n.json.size(), body.data() + body.size());
    }
    auto through_cache = decode_extender_args_in_buffer(body, &cache);
    ASSERT_TRUE(through_cache.ok());
    EXPECT_SAME_TEXT(describe(*through_cache), describe(*full));
  }
}

// Keys match as Go's encoding/json matches them, by Unicode case folding: "ſ" (U+017F) folds to
// "s" and the Kelvin sign (U+212A) to "k", so kube-scheduler's Go would read these fields, and
// so does hamisim (go::json_key_matches, the one matcher of every decoder).
TEST(ExtenderArgsTest, KeysFoldAsGoFoldsThem) {
  auto args = decode_extender_args_in_buffer(
      padded("{\"pod\":" + kShortPod + ",\"NodeName\xc5\xbf\":[\"a\",\"b\"],\"Nodes\":null}"));
  ASSERT_TRUE(args.ok()) << args.error().message;
  EXPECT_TRUE(args->node_names_present);
  EXPECT_EQ(args->node_names, (std::vector<std::string>{"a", "b"}));
}

// Anything else is left to the full decoder, which gives what it gives without a cache.
TEST(ExtenderArgsTest, OtherBodiesAreLeftToTheFullDecoder) {
  const std::string pod = R"("Pod":)" + kPod;
  const std::string nodes = R"("Nodes":{"items":[)" + kNodeA + "]}";
  DecodedObjects cache;
  ASSERT_TRUE(decode_extender_args_in_buffer(padded("{" + pod + "," + nodes + "}"), &cache).ok());
  ASSERT_TRUE(decode_extender_args_in_buffer(padded(R"({"Pod":)" + kShortPod + "}"), &cache).ok());
  std::string changed_late = kNodeA;  // the same start as a kept Node, other bytes later
  changed_late[changed_late.size() - 5] = '8';
  const std::vector<std::string> bodies = {
      "{" + pod + "," + nodes + R"(,"Extra":1})",
      "{" + pod + "," + pod + "," + nodes + "}",
      "{" + pod + "," + nodes + "," + nodes + "}",
      R"({"P\u006fd":)" + kPod + "," + nodes + "}",  // an escaped key
      "{" + pod + "," + nodes + R"(,"NodeNames":["a"]})",
      "{" + pod + "," + nodes + R"(,"SimulatedPods":{}})",
      "{" + pod + R"(,"Nodes":{"kind":"NodeList","items":[)" + kNodeA + "]}}",
      "{" + pod + R"(,"Nodes":{"metadata":{"resourceVersion":"1"},"items":[)" + kNodeA + "]}}",
      "{" + pod + R"(,"Nodes":{"items":[)" + kNodeA + "," + kNodeB + "]}}",  // B is not kept
      "{" + pod + R"(,"Nodes":{"items":[)" + changed_late + "]}}",
      "{" + pod + R"(,"Nodes":{"items":[)" + kNodeA + "x]}}",
      "{" + pod + R"(,"Nodes":{"items":[)" + kNodeA + "]}}x",
      "{" + pod + R"(,"Nodes":{"items":[)" + kNodeA + "]}",
      "{" + pod + R"(,"Nodes":{"items":[)" + kNodeA.substr(0, kNodeA.size() - 1),
      "{" + pod + R"(,"Nodes":{"items":[)" + kNodeA + ",]}}",
      R"({"Pod":)" + kShortPod.substr(0, kShortPod.size() - 1) + "}",
      R"({"Pod":)" + kShortPod + R"(,"Nodes":{"items":[)" + kNodeA + "]},}",
      R"({"Pod":nul})",
      "",
      "[]",
  };
  for (const std::string& text : bodies) {
    const std::string body = padded(text);
    EXPECT_FALSE(decode_kept_extender_args(body, cache).has_value())
        << "body " << &text - bodies.data();
    auto full = decode_extender_args_in_buffer(body);
    auto through_cache = decode_extender_args_in_buffer(body, &cache);
    ASSERT_EQ(through_cache.ok(), full.ok()) << text.substr(0, 80);
    if (full.ok()) {
      EXPECT_SAME_TEXT(describe(*through_cache), describe(*full)) << text.substr(0, 80);
    } else {
      EXPECT_EQ(through_cache.error().message, full.error().message) << text.substr(0, 80);
    }
  }
}

// simdjson's On-Demand decoders accept a few malformed texts, depending on the bytes after
// them. Such a text is never kept, so what was kept never changes an answer.
TEST(ExtenderArgsTest, KeptObjectsNeverChangeAnswers) {
  const std::string lenient = R"({"metadata": {"name": "p", "x": }})";
  const std::vector<std::string> bodies = {
      R"({"Pod": )" + lenient + "}",
      R"({"Pod": )" + lenient + R"(?}}}}"NodeNames": null})",
      R"({"Pod": )" + lenient + R"(, "Nodes": {"items": []}})",
  };
  DecodedObjects warm;
  for (const std::string& text : bodies) {
    const std::string body = padded(text);
    auto warmed = decode_extender_args_in_buffer(body, &warm);
    DecodedObjects empty;
    auto fresh = decode_extender_args_in_buffer(body, &empty);
    ASSERT_EQ(warmed.ok(), fresh.ok()) << text;
    if (fresh.ok()) {
      EXPECT_EQ(describe(*warmed), describe(*fresh)) << text;
    } else {
      EXPECT_EQ(warmed.error().message, fresh.error().message) << text;
    }
  }
  EXPECT_EQ(warm.pods.size(), 0u);
}

// Strict JSON (issue #23): what On-Demand skips (an ignored value, an ignored field inside a
// Pod, a Node or a simulated pod, the bytes after the top-level object) and literals typed by
// their first byte are checked too. Each body is refused without a cache, with an empty one and
// with one that keeps every well-formed object of these bodies, with the same error, which
// names where the body is broken.
TEST(ExtenderArgsTest, MalformedJsonIsRefusedWhereverItIs) {
  const std::string pod = R"({"metadata":{"name":"p"}})";
  const std::string node = R"({"metadata":{"name":"a"},"status":{"capacity":{"cpu":"4"}}})";
  const std::string nodes = R"("Nodes":{"metadata":{},"items":[)" + node + "]}";
  const std::string valid = R"({"Pod":)" + pod + "," + nodes + R"(,"NodeNames":null})";
  const std::string placed = R"({"metadata":{"name":"q"}})";
  struct Case {
    std::string body;
    std::string where;  // the error starts with it
  };
  const std::vector<Case> cases = {
      {R"({"Pod":)" + pod + "," + nodes + R"(,"NodeNames": nul})", "NodeNames: malformed JSON"},
      {R"({"Pod":)" + pod + "," + nodes + R"(,"NodeNames": nulL})", "NodeNames: malformed JSON"},
      {R"({"Pod": nul,)" + nodes + "}", "Pod: malformed JSON"},
      {R"({"Pod":)" + pod + R"(,"Nodes": nul})", "Nodes: malformed JSON"},
      {R"({"Pod":)" + pod + R"(,"Nodes":{"items": nul}})", "Nodes.items: malformed JSON"},
      {R"({"Pod":)" + pod + "," + nodes + R"(,"SimulatedPods": nul})",
       "SimulatedPods: malformed JSON"},
      {R"({"Pod":)" + pod + "," + nodes + R"(,"SimulatedPods":{"a": nul}})",
       "SimulatedPods[a]: malformed JSON"},
      // Ignored values: unknown literals, truncated ones, broken numbers, strings, lists.
      {R"({"Pod":)" + pod + "," + nodes + R"(,"x": tru})", "x: malformed JSON"},
      {R"({"x": fals,"Pod":)" + pod + "," + nodes + "}", "x: malformed JSON"},
      {R"({"Pod":)" + pod + "," + nodes + R"(,"x": t})", "x: malformed JSON"},
      {R"({"Pod":)" + pod + "," + nodes + R"(,"x": 01})", "x: malformed JSON"},
      {R"({"Pod":)" + pod + "," + nodes + R"(,"x": 1.})", "x: malformed JSON"},
      {R"({"Pod":)" + pod + "," + nodes + R"(,"x": "\q"})", "x: malformed JSON"},
      {R"({"Pod":)" + pod + "," + nodes + R"(,"x": {"a": tru}})", "x: malformed JSON"},
      {R"({"Pod":)" + pod + "," + nodes + R"(,"x": [1 2]})", "x: malformed JSON"},
      {R"({"Pod":)" + pod + "," + nodes + R"(,"x": [1,]})", "x: malformed JSON"},
      {R"({"Pod":)" + pod + "," + nodes + R"(,"x": {"a" 1}})", "x: malformed JSON"},
      {R"({"Pod":)" + pod + R"(,"Nodes":{"metadata":{"a":nul},"items":[)" + node + "]}}",
       "Nodes.metadata: malformed JSON"},
      // Ignored fields inside the objects that are decoded.
      {R"({"Pod":{"metadata":{"name":"p"},"x":tru},)" + nodes + "}", "Pod: malformed JSON"},
      {R"({"Pod":{"metadata":{"name":"p"},"spec":{"x":[1 2]}},)" + nodes + "}",
       "Pod: malformed JSON"},
      {R"({"Pod":)" + pod + R"(,"Nodes":{"items":[{"metadata":{"name":"a"},"status":{"x":nul}}]}})",
       "Nodes.items[0]: malformed JSON"},
      {R"({"Pod":)" + pod + R"(,"Nodes":{"items":[)" + node +
           R"(,{"metadata":{"name":"b","x":-}}]}})",
       "Nodes.items[1]: malformed JSON"},
      {R"({"Pod":)" + pod + "," + nodes + R"(,"SimulatedPods":{"a":[)" + placed +
           R"(,{"metadata":{"name":"r"},"x":tru}]}})",
       "SimulatedPods: malformed JSON"},
      // Anything after the top-level object.
      {valid + valid, "body: malformed JSON"},
      {valid + "{}", "body: malformed JSON"},
      {valid + " x", "body: malformed JSON"},
      {valid + "}", "body: malformed JSON"},
      {valid + "null", "body: malformed JSON"},
  };
  // Well-formed bodies around the same objects stay accepted, ignored values of every kind too.
  const std::vector<std::string> accepted = {
      valid,
      " \n" + valid + " \r\n\t",
      R"({"Pod":)" + pod + "," + nodes +
          R"(,"x":{"a":[1,-2.5e3,0.5E-2,true,false,null,"\u00e9\n\"",{},[]]},"y":null,)"
          R"("z":"a b, c} ]","n":-0.0e+1,"t":true })",
      R"({"Pod":)" + pod + "," + nodes + R"(,"SimulatedPods":{"a":[)" + placed + R"(],"b":null}})",
  };
  DecodedObjects warm;
  for (const std::string& text : accepted) {
    ASSERT_TRUE(decode_extender_args_in_buffer(padded(text), &warm).ok()) << text;
    ASSERT_TRUE(decode_extender_args(text).ok()) << text;
  }
  ASSERT_TRUE(decode_kept_extender_args(padded(valid), warm).has_value());
  for (const Case& c : cases) {
    const std::string body = padded(c.body);
    auto copied = decode_extender_args(c.body);
    ASSERT_FALSE(copied.ok()) << c.body;
    EXPECT_TRUE(copied.error().message.starts_with(c.where))
        << c.body << "\n  gives: " << copied.error().message;
    DecodedObjects empty;
    auto fresh = decode_extender_args_in_buffer(body, &empty);
    auto warmed = decode_extender_args_in_buffer(body, &warm);
    auto again = decode_extender_args_in_buffer(body, &warm);
    for (const auto* r : {&fresh, &warmed, &again}) {
      ASSERT_FALSE(r->ok()) << c.body;
      EXPECT_EQ(r->error().message, copied.error().message) << c.body;
    }
  }
}

TEST(BindingArgsTest, MalformedJsonIsRefused) {
  EXPECT_TRUE(decode_binding_args(R"({"PodName":"p","Node":"n","x":[1,{"y":null}]})").ok());
  for (const std::string body : {
           R"({"PodName":"p","Node": nul})",
           R"({"PodName":"p","Node":"n","x": tru})",
           R"({"PodName":"p","Node":"n"}{"PodName":"q"})",
           R"({"PodName":"p","Node":"n","x":[1 2]})",
       }) {
    EXPECT_FALSE(decode_binding_args(body).ok()) << body;
  }
}

}  // namespace extender_protocol_test
}  // namespace hamisim::extender
