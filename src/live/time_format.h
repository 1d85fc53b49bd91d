#pragma once
// The time texts HAMi writes on API objects, in the process's local time zone as Go does.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "model/result.h"

namespace hamisim::live {

using WallTime = std::chrono::system_clock::time_point;

// Go time.RFC3339 in local time: "2026-05-01T10:00:00+08:00", "...Z" in UTC.
std::string format_rfc3339_local(WallTime t);
// RFC 3339 with "Z" or a numeric offset and optional fractional seconds.
std::optional<WallTime> parse_rfc3339(std::string_view text);
// The handshake's "2006-01-02 15:04:05" in local time.
std::string format_handshake_time(WallTime t);
std::optional<WallTime> parse_handshake_time(std::string_view text);
// Go time.Duration.String() at millisecond precision: "5m0s", "28s", "1.5s", "300ms".
std::string format_go_duration(std::chrono::milliseconds d);
// Go time.ParseDuration for the units flags use (h, m, s, ms; decimals allowed): "5m",
// "28s", "1m30s", "1.5s", "0". Errors name the text.
Result<std::chrono::milliseconds> parse_go_duration(std::string_view text);
// Decimal Unix seconds (hami.io/vgpu-time, hami.io/bind-time).
std::string unix_seconds(WallTime t);

}  // namespace hamisim::live
