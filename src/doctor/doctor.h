#pragma once
// `hamisim doctor` (spec §8): checks a KubeSchedulerConfiguration meant for Cluster Autoscaler
// (and optionally the one kube-scheduler runs the live extender with) against every deployment
// constraint of the design, and, unless offline, probes each HAMi extender over the wire with
// the same client CA uses.
//
// Each finding says how bad it is, which field it is about, why it matters and how to fix it.
// The checks are pure functions of the configuration; only probe_extender does I/O.

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "device/registry.h"
#include "dra/objects.h"
#include "extender/extender_facts.h"
#include "extender/scheduler_config.h"

namespace hamisim::doctor {

enum class Severity { kError, kWarning, kInfo };
std::string_view to_string(Severity s);  // "error" | "warning" | "info"

// Which scheduler reads the configuration: it decides what the right values are.
enum class ConfigRole { kClusterAutoscaler, kKubeScheduler };
std::string_view to_string(ConfigRole r);  // "cluster-autoscaler" | "kube-scheduler"

struct Finding {
  Severity severity = Severity::kInfo;
  std::string check;  // stable identifier, e.g. "node-cache-capable" (docs/doctor.md lists all)
  ConfigRole role = ConfigRole::kClusterAutoscaler;
  std::string file;     // the configuration file
  std::string field;    // path inside it, e.g. "extenders[0].nodeCacheCapable"; may be empty
  std::string message;  // what was found
  std::string why;      // why it matters
  std::string fix;      // what to change; empty for informational findings
};

// The routes of `hamisim serve` the extender verbs must reach.
inline constexpr std::string_view kSimulationFilterPath = "/filter-simulation";
inline constexpr std::string_view kLiveFilterPath = "/filter";
inline constexpr std::string_view kLiveBindPath = "/bind";

// One vendor's managed resources (count, memory, cores, ...).
struct VendorResources {
  std::string vendor;
  std::vector<std::string> names;
};

struct CheckOptions {
  // The HAMi resource names the extender must manage (hami_resource_names(registry)).
  std::vector<std::string> hami_resources;
  // The same names grouped by vendor (vendor_resources(registry)). When set, a vendor other
  // than NVIDIA that the extender does not list at all is reported as not managed (info:
  // the cluster may not run it) instead of as an error; a vendor listed in part is an error.
  std::vector<VendorResources> vendors;
  // Cluster Autoscaler's --max-nodegroup-binpacking-duration: every extender call of a node
  // group's estimate happens inside it.
  std::chrono::nanoseconds ca_binpacking_budget = std::chrono::seconds(10);
  // Below this an httpTimeout is too short for a TLS handshake plus a Fit over a few nodes.
  std::chrono::nanoseconds min_timeout = std::chrono::seconds(1);
  // kube-scheduler schedules one pod at a time: a filter call this long stalls every pod.
  std::chrono::nanoseconds max_live_timeout = std::chrono::seconds(30);
};

// Every resource name the registry's backends read from container resources (count, memory,
// memory percentage, cores, and NVIDIA's priority), in registry order, each once.
std::vector<std::string> hami_resource_names(const device::DeviceRegistry& registry);
std::vector<VendorResources> vendor_resources(const device::DeviceRegistry& registry);

// True for an extender that manages at least one of `hami_resources`.
bool is_hami_extender(const extender::ExtenderConfig& extender,
                      const std::vector<std::string>& hami_resources);

// The offline checks of one configuration. Findings come in extender order, then check order.
std::vector<Finding> check_config(const extender::SchedulerConfig& config, ConfigRole role,
                                  const CheckOptions& options);

// The labels of Cluster Autoscaler's pods that a NetworkPolicy must admit.
struct CaPodLabels {
  // The CA Helm chart's cloudProvider: the chart labels its pods app.kubernetes.io/name:
  // <cloudProvider>-cluster-autoscaler (cut to 63 characters, a trailing '-' dropped) and
  // app.kubernetes.io/instance: <release>, which may be anything.
  std::string cloud_provider = "aws";
  // Labels the pods really carry, instead of the chart's (a nameOverride, CA's example
  // manifests' `app: cluster-autoscaler`, a deployment of one's own); empty: the chart's.
  std::map<std::string, std::string> labels;
};

// The app.kubernetes.io/name the CA chart gives its pods for a cloudProvider (its _helpers.tpl
// `cluster-autoscaler.name` without a nameOverride).
std::string ca_chart_name(std::string_view cloud_provider);

// The NetworkPolicy in front of the simulation service (YAML or JSON text of one NetworkPolicy,
// `source` names it): some ingress rule's podSelector must match the labels of CA's pods. Info
// naming the peer and the label that admits them; an error when none does, naming the labels
// that were looked for and, when a peer admits only labels the chart never sets (`app:
// cluster-autoscaler`), saying so, since that is what makes such a policy look right. Info too
// when no rule selects pods by label.
std::vector<Finding> check_network_policy(std::string_view text, const std::string& source,
                                          const CaPodLabels& ca = {});

// ---- live probe ----

// What a probe saw, for the report.
struct ProbeResult {
  ConfigRole role = ConfigRole::kClusterAutoscaler;
  std::string file;
  size_t extender_index = 0;
  std::string url;         // the filter URL called
  std::string tls;         // extender::to_string(TlsVerification)
  bool reachable = false;  // an HTTP answer came back (any status)
  bool ok = false;         // 200, decoded, no Error, and (CA) the probe node passed
  double latency_ms = 0;   // the whole exchange, connection set-up included
  // "passed" (the probe node was let through), "rejected" (it was not; `reason` says why),
  // "answered" (a live extender answered; its verdict on an unknown node means nothing),
  // "error" (no usable answer; `reason` says why), "skipped" (no client could be built).
  std::string answer;
  std::string reason;
};

struct ProbeOutcome {
  ProbeResult result;
  std::vector<Finding> findings;
};

// The probe template node: one healthy NVIDIA device registered through
// hami.io/node-nvidia-register (10 shares of 16 GiB), as a Node JSON object whose capacity and
// allocatable advertise 10 `gpu_resource`, as HAMi's device plugin does.
std::string probe_node_json(std::string_view name, std::string_view gpu_resource);
// The probe pod: one container asking 1 `count` resource and 100 MiB of `memory` resource.
std::string probe_pod_json(const device::ResourceNames& names);

// Calls the extender's filterVerb with the probe pod and node, with the extender's own TLS
// settings and httpTimeout, as the scheduler of `role` would.
ProbeOutcome probe_extender(const extender::SchedulerConfig& config, size_t index, ConfigRole role,
                            const device::ResourceNames& names, const CheckOptions& options);

// ---- the whole run ----

struct ConfigSummary {
  ConfigRole role = ConfigRole::kClusterAutoscaler;
  std::string file;
  struct Extender {
    size_t index = 0;
    std::string url_prefix;
    bool hami = false;
  };
  std::vector<Extender> extenders;
};

// A cluster dump (`source` names it) under DRA: a node in both of HAMi's modes (error), both
// modes in one cluster (warning), DeviceClass selectors outside hamisim's CEL subset (error),
// and the feature gates the published devices need (info). Checks dra-mixed-modes,
// dra-class-selector, dra-feature-gates (docs/doctor.md).
std::vector<Finding> check_dra_cluster(const std::string& source,
                                       const std::vector<model::Node>& nodes,
                                       const dra::Objects& objects);

struct Report {
  bool offline = false;
  std::vector<ConfigSummary> configs;
  std::vector<Finding> findings;
  std::vector<ProbeResult> probes;
  std::vector<std::string> network_policies;  // the files check_network_policy read
  std::vector<std::string> clusters;          // the cluster dumps check_dra_cluster read

  size_t count(Severity s) const;
  // Nothing is wrong: no error and no warning.
  bool ok() const { return count(Severity::kError) == 0 && count(Severity::kWarning) == 0; }
};

struct DoctorInput {
  const extender::SchedulerConfig* ca = nullptr;              // required
  const extender::SchedulerConfig* kube_scheduler = nullptr;  // optional
  bool offline = false;
  device::ResourceNames probe_resources;  // names the probe pod asks for
  CheckOptions options;
  struct NetworkPolicy {
    std::string source;
    std::string text;
  };
  std::vector<NetworkPolicy> network_policies;  // optional
  struct Cluster {
    std::string source;
    std::vector<model::Node> nodes;
    dra::Objects dra;
  };
  std::vector<Cluster> clusters;  // optional
  CaPodLabels ca_pod_labels;
};

Report run_doctor(const DoctorInput& input);

// Output. The JSON schema is documented in docs/doctor.md (schemaVersion 1).
std::string render_table(const Report& report);
std::string render_json(const Report& report);

// 0 when nothing is wrong, 1 when any error or warning finding.
int exit_code(const Report& report);

}  // namespace hamisim::doctor
