// HAMi's Fit reasons: the table every backend counts in, their counts, and the "n/m Reason"
// text made of them (hami-device-model.md §3.3).

#include "device/reason.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "device/allocation.h"

namespace hamisim::device {
namespace {

TEST(Reason, NamesAreInTheEnumsOrderAndFoundByName) {
  for (size_t i = 0; i < kReasonCount; ++i) {
    const auto r = static_cast<Reason>(i);
    if (i > 0) {
      EXPECT_LT(reason_name(static_cast<Reason>(i - 1)), reason_name(r));
    }
    EXPECT_EQ(find_reason(reason_name(r)), r);
  }
  EXPECT_EQ(reason_name(Reason::kCardInsufficientMemory), "CardInsufficientMemory");
  EXPECT_EQ(reason_name(Reason::kExclusiveDeviceAllocateConflict),
            "ExclusiveDeviceAllocateConflict");
  EXPECT_EQ(find_reason("node unregistered"), std::nullopt);
  EXPECT_EQ(find_reason(""), std::nullopt);
  EXPECT_EQ(find_reason("CardInsufficientMemor"), std::nullopt);
}

TEST(Reason, CapacityReasonsAreTheOnesAFullNodeGives) {
  std::vector<std::string_view> capacity;
  for (size_t i = 0; i < kReasonCount; ++i) {
    if (is_capacity_reason(static_cast<Reason>(i))) {
      capacity.push_back(reason_name(static_cast<Reason>(i)));
    }
  }
  EXPECT_EQ(capacity,
            (std::vector<std::string_view>{
                "AllocatedCardsInsufficientRequest", "CardComputeUnitsExhausted",
                "CardInsufficientCore", "CardInsufficientMemory", "CardTimeSlicingExhausted",
                "ExclusiveDeviceAllocateConflict", "ResourceQuotaNotFit"}));
}

TEST(ReasonCounts, CountsLikeAMapByName) {
  ReasonCounts counts;
  EXPECT_TRUE(counts.empty());
  EXPECT_EQ(counts.size(), 0u);
  ++counts[Reason::kNumaNotFit];
  ++counts[Reason::kCardNotHealth];
  ++counts[Reason::kNumaNotFit];
  counts[Reason::kCardTypeMismatch] += 0;  // present with 0, as map[k] += 0 was
  EXPECT_FALSE(counts.empty());
  EXPECT_EQ(counts.size(), 3u);
  EXPECT_TRUE(counts.contains(Reason::kCardTypeMismatch));
  EXPECT_FALSE(counts.contains(Reason::kCardUuidMismatch));
  EXPECT_EQ(counts.count_of(Reason::kNumaNotFit), 2);
  EXPECT_EQ(counts.count_of(Reason::kCardUuidMismatch), 0);
  std::vector<std::pair<std::string_view, int>> visited;
  counts.for_each([&](Reason r, int n) { visited.emplace_back(reason_name(r), n); });
  EXPECT_EQ(visited, (std::vector<std::pair<std::string_view, int>>{
                         {"CardNotHealth", 1}, {"CardTypeMismatch", 0}, {"NumaNotFit", 2}}));
  EXPECT_EQ(counts, (ReasonCounts{{Reason::kNumaNotFit, 2},
                                  {Reason::kCardNotHealth, 1},
                                  {Reason::kCardTypeMismatch, 0}}));
  EXPECT_NE(counts, (ReasonCounts{{Reason::kNumaNotFit, 2}, {Reason::kCardNotHealth, 1}}));
  EXPECT_NE(counts, (ReasonCounts{{Reason::kNumaNotFit, 1},
                                  {Reason::kCardNotHealth, 1},
                                  {Reason::kCardTypeMismatch, 0}}));
}

TEST(FormatReasons, OneReason) {
  EXPECT_EQ(format_reasons({}, 8), "");
  EXPECT_EQ(format_reasons({{Reason::kCardInsufficientMemory, 8}}, 8),
            "8/8 CardInsufficientMemory");
  EXPECT_EQ(format_reasons({{Reason::kNumaNotFit, 0}}, 12), "0/12 NumaNotFit");
  EXPECT_EQ(format_reasons({{Reason::kNumaNotFit, -3}}, 2), "-3/2 NumaNotFit");
}

TEST(FormatReasons, SeveralSortedAsWholeStrings) {
  // "10/16 ..." sorts before "2/16 ...": HAMi sorts the pieces, not the names.
  EXPECT_EQ(format_reasons({{Reason::kCardTimeSlicingExhausted, 2},
                            {Reason::kCardInsufficientMemory, 10},
                            {Reason::kCardNotHealth, 4}},
                           16),
            "10/16 CardInsufficientMemory, 2/16 CardTimeSlicingExhausted, 4/16 CardNotHealth");
  const std::string text = format_reasons({{Reason::kCardUuidMismatch, 1},
                                           {Reason::kCardTypeMismatch, 1},
                                           {Reason::kAllocatedCardsInsufficientRequest, 1}},
                                          3);
  EXPECT_EQ(text,
            "1/3 AllocatedCardsInsufficientRequest, 1/3 CardTypeMismatch, 1/3 CardUuidMismatch");
  // And parse_reasons reads it back.
  const auto parsed = parse_reasons(text);
  EXPECT_EQ(parsed,
            (std::map<std::string, int, std::less<>>{{"AllocatedCardsInsufficientRequest", 1},
                                                     {"CardTypeMismatch", 1},
                                                     {"CardUuidMismatch", 1}}));
}

}  // namespace
}  // namespace hamisim::device
