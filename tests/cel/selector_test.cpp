#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cel/selector.h"
#include "fake_device.h"

namespace hamisim::cel {
namespace {

using testing::FakeDevice;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Compiles and evaluates; a compile error or a run-time error fails the test.
bool match(std::string_view expr, const Device& device) {
  auto s = Selector::compile(expr);
  if (!s) {
    ADD_FAILURE() << "compile: " << s.error().message;
    return false;
  }
  auto r = s->matches(device);
  if (!r) {
    ADD_FAILURE() << expr << ": runtime: " << r.error().message;
    return false;
  }
  return *r;
}

// The run-time error of an expression that compiles; empty if it evaluated.
std::string runtime_error(std::string_view expr, const Device& device) {
  auto s = Selector::compile(expr);
  if (!s) {
    ADD_FAILURE() << "compile: " << s.error().message;
    return "";
  }
  auto r = s->matches(device);
  if (r) {
    ADD_FAILURE() << expr << " evaluated to " << *r;
    return "";
  }
  return r.error().message;
}

std::string compile_error(std::string_view expr) {
  auto s = Selector::compile(expr);
  if (s) {
    ADD_FAILURE() << expr << " compiled";
    return "";
  }
  return s.error().message;
}

const char kHami[] = "hami-core-gpu.project-hami.io";

FakeDevice hami_gpu() {
  FakeDevice d(kHami);
  d.attr(kHami, "type", std::string("hami-gpu"))
      .attr(kHami, "uuid", std::string("GPU-0001"))
      .attr(kHami, "productName", std::string("NVIDIA A100-SXM4-80GB"))
      .cap(kHami, "memory", "80Gi");
  return d;
}

FakeDevice example_gpu() {
  FakeDevice d("gpu.example.com");
  d.attr("gpu.example.com", "model", std::string("LATEST-GPU-MODEL"))
      .attr("gpu.example.com", "index", int64_t{3})
      .attr("gpu.example.com", "neg", int64_t{-5})
      .attr("gpu.example.com", "healthy", true)
      .attr("gpu.example.com", "name", std::string("h\xC3\xA9llo"))
      .attr("gpu.example.com", "driverVersion", parse_semver("535.104.5-rc.1").value())
      .attr("dra.example.com", "someBool", true)
      .attr("dra.example.com", "anotherBool", false)
      .cap("gpu.example.com", "memory", "4Gi")
      .cap("gpu.example.com", "cores", "100");
  return d;
}

// --- The selectors of dra.md §3.4, each against a device it matches and one it does not ---

TEST(ReferenceSelectors, HamiDeviceClassSingleAndDoubleQuoted) {
  const FakeDevice gpu = hami_gpu();
  FakeDevice other = hami_gpu();
  other.attr(kHami, "type", std::string("hami-vgpu"));
  for (const char* e :
       {"device.driver == 'hami-core-gpu.project-hami.io' && "
        "device.attributes['hami-core-gpu.project-hami.io'].type == 'hami-gpu'",
        "device.driver == \"hami-core-gpu.project-hami.io\" && "
        "device.attributes[\"hami-core-gpu.project-hami.io\"].type == \"hami-gpu\""}) {
    EXPECT_TRUE(match(e, gpu)) << e;
    EXPECT_FALSE(match(e, other)) << e;
    // Another driver's device: the driver test decides before the missing attribute errors.
    EXPECT_FALSE(match(e, example_gpu())) << e;
  }
}

TEST(ReferenceSelectors, HamiWebhookRequestSelector) {
  const char* e = "device.attributes[\"hami-core-gpu.project-hami.io\"].type == \"hami-gpu\"";
  EXPECT_TRUE(match(e, hami_gpu()));
  FakeDevice other = hami_gpu();
  other.attr(kHami, "type", std::string("x"));
  EXPECT_FALSE(match(e, other));
  // A device of another driver has no such attribute: a run-time error, not a non-match.
  EXPECT_EQ(runtime_error(e, example_gpu()), "no such key: type");
}

TEST(ReferenceSelectors, HygonAndAscend) {
  FakeDevice hcu("dra.hygon.com");
  hcu.attr("dra.hygon.com", "type", std::string("hcu"));
  FakeDevice npu("ascend.project-hami.io");
  npu.attr("ascend.project-hami.io", "type", std::string("HAMivNPUCore"));
  const char* hygon =
      "device.driver == \"dra.hygon.com\" && device.attributes[\"dra.hygon.com\"].type == \"hcu\"";
  const char* ascend =
      "device.driver == \"ascend.project-hami.io\" && "
      "device.attributes[\"ascend.project-hami.io\"].type == \"HAMivNPUCore\"";
  EXPECT_TRUE(match(hygon, hcu));
  EXPECT_FALSE(match(hygon, npu));
  EXPECT_TRUE(match(ascend, npu));
  EXPECT_FALSE(match(ascend, hcu));
}

TEST(ReferenceSelectors, AnnotationSelectorsWithInAndNegation) {
  const FakeDevice gpu = hami_gpu();
  const std::string uuid_in =
      "device.attributes[\"hami-core-gpu.project-hami.io\"].uuid in [\"GPU-0001\",\"GPU-0002\"]";
  const std::string uuid_out =
      "device.attributes[\"hami-core-gpu.project-hami.io\"].uuid in [\"GPU-0003\",\"GPU-0004\"]";
  EXPECT_TRUE(match(uuid_in, gpu));
  EXPECT_FALSE(match(uuid_out, gpu));
  EXPECT_FALSE(match("!(" + uuid_in + ")", gpu));
  EXPECT_TRUE(match("!(" + uuid_out + ")", gpu));
  const std::string product =
      "device.attributes[\"hami-core-gpu.project-hami.io\"].productName in [\"NVIDIA "
      "A100-SXM4-80GB\"]";
  EXPECT_TRUE(match(product, gpu));
  EXPECT_FALSE(match("!(" + product + ")", gpu));
  FakeDevice h100 = hami_gpu();
  h100.attr(kHami, "productName", std::string("NVIDIA H100"));
  EXPECT_FALSE(match(product, h100));
  EXPECT_TRUE(match("!(" + product + ")", h100));
}

TEST(ReferenceSelectors, OlderHamiDraEquality) {
  const FakeDevice gpu = hami_gpu();
  EXPECT_TRUE(
      match("device.attributes[\"hami-core-gpu.project-hami.io\"].uuid == \"GPU-0001\"", gpu));
  EXPECT_FALSE(
      match("device.attributes[\"hami-core-gpu.project-hami.io\"].uuid == \"GPU-0002\"", gpu));
  EXPECT_TRUE(
      match("device.attributes[\"hami-core-gpu.project-hami.io\"].productName == \"NVIDIA "
            "A100-SXM4-80GB\"",
            gpu));
  EXPECT_FALSE(match(
      "device.attributes[\"hami-core-gpu.project-hami.io\"].productName == \"Tesla T4\"", gpu));
}

TEST(ReferenceSelectors, NvidiaDeviceClasses) {
  FakeDevice gpu("gpu.nvidia.com");
  gpu.attr("gpu.nvidia.com", "type", std::string("gpu"))
      .attr("gpu.nvidia.com", "profile", std::string("1g.5gb"))
      .attr("gpu.nvidia.com", "architecture", std::string("Ampere"))
      .attr("gpu.nvidia.com", "productName", std::string("NVIDIA A100"));
  FakeDevice mig = gpu;
  mig.attr("gpu.nvidia.com", "type", std::string("mig"));
  for (const char* type : {"gpu", "mig", "vfio"}) {
    const std::string e =
        std::string(
            "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '") +
        type + "'";
    EXPECT_EQ(match(e, gpu), std::string(type) == "gpu") << e;
    EXPECT_EQ(match(e, mig), std::string(type) == "mig") << e;
  }
  FakeDevice channel("compute-domain.nvidia.com");
  channel.attr("compute-domain.nvidia.com", "type", std::string("channel"))
      .attr("compute-domain.nvidia.com", "id", int64_t{0});
  const char* cd =
      "device.driver == 'compute-domain.nvidia.com' && "
      "device.attributes['compute-domain.nvidia.com'].type == 'channel' && "
      "device.attributes['compute-domain.nvidia.com'].id == 0";
  EXPECT_TRUE(match(cd, channel));
  FakeDevice channel1 = channel;
  channel1.attr("compute-domain.nvidia.com", "id", int64_t{1});
  EXPECT_FALSE(match(cd, channel1));
  EXPECT_FALSE(match(cd, gpu));
}

TEST(ReferenceSelectors, NvidiaDemos) {
  FakeDevice gpu("gpu.nvidia.com");
  gpu.attr("gpu.nvidia.com", "profile", std::string("1g.5gb"))
      .attr("gpu.nvidia.com", "architecture", std::string("Ampere"))
      .attr("gpu.nvidia.com", "productName", std::string("NVIDIA A100"));
  EXPECT_TRUE(match("device.attributes['gpu.nvidia.com'].profile == '1g.5gb'", gpu));
  EXPECT_FALSE(match("device.attributes['gpu.nvidia.com'].profile == '2g.10gb'", gpu));
  EXPECT_TRUE(match("device.attributes[\"gpu.nvidia.com\"].architecture == \"Ampere\"", gpu));
  EXPECT_FALSE(match("device.attributes[\"gpu.nvidia.com\"].architecture == \"Hopper\"", gpu));
  EXPECT_TRUE(match("device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA A100\"", gpu));
  EXPECT_FALSE(match("device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA H100\"", gpu));
}

TEST(ReferenceSelectors, ExampleDriver) {
  const FakeDevice gpu = example_gpu();
  EXPECT_TRUE(match("device.driver == 'gpu.example.com'", gpu));
  EXPECT_FALSE(match("device.driver == 'gpu.example.com'", hami_gpu()));
  EXPECT_TRUE(match("device.attributes['gpu.example.com'].model == 'LATEST-GPU-MODEL'", gpu));
  FakeDevice old = example_gpu();
  old.attr("gpu.example.com", "model", std::string("OLD"));
  EXPECT_FALSE(match("device.attributes['gpu.example.com'].model == 'LATEST-GPU-MODEL'", old));
  const char* mem = "device.capacity['gpu.example.com'].memory.compareTo(quantity('4Gi')) >= 0";
  EXPECT_TRUE(match(mem, gpu));
  FakeDevice small = example_gpu();
  small.cap("gpu.example.com", "memory", "4095Mi");
  EXPECT_FALSE(match(mem, small));
}

TEST(ReferenceSelectors, AllocatorTests) {
  FakeDevice d("driver-a");
  d.cap("driver-a", "memory", "8Gi").attr("driver-a", "mode", std::string("b"));
  EXPECT_TRUE(match("device.capacity[\"driver-a\"].memory.compareTo(quantity(\"6Gi\")) >= 0", d));
  EXPECT_FALSE(match("device.capacity[\"driver-a\"].memory.compareTo(quantity(\"9Gi\")) >= 0", d));
  EXPECT_TRUE(match("device.attributes[\"driver-a\"].mode == \"b\"", d));
  EXPECT_FALSE(match("device.attributes[\"driver-a\"].mode == \"a\"", d));
}

TEST(ReferenceSelectors, AllowMultipleAllocations) {
  FakeDevice d("x");
  EXPECT_FALSE(match("device.allowMultipleAllocations == true", d));
  d.multi(true);
  EXPECT_TRUE(match("device.allowMultipleAllocations == true", d));
  EXPECT_TRUE(match("device.allowMultipleAllocations", d));
}

TEST(ReferenceSelectors, BindFromTheApiDoc) {
  const char* e =
      "cel.bind(dra, device.attributes[\"dra.example.com\"], dra.someBool && dra.anotherBool)";
  EXPECT_FALSE(match(e, example_gpu()));
  FakeDevice both = example_gpu();
  both.attr("dra.example.com", "anotherBool", true);
  EXPECT_TRUE(match(e, both));
}

// --- Error semantics ---

// `device.attributes["gpu.example.com"].missing == 1` is a run-time error on example_gpu().
constexpr const char* kErr = "device.attributes[\"gpu.example.com\"].missing == 1";

TEST(ErrorAbsorption, AndOrTruthTable) {
  const FakeDevice d = example_gpu();
  const std::string e = kErr;
  EXPECT_FALSE(match("false && " + e, d));
  EXPECT_FALSE(match(e + " && false", d));
  EXPECT_TRUE(match("true || " + e, d));
  EXPECT_TRUE(match(e + " || true", d));
  for (const std::string& expr : {"true && " + e, e + " && true", "false || " + e, e + " || false",
                                  e + " && " + e, e + " || " + e}) {
    EXPECT_EQ(runtime_error(expr, d), "no such key: missing") << expr;
  }
  // Chains: any deciding operand wins wherever it is.
  EXPECT_FALSE(match("true && " + e + " && false", d));
  EXPECT_TRUE(match(e + " || " + e + " || true", d));
  // The first error in order is the result.
  EXPECT_EQ(runtime_error("device.attributes['x.io'].a == 1 && " + e, d), "no such key: a");
}

TEST(ErrorAbsorption, NonBoolOperandIsAnErrorThatFalseAbsorbs) {
  const FakeDevice d = example_gpu();
  const char* num = "device.attributes['gpu.example.com'].index";
  EXPECT_FALSE(match(std::string(num) + " && false", d));
  EXPECT_TRUE(match(std::string("true || ") + num, d));
  EXPECT_THAT(runtime_error(std::string(num) + " && true", d), HasSubstr("no such overload"));
  EXPECT_THAT(runtime_error(std::string("!") + num, d), HasSubstr("no such overload"));
}

TEST(ErrorSemantics, StrictOperatorsPropagateErrors) {
  const FakeDevice d = example_gpu();
  EXPECT_EQ(runtime_error(std::string("!(") + kErr + ")", d), "no such key: missing");
  EXPECT_EQ(runtime_error(std::string("(") + kErr + ") == true", d), "no such key: missing");
  EXPECT_EQ(runtime_error(std::string(kErr) + " ? true : false", d), "no such key: missing");
  // Only the chosen branch of ?: is evaluated.
  EXPECT_TRUE(match(std::string("true ? true : ") + kErr, d));
}

TEST(ErrorSemantics, MissingKeyNamesTheKey) {
  const FakeDevice d = example_gpu();
  EXPECT_EQ(runtime_error("device.attributes['gpu.example.com'].nosuch == 'a'", d),
            "no such key: nosuch");
  EXPECT_EQ(runtime_error("device.attributes['gpu.example.com']['no-such'] == 'a'", d),
            "no such key: no-such");
  EXPECT_EQ(runtime_error("device.capacity['gpu.example.com'].nosuch == quantity('1')", d),
            "no such key: nosuch");
}

TEST(ErrorSemantics, UnknownDomainIsAnEmptyMap) {
  const FakeDevice d = example_gpu();
  EXPECT_FALSE(match("has(device.attributes['unknown.io'].model)", d));
  EXPECT_FALSE(match("'model' in device.attributes['unknown.io']", d));
  EXPECT_FALSE(match("has(device.capacity['unknown.io'].memory)", d));
  EXPECT_FALSE(match("has(device.attributes.unknown.model)", d));
  // Selecting a field of the empty map is still the missing-key error.
  EXPECT_EQ(runtime_error("device.attributes['unknown.io'].model == 'x'", d), "no such key: model");
}

TEST(ErrorSemantics, ResultMustBeBool) {
  EXPECT_THAT(runtime_error("device.attributes['gpu.example.com'].index", example_gpu()),
              HasSubstr("CEL result of type int could not be converted to bool"));
  EXPECT_THAT(compile_error("1"), HasSubstr("must evaluate to bool or the unknown type, not int"));
  EXPECT_THAT(compile_error("device.driver"),
              HasSubstr("must evaluate to bool or the unknown type, not string"));
  EXPECT_THAT(compile_error("quantity('1')"),
              HasSubstr("must evaluate to bool or the unknown type, not Quantity"));
}

// --- Features ---

TEST(Has, TestsPresenceWithoutError) {
  const FakeDevice d = example_gpu();
  EXPECT_TRUE(match("has(device.attributes['gpu.example.com'].model)", d));
  EXPECT_FALSE(match("has(device.attributes['gpu.example.com'].nosuch)", d));
  EXPECT_TRUE(match("has(device.capacity['gpu.example.com'].memory)", d));
  EXPECT_FALSE(match("has(device.capacity['gpu.example.com'].model)", d));
  EXPECT_FALSE(
      match("has(device.attributes['gpu.example.com'].nosuch) && "
            "device.attributes['gpu.example.com'].nosuch == 'x'",
            d));
  EXPECT_TRUE(match("'model' in device.attributes['gpu.example.com']", d));
  EXPECT_THAT(compile_error("has(device.attributes['gpu.example.com']['model'])"),
              HasSubstr("invalid argument to has()"));
  // Fields of the device object are always present; device.attributes and device.capacity
  // have every domain (an unknown one is an empty map), as Kubernetes' maps with a default do.
  EXPECT_TRUE(match("has(device.driver)", d));
  EXPECT_TRUE(match("has(device.attributes.nosuch)", d));
  EXPECT_TRUE(match("has({'a': 1}.a) && !has({'a': 1}.b)", d));
}

TEST(Quantity, ComparesExactly) {
  const FakeDevice d = example_gpu();
  EXPECT_TRUE(match("quantity('4Gi') == quantity('4096Mi')", d));
  EXPECT_FALSE(match("quantity('4Gi') != quantity('4096Mi')", d));
  EXPECT_TRUE(match("device.capacity['gpu.example.com'].memory == quantity('4096Mi')", d));
  EXPECT_TRUE(match("device.capacity['gpu.example.com'].memory != quantity('4G')", d));
  EXPECT_TRUE(match("device.capacity['gpu.example.com'].memory.isGreaterThan(quantity('4G'))", d));
  EXPECT_FALSE(match("device.capacity['gpu.example.com'].memory.isLessThan(quantity('4G'))", d));
  EXPECT_TRUE(
      match("device.capacity['gpu.example.com'].memory.compareTo(quantity('4Gi')) == 0", d));
  EXPECT_TRUE(match("quantity('100m').compareTo(quantity('0.1')) == 0", d));
  EXPECT_TRUE(match("quantity('1').compareTo(quantity('2')) == -1", d));
  EXPECT_TRUE(match("device.capacity['gpu.example.com'].cores.isGreaterThan(quantity('99'))", d));
  EXPECT_TRUE(match("isQuantity('10Gi') && !isQuantity('10 Gi')", d));
}

TEST(Quantity, BadLiteralIsARuntimeErrorAsInKubernetes) {
  const FakeDevice d = example_gpu();
  EXPECT_FALSE(runtime_error("quantity('lots') == quantity('1')", d).empty());
  EXPECT_FALSE(match("false && quantity('lots') == quantity('1')", d));
}

TEST(Quantity, TypeErrorsAreCompileErrors) {
  EXPECT_THAT(compile_error("device.capacity['a'].memory == 5"),
              HasSubstr("found no matching overload for '_==_' applied to '(Quantity, int)'"));
  EXPECT_THAT(compile_error("device.capacity['a'].memory > quantity('1')"),
              HasSubstr("compare with compareTo"));
  EXPECT_THAT(compile_error("quantity('1').compareTo(semver('1.0.0')) == 0"),
              HasSubstr("no matching overload for 'compareTo'"));
  EXPECT_THAT(compile_error("quantity(1) == quantity('1')"), HasSubstr("no matching overload"));
}

TEST(Semver, AttributesAreSemverObjects) {
  const FakeDevice d = example_gpu();
  const std::string v = "device.attributes['gpu.example.com'].driverVersion";
  EXPECT_TRUE(match(v + ".isGreaterThan(semver('535.104.5-beta'))", d));
  EXPECT_TRUE(match(v + ".isLessThan(semver('535.104.5'))", d));
  EXPECT_TRUE(match(v + ".compareTo(semver('535.104.5-rc.1+b7')) == 0", d));
  EXPECT_TRUE(match(v + " == semver('535.104.5-rc.1')", d));
  EXPECT_TRUE(
      match(v + ".major() == 535 && " + v + ".minor() == 104 && " + v + ".patch() == 5", d));
  EXPECT_TRUE(match("semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))", d));
  EXPECT_TRUE(match("semver('1.2.3').compareTo(semver('1.10.0')) < 0", d));
  EXPECT_TRUE(match("isSemver('1.2.3') && !isSemver('v1.2.3') && !isSemver('01.2.3')", d));
  // A version attribute is not a string: a string on the left is just unequal, a Semver on
  // the left refuses the comparison (Kubernetes' Semver.Equal).
  EXPECT_FALSE(match("'535.104.5-rc.1' == " + v, d));
  EXPECT_THAT(runtime_error(v + " == '535.104.5-rc.1'", d),
              HasSubstr("no such overload: '_==_' applied to (Semver, string)"));
  EXPECT_THAT(
      runtime_error("semver('535.104.5-rc.1') == device.attributes['gpu.example.com'].model", d),
      HasSubstr("no such overload"));
  EXPECT_THAT(runtime_error("device.attributes['gpu.example.com'].model.major() == 1", d),
              HasSubstr("no such overload"));
}

TEST(Semver, BadLiteralIsARuntimeError) {
  const FakeDevice d = example_gpu();
  EXPECT_THAT(runtime_error("semver('01.2.3').major() == 1", d),
              HasSubstr("invalid semantic version"));
  EXPECT_THAT(runtime_error("semver('1-rc', true).major() == 1", d),
              HasSubstr("short version cannot contain PreRelease/Build meta data"));
}

TEST(Semver, NormalizesOnRequest) {
  const FakeDevice d = example_gpu();
  EXPECT_TRUE(match("semver('v1.2', true) == semver('1.2.0')", d));
  EXPECT_TRUE(match("semver('01.02.03', true).minor() == 2", d));
  EXPECT_TRUE(match("isSemver('v1', true) && !isSemver('v1', false)", d));
  EXPECT_FALSE(match("isSemver('1.2-rc.1', true)", d));
}

TEST(Equality, CrossTypeComparisons) {
  const FakeDevice d = example_gpu();
  const std::string idx = "device.attributes['gpu.example.com'].index";
  // dyn against another type: CEL's heterogeneous equality says false (and != true).
  EXPECT_FALSE(match(idx + " == '3'", d));
  EXPECT_TRUE(match(idx + " != '3'", d));
  EXPECT_FALSE(match(idx + " == true", d));
  EXPECT_TRUE(match(idx + " == 3", d));
  EXPECT_FALSE(match(idx + " in ['3', '4']", d));
  EXPECT_TRUE(match(idx + " in [1, 2, 3]", d));
  // `in` asks the searched value: a Semver refusing a string counts as not found.
  EXPECT_FALSE(match("semver('1.0.0') in [device.attributes['gpu.example.com'].model]", d));
  EXPECT_FALSE(match("device.attributes['gpu.example.com'].model in [semver('1.0.0')]", d));
  // Statically different types: the checker refuses.
  EXPECT_THAT(compile_error("device.driver == 1"),
              HasSubstr("found no matching overload for '_==_' applied to '(string, int)'"));
  EXPECT_THAT(compile_error("1 in ['a']"), HasSubstr("no matching overload for '@in'"));
  EXPECT_THAT(compile_error("device.driver in [1, 'a']"),
              HasSubstr("list elements must all have the same type (expected int, found string)"));
  // Attribute values are dyn: they mix with each other only (HomogeneousAggregateLiterals).
  EXPECT_TRUE(
      match("'LATEST-GPU-MODEL' in [device.attributes['gpu.example.com'].model, "
            "device.attributes['gpu.example.com'].name]",
            d));
  EXPECT_THAT(compile_error("3 in [1, device.attributes['gpu.example.com'].index]"),
              HasSubstr("expected int, found dyn"));
  EXPECT_THAT(compile_error("3 in [device.attributes['gpu.example.com'].index, 1]"),
              HasSubstr("expected dyn, found int"));
}

TEST(Ordering, IntStringBool) {
  const FakeDevice d = example_gpu();
  const std::string idx = "device.attributes['gpu.example.com'].index";
  EXPECT_TRUE(match(idx + " > 2 && " + idx + " >= 3 && " + idx + " < 4 && " + idx + " <= 3", d));
  EXPECT_FALSE(match(idx + " < 3", d));
  EXPECT_TRUE(match("device.attributes['gpu.example.com'].neg == -5", d));
  EXPECT_TRUE(match("device.attributes['gpu.example.com'].neg < -4", d));
  EXPECT_TRUE(match("'a' < 'b' && 'B' < 'a' && 'ab' > 'a'", d));
  EXPECT_TRUE(match("false < true && !(true < true)", d));
  EXPECT_TRUE(match("-9223372036854775808 < 9223372036854775807", d));
  EXPECT_THAT(runtime_error(idx + " < 'x'", d), HasSubstr("no such overload"));
  EXPECT_THAT(compile_error("1 < 'x'"), HasSubstr("no matching overload for '_<_'"));
  EXPECT_THAT(compile_error("9223372036854775808 > 0"), HasSubstr("int literal out of range"));
  EXPECT_THAT(compile_error("-9223372036854775809 < 0"), HasSubstr("int literal out of range"));
}

TEST(Strings, LiteralsAndEscapes) {
  const FakeDevice d = example_gpu();
  EXPECT_TRUE(match("'a\\'b' == \"a'b\"", d));
  EXPECT_TRUE(
      match("\"\\x41\\u00e9\\U0001F600\\101\" == 'A\xC3\xA9\xF0\x9F\x98\x80"
            "A'",
            d));
  EXPECT_TRUE(match(R"('\n\t\\\"\?\`' == '\u000a\u0009\u005c"?`')", d));
  EXPECT_TRUE(match("r'a\\nb' == 'a\\\\nb'", d));
  EXPECT_TRUE(match("'''it's''' == \"it's\"", d));
  EXPECT_TRUE(match("\"\"\"two\nlines\"\"\" == 'two\\nlines'", d));
  EXPECT_TRUE(match("device.attributes['gpu.example.com'].name == 'h\\u00e9llo'", d));
  EXPECT_THAT(compile_error("'\\q' == 'a'"), HasSubstr("invalid escape sequence"));
  EXPECT_THAT(compile_error("'\\uD800' == 'a'"), HasSubstr("invalid code point"));
  EXPECT_THAT(compile_error("'abc == 'a'"), HasSubstr("unterminated string literal"));
  EXPECT_THAT(compile_error("'a\nb' == 'a'"), HasSubstr("newline in a string literal"));
  EXPECT_THAT(compile_error(std::string("'\xFF' == 'a'")), HasSubstr("invalid UTF-8"));
}

TEST(Strings, Methods) {
  const FakeDevice d = example_gpu();
  const std::string m = "device.attributes['gpu.example.com'].model";
  EXPECT_TRUE(match(
      m + ".startsWith('LATEST') && " + m + ".endsWith('MODEL') && " + m + ".contains('GPU')", d));
  EXPECT_FALSE(match(m + ".startsWith('MODEL')", d));
  EXPECT_FALSE(match(m + ".contains('CPU')", d));
  EXPECT_TRUE(match("device.driver.startsWith('gpu.') && device.driver.endsWith('.com')", d));
  EXPECT_THAT(runtime_error("device.attributes['gpu.example.com'].index.startsWith('1')", d),
              HasSubstr("no such overload"));
  EXPECT_THAT(compile_error("device.driver.startsWith(1)"), HasSubstr("no matching overload"));
}

TEST(Size, StringsAndLists) {
  const FakeDevice d = example_gpu();
  EXPECT_TRUE(match("size(device.attributes['gpu.example.com'].name) == 5", d));  // code points
  EXPECT_TRUE(match("device.driver.size() == 15", d));
  EXPECT_TRUE(match("size([1, 2, 3]) == 3 && [].size() == 0", d));
  // Maps: the device's count their keys; an unknown domain is empty.
  EXPECT_TRUE(match("size(device.attributes['a']) == 0", d));
  EXPECT_TRUE(match("device.attributes['gpu.example.com'].size() == 6", d));
  EXPECT_TRUE(match("size(device.attributes) == 2 && {'a': 1, 'b': 2}.size() == 2", d));
  EXPECT_THAT(compile_error("size(1) == 1"), HasSubstr("no matching overload for 'size'"));
}

TEST(Bind, ScopesAndLaziness) {
  const FakeDevice d = example_gpu();
  EXPECT_TRUE(
      match("cel.bind(g, device.attributes['gpu.example.com'], g.index == 3 && "
            "cel.bind(g, g.model, g.startsWith('LATEST')))",
            d));
  EXPECT_TRUE(match("cel.bind(x, 1, cel.bind(y, 2, x < y))", d));
  EXPECT_TRUE(match("cel.bind(l, ['a', 'b'], 'a' in l && !('c' in l))", d));
  // An error in an unused binding is not the result.
  EXPECT_TRUE(match(std::string("cel.bind(e, ") + kErr + ", true)", d));
  EXPECT_EQ(runtime_error(std::string("cel.bind(e, ") + kErr + ", e)", d), "no such key: missing");
  EXPECT_THAT(compile_error("cel.bind(x, 1, y == 1)"), HasSubstr("undeclared reference to 'y'"));
  EXPECT_THAT(compile_error("cel.bind(x, 1, x == 'a')"), HasSubstr("no matching overload"));
}

TEST(Conditional, ChoosesABranch) {
  const FakeDevice d = example_gpu();
  EXPECT_TRUE(
      match("device.driver == 'gpu.example.com' ? device.attributes['gpu.example.com']"
            ".index == 3 : device.attributes['other.io'].index == 1",
            d));
  EXPECT_FALSE(match("device.allowMultipleAllocations ? true : false", d));
  EXPECT_THAT(compile_error("1 ? true : false"), HasSubstr("condition of '?:' must be bool"));
  EXPECT_THAT(compile_error("true ? 1 : 'a'"), HasSubstr("different types"));
}

TEST(Syntax, CommentsWhitespaceAndParentheses) {
  const FakeDevice d = example_gpu();
  EXPECT_TRUE(match("// the driver\n(device.driver == 'gpu.example.com') // ok\n", d));
  EXPECT_TRUE(match("((((device.driver)) == ('gpu.example.com')))", d));
  EXPECT_TRUE(match("!!device.attributes['gpu.example.com'].healthy", d));
  EXPECT_TRUE(match("device.attributes['gpu.example.com'].index in [1, 2, 3,]", d));
}

// --- Refused constructs: each names the expression, the column and the construct ---

TEST(Refused, UnsupportedConstructsNameExpressionAndColumn) {
  struct Case {
    const char* expr;
    const char* what;
  };
  const Case cases[] = {
      {"b'x' == b'x'", "bytes literal at column 1"},
      {"[1, ?optional.none()].size() == 1", "optional list element '?' at column 5"},
      {"{?'a': optional.of(1)}.size() == 1", "optional map entry '?' at column 2"},
      {"'%s'.format(['a']) == 'a'", "method 'format' at column 6"},
      {"type(1) == int", "function 'type' at column 1"},
      {"duration('1s') < duration('2s')", "function 'duration' at column 1"},
      {"url('https://x').getHost() == 'x'", "function 'url' at column 1"},
      {"[2, 1].sortBy(x, x)[0] == 1", "macro 'sortBy' at column 8"},
      {"{'a': 1}.transformMapEntry(k, v, {k: v}).size() == 1", "macro 'transformMapEntry'"},
      {"device.driver == 'a' && device == device", "comparing `device` with '=='"},
  };
  for (const Case& c : cases) {
    const std::string err = compile_error(c.expr);
    EXPECT_THAT(err, StartsWith(std::string("CEL expression \"") + "")) << c.expr;
    EXPECT_THAT(err, HasSubstr(c.what)) << c.expr;
    EXPECT_THAT(err, HasSubstr("is not supported by hamisim (docs/cel.md lists what is)"))
        << c.expr;
  }
  EXPECT_EQ(compile_error("type(1) == int"),
            "CEL expression \"type(1) == int\": function 'type' at column 1 is not supported by "
            "hamisim (docs/cel.md lists what is)");
}

TEST(Refused, InvalidExpressionsAreCompileErrors) {
  EXPECT_EQ(compile_error("device.foo == 1"),
            "CEL expression \"device.foo == 1\": undefined field 'foo' of device at column 8");
  EXPECT_THAT(compile_error("foo == 1"), HasSubstr("undeclared reference to 'foo' at column 1"));
  EXPECT_THAT(compile_error("device.driver =="), HasSubstr("unexpected end of expression"));
  EXPECT_THAT(compile_error(""), HasSubstr("unexpected end of expression at column 1"));
  EXPECT_THAT(compile_error("device.driver = 'a'"), HasSubstr("'=' (CEL compares with '==')"));
  EXPECT_THAT(compile_error("(true"), HasSubstr("expected ')'"));
  EXPECT_THAT(compile_error("true true"), HasSubstr("unexpected identifier"));
  EXPECT_THAT(compile_error("device['driver'] == 'a'"), HasSubstr("does not support indexing"));
  EXPECT_THAT(compile_error("device.driver.x == 'a'"),
              HasSubstr("type 'string' does not support field selection"));
  EXPECT_THAT(compile_error("device.attributes[1].x == 1"),
              HasSubstr("no matching overload for '_[_]'"));
  EXPECT_THAT(compile_error("1 && true"), HasSubstr("operands must be bool"));
  EXPECT_THAT(compile_error("true\n&& foo"), HasSubstr("at line 2, column 4"));
  EXPECT_THAT(compile_error("device.driver == 'é' && x"), HasSubstr("at column 25"));
}

TEST(Limits, DeepNestingIsRefusedCleanly) {
  const std::string parens = std::string(5000, '(') + "true" + std::string(5000, ')');
  EXPECT_THAT(compile_error(parens), HasSubstr("nests deeper than 100 levels"));
  EXPECT_THAT(compile_error(std::string(10000, '!') + "true"),
              HasSubstr("nests deeper than 100 levels"));
  std::string select = "device.attributes['a']";
  while (select.size() < 10000) select += ".x";
  EXPECT_THAT(compile_error(select + " == 1"), HasSubstr("nests deeper than 100 levels"));
  std::string brackets = std::string(3000, '[') + std::string(3000, ']');
  EXPECT_THAT(compile_error(brackets), HasSubstr("nests deeper than 100 levels"));
  std::string binds;
  for (int i = 0; i < 200; ++i) binds += "cel.bind(x, 1, ";
  binds += "true" + std::string(200, ')');
  EXPECT_THAT(compile_error(binds), HasSubstr("nests deeper than 100 levels"));
  // Moderate nesting is fine.
  EXPECT_TRUE(match(std::string(50, '(') + "true" + std::string(50, ')'), example_gpu()));
  EXPECT_TRUE(match(std::string(50, '!') + "true", example_gpu()));
}

TEST(Limits, LongChainsAreFlat) {
  // 1000 `&&` operands are one node, not 1000 levels.
  std::string chain = "device.driver == 'gpu.example.com'";
  for (int i = 0; i < 250; ++i) chain += " && device.driver != 'x'";
  ASSERT_LE(chain.size(), Selector::kMaxExpressionLength);
  EXPECT_TRUE(match(chain, example_gpu()));
}

TEST(Limits, ExpressionLength) {
  std::string ok = "true" + std::string(Selector::kMaxExpressionLength - 4, ' ');
  EXPECT_TRUE(match(ok, example_gpu()));
  const std::string err = compile_error(ok + " ");
  EXPECT_THAT(err, HasSubstr("10241 bytes long, more than the limit of 10240"));
  EXPECT_LT(err.size(), 400u);  // the quoted expression is cut short
}

TEST(Selector, CompiledOnceEvaluatedMany) {
  auto s = Selector::compile("device.driver == 'gpu.example.com'");
  ASSERT_TRUE(s.ok());
  const Selector copy = *s;
  EXPECT_EQ(copy.expression(), "device.driver == 'gpu.example.com'");
  EXPECT_TRUE(copy.matches(example_gpu()).value());
  EXPECT_FALSE(copy.matches(hami_gpu()).value());
  EXPECT_TRUE(s->matches(example_gpu()).value());
}

// The constructs below are those of Kubernetes 1.37's DRA CEL environment hamisim evaluates
// since issue #46; the differential test (interop/differential, TestCELSelectors) compares
// them with Kubernetes' own CEL. Tests named "...Kubernetes..." keep a disagreement it found.

TEST(Arithmetic, IntOverflowAndDivisionErrors) {
  const FakeDevice d = example_gpu();
  const std::string idx = "device.attributes['gpu.example.com'].index";
  EXPECT_TRUE(match(idx + " * 2 - 1 == 5 && 7 / " + idx + " == 2 && 7 % " + idx + " == 1", d));
  EXPECT_TRUE(match("-" + idx + " == -3 && -(-" + idx + ") == 3", d));
  EXPECT_EQ(runtime_error("9223372036854775807 + " + idx + " > 0", d), "integer overflow");
  EXPECT_EQ(runtime_error("-9223372036854775808 - " + idx + " < 0", d), "integer overflow");
  EXPECT_EQ(runtime_error("-9223372036854775808 / (" + idx + " - 4) < 0", d), "integer overflow");
  EXPECT_EQ(runtime_error("1 / (" + idx + " - 3) == 0", d), "division by zero");
  EXPECT_EQ(runtime_error("1 % (" + idx + " - 3) == 0", d), "modulus by zero");
  // `&&` absorbs the error when the other side is false.
  EXPECT_FALSE(match("1 / (" + idx + " - 3) == 0 && false", d));
}

TEST(Arithmetic, UintDoubleAndStrings) {
  const FakeDevice d = example_gpu();
  const std::string idx = "device.attributes['gpu.example.com'].index";
  EXPECT_TRUE(match("uint(" + idx + ") - 3u == 0u && 7u / 2u == 3u", d));
  EXPECT_EQ(runtime_error("uint(" + idx + ") - 4u == 0u", d), "unsigned integer overflow");
  EXPECT_TRUE(match("double(" + idx + ") / 2.0 == 1.5 && 1.0 / 0.0 > 1e308", d));
  EXPECT_FALSE(match("0.0 / 0.0 == 0.0 / 0.0", d));
  EXPECT_EQ(runtime_error("0.0 / 0.0 < 1.0", d), "NaN values cannot be ordered");
  EXPECT_TRUE(match("'a' + device.driver == 'agpu.example.com' && [1] + [2] == [1, 2]", d));
  EXPECT_THAT(compile_error("1 + 1u == 2"), HasSubstr("no matching overload for '_+_'"));
  EXPECT_THAT(compile_error("1.5 % 1.0 == 0.5"), HasSubstr("no matching overload for '_%_'"));
  EXPECT_THAT(compile_error("-1u == 1u"), HasSubstr("no matching overload for '-_'"));
}

TEST(Equality, NumbersCompareAcrossTypes) {
  const FakeDevice d = example_gpu();
  const std::string idx = "device.attributes['gpu.example.com'].index";
  // Ordering across int, uint and double compiles (CrossTypeNumericComparisons); `==` of
  // static types does not, but dyn values compare by numeric value.
  EXPECT_TRUE(match(idx + " < 3.5 && " + idx + " > 2u && 2u < 2.5", d));
  EXPECT_TRUE(match(idx + " == 3.0 && " + idx + " == 3u && " + idx + " in [1.0, 3.0]", d));
  EXPECT_FALSE(match(idx + " == '3'", d));
  EXPECT_THAT(compile_error("1 == 1.0"), HasSubstr("no matching overload for '_==_'"));
  EXPECT_THAT(compile_error("1u == 1"), HasSubstr("no matching overload for '_==_'"));
}

// Found by the differential test: cel-go's `!=` is "Equal is not true", so a Semver or Quantity
// against another type is unequal, where `==` fails with no such overload.
TEST(Equality, NotEqualAsKubernetesNeverRefusesTypes) {
  const FakeDevice d = example_gpu();
  const std::string v = "device.attributes['gpu.example.com'].driverVersion";
  EXPECT_TRUE(match(v + " != 'x'", d));
  EXPECT_TRUE(match("'x' != " + v, d));
  EXPECT_THAT(runtime_error(v + " == 'x'", d), HasSubstr("no such overload"));
  EXPECT_TRUE(match("device.attributes['gpu.example.com'].all(k, v, v != 'x')", d));
}

// Found by the differential test: cel-go computes conversions of literals when it builds the
// program, so a bad one is a compile error even where `&&` would not evaluate it.
TEST(Conversions, BadLiteralIsACompileErrorAsInKubernetes) {
  const FakeDevice d = example_gpu();
  EXPECT_THAT(compile_error("false && int('x') == 1"),
              HasSubstr("program instantiation failed: cannot convert string 'x' to int"));
  EXPECT_THAT(compile_error("double('x') > 1.0"), HasSubstr("program instantiation failed"));
  EXPECT_THAT(compile_error("uint(-1) == 1u"), HasSubstr("unsigned integer overflow"));
  EXPECT_THAT(compile_error("int(dyn('x')) == 1"), HasSubstr("program instantiation failed"));
  // A value known only at run time fails at run time.
  EXPECT_THAT(runtime_error("cel.bind(x, device.driver, int(x) == 1)", d),
              HasSubstr("cannot convert"));
  EXPECT_TRUE(match("int('-12') == -12 && uint('7') == 7u && double('1e3') == 1000.0", d));
  // A folded string is a view into its literal, which stays (ASan checks).
  EXPECT_TRUE(match("dyn('abc') == 'abc' && string('abc') + 'd' == 'abcd'", d));
  EXPECT_TRUE(match("int(2.9) == 2 && int(-2.9) == -2 && bool('T') && !bool('false')", d));
  EXPECT_TRUE(match("string(3) == '3' && string(true) == 'true' && string(0.5) == '0.5'", d));
  // Go's FormatFloat(d, 'g', -1): an exponent from 1e+06 and below 1e-04.
  EXPECT_TRUE(match("string(123456789.0) == '1.23456789e+08' && string(100000.0) == '100000'", d));
  EXPECT_TRUE(match("string(0.0001) == '0.0001' && string(0.00001) == '1e-05'", d));
}

TEST(Strings, ExtensionFunctions) {
  const FakeDevice d = example_gpu();
  const std::string m = "device.attributes['gpu.example.com'].model";  // LATEST-GPU-MODEL
  EXPECT_TRUE(match(m + ".lowerAscii() == 'latest-gpu-model'", d));
  EXPECT_TRUE(match("'héllo'.upperAscii() == 'HéLLO'", d));
  EXPECT_TRUE(match(m + ".replace('-', '_') == 'LATEST_GPU_MODEL'", d));
  EXPECT_TRUE(match(m + ".replace('-', '', 1) == 'LATESTGPU-MODEL'", d));
  EXPECT_TRUE(match("'abc'.replace('', '-') == '-a-b-c-'", d));
  EXPECT_TRUE(match(m + ".split('-') == ['LATEST', 'GPU', 'MODEL']", d));
  EXPECT_TRUE(
      match(m + ".split('-', 2) == ['LATEST', 'GPU-MODEL'] && 'ab'.split('') == ['a', 'b']", d));
  EXPECT_TRUE(match(m + ".split('-', 0) == []", d));
  EXPECT_TRUE(match("['a', 'b'].join() == 'ab' && ['a', 'b'].join('-') == 'a-b'", d));
  EXPECT_TRUE(match("'héllo'.charAt(1) == 'é' && 'abc'.charAt(3) == ''", d));
  EXPECT_EQ(runtime_error("'abc'.charAt(4) == ''", d), "index out of range: 4");
  EXPECT_TRUE(match("'héllo'.substring(1, 3) == 'él' && 'abc'.substring(3) == ''", d));
  EXPECT_EQ(runtime_error("'abc'.substring(2, 1) == ''", d),
            "invalid substring range. start: 2, end: 1");
  EXPECT_TRUE(match(R"('  a\u00a0\n'.trim() == 'a')", d));
  EXPECT_TRUE(match(R"(strings.quote('a"b') == '"a\\"b"')", d));
}

// Found by reading cel-go v0.29 (what Kubernetes 1.37 links): indexOf and lastIndexOf find
// nothing past the end instead of failing; only a negative offset is an error.
TEST(Strings, IndexOfAsCelGo029) {
  const FakeDevice d = example_gpu();
  EXPECT_TRUE(match("'héllo'.indexOf('l') == 2 && 'héllo'.lastIndexOf('l') == 3", d));
  EXPECT_TRUE(match("''.indexOf('a') == -1 && ''.lastIndexOf('a') == -1", d));
  EXPECT_TRUE(match("'abc'.indexOf('c', 9) == -1 && 'abc'.indexOf('', 9) == 3", d));
  EXPECT_TRUE(match("'abcabc'.lastIndexOf('a', 2) == 0 && 'abc'.lastIndexOf('') == 3", d));
  EXPECT_EQ(runtime_error("'abc'.indexOf('a', -1) == 0", d), "index out of range: -1");
}

TEST(Matches, Re2Semantics) {
  const FakeDevice d = example_gpu();
  const std::string m = "device.attributes['gpu.example.com'].model";
  EXPECT_TRUE(match(m + ".matches('GPU') && matches(" + m + ", '^LATEST')", d));
  EXPECT_TRUE(match(m + ".matches('(?i)^latest') && !" + m + ".matches('^GPU')", d));
  EXPECT_TRUE(match(m + ".find('[A-Z]+') == 'LATEST' && " + m + ".find('x') == ''", d));
  EXPECT_TRUE(match("'a1b22'.findAll('[0-9]*') == ['', '1', '22']", d));
  EXPECT_TRUE(match("'a1b22'.findAll('[0-9]', 2) == ['1', '2']", d));
  // A bad literal pattern is a compile error (ValidateRegexLiterals); one known only at run
  // time is a run-time error.
  EXPECT_THAT(compile_error(m + ".matches('x[')"), HasSubstr("invalid matches argument"));
  EXPECT_THAT(runtime_error(m + ".matches(device.driver + '[')", d),
              HasSubstr("error parsing regexp"));
  // RE2 has no backreferences or lookaround, like Go's regexp.
  EXPECT_THAT(compile_error(m + ".matches('(a)\\\\1')"), HasSubstr("invalid matches argument"));
}

// Found by the differential test: Go's regexp (1.22 on) accepts `(?<name>re)`, which Debian 12's
// RE2 spells only `(?P<name>re)`.
TEST(Matches, GoNamedGroupsAsKubernetes) {
  const FakeDevice d = example_gpu();
  const std::string m = "device.attributes['gpu.example.com'].model";
  EXPECT_TRUE(match(m + ".matches('(?<word>L)ATEST')", d));
  // Not inside a character class or after an escaped parenthesis.
  EXPECT_TRUE(match(R"('(?<x>'.matches('[(][?]<x>') && '<x>a'.matches('^\\(?<x>a'))", d));
}

TEST(Macros, OverListsAndMaps) {
  const FakeDevice d = example_gpu();
  const std::string dom = "device.attributes['gpu.example.com']";
  EXPECT_TRUE(match("[1, 2, 3].all(x, x > 0) && [1, 2, 3].exists(x, x == 2)", d));
  EXPECT_TRUE(match("[1, 2, 3].exists_one(x, x > 2) && ![1, 2, 3].exists_one(x, x > 1)", d));
  EXPECT_TRUE(match("[1, 2, 3].map(x, x * 2) == [2, 4, 6]", d));
  EXPECT_TRUE(match("[1, 2, 3].map(x, x > 1, x * 10) == [20, 30]", d));
  EXPECT_TRUE(match("[1, 2, 3].filter(x, x % 2 == 1) == [1, 3]", d));
  EXPECT_TRUE(match("[5, 6].all(i, v, v > i) && [5, 6].transformList(i, v, v * i) == [0, 6]", d));
  EXPECT_TRUE(match("{'a': 1}.transformMap(k, v, v + 1) == {'a': 2}", d));
  EXPECT_TRUE(match(dom + ".exists(k, k == 'index') && " + dom + ".all(k, k.size() >= 3)", d));
  EXPECT_TRUE(match(dom + ".exists(k, v, k == 'index' && v == 3)", d));
  EXPECT_TRUE(match("device.attributes.all(dm, dm.endsWith('.example.com'))", d));
  EXPECT_TRUE(match("device.capacity['gpu.example.com'].filter(k, k == 'cores').size() == 1", d));
  // all/exists absorb an error when another element decides, as `&&` and `||` do.
  EXPECT_FALSE(match("[0, -1].all(x, 1 / x > 0)", d));
  EXPECT_TRUE(match("[0, 1].exists(x, 1 / x > 0)", d));
  EXPECT_EQ(runtime_error("[0, 1].all(x, 1 / x > 0)", d), "division by zero");
  EXPECT_EQ(runtime_error("[1, 1, 0].exists_one(x, 1 / x > 0)", d), "division by zero");
  EXPECT_THAT(compile_error("[1].all(x, 1)"), HasSubstr("must be bool"));
  EXPECT_THAT(compile_error("[1].all(1, true)"), HasSubstr("argument must be a simple name"));
  EXPECT_THAT(compile_error("1.all(x, true)"), HasSubstr("cannot be range of a comprehension"));
}

TEST(Literals, MapsListsAndIndexing) {
  const FakeDevice d = example_gpu();
  const std::string idx = "device.attributes['gpu.example.com'].index";
  EXPECT_TRUE(match("{'a': 1, 'b': 2}['b'] == 2 && 'a' in {'a': 1} && {'x': 1}.x == 1", d));
  EXPECT_EQ(runtime_error("{'a': 1}['b'] == 1", d), "no such key: b");
  EXPECT_TRUE(match("[10, 20, 30, 40][" + idx + "] == 40 && [[1], [2, 3]][1][0] == 2", d));
  EXPECT_THAT(runtime_error("[1][" + idx + "] == 1", d), HasSubstr("out of range"));
  EXPECT_THAT(compile_error("{'a': 1, 'b': 'c'}.size() == 2"), HasSubstr("must all have the same"));
  EXPECT_TRUE(
      match("device.attributes['dra.example.com'] == {'someBool': true, 'anotherBool': false}", d));
}

// Found by the differential test: nested list literals are homogeneous in their element types
// too: a list(int) and a list(dyn) do not mix.
TEST(Literals, NestedListsAreHomogeneousAsInKubernetes) {
  EXPECT_THAT(compile_error("[[1, 2], [device.attributes['a'].x]].size() == 2"),
              HasSubstr("list elements must all have the same type"));
}

// Found by the differential test: Kubernetes' isInteger()/asInteger() look at how the quantity
// is held (an int64 amount of scale >= 0), not only at its value: quantity('2000m') is 2 but not
// an integer there.
TEST(Quantity, IsIntegerFollowsKubernetesRepresentation) {
  const FakeDevice d = example_gpu();
  EXPECT_TRUE(match("quantity('1Ki').isInteger() && quantity('1e3').asInteger() == 1000", d));
  EXPECT_TRUE(match("quantity('0').isInteger() && quantity('-3').asInteger() == -3", d));
  EXPECT_FALSE(match("quantity('2000m').isInteger()", d));
  EXPECT_FALSE(match("quantity('2.0').isInteger()", d));
  EXPECT_FALSE(match("quantity('1.5Ki').isInteger()", d));
  EXPECT_EQ(runtime_error("quantity('2000m').asInteger() == 2", d),
            "cannot convert value to integer");
  // Sums are held at the smaller scale.
  EXPECT_FALSE(match("quantity('1.5').add(quantity('0.5')).isInteger()", d));
  EXPECT_TRUE(match("device.capacity['gpu.example.com'].memory.sub(1).isInteger()", d));
  EXPECT_TRUE(match("quantity('1Gi').add(1).compareTo(quantity('1073741825')) == 0", d));
  EXPECT_TRUE(match("quantity('1.5').asApproximateFloat() == 1.5", d));
  EXPECT_THAT(compile_error("quantity('1').sign() == 1"), HasSubstr("sign"));
}

TEST(Libraries, ListsAndSets) {
  const FakeDevice d = example_gpu();
  EXPECT_TRUE(match("sets.contains([1, 2, 3], [3, 1]) && !sets.contains([1], [2])", d));
  EXPECT_TRUE(match("sets.equivalent([1, 1, 2], [2, 1]) && sets.intersects([1, 2], [2, 9])", d));
  EXPECT_TRUE(match("[3, 1, 2].sort() == [1, 2, 3] && ['b', 'a'].sort() == ['a', 'b']", d));
  EXPECT_TRUE(match("[3, 1, 2].max() == 3 && [3, 1, 2].min() == 1 && [1, 2].sum() == 3", d));
  EXPECT_TRUE(match("[].sum() == 0 && [1, 2].isSorted() && ![2, 1].isSorted()", d));
  EXPECT_EQ(runtime_error("[1].slice(0, 0).min() == 1", d), "min called on empty list");
  EXPECT_TRUE(match("lists.range(3) == [0, 1, 2] && [1, 2, 3].slice(1, 3) == [2, 3]", d));
  EXPECT_TRUE(match("[[1, 2], [3]].flatten() == [1, 2, 3] && [1, 1, 2].distinct() == [1, 2]", d));
  EXPECT_TRUE(match("[1, 2].reverse() == [2, 1] && [1, 2, 1].lastIndexOf(1) == 2", d));
}

TEST(Optionals, SelectIndexAndDefault) {
  const FakeDevice d = example_gpu();
  const std::string dom = "device.attributes['gpu.example.com']";
  EXPECT_TRUE(match(dom + ".?model.orValue('x') == 'LATEST-GPU-MODEL'", d));
  EXPECT_TRUE(match(dom + ".?nosuch.orValue('x') == 'x' && !" + dom + ".?nosuch.hasValue()", d));
  EXPECT_TRUE(match(dom + "[?'index'].value() == 3 && device.?driver.hasValue()", d));
  EXPECT_TRUE(match("device.attributes.?other.hasValue() && !" + dom + ".?model.?x.hasValue()", d));
  EXPECT_EQ(runtime_error(dom + ".?nosuch.value() == 1", d), "optional.none() dereference");
  EXPECT_TRUE(match("[1, 2][?1].value() == 2 && ![1, 2][?5].hasValue()", d));
  EXPECT_TRUE(match("optional.of(1).value() == 1 && optional.none().orValue(3) == 3", d));
  EXPECT_TRUE(
      match("!optional.ofNonZeroValue(0).hasValue() && optional.of(1) == optional.of(1)", d));
  EXPECT_TRUE(match("optional.none().or(optional.of(2)).value() == 2", d));
  EXPECT_TRUE(match("optional.of({'a': 1}).?a.value() == 1", d));
  EXPECT_THAT(compile_error("optional.of(1).orValue('x') == 'x'"),
              HasSubstr("no matching overload for 'orValue'"));
  // Found by the differential test: an optional of an attribute holds a dyn, so orValue of
  // another type compiles and compares as dyn values do.
  EXPECT_FALSE(match(dom + ".?nosuch.orValue(1) == 'x'", d));
}

TEST(Limits, RunTimeCostLimit) {
  const FakeDevice d = example_gpu();
  // Far below Kubernetes' limit of 1,000,000, and far past it.
  EXPECT_TRUE(match("lists.range(100).all(i, lists.range(50).all(j, i + j >= 0))", d));
  EXPECT_EQ(runtime_error("lists.range(2000).all(i, lists.range(600).all(j, i + j >= 0))", d),
            "operation cancelled: actual cost limit exceeded");
  // Work that grows faster than the expression is charged before it is done: a chain of
  // doublings ends at the limit, not in the allocator.
  std::string doubling = "'0123456789'";
  for (int i = 0; i < 40; ++i)
    doubling = "cel.bind(s" + std::to_string(i) + ", " + doubling + ", s" + std::to_string(i) +
               " + s" + std::to_string(i) + ")";
  EXPECT_EQ(runtime_error("size(" + doubling + ") > 0", d),
            "operation cancelled: actual cost limit exceeded");
  EXPECT_EQ(runtime_error("lists.range(2000000).size() > 0", d),
            "operation cancelled: actual cost limit exceeded");
  EXPECT_EQ(runtime_error("lists.range(900000).distinct().size() > 0", d),
            "operation cancelled: actual cost limit exceeded");
}

}  // namespace
}  // namespace hamisim::cel
