// Decoding a Pod or Node from inside a larger document (model::json::decode_pod/decode_node),
// as the extender decodes the items of a request body, against decoding the same object's
// bytes as a document of their own.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "model/decode.h"
#include "model/encode.h"
#include "model/simdjson_util.h"

namespace hamisim::model {
namespace {

namespace od = simdjson::ondemand;

// The body of the tests: a list whose items are decoded in place, one after the other.
struct ItemsDoc {
  explicit ItemsDoc(std::string json) : padded(json) {}

  // Calls f(item, index) for each item of the document's "items"; false if iterating failed.
  template <class F>
  bool each_item(F&& f) {
    od::document doc;
    if (parser.iterate(padded).get(doc)) return false;
    od::array items;
    if (doc["items"].get_array().get(items)) return false;
    size_t i = 0;
    for (auto element : items) {
      od::value item;
      if (element.get(item)) return false;
      if (!f(item, i++)) return false;
    }
    return true;
  }

  simdjson::padded_string padded;
  od::parser parser;
};

constexpr std::string_view kNode = R"({"metadata":{"name":"gpu-1","uid":"u-1",
  "labels":{"kubernetes.io/hostname":"gpu-1","b":"2","a":"1","a":"3"},
  "annotations":{"hami.io/node-nvidia-register":"[{\"id\":\"GPU-0\",\"count\":10}]"},
  "managedFields":[{"manager":"kubelet","fieldsV1":{"f:status":{}}}]},
  "spec":{"taints":[{"key":"k","value":"v","effect":"NoSchedule"}],"unschedulable":true},
  "status":{"capacity":{"cpu":"8","memory":"64Gi","nvidia.com/gpu":8},
            "allocatable":{"cpu":" 7500m ","nvidia.com/gpu":8},
            "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}})";

constexpr std::string_view kPod = R"({"metadata":{"name":"p","namespace":"ml",
  "annotations":{"hami.io/gpu-scheduler-policy":"binpack"}},
  "spec":{"containers":[{"name":"c","image":"i",
    "resources":{"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem":"4000"}}}],
    "tolerations":[{"key":"a","operator":"Exists","tolerationSeconds":30}],"priority":5},
  "status":{"phase":"Pending"}})";

TEST(DecodeValueTest, ItemsDecodeAsTheirOwnBytesDoAndTheDocumentGoesOn) {
  const std::string own = std::string(kNode);
  ItemsDoc doc("{\"items\":[" + own + " ,\n" + own + "], \"after\": 1}");
  std::vector<std::string> encoded;
  ASSERT_TRUE(doc.each_item([&](od::value& item, size_t) {
    Node node;
    const Status s = json::decode_node(item, "items", node);
    EXPECT_TRUE(s.ok()) << s.error().message;
    const char* next = nullptr;
    EXPECT_FALSE(item.current_location().get(next));
    encoded.push_back(encode_node_json(node) + " then " + next[0]);
    return s.ok();
  }));
  auto alone = decode_node_json(own);
  ASSERT_TRUE(alone.ok()) << alone.error().message;
  const std::string expected = encode_node_json(*alone);
  EXPECT_EQ(encoded, (std::vector<std::string>{expected + " then ,", expected + " then ]"}));

  ItemsDoc pods("{\"items\":[" + std::string(kPod) + "]}");
  ASSERT_TRUE(pods.each_item([&](od::value& item, size_t) {
    Pod pod;
    const Status s = json::decode_pod(item, "items", pod);
    EXPECT_TRUE(s.ok()) << s.error().message;
    auto own_pod = decode_pod_json(kPod);
    EXPECT_TRUE(own_pod.ok());
    if (own_pod.ok()) {
      EXPECT_EQ(encode_pod_json(pod), encode_pod_json(*own_pod));
    }
    return s.ok();
  }));
}

TEST(DecodeValueTest, ErrorsStartWithThePath) {
  ItemsDoc doc(R"({"items":[{"metadata":{"labels":{"a":1}}}]})");
  std::string error;
  doc.each_item([&](od::value& item, size_t) {
    Node node;
    const Status s = json::decode_node(item, "Nodes.items[0]", node);
    if (!s.ok()) error = s.error().message;
    return s.ok();
  });
  EXPECT_EQ(error, "Nodes.items[0].metadata.labels[a]: expected a string, got number");
}

// An ignored value that starts with a closing bracket, a comma, a colon or a key is skipped by
// bracket counting to a place its object does not end at: inside a larger document the object
// could then be read past its own bytes. Such values are refused; ignored values that start
// like values are not.
TEST(DecodeValueTest, RefusesIgnoredValuesThatDoNotStartAValue) {
  for (const std::string bad : {R"(})", R"(])", R"(,)", R"(:)", R"("k":1)"}) {
    SCOPED_TRACE(bad);
    ItemsDoc doc(R"({"items":[{"metadata":{"name":"p","x":)" + bad +
                 R"(}},"spec":{}}, {"metadata":{"name":"q"}}]})");
    bool failed = false;
    doc.each_item([&](od::value& item, size_t) {
      Pod pod;
      failed = !json::decode_pod(item, "items", pod).ok();
      return !failed;
    });
    EXPECT_TRUE(failed);
  }
  for (const std::string good : {R"({"a":[1,{}]})", R"([])", R"("s")", R"(tru)", R"(-1)"}) {
    SCOPED_TRACE(good);
    ItemsDoc doc(R"({"items":[{"metadata":{"name":"p","x":)" + good + R"(}}]})");
    std::vector<std::string> names;
    EXPECT_TRUE(doc.each_item([&](od::value& item, size_t) {
      Pod pod;
      if (!json::decode_pod(item, "items", pod).ok()) return false;
      names.push_back(pod.metadata.name);
      return true;
    }));
    EXPECT_EQ(names, std::vector<std::string>{"p"});
  }
}

}  // namespace
}  // namespace hamisim::model
