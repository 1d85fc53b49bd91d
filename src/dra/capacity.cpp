#include "dra/capacity.h"

#include <fmt/format.h>

namespace hamisim::dra {
namespace {

// min + ceil((requested - min) / step) * step in whole units (Quantity.Value(), which rounds
// up), as the allocator's roundUpRange computes it; saturates instead of overflowing.
Quantity round_up_to_step(const Quantity& requested, const Quantity& min, const Quantity& step) {
  const __int128 lo = min.value();
  const __int128 unit = step.value();
  if (unit <= 0) return requested;  // the decoder refuses such steps; stay defined anyway
  const __int128 added = static_cast<__int128>(requested.value()) - lo;
  __int128 n = added / unit;
  if (added % unit != 0) ++n;
  const __int128 v = lo + n * unit;
  const __int128 max = INT64_MAX;
  return Quantity::from_int(static_cast<int64_t>(v > max ? max : v));
}

}  // namespace

Quantity consumed_amount(const DeviceCapacity& cap, const std::optional<Quantity>& requested) {
  const auto& policy = cap.request_policy;
  if (!requested) {
    return policy && policy->default_value ? *policy->default_value : cap.value;
  }
  if (!policy) return *requested;
  if (policy->valid_range) {
    const auto& range = *policy->valid_range;
    if (*requested < range.min) return range.min;
    if (!range.step) return *requested;
    return round_up_to_step(*requested, range.min, *range.step);
  }
  for (const auto& value : policy->valid_values) {
    if (value >= *requested) return value;
  }
  return *requested;
}

bool violates_policy(const DeviceCapacity& cap, const Quantity& consumed) {
  const auto& policy = cap.request_policy;
  if (!policy) return false;
  if (policy->default_value && consumed == *policy->default_value) return false;
  if (policy->valid_range) {
    const auto& range = *policy->valid_range;
    if (range.max && consumed > *range.max) return true;
    if (range.step) {
      const int64_t step = range.step->value();
      const __int128 off = static_cast<__int128>(consumed.value()) - range.min.value();
      if (step != 0 && off % step != 0) return true;
    }
    return false;
  }
  if (!policy->valid_values.empty()) {
    for (const auto& value : policy->valid_values) {
      if (value == consumed) return false;
    }
    return true;
  }
  return false;
}

Amounts consumed_capacity(const Device& device, const Amounts& requests) {
  Amounts out;
  for (const auto& [name, cap] : device.capacity) {
    const auto it = requests.find(name);
    out.emplace(name, consumed_amount(
                          cap, it == requests.end() ? std::nullopt : std::optional(it->second)));
  }
  return out;
}

namespace {

struct Misfit {
  enum Kind { kNone, kNoSuchCapacity, kPolicy, kNotEnoughLeft };
  Kind kind = kNone;
  std::string_view name = {};
  Quantity consumed = {};
  Quantity taken = {};
  Quantity value = {};
};

Quantity used(const Amounts* amounts, std::string_view name) {
  if (amounts == nullptr) return {};
  const auto it = amounts->find(name);
  return it == amounts->end() ? Quantity() : it->second;
}

// The first reason `requests` does not fit (the allocator's CmpRequestOverCapacity, in its
// order), without formatting anything.
Misfit find_misfit(const Device& device, const Amounts& requests, const Amounts* committed,
                   const Amounts* allocating) {
  for (const auto& [name, amount] : requests) {
    if (!device.capacity.contains(name)) return {.kind = Misfit::kNoSuchCapacity, .name = name};
  }
  for (const auto& [name, cap] : device.capacity) {
    const auto it = requests.find(name);
    const Quantity consumed =
        consumed_amount(cap, it == requests.end() ? std::nullopt : std::optional(it->second));
    if (violates_policy(cap, consumed)) {
      return {.kind = Misfit::kPolicy, .name = name, .consumed = consumed};
    }
    const Quantity taken = used(committed, name) + used(allocating, name);
    if (taken + consumed > cap.value) {
      return {.kind = Misfit::kNotEnoughLeft,
              .name = name,
              .consumed = consumed,
              .taken = taken,
              .value = cap.value};
    }
  }
  return {};
}

}  // namespace

std::optional<std::string> capacity_misfit(const Device& device, const Amounts& requests,
                                           const Amounts& in_use) {
  const Misfit m = find_misfit(device, requests, &in_use, nullptr);
  switch (m.kind) {
    case Misfit::kNone:
      return std::nullopt;
    case Misfit::kNoSuchCapacity:
      return fmt::format("device {} has no capacity {}", device.name, m.name);
    case Misfit::kPolicy:
      return fmt::format("device {}: {} of {} is not an amount its request policy allows",
                         device.name, m.consumed.to_string(), m.name);
    case Misfit::kNotEnoughLeft:
      return fmt::format("device {}: {} of {} needed, {} of {} left", device.name,
                         m.consumed.to_string(), m.name, (m.value - m.taken).to_string(),
                         m.value.to_string());
  }
  return std::nullopt;
}

bool capacity_fits(const Device& device, const Amounts& requests, const Amounts* committed,
                   const Amounts* allocating) {
  return find_misfit(device, requests, committed, allocating).kind == Misfit::kNone;
}

}  // namespace hamisim::dra
