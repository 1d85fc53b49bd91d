// Template versus reality (src/dra/template_compare.h), in Cluster Autoscaler's categories
// (../shared/reference/dra.md §5.7), each case derived from its rules.

#include "dra/template_compare.h"

#include <gtest/gtest.h>

namespace hamisim::dra {
namespace template_compare_test {

ResourceSlice slice(std::string driver, std::string pool, int devices,
                    std::vector<std::string> attributes = {"type", "uuid"}) {
  ResourceSlice s;
  s.metadata.name = pool + "-" + driver;
  s.driver = std::move(driver);
  s.pool = {.name = std::move(pool), .generation = 1, .resource_slice_count = 1};
  s.scope.node_name = "n";
  for (int i = 0; i < devices; ++i) {
    Device& d = s.devices.emplace_back();
    d.name = "dev-" + std::to_string(i);
    for (const auto& a : attributes) d.attributes[a] = std::string("x" + std::to_string(i));
  }
  return s;
}

const DriverDifference& of(const std::vector<DriverDifference>& diffs, const std::string& d) {
  for (const auto& x : diffs) {
    if (x.driver == d) return x;
  }
  static DriverDifference none;
  ADD_FAILURE() << "no entry for " << d;
  return none;
}

TEST(DraTemplateCompare, SameDevicesInAnotherPoolMatch) {
  // Values differ (x0..x7 either way is irrelevant) and pool names differ: nothing to report.
  const auto d =
      compare_with_template({slice("gpu.io", "template", 8)}, {slice("gpu.io", "node-1", 8)});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_FALSE(d[0].any());
}

TEST(DraTemplateCompare, AnotherDeviceCountIsAMismatch) {
  // One group each side, same names, 8 promised and 7 published: not equal, so the leftover
  // template group meets the node group sharing the most names: one mismatch.
  const auto d = compare_with_template({slice("gpu.io", "t", 8)}, {slice("gpu.io", "n", 7)});
  EXPECT_EQ(of(d, "gpu.io").mismatch, 1);
  EXPECT_EQ(of(d, "gpu.io").missing, 0);
  EXPECT_EQ(of(d, "gpu.io").extra, 0);
}

TEST(DraTemplateCompare, OtherAttributeNamesAreAMismatch) {
  const auto d = compare_with_template({slice("gpu.io", "t", 8, {"type", "uuid"})},
                                       {slice("gpu.io", "n", 8, {"type", "uuid", "minor"})});
  EXPECT_EQ(of(d, "gpu.io").mismatch, 1);
}

TEST(DraTemplateCompare, MissingAndExtraDrivers) {
  // The template promises GPUs the node does not publish, and the node publishes NICs the
  // template does not promise.
  const auto d = compare_with_template({slice("gpu.io", "t", 8)}, {slice("nic.io", "n", 2)});
  EXPECT_EQ(of(d, "gpu.io").missing, 1);
  EXPECT_EQ(of(d, "nic.io").extra, 1);
  EXPECT_EQ(of(d, "gpu.io").extra + of(d, "nic.io").missing, 0);
}

TEST(DraTemplateCompare, GroupsCancelOneForOneThenTheRestAreMatchedOrLeftOver) {
  // Template: 8 GPUs with (type, uuid) and 2 with (type); node: 8 with (type, uuid) only.
  // The 8 cancel; the 2 find no node group left: missing.
  const auto d = compare_with_template(
      {slice("gpu.io", "t", 8), slice("gpu.io", "t2", 2, {"type"})}, {slice("gpu.io", "n", 8)});
  EXPECT_EQ(of(d, "gpu.io").missing, 1);
  EXPECT_EQ(of(d, "gpu.io").mismatch, 0);
}

TEST(DraTemplateCompare, ADriverWhosePoolIsChangingIsNotCompared) {
  ResourceSlice half = slice("gpu.io", "n", 4);
  half.pool.resource_slice_count = 2;  // the other half not published yet
  const auto d = compare_with_template({slice("gpu.io", "t", 8)}, {half});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(d[0].in_flux);
  EXPECT_FALSE(d[0].any());
}

}  // namespace template_compare_test
}  // namespace hamisim::dra
