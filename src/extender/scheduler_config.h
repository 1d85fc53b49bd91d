#pragma once
// KubeSchedulerConfiguration v1 as Cluster Autoscaler loads it with --scheduler-config-file
// (reference ca-scale-up.md §3.1, §5): the profiles, NodeResourcesFit's ignore lists and the
// extenders, decoded strictly (unknown or duplicate keys are errors, as kube-scheduler's strict
// decoder reports them), defaulted as v1 defaulting does, and validated with the
// kube-scheduler rules that matter here. JSON input works too: JSON is YAML.
//
// Every error names the file, the field path and the problem:
//   ca-config.yaml: extenders[0].httpTimeout: "30 seconds" is not a duration

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.h"

namespace hamisim::extender {

inline constexpr std::string_view kSchedulerConfigApiVersion = "kubescheduler.config.k8s.io/v1";
inline constexpr std::string_view kSchedulerConfigKind = "KubeSchedulerConfiguration";
// kube-scheduler's DefaultExtenderTimeout, used when httpTimeout is absent or 0.
inline constexpr std::chrono::milliseconds kDefaultExtenderTimeout{5000};

// The `tlsConfig` of an extender. The *Data fields hold the decoded bytes (base64 in the file).
struct ExtenderTlsConfig {
  bool insecure = false;
  std::string server_name;
  std::string cert_file, key_file, ca_file;
  std::string cert_data, key_data, ca_data;
};

struct ManagedResource {
  std::string name;
  bool ignored_by_scheduler = false;
};

// One entry of `extenders[]`, every field of the v1 `Extender` type.
struct ExtenderConfig {
  std::string url_prefix;
  std::string filter_verb;
  std::string preempt_verb;
  std::string prioritize_verb;
  int64_t weight = 0;
  std::string bind_verb;
  bool enable_https = false;
  std::optional<ExtenderTlsConfig> tls_config;
  std::chrono::nanoseconds http_timeout{0};  // as written; 0 when absent
  bool node_cache_capable = false;
  std::vector<ManagedResource> managed_resources;
  bool ignorable = false;

  // kube-scheduler's Name(): the urlPrefix, used in every error message about the extender.
  const std::string& name() const { return url_prefix; }
  bool is_filter() const { return !filter_verb.empty(); }
  // httpTimeout, or 5 s when it is 0 (NewHTTPExtender's defaulting).
  std::chrono::nanoseconds effective_timeout() const;
};

// NodeResourcesFitArgs, the parts that matter to a simulator's Filter.
struct NodeResourcesFitArgs {
  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_resource_groups;
};

struct SchedulerProfile {
  std::string scheduler_name;  // "default-scheduler" after defaulting a single unnamed profile
  // Names of the pluginConfig entries, in file order, after defaulting.
  std::vector<std::string> plugin_config_names;
  // The NodeResourcesFit pluginConfig entry. v1 defaulting adds one with empty lists for an
  // enabled plugin, so it is absent only when the plugin is disabled.
  std::optional<NodeResourcesFitArgs> node_resources_fit;
  bool node_resources_fit_disabled = false;
};

struct SchedulerConfig {
  std::string source;  // the file name (or caller-given name) that prefixes error messages
  std::vector<SchedulerProfile> profiles;
  std::vector<ExtenderConfig> extenders;
};

struct LoadOptions {
  // Cluster Autoscaler's NewHandle refuses any profile count other than one ("expected one
  // scheduler profile only"). Off for a kube-scheduler configuration (doctor compares both).
  bool require_single_profile = true;
  // The flag the file was given to, named in errors about its shape.
  std::string flag = "--scheduler-config";
};

// Parses and validates the text. `source` prefixes every error (normally the file path).
Result<SchedulerConfig> parse_scheduler_config(std::string_view text, std::string_view source,
                                               const LoadOptions& options = {});
// Reads `path` as model::read_document does (a ConfigMap's scheduler-config.yaml or config.yaml
// key, a List of one, `-` for stdin, PATH:KEY) and parses it; errors start with `path`.
Result<SchedulerConfig> load_scheduler_config(const std::string& path,
                                              const LoadOptions& options = {});

// The NodeResourcesFit args the simulator's Filter must use for profiles[0], derived exactly
// as CA-exp's configureIgnoredExtenderResources (= kube-scheduler buildExtenders) does: when
// any managedResources entry of any extender has ignoredByScheduler: true, the collected names
// (config order) REPLACE the profile's ignoredResources; ignoredResourceGroups stay. A disabled
// NodeResourcesFit then is an error ("can't find NodeResourcesFitArgs in plugin config").
Result<NodeResourcesFitArgs> effective_node_resources_fit(const SchedulerConfig& config);

// CA's GPU resource names after CA-exp's registerExtenderManagedResources: the built-in names
// first, then every managed resource of every extender (whatever ignoredByScheduler says).
// Unlike CA-exp's global slice, names appear once.
std::vector<std::string> gpu_resource_names(const SchedulerConfig& config);

// kube-scheduler's IsExtendedResourceName (a qualified, domain-prefixed name outside
// kubernetes.io/ and not "requests.*").
bool is_extended_resource_name(std::string_view name);

}  // namespace hamisim::extender
