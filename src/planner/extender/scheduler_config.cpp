#include "planner/extender/scheduler_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <set>

#include "model/base64.h"
#include "model/decode.h"
#include "model/input.h"
#include "planner/extender/extender_url.h"

namespace hamisim::planner::extender {
namespace {

// ---- YAML scalar resolution -------------------------------------------------------------
// kube-scheduler reads its config through sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 scalars)
// into JSON and then into typed structs, so a plain `5` is a number and a plain `yes` a
// boolean, and neither decodes into a string field. Quoted scalars are always strings.

enum class Kind { kNull, kBool, kInt, kFloat, kString, kMap, kSeq };

bool is_plain(const YAML::Node& n) {
  return n.Tag() == "?" || n.Tag().empty();
}

bool yaml11_bool(const std::string& s, bool& value) {
  static const std::array<const char*, 11> kTrue = {"y",  "Y",  "yes",  "Yes",  "YES", "on",
                                                    "On", "ON", "true", "True", "TRUE"};
  static const std::array<const char*, 11> kFalse = {"n",   "N",   "no",    "No",    "NO",   "off",
                                                     "Off", "OFF", "false", "False", "FALSE"};
  for (const char* t : kTrue)
    if (s == t) return value = true, true;
  for (const char* f : kFalse)
    if (s == f) return value = false, true;
  return false;
}

bool looks_int(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i >= s.size()) return false;
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i])) && s[i] != '_') return false;
  return true;
}

bool looks_float(const std::string& s) {
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "-.inf" || s == "+.inf" || s == ".nan" ||
      s == ".NaN" || s == ".NAN")
    return true;
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  bool digits = false, dot = false, exp = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' && !dot && !exp) {
      dot = true;
    } else if ((c == 'e' || c == 'E') && digits && !exp) {
      exp = true;
      if (i + 1 < s.size() && (s[i + 1] == '-' || s[i + 1] == '+')) ++i;
    } else {
      return false;
    }
  }
  return digits && (dot || exp);
}

Kind kind_of(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return Kind::kNull;
  if (n.IsMap()) return Kind::kMap;
  if (n.IsSequence()) return Kind::kSeq;
  if (!is_plain(n)) return Kind::kString;
  const std::string& s = n.Scalar();
  bool b = false;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return Kind::kNull;
  if (yaml11_bool(s, b)) return Kind::kBool;
  if (looks_int(s)) return Kind::kInt;
  if (looks_float(s)) return Kind::kFloat;
  return Kind::kString;
}

std::string describe(const YAML::Node& n) {
  switch (kind_of(n)) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "boolean " + n.Scalar();
    case Kind::kInt:
    case Kind::kFloat:
      return "number " + n.Scalar();
    case Kind::kString:
      return "string \"" + n.Scalar() + "\"";
    case Kind::kMap:
      return "a mapping";
    case Kind::kSeq:
      return "a list";
  }
  return "?";
}

std::string child(const std::string& path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return path + "." + std::string(key);
}
std::string index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

Error field_error(const std::string& path, const std::string& message) {
  return make_error(path.empty() ? message : path + ": " + message);
}

Status read_string(const YAML::Node& n, const std::string& path, std::string& out) {
  const Kind k = kind_of(n);
  if (k == Kind::kNull) return ok_status();  // null leaves Go's zero value
  if (k != Kind::kString) return field_error(path, "expected a string, got " + describe(n));
  out = n.Scalar();
  return ok_status();
}

Status read_bool(const YAML::Node& n, const std::string& path, bool& out) {
  const Kind k = kind_of(n);
  if (k == Kind::kNull) return ok_status();
  if (k != Kind::kBool) return field_error(path, "expected true or false, got " + describe(n));
  yaml11_bool(n.Scalar(), out);
  return ok_status();
}

Status read_int64(const YAML::Node& n, const std::string& path, int64_t& out) {
  const Kind k = kind_of(n);
  if (k == Kind::kNull) return ok_status();
  if (k != Kind::kInt) return field_error(path, "expected an integer, got " + describe(n));
  std::string digits;
  for (char c : n.Scalar())
    if (c != '_') digits += c;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(digits.c_str(), &end, 10);
  if (errno == ERANGE || end != digits.c_str() + digits.size()) {
    return field_error(path, n.Scalar() + " does not fit in a 64-bit integer");
  }
  out = v;
  return ok_status();
}

Status read_duration(const YAML::Node& n, const std::string& path, std::chrono::nanoseconds& out) {
  const Kind k = kind_of(n);
  if (k == Kind::kNull) return ok_status();
  if (k != Kind::kString) {
    return field_error(path, "expected a duration string such as \"5s\", got " + describe(n));
  }
  auto d = parse_go_duration(n.Scalar());
  if (!d) return field_error(path, "\"" + n.Scalar() + "\" is not a duration");
  out = *d;
  return ok_status();
}

Status read_base64(const YAML::Node& n, const std::string& path, std::string& out) {
  std::string text;
  if (Status s = read_string(n, path, text); !s) return s;
  if (!model::decode_base64(text, out)) return field_error(path, "not valid base64");
  return ok_status();
}

Status read_string_list(const YAML::Node& n, const std::string& path,
                        std::vector<std::string>& out) {
  const Kind k = kind_of(n);
  if (k == Kind::kNull) return ok_status();
  if (k != Kind::kSeq) return field_error(path, "expected a list of strings, got " + describe(n));
  out.clear();
  for (size_t i = 0; i < n.size(); ++i) {
    std::string item;
    if (Status s = read_string(n[i], index(path, i), item); !s) return s;
    out.push_back(std::move(item));
  }
  return ok_status();
}

enum class Field { kHandled, kUnknown };
using FieldHandler = std::function<Result<Field>(const std::string& key, const YAML::Node& value,
                                                 const std::string&)>;

// Strict decoding of one mapping: keys must be strings, appear once and be known (kube-
// scheduler's strict decoder reports unknown and duplicate fields).
Status for_each_field(const YAML::Node& map, const std::string& path, const FieldHandler& on) {
  if (kind_of(map) == Kind::kNull) return ok_status();
  if (!map.IsMap()) return field_error(path, "expected a mapping, got " + describe(map));
  std::set<std::string> seen;
  for (const auto& entry : map) {
    if (!entry.first.IsScalar()) return field_error(path, "a key is not a string");
    const std::string key = entry.first.Scalar();
    const std::string field_path = child(path, key);
    if (!seen.insert(key).second) return field_error(field_path, "duplicate field");
    auto r = on(key, entry.second, field_path);
    if (!r) return r.error();
    if (*r == Field::kUnknown) return field_error(field_path, "unknown field");
  }
  return ok_status();
}

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
      problems.push_back(path + ".httpTimeout: \"" + format_go_duration(e.http_timeout) +
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

// ---- Go durations ------------------------------------------------------------------------

Result<std::chrono::nanoseconds> parse_go_duration(std::string_view text) {
  const std::string original(text);
  auto invalid = [&] { return make_error("time: invalid duration \"" + original + "\""); };
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return invalid();
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t total = 0;
  while (!s.empty()) {
    // Integer part.
    uint64_t v = 0;
    size_t i = 0;
    bool overflow = false;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (v > (kMax - (s[i] - '0')) / 10) overflow = true;
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
      ++i;
    }
    if (overflow) return invalid();
    const bool pre = i > 0;
    // Fraction.
    uint64_t f = 0;
    double scale = 1;
    bool post = false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      const size_t start = i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        if (f <= (kMax - 9) / 10) {  // beyond this the digit cannot change the result
          f = f * 10 + static_cast<uint64_t>(s[i] - '0');
          scale *= 10;
        }
        ++i;
      }
      post = i > start;
    }
    if (!pre && !post) return invalid();
    // Unit.
    const size_t unit_start = i;
    while (i < s.size() && s[i] != '.' && !std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    const std::string_view unit = s.substr(unit_start, i - unit_start);
    uint64_t factor = 0;
    if (unit == "ns") {
      factor = 1;
    } else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") {
      factor = 1000;
    } else if (unit == "ms") {
      factor = 1000 * 1000;
    } else if (unit == "s") {
      factor = 1000ULL * 1000 * 1000;
    } else if (unit == "m") {
      factor = 60ULL * 1000 * 1000 * 1000;
    } else if (unit == "h") {
      factor = 3600ULL * 1000 * 1000 * 1000;
    } else {
      return invalid();  // missing or unknown unit
    }
    if (v > kMax / factor) return invalid();
    v *= factor;
    if (f > 0) {
      v += static_cast<uint64_t>(static_cast<double>(f) * (static_cast<double>(factor) / scale));
      if (v > kMax) return invalid();
    }
    total += v;
    if (total > kMax) return invalid();
    s.remove_prefix(i);
  }
  const int64_t value = static_cast<int64_t>(total);
  return std::chrono::nanoseconds(negative ? -value : value);
}

std::string format_go_duration(std::chrono::nanoseconds d) {
  int64_t ns = d.count();
  if (ns == 0) return "0s";
  const bool negative = ns < 0;
  uint64_t u = negative ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  // Fixed-point number with `digits` decimals and no trailing zeros.
  auto fixed = [](uint64_t value, int digits) {
    std::string whole = std::to_string(value);
    if (digits == 0) return whole;
    while (static_cast<int>(whole.size()) <= digits) whole.insert(whole.begin(), '0');
    std::string frac = whole.substr(whole.size() - digits);
    whole.resize(whole.size() - digits);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    return frac.empty() ? whole : whole + "." + frac;
  };
  std::string out;
  if (u < 1000ULL * 1000 * 1000) {
    if (u < 1000) {
      out = std::to_string(u) + "ns";
    } else if (u < 1000 * 1000) {
      out = fixed(u, 3) + "\xC2\xB5s";
    } else {
      out = fixed(u, 6) + "ms";
    }
  } else {
    const uint64_t sec_ns = u % (60ULL * 1000 * 1000 * 1000);
    uint64_t minutes = u / (60ULL * 1000 * 1000 * 1000);
    out = fixed(sec_ns, 9) + "s";
    if (minutes > 0) {
      const uint64_t hours = minutes / 60;
      minutes %= 60;
      out = std::to_string(minutes) + "m" + out;
      if (hours > 0) out = std::to_string(hours) + "h" + out;
    }
  }
  return negative ? "-" + out : out;
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

// ---- doctor facts ----------------------------------------------------------------------------

std::string_view to_string(TlsVerification v) {
  switch (v) {
    case TlsVerification::kNone:
      return "none";
    case TlsVerification::kVerified:
      return "verified";
    case TlsVerification::kSystemRoots:
      return "system-roots";
    case TlsVerification::kSkippedInsecure:
      return "skipped-insecure";
    case TlsVerification::kSkippedNoCa:
      return "skipped-no-ca";
  }
  return "?";
}

const std::vector<std::string>& default_hami_resource_names() {
  static const std::vector<std::string> kNames = {
      "nvidia.com/gpu", "nvidia.com/gpumem", "nvidia.com/gpucores", "nvidia.com/gpumem-percentage",
      "nvidia.com/priority"};
  return kNames;
}

std::vector<ExtenderFacts> describe_extenders(const SchedulerConfig& config,
                                              const std::vector<std::string>& hami_resources) {
  const std::vector<std::string>& hami =
      hami_resources.empty() ? default_hami_resource_names() : hami_resources;
  std::vector<ExtenderFacts> out;
  for (size_t i = 0; i < config.extenders.size(); ++i) {
    const ExtenderConfig& e = config.extenders[i];
    ExtenderFacts f;
    f.index = i;
    f.url_prefix = e.url_prefix;
    if (auto url = parse_extender_url(e.url_prefix)) f.scheme = url->scheme;
    f.https = f.scheme == "https";
    const bool has_ca =
        e.tls_config && (!e.tls_config->ca_file.empty() || !e.tls_config->ca_data.empty());
    if (!f.https) {
      f.tls_verification = TlsVerification::kNone;
    } else if (e.tls_config && e.tls_config->insecure) {
      f.tls_verification = TlsVerification::kSkippedInsecure;
    } else if (has_ca) {
      f.tls_verification = TlsVerification::kVerified;
    } else if (e.enable_https) {
      f.tls_verification = TlsVerification::kSkippedNoCa;
    } else {
      f.tls_verification = TlsVerification::kSystemRoots;
    }
    f.client_certificate =
        e.tls_config && (!e.tls_config->cert_file.empty() || !e.tls_config->cert_data.empty());
    f.filter = e.is_filter();
    f.filter_verb = e.filter_verb;
    f.node_cache_capable = e.node_cache_capable;
    f.ignorable = e.ignorable;
    f.timeout = e.effective_timeout();
    f.timeout_defaulted = e.http_timeout.count() == 0;
    f.empty_managed_resources = e.managed_resources.empty();
    for (const std::string& name : hami) {
      auto it = std::find_if(e.managed_resources.begin(), e.managed_resources.end(),
                             [&](const ManagedResource& r) { return r.name == name; });
      if (it == e.managed_resources.end()) {
        f.hami_resources_missing.push_back(name);
        continue;
      }
      f.hami_resources_managed.push_back(name);
      if (!it->ignored_by_scheduler) f.hami_resources_not_ignored.push_back(name);
    }
    f.looks_like_hami = !f.hami_resources_managed.empty();
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace hamisim::planner::extender
