// HAMi's `scheduler` flags in pflag's syntax (reference hami-dropin.md §2.1-§2.4), parsed
// into serve's options: every syntax form, the values HAMi gives them, and a clear refusal
// where hamisim cannot do what the flag asks.

#include "cli/hami_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hamisim::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Result<std::vector<std::string>> take(std::vector<std::string> args, ServeOptions& o) {
  return take_hami_flags(args, o);
}

TEST(HamiFlags, TheChartsDefaultCommandMapsOntoServesOptions) {
  ServeOptions o;
  apply_hami_defaults(o);
  auto rest = take({"--http_bind=0.0.0.0:443", "--cert_file=/tls/tls.crt",
                    "--key_file=/tls/tls.key", "--scheduler-name=hami-scheduler",
                    "--metrics-bind-address=:9395", "--leader-elect=true", "--debug", "-v=4"},
                   o);
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_EQ(o.listen, "0.0.0.0:443");
  EXPECT_EQ(o.tls_cert, "/tls/tls.crt");
  EXPECT_EQ(o.tls_key, "/tls/tls.key");
  EXPECT_EQ(o.metrics_listen, ":9395");
  EXPECT_EQ(o.verbosity, 4);
  // The flags serve knows by the same name are left to its own parser, in order.
  EXPECT_THAT(*rest, ElementsAre("--scheduler-name=hami-scheduler", "--leader-elect=true"));
}

TEST(HamiFlags, EveryFormOfKlogsVerbosityIsAccepted) {
  for (std::vector<std::string> form : std::vector<std::vector<std::string>>{
           {"-v=4"}, {"-v", "4"}, {"-v4"}, {"--v=4"}, {"--v", "4"}}) {
    ServeOptions o;
    auto rest = take(form, o);
    ASSERT_TRUE(rest.ok()) << form[0] << ": " << rest.error().message;
    EXPECT_TRUE(rest->empty());
    EXPECT_EQ(o.verbosity, 4) << form[0];
  }
  ServeOptions o;
  auto bad = take({"-v=x"}, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            R"(invalid argument "x" for "-v, --v" flag: strconv.ParseInt: invalid syntax)");
}

TEST(HamiFlags, AValueIsTakenFromTheNextWordExceptForBooleans) {
  ServeOptions o;
  auto rest = take({"--http_bind", "127.0.0.1:9000", "--debug", "serve-me"}, o);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(o.listen, "127.0.0.1:9000");
  // A bare boolean never takes the next word (pflag): it stays for the other parser, which
  // refuses it as an unexpected argument, as HAMi's binary does ("unknown command").
  EXPECT_THAT(*rest, ElementsAre("serve-me"));
  auto missing = take({"--http_bind"}, o);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "flag needs an argument: --http_bind");
}

// The note a flag left for serve's start-up log, or null.
const FlagNotes::Note* note(const ServeOptions& o, std::string_view flag) {
  for (const auto& n : o.flag_notes.notes) {
    if (n.flag == flag) return &n;
  }
  return nullptr;
}

TEST(HamiFlags, BooleansTakeGosSpellings) {
  for (const char* yes : {"1", "t", "T", "TRUE", "true", "True"}) {
    ServeOptions o;
    ASSERT_TRUE(take({std::string("--profiling=") + yes}, o).ok()) << yes;
    ASSERT_NE(note(o, "profiling"), nullptr) << yes;  // true asks for pprof: a warning
  }
  for (const char* no : {"0", "f", "F", "FALSE", "false", "False"}) {
    ServeOptions o;
    ASSERT_TRUE(take({std::string("--profiling=") + no}, o).ok()) << no;
    EXPECT_EQ(note(o, "profiling"), nullptr) << no;  // false asks for nothing
  }
  ServeOptions o;
  auto bad = take({"--debug=yes"}, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr(R"(invalid argument "yes" for "--debug" flag)"));
}

// Issue #47: HAMi accepts these, so a values file carrying them must start; what they ask for
// is not done, and a warning at start-up says so. A value pflag would refuse stays an error.
TEST(HamiFlags, WhatHamisimCannotHonourIsAcceptedWithAWarningSayingWhy) {
  const std::vector<std::pair<std::string, std::string>> warned = {
      {"--profiling", "no /debug/pprof"},           {"--log_dir=/var/log", "stderr only"},
      {"--log_file=/tmp/x", "stderr only"},         {"--logtostderr=false", "stderr only"},
      {"--vmodule=filter=5", "per-file verbosity"}, {"--skip_headers", "header"},
      {"--add_dir_header", "source directories"},   {"--log_backtrace_at=x.go:10", "stack traces"},
  };
  for (const auto& [flag, why] : warned) {
    ServeOptions o;
    auto r = take({flag}, o);
    ASSERT_TRUE(r.ok()) << flag << ": " << r.error().message;
    EXPECT_TRUE(r->empty()) << flag;
    ASSERT_EQ(o.flag_notes.notes.size(), 1u) << flag;
    EXPECT_EQ(o.flag_notes.notes[0].level, FlagNotes::kWarning) << flag;
    EXPECT_THAT(o.flag_notes.notes[0].why, HasSubstr(why)) << flag;
  }
  // The value that asks for nothing leaves no warning, even after one that did.
  ServeOptions o;
  ASSERT_TRUE(take({"--log_dir=/var/log", "--log_dir="}, o).ok());
  EXPECT_TRUE(o.flag_notes.notes.empty());
  auto negative = take({"--kube-timeout=-1"}, o);
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.error().message, HasSubstr("negative"));
}

TEST(HamiFlags, FlagsWithoutEffectInHamiAreAcceptedWithOneInfoLineEach) {
  ServeOptions o;
  auto rest = take({"--cambricon-mlu-name=x", "--dcu-memory", "y", "--metax-vcount=z",
                    "--enflame-vgcu-resource-name=a", "--kunlun-vmemory=b", "--sgpu-topology-aware",
                    "--stderrthreshold=WARNING", "--alsologtostderr", "--log_file_max_size=100",
                    "--one_output=true", "--legacy_stderr_threshold_behavior=false",
                    "--logtostderr", "--debug", "--debug=false"},
                   o);
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_TRUE(rest->empty());
  // One note per flag, in order of first appearance, with the last value; --logtostderr=true
  // is what hamisim does anyway.
  std::vector<std::string> flags;
  for (const auto& n : o.flag_notes.notes) {
    EXPECT_EQ(n.level, FlagNotes::kInfo) << n.flag;
    flags.push_back(n.flag);
  }
  EXPECT_THAT(
      flags,
      ElementsAre("cambricon-mlu-name", "dcu-memory", "metax-vcount", "enflame-vgcu-resource-name",
                  "kunlun-vmemory", "sgpu-topology-aware", "stderrthreshold", "alsologtostderr",
                  "log_file_max_size", "one_output", "legacy_stderr_threshold_behavior", "debug"));
  EXPECT_EQ(note(o, "debug")->value, "false");
  EXPECT_EQ(note(o, "dcu-memory")->value, "y");
  auto severity = take({"--stderrthreshold=LOUD"}, o);
  ASSERT_FALSE(severity.ok());
  EXPECT_THAT(severity.error().message, HasSubstr("unknown severity"));
}

// HAMi's scheduler after v2.10 (cmd/scheduler/main.go): /refit's device-plugin identity, the
// extender's own listener and the pprof listener. Its chart renders the first two.
TEST(HamiFlags, TheFlagsOfHamisSchedulerAfterV210AreAccepted) {
  ServeOptions o;
  apply_hami_defaults(o);
  auto rest = take({"--device-plugin-namespace=kube-system", "--device-plugin-service-account",
                    "hami-device-plugin", "--profiling-bind-address=127.0.0.1:6060",
                    "--extender-bind=127.0.0.1:9555"},
                   o);
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_TRUE(rest->empty());
  EXPECT_EQ(o.extender_listen, "127.0.0.1:9555");  // honoured: kube-scheduler calls it
  ASSERT_NE(note(o, "device-plugin-namespace"), nullptr);
  EXPECT_EQ(note(o, "device-plugin-namespace")->value, "kube-system");
  EXPECT_THAT(note(o, "device-plugin-service-account")->why, HasSubstr("no /refit"));
  EXPECT_THAT(note(o, "profiling-bind-address")->why, HasSubstr("no pprof"));
  EXPECT_EQ(note(o, "extender-bind"), nullptr);
}

// pflag: a scalar flag given again takes the later value (the chart's fixed flags, then
// extraArgs overriding one).
TEST(HamiFlags, ARepeatedFlagTakesItsLastValue) {
  ServeOptions o;
  auto rest =
      take({"--http_bind=0.0.0.0:443", "--metrics-bind-address=:9395", "-v=4", "--http_bind",
            "0.0.0.0:8443", "--metrics-bind-address=:9999", "--v=2", "--kube-timeout=5",
            "--kube-timeout=7", "--extender-bind=a:1", "--extender-bind=127.0.0.1:2"},
           o);
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_EQ(o.listen, "0.0.0.0:8443");
  EXPECT_EQ(o.metrics_listen, ":9999");
  EXPECT_EQ(o.verbosity, 2);
  EXPECT_EQ(o.kube_timeout_s, 7);
  EXPECT_EQ(o.extender_listen, "127.0.0.1:2");
}

TEST(HamiFlags, KubeTimeoutIsInSecondsWithGoIntegerSyntax) {
  ServeOptions o;
  ASSERT_TRUE(take({"--kube-timeout=0x1e"}, o).ok());
  EXPECT_EQ(o.kube_timeout_s, 30);
  ASSERT_TRUE(take({"--kube-timeout", "1_0"}, o).ok());
  EXPECT_EQ(o.kube_timeout_s, 10);
  EXPECT_FALSE(take({"--kube-timeout=10s"}, o).ok());
}

TEST(HamiFlags, TheNodeLabelSelectorFollowsStringToString) {
  ServeOptions o;
  ASSERT_TRUE(take({"--node-label-selector=gpu=on,zone=a"}, o).ok());
  EXPECT_EQ(o.node_label_selector,
            (std::map<std::string, std::string>{{"gpu", "on"}, {"zone", "a"}}));
  // Repeated: the first occurrence replaces, later ones merge.
  ASSERT_TRUE(take({"--node-label-selector=pool=gpu", "--node-label-selector", "zone=b"}, o).ok());
  EXPECT_EQ(o.node_label_selector,
            (std::map<std::string, std::string>{{"pool", "gpu"}, {"zone", "b"}}));
  // One pair: quotes trimmed; a CSV record: quoted fields.
  auto one = parse_string_to_string(R"("a=b,c")");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, (std::map<std::string, std::string>{{"a", "b,c"}}));
  auto csv = parse_string_to_string(R"("a=1,2",b=3)");
  ASSERT_TRUE(csv.ok()) << csv.error().message;
  EXPECT_EQ(*csv, (std::map<std::string, std::string>{{"a", "1,2"}, {"b", "3"}}));
  auto bad = take({"--node-label-selector=gpu"}, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(
      bad.error().message,
      R"(invalid argument "gpu" for "--node-label-selector" flag: gpu must be formatted as key=value)");
}

TEST(HamiFlags, HamisimsOwnFlagsAndEverythingAfterADoubleDashPassThrough) {
  ServeOptions o;
  auto rest = take({"--listen", "127.0.0.1:1", "--tls-cert=x", "--", "--http_bind=y"}, o);
  ASSERT_TRUE(rest.ok());
  EXPECT_THAT(*rest, ElementsAre("--listen", "127.0.0.1:1", "--tls-cert=x", "--", "--http_bind=y"));
  EXPECT_EQ(o.listen, ServeOptions{}.listen);
}

TEST(HamiFlags, TheSchedulerEntryPointTakesHamisDefaults) {
  ServeOptions o;
  apply_hami_defaults(o);
  EXPECT_TRUE(o.hami_scheduler);
  EXPECT_EQ(o.listen, "127.0.0.1:8080");
  EXPECT_EQ(o.metrics_listen, ":9395");
  EXPECT_EQ(o.kube_qps, 5);
  EXPECT_EQ(o.kube_burst, 10);
  EXPECT_EQ(o.readyz_scope, "live");
  EXPECT_EQ(o.extender_listen, "127.0.0.1:9444");  // HAMi after v2.10
  EXPECT_EQ(o.log_format, "klog");                 // HAMi's lines are klog's
  EXPECT_EQ(o.component, "scheduler");
  EXPECT_EQ(ServeOptions{}.extender_listen, "");  // serve: one listener unless asked
  EXPECT_EQ(ServeOptions{}.log_format, "text");
}

}  // namespace
}  // namespace hamisim::cli
