// ResourceSlices written back as JSON (src/dra/encode.h): what the strict decoder reads back
// is the same slice, every field kept.

#include "dra/encode.h"

#include <gtest/gtest.h>

#include "dra/decode.h"

namespace hamisim::dra {
namespace encode_test {

// Every field a slice can carry, in v1's shape.
const char* kRich = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
  "metadata":{"name":"rich"},"spec":{"driver":"gpu.example.com",
  "pool":{"name":"p","generation":3,"resourceSliceCount":2},"perDeviceNodeSelection":true,
  "devices":[
    {"name":"gpu-0","nodeName":"n1","bindsToNode":true,
     "bindingConditions":["ready"],"bindingFailureConditions":["failed"],
     "allowMultipleAllocations":true,
     "attributes":{"type":{"string":"gpu"},"minor":{"int":0},"mig":{"bool":false},
       "driverVersion":{"version":"1.2.3-rc.1+build.5"}},
     "capacity":{"memory":{"value":"80Gi","requestPolicy":{"default":"80Gi",
         "validRange":{"min":"1Mi","max":"80Gi","step":"1Mi"}}},
       "slots":{"value":"8","requestPolicy":{"default":"1","validValues":["1","2","4"]}}},
     "consumesCounters":[{"counterSet":"chip","counters":{"mem":{"value":"40Gi"}}}],
     "taints":[{"key":"k","value":"v","effect":"NoSchedule"}]},
    {"name":"gpu-1","nodeSelector":{"nodeSelectorTerms":[{"matchExpressions":
       [{"key":"rack","operator":"In","values":["r1"]}]}]}},
    {"name":"gpu-2","allNodes":true}],
  "sharedCounters":[{"name":"chip","counters":{"mem":{"value":"80Gi"}}}]}})";

TEST(DraEncode, DecodeEncodeDecodeKeepsEveryField) {
  auto first = decode_resource_slice(kRich);
  ASSERT_TRUE(first) << first.error().message;
  const std::string text = encode_resource_slice(*first);
  auto second = decode_resource_slice(text);
  ASSERT_TRUE(second) << second.error().message << "\n" << text;
  EXPECT_EQ(encode_resource_slice(*second), text);
  EXPECT_NE(text.find(R"("driverVersion":{"version":"1.2.3-rc.1+build.5"})"), std::string::npos);
  EXPECT_NE(text.find(R"("validValues":["1","2","4"])"), std::string::npos);
  EXPECT_NE(text.find(R"("bindsToNode":true)"), std::string::npos);
  EXPECT_EQ(second->devices.size(), 3u);
  EXPECT_EQ(second->shared_counters.at(0).counters.at("mem"),
            first->shared_counters.at(0).counters.at("mem"));
}

TEST(DraEncode, AListOfSlices) {
  auto slice = decode_resource_slice(kRich);
  ASSERT_TRUE(slice);
  const std::string list = encode_resource_slice_list({*slice, *slice});
  EXPECT_TRUE(list.starts_with(R"({"apiVersion":"v1","kind":"List","items":[{)")) << list;
}

}  // namespace encode_test
}  // namespace hamisim::dra
