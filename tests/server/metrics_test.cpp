#include "server/metrics.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "log/structured.h"
#include "server/logging.h"
#include "server/process_metrics.h"

namespace hamisim::server {
namespace {

using ::testing::HasSubstr;

TEST(MetricsRegistry, RendersCountersWithHelpTypeAndSortedSeries) {
  MetricsRegistry reg;
  auto& c = reg.counter("hamisim_fit_outcomes_total", "Fit outcomes.", {"class", "reason"});
  c.labels({"rejected", "CardInsufficientMemory"}).inc(2);
  c.labels({"fit", ""}).inc();
  EXPECT_EQ(reg.render(),
            "# HELP hamisim_fit_outcomes_total Fit outcomes.\n"
            "# TYPE hamisim_fit_outcomes_total counter\n"
            "hamisim_fit_outcomes_total{class=\"fit\",reason=\"\"} 1\n"
            "hamisim_fit_outcomes_total{class=\"rejected\",reason=\"CardInsufficientMemory\"} 2\n");
}

TEST(MetricsRegistry, FamiliesAreSortedByName) {
  MetricsRegistry reg;
  reg.counter("hamisim_b_total", "b").labels({}).inc();
  reg.gauge("hamisim_a", "a").labels({}).set(1.5);
  EXPECT_EQ(reg.render(),
            "# HELP hamisim_a a\n# TYPE hamisim_a gauge\nhamisim_a 1.5\n"
            "# HELP hamisim_b_total b\n# TYPE hamisim_b_total counter\nhamisim_b_total 1\n");
}

TEST(MetricsRegistry, EscapesLabelValuesAndHelp) {
  MetricsRegistry reg;
  reg.counter("x_total", "line1\nback\\slash", {"l"}).labels({"a\"b\\c\nd"}).inc();
  EXPECT_EQ(reg.render(),
            "# HELP x_total line1\\nback\\\\slash\n# TYPE x_total counter\n"
            "x_total{l=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(MetricsRegistry, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricsRegistry reg;
  const double bounds[] = {0.1, 1};
  auto& h = reg.histogram("lat_seconds", "Latency.", {"route"}, bounds).labels({"/f"});
  h.observe(0.05);
  h.observe(0.1);  // upper bounds are inclusive
  h.observe(0.5);
  h.observe(3);
  EXPECT_EQ(reg.render(),
            "# HELP lat_seconds Latency.\n# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{route=\"/f\",le=\"0.1\"} 2\n"
            "lat_seconds_bucket{route=\"/f\",le=\"1\"} 3\n"
            "lat_seconds_bucket{route=\"/f\",le=\"+Inf\"} 4\n"
            "lat_seconds_sum{route=\"/f\"} 3.65\n"
            "lat_seconds_count{route=\"/f\"} 4\n");
}

TEST(MetricsRegistry, DefaultLatencyBucketsSpan50MicrosecondsTo10Seconds) {
  EXPECT_EQ(kLatencyBuckets[0], 0.00005);
  EXPECT_EQ(std::end(kLatencyBuckets)[-1], 10);
  MetricsRegistry reg;
  reg.histogram("d_seconds", "d", {}).labels({}).observe(0.00001);
  EXPECT_THAT(reg.render(), HasSubstr("d_seconds_bucket{le=\"5e-05\"} 1\n"));
}

TEST(MetricsRegistry, RegisteringAgainReturnsTheSameFamily) {
  MetricsRegistry reg;
  auto& a = reg.counter("c_total", "c", {"x"});
  auto& b = reg.counter("c_total", "c", {"x"});
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(&a.labels({"1"}), &b.labels({"1"}));
}

TEST(MetricsRegistry, MisuseThrowsInvalidArgument) {
  MetricsRegistry reg;
  reg.counter("c_total", "c", {"x"});
  EXPECT_THROW(reg.counter("c_total", "c", {"y"}), std::invalid_argument);
  EXPECT_THROW(reg.gauge("c_total", "c", {"x"}), std::invalid_argument);
  EXPECT_THROW(reg.counter("bad-name", "c"), std::invalid_argument);
  EXPECT_THROW(reg.counter("ok_total", "c", {"le"}), std::invalid_argument);
  EXPECT_THROW(reg.counter("c_total", "c", {"x"}).labels({"1", "2"}), std::invalid_argument);
}

TEST(MetricsRegistry, ConcurrentIncrementsAndLookupsAreNotLost) {
  MetricsRegistry reg;
  auto& fam = reg.counter("n_total", "n", {"k"});
  auto& hist = reg.histogram("h_seconds", "h", {"k"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        fam.labels({i % 2 ? "odd" : "even"}).inc();
        hist.labels({"k"}).observe(0.001 * t);
        if (i % 100 == 0) (void)reg.render();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(fam.labels({"odd"}).value() + fam.labels({"even"}).value(), 8000u);
  EXPECT_EQ(hist.labels({"k"}).snapshot().count, 8000u);
}

TEST(Logging, JsonFormatterEscapesTheMessage) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(make_json_formatter());
  logger.info("say \"hi\"\n\tnow");
  logger.flush();
  std::string line = out.str();
  EXPECT_THAT(line, HasSubstr(R"("level":"info")"));
  EXPECT_THAT(line, HasSubstr(R"("logger":"test")"));
  EXPECT_THAT(line, HasSubstr(R"("msg":"say \"hi\"\n\tnow"})"));
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line per record
}

// Every line must be valid JSON whatever bytes a message holds: well-formed UTF-8 is kept,
// each byte of an ill-formed sequence becomes U+FFFD.
TEST(Logging, JsonFormatterReplacesInvalidUtf8) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(make_json_formatter());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf",
       "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"},
      {"a\xff", "a\\ufffd"},                                 // never in UTF-8
      {"\x80z", "\\ufffdz"},                                 // a continuation byte alone
      {"\xc3", "\\ufffd"},                                   // cut at the end
      {"\xc3(", "\\ufffd("},                                 // cut before ASCII
      {"\xc0\xaf", "\\ufffd\\ufffd"},                        // overlong '/'
      {"\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd"},             // overlong
      {"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"},             // a surrogate
      {"\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"},  // above U+10FFFF
      {"\xe2\x82", "\\ufffd\\ufffd"},
  };
  for (const auto& [message, expected] : cases) {
    out.str("");
    logger.info(message);
    logger.flush();
    const std::string line = out.str();
    EXPECT_THAT(line, HasSubstr("\"msg\":\"" + expected + "\"}")) << line;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    ASSERT_EQ(parser.parse(line).get(doc), simdjson::SUCCESS) << line;
  }
}

TEST(Logging, ParsesLogFormat) {
  EXPECT_EQ(parse_log_format("json").value(), LogFormat::kJson);
  EXPECT_EQ(parse_log_format("text").value(), LogFormat::kText);
  EXPECT_EQ(parse_log_format("klog").value(), LogFormat::kKlog);
  EXPECT_FALSE(parse_log_format("yaml").ok());
}

// Structured lines (log::info and friends) go to spdlog's default logger; this swaps in one
// that writes to a string with the given formatter, at info with verbosity `v`, and puts the
// old logger back.
class CapturedLog {
 public:
  CapturedLog(std::unique_ptr<spdlog::formatter> formatter, int v = 0,
              spdlog::level::level_enum level = spdlog::level::info)
      : old_(spdlog::default_logger()), old_v_(log::verbosity()) {
    auto logger = std::make_shared<spdlog::logger>(
        "hamisim", std::make_shared<spdlog::sinks::ostream_sink_mt>(out_));
    logger->set_formatter(std::move(formatter));
    logger->set_level(level);
    spdlog::set_default_logger(logger);
    log::set_verbosity(v);
  }
  ~CapturedLog() {
    spdlog::set_default_logger(old_);
    log::set_verbosity(old_v_);
  }
  std::string text() {
    spdlog::default_logger()->flush();
    return out_.str();
  }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> old_;
  int old_v_;
};

TEST(Logging, JsonFormatPutsEachFieldUnderItsOwnKey) {
  CapturedLog captured(make_json_formatter());
  log::info(
      "Scheduling pod to node",
      {{"pod", "p"}, {"namespace", "default"}, {"node", "gpu-1"}, {"candidates", 3}, {"ok", true}});
  const std::string line = captured.text();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(line).get(doc), simdjson::SUCCESS) << line;
  EXPECT_EQ(std::string_view(doc["msg"]), "Scheduling pod to node") << line;
  EXPECT_EQ(std::string_view(doc["pod"]), "p");
  EXPECT_EQ(std::string_view(doc["namespace"]), "default");
  EXPECT_EQ(std::string_view(doc["node"]), "gpu-1");
  EXPECT_EQ(int64_t(doc["candidates"]), 3);
  EXPECT_EQ(bool(doc["ok"]), true);
  EXPECT_EQ(std::string_view(doc["level"]), "info");
  EXPECT_THAT(std::string(std::string_view(doc["caller"])), HasSubstr("metrics_test.cpp:"));
}

TEST(Logging, JsonFieldsAreEscaped) {
  CapturedLog captured(make_json_formatter());
  log::warn("odd", {{"path", "/a\"b\n\xff"}});
  const std::string line = captured.text();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(line).get(doc), simdjson::SUCCESS) << line;
  EXPECT_EQ(std::string_view(doc["path"]), "/a\"b\n\xef\xbf\xbd");
}

TEST(Logging, TextFormatPrintsFieldsAfterTheMessage) {
  CapturedLog captured(make_text_formatter());
  log::info("Successfully bound pod to node", {{"pod", "p"}, {"node", "n 1"}, {"n", 2}});
  spdlog::info("plain {}", "line");
  const std::string text = captured.text();
  EXPECT_THAT(text, ::testing::MatchesRegex(
                        "[0-9-]+T[0-9:.]+Z info Successfully bound pod to node pod=\"p\" "
                        "node=\"n 1\" n=2\n[0-9-]+T[0-9:.]+Z info plain line\n"));
}

TEST(Logging, KlogFormatHasKlogsHeaderAndQuotedStructuredMessages) {
  CapturedLog captured(make_klog_formatter(12345));
  log::info("Attempting to bind pod to node", {{"pod", "p"}, {"namespace", "default"}});
  spdlog::warn("plain text");
  const std::string text = captured.text();
  // I1205 02:03:04.123456   12345 metrics_test.cpp:NNN] "msg" key="value"
  EXPECT_THAT(text, ::testing::MatchesRegex(
                        "I[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}   12345 "
                        "metrics_test\\.cpp:[0-9]+\\] \"Attempting to bind pod to node\" "
                        "pod=\"p\" namespace=\"default\"\n"
                        "W[0-9]{4} [0-9:.]+   12345 \\?\\?\\?:1\\] plain text\n"));
}

TEST(Logging, VLinesPrintUpToTheVerbosity) {
  CapturedLog captured(make_text_formatter(), /*v=*/4);
  log::v(4, "shown");
  log::v(5, "hidden");
  log::v(0, "also shown");
  const std::string text = captured.text();
  EXPECT_THAT(text, HasSubstr("shown"));
  EXPECT_THAT(text, HasSubstr("also shown"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("hidden")));
}

TEST(Logging, LevelStaysTheSeverityThresholdForVLines) {
  CapturedLog captured(make_text_formatter(), /*v=*/10, spdlog::level::warn);
  log::v(0, "an info line");
  log::warn("a warning");
  const std::string text = captured.text();
  EXPECT_THAT(text, ::testing::Not(HasSubstr("an info line")));
  EXPECT_THAT(text, HasSubstr("a warning"));
}

TEST(Logging, InitLoggingRejectsANegativeVerbosity) {
  EXPECT_FALSE(init_logging(LogFormat::kText, "info", -1).ok());
}

// --- snapshot families, number format, process and build metrics ---

TEST(MetricsRegistry, SnapshotFamiliesShowOnlyTheLastCollectedSeries) {
  MetricsRegistry reg;
  auto& f = reg.snapshot("hami_gpu_shared_count", "Number of containers sharing this GPU",
                         MetricType::kGauge, {"device_uuid", "node"});
  f.replace({{{"GPU-b", "n1"}, 2}, {{"GPU-a", "n1"}, 1}});
  EXPECT_EQ(reg.render(),
            "# HELP hami_gpu_shared_count Number of containers sharing this GPU\n"
            "# TYPE hami_gpu_shared_count gauge\n"
            "hami_gpu_shared_count{device_uuid=\"GPU-a\",node=\"n1\"} 1\n"
            "hami_gpu_shared_count{device_uuid=\"GPU-b\",node=\"n1\"} 2\n");
  // A device that is gone is gone from the scrape; an empty family is left out altogether.
  f.replace({{{"GPU-b", "n1"}, 2}});
  EXPECT_THAT(reg.render(), ::testing::Not(HasSubstr("GPU-a")));
  f.replace({});
  EXPECT_EQ(reg.render(), "");
}

TEST(MetricsRegistry, SnapshotFamiliesRejectDuplicateSeriesAndWrongArity) {
  MetricsRegistry reg;
  auto& f = reg.snapshot("x", "x", MetricType::kGauge, {"a"});
  EXPECT_THROW(f.replace({{{"1"}, 1}, {{"1"}, 2}}), std::invalid_argument);
  EXPECT_THROW(f.replace({{{"1", "2"}, 1}}), std::invalid_argument);
  EXPECT_THROW(reg.gauge("x", "x", {"a"}), std::invalid_argument);  // another kind of family
}

std::vector<std::string> values_of(const LabelValues& labels) {
  std::vector<std::string> out;
  labels.for_each([&](std::string_view v) { out.emplace_back(v); });
  return out;
}

LabelValues encode(const std::vector<std::string>& values) {
  LabelValues labels;
  for (const auto& v : values) labels.add(v);
  return labels;
}

TEST(LabelValues, GiveBackTheirValuesAndOrderAsTheValuesDoOneByOne) {
  // Bytes chosen to meet the encoding's own: NUL, 0x01, 0xFF, and empty values.
  const std::string alphabet(
      "\0\1\xff"
      "a\"\\",
      6);
  std::mt19937 rng(31);
  std::vector<std::vector<std::string>> tuples;
  for (int i = 0; i < 400; ++i) {
    std::vector<std::string> t(3);
    for (auto& v : t) {
      for (int n = std::uniform_int_distribution<int>(0, 3)(rng); n > 0; --n) {
        v += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
      }
    }
    tuples.push_back(std::move(t));
  }
  for (const auto& a : tuples) {
    const LabelValues ea = encode(a);
    ASSERT_EQ(ea.size(), 3u);
    ASSERT_EQ(values_of(ea), a);
    for (const auto& b : tuples) {
      const LabelValues eb = encode(b);
      ASSERT_EQ(ea < eb, a < b);
      ASSERT_EQ(ea == eb, a == b);
    }
  }
  EXPECT_EQ(values_of(LabelValues{"x", "", std::string_view("n\0l", 3)}),
            (std::vector<std::string>{"x", "", std::string("n\0l", 3)}));
}

TEST(MetricsRegistry, SnapshotFamiliesCanSumSamplesWithTheSameLabels) {
  MetricsRegistry reg;
  auto& f = reg.snapshot("x", "x", MetricType::kGauge, {"a", "b"});
  f.replace_summing(
      {{{"2", "y"}, 1}, {{"1", "x"}, 2}, {{"2", "y"}, 3}, {{"1", "xx"}, 4}, {{"2", "y"}, 5}});
  EXPECT_EQ(reg.render(),
            "# HELP x x\n# TYPE x gauge\n"
            "x{a=\"1\",b=\"x\"} 2\n"
            "x{a=\"1\",b=\"xx\"} 4\n"
            "x{a=\"2\",b=\"y\"} 9\n");
  EXPECT_THROW(f.replace_summing({{{"1"}, 1}}), std::invalid_argument);  // wrong arity
}

TEST(MetricsRegistry, ValuesPrintAsGosClientPrintsThem) {
  MetricsRegistry reg;
  auto& g = reg.gauge("v", "v", {"k"});
  const std::vector<std::pair<double, std::string>> cases = {
      {0, "0"},
      {1, "1"},
      {100, "100"},
      {0.25, "0.25"},
      {8192, "8192"},
      {999999, "999999"},
      {1048576, "1.048576e+06"},
      {1e6, "1e+06"},
      {16106127360.0, "1.610612736e+10"},
      {0.26666666666666666, "0.26666666666666666"},
      {0.0001, "0.0001"},
      {0.00005, "5e-05"},
      {-2.5, "-2.5"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    g.labels({std::to_string(i)}).set(cases[i].first);
  }
  const std::string text = reg.render();
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_THAT(text, HasSubstr("v{k=\"" + std::to_string(i) + "\"} " + cases[i].second + "\n"))
        << cases[i].first;
  }
}

TEST(ProcessMetrics, ReadTheProcessFiguresFromProc) {
  MetricsRegistry reg;
  export_process_metrics(reg);
  const std::string text = reg.render();
  for (const char* family : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                             "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                             "process_start_time_seconds", "process_threads"}) {
    EXPECT_THAT(text, HasSubstr(std::string("\n") + family + " ")) << family;
  }
  EXPECT_THAT(text, HasSubstr("# TYPE process_cpu_seconds_total counter\n"));
}

TEST(ProcessMetrics, ParseProcFilesOfAnotherProcess) {
  // A fake /proc/<pid>: a command name with spaces and parentheses, 2000 + 500 ticks of CPU,
  // started 1000 ticks after boot, 3 threads, 64 MiB virtual, 100 resident pages.
  const std::string dir = ::testing::TempDir() + "/fakeproc";
  std::filesystem::create_directories(dir + "/fd");
  for (const char* fd : {"0", "1", "2", "7"}) std::ofstream(dir + "/fd/" + fd) << "";
  std::string stat = "4242 (my (odd) cmd) S";
  for (int field = 4; field <= 52; ++field) {
    std::string v = "0";
    if (field == 14) v = "2000";
    if (field == 15) v = "500";
    if (field == 20) v = "3";
    if (field == 22) v = "1000";
    if (field == 23) v = "67108864";
    if (field == 24) v = "100";
    stat += " " + v;
  }
  std::ofstream(dir + "/stat") << stat << "\n";
  std::ofstream(dir + "/procstat") << "cpu  1 2 3\nbtime 1700000000\nprocesses 9\n";
  MetricsRegistry reg;
  export_process_metrics(reg, dir, dir + "/procstat");
  const std::string text = reg.render();
  const double tck = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  MetricsRegistry expect;
  expect.gauge("cpu", "").labels({}).set(2500 / tck);
  expect.gauge("start", "").labels({}).set(1700000000 + 1000 / tck);
  expect.gauge("rss", "").labels({}).set(100 * page);
  const std::string e = expect.render();
  auto value_of = [](const std::string& t, const std::string& name) {
    const size_t at = t.find("\n" + name + " ");
    if (at == std::string::npos) return std::string("absent");
    const size_t from = at + name.size() + 2;
    return t.substr(from, t.find('\n', from) - from);
  };
  EXPECT_EQ(value_of(text, "process_cpu_seconds_total"), value_of(e, "cpu")) << text;
  EXPECT_EQ(value_of(text, "process_start_time_seconds"), value_of(e, "start"));
  EXPECT_EQ(value_of(text, "process_resident_memory_bytes"), value_of(e, "rss"));
  EXPECT_EQ(value_of(text, "process_virtual_memory_bytes"), "6.7108864e+07");
  EXPECT_EQ(value_of(text, "process_threads"), "3");
  EXPECT_EQ(value_of(text, "process_open_fds"), "4");
}

TEST(ProcessMetrics, AFigureThatCannotBeReadIsLeftOut) {
  MetricsRegistry reg;
  export_process_metrics(reg, "/nonexistent/proc", "/nonexistent/stat");
  const std::string text = reg.render();
  EXPECT_THAT(text, ::testing::Not(HasSubstr("process_cpu_seconds_total")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("process_open_fds")));
}

TEST(BuildInfo, ExportsVersionRevisionAndCompilerAsLabels) {
  MetricsRegistry reg;
  export_build_info(reg);
  const std::string text = reg.render();
  EXPECT_THAT(text, HasSubstr("# TYPE hamisim_build_info gauge\n"));
  EXPECT_THAT(text, HasSubstr("hamisim_build_info{version=\"" + build_info().version + "\","));
  EXPECT_FALSE(build_info().version.empty());
  EXPECT_THAT(text, ::testing::ContainsRegex("compiler=\"(gcc|clang) [0-9.]+\""));
  EXPECT_THAT(text, HasSubstr("} 1\n"));
}

}  // namespace
}  // namespace hamisim::server
