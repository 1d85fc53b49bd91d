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

TEST(HamiFlags, BooleansTakeGosSpellings) {
  for (const char* yes : {"1", "t", "T", "TRUE", "true", "True"}) {
    ServeOptions o;
    auto r = take({std::string("--profiling=") + yes}, o);
    ASSERT_FALSE(r.ok()) << yes;  // true is refused: see below
  }
  for (const char* no : {"0", "f", "F", "FALSE", "false", "False"}) {
    ServeOptions o;
    EXPECT_TRUE(take({std::string("--profiling=") + no}, o).ok()) << no;
  }
  ServeOptions o;
  auto bad = take({"--debug=yes"}, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr(R"(invalid argument "yes" for "--debug" flag)"));
}

TEST(HamiFlags, WhatHamisimCannotHonourIsRefusedSayingWhy) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"--profiling", "no /debug/pprof"},
      {"--log_dir=/var/log", "stderr only"},
      {"--log_file=/tmp/x", "stderr only"},
      {"--logtostderr=false", "stderr only"},
      {"--vmodule=filter=5", "per-file verbosity"},
      {"--skip_headers", "header"},
      {"--add_dir_header", "source files"},
      {"--log_backtrace_at=x.go:10", "source lines"},
      {"--kube-timeout=-1", "negative"},
  };
  for (const auto& [flag, why] : refused) {
    ServeOptions o;
    auto r = take({flag}, o);
    ASSERT_FALSE(r.ok()) << flag;
    EXPECT_THAT(r.error().message, HasSubstr(why)) << flag;
  }
}

TEST(HamiFlags, FlagsWithoutEffectInHamiAreAcceptedAsHamiAcceptsThem) {
  ServeOptions o;
  auto rest =
      take({"--cambricon-mlu-name=x", "--dcu-memory", "y", "--metax-vcount=z",
            "--enflame-vgcu-resource-name=a", "--kunlun-vmemory=b", "--sgpu-topology-aware",
            "--stderrthreshold=WARNING", "--alsologtostderr", "--log_file_max_size=100",
            "--one_output=true", "--legacy_stderr_threshold_behavior=false", "--logtostderr"},
           o);
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_TRUE(rest->empty());
  auto severity = take({"--stderrthreshold=LOUD"}, o);
  ASSERT_FALSE(severity.ok());
  EXPECT_THAT(severity.error().message, HasSubstr("unknown severity"));
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
}

}  // namespace
}  // namespace hamisim::cli
