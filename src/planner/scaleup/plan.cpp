#include "planner/scaleup/plan.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <set>

#include "fit/device_compare.h"
#include "fit/quota.h"
#include "planner/expander/expander.h"
#include "planner/framework/pipeline.h"
#include "planner/scaleup/balancing.h"
#include "planner/scaleup/device_fitter.h"
#include "planner/scaleup/equivalence.h"

namespace hamisim::planner::scaleup {

using framework::ClusterSnapshot;
using framework::FilterStatus;
using framework::NodeInfo;
using framework::PodInfo;
using framework::PodInfoPtr;

std::string_view to_string(PodOutcome::State state) {
  switch (state) {
    case PodOutcome::State::kFitsExistingNode:
      return "fits-existing-node";
    case PodOutcome::State::kTriggersScaleUp:
      return "triggers-scale-up";
    case PodOutcome::State::kAwaitsEvaluation:
      return "awaits-evaluation";
    case PodOutcome::State::kNoScaleUpHelps:
      return "no-scale-up-helps";
    case PodOutcome::State::kBlocked:
      return "blocked";
    case PodOutcome::State::kIgnored:
      return "ignored";
  }
  return "unknown";
}

std::string_view to_string(Plan::Decision decision) {
  switch (decision) {
    case Plan::Decision::kNoScaleUpNeeded:
      return "no-scale-up-needed";
    case Plan::Decision::kScaleUp:
      return "scale-up";
    case Plan::Decision::kNoScaleUpPossible:
      return "no-scale-up-possible";
  }
  return "unknown";
}

namespace {

bool terminated(const model::Pod& pod) {
  return pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
}

int32_t priority_of(const model::Pod& pod) {
  return pod.spec.priority.value_or(0);
}

std::string describe(const FilterStatus& st) {
  std::string out = st.plugin.empty() ? std::string("rejected") : st.plugin;
  for (size_t i = 0; i < st.reasons.size(); ++i) out += (i == 0 ? ": " : "; ") + st.reasons[i];
  return out;
}

std::string nodes_word(int64_t n) {
  return n == 1 ? "1 node" : std::to_string(n) + " nodes";
}
std::string pods_word(size_t n) {
  return n == 1 ? "1 pod" : std::to_string(n) + " pods";
}

std::string format_score(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

// Everything the planner keeps about one node group while planning.
struct GroupState {
  const nodegroups::NodeGroupSpec* spec = nullptr;
  std::optional<nodegroups::GroupTemplate> tmpl;
  int64_t target = 0;
  bool valid = false;
  std::vector<size_t> schedulable;  // indices into the equivalence groups
  std::optional<estimator::Estimate> estimate;
};

class Planner {
 public:
  Planner(const PlanInput& in, const PlannerOptions& o, const PlannerEnv& env)
      : in_(in),
        o_(o),
        env_(env),
        pipeline_(framework::FilterPipeline::make_default(env.fit_args)),
        fitter_(pipeline_, *env.devices),
        quota_(env.cache->engine().registry()) {}

  // PlannerEnv::cancelled, remembered once true.
  bool stop_requested() {
    if (!cancelled_ && env_.cancelled && env_.cancelled()) cancelled_ = true;
    return cancelled_;
  }
  static Error cancelled_error() {
    return make_error("cancelled: the plan was abandoned before it finished");
  }

  Result<Plan> run() {
    Result<Plan> plan = decide();
    if (plan && !plan->extender_failures.empty()) {
      // The decision rests on answers that never came: say so where the decision is read.
      plan->summary += "; but an extender failed, so device fit was not checked for some pods (" +
                       plan->extender_failures.front() + ")";
    }
    if (!plan || env_.unpatched_ca == nullptr) return plan;
    plan->unpatched_ca = compare_unpatched_ca(*plan, *env_.unpatched_ca);
    if (stop_requested()) return cancelled_error();
    return plan;
  }

 private:
  Result<Plan> decide() {
    if (Status s = check_unique_pending(); !s) return s.error();
    auto chain = make_chain();
    if (!chain) return chain.error();
    plan_.device_stage = env_.devices->description();
    plan_.cluster_nodes = static_cast<int64_t>(in_.nodes.size());
    plan_.cluster_pods = static_cast<int64_t>(in_.pods.size());
    if (Status s = load_cluster(); !s) return s.error();
    build_templates();
    if (Status s = add_upcoming_nodes(); !s) return s.error();
    std::vector<PodInfoPtr> remaining = filter_out_schedulable();
    remaining_ = remaining;
    if (stop_requested()) return cancelled_error();
    collect_warnings();
    if (remaining.empty()) {
      plan_.decision = Plan::Decision::kNoScaleUpNeeded;
      plan_.summary = pending_ == 0 ? "no pending pods: no scale-up needed"
                                    : "every pending pod fits an existing node or cannot be "
                                      "helped by a new one: no scale-up needed";
      finish_groups();
      return std::move(plan_);
    }
    if (o_.max_nodes_total > 0 && static_cast<int64_t>(ready_nodes_) >= o_.max_nodes_total) {
      return no_scale_up(remaining,
                         "max total nodes reached (" + std::to_string(o_.max_nodes_total) + ")");
    }
    groups_ = build_pod_groups(remaining);
    validate_groups();
    check_templates();
    std::vector<expander::Option> options = estimate_groups();
    if (stop_requested()) return cancelled_error();
    collect_warnings();
    if (options.empty()) return no_scale_up(remaining, "no node group can take any pending pod");
    expander::Warnings w;
    std::optional<expander::Option> best = chain->best_option(options, w);
    for (auto& m : w.messages) plan_.warnings.push_back("expander: " + m);
    if (!best || best->node_count <= 0) {
      return no_scale_up(remaining, "expansion options filtered out");
    }
    return scale_up(*best, remaining);
  }

  // Issue #33: `blind` is this input planned by a CA whose extender calls carry no
  // SimulatedPods. Its node counts next to ours, and what its scale-up leaves pending: the pods
  // no existing node takes (ours, devices counted), packed as the estimator packs them onto the
  // nodes it adds, each group taking the pod groups whose exemplar fits its empty template.
  std::shared_ptr<const UnpatchedCaPlan> compare_unpatched_ca(Plan& plan, const Plan& blind) {
    auto out = std::make_shared<UnpatchedCaPlan>();
    out->decision = blind.decision;
    out->summary = blind.summary;
    out->scale_ups = blind.scale_ups;
    auto added = [](const Plan& p, std::string_view group) {
      int64_t n = 0;
      for (const ScaleUp& s : p.scale_ups) {
        if (s.group == group) n += s.delta();
      }
      return n;
    };
    for (size_t i = 0; i < plan.groups.size(); ++i) {
      UnpatchedCaPlan::GroupCounts c;
      c.name = plan.groups[i].name;
      c.estimated_nodes = plan.groups[i].estimated_nodes;
      if (i < blind.groups.size() && blind.groups[i].name == c.name) {
        c.unpatched_estimated_nodes = blind.groups[i].estimated_nodes;
      }
      c.new_nodes = added(plan, c.name);
      c.unpatched_new_nodes = added(blind, c.name);
      out->groups.push_back(std::move(c));
    }

    std::set<std::string, std::less<>> left;
    for (const PodInfoPtr& pod : remaining_) left.insert(pod->key());
    const estimator::Clock& clock = env_.clock ? *env_.clock : steady_;
    int64_t blind_nodes = 0;
    std::string blind_groups;
    for (const ScaleUp& s : blind.scale_ups) {
      const size_t i = index_of(s.group);
      if (s.delta() <= 0 || i == states_.size() || !states_[i].tmpl) continue;
      blind_nodes += s.delta();
      blind_groups += (blind_groups.empty() ? "" : ", ") + s.group;
      const GroupState& g = states_[i];
      estimator::EstimateInput ei;
      for (size_t k : g.schedulable) {
        estimator::PodGroup pg;
        for (const PodInfoPtr& pod : groups_[k].pods) {
          if (left.count(pod->key())) pg.pods.push_back(pod);
        }
        if (!pg.pods.empty()) ei.groups.push_back(std::move(pg));
      }
      if (ei.groups.empty()) continue;
      ei.template_node = g.tmpl->node;
      ei.template_pods = g.tmpl->pods;
      ei.group = {g.spec->name, g.target, g.target + s.delta()};
      ei.template_index = static_cast<int64_t>(i);
      estimator::StaticLimits limits{s.delta(), o_.max_nodegroup_binpacking_duration,
                                     env_.cancelled};
      estimator::BinpackingEstimator est(fitter_, clock, limits, o_.fastpath_binpacking);
      estimator::Estimate r = est.estimate(snap_, ei);
      if (r.internal_error) {
        plan.warnings.push_back(
            "comparison with a CA that does not send SimulatedPods: node "
            "group " +
            s.group + ": estimation failed: " + r.internal_error->message);
      }
      for (const estimator::Placement& p : r.placements) left.erase(p.pod);
    }
    (void)fitter_.take_warnings();
    (void)fitter_.take_failures();

    std::map<std::string_view, const PodOutcome*> blind_pods;
    for (const PodOutcome& p : blind.pods) blind_pods.emplace(p.pod, &p);
    for (const PodOutcome& p : plan.pods) {
      if (p.state != PodOutcome::State::kTriggersScaleUp &&
          p.state != PodOutcome::State::kFitsExistingNode) {
        continue;
      }
      if (!left.count(p.pod)) continue;
      auto b = blind_pods.find(p.pod);
      const PodOutcome* theirs = b == blind_pods.end() ? nullptr : b->second;
      std::string why;
      if (theirs && theirs->state == PodOutcome::State::kFitsExistingNode) {
        why = "such a CA counts it on existing node " + theirs->node +
              ", whose devices it sees unused, and adds no node for it";
      } else if (blind_nodes == 0) {
        why = "such a CA adds no node (" + blind.summary + ")";
      } else if (theirs && theirs->state == PodOutcome::State::kTriggersScaleUp) {
        why = "such a CA counts it on its new node " + theirs->node +
              "; with devices counted, the " + nodes_word(blind_nodes) + " it adds (" +
              blind_groups + ") have no room for it";
      } else {
        why = "with devices counted, the " + nodes_word(blind_nodes) + " such a CA adds (" +
              blind_groups + ") have no room for it";
      }
      out->left_pending.push_back({p.pod, std::move(why)});
    }
    return out;
  }

  Result<expander::Chain> make_chain() {
    expander::ChainConfig cc;
    cc.seed = o_.seed;
    if (o_.priority_config) {
      auto parsed = expander::PriorityConfig::parse(*o_.priority_config);
      if (!parsed) return make_error("--priority-config: " + parsed.error().message);
      cc.priority = std::move(parsed);
    } else {
      std::vector<std::pair<std::string, int64_t>> priorities;
      for (const auto& g : in_.node_groups.groups) {
        if (g.priority) priorities.emplace_back(g.name, *g.priority);
      }
      if (!priorities.empty()) {
        cc.priority = expander::PriorityConfig::from_node_groups(priorities);
      } else {
        cc.priority = make_error("no --priority-config and no node group has a priority");
      }
    }
    cc.price.cluster_node_count = static_cast<int64_t>(in_.nodes.size());
    auto chain = expander::Chain::make(o_.expander, std::move(cc));
    if (!chain) return make_error("--expander: " + chain.error().message);
    return chain;
  }

  // Pods are identified by namespace/name in every result: two pending pods with one name
  // would make the plan ambiguous.
  Status check_unique_pending() const {
    if (!in_.pending) return ok_status();
    std::set<std::string, std::less<>> seen;
    for (const model::Pod& p : *in_.pending) {
      std::string key = p.metadata.namespace_ + "/" + p.metadata.name;
      if (!seen.insert(key).second) return make_error("pending pod " + key + " appears twice");
    }
    return ok_status();
  }

  // Step 1: nodes and the pods running on them, with their device usage and quota.
  Status load_cluster() {
    for (const model::Node& node : in_.nodes) {
      if (Status s = snap_.add_node(node); !s) {
        return make_error("node \"" + node.metadata.name + "\": " + s.error().message);
      }
      if (nodegroups::is_good_template_candidate(node)) ++ready_nodes_;
    }
    for (const auto& q : in_.quotas) quota_.add_quota(q);
    for (const model::Pod& pod : in_.pods) {
      if (pod.spec.node_name.empty() || terminated(pod)) continue;
      if (priority_of(pod) < o_.expendable_pods_priority_cutoff) continue;
      PodInfoPtr info = PodInfo::make(pod);
      if (snap_.node(pod.spec.node_name) == nullptr) {
        plan_.warnings.push_back("pod " + info->key() + " is bound to node \"" +
                                 pod.spec.node_name + "\", which is not in the snapshot; ignored");
        continue;
      }
      if (Status s = snap_.add_pod(info, pod.spec.node_name); !s) {
        plan_.warnings.push_back("pod " + info->key() + ": " + s.error().message + "; ignored");
        continue;
      }
      quota_.add_usage(pod.metadata.namespace_, env_.cache->allocation(info));
    }
    return ok_status();
  }

  void build_templates() {
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
        const fit::InventoryResult& inv = env_.cache->inventory(g.tmpl->node);
        switch (inv.state) {
          case fit::InventoryResult::State::kOk:
            e.device_source = std::string(fit::to_string(inv.inventory.source));
            if (!inv.inventory.profile.empty()) e.device_profile = inv.inventory.profile;
            for (const auto& note : inv.inventory.notes) {
              plan_.warnings.push_back("node group " + spec.name + ": " + note);
            }
            break;
          case fit::InventoryResult::State::kNoDescription:
            e.device_source = "none";
            break;
          case fit::InventoryResult::State::kMalformed:
            e.device_source = "malformed: " + inv.message;
            break;
          case fit::InventoryResult::State::kRejected:
            e.device_source = "rejected: " + inv.message;
            break;
        }
      }
      plan_.groups.push_back(std::move(e));
    }
  }

  // CA's upcoming nodes: a group whose target exceeds its registered members has nodes on
  // the way; they are template copies that pending pods may already be counted against.
  Status add_upcoming_nodes() {
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
        if (Status s = snap_.add_node(std::move(copy)); !s) return s;
        for (model::Pod pod : g.tmpl->pods) {
          pod.metadata.name += "-upcoming-" + std::to_string(k);
          pod.spec.node_name = name;
          if (Status s = snap_.add_pod(std::move(pod), name); !s) return s;
        }
      }
    }
    return ok_status();
  }

  // Steps 2 and 3: pending pods that fit existing (or upcoming) nodes are placed there, in
  // priority order; pods no new node can help are set aside.
  std::vector<PodInfoPtr> filter_out_schedulable() {
    std::vector<const model::Pod*> pending;
    if (in_.pending) {
      for (const model::Pod& p : *in_.pending) pending.push_back(&p);
    } else {
      for (const model::Pod& p : in_.pods) {
        if (p.spec.node_name.empty() && !terminated(p)) pending.push_back(&p);
      }
    }
    pending_ = pending.size();
    std::stable_sort(pending.begin(), pending.end(), [](const model::Pod* a, const model::Pod* b) {
      return priority_of(*a) > priority_of(*b);
    });
    std::vector<PodInfoPtr> remaining;
    SimilarPodsScheduling similar_pods;
    for (const model::Pod* pod : pending) {
      if (stop_requested()) break;
      PodInfoPtr info = PodInfo::make(*pod);
      PodOutcome out;
      out.pod = info->key();
      if (priority_of(*pod) < o_.expendable_pods_priority_cutoff) {
        out.state = PodOutcome::State::kIgnored;
        out.reason = "expendable: priority " + std::to_string(priority_of(*pod)) +
                     " is below the cutoff " + std::to_string(o_.expendable_pods_priority_cutoff);
        add_outcome(std::move(out));
        continue;
      }
      if (auto over = quota_.admission_check(*pod)) {
        out.state = PodOutcome::State::kBlocked;
        out.reason = "device quota exceeded: " + *over;
        add_outcome(std::move(out));
        continue;
      }
      // CA does not try a pod when a pod of its controller with its labels and spec did not
      // fit.
      const bool similar = similar_pods.similar_unschedulable(*pod);
      estimator::FitResult r;
      if (!similar) r = fitter_.fit_any(*info, snap_, nullptr);
      if (r.fits()) {
        const PodInfoPtr& placed = r.placed_as ? r.placed_as : info;
        if (Status s = snap_.add_pod(placed, r.node); s.ok()) {
          quota_.add_usage(pod->metadata.namespace_, env_.cache->allocation(placed));
          out.state = PodOutcome::State::kFitsExistingNode;
          out.node = r.node;
          out.allocations = std::move(r.allocations);
          add_outcome(std::move(out));
          continue;
        }
      }
      if (nodegroups::is_daemonset_pod(*pod)) {
        out.state = PodOutcome::State::kIgnored;
        out.reason = "DaemonSet pod: a new node brings its own";
        add_outcome(std::move(out));
        continue;
      }
      // The outcome's reason comes from the node groups (mark_unhelped): why no existing node
      // took the pod would name every node.
      outcome_index_[info->key()] = plan_.pods.size();
      if (!similar && !r.fits()) similar_pods.set_unschedulable(*pod);
      add_outcome(std::move(out));
      remaining_by_key_.emplace(info->key(), info);
      remaining.push_back(std::move(info));
    }
    return remaining;
  }

  void add_outcome(PodOutcome out) { plan_.pods.push_back(std::move(out)); }

  PodOutcome& outcome(const PodInfo& pod) { return plan_.pods[outcome_index_.at(pod.key())]; }

  // filterValidScaleUpNodeGroups.
  void validate_groups() {
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
  void check_templates() {
    for (size_t i = 0; i < states_.size(); ++i) {
      GroupState& g = states_[i];
      if (!g.valid) continue;
      GroupEvaluation& e = plan_.groups[i];
      snap_.fork();
      const std::string name = g.tmpl->node.metadata.name;
      bool added = snap_.add_node(g.tmpl->node).ok();
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
          for (const auto& pod : groups_[k].pods) outcome(*pod).group_reasons[e.name] = why;
        }
      }
      (void)snap_.revert();
      if (!added) e.skip_reason = "template node could not be simulated";
      if (!added) g.valid = false;
    }
  }

  std::vector<std::string> similar_groups(size_t i) {
    std::vector<std::string> out;
    if (!o_.balance_similar_node_groups) return out;
    const GroupState& g = states_[i];
    SimilarityOptions so{o_.memory_difference_ratio, o_.max_allocatable_difference_ratio,
                         o_.max_free_difference_ratio};
    for (size_t j = 0; j < states_.size(); ++j) {
      const GroupState& h = states_[j];
      if (j == i || !h.valid) continue;
      if (!similar_templates({&g.tmpl->node, &g.tmpl->pods}, {&h.tmpl->node, &h.tmpl->pods}, so)) {
        continue;
      }
      if (!same_devices(g.tmpl->node, h.tmpl->node)) continue;
      // Every exemplar schedulable on g must be schedulable on h.
      bool all = std::all_of(g.schedulable.begin(), g.schedulable.end(), [&](size_t k) {
        return std::find(h.schedulable.begin(), h.schedulable.end(), k) != h.schedulable.end();
      });
      if (all) out.push_back(h.spec->name);
    }
    return out;
  }

  // HAMi devices are not node capacity CA compares: two groups whose templates describe
  // different devices are not similar (deviation: CA's comparator sees only capacity). The
  // same rule as profile reconciliation (fit::same_devices).
  bool same_devices(const model::Node& a, const model::Node& b) {
    const fit::InventoryResult& ia = env_.cache->inventory(a);
    const fit::InventoryResult& ib = env_.cache->inventory(b);
    return ia.state == ib.state && fit::same_devices(ia.inventory.devices, ib.inventory.devices);
  }

  // ComputeExpansionOption for every valid group with schedulable pods.
  std::vector<expander::Option> estimate_groups() {
    const estimator::Clock& clock = env_.clock ? *env_.clock : steady_;
    estimator::BinpackingTimeLimiter time_limiter(clock, o_.max_binpacking_time);
    time_limiter.init_binpacking();
    estimator::StaticLimits limits{o_.max_nodes_per_scaleup, o_.max_nodegroup_binpacking_duration,
                                   env_.cancelled};
    estimator::BinpackingEstimator est(fitter_, clock, limits, o_.fastpath_binpacking);
    std::vector<expander::Option> options;
    size_t done = 0;
    for (size_t i = 0; i < states_.size(); ++i) {
      GroupState& g = states_[i];
      GroupEvaluation& e = plan_.groups[i];
      if (env_.progress) env_.progress(done++, states_.size());
      if (stop_requested()) break;
      if (!g.valid || g.schedulable.empty()) continue;
      if (time_limiter.stop_binpacking()) {
        e.skip_reason = "binpacking time budget (--max-binpacking-time) spent";
        continue;
      }
      e.similar_groups = similar_groups(i);
      estimator::EstimateInput ei;
      for (size_t k : g.schedulable) ei.groups.push_back({groups_[k].pods});
      ei.template_node = g.tmpl->node;
      ei.template_pods = g.tmpl->pods;
      ei.group = {g.spec->name, g.target, g.spec->max_size};
      ei.template_index = static_cast<int64_t>(i);
      estimator::EstimationContext ctx;
      ctx.max_nodes_total = o_.max_nodes_total;
      ctx.current_node_count = static_cast<int64_t>(snap_.node_count());
      for (const std::string& name : e.similar_groups) {
        const GroupState& h = *state_of(name);
        ctx.similar_groups.push_back({name, h.target, h.spec->max_size});
      }
      ei.context = ctx;
      estimator::Estimate result = est.estimate(snap_, ei);
      if (result.internal_error) {
        plan_.warnings.push_back("node group " + e.name +
                                 ": estimation failed: " + result.internal_error->message);
        continue;
      }
      e.estimated_nodes = result.node_count;
      for (const auto& p : result.placements) e.estimated_pods.push_back(p.pod);
      e.unplaced = result.unplaced;
      g.estimate = std::move(result);
      if (g.estimate->placements.empty() || g.estimate->node_count <= 0) continue;
      e.option = true;
      expander::Option opt;
      opt.node_group = e.name;
      opt.node_count = g.estimate->node_count;
      for (const auto& p : g.estimate->placements) opt.pods.push_back(pod_by_key(p.pod));
      opt.template_node = g.tmpl->node;
      opt.similar_node_groups = e.similar_groups;
      opt.node_price = g.spec->price;
      if (auto waste = expander::LeastWaste::waste_score(opt)) {
        e.expander_note = "least-waste score " + format_score(*waste);
      }
      options.push_back(std::move(opt));
    }
    if (env_.progress) env_.progress(states_.size(), states_.size());
    return options;
  }

  // A pod left after filter-out-schedulable (estimates name pods by key).
  PodInfoPtr pod_by_key(std::string_view key) const {
    auto it = remaining_by_key_.find(key);
    return it == remaining_by_key_.end() ? nullptr : it->second;
  }

  GroupState* state_of(std::string_view name) {
    for (auto& g : states_) {
      if (g.spec->name == name) return &g;
    }
    return nullptr;
  }

  size_t index_of(std::string_view name) const {
    for (size_t i = 0; i < states_.size(); ++i) {
      if (states_[i].spec->name == name) return i;
    }
    return states_.size();
  }

  Result<Plan> scale_up(const expander::Option& best, const std::vector<PodInfoPtr>& remaining) {
    const size_t bi = index_of(best.node_group);
    GroupState& g = states_[bi];
    plan_.groups[bi].chosen = true;
    int64_t new_nodes = best.node_count;
    // GetCappedNewNodeCount.
    const int64_t current = static_cast<int64_t>(snap_.node_count());
    if (o_.max_nodes_total > 0 && new_nodes + current > o_.max_nodes_total) {
      new_nodes = o_.max_nodes_total - current;
      if (new_nodes < 1) {
        return no_scale_up(remaining, "max node total count already reached (" +
                                          std::to_string(o_.max_nodes_total) + ")");
      }
      plan_.warnings.push_back("scale-up capped to " + nodes_word(new_nodes) +
                               " by --max-nodes-total");
    }
    std::vector<BalanceGroup> balance{{g.spec->name, g.target, g.spec->max_size}};
    for (const std::string& name : best.similar_node_groups) {
      const GroupState& h = *state_of(name);
      balance.push_back({name, h.target, h.spec->max_size});
    }
    for (const BalancedScaleUp& b : balance_scale_up(balance, new_nodes)) {
      plan_.scale_ups.push_back({b.name, b.current_size, b.new_size});
    }
    // The chosen group first.
    std::stable_partition(plan_.scale_ups.begin(), plan_.scale_ups.end(),
                          [&](const ScaleUp& s) { return s.group == g.spec->name; });
    if (plan_.scale_ups.empty()) {
      return no_scale_up(remaining, "node group " + g.spec->name + " cannot grow");
    }
    plan_.decision = Plan::Decision::kScaleUp;
    int64_t total = 0;
    for (const auto& s : plan_.scale_ups) total += s.delta();

    std::set<std::string, std::less<>> triggered;
    for (const auto& p : g.estimate->placements) {
      PodOutcome& out = plan_.pods[outcome_index_.at(p.pod)];
      out.state = PodOutcome::State::kTriggersScaleUp;
      out.node = p.node;
      out.allocations = p.allocations;
      out.reason.clear();
      triggered.insert(p.pod);
    }
    mark_unhelped(remaining, &triggered);
    planned_nodes(g);

    plan_.summary = "scale up " + g.spec->name + " by " + nodes_word(plan_.scale_ups[0].delta()) +
                    " (" + std::to_string(plan_.scale_ups[0].current_size) + " -> " +
                    std::to_string(plan_.scale_ups[0].new_size) + ")";
    if (plan_.scale_ups.size() > 1) {
      plan_.summary += ", balanced with " + std::to_string(plan_.scale_ups.size() - 1) +
                       " similar group(s), " + nodes_word(total) + " in all";
    }
    plan_.summary += ": " + pods_word(triggered.size()) + " placed on new nodes";
    finish_groups();
    return std::move(plan_);
  }

  // Pods left pending: awaiting evaluation when some group could take them, else no group
  // helps.
  void mark_unhelped(const std::vector<PodInfoPtr>& remaining,
                     const std::set<std::string, std::less<>>* triggered) {
    std::map<std::string, std::string, std::less<>> unplaced_reason;
    for (const auto& g : states_) {
      if (!g.estimate) continue;
      for (const auto& u : g.estimate->unplaced) {
        unplaced_reason.emplace(u.pod, g.spec->name + ": " + u.reason);
      }
    }
    for (size_t k = 0; k < groups_.size(); ++k) {
      bool schedulable_somewhere = false;
      for (const auto& g : states_) {
        if (std::find(g.schedulable.begin(), g.schedulable.end(), k) != g.schedulable.end()) {
          schedulable_somewhere = true;
        }
      }
      for (const auto& pod : groups_[k].pods) {
        if (triggered && triggered->count(pod->key())) continue;
        PodOutcome& out = outcome(*pod);
        if (schedulable_somewhere) {
          out.state = PodOutcome::State::kAwaitsEvaluation;
          auto it = unplaced_reason.find(pod->key());
          out.reason = it != unplaced_reason.end()
                           ? "not placed by the estimate: " + it->second
                           : "fits a node group the expander did not choose";
        } else {
          out.state = PodOutcome::State::kNoScaleUpHelps;
          out.reason = out.group_reasons.empty() ? "no node group can be scaled up"
                                                 : "no node group's template can take it";
        }
      }
    }
    (void)remaining;
  }

  Result<Plan> no_scale_up(const std::vector<PodInfoPtr>& remaining, std::string why) {
    plan_.decision = Plan::Decision::kNoScaleUpPossible;
    plan_.summary = "no scale-up: " + why;
    if (groups_.empty()) groups_ = build_pod_groups(remaining);
    mark_unhelped(remaining, nullptr);
    for (const auto& pod : remaining) {
      PodOutcome& out = outcome(*pod);
      if (out.state == PodOutcome::State::kNoScaleUpHelps && out.reason.empty()) out.reason = why;
    }
    finish_groups();
    return std::move(plan_);
  }

  // The chosen group's new nodes with what lands on them, replayed in a fork.
  void planned_nodes(const GroupState& g) {
    snap_.fork();
    std::map<std::string, std::vector<const estimator::Placement*>, std::less<>> by_node;
    for (const auto& p : g.estimate->placements) by_node[p.node].push_back(&p);
    for (const std::string& name : g.estimate->nodes_with_pods) {
      PlannedNode pn;
      pn.name = name;
      pn.group = g.spec->name;
      model::Node copy = g.tmpl->node;
      copy.metadata.name = name;
      copy.metadata.uid = name;
      copy.metadata.labels["kubernetes.io/hostname"] = name;
      const bool simulated = snap_.add_node(std::move(copy)).ok();
      if (simulated) {
        for (const model::Pod& p : g.tmpl->pods) (void)snap_.add_pod(p, name);
      }
      for (const estimator::Placement* p : by_node[name]) {
        pn.pods.push_back(p->pod);
        PodInfoPtr pod = pod_by_key(p->pod);
        if (simulated && pod) {
          (void)snap_.add_pod(p->allocations.empty() ? pod : with_allocations(*pod, p->allocations),
                              name);
        }
      }
      if (const NodeInfo* info = simulated ? snap_.node(name) : nullptr) {
        pn.cpu_requested_milli = info->requested().milli_cpu;
        pn.cpu_allocatable_milli = info->allocatable().milli_cpu;
        pn.memory_requested = info->requested().memory;
        pn.memory_allocatable = info->allocatable().memory;
        pn.devices = describe_devices(*env_.cache, *info);
      }
      plan_.new_nodes.push_back(std::move(pn));
    }
    (void)snap_.revert();
  }

  void finish_groups() {
    for (size_t i = 0; i < states_.size(); ++i) {
      GroupEvaluation& e = plan_.groups[i];
      if (!e.skip_reason.empty() || e.chosen) continue;
      if (!states_[i].valid) continue;
      if (e.option) {
        e.expander_note +=
            e.expander_note.empty() ? "not chosen by the expander" : "; not chosen by the expander";
      }
    }
    collect_warnings();
  }

  void collect_warnings() {
    for (auto& f : fitter_.take_failures()) {
      auto& all = plan_.extender_failures;
      if (std::find(all.begin(), all.end(), f) == all.end()) all.push_back(std::move(f));
    }
    for (auto& w : fitter_.take_warnings()) {
      if (std::find(plan_.warnings.begin(), plan_.warnings.end(), w) == plan_.warnings.end()) {
        plan_.warnings.push_back(std::move(w));
      }
    }
  }

  const PlanInput& in_;
  const PlannerOptions& o_;
  const PlannerEnv& env_;
  framework::FilterPipeline pipeline_;
  DeviceAwareFitter fitter_;
  fit::DeviceQuota quota_;
  estimator::SteadyClock steady_;
  ClusterSnapshot snap_;
  Plan plan_;
  std::vector<GroupState> states_;
  std::vector<EquivalenceGroup> groups_;
  std::map<std::string, size_t, std::less<>> outcome_index_;
  std::map<std::string_view, PodInfoPtr, std::less<>> remaining_by_key_;  // keys live in the pods
  std::vector<PodInfoPtr> remaining_;  // left after filter-out-schedulable, in that order
  size_t ready_nodes_ = 0;
  size_t pending_ = 0;
  bool cancelled_ = false;
};

}  // namespace

void keep_until_exit(std::shared_ptr<const void> state) {
  static std::mutex mutex;
  static auto* kept = new std::vector<std::shared_ptr<const void>>();  // never destroyed
  std::lock_guard lock(mutex);
  kept->push_back(std::move(state));
}

Result<Plan> make_plan(const PlanInput& input, const PlannerOptions& options,
                       const PlannerEnv& env) {
  if (env.devices == nullptr || env.cache == nullptr) {
    return make_error("internal: planner without a device stage or cache");
  }
  if (!options.keep_state_until_exit) return Planner(input, options, env).run();
  auto planner = std::make_shared<Planner>(input, options, env);
  Result<Plan> plan = planner->run();
  keep_until_exit(std::move(planner));
  return plan;
}

}  // namespace hamisim::planner::scaleup
