#pragma once
// Pure helpers over allocations, shared by the Fit engine and the live pod manager.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "device/reason.h"
#include "device/types.h"

namespace hamisim::device {

// One device's effective usage by one pod after init-container collapse.
struct DeviceCharge {
  std::string uuid;
  int64_t usedmem = 0;
  int64_t usedcores = 0;
  int64_t slots = 1;
};

// HAMi CollapseInitContainerUsage (reference: hami-device-model.md §4.4): per (vendor, UUID),
// init containers count as their maximum (they run one after another, slots 1), app
// containers as their sum (slots = number of app containers on the device); the effective
// charge is the element-wise maximum of the two, slots at least 1. Output sorted by UUID.
// `devices` is positional with the first `init_count` entries being init containers.
std::map<std::string, std::vector<DeviceCharge>, std::less<>> collapse_init_container_usage(
    const PodDevices& devices, size_t init_count);

// Sum of memory and cores over the charges of one vendor.
struct ChargeTotals {
  int64_t memory = 0;
  int64_t cores = 0;
};
ChargeTotals total_charges(const std::vector<DeviceCharge>& charges);

// "n/m Reason" entries sorted lexicographically as whole strings, joined with ", "
// (HAMi GenReason; reference §3.3). No reasons -> "".
std::string format_reasons(const ReasonCounts& reasons, size_t cards);
// Inverse of format_reasons: reason name -> count (any name, a Reason's or not); malformed
// pieces are skipped.
std::map<std::string, int, std::less<>> parse_reasons(std::string_view text);

// The devices' Idx values joined with commas ("0,3"): the index list Kunlun and Mthreads
// annotate for their device plugins.
std::string join_indexes(const ContainerDevices& devices);

// Splits a comma list, trimming ASCII whitespace around items and dropping empty ones.
std::vector<std::string> split_comma_list(std::string_view text);
// The same items, visited in place without copying them: true as soon as `visit` returns true.
template <class Visit>
bool any_comma_item(std::string_view text, Visit&& visit);
bool contains_ignore_case(std::string_view haystack, std::string_view needle);

namespace detail {
// `text` without the ASCII whitespace around it (std::isspace in the C locale).
std::string_view trim_ascii_space(std::string_view text);
}  // namespace detail

template <class Visit>
bool any_comma_item(std::string_view text, Visit&& visit) {
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = detail::trim_ascii_space(text.substr(pos, end - pos));
    if (!item.empty() && visit(item)) return true;
    if (end == text.size()) break;
    pos = end + 1;
  }
  return false;
}

}  // namespace hamisim::device
