#include "planner/estimator/binpacking.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_set>
#include <utility>

#include "planner/framework/resources.h"

namespace hamisim::planner::estimator {

using framework::ClusterSnapshot;
using framework::FilterStatus;
using framework::NodeInfo;
using framework::PodInfo;

std::chrono::nanoseconds SteadyClock::now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now().time_since_epoch());
}

// ---- PipelineFitter ----

FitResult reserve_fit(const framework::FilterPipeline& pipeline, const PodInfo& pod,
                      const ClusterSnapshot& s, FitResult fit) {
  if (!fit.fits()) return fit;
  const NodeInfo* node = s.node(fit.node);
  if (node == nullptr) return fit;
  auto reserved =
      fit.filter_state
          ? pipeline.reserve(fit.placed_as ? *fit.placed_as : pod, *fit.filter_state, *node)
          : Result<framework::PodInfoPtr>(
                make_error("a fit on node \"" + fit.node + "\" without the pod's filter state"));
  if (!reserved.ok()) {
    FitResult failed;
    failed.kind = FitResult::Kind::kInternalError;
    failed.internal_error = reserved.error().message;
    return failed;
  }
  if (*reserved) fit.placed_as = std::move(*reserved);
  return fit;
}

FitResult PipelineFitter::fit_any(const PodInfo& pod, const ClusterSnapshot& s,
                                  const std::function<bool(const NodeInfo&)>& acceptable) {
  const size_t n = s.node_count();
  framework::PassingNodeOptions opts;
  opts.start_index = n == 0 ? 0 : next_start_ % n;
  opts.is_acceptable = acceptable;
  framework::PassingNodeSearch found = pipeline_.find_first_passing_node(pod, s, opts);
  if (!found.pre_filter.ok()) return FitResult::rejected(found.pre_filter);
  if (found.node == nullptr) {
    FilterStatus st =
        found.rejected.empty()
            ? FilterStatus::make(framework::FilterCode::kUnschedulable, "", "no acceptable node")
            : found.rejected.back().status;
    return FitResult::rejected(std::move(st));
  }
  // MarkMatch: the next walk starts right after the matched node.
  next_start_ = (opts.start_index + found.order_index) % n + 1;
  return reserve_fit(pipeline_, pod, s, FitResult::fit(found.node->name(), std::move(found.state)));
}

FitResult PipelineFitter::fit_on(const PodInfo& pod, const ClusterSnapshot& s,
                                 std::string_view node) {
  std::shared_ptr<const framework::PodFilterState> state;
  FilterStatus st = pipeline_.run_on_node(pod, s, node, &state);
  if (st.ok()) {
    return reserve_fit(pipeline_, pod, s, FitResult::fit(std::string(node), std::move(state)));
  }
  return FitResult::rejected(std::move(st));
}

// ---- Limits ----

int64_t EstimationLimiter::min_limit(int64_t base, int64_t t) {
  if (base < 0 || t < 0) return -1;
  if (base == 0) return t;
  if (t == 0) return base;
  return std::min(base, t);
}

void EstimationLimiter::start_estimation(const NodeGroupSize& group,
                                         const std::optional<EstimationContext>& ctx) {
  nodes_ = 0;
  start_ = clock_.now();
  // StaticThreshold.
  int64_t nodes = min_limit(0, limits_.max_nodes_per_scaleup);
  int64_t duration = min_limit(0, limits_.max_nodegroup_binpacking_duration.count());
  if (ctx) {
    // SngCapacityThreshold: free capacity of this group and its similar groups.
    int64_t free = std::max<int64_t>(0, group.max_size - group.target_size);
    for (const NodeGroupSize& g : ctx->similar_groups) {
      free += std::max<int64_t>(0, g.max_size - g.target_size);
    }
    nodes = min_limit(nodes, free <= 0 ? -1 : free);
    // ClusterCapacityThreshold.
    int64_t cluster = 0;
    if (ctx->max_nodes_total < 0 ||
        (ctx->max_nodes_total > 0 && ctx->max_nodes_total <= ctx->current_node_count)) {
      cluster = -1;
    } else if (ctx->max_nodes_total > 0) {
      cluster = ctx->max_nodes_total - ctx->current_node_count;
    }
    nodes = min_limit(nodes, cluster);
  }
  max_nodes_ = nodes;
  max_duration_ = std::chrono::nanoseconds(duration);
}

bool EstimationLimiter::permission_to_add_node(std::string* why) {
  if (max_nodes_ < 0 || (max_nodes_ > 0 && nodes_ >= max_nodes_)) {
    if (why) *why = "node limit of the estimation reached (" + std::to_string(max_nodes_) + ")";
    return false;
  }
  if (max_duration_.count() < 0 ||
      (max_duration_.count() > 0 && clock_.now() > start_ + max_duration_)) {
    if (why) *why = "node group binpacking duration exceeded";
    return false;
  }
  if (limits_.cancelled && limits_.cancelled()) {
    if (why) *why = "the estimation was cancelled";
    return false;
  }
  ++nodes_;
  return true;
}

// ---- Ordering ----

double decreasing_order_score(const model::Pod& exemplar, const model::Node& template_node) {
  framework::Resource req = framework::pod_resource(exemplar);
  framework::Resource alloc = framework::node_allocatable(template_node);
  double score = 0;
  if (alloc.milli_cpu > 0) {
    score += static_cast<double>(req.milli_cpu) / static_cast<double>(alloc.milli_cpu);
  }
  if (alloc.memory > 0) {
    score += static_cast<double>(req.memory) / static_cast<double>(alloc.memory);
  }
  return score;
}

std::vector<size_t> decreasing_pod_order(const std::vector<PodGroup>& groups,
                                         const model::Node& template_node) {
  std::vector<std::pair<double, size_t>> keyed;
  for (size_t i = 0; i < groups.size(); ++i) {
    double score = groups[i].pods.empty()
                       ? 0.0
                       : decreasing_order_score(groups[i].pods.front()->pod(), template_node);
    keyed.emplace_back(score, i);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<size_t> out;
  for (const auto& k : keyed) out.push_back(k.second);
  return out;
}

namespace {
constexpr std::string_view kHostname = "kubernetes.io/hostname";

int64_t ceil_nodes(int64_t pods, int64_t request, int64_t capacity) {
  if (capacity <= 0 || request <= 0) return 0;
  // ceil(pods * request / capacity) in floating point, as CA computes it.
  return static_cast<int64_t>(std::ceil(static_cast<double>(pods) * static_cast<double>(request) /
                                        static_cast<double>(capacity)));
}
}  // namespace

std::optional<size_t> best_group_for_fastpath(const std::vector<PodGroup>& groups,
                                              const std::vector<size_t>& order,
                                              const model::Node& template_node) {
  std::optional<size_t> best;
  int64_t best_saved = 0;
  auto cap = [&](std::string_view name, bool milli) -> int64_t {
    auto it = template_node.status.capacity.find(std::string(name));
    if (it == template_node.status.capacity.end()) return 0;
    return milli ? it->second.milli_value() : it->second.value();
  };
  const int64_t cap_cpu = cap(framework::kResourceCpu, true);
  const int64_t cap_mem = cap(framework::kResourceMemory, false);
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const PodGroup& g = groups[order[pos]];
    if (g.pods.empty()) continue;
    const PodInfo& ex = *g.pods.front();
    if (!ex.pod().spec.topology_spread_constraints.empty()) continue;
    bool eligible = true;
    bool self_anti = false;
    for (const framework::AffinityTerm& t : ex.required_anti_affinity_terms()) {
      if (t.topology_key != kHostname) {
        eligible = false;
        break;
      }
      if (t.matches(ex.pod(), nullptr)) self_anti = true;
    }
    if (!eligible) continue;
    const auto n = static_cast<int64_t>(g.pods.size());
    int64_t cpu = 0;
    int64_t mem = 0;
    if (!ex.pod().spec.containers.empty()) {
      const model::ResourceList& req = ex.pod().spec.containers.front().resources.requests;
      if (auto it = req.find(std::string(framework::kResourceCpu)); it != req.end()) {
        cpu = it->second.milli_value();
      }
      if (auto it = req.find(std::string(framework::kResourceMemory)); it != req.end()) {
        mem = it->second.value();
      }
    }
    int64_t nodes =
        std::max({self_anti ? n : 0, ceil_nodes(n, cpu, cap_cpu), ceil_nodes(n, mem, cap_mem)});
    int64_t saved = nodes == 0 ? 0 : n - n / nodes;
    if (!best || saved >= best_saved) {
      best = pos;
      best_saved = saved;
    }
  }
  return best;
}

std::string template_copy_name(std::string_view group_id, int64_t template_index, int64_t k) {
  return "template-node-for-" + std::string(group_id) + "-" + std::to_string(template_index) +
         "-e-" + std::to_string(k);
}

// ---- Estimation ----

namespace {

constexpr std::string_view kHostnameKey = "kubernetes.io/hostname";
constexpr std::string_view kSpreadMismatch = "node(s) didn't match pod topology spread constraints";

std::string describe(const FilterStatus& st) {
  std::string out = st.plugin.empty() ? std::string("rejected") : st.plugin;
  for (size_t i = 0; i < st.reasons.size(); ++i) out += (i == 0 ? ": " : "; ") + st.reasons[i];
  return out;
}

bool has_hostname_spread(const model::Pod& pod) {
  return std::any_of(pod.spec.topology_spread_constraints.begin(),
                     pod.spec.topology_spread_constraints.end(),
                     [](const auto& c) { return c.topology_key == kHostnameKey; });
}

bool mentions_spread_mismatch(const FilterStatus& st) {
  return std::any_of(st.reasons.begin(), st.reasons.end(),
                     [](const std::string& r) { return r == kSpreadMismatch; });
}

class Run {
 public:
  Run(PodFitter& fitter, EstimationLimiter& limiter, ClusterSnapshot& s, const EstimateInput& in)
      : fitter_(fitter), limiter_(limiter), s_(s), in_(in) {}

  Estimate go(bool fastpath) {
    std::vector<size_t> order = decreasing_pod_order(in_.groups, in_.template_node);
    bool fast_last = false;
    if (fastpath) {
      if (auto pos = best_group_for_fastpath(in_.groups, order, in_.template_node)) {
        size_t chosen = order[*pos];
        order.erase(order.begin() + static_cast<std::ptrdiff_t>(*pos));
        order.push_back(chosen);
        fast_last = true;
      }
    }
    for (size_t oi = 0; oi < order.size(); ++oi) {
      const auto& pods = in_.groups[order[oi]].pods;
      size_t next = 0;
      if (!on_existing(pods, next)) return abort();
      if (next < pods.size() && new_nodes_available_) {
        bool ok =
            fast_last && oi + 1 == order.size() ? on_fast_path(pods, next) : on_new(pods, next);
        if (!ok) return abort();
      }
      for (; next < pods.size(); ++next) {
        out_.unplaced.push_back({pods[next]->key(), why_});
      }
    }
    out_.node_count = static_cast<int64_t>(out_.nodes_with_pods.size());
    return std::move(out_);
  }

 private:
  Estimate abort() {
    Estimate e;
    e.internal_error = make_error(internal_);
    return e;
  }

  // Takes the fit's allocations into the placement (a copy per placed pod was 20 MB of maps in
  // a 5,000-pod plan, freed again at once).
  bool place(const framework::PodInfoPtr& ptr, FitResult&& fit) {
    const std::string& node = fit.node;
    const framework::PodInfoPtr& placed = fit.placed_as ? fit.placed_as : ptr;
    Status st = s_.add_pod(placed, node);
    if (!st.ok()) {
      internal_ = st.error().message;
      return false;
    }
    fitter_.placed(*placed, *s_.node(node));
    out_.placements.push_back(
        {ptr->key(), node, shared(std::move(fit.allocations)), placed->claim_allocations()});
    if (with_pods_.insert(node).second) out_.nodes_with_pods.push_back(node);
    return true;
  }

  // The one shared copy of equal allocations (see Placement).
  std::shared_ptr<const Allocations> shared(Allocations&& allocations) {
    if (allocations.empty()) return nullptr;
    auto it = shared_allocations_.find(allocations);
    if (it == shared_allocations_.end()) {
      it = shared_allocations_.insert(std::make_shared<const Allocations>(std::move(allocations)))
               .first;
    }
    return *it;
  }

  // tryToScheduleOnExistingNodes: only copies added by this estimation are acceptable.
  bool on_existing(const std::vector<framework::PodInfoPtr>& pods, size_t& next) {
    // By address, not name: the walk asks about every node of the cluster for each pod, and
    // copy names share long prefixes (comparing them was a tenth of a large plan).
    auto acceptable = [this](const NodeInfo& n) { return new_copies_.count(&n) > 0; };
    for (; next < pods.size(); ++next) {
      if (new_copies_.empty()) {
        why_ = "no template copy yet";
        return true;
      }
      FitResult r = fitter_.fit_any(*pods[next], s_, acceptable);
      if (r.kind == FitResult::Kind::kInternalError) {
        internal_ = r.internal_error;
        return false;
      }
      if (!r.fits()) {
        why_ = describe(r.status);
        return true;
      }
      if (!place(pods[next], std::move(r))) return false;
    }
    return true;
  }

  // tryToScheduleOnNewNodes. Returns false on an internal error; sets new_nodes_available_.
  bool on_new(const std::vector<framework::PodInfoPtr>& pods, size_t& next) {
    for (; next < pods.size(); ++next) {
      const PodInfo& pod = *pods[next];
      std::optional<FitResult> found;
      if (!last_.empty()) {
        FitResult r = fitter_.fit_on(pod, s_, last_);
        if (r.kind == FitResult::Kind::kInternalError) {
          internal_ = r.internal_error;
          return false;
        }
        if (r.fits()) {
          found = std::move(r);
        } else {
          why_ = describe(r.status);
          if (has_hostname_spread(pod.pod()) && mentions_spread_mismatch(r.status)) {
            // Every snapshot node but the last copy, real nodes included, as CA does.
            FitResult any =
                fitter_.fit_any(pod, s_, [this](const NodeInfo& n) { return n.name() != last_; });
            if (any.kind == FitResult::Kind::kInternalError) {
              internal_ = any.internal_error;
              return false;
            }
            if (any.fits()) found = std::move(any);
          }
        }
      }
      if (!found) {
        const NodeInfo* last = last_.empty() ? nullptr : s_.node(last_);
        if (last != nullptr && last->pod_count() == 0) {
          // Empty-node stop rule: the pod does not fit even an empty copy.
          return true;
        }
        std::string denial;
        if (!limiter_.permission_to_add_node(&denial)) {
          why_ = denial;
          new_nodes_available_ = false;
          return true;
        }
        if (!add_copy()) return false;
        FitResult r = fitter_.fit_on(pod, s_, last_);
        if (r.kind == FitResult::Kind::kInternalError) {
          internal_ = r.internal_error;
          return false;
        }
        if (!r.fits()) {
          why_ = describe(r.status);
          return true;  // the empty copy stays but is not counted
        }
        found = std::move(r);
      }
      if (!place(pods[next], std::move(*found))) return false;
    }
    return true;
  }

  // tryFastPath: simulate one new copy, then assign the rest by count to virtual
  // "<copy>-fake-<j>" nodes, which are not simulated.
  bool on_fast_path(const std::vector<framework::PodInfoPtr>& pods, size_t& next) {
    std::string denial;
    if (!limiter_.permission_to_add_node(&denial)) {
      why_ = denial;
      new_nodes_available_ = false;
      return true;
    }
    if (!add_copy()) return false;
    const size_t first = next;
    for (; next < pods.size(); ++next) {
      FitResult r = fitter_.fit_on(*pods[next], s_, last_);
      if (r.kind == FitResult::Kind::kInternalError) {
        internal_ = r.internal_error;
        return false;
      }
      if (!r.fits()) {
        why_ = describe(r.status);
        break;
      }
      if (!place(pods[next], std::move(r))) return false;
    }
    const size_t per_node = next - first;
    if (per_node == 0) return true;
    const size_t total = pods.size() - first;
    const size_t scale_up = (total + per_node - 1) / per_node;
    for (size_t j = 1; j < scale_up; ++j) {
      if (!limiter_.permission_to_add_node(&denial)) {
        why_ = denial;
        new_nodes_available_ = false;
        return true;
      }
      std::string fake = last_ + "-fake-" + std::to_string(j);
      for (size_t k = 0; k < per_node && next < pods.size(); ++k, ++next) {
        out_.placements.push_back({pods[next]->key(), fake, {}, {}});
        if (with_pods_.insert(fake).second) out_.nodes_with_pods.push_back(fake);
      }
    }
    return true;
  }

  bool add_copy() {
    std::string name = template_copy_name(in_.group.id, in_.template_index, index_++);
    model::Node node = in_.template_node;
    node.metadata.name = name;
    node.metadata.uid.clear();
    node.metadata.labels[std::string(kHostnameKey)] = name;
    Status st =
        s_.add_node(std::move(node), framework::slices_for_copy(in_.template_slices, name, name));
    if (!st.ok()) {
      internal_ = st.error().message;
      return false;
    }
    for (const model::Pod& p : in_.template_pods) {
      model::Pod copy = p;
      copy.metadata.name += "-" + name;
      copy.spec.node_name = name;
      Status ps = s_.add_pod(std::move(copy), name);
      if (!ps.ok()) {
        internal_ = ps.error().message;
        return false;
      }
    }
    // Nodes are only added during an estimation, so the copy's NodeInfo stays where it is.
    new_copies_.insert(s_.node(name));
    last_ = name;
    return true;
  }

  PodFitter& fitter_;
  EstimationLimiter& limiter_;
  ClusterSnapshot& s_;
  const EstimateInput& in_;
  Estimate out_;
  std::unordered_set<const NodeInfo*> new_copies_;  // the copies this estimation added
  std::set<std::string, std::less<>> with_pods_;
  struct ByContent {
    using is_transparent = void;
    using Ptr = std::shared_ptr<const Allocations>;
    bool operator()(const Ptr& a, const Ptr& b) const { return *a < *b; }
    bool operator()(const Ptr& a, const Allocations& b) const { return *a < b; }
    bool operator()(const Allocations& a, const Ptr& b) const { return a < *b; }
  };
  std::set<std::shared_ptr<const Allocations>, ByContent> shared_allocations_;
  std::string last_;
  int64_t index_ = 0;
  bool new_nodes_available_ = true;
  std::string why_;
  std::string internal_;
};

}  // namespace

Estimate BinpackingEstimator::estimate(ClusterSnapshot& snapshot, const EstimateInput& in) {
  limiter_.start_estimation(in.group, in.context);
  fitter_.begin_estimation();
  snapshot.fork();
  Estimate e = Run(fitter_, limiter_, snapshot, in).go(fastpath_);
  Status st = snapshot.revert();
  fitter_.end_estimation();
  if (!st.ok() && !e.internal_error) e.internal_error = st.error();
  return e;
}

}  // namespace hamisim::planner::estimator
