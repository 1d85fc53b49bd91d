#include "device/reason.h"

#include <algorithm>

namespace hamisim::device {
namespace {

struct ReasonInfo {
  std::string_view name;
  bool capacity;
};

// Indexed by Reason; names in ascending order (tests/device/reason_test.cpp checks it).
constexpr std::array<ReasonInfo, kReasonCount> kReasons{{
    {"AllocatedCardsInsufficientRequest", true},
    {"CardAppClassMismatch", false},
    {"CardComputeUnitsExhausted", true},
    {"CardCordoned", false},
    {"CardInsufficientCore", true},
    {"CardInsufficientMemory", true},
    {"CardMigTopologyInfeasible", false},
    {"CardNotFoundCustomFilterRule", false},
    {"CardNotHealth", false},
    {"CardQosPolicyMismatch", false},
    {"CardTimeSlicingExhausted", true},
    {"CardTypeMismatch", false},
    {"CardUnhealthy", false},
    {"CardUuidMismatch", false},
    {"ExclusiveDeviceAllocateConflict", true},
    {"ModeNotFit", false},
    {"NumaNotFit", false},
    {"ResourceQuotaNotFit", true},
}};

}  // namespace

std::string_view reason_name(Reason r) {
  return kReasons[static_cast<size_t>(r)].name;
}

bool is_capacity_reason(Reason r) {
  return kReasons[static_cast<size_t>(r)].capacity;
}

std::optional<Reason> find_reason(std::string_view name) {
  auto it = std::lower_bound(kReasons.begin(), kReasons.end(), name,
                             [](const ReasonInfo& r, std::string_view n) { return r.name < n; });
  if (it == kReasons.end() || it->name != name) return std::nullopt;
  return static_cast<Reason>(it - kReasons.begin());
}

}  // namespace hamisim::device
