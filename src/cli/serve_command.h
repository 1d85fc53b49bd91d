#pragma once
// `hamisim serve`: the extender service.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/device_flags.h"

namespace CLI {
class App;
}

namespace hamisim::cli {

// HAMi's flags that were accepted but do nothing here (cli/hami_flags.h): logged once each at
// start-up, after the log format is set up, with the last value given.
struct FlagNotes {
  enum Level { kInfo, kWarning };
  struct Note {
    std::string flag, value;
    Level level = kInfo;
    std::string why;
  };
  // Records (or replaces) the note of `flag`; the notes keep the order flags first appeared in.
  void set(std::string_view flag, std::string_view value, Level level, std::string_view why);
  void erase(std::string_view flag);
  std::vector<Note> notes;
};

struct ServeOptions {
  std::string listen = "127.0.0.1:8443";
  // A second address serving the same routes (HAMi's --extender-bind); empty: none.
  std::string extender_listen;
  std::string metrics_listen = "127.0.0.1:9395";
  bool insecure_http = false;
  std::string tls_cert, tls_key, client_ca;
  std::vector<std::string> allow_live_clients, allow_simulation_clients, allow_webhook_clients;
  size_t max_body_bytes = 4 << 20;
  int max_inflight_live = 256;
  int max_inflight_simulation = 64;
  int64_t max_inflight_simulation_bytes = int64_t(64) << 20;
  int max_inflight_webhook = 64;
  int max_inflight_plan = 4;    // /v1/plan and /v1/estimate computing or queued
  int plan_threads = 1;         // threads that compute them
  int simulation_threads = 0;   // threads that compute /filter-simulation (0: one per core)
  int compute_nice = 10;        // how much lower those threads' priority is
  double max_plan_time_s = 30;  // the longest one of them may compute
  int max_connections = 10000;  // main listener
  int max_metrics_connections = 64;
  double header_timeout_s = 10, body_timeout_s = 30, idle_timeout_s = 90;
  double shutdown_grace_s = 25;
  int threads = 0;
  std::string log_format = "text";
  std::string log_level = "info";
  bool legacy_metrics = false;  // HAMi --legacy-metrics
  DeviceFlags device;           // --device-config-file, --enable-ascend, --enable-iluvatar
  std::string device_profiles_path;
  std::string gpu_policy = "spread";
  std::string node_policy = "binpack";
  std::string legacy_nodes_filter = "simulate";  // simulate | reject
  std::string readyz_scope = "all";

  // Live path (spec §4.4, §4.5): the cluster source and HAMi's scheduler flags.
  std::string kubeconfig;
  std::string kube_context;
  bool in_cluster = false;
  bool live = false;  // --live: client-go's default loading order
  std::vector<std::string> cluster_snapshot;
  std::string snapshot_out;
  bool snapshot_device_plugin = false;
  double kube_qps = 300;
  int kube_burst = 600;
  std::string scheduler_name;
  bool force_overwrite_default_scheduler = true;
  std::string node_lock_timeout = "5m";
  std::string node_lock_retry_timeout = "28s";
  bool leader_elect = false;
  std::string leader_elect_resource_name;
  std::string leader_elect_resource_namespace = "kube-system";
  std::string leader_elect_identity;  // empty: the hostname, as HAMi (the pod's name)
  std::string profile_reconcile_interval = "5m";

  // HAMi's flags with no hamisim name of their own (cli/hami_flags.h).
  std::map<std::string, std::string> node_label_selector;  // --node-label-selector
  int kube_timeout_s = 0;  // --kube-timeout: seconds per API request; 0 keeps hamisim's bound
  int verbosity = 0;       // klog's -v: V(n) lines print when n <= verbosity
  FlagNotes flag_notes;    // HAMi's flags accepted without effect
  // Started as HAMi's `scheduler`: the live path from the default client configuration, and
  // log lines named as HAMi's (`component`).
  bool hami_scheduler = false;
  std::string component = "hamisim serve";
};

void add_serve_options(CLI::App& app, ServeOptions& options);
int run_serve(const ServeOptions& options);

}  // namespace hamisim::cli
