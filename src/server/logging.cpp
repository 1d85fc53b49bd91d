#include "server/logging.h"

#include <chrono>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/formatter.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace hamisim::server {
namespace {

// Length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF), 0 if there is none. `s` starts with a byte >= 0x80.
size_t utf8_sequence_length(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  size_t n = 0;
  unsigned char min = 0x80, max = 0xbf;  // bounds of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    n = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    n = 3;
    if (lead == 0xe0) min = 0xa0;  // overlong
    if (lead == 0xed) max = 0x9f;  // surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    n = 4;
    if (lead == 0xf0) min = 0x90;  // overlong
    if (lead == 0xf4) max = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < min || byte(1) > max) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  }
  return n;
}

// As a JSON string. Text that is not UTF-8 (a request path is whatever bytes the client sent)
// has each byte of an ill-formed sequence replaced by U+FFFD, so every line stays valid JSON.
void append_json_string(spdlog::memory_buf_t& dest, std::string_view s) {
  dest.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      if (const size_t n = utf8_sequence_length(s.substr(i)); n > 0) {
        dest.append(s.substr(i, n));
        i += n - 1;
      } else {
        dest.append(std::string_view("\\ufffd"));
      }
      continue;
    }
    switch (c) {
      case '"':
        dest.append(std::string_view("\\\""));
        break;
      case '\\':
        dest.append(std::string_view("\\\\"));
        break;
      case '\n':
        dest.append(std::string_view("\\n"));
        break;
      case '\r':
        dest.append(std::string_view("\\r"));
        break;
      case '\t':
        dest.append(std::string_view("\\t"));
        break;
      default:
        if (c < 0x20) {
          fmt::format_to(std::back_inserter(dest), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          dest.push_back(static_cast<char>(c));
        }
    }
  }
  dest.push_back('"');
}

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    auto since_epoch = msg.time.time_since_epoch();
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(since_epoch - secs);
    std::time_t t = secs.count();
    std::tm tm{};
    gmtime_r(&t, &tm);
    fmt::format_to(std::back_inserter(dest), R"({{"ts":"{:%Y-%m-%dT%H:%M:%S}.{:06d}Z","level":)",
                   tm, micros.count());
    auto level = spdlog::level::to_string_view(msg.level);
    append_json_string(dest, std::string_view(level.data(), level.size()));
    if (msg.logger_name.size() > 0) {
      dest.append(std::string_view(R"(,"logger":)"));
      append_json_string(dest, std::string_view(msg.logger_name.data(), msg.logger_name.size()));
    }
    dest.append(std::string_view(R"(,"msg":)"));
    append_json_string(dest, std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(std::string_view("}\n"));
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

Result<LogFormat> parse_log_format(std::string_view s) {
  if (s == "text") return LogFormat::kText;
  if (s == "json") return LogFormat::kJson;
  return make_error(fmt::format("log format must be \"text\" or \"json\", not \"{}\"", s));
}

std::unique_ptr<spdlog::formatter> make_json_formatter() {
  return std::make_unique<JsonFormatter>();
}

Status init_logging(LogFormat format, std::string_view level) {
  auto lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off") {
    return make_error(fmt::format("unknown log level {}", level));
  }
  auto logger = std::make_shared<spdlog::logger>("hamisim",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (format == LogFormat::kJson) {
    logger->set_formatter(make_json_formatter());
  } else {
    logger->set_formatter(std::make_unique<spdlog::pattern_formatter>(
        "%Y-%m-%dT%H:%M:%S.%fZ %^%l%$ %v", spdlog::pattern_time_type::utc));
  }
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
  return ok_status();
}

}  // namespace hamisim::server
