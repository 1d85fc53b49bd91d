#include "device/allocation.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>

namespace hamisim::device {

std::map<std::string, std::vector<DeviceCharge>, std::less<>> collapse_init_container_usage(
    const PodDevices& devices, size_t init_count) {
  std::map<std::string, std::vector<DeviceCharge>, std::less<>> out;
  for (const auto& [vendor, per_container] : devices) {
    std::map<std::string, DeviceCharge, std::less<>> init_peak;
    std::map<std::string, DeviceCharge, std::less<>> app_sum;
    for (size_t i = 0; i < per_container.size(); ++i) {
      const bool is_init = i < init_count;
      for (const ContainerDevice& d : per_container[i]) {
        if (is_init) {
          DeviceCharge& c = init_peak[d.uuid];
          c.uuid = d.uuid;
          c.usedmem = std::max<int64_t>(c.usedmem, d.usedmem);
          c.usedcores = std::max<int64_t>(c.usedcores, d.usedcores);
          c.slots = 1;
        } else {
          auto [it, inserted] = app_sum.try_emplace(d.uuid);
          DeviceCharge& c = it->second;
          c.uuid = d.uuid;
          c.usedmem += d.usedmem;
          c.usedcores += d.usedcores;
          c.slots = inserted ? 1 : c.slots + 1;
        }
      }
    }
    std::map<std::string, DeviceCharge, std::less<>> merged = std::move(app_sum);
    for (auto& [uuid, init] : init_peak) {
      auto [it, inserted] = merged.try_emplace(uuid, init);
      if (!inserted) {
        DeviceCharge& c = it->second;
        c.usedmem = std::max(c.usedmem, init.usedmem);
        c.usedcores = std::max(c.usedcores, init.usedcores);
        c.slots = std::max(c.slots, init.slots);
      }
    }
    if (merged.empty()) continue;
    std::vector<DeviceCharge>& list = out[vendor];
    for (auto& [uuid, c] : merged) {
      c.slots = std::max<int64_t>(c.slots, 1);
      list.push_back(std::move(c));
    }
  }
  return out;
}

ChargeTotals total_charges(const std::vector<DeviceCharge>& charges) {
  ChargeTotals t;
  for (const DeviceCharge& c : charges) {
    t.memory += c.usedmem;
    t.cores += c.usedcores;
  }
  return t;
}

std::string format_reasons(const ReasonCounts& reasons, size_t cards) {
  // Every node a pod does not fit on formats its reasons, mostly a single one: its text is
  // built in place; several are built in per-thread strings that keep their memory, then sorted.
  char number[24];
  const auto digits = [&](auto n) {
    return std::string_view(number, std::to_chars(number, number + sizeof number, n).ptr);
  };
  const auto append = [&](std::string& part, Reason r, int count) {
    part += digits(count);  // negative counts keep their sign
    part += '/';
    part += digits(cards);
    part += ' ';
    part += reason_name(r);
  };
  std::string out;
  if (reasons.size() == 1) {
    reasons.for_each([&](Reason r, int count) {
      out.reserve(2 * std::numeric_limits<size_t>::digits10 + 2 + reason_name(r).size());
      append(out, r, count);
    });
    return out;
  }
  thread_local std::array<std::string, kReasonCount> parts;
  size_t n = 0;
  size_t length = 0;
  reasons.for_each([&](Reason r, int count) {
    std::string& part = parts[n++];
    part.clear();
    append(part, r, count);
    length += part.size() + 2;
  });
  std::sort(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(n));
  out.reserve(length);
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    out += parts[i];
  }
  return out;
}

std::map<std::string, int, std::less<>> parse_reasons(std::string_view text) {
  std::map<std::string, int, std::less<>> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(", ", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view piece = text.substr(pos, end - pos);
    int count = 0;
    auto r = std::from_chars(piece.data(), piece.data() + piece.size(), count);
    if (r.ec == std::errc() && r.ptr < piece.data() + piece.size() && *r.ptr == '/') {
      std::string_view rest(r.ptr + 1, piece.data() + piece.size() - (r.ptr + 1));
      const size_t space = rest.find(' ');
      if (space != std::string_view::npos && space > 0 && space + 1 < rest.size()) {
        out[std::string(rest.substr(space + 1))] += count;
      }
    }
    if (end == text.size()) break;
    pos = end + 2;
  }
  return out;
}

std::string join_indexes(const ContainerDevices& devices) {
  std::string out;
  for (const ContainerDevice& d : devices) {
    if (!out.empty()) out += ',';
    out += std::to_string(d.idx);
  }
  return out;
}

namespace detail {
std::string_view trim_ascii_space(std::string_view item) {
  while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front())))
    item.remove_prefix(1);
  while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back())))
    item.remove_suffix(1);
  return item;
}
}  // namespace detail

std::vector<std::string> split_comma_list(std::string_view text) {
  std::vector<std::string> out;
  any_comma_item(text, [&](std::string_view item) {
    out.emplace_back(item);
    return false;
  });
  return out;
}

bool contains_ignore_case(std::string_view haystack, std::string_view needle) {
  // ASCII case folding, inline: std::tolower is a locale lookup per byte, and this runs for
  // every device of every node a pod is fitted on. Bytes outside ASCII compare as they are
  // (what std::tolower does in the C locale the program runs in).
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; };
  if (needle.size() > haystack.size()) return false;
  const size_t last = haystack.size() - needle.size();
  for (size_t at = 0; at <= last; ++at) {
    size_t i = 0;
    while (i < needle.size() && lower(haystack[at + i]) == lower(needle[i])) ++i;
    if (i == needle.size()) return true;
  }
  return false;
}

}  // namespace hamisim::device
