// ExtenderFilterResult, one type both ways: what a server encodes is what a client decodes,
// byte for byte as Go writes it, with Go's key matching on the way in.

#include <gtest/gtest.h>

#include <string>

#include "extender/extender_protocol.h"

namespace hamisim::extender {
namespace filter_result_test {

const std::string kNodeA = R"({"metadata":{"name":"a"}})";

ExtenderFilterResult every_field() {
  ExtenderFilterResult r;
  r.nodes.emplace();
  r.nodes->push_back({"a", kNodeA});
  r.failed_nodes.emplace();
  r.failed_nodes->push_back({"b", "1/1 CardInsufficientMemory"});
  r.allocations.emplace();
  r.allocations->push_back({"a", {{"hami.io/vgpu-devices-allocated", "GPU-0,NVIDIA,300,40:;"}}});
  r.diagnostics.emplace();
  r.diagnostics->push_back({"a", {"Fits", "", "profile", "t4", {"sample diverges"}}});
  r.diagnostics->push_back({"b", {"Capacity", "1/1 CardInsufficientMemory", "annotation", "", {}}});
  return r;
}

TEST(ExtenderFilterResult, EncodesEveryFieldInGoOrder) {
  EXPECT_EQ(encode_filter_result(every_field()),
            R"({"Nodes":{"metadata":{},"items":[{"metadata":{"name":"a"}}]},"NodeNames":null,)"
            R"("FailedNodes":{"b":"1/1 CardInsufficientMemory"},"FailedAndUnresolvableNodes":null,)"
            R"("Error":"","Allocations":{"a":{"hami.io/vgpu-devices-allocated":)"
            R"("GPU-0,NVIDIA,300,40:;"}},"Diagnostics":{"a":{"Class":"Fits","Reason":"",)"
            R"("DeviceSource":"profile","Profile":"t4","Notes":["sample diverges"]},)"
            R"("b":{"Class":"Capacity","Reason":"1/1 CardInsufficientMemory",)"
            R"("DeviceSource":"annotation","Profile":"","Notes":[]}}})");
  EXPECT_EQ(encode_filter_error("invalid request: x"),
            R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,)"
            R"("FailedAndUnresolvableNodes":null,"Error":"invalid request: x"})");
}

TEST(ExtenderFilterResult, WhatIsEncodedDecodesToTheSameBytes) {
  const std::string body = encode_filter_result(every_field());
  auto decoded = decode_filter_result(body);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(encode_filter_result(*decoded), body);
  ASSERT_TRUE(decoded->nodes);
  EXPECT_EQ((*decoded->nodes)[0].name, "a");
  EXPECT_EQ((*decoded->nodes)[0].json, kNodeA);
  EXPECT_EQ((*decoded->diagnostics)[0].diagnostic.notes.at(0), "sample diverges");
}

TEST(ExtenderFilterResult, TheNodeTextsCanBeLeftOutAndInsertedWhereTheyBelong) {
  std::vector<TextInsertion> insertions;
  std::string body = encode_filter_result(every_field(), &insertions);
  ASSERT_EQ(insertions.size(), 1u);
  body.insert(insertions[0].at, insertions[0].text);
  EXPECT_EQ(body, encode_filter_result(every_field()));
}

TEST(ExtenderFilterResult, DecodesKeysAsGoMatchesThem) {
  // encoding/json: keys case-insensitively, a key given twice keeps its last value (a map's
  // entries add up), unknown keys are ignored.
  auto r = decode_filter_result(
      R"({"nodenames":["x"],"NODENAMES":["a","b"],"failedNodes":{"c":"first"},)"
      R"("FailedNodes":{"c":"last","d":"why"},"error":"","Extra":1})");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_TRUE(r->node_names);
  EXPECT_EQ(r->node_names->size(), 2u);
  EXPECT_EQ((*r->node_names)[1], "b");
  ASSERT_TRUE(r->failed_nodes);
  ASSERT_EQ(r->failed_nodes->size(), 2u);
  EXPECT_EQ((*r->failed_nodes)[0].reason, "last");
  EXPECT_FALSE(r->nodes);
  EXPECT_FALSE(r->allocations);
}

}  // namespace filter_result_test
}  // namespace hamisim::extender
