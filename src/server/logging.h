#pragma once
// Process-wide log setup for `hamisim serve` and the other subcommands. spdlog's default logger
// is the one piece of shared state we accept: it is configured once, before any thread starts.

#include <memory>
#include <string>
#include <string_view>

#include "model/result.h"

namespace spdlog {
class formatter;
}

namespace hamisim::server {

enum class LogFormat { kText, kJson, kKlog };

// "text" | "json" | "klog".
Result<LogFormat> parse_log_format(std::string_view s);

// Replaces spdlog's default logger with a stderr logger in `format` at `level`
// ("trace", "debug", "info", "warn", "error", "critical", "off"), and sets klog's verbosity
// (-v): V(n) lines (log::v) print when n <= verbosity and info lines are on. The level stays
// the severity threshold.
Status init_logging(LogFormat format, std::string_view level = "info", int verbosity = 0);

// The formatters, exposed so tests and other sinks can use them. Structured lines (log::info
// and friends, src/log/structured.h) print their fields as each format does; other lines
// print their text.
//
// One JSON object per line: {"ts":"...","level":"info","logger":"...","msg":"..."}, and for a
// structured line "v" (V lines), "caller" ("file.cpp:123") and one key per field.
std::unique_ptr<spdlog::formatter> make_json_formatter();
// 2026-12-05T02:03:04.123456Z info msg key="value" n=3
std::unique_ptr<spdlog::formatter> make_text_formatter();
// klog's text format: I1205 02:03:04.123456   12345 file.cpp:123] "msg" key="value"
// (local time; `pid` 0: this process's).
std::unique_ptr<spdlog::formatter> make_klog_formatter(int pid = 0);

}  // namespace hamisim::server
