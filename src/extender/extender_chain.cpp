#include "extender/extender_chain.h"

#include <algorithm>
#include <set>

namespace hamisim::extender {

Result<ExtenderChain> ExtenderChain::create(const SchedulerConfig& config) {
  std::vector<std::unique_ptr<Extender>> extenders;
  for (const ExtenderConfig& e : config.extenders) {
    auto ext = HttpExtender::create(e);
    if (!ext) {
      return make_error("couldn't create HTTP extender for \"" + e.url_prefix +
                        "\": " + ext.error().message);
    }
    extenders.push_back(std::move(*ext));
  }
  return ExtenderChain(std::move(extenders));
}

ExtenderChain::ExtenderChain(std::vector<std::unique_ptr<Extender>> extenders)
    : extenders_(std::move(extenders)) {}

bool ExtenderChain::interested(const model::Pod& pod) const {
  for (const auto& e : extenders_) {
    if (e->is_filter() && e->is_interested(pod)) return true;
  }
  return false;
}

Result<ChainOutcome> ExtenderChain::filter(const model::Pod& pod, std::string_view pod_json,
                                           std::span<const CandidateNode> candidates,
                                           const SimulatedPods* simulated_pods) const {
  ChainOutcome out;
  std::vector<CandidateNode> current(candidates.begin(), candidates.end());
  for (size_t i = 0; i < extenders_.size() && !current.empty(); ++i) {
    const Extender& ext = *extenders_[i];
    if (!ext.is_filter() || !ext.is_interested(pod)) continue;
    out.consulted = true;

    ExtenderArgs request;
    request.pod_json = pod_json;
    request.nodes = current;
    request.simulated_pods_json = simulated_pods;

    ExtenderCall call;
    call.extender_index = i;
    call.extender = ext.name();
    call.candidates = current.size();

    auto result = ext.filter(request);
    if (!result) {
      if (!ext.is_ignorable()) {
        return make_error("extender \"" + ext.name() +
                          "\" filter failed: " + result.error().message);
      }
      call.ignored_error = result.error().message;
      for (const auto& n : current) call.passed.emplace_back(n.name);
      out.warnings.push_back(
          {i, ext.name(), "ignorable extender failed, candidates kept: " + result.error().message});
      out.calls.push_back(std::move(call));
      continue;
    }

    const std::set<std::string_view> returned(result->passed.begin(), result->passed.end());
    std::set<std::string_view> known;
    std::vector<CandidateNode> next;
    for (const CandidateNode& n : current) {
      known.insert(n.name);
      if (returned.count(n.name)) {
        next.push_back(n);
        call.passed.emplace_back(n.name);
        continue;
      }
      NodeRejection rejection;
      rejection.extender_index = i;
      rejection.extender = ext.name();
      if (auto it = result->failed_and_unresolvable_nodes.find(n.name);
          it != result->failed_and_unresolvable_nodes.end()) {
        rejection.reason = it->second;
        rejection.unresolvable = true;
      } else if (auto f = result->failed_nodes.find(n.name); f != result->failed_nodes.end()) {
        rejection.reason = f->second;
      }
      out.rejections.insert_or_assign(std::string(n.name), std::move(rejection));
    }
    for (const std::string& name : result->passed) {
      if (!known.count(name)) call.unknown_nodes.push_back(name);
    }
    if (!call.unknown_nodes.empty()) {
      std::string names;
      for (const auto& n : call.unknown_nodes) names += (names.empty() ? "\"" : ", \"") + n + "\"";
      out.warnings.push_back(
          {i, ext.name(), "extender returned nodes that were not candidates, dropped: " + names});
    }
    call.failed_nodes = std::move(result->failed_nodes);
    call.failed_and_unresolvable_nodes = std::move(result->failed_and_unresolvable_nodes);
    call.allocations = std::move(result->allocations);
    call.diagnostics = std::move(result->diagnostics);
    out.calls.push_back(std::move(call));
    current = std::move(next);
  }

  for (const CandidateNode& n : current) out.survivors.emplace_back(n.name);
  for (const ExtenderCall& call : out.calls) {
    for (const auto& [node, annotations] : call.allocations) {
      if (std::find(out.survivors.begin(), out.survivors.end(), node) == out.survivors.end())
        continue;
      Annotations& merged = out.allocations[node];
      for (const auto& [k, v] : annotations) merged.insert_or_assign(k, v);
    }
  }
  return out;
}

}  // namespace hamisim::extender
