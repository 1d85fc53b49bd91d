#include "model/input.h"

#include <boost/json.hpp>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "model/text.h"
#include "model/unknown_fields.h"

namespace hamisim::model {
namespace {

namespace bjson = boost::json;

std::string in_quotes(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
  for (const auto& x : v) {
    if (x == s) return true;
  }
  return false;
}

// The JSON value of a YAML or JSON document, when it parses (a parse error is left to the
// flag's own parser, whose messages carry lines and columns).
std::optional<bjson::value> parse_document(std::string_view text) {
  const size_t start = text.find_first_not_of(" \t\r\n");
  std::string converted;
  if (start == std::string_view::npos || (text[start] != '{' && text[start] != '[')) {
    auto j = yaml_to_json(text);
    if (!j) return std::nullopt;
    converted = std::move(j).value();
    text = converted;
  }
  boost::system::error_code ec;
  bjson::value v = bjson::parse(text, ec);
  if (ec) return std::nullopt;
  return v;
}

std::string string_at(const bjson::object& o, std::string_view key) {
  const bjson::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::string name_of(const bjson::object& o) {
  const bjson::value* m = o.if_contains("metadata");
  if (m == nullptr || !m->is_object()) return {};
  return string_at(m->get_object(), "name");
}

// "items[2] (Service \"web\")" for messages.
std::string describe_item(std::string_view where, std::string_view kind, std::string_view name) {
  std::string out(where);
  if (kind.empty() && name.empty()) return out;
  out += " (";
  out += kind.empty() ? std::string("no kind") : std::string(kind);
  if (!name.empty()) out += " " + in_quotes(name);
  out += ")";
  return out;
}

bool is_list(const bjson::object& o, std::string_view kind) {
  return kind == "List" || (kind.size() > 4 && kind.ends_with("List")) ||
         (kind.empty() && o.contains("items"));
}

bool is_configmap(std::string_view kind) {
  return kind == "ConfigMap";
}

std::string refused_kind(const DocumentSpec& spec, std::string_view kind) {
  return "kind " + in_quotes(kind) + ": " + spec.flag + " reads " + spec.what +
         " (the object itself, or a List or ConfigMap holding it)";
}

// A kind the flag reads directly.
bool wanted(const DocumentSpec& spec, std::string_view kind) {
  return spec.kinds.empty() ? kind.empty() : contains(spec.kinds, kind);
}

// The kind of a document's text, or nullopt when it does not parse as an object.
std::optional<std::string> kind_of_text(std::string_view text) {
  auto v = parse_document(text);
  if (!v || !v->is_object()) return std::nullopt;
  return string_at(v->get_object(), "kind");
}

// Checks the document a ConfigMap key or List item holds: it must not be of another kind.
Result<Document> check_inner(std::string text, std::string source, const DocumentSpec& spec) {
  if (is_empty_document(text)) {
    return make_error(source + ": empty, want " + spec.what + " for " + spec.flag);
  }
  if (auto kind = kind_of_text(text); kind && !kind->empty() && !wanted(spec, *kind)) {
    return make_error(source + ": " + refused_kind(spec, *kind));
  }
  return Document{std::move(source), std::move(text)};
}

Result<Document> from_configmap(const bjson::object& cm, const std::string& where,
                                const std::string& name, const std::string& key,
                                const DocumentSpec& spec) {
  const std::string cm_name = name_of(cm);
  const std::string what = "ConfigMap" + (cm_name.empty() ? "" : " " + in_quotes(cm_name));
  const bjson::value* data_v = cm.if_contains("data");
  const bjson::object empty;
  const bjson::object& data =
      data_v != nullptr && data_v->is_object() ? data_v->get_object() : empty;
  std::vector<std::string> keys;
  for (const auto& kv : data) keys.emplace_back(kv.key());
  std::sort(keys.begin(), keys.end());
  if (keys.empty()) return make_error(where + ": " + what + " has no data keys");
  std::string chosen;
  if (!key.empty()) {
    if (!data.contains(key)) {
      return make_error(where + ": " + what + " has no key " + in_quotes(key) +
                        " (its keys: " + join(keys) + ")");
    }
    chosen = key;
  } else {
    std::vector<std::string> fitting;
    for (const auto& k : spec.configmap_keys) {
      if (data.contains(k)) fitting.push_back(k);
    }
    if (fitting.empty() && keys.size() == 1) fitting = keys;
    if (fitting.empty() && !spec.kinds.empty()) {
      for (const auto& k : keys) {
        const bjson::value& v = data.at(k);
        if (!v.is_string()) continue;
        auto kind = kind_of_text(v.get_string());
        if (kind && wanted(spec, *kind)) fitting.push_back(k);
      }
    }
    if (fitting.size() != 1) {
      return make_error(where + ": " + what + " has keys " + join(keys) + ", and " +
                        (fitting.empty() ? std::string("none") : join(fitting, " and ")) +
                        (fitting.size() > 1 ? " could each be " : " is ") + spec.what + " for " +
                        spec.flag + "; name the key: " + spec.flag + " " + name + ":KEY");
    }
    chosen = fitting[0];
  }
  const bjson::value& value = data.at(chosen);
  if (!value.is_string()) {
    return make_error(where + ": " + what + ": data." + chosen + ": must be a string");
  }
  return check_inner(std::string(value.get_string()), name + ":" + chosen, spec);
}

Result<Document> from_object(const bjson::object& o, std::string kind, const std::string& where,
                             const std::string& name, const std::string& key,
                             const DocumentSpec& spec, int depth);

Result<Document> from_list(const bjson::object& list, std::string_view list_kind,
                           const std::string& where, const std::string& name,
                           const std::string& key, const DocumentSpec& spec, int depth) {
  const std::string prefix = where == name ? std::string() : where + ".";
  const bjson::value* items_v = list.if_contains("items");
  std::string item_kind;
  if (list_kind.size() > 4 && list_kind.ends_with("List")) {
    item_kind = std::string(list_kind.substr(0, list_kind.size() - 4));
  }
  struct Candidate {
    std::string where;
    const bjson::object* object;
    std::string kind;
    std::string name;
  };
  std::vector<Candidate> candidates;
  if (items_v != nullptr && items_v->is_array()) {
    const bjson::array& items = items_v->get_array();
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string at = prefix + "items[" + std::to_string(i) + "]";
      if (!items[i].is_object()) {
        return make_error(name + ": " + at + ": must be an object");
      }
      const bjson::object& item = items[i].get_object();
      std::string kind = string_at(item, "kind");
      if (kind.empty()) kind = item_kind;
      const std::string item_name = name_of(item);
      if (!wanted(spec, kind) && !is_configmap(kind) && !is_list(item, kind)) {
        return make_error(name + ": " + describe_item(at, kind, item_name) + ": " +
                          (kind.empty() ? spec.flag + " reads " + spec.what +
                                              "; the item has "
                                              "no kind"
                                        : refused_kind(spec, kind)));
      }
      candidates.push_back({at, &item, kind, item_name});
    }
  }
  if (candidates.empty()) {
    return make_error(name + ": an empty " + std::string(list_kind.empty() ? "List" : list_kind) +
                      ", want " + spec.what + " for " + spec.flag);
  }
  std::vector<std::string> listed;
  for (const auto& c : candidates) listed.push_back(describe_item(c.where, c.kind, c.name));
  // FILE:NAME picks the item of that name from a List (`fit --node nodes.json:gpu-2`); a key
  // that names no object is a ConfigMap's key, as before.
  if (!key.empty()) {
    const Candidate* named = nullptr;
    bool configmaps = false;
    for (const auto& c : candidates) {
      configmaps = configmaps || is_configmap(c.kind);
      if (!is_configmap(c.kind) && c.name == key) {
        if (named != nullptr) {
          return make_error(name + ": two items are named \"" + key + "\" (" + join(listed) + ")");
        }
        named = &c;
      }
    }
    if (named != nullptr) {
      return from_object(*named->object, named->kind, named->where, name, "", spec, depth + 1);
    }
    if (!configmaps) {
      return make_error(name + ": no item is named \"" + key + "\" (" + join(listed) + ")");
    }
  }
  if (candidates.size() > 1) {
    return make_error(name + ": a List of " + std::to_string(candidates.size()) + " items (" +
                      join(listed) + "); " + spec.flag + " reads one: name it as " + name +
                      ":<name>");
  }
  const Candidate& c = candidates[0];
  return from_object(*c.object, c.kind, c.where, name, key, spec, depth + 1);
}

Result<Document> from_object(const bjson::object& o, std::string kind, const std::string& where,
                             const std::string& name, const std::string& key,
                             const DocumentSpec& spec, int depth) {
  if (depth > 4) return make_error(name + ": " + where + ": Lists nested too deeply");
  if (is_configmap(kind)) return from_configmap(o, where, name, key, spec);
  // A List takes the key as the name of one of its items, or passes it to its ConfigMaps.
  if (is_list(o, kind)) return from_list(o, kind, where, name, key, spec, depth);
  if (!key.empty()) {
    return make_error(name + ": " + name + ":" + key +
                      " names a ConfigMap key or a List's item, "
                      "but " +
                      (where == name ? std::string("the input") : where) + " is " +
                      (kind.empty() ? std::string("not a ConfigMap") : "a " + kind));
  }
  if (wanted(spec, kind)) {
    return Document{where == name ? name : name + ": " + where, bjson::serialize(o)};
  }
  return make_error(name + ": " + (where == name ? std::string() : where + ": ") +
                    refused_kind(spec, kind));
}

// PATH:KEY when PATH exists and PATH:KEY does not.
std::pair<std::string, std::string> split_key(const std::string& given) {
  std::error_code ec;
  if (given == "-" || std::filesystem::exists(given, ec)) return {given, {}};
  const size_t colon = given.rfind(':');
  if (colon == std::string::npos || colon == 0) return {given, {}};
  std::string path = given.substr(0, colon);
  if (path != "-" && !std::filesystem::exists(path, ec)) return {given, {}};
  return {std::move(path), given.substr(colon + 1)};
}

// Kinds the Kubernetes API serves (core and the built-in groups), as a `kubectl get all` dump
// or a cluster backup holds them.
const std::set<std::string, std::less<>>& builtin_kinds() {
  static const std::set<std::string, std::less<>> kKinds = {
      "APIService",
      "Binding",
      "CertificateSigningRequest",
      "ClusterRole",
      "ClusterRoleBinding",
      "ClusterTrustBundle",
      "ComponentStatus",
      "ConfigMap",
      "ControllerRevision",
      "CronJob",
      "CSIDriver",
      "CSINode",
      "CSIStorageCapacity",
      "CustomResourceDefinition",
      "DaemonSet",
      "Deployment",
      "DeviceClass",
      "DeviceTaintRule",
      "EndpointSlice",
      "Endpoints",
      "Event",
      "FlowSchema",
      "HorizontalPodAutoscaler",
      "Ingress",
      "IngressClass",
      "IPAddress",
      "Job",
      "Lease",
      "LimitRange",
      "MutatingAdmissionPolicy",
      "MutatingAdmissionPolicyBinding",
      "MutatingWebhookConfiguration",
      "Namespace",
      "NetworkPolicy",
      "Node",
      "PersistentVolume",
      "PersistentVolumeClaim",
      "Pod",
      "PodDisruptionBudget",
      "PodSchedulingContext",
      "PodTemplate",
      "PriorityClass",
      "PriorityLevelConfiguration",
      "ReplicaSet",
      "ReplicationController",
      "ResourceClaim",
      "ResourceClaimTemplate",
      "ResourceQuota",
      "ResourceSlice",
      "Role",
      "RoleBinding",
      "RuntimeClass",
      "Secret",
      "Service",
      "ServiceAccount",
      "ServiceCIDR",
      "StatefulSet",
      "StorageClass",
      "StorageVersionMigration",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
      "ValidatingWebhookConfiguration",
      "VolumeAttachment",
      "VolumeAttributesClass",
  };
  return kKinds;
}

// hamisim's and kube-scheduler's configuration kinds, with the flag that reads each.
const std::map<std::string, std::string, std::less<>>& config_kinds() {
  static const std::map<std::string, std::string, std::less<>> kKinds = {
      {"NodeGroups", "--node-groups"},
      {"DeviceProfiles", "--device-profiles"},
      {"KubeSchedulerConfiguration", "--scheduler-config"},
  };
  return kKinds;
}

std::string api_group(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string()
                                         : std::string(api_version.substr(0, slash));
}

// A group the Kubernetes project owns (core, apps, batch, *.k8s.io...): a kind of it that is
// not in builtin_kinds() is a typo, not a custom resource.
bool builtin_group(std::string_view group) {
  return group.find('.') == std::string_view::npos || group == "k8s.io" ||
         group.ends_with(".k8s.io");
}

std::string plural_kinds(const DecodeKinds& d) {
  std::vector<std::string> kinds;
  if (d.nodes) kinds.push_back("Nodes");
  if (d.pods) kinds.push_back("Pods");
  if (d.quotas) kinds.push_back("ResourceQuotas");
  if (d.dra) kinds.push_back("DRA objects (resource.k8s.io)");
  return join(kinds);
}

bool decoded(const DecodeKinds& d, std::string_view kind) {
  return (kind == "Node" && d.nodes) || (kind == "Pod" && d.pods) ||
         (kind == "ResourceQuota" && d.quotas);
}

std::string describe_skipped(const SkippedItem& item) {
  std::string name = item.name;
  if (!item.namespace_.empty() && !name.empty()) name = item.namespace_ + "/" + name;
  std::string where = item.path.empty() ? std::string("the object") : item.path;
  return describe_item(where, item.kind, name);
}

}  // namespace

Status judge_unknown_fields(std::string_view text, const std::string& file, const std::string& flag,
                            UnknownFields policy, std::vector<std::string>& warnings,
                            size_t readable_past_end) {
  if (policy == UnknownFields::kIgnore) return ok_status();
  auto found = find_unknown_fields(text, readable_past_end);
  if (!found) return make_error(file + ": " + found.error().message);
  if (found->empty()) return ok_status();
  if (policy == UnknownFields::kError) {
    std::string message = flag + ": " + describe_unknown_field(file, found->front());
    if (found->size() > 1) message += " (and " + std::to_string(found->size() - 1) + " more)";
    return make_error(message + "; --strict refuses unknown fields");
  }
  for (const auto& f : *found) warnings.push_back(flag + ": " + describe_unknown_field(file, f));
  return ok_status();
}

Status check_stdin_once(const std::vector<FlagInput>& inputs) {
  const FlagInput* first = nullptr;
  for (const auto& in : inputs) {
    if (in.path != "-" && !in.path.starts_with("-:")) continue;
    if (first != nullptr) {
      return make_error(in.flag + " and " + first->flag +
                        " both read standard input (-); it can be read once: give one of them "
                        "a file");
    }
    first = &in;
  }
  return ok_status();
}

Result<Document> unwrap_document(std::string_view text, const std::string& name,
                                 const std::string& key, const DocumentSpec& spec) {
  if (is_empty_document(text)) {
    return make_error(name + ": empty, want " + spec.what + " for " + spec.flag);
  }
  auto v = parse_document(text);
  if (!v || !v->is_object()) {
    // Not an object (or not parseable): the flag's parser says what is wrong, with lines.
    if (!key.empty()) return make_error(name + ": not a ConfigMap, so it has no key " + key);
    return Document{name, std::string(text)};
  }
  const bjson::object& o = v->get_object();
  const std::string kind = string_at(o, "kind");
  if (key.empty() && !is_configmap(kind) && !is_list(o, kind)) {
    if (!kind.empty() && !wanted(spec, kind)) {
      return make_error(name + ": " + refused_kind(spec, kind));
    }
    // The document itself: its text unchanged, so the parser's line numbers are the file's.
    return Document{name, std::string(text)};
  }
  return from_object(o, kind, name, name, key, spec, 0);
}

Result<Document> read_document(const std::string& given, const DocumentSpec& spec) {
  auto [path, key] = split_key(given);
  auto text = read_file(path);
  if (!text) return text.error();
  auto doc = unwrap_document(*text, display_name(path), key, spec);
  if (!doc) return doc;
  // After unwrapping, whose errors say more about a wrong input than a field would.
  if (Status s = judge_unknown_fields(*text, display_name(path), spec.flag, spec.unknown_fields,
                                      doc->warnings);
      !s) {
    return s.error();
  }
  return doc;
}

bool is_kubernetes_kind(std::string_view kind, std::string_view api_version) {
  if (builtin_kinds().count(kind) != 0) return true;
  const std::string group = api_group(api_version);
  return !kind.empty() && !builtin_group(group) && group != "hamisim.io";
}

Result<SkipWarnings> check_skipped_items(std::vector<SkippedItem> skipped, const ObjectKinds& kinds,
                                         const std::string& file, bool from_directory) {
  struct Tally {
    size_t count = 0;
    std::string first;
  };
  std::map<std::string, Tally> ignored;
  SkipWarnings out;
  const std::string reads = kinds.flag + " reads " + plural_kinds(kinds.decode);
  for (SkippedItem& item : skipped) {
    const bool whole_file = item.path.empty();
    if (!file.empty()) item.path = file + (item.path.empty() ? "" : ": " + item.path);
    if (from_directory && whole_file && !contains(kinds.also_read, item.kind) &&
        !contains(kinds.quiet, item.kind) &&
        (item.kind.empty() || config_kinds().count(item.kind) != 0 ||
         !is_kubernetes_kind(item.kind, item.api_version))) {
      out.lines.push_back(kinds.flag + ": skipped " + file + ": not a Kubernetes object (" +
                          (item.kind.empty() ? std::string("no kind") : "kind " + item.kind) +
                          "), as other files of a directory are");
      continue;
    }
    if (contains(kinds.also_read, item.kind) || contains(kinds.quiet, item.kind)) continue;
    if (item.kind.empty()) {
      return make_error(describe_skipped(item) + ": the item has no kind; " + reads);
    }
    if (auto it = config_kinds().find(item.kind); it != config_kinds().end()) {
      return make_error(describe_skipped(item) + ": a " + item.kind + " is read by " + it->second +
                        ", not " + kinds.flag);
    }
    if (item.kind == "Node" || item.kind == "Pod" || item.kind == "ResourceQuota") {
      if (!decoded(kinds.decode, item.kind)) {
        return make_error(describe_skipped(item) + ": kind " + item.kind + " is not for " +
                          kinds.flag + ", which reads " + plural_kinds(kinds.decode));
      }
    }
    // A DRA kind the flag reads was skipped only for its apiVersion: a version hamisim does not
    // read, or none. (Another group's kind of the same name is a custom resource.)
    if (kinds.decode.dra && is_dra_kind("resource.k8s.io/v1", item.kind) &&
        (item.api_version.empty() || api_group(item.api_version) == "resource.k8s.io")) {
      return make_error(describe_skipped(item) + ": " +
                        (item.api_version.empty() ? std::string("no apiVersion")
                                                  : "apiVersion " + in_quotes(item.api_version)) +
                        "; " + kinds.flag + " reads " + item.kind +
                        " in resource.k8s.io/v1, v1beta2, v1beta1 and v1alpha3");
    }
    if (!is_kubernetes_kind(item.kind, item.api_version)) {
      return make_error(describe_skipped(item) + ": unknown kind " + in_quotes(item.kind) +
                        (item.api_version.empty() ? "" : " in " + item.api_version) + "; " + reads);
    }
    Tally& t = ignored[item.kind];
    if (t.count++ == 0) t.first = describe_skipped(item);
  }
  for (const auto& [kind, t] : ignored) {
    out.lines.push_back(kinds.flag + ": skipped " + std::to_string(t.count) + " " + kind +
                        (t.count == 1 ? "" : "(s)") + ", which " + kinds.flag +
                        " does not read (first: " + t.first + ")");
  }
  return out;
}

Result<ObjectSet> load_checked_objects(const std::string& path, const ObjectKinds& kinds,
                                       std::vector<std::string>& warnings) {
  auto files = input_files(path);
  if (!files) return files.error();
  if (files->empty()) {
    return make_error(path + ": no *.json, *.yaml or *.yml file in the directory, want " +
                      plural_kinds(kinds.decode) + " for " + kinds.flag);
  }
  const bool from_directory = files->size() != 1 || (*files)[0] != path;
  ObjectSet all;
  for (const auto& file : *files) {
    auto text = read_file(file);
    if (!text) return text.error();
    const std::string name = display_name(file);
    if (is_empty_document(*text)) {
      return make_error(name + ": empty, want " + plural_kinds(kinds.decode) + " for " +
                        kinds.flag + " (a List, or the objects themselves)");
    }
    auto set = decode_objects_in_place(*text, kinds.decode);
    if (!set) return make_error(name + ": " + set.error().message);
    auto checked = check_skipped_items(std::move(set->skipped), kinds, name, from_directory);
    if (!checked) return checked.error();
    if (Status s = judge_unknown_fields(*text, name, kinds.flag, kinds.unknown_fields, warnings,
                                        text->capacity() - text->size());
        !s) {
      return s.error();
    }
    for (RawObject& object : set->dra_objects) {
      object.path = name + (object.path.empty() ? "" : ": " + object.path);
    }
    warnings.insert(warnings.end(), checked->lines.begin(), checked->lines.end());
    all.append(std::move(set).value());
  }
  return all;
}

}  // namespace hamisim::model
