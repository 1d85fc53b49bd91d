#include "model/encode.h"

#include <optional>
#include <string_view>
#include <vector>

// Field order and presence follow the Go types of k8s.io/api/core/v1 and apimachinery's
// metav1 (declaration order; `omitempty` or not). Where the model collapses a Go pointer into a
// plain value (OwnerReference.controller, securityContext.privileged, the topology spread
// policies, schedulingGroup) the zero value means "unset" and is left out, which is also how
// the decoder reads an absent field.

namespace hamisim::model {
namespace {

// ---- generic shapes ----

void write_string_field(JsonWriter& w, std::string_view key, std::string_view value) {
  w.key(key).string(value);
}

// `json:"key,omitempty"` on a Go string.
void write_string_omitempty(JsonWriter& w, std::string_view key, std::string_view value) {
  if (!value.empty()) w.key(key).string(value);
}

// A Go *string: written whenever set, even to "".
void write_optional_string(JsonWriter& w, std::string_view key,
                           const std::optional<std::string>& value) {
  if (value) w.key(key).string(*value);
}

template <class Int>
void write_optional_integer(JsonWriter& w, std::string_view key, const std::optional<Int>& value) {
  if (value) w.key(key).number(*value);
}

void write_string_map(JsonWriter& w, const StringMap& map) {
  w.begin_object();
  for (const auto& [k, v] : map) w.key(k).string(v);
  w.end_object();
}

// `json:"key,omitempty"` on a Go map[string]string.
void write_string_map_omitempty(JsonWriter& w, std::string_view key, const StringMap& map) {
  if (map.empty()) return;
  w.key(key);
  write_string_map(w, map);
}

// `json:"key,omitempty"` on a ResourceList; Quantity.MarshalJSON writes a string.
void write_resource_list_omitempty(JsonWriter& w, std::string_view key, const ResourceList& list) {
  if (list.empty()) return;
  w.key(key).begin_object();
  for (const auto& [name, quantity] : list) w.key(name).string(quantity.to_string());
  w.end_object();
}

void write_string_list_omitempty(JsonWriter& w, std::string_view key,
                                 const std::vector<std::string>& list) {
  if (list.empty()) return;
  w.key(key).begin_array();
  for (const auto& s : list) w.string(s);
  w.end_array();
}

// A Go slice: `omitempty` drops an empty one; without it, Go writes a nil slice as null (the
// model does not tell nil from empty, and both decode back to an empty vector).
template <class T, class F>
void write_list(JsonWriter& w, std::string_view key, const std::vector<T>& list, bool omitempty,
                F&& element) {
  if (list.empty()) {
    if (!omitempty) w.key(key).null();
    return;
  }
  w.key(key).begin_array();
  for (const auto& item : list) element(item);
  w.end_array();
}

// ---- metadata ----

void write_owner_reference(JsonWriter& w, const OwnerReference& r) {
  w.begin_object();
  write_string_field(w, "apiVersion", r.api_version);
  write_string_field(w, "kind", r.kind);
  write_string_field(w, "name", r.name);
  write_string_field(w, "uid", r.uid);
  if (r.controller) w.key("controller").boolean(true);
  w.end_object();
}

void write_object_meta(JsonWriter& w, const ObjectMeta& m) {
  w.begin_object();
  write_string_omitempty(w, "name", m.name);
  write_string_omitempty(w, "generateName", m.generate_name);
  write_string_omitempty(w, "namespace", m.namespace_);
  write_string_omitempty(w, "uid", m.uid);
  write_string_omitempty(w, "resourceVersion", m.resource_version);
  // metav1.Time is a struct, so `omitempty` never drops it: the zero time is written as null.
  // The text is written as held; Go would reformat it in UTC, which needs a time parser the
  // model does not have (and the decoder keeps the text verbatim too).
  w.key("creationTimestamp");
  if (m.creation_timestamp.empty()) {
    w.null();
  } else {
    w.string(m.creation_timestamp);
  }
  write_optional_string(w, "deletionTimestamp", m.deletion_timestamp);
  write_string_map_omitempty(w, "labels", m.labels);
  write_string_map_omitempty(w, "annotations", m.annotations);
  write_list(w, "ownerReferences", m.owner_references, /*omitempty=*/true,
             [&](const OwnerReference& r) { write_owner_reference(w, r); });
  w.end_object();
}

// ---- containers ----

void write_container_port(JsonWriter& w, const ContainerPort& p) {
  w.begin_object();
  if (p.host_port != 0) w.key("hostPort").number(p.host_port);
  w.key("containerPort").number(p.container_port);
  // Go omits an empty protocol, but the decoder defaults an absent one to "TCP" (as the API
  // server does), so an empty protocol is written to survive the round trip.
  write_string_field(w, "protocol", p.protocol);
  write_string_omitempty(w, "hostIP", p.host_ip);
  w.end_object();
}

void write_container(JsonWriter& w, const Container& c) {
  w.begin_object();
  write_string_field(w, "name", c.name);
  write_string_omitempty(w, "image", c.image);
  write_list(w, "ports", c.ports, /*omitempty=*/true,
             [&](const ContainerPort& p) { write_container_port(w, p); });
  // A struct: always written, "resources":{} when empty.
  w.key("resources").begin_object();
  write_resource_list_omitempty(w, "limits", c.resources.limits);
  write_resource_list_omitempty(w, "requests", c.resources.requests);
  write_list(w, "claims", c.resources.claims, /*omitempty=*/true,
             [&](const ContainerResourceClaim& claim) {
               w.begin_object();
               write_string_field(w, "name", claim.name);
               write_string_omitempty(w, "request", claim.request);
               w.end_object();
             });
  w.end_object();
  write_optional_string(w, "restartPolicy", c.restart_policy);
  if (c.privileged) {
    w.key("securityContext").begin_object().key("privileged").boolean(true).end_object();
  }
  w.end_object();
}

// ---- scheduling constraints ----

void write_toleration(JsonWriter& w, const Toleration& t) {
  w.begin_object();
  write_string_omitempty(w, "key", t.key);
  write_string_omitempty(w, "operator", t.op);
  write_string_omitempty(w, "value", t.value);
  write_string_omitempty(w, "effect", t.effect);
  write_optional_integer(w, "tolerationSeconds", t.toleration_seconds);
  w.end_object();
}

void write_taint(JsonWriter& w, const Taint& t) {
  w.begin_object();
  write_string_field(w, "key", t.key);
  write_string_omitempty(w, "value", t.value);
  write_string_field(w, "effect", t.effect);
  w.end_object();
}

// NodeSelectorRequirement and LabelSelectorRequirement share their JSON shape.
template <class Requirement>
void write_requirements_omitempty(JsonWriter& w, std::string_view key,
                                  const std::vector<Requirement>& list) {
  write_list(w, key, list, /*omitempty=*/true, [&](const Requirement& r) {
    w.begin_object();
    write_string_field(w, "key", r.key);
    write_string_field(w, "operator", r.op);
    write_string_list_omitempty(w, "values", r.values);
    w.end_object();
  });
}

void write_label_selector(JsonWriter& w, const LabelSelector& s) {
  w.begin_object();
  write_string_map_omitempty(w, "matchLabels", s.match_labels);
  write_requirements_omitempty(w, "matchExpressions", s.match_expressions);
  w.end_object();
}

// A Go *LabelSelector: present means written, even when empty ({} selects everything, unlike
// an absent selector).
void write_optional_label_selector(JsonWriter& w, std::string_view key,
                                   const std::optional<LabelSelector>& s) {
  if (!s) return;
  w.key(key);
  write_label_selector(w, *s);
}

void write_node_selector_term(JsonWriter& w, const NodeSelectorTerm& t) {
  w.begin_object();
  write_requirements_omitempty(w, "matchExpressions", t.match_expressions);
  write_requirements_omitempty(w, "matchFields", t.match_fields);
  w.end_object();
}

void write_node_affinity(JsonWriter& w, const NodeAffinity& a) {
  w.begin_object();
  if (a.required) {
    w.key("requiredDuringSchedulingIgnoredDuringExecution").begin_object();
    write_list(w, "nodeSelectorTerms", a.required->terms, /*omitempty=*/false,
               [&](const NodeSelectorTerm& t) { write_node_selector_term(w, t); });
    w.end_object();
  }
  write_list(w, "preferredDuringSchedulingIgnoredDuringExecution", a.preferred,
             /*omitempty=*/true, [&](const PreferredSchedulingTerm& p) {
               w.begin_object();
               w.key("weight").number(p.weight);
               w.key("preference");
               write_node_selector_term(w, p.preference);
               w.end_object();
             });
  w.end_object();
}

void write_pod_affinity_term(JsonWriter& w, const PodAffinityTerm& t) {
  w.begin_object();
  write_optional_label_selector(w, "labelSelector", t.label_selector);
  write_string_list_omitempty(w, "namespaces", t.namespaces);
  write_string_field(w, "topologyKey", t.topology_key);
  write_optional_label_selector(w, "namespaceSelector", t.namespace_selector);
  w.end_object();
}

void write_pod_affinity(JsonWriter& w, const PodAffinity& a) {
  w.begin_object();
  write_list(w, "requiredDuringSchedulingIgnoredDuringExecution", a.required, /*omitempty=*/true,
             [&](const PodAffinityTerm& t) { write_pod_affinity_term(w, t); });
  write_list(w, "preferredDuringSchedulingIgnoredDuringExecution", a.preferred,
             /*omitempty=*/true, [&](const WeightedPodAffinityTerm& p) {
               w.begin_object();
               w.key("weight").number(p.weight);
               w.key("podAffinityTerm");
               write_pod_affinity_term(w, p.term);
               w.end_object();
             });
  w.end_object();
}

void write_affinity(JsonWriter& w, const Affinity& a) {
  w.begin_object();
  if (a.node_affinity) {
    w.key("nodeAffinity");
    write_node_affinity(w, *a.node_affinity);
  }
  if (a.pod_affinity) {
    w.key("podAffinity");
    write_pod_affinity(w, *a.pod_affinity);
  }
  if (a.pod_anti_affinity) {
    w.key("podAntiAffinity");
    write_pod_affinity(w, *a.pod_anti_affinity);
  }
  w.end_object();
}

void write_topology_spread_constraint(JsonWriter& w, const TopologySpreadConstraint& c) {
  w.begin_object();
  w.key("maxSkew").number(c.max_skew);
  write_string_field(w, "topologyKey", c.topology_key);
  write_string_field(w, "whenUnsatisfiable", c.when_unsatisfiable);
  write_optional_label_selector(w, "labelSelector", c.label_selector);
  write_optional_integer(w, "minDomains", c.min_domains);
  write_string_omitempty(w, "nodeAffinityPolicy", c.node_affinity_policy);
  write_string_omitempty(w, "nodeTaintsPolicy", c.node_taints_policy);
  write_string_list_omitempty(w, "matchLabelKeys", c.match_label_keys);
  w.end_object();
}

// ---- pod ----

void write_pod_spec(JsonWriter& w, const PodSpec& s) {
  const auto container = [&](const Container& c) { write_container(w, c); };
  w.begin_object();
  write_list(w, "initContainers", s.init_containers, /*omitempty=*/true, container);
  write_list(w, "containers", s.containers, /*omitempty=*/false, container);
  write_string_map_omitempty(w, "nodeSelector", s.node_selector);
  write_string_omitempty(w, "nodeName", s.node_name);
  if (s.host_network) w.key("hostNetwork").boolean(true);
  if (s.affinity) {
    w.key("affinity");
    write_affinity(w, *s.affinity);
  }
  write_string_omitempty(w, "schedulerName", s.scheduler_name);
  write_list(w, "tolerations", s.tolerations, /*omitempty=*/true,
             [&](const Toleration& t) { write_toleration(w, t); });
  write_string_omitempty(w, "priorityClassName", s.priority_class_name);
  write_optional_integer(w, "priority", s.priority);
  write_optional_string(w, "runtimeClassName", s.runtime_class_name);
  write_resource_list_omitempty(w, "overhead", s.overhead);
  write_list(w, "topologySpreadConstraints", s.topology_spread_constraints, /*omitempty=*/true,
             [&](const TopologySpreadConstraint& c) { write_topology_spread_constraint(w, c); });
  write_list(
      w, "resourceClaims", s.resource_claims, /*omitempty=*/true, [&](const PodResourceClaim& c) {
        w.begin_object();
        write_string_field(w, "name", c.name);
        write_optional_string(w, "resourceClaimName", c.resource_claim_name);
        write_optional_string(w, "resourceClaimTemplateName", c.resource_claim_template_name);
        w.end_object();
      });
  // The path the decoder reads. It is newer than every other field here (v1.35's PodSpec has
  // workloadRef instead), so it goes last, where Go's declaration order puts new fields.
  if (!s.scheduling_group_pod_group_name.empty()) {
    w.key("schedulingGroup").begin_object();
    w.key("podGroupName").string(s.scheduling_group_pod_group_name);
    w.end_object();
  }
  w.end_object();
}

void write_container_status(JsonWriter& w, const ContainerStatus& s) {
  w.begin_object();
  write_string_field(w, "name", s.name);
  // ContainerState is a struct: always written, "state":{} when nothing is known.
  w.key("state").begin_object();
  if (s.terminated) {
    w.key("terminated").begin_object();
    w.key("exitCode").number(s.terminated->exit_code);
    write_string_omitempty(w, "reason", s.terminated->reason);
    w.end_object();
  }
  w.end_object();
  w.end_object();
}

void write_pod_status(JsonWriter& w, const PodStatus& s) {
  w.begin_object();
  write_string_omitempty(w, "phase", s.phase);
  write_list(w, "initContainerStatuses", s.init_container_statuses, /*omitempty=*/true,
             [&](const ContainerStatus& cs) { write_container_status(w, cs); });
  write_list(w, "resourceClaimStatuses", s.resource_claim_statuses, /*omitempty=*/true,
             [&](const PodResourceClaimStatus& cs) {
               w.begin_object();
               write_string_field(w, "name", cs.name);
               write_optional_string(w, "resourceClaimName", cs.resource_claim_name);
               w.end_object();
             });
  w.end_object();
}

// ---- node ----

void write_node_spec(JsonWriter& w, const NodeSpec& s) {
  w.begin_object();
  write_string_omitempty(w, "providerID", s.provider_id);
  if (s.unschedulable) w.key("unschedulable").boolean(true);
  write_list(w, "taints", s.taints, /*omitempty=*/true, [&](const Taint& t) { write_taint(w, t); });
  w.end_object();
}

void write_node_status(JsonWriter& w, const NodeStatus& s) {
  w.begin_object();
  write_resource_list_omitempty(w, "capacity", s.capacity);
  write_resource_list_omitempty(w, "allocatable", s.allocatable);
  write_list(w, "conditions", s.conditions, /*omitempty=*/true, [&](const NodeCondition& c) {
    w.begin_object();
    write_string_field(w, "type", c.type);
    write_string_field(w, "status", c.status);
    w.end_object();
  });
  w.end_object();
}

}  // namespace

void write_pod(JsonWriter& w, const Pod& pod) {
  w.begin_object();
  w.key("kind").string("Pod");
  w.key("apiVersion").string("v1");
  w.key("metadata");
  write_object_meta(w, pod.metadata);
  w.key("spec");
  write_pod_spec(w, pod.spec);
  w.key("status");
  write_pod_status(w, pod.status);
  w.end_object();
}

void write_node(JsonWriter& w, const Node& node) {
  w.begin_object();
  w.key("kind").string("Node");
  w.key("apiVersion").string("v1");
  w.key("metadata");
  write_object_meta(w, node.metadata);
  w.key("spec");
  write_node_spec(w, node.spec);
  w.key("status");
  write_node_status(w, node.status);
  w.end_object();
}

std::string encode_pod_json(const Pod& pod) {
  JsonWriter w;
  write_pod(w, pod);
  return w.take();
}

std::string encode_node_json(const Node& node) {
  JsonWriter w;
  write_node(w, node);
  return w.take();
}

}  // namespace hamisim::model
