#pragma once
// Kubernetes resource.Quantity: parsing and the integer views the scheduler uses.
//
// The value is kept exactly as a count of nano-units in a signed 128-bit integer; every
// Kubernetes suffix (n u m "" k M G T P E, Ki..Ei, and decimal exponents) lands on a whole
// number of nano-units or is rounded up to one, as Kubernetes rounds sub-nano precision up.
// Values whose magnitude exceeds what int64 can hold in milli-units are rejected at parse time
// with an error (Kubernetes would carry them as arbitrary-precision decimals; no scheduler
// decision is meaningful there).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/result.h"

namespace hamisim::model {

class Quantity {
 public:
  Quantity() = default;

  // Parses the Kubernetes quantity grammar exactly (sign, digits, optional fraction,
  // suffix or exponent). Errors name the offending text.
  static Result<Quantity> parse(std::string_view text);
  static Quantity from_int(int64_t value);
  static Quantity from_milli(int64_t milli);

  // Exact integer value when the quantity is a whole number that fits in int64
  // (Kubernetes Quantity.AsInt64). "1.5" and "100m" are not integers.
  std::optional<int64_t> as_int64() const;
  // Value rounded up to an integer (Quantity.Value()).
  int64_t value() const;
  // Value in milli-units rounded up (Quantity.MilliValue()).
  int64_t milli_value() const;
  bool is_zero() const { return nanos_ == 0; }
  int sign() const { return nanos_ < 0 ? -1 : (nanos_ > 0 ? 1 : 0); }

  // Canonical-ish text for people: integers as decimal, otherwise milli ("100m") or nano.
  std::string to_string() const;

  __int128 nanos() const { return nanos_; }

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.nanos_ == b.nanos_; }
  friend auto operator<=>(const Quantity& a, const Quantity& b) { return a.nanos_ <=> b.nanos_; }
  Quantity& operator+=(const Quantity& o);
  Quantity& operator-=(const Quantity& o);

 private:
  explicit Quantity(__int128 nanos) : nanos_(nanos) {}
  __int128 nanos_ = 0;
};

}  // namespace hamisim::model
