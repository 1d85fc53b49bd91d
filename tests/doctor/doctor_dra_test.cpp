// `hamisim doctor --cluster`: HAMi's DRA mode in a cluster dump (src/doctor/dra_checks.cpp),
// one case per rule of docs/doctor.md's dra-* rows.

#include <gtest/gtest.h>

#include "doctor/doctor.h"

namespace hamisim::doctor {
namespace dra_test {

model::Node node(std::string name, bool registered) {
  model::Node n;
  n.metadata.name = std::move(name);
  if (registered) n.metadata.annotations["hami.io/node-nvidia-register"] = "[]";
  return n;
}

dra::ResourceSlice hami_slice(std::string node, bool shareable = true) {
  dra::ResourceSlice s;
  s.metadata.name = node + "-hami";
  s.driver = "hami-core-gpu.project-hami.io";
  s.pool = {.name = node, .generation = 1, .resource_slice_count = 1};
  s.scope.node_name = std::move(node);
  s.devices.emplace_back().name = "hami-gpu-0";
  s.devices.back().allow_multiple_allocations = shareable;
  return s;
}

std::vector<std::string> checks(const std::vector<Finding>& findings, Severity s) {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    if (f.severity == s) out.push_back(f.check + " " + f.field);
  }
  return out;
}

using Lines = std::vector<std::string>;

TEST(DoctorDra, ANodeInBothModesIsAnErrorAndOnlyThat) {
  dra::Objects objects;
  objects.slices = {hami_slice("both", false)};
  const auto f = check_dra_cluster("c.yaml", {node("both", true)}, objects);
  EXPECT_EQ(checks(f, Severity::kError), Lines{"dra-mixed-modes Node both"});
  EXPECT_TRUE(checks(f, Severity::kWarning).empty());  // no node in one mode beside another
}

TEST(DoctorDra, BothModesInOneClusterIsAWarning) {
  dra::Objects objects;
  objects.slices = {hami_slice("dra-node", false)};
  const auto f =
      check_dra_cluster("c.yaml", {node("plugin-node", true), node("dra-node", false)}, objects);
  EXPECT_TRUE(checks(f, Severity::kError).empty());
  EXPECT_EQ(checks(f, Severity::kWarning), Lines{"dra-mixed-modes "});
}

TEST(DoctorDra, ASelectorOutsideTheCelSubsetIsAnErrorNamingTheClass) {
  dra::Objects objects;
  dra::DeviceClass good, odd;
  good.metadata.name = "hami-gpu";
  good.selectors = {"device.driver == 'hami-core-gpu.project-hami.io'"};
  odd.metadata.name = "odd";
  odd.selectors = {"device.driver == 'x'", "'%s'.format([device.driver]) == 'x'"};
  objects.classes = {good, odd};
  const auto f = check_dra_cluster("c.yaml", {}, objects);
  ASSERT_EQ(checks(f, Severity::kError), Lines{"dra-class-selector DeviceClass odd selectors[1]"});
  EXPECT_NE(f[0].message.find("is not supported by hamisim"), std::string::npos) << f[0].message;
}

TEST(DoctorDra, ShareableDevicesNameTheGateTheyNeed) {
  dra::Objects objects;
  objects.slices = {hami_slice("n1")};
  const auto f = check_dra_cluster("c.yaml", {node("n1", false)}, objects);
  ASSERT_EQ(checks(f, Severity::kInfo), Lines{"dra-feature-gates "});
  EXPECT_NE(f[0].why.find("DRAConsumableCapacity"), std::string::npos);
  // Nothing shareable, no counters: nothing to say.
  objects.slices = {hami_slice("n1", false)};
  EXPECT_TRUE(check_dra_cluster("c.yaml", {node("n1", false)}, objects).empty());
}

}  // namespace dra_test
}  // namespace hamisim::doctor
