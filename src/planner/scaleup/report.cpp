// The report: the Plan built from a finished Decision. Every node group's evaluation, every
// pending pod's outcome, the warnings in the order the phases raised them, and the summary.
#include <algorithm>
#include <set>

#include "planner/scaleup/phases.h"

namespace hamisim::planner::scaleup::detail {
namespace {

GroupEvaluation evaluate(const NodeGroupOption& g, const Decision& d) {
  GroupEvaluation e;
  e.name = g.name();
  e.min_size = g.spec->min_size;
  e.max_size = g.spec->max_size;
  e.target_size = g.target;
  e.members = g.members;
  e.device_profile = g.device_profile;
  if (g.tmpl) {
    e.template_source = g.tmpl->source;
    e.template_node = g.tmpl->node.metadata.name;
    e.sample_node = g.tmpl->sample_node;
    e.device_source = g.device_source;
  }
  if (auto it = d.skipped.find(e.name); it != d.skipped.end()) e.skip_reason = it->second;
  if (auto it = d.fits.find(e.name); it != d.fits.end()) {
    for (size_t k : it->second.schedulable) {
      e.schedulable_pods.push_back(d.pod_groups[k].pods[0]->key());
    }
    for (const TemplateFit::Rejection& r : it->second.rejected) {
      const std::string& exemplar = d.pod_groups[r.pod_group].pods[0]->key();
      e.rejected_pods[exemplar] = r.why;
      if (!r.detail.empty()) e.rejected_details[exemplar] = r.detail;
    }
  }
  if (auto it = d.estimates.find(e.name); it != d.estimates.end()) {
    const GroupEstimate& ge = it->second;
    e.similar_groups = ge.similar_groups;
    if (ge.estimate) {
      e.estimated_nodes = ge.estimate->node_count;
      for (const auto& p : ge.estimate->placements) e.estimated_pods.push_back(p.pod);
      e.unplaced = ge.estimate->unplaced;
      e.option = !ge.estimate->placements.empty() && ge.estimate->node_count > 0;
    }
  }
  e.chosen = d.chosen == &g;
  if (auto it = d.choice.notes.find(e.name); it != d.choice.notes.end()) {
    e.expander_note = it->second;
  }
  if (e.option && !e.chosen) {
    e.expander_note +=
        e.expander_note.empty() ? "not chosen by the expander" : "; not chosen by the expander";
  }
  return e;
}

// The outcomes of the pods left after filter-out-schedulable: placed on a new node of the
// chosen group when the plan scales up; else awaiting evaluation when some group could take
// them, else helped by no group.
void decide_remaining(const Decision& d, std::vector<PodOutcome>& pods) {
  // Pending pods have distinct names (check_unique_pending).
  std::map<std::string_view, PodOutcome*, std::less<>> by_key;
  for (size_t i : d.pending.remaining_outcomes) by_key[pods[i].pod] = &pods[i];
  for (const NodeGroupOption& g : d.groups) {
    auto fit = d.fits.find(g.name());
    if (fit == d.fits.end()) continue;
    for (const TemplateFit::Rejection& r : fit->second.rejected) {
      for (const auto& pod : d.pod_groups[r.pod_group].pods) {
        by_key.at(pod->key())->group_reasons[g.name()] = r.why;
      }
    }
  }
  std::set<std::string_view, std::less<>> triggered;
  if (d.kind == Plan::Decision::kScaleUp) {
    for (const auto& p : d.estimates.at(d.chosen->name()).estimate->placements) {
      PodOutcome& out = *by_key.at(p.pod);
      out.state = PodOutcome::State::kTriggersScaleUp;
      out.node = p.node;
      if (p.allocations) out.allocations = *p.allocations;
      triggered.insert(out.pod);
    }
  }
  // The first group (file order) whose estimate could not place the pod says why.
  std::map<std::string_view, std::string, std::less<>> unplaced_reason;
  for (const NodeGroupOption& g : d.groups) {
    auto it = d.estimates.find(g.name());
    if (it == d.estimates.end() || !it->second.estimate) continue;
    for (const auto& u : it->second.estimate->unplaced) {
      unplaced_reason.emplace(u.pod, g.name() + ": " + u.reason);
    }
  }
  for (size_t k = 0; k < d.pod_groups.size(); ++k) {
    const bool schedulable_somewhere = std::any_of(d.fits.begin(), d.fits.end(), [&](auto& f) {
      const auto& s = f.second.schedulable;
      return std::find(s.begin(), s.end(), k) != s.end();
    });
    for (const auto& pod : d.pod_groups[k].pods) {
      if (triggered.count(pod->key())) continue;
      PodOutcome& out = *by_key.at(pod->key());
      if (schedulable_somewhere) {
        out.state = PodOutcome::State::kAwaitsEvaluation;
        auto it = unplaced_reason.find(pod->key());
        out.reason = it != unplaced_reason.end() ? "not placed by the estimate: " + it->second
                                                 : "fits a node group the expander did not choose";
      } else {
        out.state = PodOutcome::State::kNoScaleUpHelps;
        out.reason = out.group_reasons.empty() ? "no node group can be scaled up"
                                               : "no node group's template can take it";
      }
    }
  }
}

// Adds what `from` holds that `to` does not yet.
void add_new(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const auto& m : from) {
    if (std::find(to.begin(), to.end(), m) == to.end()) to.push_back(m);
  }
}

std::vector<std::string> warnings(const Decision& d) {
  std::vector<std::string> out = d.cluster.warnings;
  for (const NodeGroupOption& g : d.groups) {
    for (const auto& note : g.notes) out.push_back("node group " + g.name() + ": " + note);
  }
  add_new(out, d.after_filter.warnings);
  for (const NodeGroupOption& g : d.groups) {
    auto it = d.estimates.find(g.name());
    if (it == d.estimates.end() || it->second.estimate) continue;
    out.push_back("node group " + g.name() + ": estimation failed: " + it->second.failure);
  }
  add_new(out, d.after_estimation.warnings);
  out.insert(out.end(), d.choice.warnings.begin(), d.choice.warnings.end());
  out.insert(out.end(), d.scale_up.warnings.begin(), d.scale_up.warnings.end());
  out.insert(out.end(), d.new_nodes.warnings.begin(), d.new_nodes.warnings.end());
  add_new(out, d.at_end.warnings);
  return out;
}

std::string summary(const Decision& d, const std::vector<PodOutcome>& pods) {
  switch (d.kind) {
    case Plan::Decision::kNoScaleUpNeeded:
      return d.pending.count == 0 ? "no pending pods: no scale-up needed"
                                  : "every pending pod fits an existing node or cannot be "
                                    "helped by a new one: no scale-up needed";
    case Plan::Decision::kNoScaleUpPossible:
      return "no scale-up: " + d.why_not;
    case Plan::Decision::kScaleUp:
      break;
  }
  const std::vector<ScaleUp>& ups = d.scale_up.scale_ups;
  std::string out = "scale up " + d.chosen->name() + " by " + nodes_word(ups[0].delta()) + " (" +
                    std::to_string(ups[0].current_size) + " -> " + std::to_string(ups[0].new_size) +
                    ")";
  if (ups.size() > 1) {
    int64_t total = 0;
    for (const auto& s : ups) total += s.delta();
    out += ", balanced with " + std::to_string(ups.size() - 1) + " similar group(s), " +
           nodes_word(total) + " in all";
  }
  const size_t placed = std::count_if(pods.begin(), pods.end(), [](const PodOutcome& p) {
    return p.state == PodOutcome::State::kTriggersScaleUp;
  });
  return out + ": " + pods_word(placed) + " placed on new nodes";
}

}  // namespace

Plan report(const PlanInput& in, const PlannerOptions& o, std::string device_stage,
            const Decision& d) {
  Plan plan;
  plan.decision = d.kind;
  plan.device_stage = std::move(device_stage);
  plan.expander = o.expander;
  plan.cluster_nodes = static_cast<int64_t>(in.nodes.size());
  plan.cluster_pods = static_cast<int64_t>(in.pods.size());
  for (const NodeGroupOption& g : d.groups) plan.groups.push_back(evaluate(g, d));
  plan.pods = d.pending.outcomes;
  decide_remaining(d, plan.pods);
  if (d.kind == Plan::Decision::kScaleUp) {
    plan.scale_ups = d.scale_up.scale_ups;
    plan.new_nodes = d.new_nodes.nodes;
  }
  plan.warnings = warnings(d);
  for (const FitterMessages* m : {&d.after_filter, &d.after_estimation, &d.at_end}) {
    add_new(plan.extender_failures, m->failures);
  }
  plan.summary = summary(d, plan.pods);
  return plan;
}

}  // namespace hamisim::planner::scaleup::detail
