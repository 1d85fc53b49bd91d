#pragma once
// HAMi's Fit failure reasons (reference: hami-device-model.md §3.3, hami-other-vendors.md
// A.10): the names every backend counts its rejected devices under, and which of them mean the
// node lacks capacity rather than something the pod asks for. One table for the backends, the
// "n/m Reason" text (device/allocation.h) and Fit's failure classes.
//
// A Fit counts a reason per rejected device, on every node a pod is filtered against: the
// counts are a fixed array indexed by the reason, so counting allocates nothing and the text is
// built from them only when a failure is reported.

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>

namespace hamisim::device {

// In the order of their names (a std::map's order), so the counts are visited as they were when
// they were kept by name.
enum class Reason : uint8_t {
  kAllocatedCardsInsufficientRequest,
  kCardAppClassMismatch,
  kCardComputeUnitsExhausted,
  kCardCordoned,
  kCardInsufficientCore,
  kCardInsufficientMemory,
  kCardMigTopologyInfeasible,
  kCardNotFoundCustomFilterRule,
  kCardNotHealth,
  kCardQosPolicyMismatch,
  kCardTimeSlicingExhausted,
  kCardTypeMismatch,
  kCardUnhealthy,
  kCardUuidMismatch,
  kExclusiveDeviceAllocateConflict,
  kModeNotFit,
  kNumaNotFit,
  kResourceQuotaNotFit,
};
inline constexpr size_t kReasonCount = 18;
static_assert(static_cast<size_t>(Reason::kResourceQuotaNotFit) + 1 == kReasonCount);

// HAMi's name ("CardInsufficientMemory").
std::string_view reason_name(Reason r);
// The reason of a name; nullopt for a name no backend counts.
std::optional<Reason> find_reason(std::string_view name);
// Whether the reason means the device lacks memory, cores, slots or the namespace quota (the
// node is full), rather than a constraint of the pod (type, UUID, mode, health...).
bool is_capacity_reason(Reason r);

// Reason -> count, for the reasons counted at least once (a count set to 0 is still counted,
// as a map entry would be: HAMi prints "0/m").
class ReasonCounts {
 public:
  ReasonCounts() = default;
  ReasonCounts(std::initializer_list<std::pair<Reason, int>> counts) {
    for (const auto& [r, n] : counts) (*this)[r] = n;
  }

  // The reason's count, added with 0 when absent.
  int& operator[](Reason r) {
    present_ |= bit(r);
    return counts_[static_cast<size_t>(r)];
  }
  bool empty() const { return present_ == 0; }
  size_t size() const { return static_cast<size_t>(__builtin_popcount(present_)); }
  bool contains(Reason r) const { return (present_ & bit(r)) != 0; }
  // 0 when absent.
  int count_of(Reason r) const { return contains(r) ? counts_[static_cast<size_t>(r)] : 0; }
  // Visits (reason, count) in name order.
  template <class Visit>
  void for_each(Visit&& visit) const {
    for (uint32_t rest = present_; rest != 0; rest &= rest - 1) {
      const auto r = static_cast<Reason>(__builtin_ctz(rest));
      visit(r, counts_[static_cast<size_t>(r)]);
    }
  }

  friend bool operator==(const ReasonCounts& a, const ReasonCounts& b) {
    if (a.present_ != b.present_) return false;
    for (uint32_t rest = a.present_; rest != 0; rest &= rest - 1) {
      const auto i = static_cast<size_t>(__builtin_ctz(rest));
      if (a.counts_[i] != b.counts_[i]) return false;
    }
    return true;
  }

 private:
  static uint32_t bit(Reason r) { return uint32_t{1} << static_cast<unsigned>(r); }
  static_assert(kReasonCount <= 32, "present_ holds one bit per reason");

  uint32_t present_ = 0;
  std::array<int, kReasonCount> counts_{};  // 0 where present_ has no bit
};

}  // namespace hamisim::device
