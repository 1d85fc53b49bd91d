// The JSON Patch diff and the base64 the webhook answers with.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "model/base64.h"
#include "webhook/json_patch.h"

namespace hamisim::webhook {
namespace {

namespace json = boost::json;

std::string diff_text(std::string_view from, std::string_view to) {
  return json::serialize(diff(json::parse(from), json::parse(to)));
}

TEST(JsonPatch, PointerTokensEscapeTildeBeforeSlash) {
  EXPECT_EQ(escape_pointer_token("nvidia.com/gpu"), "nvidia.com~1gpu");
  EXPECT_EQ(escape_pointer_token("a~b/c"), "a~0b~1c");
  EXPECT_EQ(escape_pointer_token("~1"), "~01");
  EXPECT_EQ(escape_pointer_token(""), "");
}

TEST(JsonPatch, EqualDocumentsGiveNoOps) {
  EXPECT_EQ(diff_text(R"({"a":[1,{"b":null}],"c":"x"})", R"({"c":"x","a":[1,{"b":null}]})"), "[]");
}

TEST(JsonPatch, ObjectsRemoveThenChangeThenAdd) {
  EXPECT_EQ(diff_text(R"({"gone":1,"same":2,"changed":{"x":1}})",
                      R"({"new":3,"same":2,"changed":{"x":2}})"),
            R"([{"op":"remove","path":"/gone"},{"op":"replace","path":"/changed/x","value":2},)"
            R"({"op":"add","path":"/new","value":3}])");
}

TEST(JsonPatch, KeysWithSlashesAreEscapedInPaths) {
  EXPECT_EQ(diff_text(R"({"limits":{"nvidia.com/gpu":"1"}})",
                      R"({"limits":{"nvidia.com/gpu":"1","nvidia.com/gpucores":"100"}})"),
            R"([{"op":"add","path":"/limits/nvidia.com~1gpucores","value":"100"}])");
}

TEST(JsonPatch, ArraysOfEqualLengthDiffPerElementOthersAreReplaced) {
  EXPECT_EQ(diff_text(R"({"a":[{"x":1},{"x":2}]})", R"({"a":[{"x":1},{"x":3}]})"),
            R"([{"op":"replace","path":"/a/1/x","value":3}])");
  EXPECT_EQ(diff_text(R"({"env":[{"name":"A"}]})", R"({"env":[{"name":"A"},{"name":"B"}]})"),
            R"([{"op":"replace","path":"/env","value":[{"name":"A"},{"name":"B"}]}])");
}

TEST(JsonPatch, TypeChangesAndTheRootAreReplaced) {
  EXPECT_EQ(diff_text(R"({"a":{"b":1}})", R"({"a":[1]})"),
            R"([{"op":"replace","path":"/a","value":[1]}])");
  EXPECT_EQ(diff_text("1", "2"), R"([{"op":"replace","path":"","value":2}])");
}

TEST(JsonPatch, Base64MatchesRfc4648Vectors) {
  EXPECT_EQ(model::encode_base64(""), "");
  EXPECT_EQ(model::encode_base64("f"), "Zg==");
  EXPECT_EQ(model::encode_base64("fo"), "Zm8=");
  EXPECT_EQ(model::encode_base64("foo"), "Zm9v");
  EXPECT_EQ(model::encode_base64("foob"), "Zm9vYg==");
  EXPECT_EQ(model::encode_base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(model::encode_base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(model::encode_base64(std::string("\xff\xfe\x00", 3)), "//4A");
}

}  // namespace
}  // namespace hamisim::webhook
