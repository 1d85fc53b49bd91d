// Node group options: each group's template (warm from a ready node, else cold), the upcoming
// nodes CA counts as already there, which groups may grow at all, and which pods each valid
// group's empty template takes.
#include <algorithm>

#include "planner/scaleup/device_detail.h"
#include "planner/scaleup/phases.h"

namespace hamisim::planner::scaleup::detail {
namespace {

// The ResourceSlices a fresh node of the group publishes: warm, what the sample publishes
// (nothing is consumed yet, since consumption lives in claims); cold, what the group's device
// profile describes in DRA form.
framework::NodeSlices template_slices(const nodegroups::GroupTemplate& tmpl,
                                      const nodegroups::NodeGroupSpec& spec,
                                      const Simulation& sim) {
  const std::string& name = tmpl.node.metadata.name;
  if (tmpl.source == nodegroups::GroupTemplate::Source::kWarm) {
    const auto* dra = sim.snapshot.dra();
    return dra ? framework::slices_for_copy(dra->node_slices(tmpl.sample_node), name, name)
               : nullptr;
  }
  if (spec.device_profile.empty()) return nullptr;
  const profile::DeviceProfile* p = sim.env.cache->engine().profiles().find(spec.device_profile);
  if (p == nullptr || p->dra_slices.empty()) return nullptr;
  return framework::slices_for_copy(
      std::make_shared<const std::vector<dra::ResourceSlice>>(p->dra_slices), name, name);
}

// Where the template's devices come from, as the report shows it.
void describe_template_devices(NodeGroupOption& g, DeviceCache& cache) {
  const fit::DescriptionResult& d = cache.description(g.tmpl->node);
  switch (d.state) {
    case fit::DescriptionResult::State::kOk:
      g.device_source = std::string(fit::to_string(d.description.source));
      if (!d.description.profile.empty()) g.device_profile = d.description.profile;
      g.notes = d.description.notes;
      break;
    case fit::DescriptionResult::State::kNoDescription:
      g.device_source = "none";
      break;
    case fit::DescriptionResult::State::kMalformed:
      g.device_source = "malformed: " + d.message;
      break;
    case fit::DescriptionResult::State::kRejected:
      g.device_source = "rejected: " + d.message;
      break;
  }
}

std::string describe(const FilterStatus& st) {
  std::string out = st.plugin.empty() ? std::string("rejected") : st.plugin;
  for (size_t i = 0; i < st.reasons.size(); ++i) out += (i == 0 ? ": " : "; ") + st.reasons[i];
  return out;
}

}  // namespace

std::vector<NodeGroupOption> node_group_options(const PlanInput& in, const Simulation& sim) {
  std::vector<NodeGroupOption> out;
  out.reserve(in.node_groups.groups.size());
  for (size_t i = 0; i < in.node_groups.groups.size(); ++i) {
    const auto& spec = in.node_groups.groups[i];
    NodeGroupOption& g = out.emplace_back();
    g.spec = &spec;
    g.index = static_cast<int64_t>(i);
    g.device_profile = spec.device_profile;
    nodegroups::TemplateInput ti;
    ti.group = &spec;
    for (const model::Node& node : in.nodes) {
      if (nodegroups::is_member(spec, node)) ti.members.push_back(&node);
    }
    ti.pods = &in.pods;
    ti.index = g.index;
    g.members = static_cast<int64_t>(ti.members.size());
    g.target = spec.target_size.value_or(g.members);
    g.tmpl = nodegroups::build_template(ti);
    if (!g.tmpl) continue;
    g.slices = template_slices(*g.tmpl, spec, sim);
    describe_template_devices(g, *sim.env.cache);
  }
  return out;
}

const NodeGroupOption* find_group(const std::vector<NodeGroupOption>& groups,
                                  std::string_view name) {
  for (const auto& g : groups) {
    if (g.name() == name) return &g;
  }
  return nullptr;
}

// A group whose target exceeds its registered members has nodes on the way; they are
// template copies that pending pods may already be counted against.
Status add_upcoming_nodes(const std::vector<NodeGroupOption>& groups, ClusterSnapshot& snapshot) {
  for (const NodeGroupOption& g : groups) {
    const int64_t upcoming = g.target - g.members;
    if (!g.tmpl || upcoming <= 0) continue;
    for (int64_t k = 0; k < upcoming; ++k) {
      model::Node copy = g.tmpl->node;
      copy.metadata.name += "-upcoming-" + std::to_string(k);
      copy.metadata.uid = copy.metadata.name;
      copy.metadata.labels["kubernetes.io/hostname"] = copy.metadata.name;
      copy.metadata.annotations["cluster-autoscaler.k8s.io/upcoming-node"] = "true";
      const std::string name = copy.metadata.name;
      auto slices = framework::slices_for_copy(g.slices, name, "upcoming-" + std::to_string(k));
      if (Status s = snapshot.add_node(std::move(copy), std::move(slices)); !s) return s;
      for (model::Pod pod : g.tmpl->pods) {
        pod.metadata.name += "-upcoming-" + std::to_string(k);
        pod.spec.node_name = name;
        if (Status s = snapshot.add_pod(std::move(pod), name); !s) return s;
      }
    }
  }
  return ok_status();
}

std::string invalid_reason(const NodeGroupOption& g) {
  if (g.target >= g.spec->max_size) {
    return "max size reached (target " + std::to_string(g.target) + ", max " +
           std::to_string(g.spec->max_size) + ")";
  }
  if (!g.tmpl) return "no template: the group has no member in the snapshot and no `template`";
  return {};
}

TemplateFit schedulable_pod_groups(const NodeGroupOption& g,
                                   const std::vector<EquivalenceGroup>& pod_groups,
                                   Simulation& sim) {
  TemplateFit out;
  ClusterSnapshot& snap = sim.snapshot;
  snap.fork();
  const std::string name = g.tmpl->node.metadata.name;
  out.simulated = snap.add_node(g.tmpl->node, g.slices).ok();
  for (const model::Pod& p : g.tmpl->pods) {
    out.simulated = out.simulated && snap.add_pod(p, name).ok();
  }
  for (size_t k = 0; out.simulated && k < pod_groups.size(); ++k) {
    const PodInfo& exemplar = *pod_groups[k].pods[0];
    estimator::FitResult r = sim.fitter().fit_on(exemplar, snap, name);
    if (r.fits()) {
      out.schedulable.push_back(k);
      continue;
    }
    TemplateFit::Rejection& rej = out.rejected.emplace_back();
    rej.pod_group = k;
    rej.why = describe(r.status);
    if (r.status.plugin == sim.env.devices->plugin_name()) {
      rej.detail = device_rejection_detail(sim.env.cache->engine(), exemplar.pod(), g.tmpl->node,
                                           g.tmpl->pods);
    }
  }
  (void)snap.revert();
  return out;
}

}  // namespace hamisim::planner::scaleup::detail
