#include "extender/scheduler_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include "extender/extender_url.h"
#include "extender/yaml11_fields.h"
#include "go/duration.h"
#include "model/decode.h"
#include "model/input.h"
#include "model/yaml_check.h"

namespace hamisim::extender {
namespace {

using yaml11::child;
using yaml11::describe;
using yaml11::Field;
using yaml11::field_error;
using yaml11::for_each_field;
using yaml11::index;
using yaml11::Kind;
using yaml11::kind_of;
using yaml11::read_base64;
using yaml11::read_bool;
using yaml11::read_duration;
using yaml11::read_int64;
using yaml11::read_string;
using yaml11::read_string_list;

// ---- qualified names (k8s.io/apimachinery validation.IsQualifiedName) ------------------

bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (label.empty()) return false;
    for (size_t i = 0; i < label.size(); ++i) {
      const char c = label[i];
      const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
      if (!alnum && !(c == '-' && i != 0 && i + 1 != label.size())) return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_qualified_name_part(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

// Empty when valid, otherwise why not.
std::string qualified_name_problem(std::string_view name) {
  const size_t slash = name.find('/');
  std::string_view local = name;
  if (slash != std::string_view::npos) {
    if (name.find('/', slash + 1) != std::string_view::npos) {
      return "a qualified name must have at most one '/'";
    }
    std::string_view prefix = name.substr(0, slash);
    local = name.substr(slash + 1);
    if (prefix.empty()) return "prefix part must be non-empty";
    if (!is_dns1123_subdomain(prefix)) {
      return "prefix part must be a lowercase DNS subdomain (RFC 1123)";
    }
  }
  if (local.empty()) return "name part must be non-empty";
  if (local.size() > 63) return "name part must be no more than 63 characters";
  if (!is_qualified_name_part(local)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
           "and end with an alphanumeric character";
  }
  return {};
}

// ---- decoding ------------------------------------------------------------------------

Status decode_tls(const YAML::Node& n, const std::string& path, ExtenderTlsConfig& tls) {
  return for_each_field(
      n, path,
      [&](const std::string& key, const YAML::Node& v, const std::string& p) -> Result<Field> {
        Status s = ok_status();
        if (key == "insecure") {
          s = read_bool(v, p, tls.insecure);
        } else if (key == "serverName") {
          s = read_string(v, p, tls.server_name);
        } else if (key == "certFile") {
          s = read_string(v, p, tls.cert_file);
        } else if (key == "keyFile") {
          s = read_string(v, p, tls.key_file);
        } else if (key == "caFile") {
          s = read_string(v, p, tls.ca_file);
        } else if (key == "certData") {
          s = read_base64(v, p, tls.cert_data);
        } else if (key == "keyData") {
          s = read_base64(v, p, tls.key_data);
        } else if (key == "caData") {
          s = read_base64(v, p, tls.ca_data);
        } else {
          return Field::kUnknown;
        }
        if (!s) return s.error();
        return Field::kHandled;
      });
}

Status decode_managed_resources(const YAML::Node& n, const std::string& path,
                                std::vector<ManagedResource>& out) {
  if (kind_of(n) == Kind::kNull) return ok_status();
  if (kind_of(n) != Kind::kSeq) return field_error(path, "expected a list, got " + describe(n));
  out.clear();
  for (size_t i = 0; i < n.size(); ++i) {
    ManagedResource r;
    const std::string item = index(path, i);
    if (kind_of(n[i]) != Kind::kMap) {
      return field_error(item,
                         "expected a mapping {name, ignoredByScheduler}, got " + describe(n[i]));
    }
    Status s = for_each_field(
        n[i], item,
        [&](const std::string& key, const YAML::Node& v, const std::string& p) -> Result<Field> {
          Status st = ok_status();
          if (key == "name") {
            st = read_string(v, p, r.name);
          } else if (key == "ignoredByScheduler") {
            st = read_bool(v, p, r.ignored_by_scheduler);
          } else {
            return Field::kUnknown;
          }
          if (!st) return st.error();
          return Field::kHandled;
        });
    if (!s) return s;
    out.push_back(std::move(r));
  }
  return ok_status();
}

Status decode_extender(const YAML::Node& n, const std::string& path, ExtenderConfig& e) {
  if (kind_of(n) != Kind::kMap) return field_error(path, "expected a mapping, got " + describe(n));
  return for_each_field(
      n, path,
      [&](const std::string& key, const YAML::Node& v, const std::string& p) -> Result<Field> {
        Status s = ok_status();
        if (key == "urlPrefix") {
          s = read_string(v, p, e.url_prefix);
        } else if (key == "filterVerb") {
          s = read_string(v, p, e.filter_verb);
        } else if (key == "preemptVerb") {
          s = read_string(v, p, e.preempt_verb);
        } else if (key == "prioritizeVerb") {
          s = read_string(v, p, e.prioritize_verb);
        } else if (key == "weight") {
          s = read_int64(v, p, e.weight);
        } else if (key == "bindVerb") {
          s = read_string(v, p, e.bind_verb);
        } else if (key == "enableHTTPS") {
          s = read_bool(v, p, e.enable_https);
        } else if (key == "tlsConfig") {
          if (kind_of(v) != Kind::kNull) {
            e.tls_config.emplace();
            s = decode_tls(v, p, *e.tls_config);
          }
        } else if (key == "httpTimeout") {
          s = read_duration(v, p, e.http_timeout);
        } else if (key == "nodeCacheCapable") {
          s = read_bool(v, p, e.node_cache_capable);
        } else if (key == "managedResources") {
          s = decode_managed_resources(v, p, e.managed_resources);
        } else if (key == "ignorable") {
          s = read_bool(v, p, e.ignorable);
        } else {
          return Field::kUnknown;
        }
        if (!s) return s.error();
        return Field::kHandled;
      });
}

Status decode_node_resources_fit_args(const YAML::Node& n, const std::string& path,
                                      NodeResourcesFitArgs& args) {
  if (kind_of(n) != Kind::kNull && kind_of(n) != Kind::kMap) {
    return field_error(path, "want args to be of type NodeResourcesFitArgs, got " + describe(n));
  }
  return for_each_field(
      n, path,
      [&](const std::string& key, const YAML::Node& v, const std::string& p) -> Result<Field> {
        Status s = ok_status();
        if (key == "ignoredResources") {
          s = read_string_list(v, p, args.ignored_resources);
        } else if (key == "ignoredResourceGroups") {
          s = read_string_list(v, p, args.ignored_resource_groups);
        } else if (key == "scoringStrategy" || key == "scoreAllResources" || key == "apiVersion") {
          // Scoring only; the simulator runs Filter. apiVersion is the args' own type meta.
        } else if (key == "kind") {
          std::string kind;
          s = read_string(v, p, kind);
          if (s && !kind.empty() && kind != "NodeResourcesFitArgs") {
            return field_error(p, "want args to be of type NodeResourcesFitArgs, got " + kind);
          }
        } else {
          return Field::kUnknown;
        }
        if (!s) return s.error();
        return Field::kHandled;
      });
}

struct PluginSets {
  std::set<std::string> enabled;  // any extension point
  bool node_resources_fit_disabled_in_multipoint = false;
};

Status decode_plugins(const YAML::Node& n, const std::string& path, PluginSets& sets) {
  static const std::set<std::string> kPoints = {
      "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",  "score",
      "reserve",    "permit",    "preBind",   "bind",   "postBind",   "multiPoint"};
  return for_each_field(
      n, path,
      [&](const std::string& point, const YAML::Node& v, const std::string& p) -> Result<Field> {
        if (!kPoints.count(point)) return Field::kUnknown;
        Status s = for_each_field(
            v, p,
            [&](const std::string& which, const YAML::Node& list,
                const std::string& lp) -> Result<Field> {
              if (which != "enabled" && which != "disabled") return Field::kUnknown;
              if (kind_of(list) == Kind::kNull) return Field::kHandled;
              if (kind_of(list) != Kind::kSeq) {
                return field_error(lp, "expected a list of plugins, got " + describe(list));
              }
              for (size_t i = 0; i < list.size(); ++i) {
                std::string name;
                int64_t weight = 0;
                Status ps = for_each_field(list[i], index(lp, i),
                                           [&](const std::string& k, const YAML::Node& pv,
                                               const std::string& pp) -> Result<Field> {
                                             Status st = ok_status();
                                             if (k == "name") {
                                               st = read_string(pv, pp, name);
                                             } else if (k == "weight") {
                                               st = read_int64(pv, pp, weight);
                                             } else {
                                               return Field::kUnknown;
                                             }
                                             if (!st) return st.error();
                                             return Field::kHandled;
                                           });
                if (!ps) return ps.error();
                if (which == "enabled") {
                  sets.enabled.insert(name);
                } else if (point == "multiPoint" && (name == "NodeResourcesFit" || name == "*")) {
                  sets.node_resources_fit_disabled_in_multipoint = true;
                }
              }
              return Field::kHandled;
            });
        if (!s) return s.error();
        return Field::kHandled;
      });
}

Status decode_profile(const YAML::Node& n, const std::string& path, SchedulerProfile& profile,
                      bool& name_set, std::vector<std::string>& problems) {
  if (kind_of(n) != Kind::kMap) return field_error(path, "expected a mapping, got " + describe(n));
  PluginSets plugins;
  std::vector<std::pair<std::string, YAML::Node>> configs;
  Status s = for_each_field(
      n, path,
      [&](const std::string& key, const YAML::Node& v, const std::string& p) -> Result<Field> {
        Status st = ok_status();
        if (key == "schedulerName") {
          name_set = kind_of(v) != Kind::kNull;
          st = read_string(v, p, profile.scheduler_name);
        } else if (key == "percentageOfNodesToScore") {
          // Ignored by Cluster Autoscaler.
        } else if (key == "plugins") {
          st = decode_plugins(v, p, plugins);
        } else if (key == "pluginConfig") {
          if (kind_of(v) == Kind::kNull) return Field::kHandled;
          if (kind_of(v) != Kind::kSeq)
            return field_error(p, "expected a list, got " + describe(v));
          for (size_t i = 0; i < v.size(); ++i) {
            const std::string item = index(p, i);
            std::string name;
            YAML::Node args;
            Status ps = for_each_field(v[i], item,
                                       [&](const std::string& k, const YAML::Node& pv,
                                           const std::string& pp) -> Result<Field> {
                                         if (k == "name") {
                                           if (Status r = read_string(pv, pp, name); !r)
                                             return r.error();
                                         } else if (k == "args") {
                                           args = pv;
                                         } else {
                                           return Field::kUnknown;
                                         }
                                         return Field::kHandled;
                                       });
            if (!ps) return ps.error();
            if (kind_of(v[i]) != Kind::kMap) {
              return field_error(item, "expected a mapping {name, args}, got " + describe(v[i]));
            }
            if (name.empty()) {
              problems.push_back(child(item, "name") + ": Required value");
              continue;
            }
            if (std::find(profile.plugin_config_names.begin(), profile.plugin_config_names.end(),
                          name) != profile.plugin_config_names.end()) {
              problems.push_back(child(item, "name") + ": Duplicate value: \"" + name + "\"");
              continue;
            }
            profile.plugin_config_names.push_back(name);
            if (name == "NodeResourcesFit") {
              NodeResourcesFitArgs fit;
              if (Status r = decode_node_resources_fit_args(args, child(item, "args"), fit); !r)
                return r.error();
              for (size_t j = 0; j < fit.ignored_resources.size(); ++j) {
                if (auto why = qualified_name_problem(fit.ignored_resources[j]); !why.empty()) {
                  problems.push_back(index(child(item, "args.ignoredResources"), j) + ": \"" +
                                     fit.ignored_resources[j] + "\": " + why);
                }
              }
              for (size_t j = 0; j < fit.ignored_resource_groups.size(); ++j) {
                const std::string& g = fit.ignored_resource_groups[j];
                const std::string gp = index(child(item, "args.ignoredResourceGroups"), j);
                if (g.find('/') != std::string::npos) {
                  problems.push_back(gp + ": \"" + g + "\": resource group name can't contain '/'");
                } else if (auto why = qualified_name_problem(g); !why.empty()) {
                  problems.push_back(gp + ": \"" + g + "\": " + why);
                }
              }
              profile.node_resources_fit = std::move(fit);
            }
          }
        } else {
          return Field::kUnknown;
        }
        if (!st) return st.error();
        return Field::kHandled;
      });
  if (!s) return s;
  // v1 defaulting appends default args for every enabled plugin. NodeResourcesFit is in the
  // default multiPoint set, so it is missing only when disabled there and not re-enabled.
  profile.node_resources_fit_disabled = plugins.node_resources_fit_disabled_in_multipoint &&
                                        !plugins.enabled.count("NodeResourcesFit");
  if (!profile.node_resources_fit && !profile.node_resources_fit_disabled) {
    profile.node_resources_fit.emplace();
    profile.plugin_config_names.push_back("NodeResourcesFit");
  }
  return ok_status();
}

void validate_extenders(const SchedulerConfig& config, std::vector<std::string>& problems) {
  int binders = 0;
  std::set<std::string> managed;
  for (size_t i = 0; i < config.extenders.size(); ++i) {
    const ExtenderConfig& e = config.extenders[i];
    const std::string path = index("extenders", i);
    if (e.url_prefix.empty()) {
      problems.push_back(path + ".urlPrefix: Required value");
    } else if (auto url = parse_extender_url(e.url_prefix); !url) {
      problems.push_back(path + ".urlPrefix: " + url.error().message);
    }
    if (!e.prioritize_verb.empty() && e.weight <= 0) {
      problems.push_back(path + ".weight: " + std::to_string(e.weight) +
                         ": must have a positive weight applied to it");
    }
    if (!e.bind_verb.empty()) ++binders;
    if (e.http_timeout.count() < 0) {
      problems.push_back(path + ".httpTimeout: \"" + go::format_duration(e.http_timeout) +
                         "\" must not be negative");
    }
    for (size_t j = 0; j < e.managed_resources.size(); ++j) {
      const std::string& name = e.managed_resources[j].name;
      const std::string mp = index(path + ".managedResources", j) + ".name";
      if (auto why = qualified_name_problem(name); !why.empty()) {
        problems.push_back(mp + ": \"" + name + "\": " + why);
      } else if (!is_extended_resource_name(name)) {
        problems.push_back(mp + ": \"" + name + "\": is an invalid extended resource name");
      }
      if (!managed.insert(name).second) {
        problems.push_back(mp + ": \"" + name + "\": duplicate extender managed resource name");
      }
    }
    if (e.tls_config) {
      const ExtenderTlsConfig& t = *e.tls_config;
      const std::string tp = path + ".tlsConfig";
      const bool has_ca = !t.ca_file.empty() || !t.ca_data.empty();
      if (t.insecure && has_ca) {
        problems.push_back(tp +
                           ".insecure: specifying a root certificates file with the insecure "
                           "flag is not allowed");
      }
      const bool cert = !t.cert_data.empty() || !t.cert_file.empty();
      const bool key = !t.key_data.empty() || !t.key_file.empty();
      if (cert != key) {
        problems.push_back(tp + ": a client certificate needs both " +
                           std::string(cert ? "a key (keyFile or keyData)"
                                            : "a certificate (certFile or certData)"));
      }
    }
  }
  if (binders > 1) {
    problems.push_back("extenders: found " + std::to_string(binders) +
                       " extenders implementing bind: only one extender can implement bind");
  }
}

}  // namespace

std::chrono::nanoseconds ExtenderConfig::effective_timeout() const {
  if (http_timeout.count() == 0) return kDefaultExtenderTimeout;
  return http_timeout;
}

Result<SchedulerConfig> parse_scheduler_config(std::string_view text, std::string_view source,
                                               const LoadOptions& options) {
  SchedulerConfig config;
  config.source = std::string(source);
  auto fail = [&](const Error& e) { return make_error(config.source + ": " + e.message); };

  if (Status s = model::check_yaml(text); !s)
    return make_error(config.source + ": " + s.error().message);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return make_error(config.source + ": line " + std::to_string(e.mark.line + 1) + ", column " +
                      std::to_string(e.mark.column + 1) + ": " + e.msg);
  } catch (const std::exception& e) {
    return make_error(config.source + ": " + e.what());
  }

  try {
    if (kind_of(root) == Kind::kNull) {
      return make_error(config.source + ": empty document, want a KubeSchedulerConfiguration");
    }
    if (!root.IsMap()) {
      return make_error(config.source + ": expected a KubeSchedulerConfiguration mapping, got " +
                        describe(root));
    }
    static const std::set<std::string> kIgnoredTopLevel = {"parallelism",
                                                           "leaderElection",
                                                           "clientConnection",
                                                           "healthzBindAddress",
                                                           "metricsBindAddress",
                                                           "enableProfiling",
                                                           "enableContentionProfiling",
                                                           "percentageOfNodesToScore",
                                                           "podInitialBackoffSeconds",
                                                           "podMaxBackoffSeconds",
                                                           "delayCacheUntilActive"};
    std::string api_version, kind;
    std::vector<std::string> problems;
    bool profiles_given = false;
    std::vector<bool> profile_named;
    Status s = for_each_field(
        root, "",
        [&](const std::string& key, const YAML::Node& v, const std::string& p) -> Result<Field> {
          Status st = ok_status();
          if (key == "apiVersion") {
            st = read_string(v, p, api_version);
          } else if (key == "kind") {
            st = read_string(v, p, kind);
          } else if (key == "profiles") {
            if (kind_of(v) == Kind::kNull) return Field::kHandled;
            if (kind_of(v) != Kind::kSeq)
              return field_error(p, "expected a list, got " + describe(v));
            profiles_given = v.size() > 0;
            for (size_t i = 0; i < v.size(); ++i) {
              SchedulerProfile profile;
              bool named = false;
              if (Status ps = decode_profile(v[i], index(p, i), profile, named, problems); !ps)
                return ps.error();
              profile_named.push_back(named);
              config.profiles.push_back(std::move(profile));
            }
          } else if (key == "extenders") {
            if (kind_of(v) == Kind::kNull) return Field::kHandled;
            if (kind_of(v) != Kind::kSeq)
              return field_error(p, "expected a list, got " + describe(v));
            for (size_t i = 0; i < v.size(); ++i) {
              ExtenderConfig e;
              if (Status es = decode_extender(v[i], index(p, i), e); !es) return es.error();
              config.extenders.push_back(std::move(e));
            }
          } else if (kIgnoredTopLevel.count(key)) {
            // Fields Cluster Autoscaler does not use.
          } else {
            return Field::kUnknown;
          }
          if (!st) return st.error();
          return Field::kHandled;
        });
    if (!s) return fail(s.error());

    if (api_version.empty()) {
      return make_error(config.source + ": apiVersion: missing, want " +
                        std::string(kSchedulerConfigApiVersion));
    }
    if (api_version != kSchedulerConfigApiVersion) {
      return make_error(config.source + ": apiVersion: \"" + api_version +
                        "\" is not supported, want " + std::string(kSchedulerConfigApiVersion));
    }
    if (kind != kSchedulerConfigKind) {
      return make_error(config.source + ": kind: \"" + kind + "\", want " +
                        std::string(kSchedulerConfigKind));
    }

    // v1 defaulting.
    if (!profiles_given) {
      config.profiles.emplace_back();
      config.profiles.back().node_resources_fit.emplace();
      config.profiles.back().plugin_config_names.push_back("NodeResourcesFit");
      profile_named.push_back(false);
    }
    if (config.profiles.size() == 1 && !profile_named[0]) {
      config.profiles[0].scheduler_name = "default-scheduler";
    }

    // Validation.
    if (options.require_single_profile && config.profiles.size() != 1) {
      problems.insert(problems.begin(), "profiles: expected one scheduler profile only, got " +
                                            std::to_string(config.profiles.size()));
    }
    std::set<std::string> names;
    for (size_t i = 0; i < config.profiles.size(); ++i) {
      const std::string& name = config.profiles[i].scheduler_name;
      const std::string p = index("profiles", i) + ".schedulerName";
      if (name.empty()) {
        problems.push_back(p + ": Required value");
      } else if (!names.insert(name).second) {
        problems.push_back(p + ": Duplicate value: \"" + name + "\"");
      }
    }
    validate_extenders(config, problems);
    if (!problems.empty()) {
      std::string message;
      for (const auto& p : problems) {
        if (!message.empty()) message += '\n';
        message += config.source + ": " + p;
      }
      return make_error(std::move(message));
    }
  } catch (const YAML::Exception& e) {
    return make_error(config.source + ": " + e.what());
  }
  return config;
}

Result<SchedulerConfig> load_scheduler_config(const std::string& path, const LoadOptions& options) {
  // Our deploy/ ConfigMaps use scheduler-config.yaml; HAMi's chart (the -newversion ConfigMap)
  // config.yaml.
  const model::DocumentSpec spec{
      options.flag,
      {std::string(kSchedulerConfigKind)},
      "a KubeSchedulerConfiguration",
      {"scheduler-config.yaml", "config.yaml", "kube-scheduler-config.yaml"}};
  auto doc = model::read_document(path, spec);
  if (!doc) return doc.error();
  return parse_scheduler_config(doc->text, doc->source, options);
}

// ---- CA derivations ------------------------------------------------------------------------

Result<NodeResourcesFitArgs> effective_node_resources_fit(const SchedulerConfig& config) {
  if (config.profiles.size() != 1) {
    return make_error("expected one scheduler profile only, got " +
                      std::to_string(config.profiles.size()));
  }
  std::vector<std::string> ignored;
  for (const auto& e : config.extenders) {
    for (const auto& r : e.managed_resources) {
      if (r.ignored_by_scheduler) ignored.push_back(r.name);
    }
  }
  const SchedulerProfile& profile = config.profiles[0];
  if (ignored.empty()) {
    return profile.node_resources_fit ? *profile.node_resources_fit : NodeResourcesFitArgs{};
  }
  if (!profile.node_resources_fit) {
    return make_error(
        "couldn't configure extender-managed resources: can't find NodeResourcesFitArgs in "
        "plugin config");
  }
  NodeResourcesFitArgs args = *profile.node_resources_fit;
  args.ignored_resources = std::move(ignored);  // overwrite, not merge
  return args;
}

std::vector<std::string> gpu_resource_names(const SchedulerConfig& config) {
  std::vector<std::string> names = {"nvidia.com/gpu", "habana.ai/gaudi", "gpu.intel.com/xe",
                                    "amd.com/gpu", "microsoft.com/directx"};
  for (const auto& e : config.extenders) {
    for (const auto& r : e.managed_resources) {
      if (std::find(names.begin(), names.end(), r.name) == names.end()) names.push_back(r.name);
    }
  }
  return names;
}

bool is_extended_resource_name(std::string_view name) {
  // IsNativeResource: no domain, or within kubernetes.io/.
  if (name.find('/') == std::string_view::npos) return false;
  if (name.find("kubernetes.io/") != std::string_view::npos) return false;
  if (name.substr(0, 9) == "requests.") return false;
  return qualified_name_problem("requests." + std::string(name)).empty();
}

}  // namespace hamisim::extender
