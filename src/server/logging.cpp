#include "server/logging.h"

#include <unistd.h>

#include <chrono>
#include <ctime>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/formatter.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "go/quote.h"
#include "go/utf8.h"
#include "log/structured.h"

namespace hamisim::server {
namespace {

// As a JSON string, escaping only what JSON requires (unlike Go's json.Marshal, no HTML
// escapes: people and log pipelines read these lines). Text that is not UTF-8 (a request path
// is whatever bytes the client sent) has each byte of an ill-formed sequence replaced by
// U+FFFD, so every line stays valid JSON.
void append_json_string(spdlog::memory_buf_t& dest, std::string_view s) {
  dest.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      uint32_t rune = 0;
      if (const size_t n = go::decode_utf8_rune(s, i, &rune); n > 0) {
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
    log::Line line;
    if (!log::decode(msg, line)) {
      dest.append(std::string_view(R"(,"msg":)"));
      append_json_string(dest, std::string_view(msg.payload.data(), msg.payload.size()));
      dest.append(std::string_view("}\n"));
      return;
    }
    dest.append(std::string_view(R"(,"msg":)"));
    append_json_string(dest, line.msg);
    if (line.v >= 0) fmt::format_to(std::back_inserter(dest), R"(,"v":{})", line.v);
    dest.append(std::string_view(R"(,"caller":)"));
    append_json_string(dest,
                       fmt::format("{}:{}", log::base_name(msg.source.filename), msg.source.line));
    log::for_each_field(line,
                        [&](std::string_view key, log::Field::Kind kind, std::string_view value) {
                          dest.push_back(',');
                          append_json_string(dest, key);
                          dest.push_back(':');
                          if (kind == log::Field::Kind::kString) {
                            append_json_string(dest, value);
                          } else {
                            dest.append(value);
                          }
                        });
    dest.append(std::string_view("}\n"));
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

// Go's %q, as klog prints string values (go::append_quoted).
void append_quoted(spdlog::memory_buf_t& dest, std::string_view s) {
  std::string quoted;
  go::append_quoted(quoted, s);
  dest.append(quoted.data(), quoted.data() + quoted.size());
}

// ` key="value"` (numbers and bools bare), klog's KVFormat.
void append_fields(spdlog::memory_buf_t& dest, const log::Line& line) {
  log::for_each_field(line,
                      [&](std::string_view key, log::Field::Kind kind, std::string_view value) {
                        dest.push_back(' ');
                        dest.append(key);
                        dest.push_back('=');
                        if (kind == log::Field::Kind::kString) {
                          append_quoted(dest, value);
                        } else {
                          dest.append(value);
                        }
                      });
}

char klog_severity(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::warn:
      return 'W';
    case spdlog::level::err:
      return 'E';
    case spdlog::level::critical:
      return 'F';
    default:
      return 'I';
  }
}

// klog's text header (klog internal/buffer): Lmmdd hh:mm:ss.uuuuuu pid file:line] msg, local
// time, pid right-aligned in 7. Structured lines print the message quoted and then their
// fields (klog InfoS); plain lines print their text as it is (klog Infof).
class KlogFormatter final : public spdlog::formatter {
 public:
  explicit KlogFormatter(int pid) : pid_(pid) {}
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    auto since_epoch = msg.time.time_since_epoch();
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(since_epoch - secs);
    std::time_t t = secs.count();
    std::tm tm{};
    localtime_r(&t, &tm);
    log::Line line;
    const bool structured = log::decode(msg, line);
    std::string_view file = "???";
    int lineno = 1;
    if (msg.source.filename != nullptr && msg.source.line > 0) {
      file = log::base_name(msg.source.filename);
      lineno = msg.source.line;
    }
    fmt::format_to(std::back_inserter(dest),
                   "{}{:02d}{:02d} {:02d}:{:02d}:{:02d}.{:06d} {:>7} {}:{}] ",
                   klog_severity(msg.level), tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                   tm.tm_sec, micros.count(), pid_, file, lineno);
    if (structured) {
      append_quoted(dest, line.msg);
      append_fields(dest, line);
    } else {
      dest.append(std::string_view(msg.payload.data(), msg.payload.size()));
    }
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<KlogFormatter>(pid_);
  }

 private:
  int pid_;
};

}  // namespace

std::unique_ptr<spdlog::formatter> make_text_formatter() {
  // A structured line's message already is its text form (log::append_text).
  return std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%fZ %^%l%$ %v",
                                                     spdlog::pattern_time_type::utc);
}

std::unique_ptr<spdlog::formatter> make_klog_formatter(int pid) {
  return std::make_unique<KlogFormatter>(pid == 0 ? static_cast<int>(::getpid()) : pid);
}

Result<LogFormat> parse_log_format(std::string_view s) {
  if (s == "text") return LogFormat::kText;
  if (s == "json") return LogFormat::kJson;
  if (s == "klog") return LogFormat::kKlog;
  return make_error(
      fmt::format("log format must be \"text\", \"json\" or \"klog\", not \"{}\"", s));
}

std::unique_ptr<spdlog::formatter> make_json_formatter() {
  return std::make_unique<JsonFormatter>();
}

Status init_logging(LogFormat format, std::string_view level, int verbosity) {
  if (verbosity < 0) return make_error(fmt::format("-v must be 0 or more, not {}", verbosity));
  auto lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off") {
    return make_error(fmt::format("unknown log level {}", level));
  }
  auto logger = std::make_shared<spdlog::logger>("hamisim",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  switch (format) {
    case LogFormat::kJson:
      logger->set_formatter(make_json_formatter());
      break;
    case LogFormat::kKlog:
      logger->set_formatter(make_klog_formatter());
      break;
    case LogFormat::kText:
      logger->set_formatter(make_text_formatter());
      break;
  }
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
  log::set_verbosity(verbosity);
  return ok_status();
}

}  // namespace hamisim::server
