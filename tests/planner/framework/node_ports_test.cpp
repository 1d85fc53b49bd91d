// NodePorts Filter.
// Reference: kubernetes.io/docs/concepts/configuration/overview/ ("When you bind a Pod to a
// hostPort, it limits the number of places the Pod can be scheduled, because each
// <hostIP, hostPort, protocol> combination must be unique. If you don't specify the hostIP
// and protocol explicitly, Kubernetes will use 0.0.0.0 as the default hostIP and TCP as the
// default protocol.") and the sidecar page (sidecars run for the pod's life).

#include "planner/framework/plugins/node_ports.h"

#include <gtest/gtest.h>

#include "framework_test_support.h"

namespace hamisim::planner::framework {
namespace {

using testing::add_node;
using testing::add_pod;
using testing::NodeBuilder;
using testing::PodBuilder;
using testing::run_plugin;

bool fits(const model::Pod& existing, const model::Pod& incoming) {
  ClusterSnapshot s;
  EXPECT_TRUE(s.add_node(NodeBuilder("n")).ok());
  EXPECT_TRUE(s.add_pod(existing, "n").ok());
  return run_plugin(NodePorts(), incoming, s, "n").ok();
}

// Same port, protocol and IP clash, with the kube-scheduler reason.
TEST(NodePorts, SameHostPortConflicts) {
  ClusterSnapshot s;
  add_node(s, NodeBuilder("n"));
  add_pod(s, PodBuilder("old").host_port(8080), "n");
  auto st = run_plugin(NodePorts(), PodBuilder("p").host_port(8080), s, "n");
  EXPECT_EQ(st.code, FilterCode::kUnschedulable);
  EXPECT_EQ(
      st.reasons,
      (std::vector<std::string>{"node(s) didn't have free ports for the requested pod ports"}));
}

// A different protocol on the same port does not clash; empty protocol means TCP.
TEST(NodePorts, ProtocolMatters) {
  EXPECT_TRUE(fits(PodBuilder("old").host_port(53, "UDP"), PodBuilder("p").host_port(53, "TCP")));
  EXPECT_FALSE(fits(PodBuilder("old").host_port(53, ""), PodBuilder("p").host_port(53, "TCP")));
}

// 0.0.0.0 (or an empty hostIP) clashes with every IP in both directions; two specific IPs
// do not clash with each other.
TEST(NodePorts, WildcardHostIpConflictsWithEveryIp) {
  EXPECT_FALSE(fits(PodBuilder("old").host_port(80, "TCP", "10.0.0.1"),
                    PodBuilder("p").host_port(80, "TCP", "0.0.0.0")));
  EXPECT_FALSE(fits(PodBuilder("old").host_port(80, "TCP", "10.0.0.1"),
                    PodBuilder("p").host_port(80, "TCP", "")));
  EXPECT_FALSE(fits(PodBuilder("old").host_port(80, "TCP", ""),
                    PodBuilder("p").host_port(80, "TCP", "10.0.0.1")));
  EXPECT_TRUE(fits(PodBuilder("old").host_port(80, "TCP", "10.0.0.1"),
                   PodBuilder("p").host_port(80, "TCP", "10.0.0.2")));
  EXPECT_FALSE(fits(PodBuilder("old").host_port(80, "TCP", "10.0.0.1"),
                    PodBuilder("p").host_port(80, "TCP", "10.0.0.1")));
}

// Only hostPort counts: containerPort alone takes nothing on the node.
TEST(NodePorts, ContainerPortWithoutHostPortIsFree) {
  model::Pod old = PodBuilder("old").container({});
  old.spec.containers[0].ports.push_back({8080, 0, "TCP", ""});
  EXPECT_TRUE(fits(old, PodBuilder("p").host_port(8080)));
}

// Sidecar init containers hold their host ports; regular init containers do not.
TEST(NodePorts, SidecarHostPortsCountRegularInitDoNot) {
  model::Pod with_sidecar = PodBuilder("old").init_container({}, /*sidecar=*/true);
  with_sidecar.spec.init_containers[0].ports.push_back({9090, 9090, "TCP", ""});
  EXPECT_FALSE(fits(with_sidecar, PodBuilder("p").host_port(9090)));
  model::Pod with_init = PodBuilder("old").init_container({});
  with_init.spec.init_containers[0].ports.push_back({9090, 9090, "TCP", ""});
  EXPECT_TRUE(fits(with_init, PodBuilder("p").host_port(9090)));
}

}  // namespace
}  // namespace hamisim::planner::framework
