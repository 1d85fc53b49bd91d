#pragma once
// Go's time.Duration texts: time.ParseDuration and Duration.String. Every duration flag and
// file field of hamisim reads with parse_duration, so "1500us" means the same everywhere.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace hamisim::go {

// time.ParseDuration: an optional sign, then one or more decimal numbers (fractions allowed)
// each followed by a unit: ns, us (or µs, μs), ms, s, m, h ("300ms", "-1.5h", "2h45m");
// "0" needs no unit. nullopt for anything else, or beyond ±292 years (int64 nanoseconds).
// The fraction is added as Go adds it (through a float64), so the nanoseconds match Go's.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text);
// Go's error text for a text parse_duration refuses: `time: invalid duration "5 s"`.
std::string invalid_duration_text(std::string_view text);

// Duration.String: "5s", "1m30s", "1h0m0s", "1.5s", "300ms", "1.2µs", "10ns", "0s".
std::string format_duration(std::chrono::nanoseconds d);

}  // namespace hamisim::go
