#include "server/metrics.h"

#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "server/logging.h"

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
  EXPECT_FALSE(parse_log_format("yaml").ok());
}

}  // namespace
}  // namespace hamisim::server
