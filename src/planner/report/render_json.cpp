#include "planner/report/report.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/json_writer.h"
#include "planner/report/report_text.h"

namespace hamisim::planner::report {

namespace {

using model::JsonWriter;

void strings(JsonWriter& w, const std::vector<std::string>& items) {
  w.begin_array();
  for (const auto& s : items) w.string(s);
  w.end_array();
}

// std::map keeps its keys sorted by bytes, which is the order the schema promises.
void string_map(JsonWriter& w, const std::map<std::string, std::string, std::less<>>& m) {
  w.begin_object();
  for (const auto& [k, v] : m) w.key(k).string(v);
  w.end_object();
}

void json_group(JsonWriter& w, const GroupEvaluation& g) {
  w.begin_object();
  w.key("name").string(g.name);
  w.key("minSize").number(g.min_size);
  w.key("maxSize").number(g.max_size);
  w.key("targetSize").number(g.target_size);
  w.key("members").number(g.members);
  w.key("templateSource");
  if (g.template_source) {
    w.string(template_source_word(g.template_source));
  } else {
    w.null();
  }
  w.key("templateNode").string(g.template_node);
  w.key("sampleNode").string(g.sample_node);
  w.key("deviceSource").string(g.device_source);
  w.key("deviceProfile").string(g.device_profile);
  w.key("skipReason").string(g.skip_reason);
  w.key("schedulablePods");
  strings(w, g.schedulable_pods);
  w.key("rejectedPods");
  string_map(w, g.rejected_pods);
  w.key("rejectedPodDetails");
  string_map(w, g.rejected_details);
  w.key("estimatedNodes");
  if (g.estimated_nodes) {
    w.number(*g.estimated_nodes);
  } else {
    w.null();
  }
  w.key("estimatedPods");
  strings(w, g.estimated_pods);
  w.key("unplaced").begin_array();
  for (const auto& u : g.unplaced) {
    w.begin_object().key("pod").string(u.pod).key("reason").string(u.reason).end_object();
  }
  w.end_array();
  w.key("similarGroups");
  strings(w, g.similar_groups);
  w.key("option").boolean(g.option);
  w.key("chosen").boolean(g.chosen);
  w.key("expanderNote").string(g.expander_note);
  w.end_object();
}

void json_pod(JsonWriter& w, const PodOutcome& p) {
  w.begin_object();
  w.key("pod").string(p.pod);
  w.key("owner").string(p.owner);
  w.key("state").string(scaleup::to_string(p.state));
  w.key("node").string(p.node);
  w.key("allocations");
  string_map(w, p.allocations);
  w.key("reason").string(p.reason);
  w.key("groupReasons");
  string_map(w, p.group_reasons);
  w.end_object();
}

void json_scale_ups(JsonWriter& w, const std::vector<ScaleUp>& scale_ups) {
  w.begin_array();
  for (const ScaleUp& s : scale_ups) {
    w.begin_object();
    w.key("group").string(s.group);
    w.key("currentSize").number(s.current_size);
    w.key("newSize").number(s.new_size);
    w.key("delta").number(s.delta());
    w.end_object();
  }
  w.end_array();
}

void json_optional(JsonWriter& w, const std::optional<int64_t>& n) {
  if (n) {
    w.number(*n);
  } else {
    w.null();
  }
}

// Each group's counts in this plan and, under the keys given, in the other plan.
void json_group_counts(JsonWriter& w, const std::vector<scaleup::GroupCounts>& groups,
                       std::string_view other_estimated_key, std::string_view other_new_key) {
  w.begin_array();
  for (const auto& g : groups) {
    w.begin_object();
    w.key("name").string(g.name);
    w.key("estimatedNodes");
    json_optional(w, g.estimated_nodes);
    w.key(other_estimated_key);
    json_optional(w, g.other_estimated_nodes);
    w.key("newNodes").number(g.new_nodes);
    w.key(other_new_key).number(g.other_new_nodes);
    w.end_object();
  }
  w.end_array();
}

// The keys a plan compared with this one starts with: its decision, summary, scale-ups and the
// groups' counts in both (the other's under the keys given). Opens the object.
template <class Other>
void json_other_plan(JsonWriter& w, const Other& o, std::string_view other_estimated_key,
                     std::string_view other_new_key) {
  w.begin_object();
  w.key("decision").string(scaleup::to_string(o.decision));
  w.key("summary").string(o.summary);
  w.key("scaleUps");
  json_scale_ups(w, o.scale_ups);
  w.key("groups");
  json_group_counts(w, o.groups, other_estimated_key, other_new_key);
}

void json_mode_comparison(JsonWriter& w, const scaleup::ModeComparison& m) {
  json_other_plan(w, m, "draEstimatedNodes", "draNewNodes");
  w.key("converted")
      .begin_object()
      .key("nodes")
      .number(m.nodes_converted)
      .key("deviceProfiles")
      .number(m.profiles_converted)
      .key("pendingPods")
      .number(m.pending_pods_converted)
      .key("runningPods")
      .number(m.running_pods_converted)
      .end_object();
  w.key("sameOutcome").number(m.same_outcome);
  w.key("pods").begin_array();
  for (const auto& d : m.pods) {
    w.begin_object();
    w.key("pod").string(d.pod);
    w.key("state").string(scaleup::to_string(d.state));
    w.key("node").string(d.node);
    w.key("draState");
    if (d.dra_state) {
      w.string(scaleup::to_string(*d.dra_state));
    } else {
      w.string("refused");
    }
    w.key("draNode").string(d.dra_node);
    w.key("why").string(d.why);
    w.end_object();
  }
  w.end_array();
  w.key("notModelled");
  strings(w, m.not_modelled);
  w.key("warnings");
  strings(w, m.warnings);
  w.end_object();
}

void json_unpatched_ca(JsonWriter& w, const UnpatchedCaPlan& u) {
  json_other_plan(w, u, "unpatchedEstimatedNodes", "unpatchedNewNodes");
  w.key("leftPending").begin_array();
  for (const auto& l : u.left_pending) {
    w.begin_object().key("pod").string(l.pod).key("reason").string(l.reason).end_object();
  }
  w.end_array();
  w.end_object();
}

void json_node(JsonWriter& w, const PlannedNode& n) {
  w.begin_object();
  w.key("name").string(n.name);
  w.key("group").string(n.group);
  w.key("pods");
  strings(w, n.pods);
  w.key("cpuRequestedMilli").number(n.cpu_requested_milli);
  w.key("cpuAllocatableMilli").number(n.cpu_allocatable_milli);
  w.key("memoryRequestedBytes").number(n.memory_requested);
  w.key("memoryAllocatableBytes").number(n.memory_allocatable);
  w.key("devices").begin_array();
  for (const DeviceUse& d : n.devices) {
    w.begin_object();
    w.key("id").string(d.id);
    w.key("type").string(d.type);
    w.key("usedMemoryMiB").number(d.used_memory);
    w.key("totalMemoryMiB").number(d.total_memory);
    w.key("usedCores").number(d.used_cores);
    w.key("totalCores").number(d.total_cores);
    w.key("usedSlots").number(d.used_slots);
    w.key("totalSlots").number(d.total_slots);
    w.end_object();
  }
  w.end_array();
  w.key("draDevices").begin_array();
  for (const auto& d : n.dra_devices) {
    w.begin_object();
    w.key("driver").string(d.driver);
    w.key("pool").string(d.pool);
    w.key("device").string(d.device);
    w.key("shareable").boolean(d.shareable);
    w.key("capacity").begin_array();
    for (const auto& c : d.capacity) {
      w.begin_object();
      w.key("name").string(c.name);
      w.key("consumed").string(c.consumed.to_string());
      w.key("total").string(c.total.to_string());
      w.end_object();
    }
    w.end_array();
    w.key("claims");
    strings(w, d.claims);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace

std::string render_json(const Plan& plan, const Provenance* provenance) {
  JsonWriter w;
  w.begin_object();
  w.key("apiVersion").string(kPlanApiVersion);
  w.key("kind").string(kPlanKind);
  w.key("decision").string(scaleup::to_string(plan.decision));
  w.key("summary").string(plan.summary);
  w.key("scaleUps");
  json_scale_ups(w, plan.scale_ups);
  w.key("warnings");
  strings(w, plan.warnings);
  w.key("extenderFailed").boolean(!plan.extender_failures.empty());
  w.key("extenderFailures");
  strings(w, plan.extender_failures);
  w.key("clusterNodes").number(plan.cluster_nodes);
  w.key("clusterPods").number(plan.cluster_pods);
  w.key("deviceStage").string(plan.device_stage);
  w.key("expander").string(plan.expander);
  w.key("groups").begin_array();
  for (const GroupEvaluation& g : plan.groups) json_group(w, g);
  w.end_array();
  w.key("pods").begin_array();
  for (const PodOutcome& p : plan.pods) json_pod(w, p);
  w.end_array();
  w.key("newNodes").begin_array();
  for (const PlannedNode& n : plan.new_nodes) json_node(w, n);
  w.end_array();
  w.key("unpatchedCa");
  if (plan.unpatched_ca) {
    json_unpatched_ca(w, *plan.unpatched_ca);
  } else {
    w.null();
  }
  w.key("modeComparison");
  if (plan.mode_comparison) {
    json_mode_comparison(w, *plan.mode_comparison);
  } else {
    w.null();
  }
  // Last: what varies from run to run (the time) comes after everything that does not.
  w.key("provenance");
  if (provenance != nullptr) {
    w.begin_object();
    w.key("version").string(provenance->version);
    w.key("time").string(provenance->time);
    w.key("inputs").begin_array();
    for (const auto& in : provenance->inputs) {
      w.begin_object();
      w.key("flag").string(in.flag);
      w.key("path").string(in.path);
      w.key("sha256").string(in.sha256);
      w.end_object();
    }
    w.end_array();
    w.key("command").string(provenance->command);
    w.end_object();
  } else {
    w.null();
  }
  w.end_object();
  std::string out = w.take();
  out += '\n';
  return out;
}

}  // namespace hamisim::planner::report
