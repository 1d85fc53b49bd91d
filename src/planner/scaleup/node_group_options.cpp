// Node group options: each group's template (warm from a ready node, else cold), the upcoming
// nodes CA counts as already there, and which groups may grow at all.
#include "planner/scaleup/device_detail.h"
#include "planner/scaleup/planner.h"

#include <algorithm>

namespace hamisim::planner::scaleup::detail {

// The ResourceSlices a fresh node of the group publishes: warm, what the sample publishes
// (nothing is consumed yet, since consumption lives in claims); cold, what the group's device
// profile describes in DRA form.
framework::NodeSlices Planner::template_slices(const nodegroups::GroupTemplate& tmpl,
                                               const nodegroups::NodeGroupSpec& spec) const {
  const std::string& name = tmpl.node.metadata.name;
  if (tmpl.source == nodegroups::GroupTemplate::Source::kWarm) {
    return snap_.dra()
               ? framework::slices_for_copy(snap_.dra()->node_slices(tmpl.sample_node), name, name)
               : nullptr;
  }
  if (spec.device_profile.empty()) return nullptr;
  const profile::DeviceProfile* p = env_.cache->engine().profiles().find(spec.device_profile);
  if (p == nullptr || p->dra_slices.empty()) return nullptr;
  return framework::slices_for_copy(
      std::make_shared<const std::vector<dra::ResourceSlice>>(p->dra_slices), name, name);
}

void Planner::build_templates() {
  states_.resize(in_.node_groups.groups.size());
  for (size_t i = 0; i < in_.node_groups.groups.size(); ++i) {
    const auto& spec = in_.node_groups.groups[i];
    GroupState& g = states_[i];
    g.spec = &spec;
    nodegroups::TemplateInput ti;
    ti.group = &spec;
    for (const model::Node& node : in_.nodes) {
      if (nodegroups::is_member(spec, node)) ti.members.push_back(&node);
    }
    ti.pods = &in_.pods;
    ti.index = static_cast<int64_t>(i);
    g.target = spec.target_size.value_or(static_cast<int64_t>(ti.members.size()));
    g.tmpl = nodegroups::build_template(ti);
    if (g.tmpl) g.slices = template_slices(*g.tmpl, spec);

    GroupEvaluation e;
    e.name = spec.name;
    e.min_size = spec.min_size;
    e.max_size = spec.max_size;
    e.target_size = g.target;
    e.members = static_cast<int64_t>(ti.members.size());
    e.device_profile = spec.device_profile;
    if (g.tmpl) {
      e.template_source = g.tmpl->source;
      e.template_node = g.tmpl->node.metadata.name;
      e.sample_node = g.tmpl->sample_node;
      const fit::DescriptionResult& inv = env_.cache->description(g.tmpl->node);
      switch (inv.state) {
        case fit::DescriptionResult::State::kOk:
          e.device_source = std::string(fit::to_string(inv.description.source));
          if (!inv.description.profile.empty()) e.device_profile = inv.description.profile;
          for (const auto& note : inv.description.notes) {
            plan_.warnings.push_back("node group " + spec.name + ": " + note);
          }
          break;
        case fit::DescriptionResult::State::kNoDescription:
          e.device_source = "none";
          break;
        case fit::DescriptionResult::State::kMalformed:
          e.device_source = "malformed: " + inv.message;
          break;
        case fit::DescriptionResult::State::kRejected:
          e.device_source = "rejected: " + inv.message;
          break;
      }
    }
    plan_.groups.push_back(std::move(e));
  }
}

// CA's upcoming nodes: a group whose target exceeds its registered members has nodes on
// the way; they are template copies that pending pods may already be counted against.
Status Planner::add_upcoming_nodes() {
  for (size_t i = 0; i < states_.size(); ++i) {
    GroupState& g = states_[i];
    const int64_t upcoming = g.target - plan_.groups[i].members;
    if (!g.tmpl || upcoming <= 0) continue;
    for (int64_t k = 0; k < upcoming; ++k) {
      model::Node copy = g.tmpl->node;
      copy.metadata.name += "-upcoming-" + std::to_string(k);
      copy.metadata.uid = copy.metadata.name;
      copy.metadata.labels["kubernetes.io/hostname"] = copy.metadata.name;
      copy.metadata.annotations["cluster-autoscaler.k8s.io/upcoming-node"] = "true";
      const std::string name = copy.metadata.name;
      auto slices = framework::slices_for_copy(g.slices, name, "upcoming-" + std::to_string(k));
      if (Status s = snap_.add_node(std::move(copy), std::move(slices)); !s) return s;
      for (model::Pod pod : g.tmpl->pods) {
        pod.metadata.name += "-upcoming-" + std::to_string(k);
        pod.spec.node_name = name;
        if (Status s = snap_.add_pod(std::move(pod), name); !s) return s;
      }
    }
  }
  return ok_status();
}

// filterValidScaleUpNodeGroups.
void Planner::validate_groups() {
  for (size_t i = 0; i < states_.size(); ++i) {
    GroupState& g = states_[i];
    GroupEvaluation& e = plan_.groups[i];
    if (g.target >= g.spec->max_size) {
      e.skip_reason = "max size reached (target " + std::to_string(g.target) + ", max " +
                      std::to_string(g.spec->max_size) + ")";
    } else if (!g.tmpl) {
      e.skip_reason = "no template: the group has no member in the snapshot and no `template`";
    } else {
      g.valid = true;
    }
  }
}

// SchedulablePodGroups: each equivalence group's exemplar against each valid template.
void Planner::check_templates() {
  for (size_t i = 0; i < states_.size(); ++i) {
    GroupState& g = states_[i];
    if (!g.valid) continue;
    GroupEvaluation& e = plan_.groups[i];
    snap_.fork();
    const std::string name = g.tmpl->node.metadata.name;
    bool added = snap_.add_node(g.tmpl->node, g.slices).ok();
    for (const model::Pod& p : g.tmpl->pods) added = added && snap_.add_pod(p, name).ok();
    for (size_t k = 0; added && k < groups_.size(); ++k) {
      const PodInfo& exemplar = *groups_[k].pods[0];
      estimator::FitResult r = fitter_.fit_on(exemplar, snap_, name);
      if (r.fits()) {
        g.schedulable.push_back(k);
        e.schedulable_pods.push_back(exemplar.key());
      } else {
        const std::string why = describe(r.status);
        e.rejected_pods[exemplar.key()] = why;
        if (r.status.plugin == env_.devices->plugin_name()) {
          std::string detail = device_rejection_detail(env_.cache->engine(), exemplar.pod(),
                                                       g.tmpl->node, g.tmpl->pods);
          if (!detail.empty()) e.rejected_details[exemplar.key()] = std::move(detail);
        }
        for (const auto& pod : groups_[k].pods) outcome(*pod).group_reasons[e.name] = why;
      }
    }
    (void)snap_.revert();
    if (!added) e.skip_reason = "template node could not be simulated";
    if (!added) g.valid = false;
  }
}

}  // namespace hamisim::planner::scaleup::detail
