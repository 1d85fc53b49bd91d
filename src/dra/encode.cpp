#include "dra/encode.h"

#include <type_traits>

#include "model/json_writer.h"

namespace hamisim::dra {
namespace {

using model::JsonWriter;

std::string semver_text(const cel::Semver& v) {
  std::string out =
      std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
  if (!v.prerelease.empty()) out += "-" + v.prerelease;
  if (!v.build.empty()) out += "+" + v.build;
  return out;
}

void requirements(JsonWriter& w, const std::vector<model::NodeSelectorRequirement>& list) {
  w.begin_array();
  for (const auto& r : list) {
    w.begin_object().key("key").string(r.key).key("operator").string(r.op);
    if (!r.values.empty()) {
      w.key("values").begin_array();
      for (const auto& v : r.values) w.string(v);
      w.end_array();
    }
    w.end_object();
  }
  w.end_array();
}

void node_selector(JsonWriter& w, const model::NodeSelector& s) {
  w.begin_object().key("nodeSelectorTerms").begin_array();
  for (const auto& t : s.terms) {
    w.begin_object();
    if (!t.match_expressions.empty()) {
      w.key("matchExpressions");
      requirements(w, t.match_expressions);
    }
    if (!t.match_fields.empty()) {
      w.key("matchFields");
      requirements(w, t.match_fields);
    }
    w.end_object();
  }
  w.end_array().end_object();
}

void scope(JsonWriter& w, const NodeScope& s) {
  if (s.node_name) w.key("nodeName").string(*s.node_name);
  if (s.node_selector) {
    w.key("nodeSelector");
    node_selector(w, *s.node_selector);
  }
  if (s.all_nodes) w.key("allNodes").boolean(true);
}

void counters(JsonWriter& w, const Counters& c) {
  w.begin_object();
  for (const auto& [name, value] : c) {
    w.key(name).begin_object().key("value").string(value.to_string()).end_object();
  }
  w.end_object();
}

void strings(JsonWriter& w, const std::vector<std::string>& list) {
  w.begin_array();
  for (const auto& s : list) w.string(s);
  w.end_array();
}

void device(JsonWriter& w, const Device& d) {
  w.begin_object().key("name").string(d.name);
  if (!d.attributes.empty()) {
    w.key("attributes").begin_object();
    for (const auto& [name, value] : d.attributes) {
      w.key(name).begin_object();
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, bool>) {
              w.key("bool").boolean(v);
            } else if constexpr (std::is_same_v<T, int64_t>) {
              w.key("int").number(v);
            } else if constexpr (std::is_same_v<T, std::string>) {
              w.key("string").string(v);
            } else {
              w.key("version").string(semver_text(v));
            }
          },
          value);
      w.end_object();
    }
    w.end_object();
  }
  if (!d.capacity.empty()) {
    w.key("capacity").begin_object();
    for (const auto& [name, cap] : d.capacity) {
      w.key(name).begin_object().key("value").string(cap.value.to_string());
      if (const auto& p = cap.request_policy) {
        w.key("requestPolicy").begin_object();
        if (p->default_value) w.key("default").string(p->default_value->to_string());
        if (!p->valid_values.empty()) {
          w.key("validValues").begin_array();
          for (const auto& v : p->valid_values) w.string(v.to_string());
          w.end_array();
        }
        if (const auto& r = p->valid_range) {
          w.key("validRange").begin_object().key("min").string(r->min.to_string());
          if (r->max) w.key("max").string(r->max->to_string());
          if (r->step) w.key("step").string(r->step->to_string());
          w.end_object();
        }
        w.end_object();
      }
      w.end_object();
    }
    w.end_object();
  }
  if (!d.consumes_counters.empty()) {
    w.key("consumesCounters").begin_array();
    for (const auto& c : d.consumes_counters) {
      w.begin_object().key("counterSet").string(c.counter_set).key("counters");
      counters(w, c.counters);
      if (!c.compatibility_groups.empty()) {
        w.key("compatibilityGroups").begin_array();
        for (const auto& g : c.compatibility_groups) w.string(g);
        w.end_array();
      }
      w.end_object();
    }
    w.end_array();
  }
  if (d.node_scope) scope(w, *d.node_scope);
  if (!d.taints.empty()) {
    w.key("taints").begin_array();
    for (const auto& t : d.taints) {
      w.begin_object().key("key").string(t.key);
      if (!t.value.empty()) w.key("value").string(t.value);
      w.key("effect").string(t.effect).end_object();
    }
    w.end_array();
  }
  if (d.binds_to_node) w.key("bindsToNode").boolean(true);
  if (!d.binding_conditions.empty()) {
    w.key("bindingConditions");
    strings(w, d.binding_conditions);
  }
  if (!d.binding_failure_conditions.empty()) {
    w.key("bindingFailureConditions");
    strings(w, d.binding_failure_conditions);
  }
  if (d.allow_multiple_allocations) w.key("allowMultipleAllocations").boolean(true);
  w.end_object();
}

void slice(JsonWriter& w, const ResourceSlice& s) {
  w.begin_object()
      .key("apiVersion")
      .string("resource.k8s.io/v1")
      .key("kind")
      .string("ResourceSlice");
  w.key("metadata").begin_object().key("name").string(s.metadata.name).end_object();
  w.key("spec").begin_object().key("driver").string(s.driver);
  w.key("pool")
      .begin_object()
      .key("name")
      .string(s.pool.name)
      .key("generation")
      .number(s.pool.generation)
      .key("resourceSliceCount")
      .number(s.pool.resource_slice_count)
      .end_object();
  scope(w, s.scope);
  if (s.per_device_node_selection) w.key("perDeviceNodeSelection").boolean(true);
  if (!s.devices.empty()) {
    w.key("devices").begin_array();
    for (const auto& d : s.devices) device(w, d);
    w.end_array();
  }
  if (!s.shared_counters.empty()) {
    w.key("sharedCounters").begin_array();
    for (const auto& c : s.shared_counters) {
      w.begin_object().key("name").string(c.name).key("counters");
      counters(w, c.counters);
      w.end_object();
    }
    w.end_array();
  }
  w.end_object().end_object();
}

}  // namespace

std::string encode_resource_slice(const ResourceSlice& s) {
  JsonWriter w;
  slice(w, s);
  return w.take();
}

std::string encode_resource_slice_list(const std::vector<ResourceSlice>& slices) {
  JsonWriter w;
  w.begin_object().key("apiVersion").string("v1").key("kind").string("List").key("items");
  w.begin_array();
  for (const auto& s : slices) slice(w, s);
  w.end_array().end_object();
  return w.take();
}

}  // namespace hamisim::dra
