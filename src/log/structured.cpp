#include "log/structured.h"

#include <atomic>
#include <charconv>

namespace hamisim::log {
namespace {

// Marks a log message as a structured line: spdlog hands the source location through to the
// formatters untouched, and no other caller uses this function name.
constexpr char kStructured[] = "hamisim::log::structured";

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

void write(spdlog::level::level_enum level, std::string_view msg, Fields fields,
           const std::source_location& where, int v) {
  // msg \0 v \0 then per field: kind key \0 value \0
  std::string payload;
  payload.reserve(msg.size() + 8 + fields.size() * 32);
  append_value(payload, msg);
  payload.push_back('\0');
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
  payload.append(digits, end);
  payload.push_back('\0');
  for (const Field& f : fields) {
    payload.push_back(static_cast<char>('0' + static_cast<int>(f.kind)));
    append_value(payload, f.key);
    payload.push_back('\0');
    switch (f.kind) {
      case Field::Kind::kString:
        append_value(payload, f.text);
        break;
      case Field::Kind::kBool:
        payload += f.number ? "true" : "false";
        break;
      case Field::Kind::kNumber: {
        auto [e, err] = std::to_chars(digits, digits + sizeof digits, f.number);
        payload.append(digits, e);
        break;
      }
    }
    payload.push_back('\0');
  }
  spdlog::default_logger_raw()->log(
      spdlog::source_loc{where.file_name(), static_cast<int>(where.line()), kStructured}, level,
      spdlog::string_view_t(payload.data(), payload.size()));
}

bool decode(const spdlog::details::log_msg& m, Line& out) {
  if (m.source.funcname != kStructured) return false;
  std::string_view p(m.payload.data(), m.payload.size());
  const size_t a = p.find('\0');
  if (a == std::string_view::npos) return false;
  out.msg = p.substr(0, a);
  p.remove_prefix(a + 1);
  const size_t b = p.find('\0');
  if (b == std::string_view::npos) return false;
  int v = -1;
  std::from_chars(p.data(), p.data() + b, v);
  out.v = v;
  out.encoded_fields = p.substr(b + 1);
  return true;
}

}  // namespace hamisim::log
