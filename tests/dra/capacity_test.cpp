// Consumable capacity (src/dra/capacity.h), each expectation derived by hand from the rules in
// ../shared/reference/dra.md §2.8 and its worked examples A.1 and A.2.

#include "dra/capacity.h"

#include <gtest/gtest.h>

namespace hamisim::dra {
namespace capacity_test {

Quantity q(std::string_view text) {
  return Quantity::parse(text).value();
}

DeviceCapacity plain_capacity(std::string_view value) {
  DeviceCapacity cap;
  cap.value = q(value);
  return cap;
}

DeviceCapacity range_capacity(std::string_view value, std::string_view def, std::string_view min,
                              std::optional<std::string_view> max,
                              std::optional<std::string_view> step) {
  DeviceCapacity cap = plain_capacity(value);
  cap.request_policy.emplace().default_value = q(def);
  cap.request_policy->valid_range.emplace().min = q(min);
  if (max) cap.request_policy->valid_range->max = q(*max);
  if (step) cap.request_policy->valid_range->step = q(*step);
  return cap;
}

DeviceCapacity values_capacity(std::string_view value, std::string_view def,
                               std::vector<std::string_view> values) {
  DeviceCapacity cap = plain_capacity(value);
  cap.request_policy.emplace().default_value = q(def);
  for (auto v : values) cap.request_policy->valid_values.push_back(q(v));
  return cap;
}

TEST(DraCapacity, RangeRoundingOfTheExampleDriver) {
  // validRange {min 1Gi, max 80Gi, step 1Gi}, default 80Gi (reference A.2).
  const auto cap = range_capacity("80Gi", "80Gi", "1Gi", "80Gi", "1Gi");
  EXPECT_EQ(consumed_amount(cap, std::nullopt), q("80Gi"));
  EXPECT_EQ(consumed_amount(cap, q("512Mi")), q("1Gi"));
  EXPECT_EQ(consumed_amount(cap, q("1.5Gi")), q("2Gi"));
  EXPECT_EQ(consumed_amount(cap, q("4Gi")), q("4Gi"));
  const Quantity over = consumed_amount(cap, q("85899345921"));  // 80Gi + 1 byte
  EXPECT_EQ(over, q("81Gi"));
  EXPECT_TRUE(violates_policy(cap, over));
  EXPECT_FALSE(violates_policy(cap, q("4Gi")));
}

TEST(DraCapacity, RangeRoundingOfHamiMemory) {
  // HAMi's memory: validRange {min 1Mi, max 80Gi, step 1Mi}. A request of 10^9 bytes is
  // 953.67 MiB: it takes 954 MiB.
  const auto cap = range_capacity("80Gi", "80Gi", "1Mi", "80Gi", "1Mi");
  EXPECT_EQ(consumed_amount(cap, q("4Gi")), q("4Gi"));
  EXPECT_EQ(consumed_amount(cap, q("1000000000")), q("954Mi"));
  EXPECT_EQ(q("954Mi"), q("1000341504"));
  // Fractional requests are rounded up to whole units before the step.
  EXPECT_EQ(consumed_amount(cap, q("1048576.5")), q("2Mi"));
}

TEST(DraCapacity, TheAllocatorTestsRangeHelper) {
  // {default 2, validRange {min 2, step 2, max 4}} on a capacity of 10.
  const auto cap = range_capacity("10", "2", "2", "4", "2");
  EXPECT_EQ(consumed_amount(cap, q("1")), q("2"));  // below min: min
  EXPECT_EQ(consumed_amount(cap, q("3")), q("4"));
  const Quantity six = consumed_amount(cap, q("6"));
  EXPECT_EQ(six, q("6"));
  EXPECT_TRUE(violates_policy(cap, six));  // over max, although 6 < 10
  EXPECT_EQ(consumed_amount(cap, std::nullopt), q("2"));
  // A range without a step keeps the request.
  const auto no_step = range_capacity("10", "2", "2", std::nullopt, std::nullopt);
  EXPECT_EQ(consumed_amount(no_step, q("3.5")), q("3.5"));
  EXPECT_FALSE(violates_policy(no_step, q("3.5")));
}

TEST(DraCapacity, ValidValuesRoundUpToTheNextListedValue) {
  const auto cap = values_capacity("8", "1", {"1", "2", "4", "8"});
  EXPECT_EQ(consumed_amount(cap, q("3")), q("4"));
  const Quantity nine = consumed_amount(cap, q("9"));
  EXPECT_EQ(nine, q("9"));
  EXPECT_TRUE(violates_policy(cap, nine));
  EXPECT_EQ(consumed_amount(values_capacity("8", "1", {"1", "3"}), q("2")), q("3"));
}

TEST(DraCapacity, WithoutAPolicyTheRequestOrTheWholeCapacity) {
  const DeviceCapacity cap = plain_capacity("10");
  EXPECT_EQ(consumed_amount(cap, q("3")), q("3"));
  EXPECT_EQ(consumed_amount(cap, std::nullopt), q("10"));
  EXPECT_FALSE(violates_policy(cap, q("11")));
}

// One HAMi GPU as HAMi's driver publishes it: cores 100 and memory 80 GiB, both defaulting to
// the whole device.
Device hami_gpu(std::string name) {
  Device d;
  d.name = std::move(name);
  d.allow_multiple_allocations = true;
  d.capacity.emplace("cores", range_capacity("100", "100", "0", "100", "1"));
  d.capacity.emplace("memory", range_capacity("80Gi", "80Gi", "1Mi", "80Gi", "1Mi"));
  return d;
}

Amounts hami_request(std::optional<int> mib, std::optional<int> cores) {
  Amounts a;
  if (mib) a.emplace("memory", Quantity::from_int(int64_t{*mib} * 1048576));
  if (cores) a.emplace("cores", Quantity::from_int(*cores));
  return a;
}

void add(Amounts& in_use, const Amounts& consumed) {
  for (const auto& [name, amount] : consumed) in_use[name] += amount;
}

TEST(DraCapacity, FractionalPackingOnOneHamiNode) {
  // Reference A.1: pods in order, first fit over gpu-0 then gpu-1.
  const Device gpu0 = hami_gpu("hami-gpu-0");
  const Device gpu1 = hami_gpu("hami-gpu-1");
  Amounts used0, used1;
  // P1: gpumem 20000, gpucores 30 -> gpu-0.
  const auto p1 = hami_request(20000, 30);
  ASSERT_EQ(capacity_misfit(gpu0, p1, used0), std::nullopt);
  EXPECT_EQ(consumed_capacity(gpu0, p1), (Amounts{{"cores", q("30")}, {"memory", q("20000Mi")}}));
  add(used0, consumed_capacity(gpu0, p1));
  // P2: gpumem 4000 only: its cores default to 100, which gpu-0 no longer has.
  const auto p2 = hami_request(4000, std::nullopt);
  EXPECT_EQ(capacity_misfit(gpu0, p2, used0),
            "device hami-gpu-0: 100 of cores needed, 70 of 100 left");
  ASSERT_EQ(capacity_misfit(gpu1, p2, used1), std::nullopt);
  add(used1, consumed_capacity(gpu1, p2));
  EXPECT_EQ(used1.at("cores"), q("100"));
  // P3: gpumem 10000, gpucores 50 -> gpu-0.
  const auto p3 = hami_request(10000, 50);
  ASSERT_EQ(capacity_misfit(gpu0, p3, used0), std::nullopt);
  add(used0, consumed_capacity(gpu0, p3));
  EXPECT_EQ(used0.at("memory"), q("30000Mi"));
  // P4: two GPUs with gpucores 10 each, memory defaulting to all of it: neither fits.
  const auto p4 = hami_request(std::nullopt, 10);
  EXPECT_TRUE(capacity_misfit(gpu0, p4, used0));
  EXPECT_TRUE(capacity_misfit(gpu1, p4, used1));
  // P5: gpumem 40000, gpucores 20 -> gpu-0, now full on cores.
  const auto p5 = hami_request(40000, 20);
  ASSERT_EQ(capacity_misfit(gpu0, p5, used0), std::nullopt);
  add(used0, consumed_capacity(gpu0, p5));
  EXPECT_EQ(used0.at("cores"), q("100"));
  EXPECT_EQ(used0.at("memory"), q("70000Mi"));
  // P6: gpucores 0 still fits a full-cores GPU.
  const auto p6 = hami_request(1000, 0);
  ASSERT_EQ(capacity_misfit(gpu0, p6, used0), std::nullopt);
  add(used0, consumed_capacity(gpu0, p6));
  EXPECT_EQ(used0.at("memory"), q("71000Mi"));
}

TEST(DraCapacity, MisfitsNameTheCapacity) {
  const Device gpu = hami_gpu("hami-gpu-0");
  EXPECT_EQ(capacity_misfit(gpu, {{"bandwidth", q("1")}}, {}),
            "device hami-gpu-0 has no capacity bandwidth");
  EXPECT_EQ(capacity_misfit(gpu, {{"memory", q("81Gi")}}, {}),
            "device hami-gpu-0: 86973087744 of memory is not an amount its request policy allows");
  // A dedicated device: the request only filters (the capacity must hold it).
  Device dedicated;
  dedicated.name = "gpu-0";
  dedicated.capacity.emplace("memory", plain_capacity("40Gi"));
  EXPECT_EQ(capacity_misfit(dedicated, {{"memory", q("40Gi")}}, {}), std::nullopt);
  EXPECT_EQ(capacity_misfit(dedicated, {{"memory", q("41Gi")}}, {}),
            "device gpu-0: 44023414784 of memory needed, 42949672960 of 42949672960 left");
  // A shareable device without capacities can be shared without limit.
  Device open;
  open.name = "channel-0";
  open.allow_multiple_allocations = true;
  EXPECT_EQ(capacity_misfit(open, {}, {}), std::nullopt);
  EXPECT_TRUE(consumed_capacity(open, {}).empty());
}

}  // namespace capacity_test
}  // namespace hamisim::dra
