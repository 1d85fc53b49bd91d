#pragma once
// Consumable capacity (KEP-5075): how much of each capacity of a device one allocation takes,
// and whether it still fits, exactly as the structured allocator computes it
// (../shared/reference/dra.md §2.8). Pure arithmetic on exact quantities.

#include <optional>
#include <string>

#include "dra/objects.h"

namespace hamisim::dra {

// Amounts per capacity name: a request's `capacity.requests`, what one allocation consumes of
// a device, or what all allocations of a device consume together.
using Amounts = NameMap<Quantity>;

// What one allocation consumes of `cap` when the request asks for `requested` (nullopt: the
// request does not name this capacity). Without a request: the policy's default, else the
// whole capacity. With one: rounded up to the policy's range step (in whole units, as the
// allocator's int64 arithmetic does) or to the next listed valid value.
Quantity consumed_amount(const DeviceCapacity& cap, const std::optional<Quantity>& requested);

// True when `consumed` is not an amount the policy allows: above the range's max, off its
// step, or not a listed value. The default is always allowed; no policy allows anything.
bool violates_policy(const DeviceCapacity& cap, const Quantity& consumed);

// What one allocation of `device` for a request with `requests` consumes: an entry for every
// capacity the device has (the result's consumedCapacity).
Amounts consumed_capacity(const Device& device, const Amounts& requests);

// Why `requests` does not fit `device` when `in_use` is already consumed of it (committed
// shares and shares made earlier in the same allocation), or nullopt when it fits: a requested
// capacity the device does not have, an amount the policy does not allow, or not enough left.
std::optional<std::string> capacity_misfit(const Device& device, const Amounts& requests,
                                           const Amounts& in_use);

// The same question without the words, for the allocator's search: what is in use is
// `committed` (the cluster's shares) plus `allocating` (shares made earlier in the same
// allocation); either may be null.
bool capacity_fits(const Device& device, const Amounts& requests, const Amounts* committed,
                   const Amounts* allocating);

}  // namespace hamisim::dra
