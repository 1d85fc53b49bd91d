#pragma once
// Builders of extender request bodies for tests: Nodes with HAMi registrations, Pods with
// device limits, ExtenderArgs with SimulatedPods. JSON is produced with the project's writer
// so that every annotation value is escaped exactly as a Go client would.

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace hamisim::testing {

using Annotations = std::map<std::string, std::string>;
using Limits = std::vector<std::pair<std::string, std::string>>;  // resource -> quantity text

// The design document's mock devices: `n` K80 entries, `count` shares, `devmem` MiB each.
std::string k80_register(int n = 2, int count = 10, int devmem = 11441);

std::string node_json(const std::string& name, const Annotations& annotations,
                      const Annotations& labels = {});
std::string pod_json(const std::string& name, const Limits& limits,
                     const Annotations& annotations = {}, const std::string& ns = "default");

struct ArgsSpec {
  std::string pod;                 // raw JSON, empty = omit the key
  std::vector<std::string> nodes;  // raw Node JSON items
  bool nodes_null = false;         // "Nodes": null
  bool omit_nodes = false;
  std::vector<std::string> node_names;
  bool with_node_names = false;
  std::map<std::string, std::vector<std::string>> simulated_pods;  // node -> raw Pod JSON
};
std::string args_json(const ArgsSpec& spec);

// A bare pod carrying allocation annotations, as SimulatedPods entries are.
std::string placed_pod_json(const std::string& name, const Annotations& annotations);

}  // namespace hamisim::testing
