// libFuzzer target: the texts the live path reads back from API objects and flags — node lock
// values, RFC 3339 and handshake times, Go durations. What parses must format back to a text
// that parses to the same value.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "go/duration.h"
#include "go/rfc3339.h"
#include "live/node_lock.h"
#include "live/time_format.h"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "round trip broken: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hamisim::live;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto lock = parse_node_lock(text); lock.ok()) {
    check(parse_rfc3339(hamisim::go::format_rfc3339_local(lock->time)).has_value(), "lock time");
  }
  if (auto t = parse_rfc3339(text)) {
    const auto whole = std::chrono::time_point_cast<std::chrono::seconds>(*t);
    check(parse_rfc3339(hamisim::go::format_rfc3339_local(whole)) == whole, "rfc3339");
  }
  if (auto t = parse_handshake_time(text)) {
    check(parse_handshake_time(format_handshake_time(*t)).has_value(), "handshake");
  }
  if (auto d = hamisim::go::parse_duration(text)) {
    check(hamisim::go::parse_duration(hamisim::go::format_duration(*d)) == *d, "duration");
  }
  return 0;
}
