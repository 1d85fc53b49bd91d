// The report of `hamisim doctor`: the JSON schema documented in docs/doctor.md (schemaVersion
// 1), the table, and the exit code.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "doctor_test_support.h"

namespace hamisim::doctor {
namespace {

using ::testing::HasSubstr;
using namespace testing;

Report sample_report() {
  Report r;
  r.configs.push_back({ConfigRole::kClusterAutoscaler, "ca.yaml", {{0, "https://h:8443", true}}});
  Finding e;
  e.severity = Severity::kError;
  e.check = "node-cache-capable";
  e.file = "ca.yaml";
  e.field = "extenders[0].nodeCacheCapable";
  e.message = "nodeCacheCapable is true";
  e.why = "because \"quotes\" and\nnewlines survive";
  e.fix = "nodeCacheCapable: false";
  r.findings.push_back(e);
  Finding w = e;
  w.severity = Severity::kWarning;
  w.check = "http-timeout";
  r.findings.push_back(w);
  Finding i = e;
  i.severity = Severity::kInfo;
  i.check = "probe";
  i.fix = "";
  r.findings.push_back(i);
  ProbeResult p;
  p.file = "ca.yaml";
  p.url = "https://h:8443/filter-simulation";
  p.tls = "verified";
  p.reachable = true;
  p.ok = true;
  p.latency_ms = 1.23456;
  p.answer = "passed";
  r.probes.push_back(p);
  ProbeResult down = p;
  down.reachable = false;
  down.ok = false;
  down.answer = "error";
  down.reason = "dial tcp: refused";
  r.probes.push_back(down);
  return r;
}

TEST(DoctorReport, CountsAndExitCode) {
  Report r = sample_report();
  EXPECT_EQ(r.count(Severity::kError), 1u);
  EXPECT_EQ(r.count(Severity::kWarning), 1u);
  EXPECT_EQ(r.count(Severity::kInfo), 1u);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(exit_code(r), 1);

  Report only_warning = r;
  only_warning.findings.erase(only_warning.findings.begin());
  EXPECT_EQ(exit_code(only_warning), 1);  // a warning is something wrong too

  Report only_info = r;
  only_info.findings.erase(only_info.findings.begin(), only_info.findings.begin() + 2);
  EXPECT_TRUE(only_info.ok());
  EXPECT_EQ(exit_code(only_info), 0);
}

TEST(DoctorReport, JsonFollowsTheDocumentedSchema) {
  const auto v = boost::json::parse(render_json(sample_report()));
  const auto& o = v.as_object();
  EXPECT_EQ(o.at("schemaVersion").as_int64(), 1);
  EXPECT_EQ(o.at("ok").as_bool(), false);
  EXPECT_EQ(o.at("offline").as_bool(), false);
  const auto& summary = o.at("summary").as_object();
  EXPECT_EQ(summary.at("errors").to_number<int>(), 1);
  EXPECT_EQ(summary.at("warnings").to_number<int>(), 1);
  EXPECT_EQ(summary.at("infos").to_number<int>(), 1);

  const auto& config = o.at("configs").as_array().at(0).as_object();
  EXPECT_EQ(config.at("role").as_string(), "cluster-autoscaler");
  EXPECT_EQ(config.at("file").as_string(), "ca.yaml");
  const auto& ext = config.at("extenders").as_array().at(0).as_object();
  EXPECT_EQ(ext.at("index").to_number<int>(), 0);
  EXPECT_EQ(ext.at("urlPrefix").as_string(), "https://h:8443");
  EXPECT_EQ(ext.at("hami").as_bool(), true);

  const auto& findings = o.at("findings").as_array();
  ASSERT_EQ(findings.size(), 3u);
  const auto& f = findings.at(0).as_object();
  for (const char* key : {"severity", "check", "role", "file", "field", "message", "why", "fix"}) {
    ASSERT_TRUE(f.contains(key)) << key;
    EXPECT_TRUE(f.at(key).is_string()) << key;
  }
  EXPECT_EQ(f.size(), 8u);
  EXPECT_EQ(f.at("severity").as_string(), "error");
  EXPECT_EQ(f.at("field").as_string(), "extenders[0].nodeCacheCapable");
  EXPECT_EQ(f.at("why").as_string(), "because \"quotes\" and\nnewlines survive");
  EXPECT_EQ(findings.at(1).as_object().at("severity").as_string(), "warning");
  EXPECT_EQ(findings.at(2).as_object().at("severity").as_string(), "info");

  const auto& probes = o.at("probes").as_array();
  ASSERT_EQ(probes.size(), 2u);
  const auto& p = probes.at(0).as_object();
  for (const char* key : {"role", "file", "extender", "url", "tls", "reachable", "ok", "latencyMs",
                          "answer", "reason"}) {
    EXPECT_TRUE(p.contains(key)) << key;
  }
  EXPECT_EQ(p.size(), 10u);
  EXPECT_DOUBLE_EQ(p.at("latencyMs").to_number<double>(), 1.234);
  EXPECT_EQ(p.at("tls").as_string(), "verified");
  EXPECT_TRUE(probes.at(1).as_object().at("latencyMs").is_null());
  EXPECT_EQ(probes.at(1).as_object().at("reason").as_string(), "dial tcp: refused");
}

TEST(DoctorReport, JsonOfACleanOfflineRun) {
  Report r;
  r.offline = true;
  const auto o = boost::json::parse(render_json(r)).as_object();
  EXPECT_TRUE(o.at("ok").as_bool());
  EXPECT_TRUE(o.at("offline").as_bool());
  EXPECT_TRUE(o.at("findings").as_array().empty());
  EXPECT_TRUE(o.at("probes").as_array().empty());
}

TEST(DoctorReport, TableShowsEveryFindingWithWhyAndFix) {
  const std::string t = render_table(sample_report());
  EXPECT_THAT(t, HasSubstr("cluster-autoscaler configuration ca.yaml"));
  EXPECT_THAT(t, HasSubstr("extenders[0] https://h:8443  (HAMi)"));
  EXPECT_THAT(t, HasSubstr("ERROR    extenders[0].nodeCacheCapable  [node-cache-capable]"));
  EXPECT_THAT(t, HasSubstr("WARNING  extenders[0].nodeCacheCapable  [http-timeout]"));
  EXPECT_THAT(t, HasSubstr("why: because"));
  EXPECT_THAT(t, HasSubstr("fix: nodeCacheCapable: false"));
  EXPECT_THAT(t, HasSubstr("POST https://h:8443/filter-simulation  tls=verified  1.2 ms  passed"));
  EXPECT_THAT(t, HasSubstr("error: dial tcp: refused"));
  EXPECT_THAT(t, HasSubstr("1 error, 1 warning, 1 info: NOT OK"));
}

TEST(DoctorReport, TableOfAnOfflineRunSaysProbesWereSkipped) {
  Report r;
  r.offline = true;
  r.configs.push_back({ConfigRole::kKubeScheduler, "ks.yaml", {}});
  const std::string t = render_table(r);
  EXPECT_THAT(t, HasSubstr("kube-scheduler configuration ks.yaml"));
  EXPECT_THAT(t, HasSubstr("no findings"));
  EXPECT_THAT(t, HasSubstr("probes: skipped (--offline)"));
  EXPECT_THAT(t, HasSubstr("0 errors, 0 warnings, 0 infos: OK"));
}

}  // namespace
}  // namespace hamisim::doctor
