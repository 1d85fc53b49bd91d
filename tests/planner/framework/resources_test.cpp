// Pod request computation as kube-scheduler does it.
// Reference: kubernetes.io/docs/concepts/resource-management/effective-pod-requests-limits/
// and kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/ (resource sharing).

#include "planner/framework/resources.h"

#include <gtest/gtest.h>

#include <limits>

#include "framework_test_support.h"

namespace hamisim::planner::framework {
namespace {

using testing::PodBuilder;
using testing::q;
using testing::res;

// Effective request = sum of app containers when there are no init containers.
TEST(PodRequests, SumsAppContainers) {
  model::Pod pod = PodBuilder("p")
                       .container(res({{"cpu", "100m"}, {"memory", "1Gi"}}))
                       .container(res({{"cpu", "250m"}, {"nvidia.com/gpu", "1"}}));
  auto r = pod_requests(pod);
  EXPECT_EQ(r.at("cpu"), q("350m"));
  EXPECT_EQ(r.at("memory"), q("1Gi"));
  EXPECT_EQ(r.at("nvidia.com/gpu"), q("1"));
}

// Init containers run one at a time: the effective request is max(sum of app containers,
// largest init container), per resource independently.
TEST(PodRequests, InitContainersTakeTheMaxPerResource) {
  model::Pod pod = PodBuilder("p")
                       .init_container(res({{"cpu", "2"}, {"memory", "100Mi"}}))
                       .init_container(res({{"cpu", "500m"}, {"memory", "3Gi"}}))
                       .container(res({{"cpu", "1"}, {"memory", "1Gi"}}));
  auto r = pod_requests(pod);
  EXPECT_EQ(r.at("cpu"), q("2"));
  EXPECT_EQ(r.at("memory"), q("3Gi"));
}

// Sidecars (restartPolicy Always) keep running: they add to the app-container sum, and every
// later init container runs next to the sidecars declared before it (docs example).
TEST(PodRequests, SidecarsAccumulateIntoAppSumAndLaterInitContainers) {
  model::Pod pod = PodBuilder("p")
                       .init_container(res({{"cpu", "1"}}), /*sidecar=*/true)
                       .init_container(res({{"cpu", "3"}}))
                       .container(res({{"cpu", "500m"}}));
  // app phase: 500m + 1 = 1.5; init phase: 3 + 1 (sidecar before it) = 4.
  EXPECT_EQ(pod_requests(pod).at("cpu"), q("4"));
}

// A sidecar declared after a regular init container does not run beside it.
TEST(PodRequests, SidecarAfterInitContainerDoesNotAddToIt) {
  model::Pod pod = PodBuilder("p")
                       .init_container(res({{"cpu", "3"}}))
                       .init_container(res({{"cpu", "1"}}), /*sidecar=*/true)
                       .container(res({{"cpu", "500m"}}));
  // init phase: max(3, 1) = 3; app phase: 1.5.
  EXPECT_EQ(pod_requests(pod).at("cpu"), q("3"));
}

// The sidecar's own init-phase entry counts itself plus the sidecars before it.
TEST(PodRequests, SidecarsAloneDominateWhenAppContainersAreSmall) {
  model::Pod pod = PodBuilder("p")
                       .init_container(res({{"memory", "1Gi"}}), true)
                       .init_container(res({{"memory", "2Gi"}}), true)
                       .container(res({{"memory", "0"}}));
  EXPECT_EQ(pod_requests(pod).at("memory"), q("3Gi"));
}

// Pod overhead (RuntimeClass) is added on top of the effective request.
TEST(PodRequests, OverheadIsAddedAfterTheInitMax) {
  model::Pod pod = PodBuilder("p")
                       .init_container(res({{"cpu", "2"}}))
                       .container(res({{"cpu", "1"}}))
                       .overhead(res({{"cpu", "250m"}, {"memory", "120Mi"}}));
  auto r = pod_requests(pod);
  EXPECT_EQ(r.at("cpu"), q("2250m"));
  EXPECT_EQ(r.at("memory"), q("120Mi"));
}

// Filter uses requests as written: no 100m/200Mi non-zero defaults (those are for scoring).
TEST(PodRequests, ZeroRequestsStayZeroForFilter) {
  model::Pod pod = PodBuilder("p").container({});
  EXPECT_TRUE(pod_requests(pod).empty());
  Resource r = pod_fit_request(pod);
  EXPECT_EQ(r.milli_cpu, 0);
  EXPECT_EQ(r.memory, 0);
  EXPECT_TRUE(r.scalar.empty());
}

// framework.Resource rounds cpu up to millicores and other resources up to whole units.
TEST(PodRequests, IntegerViewsRoundUp) {
  model::Pod pod = PodBuilder("p").container(
      res({{"cpu", "0.0001"}, {"memory", "0.5"}, {"example.com/x", "1m"}}));
  Resource r = pod_fit_request(pod);
  EXPECT_EQ(r.milli_cpu, 1);
  EXPECT_EQ(r.memory, 1);
  EXPECT_EQ(r.scalar_value("example.com/x"), 1);
}

// Huge quantities: the exact 128-bit quantity sum is reduced to millicores, saturating at
// int64 instead of overflowing; node bookkeeping saturates the same way.
TEST(PodRequests, HugeQuantitiesSaturate) {
  model::Pod pod = PodBuilder("p").container(res({{"cpu", "9P"}})).container(res({{"cpu", "9P"}}));
  EXPECT_EQ(pod_resource(pod).milli_cpu, std::numeric_limits<int64_t>::max());
  Resource total = pod_resource(PodBuilder("a").container(res({{"cpu", "9P"}})));
  total.add(pod_resource(PodBuilder("b").container(res({{"cpu", "9P"}}))));
  EXPECT_EQ(total.milli_cpu, std::numeric_limits<int64_t>::max());
}

// SetMaxResource: a negative request counts as zero for NodeResourcesFit.
TEST(PodRequests, NegativeRequestClampsToZeroForFit) {
  model::Pod pod = PodBuilder("p").container(res({{"cpu", "-1"}}));
  EXPECT_EQ(pod_fit_request(pod).milli_cpu, 0);
}

// Only resources kube-scheduler tracks become scalars: extended, hugepages-*,
// kubernetes.io/-prefixed and attachable-volumes-*; bare unknown names are dropped.
TEST(ResourceNames, ScalarClassification) {
  EXPECT_TRUE(is_extended_resource_name("nvidia.com/gpu"));
  EXPECT_TRUE(is_extended_resource_name("example.com/foo"));
  EXPECT_FALSE(is_extended_resource_name("kubernetes.io/foo"));
  EXPECT_FALSE(is_extended_resource_name("requests.example.com/foo"));
  EXPECT_FALSE(is_extended_resource_name("cpu"));
  EXPECT_FALSE(is_extended_resource_name("hugepages-2Mi"));
  EXPECT_FALSE(is_extended_resource_name("Bad_Domain/x"));
  EXPECT_TRUE(is_scalar_resource_name("hugepages-1Gi"));
  EXPECT_TRUE(is_scalar_resource_name("attachable-volumes-aws-ebs"));
  EXPECT_TRUE(is_scalar_resource_name("kubernetes.io/batch-cpu"));
  EXPECT_FALSE(is_scalar_resource_name("foo"));

  Resource r;
  r.add(res({{"foo", "3"}, {"hugepages-2Mi", "4Mi"}, {"pods", "10"}}));
  EXPECT_EQ(r.scalar.count("foo"), 0u);
  EXPECT_EQ(r.scalar_value("hugepages-2Mi"), 4 * 1024 * 1024);
  EXPECT_EQ(r.allowed_pod_number, 10);
}

}  // namespace
}  // namespace hamisim::planner::framework
