#include "planner/scaleup/device_fitter.h"

#include <algorithm>

#include <string_view>
#include <unordered_map>

namespace hamisim::planner::scaleup {

using estimator::FitResult;
using framework::FilterCode;
using framework::FilterStatus;
using framework::NodeInfo;
using framework::PodInfo;

framework::PodInfoPtr with_allocations(const PodInfo& pod, const Annotations& annotations) {
  return PodInfo::with_annotations(pod, annotations);
}

namespace {

FitResult fits_with(const PodInfo& pod, const NodeInfo& node, Annotations& allocations,
                    std::shared_ptr<const framework::PodFilterState> state) {
  FitResult r = FitResult::fit(node.name(), std::move(state));
  if (!allocations.empty()) {
    r.placed_as = with_allocations(pod, allocations);
    r.allocations = std::move(allocations);
  }
  return r;
}

// Every candidate rejected the pod: one reason per distinct rejection, in order of first
// appearance, naming the candidate when one gave it and otherwise how many did and the first few.
// Listing each candidate made an answer grow with pods x nodes (12,000 pods that fit none of
// 1,000 template copies came back as 630 MB); now it grows with the kinds of failure only.
constexpr size_t kSampleNodes = 3;
constexpr size_t kMaxReasons = 8;

FitResult rejected_by_devices(std::string_view plugin,
                              const std::vector<const NodeInfo*>& candidates,
                              std::vector<std::string>& rejections) {
  FilterStatus st{FilterCode::kUnschedulable, std::string(plugin), {}};
  if (candidates.size() == 1) {
    st.reasons.push_back(std::move(rejections[0]));
    return FitResult::rejected(std::move(st));
  }
  struct Kind {
    const std::string* text = nullptr;
    size_t count = 0;
    std::vector<const std::string*> sample = {};  // node names
  };
  std::vector<Kind> kinds;
  std::unordered_map<std::string_view, size_t> index;
  for (size_t i = 0; i < candidates.size(); ++i) {
    auto [it, inserted] = index.try_emplace(rejections[i], kinds.size());
    if (inserted) kinds.push_back({&rejections[i]});
    Kind& k = kinds[it->second];
    ++k.count;
    if (k.sample.size() < kSampleNodes) k.sample.push_back(&candidates[i]->name());
  }
  for (size_t j = 0; j < kinds.size() && j < kMaxReasons; ++j) {
    const Kind& k = kinds[j];
    std::string line;
    if (k.count == 1) {
      line = *k.sample.front();
    } else {
      line = std::to_string(k.count) + " nodes (";
      for (size_t s = 0; s < k.sample.size(); ++s) line += (s == 0 ? "" : ", ") + *k.sample[s];
      line += k.count > k.sample.size() ? ", ...)" : ")";
    }
    st.reasons.push_back(line + ": " + *k.text);
  }
  if (kinds.size() > kMaxReasons) {
    size_t rest = 0;
    for (size_t j = kMaxReasons; j < kinds.size(); ++j) rest += kinds[j].count;
    st.reasons.push_back(std::to_string(rest) + " more node(s) with " +
                         std::to_string(kinds.size() - kMaxReasons) + " other reason(s)");
  }
  return FitResult::rejected(std::move(st));
}

}  // namespace

Result<DeviceVerdicts> DeviceAwareFitter::filter(const PodInfo& pod,
                                                 std::span<const NodeInfo* const> candidates) {
  auto verdicts = devices_.filter(pod, candidates);
  if (verdicts) {
    for (auto& w : verdicts->warnings) warnings_.push_back(std::move(w));
  }
  return verdicts;
}

FitResult DeviceAwareFitter::failed(const Error& error) {
  if (std::find(failures_.begin(), failures_.end(), error.message) == failures_.end()) {
    failures_.push_back(error.message);
  }
  // CA turns an extender failure into "does not fit" (FailingPredicateError), not an
  // internal error: the estimator stops adding pods and the group rejects the pod.
  return FitResult::rejected(
      FilterStatus::make(FilterCode::kUnschedulable, devices_.plugin_name(), error.message));
}

FitResult DeviceAwareFitter::decide(const PodInfo& pod,
                                    const std::vector<const NodeInfo*>& candidates,
                                    const std::shared_ptr<const framework::PodFilterState>& state) {
  auto verdicts = filter(pod, candidates);
  if (!verdicts) return failed(verdicts.error());
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (verdicts->survived(i)) {
      return fits_with(pod, *candidates[i], verdicts->allocations[i], state);
    }
  }
  return rejected_by_devices(devices_.plugin_name(), candidates, verdicts->rejections);
}

FitResult DeviceAwareFitter::fit_any(const PodInfo& pod, const framework::ClusterSnapshot& s,
                                     const std::function<bool(const NodeInfo&)>& acceptable) {
  return estimator::reserve_fit(pipeline_, pod, s, find_any(pod, s, acceptable));
}

FitResult DeviceAwareFitter::fit_on(const PodInfo& pod, const framework::ClusterSnapshot& s,
                                    std::string_view node) {
  return estimator::reserve_fit(pipeline_, pod, s, find_on(pod, s, node));
}

FitResult DeviceAwareFitter::find_any(const PodInfo& pod, const framework::ClusterSnapshot& s,
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
    return FitResult::fit(found.node->name(), std::move(found.state));
  }
  // Every acceptable node is a candidate (CA does no early exit when extenders run). A stage
  // that judges each node alone is asked node by node and the walk stops at the first
  // survivor: the decision is the same, and no rejection is reported when a node is found.
  const auto state =
      std::make_shared<const framework::PodFilterState>(pipeline_.pre_filter(pod, s));
  if (!state->ok()) return FitResult::rejected(state->pre_filter_status());
  const bool node_by_node = devices_.judges_each_node_alone();
  std::vector<const NodeInfo*> candidates;
  std::vector<size_t> positions;        // snapshot index of each candidate
  std::vector<std::string> rejections;  // node by node: each candidate's rejection
  FilterStatus last_rejection =
      FilterStatus::make(FilterCode::kUnschedulable, "", "no acceptable node");
  for (size_t i = 0; i < n; ++i) {
    if (s.stop_requested()) break;  // the request is over; its answer is dropped
    const size_t index = (start + i) % n;
    const NodeInfo& node = *nodes[index];
    if (node.node().spec.unschedulable) continue;
    if (acceptable && !acceptable(node)) continue;
    s.step();
    FilterStatus st = pipeline_.filter(*state, pod, node);
    if (!st.ok()) {
      last_rejection = std::move(st);
      continue;
    }
    candidates.push_back(&node);
    positions.push_back(index);
    if (!node_by_node) continue;
    auto verdict = filter(pod, std::span(&candidates.back(), 1));
    if (!verdict) return failed(verdict.error());
    if (verdict->survived(0)) {
      next_start_ = index + 1;
      return fits_with(pod, node, verdict->allocations[0], state);
    }
    rejections.push_back(std::move(verdict->rejections[0]));
  }
  // No node passed the framework filters: the device stage is not consulted.
  if (candidates.empty()) return FitResult::rejected(std::move(last_rejection));
  if (node_by_node) return rejected_by_devices(devices_.plugin_name(), candidates, rejections);
  FitResult r = decide(pod, candidates, state);
  if (r.fits()) {
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i]->name() == r.node) next_start_ = positions[i] + 1;
    }
  }
  return r;
}

FitResult DeviceAwareFitter::find_on(const PodInfo& pod, const framework::ClusterSnapshot& s,
                                     std::string_view node) {
  std::shared_ptr<const framework::PodFilterState> state;
  FilterStatus st = pipeline_.run_on_node(pod, s, node, &state);
  if (!st.ok()) return FitResult::rejected(std::move(st));
  if (!devices_.interested(pod)) return FitResult::fit(std::string(node), std::move(state));
  const NodeInfo* info = s.node(node);
  return decide(pod, {info}, state);
}

}  // namespace hamisim::planner::scaleup
