// Annotation codecs against hami-device-model.md §1 and §4.5 (HAMi v2.10.0).

#include "device/codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "device/allocation.h"

namespace hamisim::device {
namespace codec_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// §1.1 complete examples [verified byte output].
constexpr std::string_view kV100Pair =
    R"([{"id":"GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec","count":10,"devmem":32768,"devcore":100,"type":"NVIDIA-Tesla V100-PCIE-32GB","mode":"hami-core","health":true},{"id":"GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448","index":1,"count":10,"devmem":32768,"devcore":100,"type":"NVIDIA-Tesla V100-PCIE-32GB","numa":1,"mode":"hami-core"}])";
constexpr std::string_view kMigA100 =
    R"([{"id":"GPU-a","count":7,"devmem":40960,"devcore":100,"type":"NVIDIA A100-SXM4-40GB","mode":"mig","migProfiles":[{"name":"1g.5gb","memoryMB":4864,"core":15,"sliceCount":1,"placements":[{"start":0,"size":1},{"start":1,"size":1}]},{"name":"7g.40gb","memoryMB":40192,"core":100,"sliceCount":7,"placements":[{"start":0,"size":8}]}],"health":true}])";
// Appendix A: v2.9.0 leaked `"devicepairscore":{}`.
constexpr std::string_view kV29T4 =
    R"([{"id":"GPU-x","count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","mode":"hami-core","health":true,"devicepairscore":{}}])";
// §1.2 example.
constexpr std::string_view kPairScores =
    R"([{"uuid":"GPU-b","score":{"GPU-a":600,"GPU-c":20}},{"uuid":"GPU-solo","score":{}}])";
// §4.5 MIG allocation example [verified byte output].
constexpr std::string_view kMigAllocations =
    R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":6,"size":1}},{"containerIndex":1,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"2g.10gb","placement":{"start":0,"size":2},"migUUID":"MIG-xyz","gpuInstanceID":7,"computeInstanceID":0}])";

std::vector<DeviceInfo> must_decode_register(std::string_view json) {
  auto r = decode_register_json(json);
  EXPECT_TRUE(r.ok()) << json << " -> " << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : std::vector<DeviceInfo>{};
}

std::string register_error(std::string_view json) {
  auto r = decode_register_json(json);
  EXPECT_FALSE(r.ok()) << "accepted: " << json;
  return r.ok() ? std::string() : r.error().message;
}

// ---------------------------------------------------------------------------------------------
// §1.1 hami.io/node-nvidia-register

TEST(RegisterJson, V100PairExampleRoundTripsByteIdentical) {
  EXPECT_EQ(encode_register_json(must_decode_register(kV100Pair)), kV100Pair);
}

TEST(RegisterJson, MigExampleRoundTripsByteIdentical) {
  EXPECT_EQ(encode_register_json(must_decode_register(kMigA100)), kMigA100);
}

TEST(RegisterJson, V100PairExampleDecodesEveryField) {
  const auto devices = must_decode_register(kV100Pair);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].id, "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec");
  EXPECT_EQ(devices[0].index, 0u);
  EXPECT_EQ(devices[0].count, 10);
  EXPECT_EQ(devices[0].devmem, 32768);
  EXPECT_EQ(devices[0].devcore, 100);
  EXPECT_EQ(devices[0].type, "NVIDIA-Tesla V100-PCIE-32GB");
  EXPECT_EQ(devices[0].numa, 0);
  EXPECT_EQ(devices[0].mode, "hami-core");
  EXPECT_TRUE(devices[0].health);
  EXPECT_EQ(devices[1].index, 1u);
  EXPECT_EQ(devices[1].numa, 1);
  EXPECT_FALSE(devices[1].health);
  EXPECT_TRUE(devices[1].device_vendor.empty());
}

TEST(RegisterJson, MigExampleDecodesProfilesAndPlacements) {
  const auto devices = must_decode_register(kMigA100);
  ASSERT_EQ(devices.size(), 1u);
  ASSERT_EQ(devices[0].mig_profiles.size(), 2u);
  const MigProfile& p = devices[0].mig_profiles[0];
  EXPECT_EQ(p.name, "1g.5gb");
  EXPECT_EQ(p.memory_mb, 4864);
  EXPECT_EQ(p.core, 15);
  EXPECT_EQ(p.slice_count, 1u);
  EXPECT_THAT(p.placements, ElementsAre(MigPlacement{0, 1}, MigPlacement{1, 1}));
  EXPECT_FALSE(p.placements_null);
}

// Appendix A: v2.9 register values carry `devicepairscore`, which readers ignore.
TEST(RegisterJson, V29ExampleWithDevicePairScoreDecodes) {
  const auto devices = must_decode_register(kV29T4);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].id, "GPU-x");
  EXPECT_EQ(devices[0].devmem, 15360);
  EXPECT_EQ(devices[0].type, "NVIDIA-Tesla T4");
  EXPECT_TRUE(devices[0].health);
  EXPECT_TRUE(devices[0].pair_scores.empty());
}

// §1.1: every DeviceInfo key is omitempty, health:false included.
TEST(RegisterJson, WriterOmitsZeroValues) {
  EXPECT_EQ(encode_register_json({DeviceInfo{}}), "[{}]");
  DeviceInfo d;
  d.id = "GPU-1";
  d.health = false;
  d.device_vendor = "NVIDIA";    // never written
  d.pair_scores["GPU-2"] = 600;  // never written
  d.mig_profiles = {};           // empty list omitted
  EXPECT_EQ(encode_register_json({d}), R"([{"id":"GPU-1"}])");
  EXPECT_EQ(encode_register_json({}), "[]");
}

// §1.1: MigProfile keys have no omitempty; a nil placement list is written `null`.
TEST(RegisterJson, WriterKeepsMigProfileZerosAndNilPlacements) {
  DeviceInfo d;
  d.mig_profiles.push_back(MigProfile{});
  EXPECT_EQ(
      encode_register_json({d}),
      R"([{"migProfiles":[{"name":"","memoryMB":0,"core":0,"sliceCount":0,"placements":null}]}])");
  d.mig_profiles[0].placements_null = false;
  EXPECT_EQ(
      encode_register_json({d}),
      R"([{"migProfiles":[{"name":"","memoryMB":0,"core":0,"sliceCount":0,"placements":[]}]}])");
}

TEST(RegisterJson, NullAndEmptyPlacementsAreDistinguishedOnRead) {
  const auto null_list = must_decode_register(R"([{"migProfiles":[{"placements":null}]}])");
  const auto missing = must_decode_register(R"([{"migProfiles":[{"name":"x"}]}])");
  const auto empty_list = must_decode_register(R"([{"migProfiles":[{"placements":[]}]}])");
  EXPECT_TRUE(null_list[0].mig_profiles[0].placements_null);
  EXPECT_TRUE(missing[0].mig_profiles[0].placements_null);
  EXPECT_FALSE(empty_list[0].mig_profiles[0].placements_null);
}

// §1.1: Go escapes <, >, & (and U+2028/9) on write.
TEST(RegisterJson, WriterEscapesLikeGo) {
  DeviceInfo d;
  d.type = "A<B>&C\"\\\xe2\x80\xa8";
  EXPECT_EQ(encode_register_json({d}), R"([{"type":"A\u003cB\u003e\u0026C\"\\\u2028"}])");
  EXPECT_EQ(must_decode_register(encode_register_json({d}))[0].type, d.type);
}

// §1.1 [verified]: key matching is case-insensitive.
TEST(RegisterJson, KeysMatchCaseInsensitively) {
  const auto devices =
      must_decode_register(R"([{"ID":"GPU-1","Count":10,"DEVMEM":5,"DevCore":100,"TYPE":"t",)"
                           R"("Numa":2,"MODE":"mig","Health":true,"INDEX":3,)"
                           R"("MIGPROFILES":[{"NAME":"1g","MEMORYMB":1,"Core":2,"SLICECOUNT":3,)"
                           R"("Placements":[{"START":4,"Size":5}]}]}])");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].id, "GPU-1");
  EXPECT_EQ(devices[0].count, 10);
  EXPECT_EQ(devices[0].devmem, 5);
  EXPECT_EQ(devices[0].devcore, 100);
  EXPECT_EQ(devices[0].numa, 2);
  EXPECT_EQ(devices[0].index, 3u);
  EXPECT_TRUE(devices[0].health);
  ASSERT_EQ(devices[0].mig_profiles.size(), 1u);
  EXPECT_EQ(devices[0].mig_profiles[0].slice_count, 3u);
  EXPECT_THAT(devices[0].mig_profiles[0].placements, ElementsAre(MigPlacement{4, 5}));
}

// Go folds each rune to ToUpper(ToLower(r)): U+017F (long s) matches 's', U+212A (Kelvin)
// matches 'k'. No other non-ASCII rune matches an ASCII field name.
TEST(RegisterJson, KeysMatchGoUnicodeFolding) {
  const auto devices = must_decode_register(
      "[{\"migProfiles\":[{\"\xc5\xbflicecount\":3,\"placements\":[{\"\xc5\xbfize\":2}]}],"
      "\"mod\xc3\xa9\":\"x\"}]");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].mig_profiles[0].slice_count, 3u);
  EXPECT_EQ(devices[0].mig_profiles[0].placements[0].size, 2u);
  EXPECT_EQ(devices[0].mode, "");
}

// §1.1 [verified]: unknown keys are ignored, whatever their value.
TEST(RegisterJson, UnknownKeysAreIgnored) {
  const auto devices = must_decode_register(
      R"([{"id":"a","devicepairscore":{"uuid":"x","score":{"y":1}},"extra":[1,{"z":null}],)"
      R"("huge":123456789012345678901234567890,"big":1e400,"migProfiles":[{"name":"1g",)"
      R"("instanceCount":7,"placements":[]}]}])");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].id, "a");
  EXPECT_EQ(devices[0].mig_profiles[0].name, "1g");
}

// §1.1 [verified]: `null` decodes to an empty list.
TEST(RegisterJson, TopLevelNullIsEmptyList) {
  EXPECT_TRUE(must_decode_register("null").empty());
  EXPECT_TRUE(must_decode_register(" \n null\t").empty());
  EXPECT_TRUE(must_decode_register("[]").empty());
}

// Go leaves a scalar untouched on `null` and resets slices; a null element is a zero value.
TEST(RegisterJson, NullFieldsLeaveZeroValues) {
  const auto devices = must_decode_register(
      R"([{"id":null,"count":null,"health":null,"migProfiles":null,"index":null},null])");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0], DeviceInfo{});
  EXPECT_EQ(devices[1], DeviceInfo{});
}

TEST(RegisterJson, RepeatedKeyDecodesAgainLastValueWins) {
  const auto devices =
      must_decode_register(R"([{"count":5,"Count":7,"id":"a","id":null,"numa":1,"numa":2}])");
  EXPECT_EQ(devices[0].count, 7);
  EXPECT_EQ(devices[0].id, "a");  // null leaves a string as it was
  EXPECT_EQ(devices[0].numa, 2);
}

// §1.1 [verified]: a fractional number for an integer field fails the whole value, with the
// element index and key in the message.
TEST(RegisterJson, FractionalIntegerFailsNamingIndexAndKey) {
  EXPECT_EQ(register_error(R"([{"id":"a"},{"devmem":1.5}])"), "[1].devmem: 1.5 is not an int32");
  EXPECT_THAT(register_error(R"([{"count":10.0}])"), HasSubstr("[0].count"));
}

// Go's decoder parses integer fields with strconv.ParseInt: no exponent either.
TEST(RegisterJson, ExponentIntegerFails) {
  EXPECT_EQ(register_error(R"([{"devcore":1e3}])"), "[0].devcore: 1e3 is not an int32");
  EXPECT_THAT(register_error(R"([{"index":1E0}])"), HasSubstr("[0].index"));
}

TEST(RegisterJson, OutOfRangeIntegerFails) {
  register_error(R"([{"devmem":2147483648}])");
  register_error(R"([{"count":-2147483649}])");
  register_error(R"([{"index":-1}])");
  register_error(R"([{"index":-0}])");  // ParseUint takes no sign
  register_error(R"([{"index":18446744073709551616}])");
  register_error(R"([{"numa":9223372036854775808}])");
  EXPECT_EQ(register_error(R"([{"migProfiles":[{"sliceCount":4294967296}]}])"),
            "[0].migProfiles[0].sliceCount: 4294967296 is not a uint32");
  EXPECT_EQ(register_error(R"([{"migProfiles":[{"placements":[{"start":-1}]}]}])"),
            "[0].migProfiles[0].placements[0].start: -1 is not a uint32");
  const auto limits = must_decode_register(
      R"([{"devmem":2147483647,"count":-2147483648,"index":18446744073709551615,)"
      R"("numa":-9223372036854775808,"devcore":-0}])");
  EXPECT_EQ(limits[0].devmem, 2147483647);
  EXPECT_EQ(limits[0].count, -2147483648);
  EXPECT_EQ(limits[0].index, 18446744073709551615u);
  EXPECT_EQ(limits[0].numa, INT64_MIN);
  EXPECT_EQ(limits[0].devcore, 0);
}

// §1.1 [verified]: a wrong JSON type fails the whole annotation.
TEST(RegisterJson, WrongJsonTypeFails) {
  EXPECT_THAT(register_error(R"([{"count":"10"}])"), HasSubstr("[0].count"));
  register_error(R"([{"health":1}])");
  register_error(R"([{"health":"true"}])");
  register_error(R"([{"id":5}])");
  register_error(R"([{"migProfiles":{}}])");
  register_error(R"([{"migProfiles":[5]}])");
  register_error(R"([{"migProfiles":[{"placements":[[]]}]}])");
  register_error(R"({"id":"a"})");
  register_error(R"("[]")");
  register_error("5");
  register_error("true");
  register_error("[1]");
  register_error(R"([["id"]])");
}

TEST(RegisterJson, SyntaxErrorsFail) {
  for (const std::string_view bad : {"",
                                     " ",
                                     "[",
                                     "[{}",
                                     "[1,]",
                                     "[{}]x",
                                     "[{},]",
                                     "01",
                                     "[01]",
                                     "[-]",
                                     "[1.]",
                                     "[.5]",
                                     "[1e]",
                                     "[+1]",
                                     "[{\"a\":}]",
                                     "[{\"a\" 1}]",
                                     "[{a:1}]",
                                     "[\"\x01\"]",
                                     "[\"\\x\"]",
                                     "[\"\\u12\"]",
                                     "[tru]",
                                     "[nul]",
                                     "[NaN]",
                                     "\xef\xbb\xbf[]",
                                     "[{\"a\":1,}]",
                                     "[]]"}) {
    EXPECT_FALSE(decode_register_json(bad).ok()) << bad;
  }
}

// Go's scanner refuses nesting deeper than 10000; none of this may crash.
TEST(RegisterJson, DeepNestingIsBoundedAndDoesNotCrash) {
  EXPECT_FALSE(decode_register_json(std::string(200000, '[')).ok());
  auto nested = [](size_t depth) {
    return R"([{"unknown":)" + std::string(depth, '[') + std::string(depth, ']') + "}]";
  };
  EXPECT_TRUE(decode_register_json(nested(9998)).ok());  // 9998 + 2 = 10000 levels
  EXPECT_FALSE(decode_register_json(nested(9999)).ok());
  std::string objects;
  for (int i = 0; i < 5000; ++i) objects += R"({"a":)";
  objects += "1";
  for (int i = 0; i < 5000; ++i) objects += "}";
  EXPECT_TRUE(decode_register_json("[{\"x\":" + objects + "}]").ok());
}

// Go replaces invalid UTF-8 bytes and unpaired surrogate escapes with U+FFFD.
TEST(RegisterJson, InvalidUtf8AndLoneSurrogatesBecomeReplacementCharacter) {
  EXPECT_EQ(must_decode_register("[{\"id\":\"a\xff"
                                 "b\"}]")[0]
                .id,
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(must_decode_register("[{\"id\":\"\xe2\x82\"}]")[0].id, "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(must_decode_register(R"([{"id":"\ud800x"}])")[0].id, "\xef\xbf\xbdx");
  EXPECT_EQ(must_decode_register(R"([{"id":"\udc00\ud800"}])")[0].id, "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(must_decode_register(R"([{"id":"\ud800\ud83d\ude00"}])")[0].id,
            "\xef\xbf\xbd\xf0\x9f\x98\x80");
  EXPECT_EQ(must_decode_register(R"([{"id":"\u00e9\u003c\/\n"}])")[0].id, "\xc3\xa9</\n");
}

// §1.1: devicevendor / custominfo exist in Go's struct, so they are read (and type-checked)
// but never kept.
TEST(RegisterJson, DeviceVendorAndCustomInfoAreReadTolerated) {
  const auto devices = must_decode_register(
      R"([{"id":"a","devicevendor":"NVIDIA","custominfo":{"k":[1,2.5,{"x":null}],"s":"1e999"},)"
      R"("migtemplate":[[{"name":"1g.5gb","memory":5120,"count":7}],null]}])");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_TRUE(devices[0].device_vendor.empty());
  register_error(R"([{"devicevendor":5}])");
  register_error(R"([{"custominfo":[]}])");
  register_error(R"([{"custominfo":{"a":1e400}}])");  // float64 overflow in interface{}
  EXPECT_TRUE(decode_register_json(R"([{"custominfo":{"a":1e-400}}])").ok());  // underflow: 0
  register_error(R"([{"migtemplate":[[{"memory":1.5}]]}])");
  register_error(R"([{"migtemplate":{}}])");
}

// ---------------------------------------------------------------------------------------------
// §1.2 hami.io/node-nvidia-score

TEST(PairScores, ExampleRoundTripsByteIdentical) {
  auto r = decode_pair_scores(kPairScores);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].uuid, "GPU-b");
  EXPECT_EQ((*r)[0].scores.at("GPU-a"), 600);
  EXPECT_EQ((*r)[0].scores.at("GPU-c"), 20);
  EXPECT_TRUE((*r)[1].scores.empty());
  EXPECT_EQ(encode_pair_scores(*r), kPairScores);
}

// §1.2: the writer type has no omitempty; map keys are sorted ascending.
TEST(PairScores, WriterAlwaysWritesUuidAndScoreWithSortedKeys) {
  EXPECT_EQ(encode_pair_scores({DevicePairScore{}}), R"([{"uuid":"","score":{}}])");
  DevicePairScore s;
  s.uuid = "GPU-1";
  s.scores = {{"b", 2}, {"a", 1}, {"B", 3}, {"a<", -4}};
  EXPECT_EQ(encode_pair_scores({s}),
            R"([{"uuid":"GPU-1","score":{"B":3,"a":1,"a\u003c":-4,"b":2}}])");
}

TEST(PairScores, ReaderFollowsGoMapRules) {
  auto r = decode_pair_scores(R"([{"UUID":"x","Score":{"a":null,"b":1,"b":2},"score":{"c":3}}])");
  ASSERT_TRUE(r.ok()) << r.error().message;
  // A repeated map key decodes into the same map (Go does not reset it); null values are 0.
  EXPECT_EQ((*r)[0].scores,
            (std::map<std::string, int32_t, std::less<>>{{"a", 0}, {"b", 2}, {"c", 3}}));
  auto cleared = decode_pair_scores(R"([{"score":{"a":1},"score":null}])");
  ASSERT_TRUE(cleared.ok());
  EXPECT_TRUE((*cleared)[0].scores.empty());
  EXPECT_TRUE(decode_pair_scores("null").ok());
  EXPECT_FALSE(decode_pair_scores(R"([{"score":{"a":1.5}}])").ok());
  EXPECT_FALSE(decode_pair_scores(R"([{"score":[]}])").ok());
  EXPECT_FALSE(decode_pair_scores(R"([{"uuid":1}])").ok());
  EXPECT_FALSE(decode_pair_scores("[").ok());
}

// ---------------------------------------------------------------------------------------------
// §1.4 hami.io/device-cordon

TEST(Cordon, ItemsAreTrimmedAndBlanksIgnored) {
  EXPECT_THAT(parse_cordon(" GPU-a , ,GPU-b,\tGPU-a \n,"), ElementsAre("GPU-a", "GPU-b"));
  EXPECT_TRUE(parse_cordon("").empty());
  EXPECT_TRUE(parse_cordon(" , \t ,").empty());
  // strings.TrimSpace trims Unicode spaces too (NBSP, U+3000), not inner ones.
  EXPECT_THAT(parse_cordon("\xc2\xa0GPU-c d\xe3\x80\x80"), ElementsAre("GPU-c d"));
}

// ---------------------------------------------------------------------------------------------
// §1.6 legacy colon format

TEST(LegacyDevices, EncoderWritesNineFields) {
  DeviceInfo d;
  d.id = "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec";
  d.count = 10;
  d.devmem = 32768;
  d.devcore = 100;
  d.type = "NVIDIA-Tesla V100-PCIE-32GB";
  d.health = true;
  d.mode = "hami-core";
  EXPECT_EQ(encode_legacy_devices({d}),
            "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,10,32768,100,NVIDIA-Tesla "
            "V100-PCIE-32GB,0,true,0,hami-core:");
  d.health = false;
  d.index = 3;
  d.numa = -1;
  EXPECT_EQ(encode_legacy_devices({d, d}).substr(0, 43),
            "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,10");
  EXPECT_THAT(encode_legacy_devices({d}), HasSubstr(",-1,false,3,hami-core:"));
}

TEST(LegacyDevices, SevenFieldFormDefaultsIndexAndMode) {
  auto r = decode_legacy_devices("GPU-a,10,32768,100,NVIDIA-Tesla V100,1,true:");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 1u);
  const DeviceInfo& d = (*r)[0];
  EXPECT_EQ(d.id, "GPU-a");
  EXPECT_EQ(d.count, 10);
  EXPECT_EQ(d.devmem, 32768);
  EXPECT_EQ(d.devcore, 100);
  EXPECT_EQ(d.type, "NVIDIA-Tesla V100");
  EXPECT_EQ(d.numa, 1);
  EXPECT_TRUE(d.health);
  EXPECT_EQ(d.index, 0u);
  EXPECT_EQ(d.mode, "hami-core");
}

TEST(LegacyDevices, NineFieldFormReadsIndexAndMode) {
  auto r = decode_legacy_devices("GPU-a,10,1,100,T,0,false,2,mig:GPU-b,4,2,50,T,0,1,0,mps:");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].index, 2u);
  EXPECT_EQ((*r)[0].mode, "mig");
  EXPECT_FALSE((*r)[0].health);
  EXPECT_EQ((*r)[1].mode, "mps");
  EXPECT_TRUE((*r)[1].health);
}

TEST(LegacyDevices, EmptySegmentsAreSkipped) {
  auto r = decode_legacy_devices("::GPU-a,1,2,3,T,0,t:::GPU-b,1,2,3,T,0,f");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->size(), 2u);
  auto none = decode_legacy_devices(":");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(LegacyDevices, ValueWithoutColonIsRejected) {
  EXPECT_FALSE(decode_legacy_devices("GPU-a,10,32768,100,T,0,true").ok());
  EXPECT_FALSE(decode_legacy_devices("").ok());
  // A JSON register value is not a legacy value either.
  EXPECT_FALSE(decode_legacy_devices(kV100Pair).ok());
}

TEST(LegacyDevices, WrongFieldCountOrMissingCommaIsRejected) {
  EXPECT_FALSE(decode_legacy_devices("GPU-a,10,1,100,T,0,true,2:").ok());   // 8
  EXPECT_FALSE(decode_legacy_devices("GPU-a,10,1,100,T,0:").ok());          // 6
  EXPECT_FALSE(decode_legacy_devices("GPU-a,10,1,100,T,0,t,0,m,x:").ok());  // 10
  auto r = decode_legacy_devices("GPU-a,10,1,100,T,0,true:junk:");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("\"junk\""));
}

// §1.6: health uses Go's ParseBool set.
TEST(LegacyDevices, HealthUsesGoParseBool) {
  for (const char* yes : {"1", "t", "T", "TRUE", "true", "True"}) {
    auto r = decode_legacy_devices(std::string("a,1,1,1,T,0,") + yes + ":");
    ASSERT_TRUE(r.ok()) << yes;
    EXPECT_TRUE((*r)[0].health) << yes;
  }
  for (const char* no : {"0", "f", "F", "FALSE", "false", "False"}) {
    auto r = decode_legacy_devices(std::string("a,1,1,1,T,0,") + no + ":");
    ASSERT_TRUE(r.ok()) << no;
    EXPECT_FALSE((*r)[0].health) << no;
  }
  for (const char* bad : {"yes", "tRUE", "", " true", "2"}) {
    EXPECT_FALSE(decode_legacy_devices(std::string("a,1,1,1,T,0,") + bad + ":").ok()) << bad;
  }
}

// §1.6: count/devmem/devcore are strconv.ParseInt(s, 10, 32); numa and index Atoi.
TEST(LegacyDevices, IntegersParseLikeGoStrconv) {
  auto r = decode_legacy_devices("a,+10,-5,007,T,-3,true,+4,m:");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)[0].count, 10);
  EXPECT_EQ((*r)[0].devmem, -5);
  EXPECT_EQ((*r)[0].devcore, 7);
  EXPECT_EQ((*r)[0].numa, -3);
  EXPECT_EQ((*r)[0].index, 4u);
  for (const char* bad : {" 10", "10 ", "1e3", "1.0", "2147483648", "", "+", "-", "0x10", "1_0"}) {
    auto e = decode_legacy_devices(std::string("a,") + bad + ",1,1,T,0,true:");
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_THAT(e.error().message, HasSubstr("count"));
  }
  EXPECT_TRUE(decode_legacy_devices("a,2147483647,-2147483648,1,T,0,true:").ok());
  EXPECT_FALSE(decode_legacy_devices("a,1,1,1,T,9223372036854775808,true:").ok());
}

TEST(LegacyDevices, NegativeIndexIsRejected) {
  auto r = decode_legacy_devices("a,1,1,1,T,0,true,-1,hami-core:");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("index"));
}

// ---------------------------------------------------------------------------------------------
// §4.5 pod device strings

ContainerDevice dev(std::string uuid, int32_t mem, int32_t cores, std::string type = "NVIDIA") {
  ContainerDevice d;
  d.uuid = std::move(uuid);
  d.type = std::move(type);
  d.usedmem = mem;
  d.usedcores = cores;
  return d;
}

PodSingleDevice must_decode_pod(std::string_view value) {
  auto r = decode_pod_devices(value);
  EXPECT_TRUE(r.ok()) << value << " -> " << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : PodSingleDevice{};
}

// §4.5 worked example: 2 app containers on one GPU.
TEST(PodDevices, TwoAppContainersExample) {
  const std::string value =
      "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,NVIDIA,3000,30:;"
      "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,NVIDIA,5000,50:;";
  const PodSingleDevice pod = {{dev("GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448", 3000, 30)},
                               {dev("GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448", 5000, 50)}};
  EXPECT_EQ(encode_pod_devices(pod), value);
  PodSingleDevice expected = pod;
  expected.emplace_back();  // the trailing ';' yields one extra empty container
  EXPECT_EQ(must_decode_pod(value), expected);
}

// §4.5 variant: container 0 has no GPU, container 1 has two.
TEST(PodDevices, EmptyFirstContainerThenTwoGpus) {
  const std::string value = ";GPU-A,NVIDIA,2500,25:GPU-B,NVIDIA,2500,25:;";
  const PodSingleDevice pod = {{}, {dev("GPU-A", 2500, 25), dev("GPU-B", 2500, 25)}};
  EXPECT_EQ(encode_pod_devices(pod), value);
  EXPECT_EQ(must_decode_pod(value), (PodSingleDevice{pod[0], pod[1], {}}));
}

// §4.5 variant: init container without GPU + 2 app containers (issue #2899's expected form).
TEST(PodDevices, InitContainerWithoutGpuIsPositional) {
  const std::string value = ";GPU-A,NVIDIA,2500,25:;GPU-B,NVIDIA,2500,25:;";
  const PodSingleDevice pod = {{}, {dev("GPU-A", 2500, 25)}, {dev("GPU-B", 2500, 25)}};
  EXPECT_EQ(encode_pod_devices(pod), value);
  EXPECT_EQ(must_decode_pod(value), (PodSingleDevice{pod[0], pod[1], pod[2], {}}));
}

// §4.5 variant: whole card; "A:;" decodes to 2 entries, the last empty.
TEST(PodDevices, WholeCardExampleDecodesTrailingEmptyEntry) {
  const PodSingleDevice decoded = must_decode_pod("GPU-X,NVIDIA,15360,100:;");
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_THAT(decoded[0], ElementsAre(dev("GPU-X", 15360, 100)));
  EXPECT_TRUE(decoded[1].empty());
  EXPECT_EQ(encode_pod_devices({decoded[0]}), "GPU-X,NVIDIA,15360,100:;");
}

// §4.5: the v2.10.0 bug drops padding entries; readers tolerate the unaligned form.
TEST(PodDevices, UnalignedV210FormDecodes) {
  const PodSingleDevice decoded = must_decode_pod("GPU-A,NVIDIA,2500,25:;GPU-B,NVIDIA,2500,25:;");
  EXPECT_EQ(decoded, (PodSingleDevice{{dev("GPU-A", 2500, 25)}, {dev("GPU-B", 2500, 25)}, {}}));
}

TEST(PodDevices, EmptyValueIsOneEmptyContainer) {
  EXPECT_EQ(must_decode_pod(""), PodSingleDevice{{}});
  EXPECT_EQ(must_decode_pod(";;"), (PodSingleDevice{{}, {}, {}}));
  EXPECT_EQ(encode_pod_devices({}), "");
  EXPECT_EQ(encode_pod_devices({{}, {}}), ";;");
}

// §4.5: fewer than 4 comma fields is an error with HAMi's text.
TEST(PodDevices, MissingFieldsIsAnError) {
  auto r = decode_pod_devices("GPU-A,NVIDIA,2500:;");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(
      r.error().message,
      HasSubstr("pod annotation format error, missing fields, do not use nodeName in task spec"));
  auto c = decode_container_devices("GPU-A,NVIDIA:");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            "pod annotation format error, missing fields, do not use nodeName in task spec");
}

TEST(PodDevices, NonInt32MemoryOrCoresIsAnErrorNamingTheValue) {
  for (const char* bad : {"GPU-A,NVIDIA,25x,25:", "GPU-A,NVIDIA,2147483648,25:",
                          "GPU-A,NVIDIA,1,2.5:", "GPU-A,NVIDIA,,25:"}) {
    auto r = decode_container_devices(bad);
    ASSERT_FALSE(r.ok()) << bad;
  }
  EXPECT_THAT(decode_container_devices("GPU-A,NVIDIA,25x,25:").error().message,
              HasSubstr("\"25x\""));
  EXPECT_THAT(decode_container_devices("GPU-A,NVIDIA,1,2.5:").error().message,
              HasSubstr("\"2.5\""));
  auto r = decode_container_devices("GPU-A,NVIDIA,+1,-2:");
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(*r, ElementsAre(dev("GPU-A", 1, -2)));
}

// HAMi passes strconv's error through; Go's ParseInt(s, 10, 32) reports overflow as soon as
// the digits exceed 32 bits, even before a later invalid character.
TEST(PodDevices, IntegerErrorsAreGoStrconvErrors) {
  EXPECT_EQ(decode_pod_devices("GPU-A,NVIDIA,2147483648,1:;").error().message,
            "strconv.ParseInt: parsing \"2147483648\": value out of range");
  EXPECT_EQ(decode_container_devices("GPU-A,NVIDIA,1,x\n:").error().message,
            "strconv.ParseInt: parsing \"x\\n\": invalid syntax");
  EXPECT_EQ(decode_container_devices("GPU-A,NVIDIA,99999999999x,1:").error().message,
            "strconv.ParseInt: parsing \"99999999999x\": value out of range");
  EXPECT_EQ(decode_container_devices("GPU-A,NVIDIA,1,-2147483649:").error().message,
            "strconv.ParseInt: parsing \"-2147483649\": value out of range");
  EXPECT_EQ(decode_container_devices("GPU-A,NVIDIA,1,\xff:").error().message,
            "strconv.ParseInt: parsing \"\\xff\": invalid syntax");
}

TEST(PodDevices, PiecesWithoutCommaAndExtraFieldsAreIgnored) {
  auto r = decode_container_devices("junk:GPU-A,NVIDIA,1,2,extra,more::GPU-B,X,3,4");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_THAT(*r, ElementsAre(dev("GPU-A", 1, 2), dev("GPU-B", 3, 4, "X")));
}

// Idx, slots and the MIG choice are not part of the string (§4.5).
TEST(PodDevices, EncoderWritesOnlyUuidTypeMemoryCores) {
  ContainerDevice d = dev("GPU-a", 5120, 14);
  d.idx = 3;
  d.slots = 2;
  d.mig_profile = "1g.5gb";
  d.mig_placement = MigPlacement{6, 1};
  EXPECT_EQ(encode_container_devices({d, dev("GPU-b", -1, 0)}),
            "GPU-a,NVIDIA,5120,14:GPU-b,NVIDIA,-1,0:");
  EXPECT_EQ(encode_pod_devices({{d}}), "GPU-a,NVIDIA,5120,14:;");
}

// ---------------------------------------------------------------------------------------------
// §4.5 hami.io/vgpu-mig-allocations

std::string mig_error(std::string_view json) {
  auto r = decode_mig_allocations(json);
  EXPECT_FALSE(r.ok()) << "accepted: " << json;
  return r.ok() ? std::string() : r.error().message;
}

TEST(MigAllocations, ExampleRoundTripsByteIdentical) {
  auto r = decode_mig_allocations(kMigAllocations);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].gpu_uuid, "GPU-a");
  EXPECT_EQ((*r)[0].placement, (MigPlacement{6, 1}));
  EXPECT_FALSE((*r)[0].mig_uuid.has_value());
  EXPECT_FALSE((*r)[0].gpu_instance_id.has_value());
  EXPECT_EQ((*r)[1].container_index, 1);
  EXPECT_EQ((*r)[1].mig_uuid, "MIG-xyz");
  EXPECT_EQ((*r)[1].gpu_instance_id, 7);
  EXPECT_EQ((*r)[1].compute_instance_id, 0);  // pointer: 0 is present
  EXPECT_EQ(encode_mig_allocations(*r), kMigAllocations);
}

TEST(MigAllocations, EmptyStringIsNoAllocations) {
  auto r = decode_mig_allocations("");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
  EXPECT_EQ(encode_mig_allocations({}), "");
  EXPECT_TRUE(decode_mig_allocations("null").ok());
  EXPECT_TRUE(decode_mig_allocations("[]").ok());
  EXPECT_FALSE(decode_mig_allocations(" ").ok());
}

TEST(MigAllocations, NegativeContainerIndexIsRejected) {
  EXPECT_THAT(
      mig_error(
          R"([{"containerIndex":-1,"deviceIndex":0,"gpuUUID":"g","profile":"p","placement":{"start":0,"size":1}}])"),
      HasSubstr("containerIndex"));
}

TEST(MigAllocations, NegativeDeviceIndexIsRejected) {
  EXPECT_THAT(
      mig_error(R"([{"deviceIndex":-1,"gpuUUID":"g","profile":"p","placement":{"size":1}}])"),
      HasSubstr("deviceIndex"));
}

TEST(MigAllocations, EmptyGpuUuidIsRejected) {
  EXPECT_THAT(mig_error(R"([{"gpuUUID":"","profile":"p","placement":{"size":1}}])"),
              HasSubstr("gpuUUID"));
}

TEST(MigAllocations, EmptyProfileIsRejected) {
  EXPECT_THAT(mig_error(R"([{"gpuUUID":"g","placement":{"size":1}}])"), HasSubstr("profile"));
}

TEST(MigAllocations, ZeroPlacementSizeIsRejected) {
  EXPECT_THAT(mig_error(R"([{"gpuUUID":"g","profile":"p","placement":{"start":3,"size":0}}])"),
              HasSubstr("size"));
  mig_error(R"([{"gpuUUID":"g","profile":"p"}])");
}

TEST(MigAllocations, RuntimeFieldsMustBeAllOrNone) {
  const std::string base = R"({"gpuUUID":"g","profile":"p","placement":{"size":1})";
  mig_error("[" + base + R"(,"migUUID":"MIG-1"}])");
  mig_error("[" + base + R"(,"gpuInstanceID":1,"computeInstanceID":2}])");
  mig_error("[" + base + R"(,"migUUID":"","gpuInstanceID":1,"computeInstanceID":2}])");
  mig_error("[" + base + R"(,"migUUID":"M","gpuInstanceID":null,"computeInstanceID":2}])");
  EXPECT_TRUE(decode_mig_allocations("[" + base +
                                     R"(,"migUUID":"M","gpuInstanceID":1,"computeInstanceID":2}])")
                  .ok());
  EXPECT_TRUE(decode_mig_allocations("[" + base + R"(,"migUUID":"","gpuInstanceID":null}])").ok());
}

TEST(MigAllocations, DuplicateContainerAndDeviceIndexIsRejected) {
  const std::string a =
      R"({"containerIndex":1,"deviceIndex":2,"gpuUUID":"g","profile":"p","placement":{"size":1}})";
  const std::string b =
      R"({"containerIndex":1,"deviceIndex":3,"gpuUUID":"g","profile":"p","placement":{"size":1}})";
  EXPECT_TRUE(decode_mig_allocations("[" + a + "," + b + "]").ok());
  EXPECT_THAT(mig_error("[" + a + "," + b + "," + a + "]"), HasSubstr("duplicate"));
}

// The instance ids are *uint32 in Go.
TEST(MigAllocations, InstanceIdsAreUint32) {
  const std::string base = R"({"gpuUUID":"g","profile":"p","placement":{"size":1},"migUUID":"M")";
  mig_error("[" + base + R"(,"gpuInstanceID":-1,"computeInstanceID":0}])");
  mig_error("[" + base + R"(,"gpuInstanceID":4294967296,"computeInstanceID":0}])");
  mig_error("[" + base + R"(,"gpuInstanceID":"1","computeInstanceID":0}])");
  auto r =
      decode_mig_allocations("[" + base + R"(,"GPUINSTANCEID":4294967295,"computeinstanceid":0}])");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)[0].gpu_instance_id, 4294967295);
}

// ---------------------------------------------------------------------------------------------
// Round-trip properties over random values (fixed seed: deterministic).

class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {}
  int64_t range(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool coin() { return range(0, 1) == 1; }
  template <class T>
  T any_int() {
    switch (range(0, 3)) {
      case 0:
        return 0;
      case 1:
        return std::numeric_limits<T>::min();
      case 2:
        return std::numeric_limits<T>::max();
      default:
        return static_cast<T>(
            range(std::numeric_limits<T>::min() / 2, std::numeric_limits<T>::max() / 2));
    }
  }
  // Valid UTF-8 with characters Go escapes, plus ASCII.
  std::string text(size_t max_len) {
    static const std::vector<std::string> pieces = {"a",
                                                    "Z",
                                                    "0",
                                                    "-",
                                                    " ",
                                                    "\"",
                                                    "\\",
                                                    "/",
                                                    "<",
                                                    ">",
                                                    "&",
                                                    "\n",
                                                    "\t",
                                                    std::string(1, '\0'),
                                                    "\x01",
                                                    "\x7f",
                                                    "\xc3\xa9",
                                                    "\xe2\x80\xa8",
                                                    "\xe2\x80\xa9",
                                                    "\xf0\x9f\x98\x80",
                                                    "\xef\xbf\xbd",
                                                    ",",
                                                    ":",
                                                    ";",
                                                    "{",
                                                    "]"};
    std::string s;
    const auto n = static_cast<size_t>(range(0, static_cast<int64_t>(max_len)));
    for (size_t i = 0; i < n; ++i) s += pieces[static_cast<size_t>(range(0, pieces.size() - 1))];
    return s;
  }
  // No separators of the colon formats.
  std::string token(size_t max_len) {
    static const std::string chars = "abcXYZ0189-_ .<>&\"\\{}[]";
    std::string s;
    const auto n = static_cast<size_t>(range(0, static_cast<int64_t>(max_len)));
    for (size_t i = 0; i < n; ++i) s += chars[static_cast<size_t>(range(0, chars.size() - 1))];
    return s;
  }

 private:
  std::mt19937 rng_;
};

DeviceInfo random_device(Gen& g) {
  DeviceInfo d;
  d.id = g.text(8);
  d.index = g.any_int<uint64_t>();
  d.count = g.any_int<int32_t>();
  d.devmem = g.any_int<int32_t>();
  d.devcore = g.any_int<int32_t>();
  d.type = g.text(8);
  d.numa = g.any_int<int64_t>();
  d.mode = g.text(4);
  d.health = g.coin();
  const auto profiles = g.range(0, 3);
  for (int64_t i = 0; i < profiles; ++i) {
    MigProfile p;
    p.name = g.text(6);
    p.memory_mb = g.any_int<int32_t>();
    p.core = g.any_int<int32_t>();
    p.slice_count = g.any_int<uint32_t>();
    p.placements_null = g.coin();
    if (!p.placements_null) {
      const auto n = g.range(0, 3);
      for (int64_t k = 0; k < n; ++k)
        p.placements.push_back({g.any_int<uint32_t>(), g.any_int<uint32_t>()});
    }
    d.mig_profiles.push_back(p);
  }
  return d;
}

TEST(RoundTrip, RandomRegisterListsSurviveEncodeDecode) {
  Gen g(20251020);
  for (int iter = 0; iter < 500; ++iter) {
    std::vector<DeviceInfo> devices;
    const auto n = g.range(0, 4);
    for (int64_t i = 0; i < n; ++i) devices.push_back(random_device(g));
    const std::string json = encode_register_json(devices);
    auto back = decode_register_json(json);
    ASSERT_TRUE(back.ok()) << json << ": " << back.error().message;
    EXPECT_EQ(back.value(), devices) << json;
    EXPECT_EQ(encode_register_json(back.value()), json);
  }
}

TEST(RoundTrip, RandomPairScoresSurviveEncodeDecode) {
  Gen g(7);
  for (int iter = 0; iter < 300; ++iter) {
    std::vector<DevicePairScore> scores(static_cast<size_t>(g.range(0, 3)));
    for (auto& s : scores) {
      s.uuid = g.text(6);
      const auto n = g.range(0, 4);
      for (int64_t k = 0; k < n; ++k) s.scores[g.text(5)] = g.any_int<int32_t>();
    }
    const std::string json = encode_pair_scores(scores);
    auto back = decode_pair_scores(json);
    ASSERT_TRUE(back.ok()) << json << ": " << back.error().message;
    EXPECT_EQ(back.value(), scores) << json;
  }
}

TEST(RoundTrip, RandomLegacyListsSurviveEncodeDecode) {
  Gen g(11);
  for (int iter = 0; iter < 300; ++iter) {
    std::vector<DeviceInfo> devices(static_cast<size_t>(g.range(1, 4)));
    for (auto& d : devices) {
      d.id = g.token(8);
      d.count = g.any_int<int32_t>();
      d.devmem = g.any_int<int32_t>();
      d.devcore = g.any_int<int32_t>();
      d.type = g.token(8);
      d.numa = g.any_int<int64_t>();
      d.health = g.coin();
      d.index = static_cast<uint64_t>(g.range(0, std::numeric_limits<int64_t>::max()));
      d.mode = g.token(5);
    }
    const std::string value = encode_legacy_devices(devices);
    auto back = decode_legacy_devices(value);
    ASSERT_TRUE(back.ok()) << value << ": " << back.error().message;
    EXPECT_EQ(back.value(), devices) << value;
  }
}

TEST(RoundTrip, RandomPodDeviceListsDecodeWithOneTrailingEmptyContainer) {
  Gen g(42);
  for (int iter = 0; iter < 500; ++iter) {
    PodSingleDevice pod(static_cast<size_t>(g.range(0, 4)));
    for (auto& container : pod) {
      const auto n = g.range(0, 3);
      for (int64_t k = 0; k < n; ++k) {
        container.push_back(
            dev(g.token(8), g.any_int<int32_t>(), g.any_int<int32_t>(), g.token(6)));
      }
    }
    const std::string value = encode_pod_devices(pod);
    auto back = decode_pod_devices(value);
    ASSERT_TRUE(back.ok()) << value << ": " << back.error().message;
    PodSingleDevice expected = pod;
    expected.emplace_back();
    EXPECT_EQ(back.value(), expected) << value;
    if (!pod.empty()) {
      auto one = decode_container_devices(encode_container_devices(pod[0]));
      ASSERT_TRUE(one.ok());
      EXPECT_EQ(one.value(), pod[0]);
    }
  }
}

TEST(RoundTrip, RandomMigAllocationsSurviveEncodeDecode) {
  Gen g(3);
  for (int iter = 0; iter < 300; ++iter) {
    std::vector<MigAllocation> allocations;
    const auto n = g.range(1, 4);
    for (int64_t i = 0; i < n; ++i) {
      MigAllocation a;
      a.container_index = i;
      a.device_index = g.range(0, std::numeric_limits<int64_t>::max());
      a.gpu_uuid = "G" + g.text(6);
      a.profile = "p" + g.text(4);
      a.placement = {g.any_int<uint32_t>(), static_cast<uint32_t>(g.range(1, 8))};
      if (g.coin()) {
        a.mig_uuid = "M" + g.text(4);
        a.gpu_instance_id = g.any_int<uint32_t>();
        a.compute_instance_id = g.any_int<uint32_t>();
      }
      allocations.push_back(a);
    }
    const std::string json = encode_mig_allocations(allocations);
    auto back = decode_mig_allocations(json);
    ASSERT_TRUE(back.ok()) << json << ": " << back.error().message;
    EXPECT_EQ(back.value(), allocations) << json;
  }
}

// HAMi matches a request's vendor against a device's type case-insensitively, anywhere in it
// (strings.Contains on upper-cased texts).
TEST(ContainsIgnoreCase, MatchesAnywhereInAnyCase) {
  EXPECT_TRUE(contains_ignore_case("NVIDIA-Tesla V100", "nvidia"));
  EXPECT_TRUE(contains_ignore_case("nvidia-tesla v100", "NVIDIA"));
  EXPECT_TRUE(contains_ignore_case("Tesla-NviDia", "NVIDIA"));
  EXPECT_TRUE(contains_ignore_case("anything", ""));
  EXPECT_TRUE(contains_ignore_case("", ""));
  EXPECT_TRUE(contains_ignore_case("MLU", "mlu"));
  EXPECT_FALSE(contains_ignore_case("NVIDI", "NVIDIA"));
  EXPECT_FALSE(contains_ignore_case("", "a"));
  EXPECT_FALSE(contains_ignore_case("NV-IDIA", "NVIDIA"));
  // Only ASCII letters fold: '@' and '`' are 0x20 away from 'A'-1 and 'a'-1 but never equal.
  EXPECT_FALSE(contains_ignore_case("@", "`"));
  EXPECT_FALSE(contains_ignore_case("[", "{"));
  EXPECT_TRUE(contains_ignore_case("\xc3\xa9t\xc3\xa9", "\xc3\xa9T"));
}

}  // namespace codec_test
}  // namespace hamisim::device
