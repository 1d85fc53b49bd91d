#include "planner/nodegroups/node_groups.h"

#include <yaml-cpp/yaml.h>

#include <array>
#include <cctype>
#include <map>

#include "model/decode.h"
#include "model/input.h"
#include "model/yaml_check.h"
#include "model/yaml_fields.h"
#include "profile/device_profiles.h"
#include "profile/template_node.h"

namespace hamisim::planner::nodegroups {
namespace {

constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";
constexpr std::string_view kToBeDeletedTaint = "ToBeDeletedByClusterAutoscaler";
constexpr std::string_view kDeletionCandidateTaint = "DeletionCandidateOfClusterAutoscaler";
constexpr std::array<std::string_view, 8> kNodeConditionTaints = {
    "node.kubernetes.io/not-ready",           "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable",       "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure",       "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/network-unavailable", "node.kubernetes.io/out-of-disk",
};
constexpr std::array<std::string_view, 3> kSanitizedTaintPrefixes = {
    "startup-taint.cluster-autoscaler.kubernetes.io/",
    "status-taint.cluster-autoscaler.kubernetes.io/",
    "ignore-taint.cluster-autoscaler.kubernetes.io/",
};
constexpr std::string_view kMirrorPodAnnotation = "kubernetes.io/config.mirror";
// CA also counts pods carrying this annotation as DaemonSet pods (pod_util.IsDaemonSetPod).
constexpr std::string_view kDaemonSetPodAnnotation =
    "cluster-autoscaler.kubernetes.io/daemonset-pod";

using model::yaml::check_keys;
using model::yaml::key_text;
using model::yaml::present;
using model::yaml::read_bool;
using model::yaml::read_int;
using model::yaml::read_number;
using model::yaml::read_string;
using model::yaml::Where;

// label -> value (members, labels, annotations). Values are scalars read as text, so
// `zone: 1` means the label value "1".
Result<model::StringMap> read_string_map(const YAML::Node& n, const Where& where,
                                         std::string_view what) {
  model::StringMap out;
  if (!present(n)) return out;
  if (!n.IsMap()) return where.error(n, "expected a mapping of " + std::string(what) + " -> value");
  for (const auto& kv : n) {
    const std::string key = key_text(kv.first);
    if (key.empty())
      return where.error(kv.first, "expected a non-empty " + std::string(what) + " key");
    const Where w = where.entry(key);
    if (!kv.second.IsScalar()) return w.error(kv.second, "expected a string");
    if (!out.emplace(key, kv.second.Scalar()).second) return w.error(kv.first, "duplicate key");
  }
  return out;
}

Result<model::ResourceList> read_resources(const YAML::Node& n, const Where& where) {
  model::ResourceList out;
  if (!present(n)) return out;
  if (!n.IsMap()) return where.error(n, "expected a mapping of resource name -> quantity");
  for (const auto& kv : n) {
    const std::string key = key_text(kv.first);
    if (key.empty()) return where.error(kv.first, "expected a non-empty resource name");
    const Where w = where.entry(key);
    if (!kv.second.IsScalar()) return w.error(kv.second, "expected a quantity");
    auto q = model::Quantity::parse(kv.second.Scalar());
    if (!q) return w.error(kv.second, q.error().message);
    if (q->sign() < 0) return w.error(kv.second, "must not be negative");
    if (!out.emplace(key, *q).second) return w.error(kv.first, "duplicate key");
  }
  return out;
}

Result<std::vector<model::Taint>> read_taints(const YAML::Node& n, const Where& where) {
  std::vector<model::Taint> out;
  if (!present(n)) return out;
  if (!n.IsSequence()) return where.error(n, "expected a list of taints");
  for (size_t i = 0; i < n.size(); ++i) {
    const YAML::Node t = n[i];
    const Where w = where.at(i);
    if (!t.IsMap()) return w.error(t, "expected a taint mapping {key, value, effect}");
    if (Status s = check_keys(t, w, {"key", "value", "effect"}); !s) return s.error();
    model::Taint taint;
    auto key = read_string(t, "key", w);
    if (!key) return key.error();
    if (key->empty()) return (w / "key").error(t["key"], "must not be empty");
    taint.key = *key;
    if (present(t["value"])) {
      auto value = read_string(t, "value", w);
      if (!value) return value.error();
      taint.value = *value;
    }
    auto effect = read_string(t, "effect", w);
    if (!effect) return effect.error();
    if (*effect != "NoSchedule" && *effect != "PreferNoSchedule" && *effect != "NoExecute") {
      return (w / "effect")
          .error(t["effect"],
                 "\"" + *effect + "\" is not one of NoSchedule, PreferNoSchedule, NoExecute");
    }
    taint.effect = *effect;
    out.push_back(std::move(taint));
  }
  return out;
}

// The `template:` subtree, read field by field rather than through the tolerant JSON decoder:
// the file is ours, so a misspelt or unsupported field is an error instead of being ignored.
Result<std::optional<model::Node>> read_template(const YAML::Node& n, const Where& where) {
  if (!present(n)) return std::optional<model::Node>();
  if (!n.IsMap()) return where.error(n, "expected a node mapping {metadata, spec, status}");
  if (Status s = check_keys(n, where, {"metadata", "spec", "status"}); !s) return s.error();
  model::Node node;
  if (const YAML::Node m = n["metadata"]; present(m)) {
    const Where w = where / "metadata";
    if (!m.IsMap()) return w.error(m, "expected a mapping {labels, annotations}");
    if (Status s = check_keys(m, w, {"labels", "annotations"}); !s) return s.error();
    auto labels = read_string_map(m["labels"], w / "labels", "label");
    if (!labels) return labels.error();
    node.metadata.labels = std::move(labels).value();
    auto annotations = read_string_map(m["annotations"], w / "annotations", "annotation");
    if (!annotations) return annotations.error();
    node.metadata.annotations = std::move(annotations).value();
  }
  if (const YAML::Node s = n["spec"]; present(s)) {
    const Where w = where / "spec";
    if (!s.IsMap()) return w.error(s, "expected a mapping {taints, unschedulable}");
    if (Status st = check_keys(s, w, {"taints", "unschedulable"}); !st) return st.error();
    auto taints = read_taints(s["taints"], w / "taints");
    if (!taints) return taints.error();
    node.spec.taints = std::move(taints).value();
    if (const YAML::Node u = s["unschedulable"]; present(u)) {
      auto b = read_bool(u, w / "unschedulable");
      if (!b) return b.error();
      node.spec.unschedulable = *b;
    }
  }
  if (const YAML::Node s = n["status"]; present(s)) {
    const Where w = where / "status";
    if (!s.IsMap()) return w.error(s, "expected a mapping {capacity, allocatable}");
    if (Status st = check_keys(s, w, {"capacity", "allocatable"}); !st) return st.error();
    auto capacity = read_resources(s["capacity"], w / "capacity");
    if (!capacity) return capacity.error();
    node.status.capacity = std::move(capacity).value();
    auto allocatable = read_resources(s["allocatable"], w / "allocatable");
    if (!allocatable) return allocatable.error();
    node.status.allocatable = std::move(allocatable).value();
  }
  return std::optional<model::Node>(std::move(node));
}

// CA ids are free text, but the id is written into template names, plan output and the
// priority expander's regular expressions: whitespace or control characters there would only
// ever be a mistake.
bool valid_group_name(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isspace(u) || std::iscntrl(u)) return false;
  }
  return true;
}

Result<NodeGroupSpec> read_group(const YAML::Node& g, Where w) {
  if (!g.IsMap()) return w.error(g, "expected a node group mapping");
  // The name goes into the path of every later error, so it is read (leniently) first.
  if (const YAML::Node name = g["name"]; name.IsDefined() && name.IsScalar())
    w.path += " (" + name.Scalar() + ")";
  if (Status s = check_keys(g, w,
                            {"name", "minSize", "maxSize", "targetSize", "members", "template",
                             "deviceProfile", "price", "priority"});
      !s) {
    return s.error();
  }
  NodeGroupSpec spec;
  auto name = read_string(g, "name", w);
  if (!name) return name.error();
  if (!valid_group_name(*name)) {
    return (w / "name")
        .error(g["name"], "must be non-empty without whitespace or control characters");
  }
  spec.name = *name;

  if (const YAML::Node n = g["minSize"]; present(n)) {
    auto v = read_int(n, w / "minSize");
    if (!v) return v.error();
    if (*v < 0) return (w / "minSize").error(n, "must be >= 0, got " + std::to_string(*v));
    spec.min_size = *v;
  }
  const YAML::Node max = g["maxSize"];
  if (!present(max)) return (w / "maxSize").error(g, "required");
  auto max_size = read_int(max, w / "maxSize");
  if (!max_size) return max_size.error();
  if (*max_size < spec.min_size) {
    return (w / "maxSize")
        .error(max, "must be >= minSize (" + std::to_string(spec.min_size) + "), got " +
                        std::to_string(*max_size));
  }
  spec.max_size = *max_size;
  if (const YAML::Node n = g["targetSize"]; present(n)) {
    auto v = read_int(n, w / "targetSize");
    if (!v) return v.error();
    if (*v < 0 || *v > spec.max_size) {
      return (w / "targetSize")
          .error(n, "must be within [0, maxSize (" + std::to_string(spec.max_size) + ")], got " +
                        std::to_string(*v));
    }
    spec.target_size = *v;
  }

  auto members = read_string_map(g["members"], w / "members", "label");
  if (!members) return members.error();
  spec.members = std::move(members).value();

  auto tmpl = read_template(g["template"], w / "template");
  if (!tmpl) return tmpl.error();
  spec.template_node = std::move(tmpl).value();

  if (const YAML::Node n = g["deviceProfile"]; present(n)) {
    auto profile = read_string(g, "deviceProfile", w);
    if (!profile) return profile.error();
    if (profile->empty())
      return (w / "deviceProfile").error(n, "must not be empty (omit the field for none)");
    spec.device_profile = *profile;
  }
  if (const YAML::Node n = g["price"]; present(n)) {
    auto price = read_number(n, w / "price");
    if (!price) return price.error();
    if (*price < 0) return (w / "price").error(n, "must be >= 0, got " + n.Scalar());
    spec.price = *price;
  }
  if (const YAML::Node n = g["priority"]; present(n)) {
    auto priority = read_int(n, w / "priority");
    if (!priority) return priority.error();
    spec.priority = *priority;
  }
  return spec;
}

Result<NodeGroups> parse_document(const YAML::Node& root, std::string_view source) {
  const Where top{source, ""};
  if (!root.IsMap()) return make_error(std::string(source) + ": expected a NodeGroups document");
  if (Status s = check_keys(root, top, {"apiVersion", "kind", "nodeGroups"}); !s) return s.error();
  const YAML::Node api = root["apiVersion"];
  if (!api.IsDefined() || !api.IsScalar() || api.Scalar() != "hamisim.io/v1") {
    return (top / "apiVersion").error(api.IsDefined() ? api : root, "expected hamisim.io/v1");
  }
  const YAML::Node kind = root["kind"];
  if (!kind.IsDefined() || !kind.IsScalar() || kind.Scalar() != "NodeGroups") {
    return (top / "kind").error(kind.IsDefined() ? kind : root, "expected NodeGroups");
  }
  NodeGroups out;
  const YAML::Node list = root["nodeGroups"];
  if (!present(list)) return out;
  if (!list.IsSequence()) return (top / "nodeGroups").error(list, "expected a list");
  std::map<std::string, size_t, std::less<>> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node g = list[i];
    const Where w = (top / "nodeGroups").at(i);
    auto spec = read_group(g, w);
    if (!spec) return spec.error();
    if (auto [it, inserted] = seen.emplace(spec->name, i); !inserted) {
      const Where named{source, w.path + " (" + spec->name + ")"};
      return (named / "name")
          .error(g["name"],
                 "duplicate node group name (also nodeGroups[" + std::to_string(it->second) + "])");
    }
    out.groups.push_back(std::move(spec).value());
  }
  return out;
}

bool is_mirror_pod(const model::Pod& pod) {
  return model::find_annotation(pod.metadata, kMirrorPodAnnotation) != nullptr;
}

// What every template gets, warm or cold: CA's name, a uid (CA draws a random one; the name
// is unique within a plan and deterministic), the hostname and template labels, and the
// group's device profile.
void stamp(model::Node& node, const NodeGroupSpec& group, const std::string& name) {
  node.metadata.name = name;
  node.metadata.uid = name;
  node.metadata.labels[std::string(kHostnameLabel)] = name;
  node.metadata.labels[std::string(profile::kTemplateNodeLabel)] = "true";
  if (!group.device_profile.empty()) {
    node.metadata.annotations[std::string(profile::kDeviceProfileAnnotation)] =
        group.device_profile;
  }
}

}  // namespace

// CA's pod_util.IsDaemonSetPod: the controller (metav1.GetControllerOf: the first owner marked
// as controller) is a DaemonSet, or the pod carries CA's DaemonSet-pod annotation.
bool is_daemonset_pod(const model::Pod& pod) {
  for (const auto& ref : pod.metadata.owner_references) {
    if (!ref.controller) continue;
    if (ref.kind == "DaemonSet") return true;
    break;
  }
  const std::string* v = model::find_annotation(pod.metadata, kDaemonSetPodAnnotation);
  return v && *v == "true";
}

const NodeGroupSpec* NodeGroups::find(std::string_view name) const {
  for (const auto& g : groups) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

Result<NodeGroups> parse_node_groups(std::string_view yaml, std::string_view source) {
  // yaml-cpp reports misuse (a subscript on a scalar, a bad conversion) by throwing; no such
  // exception may leave this function, whatever the input.
  if (Status s = model::check_yaml(yaml); !s) {
    return make_error(std::string(source) + ": " + s.error().message);
  }
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(std::string(yaml));
    std::erase_if(docs, [](const YAML::Node& d) { return d.IsNull(); });
    if (docs.empty()) {
      return make_error(std::string(source) + ": expected a NodeGroups document, got none");
    }
    if (docs.size() > 1) {
      return make_error(std::string(source) + ": expected one YAML document, got " +
                        std::to_string(docs.size()));
    }
    return parse_document(docs[0], source);
  } catch (const YAML::Exception& e) {
    return make_error(std::string(source) + ": " + e.what());
  } catch (const std::exception& e) {
    return make_error(std::string(source) + ": " + e.what());
  }
}

Result<NodeGroups> load_node_groups(const std::string& path) {
  static const model::DocumentSpec kSpec{
      "--node-groups", {"NodeGroups"}, "a NodeGroups document", {"node-groups.yaml"}};
  auto doc = model::read_document(path, kSpec);
  if (!doc) return doc.error();
  return parse_node_groups(doc->text, doc->source);
}

bool is_member(const NodeGroupSpec& group, const model::Node& node) {
  if (group.members.empty()) return false;
  for (const auto& [key, value] : group.members) {
    const std::string* v = model::find_label(node.metadata, key);
    if (!v || *v != value) return false;
  }
  return true;
}

bool is_good_template_candidate(const model::Node& node) {
  if (node.spec.unschedulable) return false;
  for (const auto& t : node.spec.taints) {
    if (t.key == kToBeDeletedTaint) return false;
  }
  // The first Ready condition decides, as Kubernetes' GetNodeCondition reads it.
  for (const auto& c : node.status.conditions) {
    if (c.type == "Ready") return c.status == "True";
  }
  return false;
}

std::vector<model::Taint> sanitize_taints(const std::vector<model::Taint>& taints) {
  std::vector<model::Taint> out;
  for (const auto& t : taints) {
    if (t.key == kToBeDeletedTaint || t.key == kDeletionCandidateTaint) continue;
    bool drop = false;
    for (std::string_view k : kNodeConditionTaints) drop = drop || t.key == k;
    for (std::string_view p : kSanitizedTaintPrefixes) drop = drop || t.key.starts_with(p);
    if (!drop) out.push_back(t);
  }
  return out;
}

std::optional<GroupTemplate> build_template(const TemplateInput& in) {
  if (in.group == nullptr) return std::nullopt;
  const NodeGroupSpec& group = *in.group;
  const std::string name = "template-node-for-" + group.name + "-" + std::to_string(in.index);

  const model::Node* sample = nullptr;
  for (const model::Node* m : in.members) {
    if (m != nullptr && is_good_template_candidate(*m)) {
      sample = m;
      break;
    }
  }
  if (sample == nullptr) {
    // CA's last resort: an unready or unschedulable member still describes the group's
    // machines better than nothing.
    for (const model::Node* m : in.members) {
      if (m != nullptr) {
        sample = m;
        break;
      }
    }
  }

  GroupTemplate out;
  if (sample != nullptr) {
    out.source = GroupTemplate::Source::kWarm;
    out.sample_node = sample->metadata.name;
    out.node = *sample;
    out.node.spec.taints = sanitize_taints(sample->spec.taints);
    stamp(out.node, group, name);
    if (in.pods != nullptr) {
      for (const model::Pod& pod : *in.pods) {
        // An unnamed sample would otherwise claim every pending pod (nodeName "").
        if (sample->metadata.name.empty() || pod.spec.node_name != sample->metadata.name) continue;
        if (pod.metadata.deletion_timestamp) continue;
        if (!is_daemonset_pod(pod) && !is_mirror_pod(pod)) continue;
        model::Pod copy = pod;
        copy.metadata.name = pod.metadata.name + "-" + std::to_string(in.index);
        // CA draws a random uid; this one is deterministic and unique across templates.
        copy.metadata.uid = name + "/" + pod.metadata.namespace_ + "/" + pod.metadata.name;
        copy.spec.node_name = name;
        out.pods.push_back(std::move(copy));
      }
    }
    return out;
  }

  if (!group.template_node) return std::nullopt;
  out.source = GroupTemplate::Source::kCold;
  out.node = *group.template_node;
  // A hand-written template often gives only one of the two lists; each resource missing
  // from one is taken from the other.
  model::NodeStatus& status = out.node.status;
  for (const auto& [res, q] : status.capacity) status.allocatable.emplace(res, q);
  for (const auto& [res, q] : status.allocatable) status.capacity.emplace(res, q);
  status.conditions = {model::NodeCondition{"Ready", "True"}};
  stamp(out.node, group, name);
  return out;
}

}  // namespace hamisim::planner::nodegroups
