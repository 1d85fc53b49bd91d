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

enum class LogFormat { kText, kJson };

// "text" | "json".
Result<LogFormat> parse_log_format(std::string_view s);

// Replaces spdlog's default logger with a stderr logger in `format` at `level`
// ("trace", "debug", "info", "warn", "error", "critical", "off").
Status init_logging(LogFormat format, std::string_view level = "info");

// One JSON object per line: {"ts":"...","level":"info","logger":"...","msg":"..."}.
// Exposed so tests and other sinks can use it.
std::unique_ptr<spdlog::formatter> make_json_formatter();

}  // namespace hamisim::server
