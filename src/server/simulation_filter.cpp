#include "server/simulation_filter.h"

#include <map>
#include <set>

#include "model/decode.h"
#include "model/json_writer.h"
#include "profile/template_node.h"

namespace hamisim::server {
namespace {

// The description behind a verdict; a node not looked at (the pod requests no device) reads
// as an empty registration.
const fit::DeviceDescription& described(const engine::Verdict& v) {
  static const fit::DeviceDescription kNone;
  return v.described ? v.described->description : kNone;
}

std::string pod_label(const model::Pod& pod) {
  if (pod.metadata.namespace_.empty()) return pod.metadata.name;
  return pod.metadata.namespace_ + "/" + pod.metadata.name;
}

// The ExtenderFilterResult; with `insertions`, the Nodes sent back are listed there instead of
// written. The answer at `noted` (unless npos) gets kUnsentPlacementsNote.
std::string encode_response(const extender::ExtenderArgs& args,
                            const std::vector<engine::Verdict>& answers,
                            std::vector<SimulationResult::Insertion>* insertions, size_t noted) {
  extender::ExtenderFilterResult r;
  r.nodes.emplace();
  r.failed_nodes.emplace();
  r.allocations.emplace();
  r.diagnostics.emplace();
  std::map<std::string_view, size_t> by_name;  // Go writes map keys sorted
  for (size_t i = 0; i < answers.size(); ++i) {
    const std::string& name = args.nodes[i].node().metadata.name;
    if (answers[i].passes()) r.nodes->push_back({name, args.nodes[i].json});
    by_name.emplace(name, i);
  }
  r.diagnostics->reserve(by_name.size());
  for (const auto& [name, i] : by_name) {
    const engine::Verdict& a = answers[i];
    if (!a.failed_text.empty()) r.failed_nodes->push_back({name, a.failed_text});
    if (a.fit_class == fit::FitClass::kFits) {
      r.allocations->push_back({name, {a.fit.annotations.begin(), a.fit.annotations.end()}});
    }
    const fit::DeviceDescription& description = described(a);
    extender::NodeDiagnosticText& d = r.diagnostics->emplace_back();
    d.node = name;
    d.diagnostic.fit_class = fit::to_string(a.fit_class);
    d.diagnostic.reason = a.reason;
    d.diagnostic.device_source = fit::to_string(description.source);
    d.diagnostic.profile = description.profile;
    d.diagnostic.notes.assign(description.notes.begin(), description.notes.end());
    if (i == noted) d.diagnostic.notes.push_back(kUnsentPlacementsNote);
  }
  return extender::encode_filter_result(r, insertions);
}

SimulationResult invalid(std::string message) {
  SimulationResult r;
  r.invalid_request = true;
  r.body = extender::encode_filter_error(std::string(extender::kInvalidRequest) + message);
  return r;
}

}  // namespace

Result<extender::ExtenderArgs> SimulationFilter::decode(const std::string& body) const {
  if (body.capacity() - body.size() >= model::kJsonPadding) {
    return extender::decode_extender_args_in_buffer(body, &decoded_);
  }
  return extender::decode_extender_args(body, &decoded_);
}

SimulationResult SimulationFilter::filter(const std::string& body, NodeTexts node_texts,
                                          std::string_view caller) const {
  auto args = decode(body);
  if (!args) return invalid(args.error().message);
  // A copied body (ExtenderArgs::buffer) dies with `args`: its texts cannot be left out.
  if (args->buffer) node_texts = NodeTexts::kCopied;
  return filter(*args, /*require_no_node_names=*/true, node_texts, caller);
}

SimulationResult SimulationFilter::filter(const extender::ExtenderArgs& args,
                                          bool require_no_node_names,
                                          std::string_view caller) const {
  return filter(args, require_no_node_names, NodeTexts::kCopied, caller);
}

size_t SimulationFilter::watch(const extender::ExtenderArgs& args,
                               const std::vector<engine::Verdict>& answers,
                               std::string_view caller) const {
  constexpr size_t kNone = static_cast<size_t>(-1);
  if (args.nodes.size() != 1) {
    // Several nodes: nothing tells which one the caller will place the pod on, so only the
    // pods it did send count (CA's SchedulePodOnAnyNodeMatching).
    for (const auto& [node, pods] : args.simulated_pods) {
      if (!pods.empty() && profile::has_template_copy_suffix(node)) {
        watch_.placements_sent(caller, node);
      }
    }
    return kNone;
  }
  const model::Node& node = args.nodes[0].node();
  if (!profile::is_template_copy(node)) return kNone;
  auto placed = args.simulated_pods.find(node.metadata.name);
  const bool sent = placed != args.simulated_pods.end() && !placed->second.empty();
  const bool unsent = watch_.observe(
      caller, node.metadata.name, SimulatedPodsWatch::pod_identity(*args.pod), sent,
      answers[0].fit_class == fit::FitClass::kFits, SimulatedPodsWatch::Clock::now());
  return unsent ? 0 : kNone;
}

SimulationResult SimulationFilter::filter(const extender::ExtenderArgs& args,
                                          bool require_no_node_names, NodeTexts node_texts,
                                          std::string_view caller) const {
  if (!args.pod) return invalid("Pod is required");
  if (require_no_node_names && args.node_names_present) {
    return invalid("NodeNames is not accepted by the simulation filter");
  }
  if (!args.nodes_present) return invalid("Nodes is required (a NodeList, may be empty)");
  std::set<std::string_view> names;
  for (size_t i = 0; i < args.nodes.size(); ++i) {
    const std::string& name = args.nodes[i].node().metadata.name;
    if (name.empty()) {
      return invalid("Nodes.items[" + std::to_string(i) + "]: metadata.name is required");
    }
    if (!names.insert(name).second) {
      return invalid("Nodes.items[" + std::to_string(i) + "]: duplicate node name \"" + name +
                     "\"");
    }
  }
  const model::Pod& pod = *args.pod;
  auto prepared = engine_.prepare(pod, "Pod");
  if (!prepared) return invalid(prepared.error().message);

  SimulationResult result;
  // Usage of the pods the caller already placed, decoded once per node.
  std::map<std::string_view, std::vector<fit::PodAllocation>> placed;
  if (prepared->requests_devices()) {
    for (const auto& [node, pods] : args.simulated_pods) {
      auto& list = placed[node];
      for (size_t i = 0; i < pods.size(); ++i) {
        auto allocation = engine_.allocation(pods[i]);
        if (!allocation) {
          return invalid("SimulatedPods[" + node + "][" + std::to_string(i) + "] (pod \"" +
                         pod_label(pods[i]) + "\"): " + allocation.error().message);
        }
        list.push_back(std::move(allocation).value());
      }
    }
  }
  std::vector<engine::Verdict> answers;
  answers.reserve(args.nodes.size());
  fit::NodeUsage usage;  // each node's in turn, in the same memory
  for (const auto& node : args.nodes) {
    auto it = placed.find(node.node().metadata.name);
    answers.push_back(engine_.fit(
        *prepared, *node.decoded,
        it == placed.end() ? std::span<const fit::PodAllocation>{} : it->second, usage));
  }
  result.outcomes.reserve(answers.size());
  for (const auto& a : answers) {
    const fit::DeviceDescription& inv = described(a);
    result.outcomes.push_back(NodeOutcome{a.fit_class, a.reason, inv.profile, inv.notes.size()});
  }
  // Only pods that request devices are the convention's business (a caller sends no
  // SimulatedPods for a pod no extender is interested in).
  const size_t noted = prepared->requests_devices() ? watch(args, answers, caller) : size_t(-1);
  if (noted < answers.size())
    result.unsent_placements_node = args.nodes[noted].node().metadata.name;
  result.body = encode_response(
      args, answers, node_texts == NodeTexts::kLeftOut ? &result.insertions : nullptr, noted);
  return result;
}

}  // namespace hamisim::server
