#pragma once
// The time texts HAMi writes on API objects, in the process's local time zone as Go does.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "model/result.h"

namespace hamisim::live {

using WallTime = std::chrono::system_clock::time_point;

// Lock times are written with go::format_rfc3339_local (Go's time.RFC3339 in local time).
// This reads them back: go::parse_rfc3339's grammar, years 1900-2200, the fraction dropped.
std::optional<WallTime> parse_rfc3339(std::string_view text);
// The handshake's "2006-01-02 15:04:05" in local time.
std::string format_handshake_time(WallTime t);
std::optional<WallTime> parse_handshake_time(std::string_view text);
// Decimal Unix seconds (hami.io/vgpu-time, hami.io/bind-time).
std::string unix_seconds(WallTime t);

}  // namespace hamisim::live
