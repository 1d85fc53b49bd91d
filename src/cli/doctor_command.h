#pragma once
// `hamisim doctor`: checks the scheduler configurations of a deployment (spec §8).

#include <string>
#include <vector>

#include "cli/device_flags.h"

namespace CLI {
class App;
}

namespace hamisim::cli {

struct DoctorOptions {
  std::string scheduler_config_path;       // the KubeSchedulerConfiguration CA loads
  std::string kube_scheduler_config_path;  // kube-scheduler's, for the live extender
  // At least one of the two above. The NetworkPolicy in front of the simulation service:
  // does it admit Cluster Autoscaler's pods as the CA chart labels them?
  std::string network_policy_path;
  std::string ca_cloud_provider = "aws";  // the CA chart's cloudProvider (its pod labels)
  std::string ca_pod_labels;              // k=v,k2=v2: CA's pods' labels instead of the chart's
  // Cluster dumps (Nodes and DRA objects) to check HAMi's DRA mode in.
  std::vector<std::string> cluster_paths;
  bool strict = false;  // --strict: unknown fields in --cluster's objects are errors
  DeviceFlags device;   // --device-config-file, --enable-ascend, --enable-iluvatar
  std::string max_nodegroup_binpacking_duration = "10s";  // CA's flag of the same name
  bool offline = false;
  std::string output = "table";  // table | json
};

void add_doctor_options(CLI::App& app, DoctorOptions& options);

// Exit code: 0 when nothing is wrong, 1 when any error or warning finding, 2 on bad input.
int run_doctor(const DoctorOptions& options);

}  // namespace hamisim::cli
