#include "log/structured.h"

#include <atomic>
#include <charconv>

#include "go/quote.h"

namespace hamisim::log {
namespace {

// The line being written on this thread. spdlog's loggers here are synchronous: the
// formatters run inside the log call, on this thread, and recognise the message by its
// payload's address. Any other formatter (a test's, spdlog's default) prints the payload,
// which is the line in the text format, so nothing is lost without ours.
struct Current {
  const char* payload = nullptr;
  Line line;
};
thread_local Current current;

std::atomic<int> g_verbosity{0};

void append_value(std::string& out, std::string_view s) {
  // NUL separates the encoded parts; a value never carries one through.
  for (char c : s) out.push_back(c == '\0' ? ' ' : c);
}

}  // namespace

void set_verbosity(int v) {
  g_verbosity.store(v, std::memory_order_relaxed);
}
int verbosity() {
  return g_verbosity.load(std::memory_order_relaxed);
}

std::string_view base_name(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

void append_text(std::string& out, const Line& line) {
  out.append(line.msg);
  for_each_field(line, [&](std::string_view key, Field::Kind kind, std::string_view value) {
    out.push_back(' ');
    out.append(key);
    out.push_back('=');
    if (kind == Field::Kind::kString) {
      go::append_quoted(out, value);
    } else {
      out.append(value);
    }
  });
}

void write(spdlog::level::level_enum level, std::string_view msg, Fields fields,
           const std::source_location& where, int v) {
  write(*spdlog::default_logger_raw(), level, msg, fields, where, v);
}

void write(spdlog::logger& logger, spdlog::level::level_enum level, std::string_view msg,
           Fields fields, const std::source_location& where, int v) {
  // Fields encoded as: kind key \0 value \0, per field.
  std::string encoded;
  encoded.reserve(fields.size() * 32);
  char digits[24];
  for (const Field& f : fields) {
    encoded.push_back(static_cast<char>('0' + static_cast<int>(f.kind)));
    append_value(encoded, f.key);
    encoded.push_back('\0');
    switch (f.kind) {
      case Field::Kind::kString:
        append_value(encoded, f.text);
        break;
      case Field::Kind::kBool:
        encoded += f.number ? "true" : "false";
        break;
      case Field::Kind::kNumber: {
        auto [e, err] = std::to_chars(digits, digits + sizeof digits, f.number);
        encoded.append(digits, e);
        break;
      }
    }
    encoded.push_back('\0');
  }
  const Line line{msg, v, encoded};
  std::string payload;
  payload.reserve(msg.size() + encoded.size() + 4 * fields.size());
  append_text(payload, line);
  const Current saved = current;  // a formatter that logs (it should not) nests correctly
  current = {payload.data(), line};
  logger.log(spdlog::source_loc{where.file_name(), static_cast<int>(where.line()), ""}, level,
             spdlog::string_view_t(payload.data(), payload.size()));
  current = saved;
}

bool decode(const spdlog::details::log_msg& m, Line& out) {
  if (current.payload == nullptr || m.payload.data() != current.payload) return false;
  out = current.line;
  return true;
}

}  // namespace hamisim::log
