#pragma once
// `hamisim plan`: which node group Cluster Autoscaler should grow for the pending pods of a
// cluster snapshot, by how many nodes, and why (spec §6).

#include <string>
#include <string_view>
#include <vector>

#include "cli/cluster_list.h"
#include "cli/device_flags.h"
#include "planner/scaleup/plan.h"

namespace CLI {
class App;
}

namespace hamisim::cli {

struct PlanOptions {
  std::vector<std::string> cluster_paths;
  ClusterSource live;  // --live, --kubeconfig, --context, --in-cluster: read the cluster itself
  std::string node_groups_path;
  std::string device_profiles_path;
  DeviceFlags device;  // --device-config-file, --enable-ascend, --enable-iluvatar
  std::string scheduler_config_path;
  std::string pods_path;
  std::string priority_config_path;
  std::string max_nodegroup_binpacking_duration = "10s";
  std::string max_binpacking_time = "5m";
  std::string output = "table";  // table | json | html
  planner::scaleup::PlannerOptions planner;
  bool compare_modes = false;        // --compare-modes (planner/modes)
  bool verbose = false;              // --verbose: full lists in the table
  bool strict = false;               // --strict: unknown fields in the objects read are errors
  std::vector<std::string> command;  // argv, for the HTML report's provenance
  std::string version;               // hamisim's version and revision, for the same
};

void add_plan_options(CLI::App& app, PlanOptions& options);

// Where the bundled example lives (examples/plan), for the no-argument run; `argv0` finds
// this program where /proc is not mounted.
Result<std::string> bundled_example_dir(std::string_view argv0);

// Exit code: 0 when a plan was made (including "no scale-up needed"), 2 on bad input, 1 on
// an internal failure.
int run_plan(PlanOptions options);

}  // namespace hamisim::cli
