#pragma once
// Kubernetes resource.Quantity: parsing and the integer views the scheduler uses.
//
// The value is kept exactly as a count of nano-units in a signed 128-bit integer; every
// Kubernetes suffix (n u m "" k M G T P E, Ki..Ei, and decimal exponents) lands on a whole
// number of nano-units or is rounded up to one, as Kubernetes rounds sub-nano precision up.
// "Up" is Kubernetes' inf.RoundUp: the magnitude is rounded up, so negative values round away
// from zero ("-0.1n" is -1n); the integer views round the same way.
// Values whose magnitude exceeds what int64 can hold in milli-units are rejected at parse time
// with an error (Kubernetes would carry them as arbitrary-precision decimals; no scheduler
// decision is meaningful there).
//
// Grammar notes (as Kubernetes' ParseQuantity): "5." and ".5" are numbers; a number with no
// digits at all ("+", ".", "k", "Mi") is zero; "E" is exa while "e3"/"E-3"/"e+3" are decimal
// exponents; there is no "K" suffix (only "k" and "Ki"); no whitespace is allowed (the JSON
// decoder trims it first, as Quantity.UnmarshalJSON does).

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
  // (Kubernetes Quantity.AsInt64). "1.5" and "100m" are not integers. Unlike Kubernetes, the
  // answer depends on the value only, not on how it was written: "1000m" is 1.
  std::optional<int64_t> as_int64() const;
  // Value rounded up to an integer (Quantity.Value()); saturates at the int64 limits.
  int64_t value() const;
  // Value in milli-units rounded up (Quantity.MilliValue()); saturates at the int64 limits.
  int64_t milli_value() const;
  bool is_zero() const { return nanos_ == 0; }
  int sign() const { return nanos_ < 0 ? -1 : (nanos_ > 0 ? 1 : 0); }

  // Canonical-ish text for people: integers as decimal, otherwise milli ("100m") or nano.
  std::string to_string() const;

  __int128 nanos() const { return nanos_; }

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.nanos_ == b.nanos_; }
  friend auto operator<=>(const Quantity& a, const Quantity& b) { return a.nanos_ <=> b.nanos_; }
  // Saturate at the limits of the 128-bit nano count instead of overflowing.
  Quantity& operator+=(const Quantity& o);
  Quantity& operator-=(const Quantity& o);
  friend Quantity operator+(Quantity a, const Quantity& b) { return a += b; }
  friend Quantity operator-(Quantity a, const Quantity& b) { return a -= b; }

 private:
  explicit Quantity(__int128 nanos) : nanos_(nanos) {}
  __int128 nanos_ = 0;
};

}  // namespace hamisim::model
