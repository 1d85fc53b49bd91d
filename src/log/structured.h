#pragma once
// Structured log lines: a constant message plus key/value fields, written through spdlog's
// default logger so that each formatter prints the fields its own way (JSON: one key each;
// text and klog: ` key="value"` after the message). The message spdlog carries is the line in
// the text format, so a logger without our formatters still prints it whole. Messages stay constant
// strings that operators grep for (HAMi's "Scheduling pod to node", "Successfully bound pod to
// node"...); what varies goes into fields.
//
// Nothing is formatted when the line's level (or verbosity) is off: callers pass views, and
// the line is encoded only once the logger wants it.
//
// Verbosity follows klog: a V(n) line is an info line printed when n <= the -v level. It is
// part of the logging setup (set once at startup, before any thread starts, like spdlog's
// default logger), not scheduling state.

#include <spdlog/spdlog.h>

#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <string>
#include <string_view>

namespace hamisim::log {

struct Field {
  enum class Kind { kString, kNumber, kBool };
  Field(std::string_view k, std::string_view v) : key(k), text(v) {}
  Field(std::string_view k, const std::string& v) : key(k), text(v) {}
  Field(std::string_view k, const char* v) : key(k), text(v) {}
  Field(std::string_view k, bool v) : key(k), kind(Kind::kBool), number(v ? 1 : 0) {}
  Field(std::string_view k, int v) : key(k), kind(Kind::kNumber), number(v) {}
  Field(std::string_view k, long v) : key(k), kind(Kind::kNumber), number(v) {}
  Field(std::string_view k, long long v) : key(k), kind(Kind::kNumber), number(v) {}
  Field(std::string_view k, unsigned long v)
      : key(k), kind(Kind::kNumber), number(static_cast<int64_t>(v)) {}
  Field(std::string_view k, unsigned long long v)
      : key(k), kind(Kind::kNumber), number(static_cast<int64_t>(v)) {}

  std::string_view key;
  Kind kind = Kind::kString;
  std::string_view text;  // kString
  int64_t number = 0;     // kNumber, kBool (0/1)
};

using Fields = std::initializer_list<Field>;

// klog's -v. Lines logged with v(n) print when n <= verbosity().
void set_verbosity(int v);
int verbosity();

// Whether a line at this level would be printed by the default logger.
inline bool enabled(spdlog::level::level_enum level) {
  return spdlog::default_logger_raw()->should_log(level);
}
inline bool v_enabled(int n) {
  return n <= verbosity() && enabled(spdlog::level::info);
}

// Writes the line (if its level is on) at `where`, to the default logger or to `logger`.
void write(spdlog::level::level_enum level, std::string_view msg, Fields fields,
           const std::source_location& where, int v = -1);
void write(spdlog::logger& logger, spdlog::level::level_enum level, std::string_view msg,
           Fields fields, const std::source_location& where, int v = -1);

inline void info(std::string_view msg, Fields fields = {},
                 std::source_location where = std::source_location::current()) {
  if (enabled(spdlog::level::info)) write(spdlog::level::info, msg, fields, where);
}
inline void warn(std::string_view msg, Fields fields = {},
                 std::source_location where = std::source_location::current()) {
  if (enabled(spdlog::level::warn)) write(spdlog::level::warn, msg, fields, where);
}
inline void error(std::string_view msg, Fields fields = {},
                  std::source_location where = std::source_location::current()) {
  if (enabled(spdlog::level::err)) write(spdlog::level::err, msg, fields, where);
}
// klog V(n).InfoS: an info line printed when n <= verbosity().
inline void v(int n, std::string_view msg, Fields fields = {},
              std::source_location where = std::source_location::current()) {
  if (v_enabled(n)) write(spdlog::level::info, msg, fields, where, n);
}

// --- for formatters ---------------------------------------------------------------------------

// A decoded structured line; views into the log message's payload.
struct Line {
  std::string_view msg;
  int v = -1;  // the V level of a v() line, -1 otherwise
  std::string_view encoded_fields;
};

// The structured line this log message carries; false for a plain spdlog line. Valid inside
// the formatter call only (loggers must be synchronous, as init_logging makes them).
bool decode(const spdlog::details::log_msg& m, Line& out);

// `msg key="value" n=3`: the text form of a line (Go-quoted strings, as klog prints them).
void append_text(std::string& out, const Line& line);

// Calls f(key, kind, value) for every field of a decoded line, in order. Numbers and bools
// come as their decimal text ("12", "true").
template <class F>
void for_each_field(const Line& line, F&& f) {
  std::string_view rest = line.encoded_fields;
  while (!rest.empty()) {
    const auto kind = static_cast<Field::Kind>(rest[0] - '0');
    rest.remove_prefix(1);
    const size_t k = rest.find('\0');
    std::string_view key = rest.substr(0, k);
    rest.remove_prefix(k + 1);
    const size_t e = rest.find('\0');
    std::string_view value = rest.substr(0, e);
    rest.remove_prefix(e == std::string_view::npos ? rest.size() : e + 1);
    f(key, kind, value);
  }
}

// "live_scheduler.cpp" from a __FILE__ path.
std::string_view base_name(std::string_view path);

}  // namespace hamisim::log
