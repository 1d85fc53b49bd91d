#include "planner/scaleup/device_fitter.h"

namespace hamisim::planner::scaleup {

using estimator::FitResult;
using framework::FilterCode;
using framework::FilterStatus;
using framework::NodeInfo;
using framework::PodInfo;

framework::PodInfoPtr with_allocations(const PodInfo& pod, const Annotations& annotations) {
  model::Pod copy = pod.pod();
  for (const auto& [k, v] : annotations) copy.metadata.annotations[k] = v;
  return PodInfo::make(std::move(copy));
}

FitResult DeviceAwareFitter::decide(const PodInfo& pod,
                                    const std::vector<const NodeInfo*>& candidates) {
  auto verdicts = devices_.filter(pod, candidates);
  if (!verdicts) {
    // CA turns an extender failure into "does not fit" (FailingPredicateError), not an
    // internal error: the estimator stops adding pods and the group rejects the pod.
    return FitResult::rejected(FilterStatus::make(
        FilterCode::kUnschedulable, devices_.plugin_name(), verdicts.error().message));
  }
  for (auto& w : verdicts->warnings) warnings_.push_back(std::move(w));
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!verdicts->survived(i)) continue;
    FitResult r = FitResult::fit(candidates[i]->name());
    if (!verdicts->allocations[i].empty()) {
      r.placed_as = with_allocations(pod, verdicts->allocations[i]);
      r.allocations = std::move(verdicts->allocations[i]);
    }
    return r;
  }
  FilterStatus st{FilterCode::kUnschedulable, std::string(devices_.plugin_name()), {}};
  if (candidates.size() == 1) {
    st.reasons.push_back(verdicts->rejections[0]);
  } else {
    for (size_t i = 0; i < candidates.size(); ++i) {
      st.reasons.push_back(candidates[i]->name() + ": " + verdicts->rejections[i]);
    }
  }
  return FitResult::rejected(std::move(st));
}

FitResult DeviceAwareFitter::fit_any(const PodInfo& pod, const framework::ClusterSnapshot& s,
                                     const std::function<bool(const NodeInfo&)>& acceptable) {
  const std::vector<const NodeInfo*> nodes = s.nodes();
  const size_t n = nodes.size();
  const size_t start = n == 0 ? 0 : next_start_ % n;
  if (!devices_.interested(pod)) {
    framework::PassingNodeOptions opts;
    opts.start_index = start;
    opts.is_acceptable = acceptable;
    framework::PassingNodeSearch found = pipeline_.find_first_passing_node(pod, s, opts);
    if (!found.pre_filter.ok()) return FitResult::rejected(found.pre_filter);
    if (found.node == nullptr) {
      return FitResult::rejected(
          found.rejected.empty()
              ? FilterStatus::make(FilterCode::kUnschedulable, "", "no acceptable node")
              : found.rejected.back().status);
    }
    next_start_ = (start + found.order_index) % n + 1;
    return FitResult::fit(found.node->name());
  }
  // Every acceptable node is evaluated (CA does no early exit when extenders run).
  framework::PodFilterState state = pipeline_.pre_filter(pod, s);
  if (!state.ok()) return FitResult::rejected(state.pre_filter_status());
  std::vector<const NodeInfo*> candidates;
  std::vector<size_t> positions;  // snapshot index of each candidate
  FilterStatus last_rejection =
      FilterStatus::make(FilterCode::kUnschedulable, "", "no acceptable node");
  for (size_t i = 0; i < n; ++i) {
    const size_t index = (start + i) % n;
    const NodeInfo& node = *nodes[index];
    if (node.node().spec.unschedulable) continue;
    if (acceptable && !acceptable(node)) continue;
    FilterStatus st = pipeline_.filter(state, pod, node);
    if (!st.ok()) {
      last_rejection = std::move(st);
      continue;
    }
    candidates.push_back(&node);
    positions.push_back(index);
  }
  // No node passed the framework filters: the device stage is not consulted.
  if (candidates.empty()) return FitResult::rejected(std::move(last_rejection));
  FitResult r = decide(pod, candidates);
  if (r.fits()) {
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i]->name() == r.node) next_start_ = positions[i] + 1;
    }
  }
  return r;
}

FitResult DeviceAwareFitter::fit_on(const PodInfo& pod, const framework::ClusterSnapshot& s,
                                    std::string_view node) {
  FilterStatus st = pipeline_.run_on_node(pod, s, node);
  if (!st.ok()) return FitResult::rejected(std::move(st));
  if (!devices_.interested(pod)) return FitResult::fit(std::string(node));
  const NodeInfo* info = s.node(node);
  return decide(pod, {info});
}

}  // namespace hamisim::planner::scaleup
