#pragma once
// DRA device selectors: CEL as kube-scheduler 1.37 evaluates DeviceClass and ResourceClaim
// selectors (the DRA environment of k8s.io/dynamic-resource-allocation v0.37.2; docs/cel.md
// lists the few constructs still refused).
//
// Contract:
// - Selector::compile parses and type-checks once. A construct hamisim does not evaluate, and
//   anything CEL's checker would refuse, is an error naming the expression and the column;
//   nothing unsupported is ever silently treated as a match or a non-match.
// - Selector::matches evaluates against one device without re-parsing. It answers true or
//   false, or returns CEL's runtime error ("no such key: model", "no such overload"): in
//   Kubernetes a runtime error fails the scheduling attempt, so callers must not fold it into
//   false. `&&` and `||` absorb errors as CEL does (`false && <error>` is false in either order).
// - A compiled Selector is immutable; copies share it and may be evaluated concurrently.
// - Evaluation of the common selectors (string comparisons, attribute lookups) allocates
//   nothing: strings are views into the expression and into the device. Values built at run
//   time (lists, maps, strings a function makes) own their storage.
// - Evaluation stops past Kubernetes' run-time cost limit (kCostLimit), with its error.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "model/quantity.h"
#include "model/result.h"

namespace hamisim::cel {

// A semantic version (semver 2.0.0). `build` is kept but never ordered or compared.
struct Semver {
  uint64_t major = 0;
  uint64_t minor = 0;
  uint64_t patch = 0;
  std::string prerelease;  // without the '-'; empty: a release
  std::string build;       // without the '+'
};

// Strict semver 2.0.0, as DRA validates version attributes: MAJOR.MINOR.PATCH with no leading
// zeros (and no "v"), optional -prerelease (dot-separated [0-9A-Za-z-]+ identifiers, numeric
// ones without leading zeros) and +build. Numbers (MAJOR, MINOR, PATCH and numeric prerelease
// identifiers) must fit in uint64, as Kubernetes' semver parser (blang/semver) requires.
Result<Semver> parse_semver(std::string_view text);
// Semver 2.0.0 precedence: -1, 0 or 1. Build metadata is ignored.
int compare_semver(const Semver& a, const Semver& b);

// A device attribute's typed value (DRA's int, bool, string and version). List attributes
// (gate DRAListTypeAttributes, alpha) are not represented.
using Attribute = std::variant<bool, int64_t, std::string, Semver>;

// The `device` variable. Attribute and capacity names without a domain are already filed
// under the driver's name by the caller. The pointers returned must stay valid while
// matches() runs.
class Device {
 public:
  virtual ~Device() = default;
  virtual std::string_view driver() const = 0;
  virtual bool allow_multiple_allocations() const = 0;
  // nullptr: the device has no such attribute.
  virtual const Attribute* attribute(std::string_view domain, std::string_view id) const = 0;
  // The capacity's total value (not what remains); nullptr: no such capacity.
  virtual const model::Quantity* capacity(std::string_view domain, std::string_view id) const = 0;
  // Every attribute's and every capacity's (domain, id), in any order: what iterating and
  // sizing device.attributes and device.capacity see.
  using Names = std::vector<std::pair<std::string_view, std::string_view>>;
  virtual Names attribute_names() const = 0;
  virtual Names capacity_names() const = 0;
};

namespace detail {
struct Program;
}

class Selector {
 public:
  // Longest expression accepted (resource.k8s.io CELSelectorExpressionMaxLength).
  static constexpr size_t kMaxExpressionLength = 10 * 1024;
  // Run-time cost limit of one evaluation (resource.k8s.io CELSelectorExpressionMaxCost).
  static constexpr uint64_t kCostLimit = 1000000;

  // Errors read: CEL expression "<expr>": <what> at column N[ is not supported by hamisim
  // (docs/cel.md lists what is)].
  static Result<Selector> compile(std::string_view expression);

  // CEL runtime errors come back as the error's message, unchanged ("no such key: model").
  Result<bool> matches(const Device& device) const;

  const std::string& expression() const;

 private:
  explicit Selector(std::shared_ptr<const detail::Program> program)
      : program_(std::move(program)) {}
  std::shared_ptr<const detail::Program> program_;
};

}  // namespace hamisim::cel
