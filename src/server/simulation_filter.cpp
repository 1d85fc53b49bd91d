#include "server/simulation_filter.h"

#include <limits>
#include <map>
#include <set>

#include "model/decode.h"
#include "model/json_writer.h"

namespace hamisim::server {
namespace {

struct NodeAnswer {
  fit::FitClass fit_class = fit::FitClass::kFits;
  std::string failed_text;  // FailedNodes value (HAMi-compatible)
  std::string reason;       // Diagnostics.Reason
  fit::DeviceSource source = fit::DeviceSource::kAnnotation;
  std::string profile;
  std::vector<std::string> notes;
  std::map<std::string, std::string> annotations;
};

std::string pod_label(const model::Pod& pod) {
  if (pod.metadata.namespace_.empty()) return pod.metadata.name;
  return pod.metadata.namespace_ + "/" + pod.metadata.name;
}

Status check_quantity(const model::ResourceList& list, const std::string& name,
                      const std::string& where) {
  if (name.empty()) return ok_status();
  auto it = list.find(name);
  if (it == list.end()) return ok_status();
  const model::Quantity& q = it->second;
  if (q.sign() < 0) {
    return make_error(where + "[" + name + "]: negative amount " + q.to_string());
  }
  if (q.value() > std::numeric_limits<int32_t>::max()) {
    return make_error(where + "[" + name + "]: amount " + q.to_string() +
                      " overflows the 32-bit device fields");
  }
  return ok_status();
}

// The ExtenderFilterResult; with `insertions`, the Nodes sent back are listed there instead of
// written.
std::string encode_response(const ExtenderArgs& args, const std::vector<NodeAnswer>& answers,
                            std::vector<SimulationResult::Insertion>* insertions) {
  model::JsonWriter w;
  size_t raw_bytes = 0;
  if (insertions == nullptr) {
    for (const auto& n : args.nodes) raw_bytes += n.raw.size();
  }
  w.reserve(raw_bytes + 256 * answers.size() + 256);

  std::map<std::string_view, const NodeAnswer*> by_name;  // Go writes map keys sorted
  for (size_t i = 0; i < answers.size(); ++i)
    by_name.emplace(args.nodes[i].node().metadata.name, &answers[i]);

  w.begin_object();
  w.key("Nodes").begin_object();
  w.key("metadata").begin_object().end_object();
  w.key("items").begin_array();
  for (size_t i = 0; i < answers.size(); ++i) {
    const fit::FitClass c = answers[i].fit_class;
    if (c != fit::FitClass::kFits && c != fit::FitClass::kNotInterested) continue;
    if (insertions == nullptr) {
      w.raw(args.nodes[i].raw);
    } else {
      w.raw({});  // the separator
      insertions->push_back({w.str().size(), args.nodes[i].raw});
    }
  }
  w.end_array().end_object();
  w.key("NodeNames").null();
  w.key("FailedNodes").begin_object();
  for (const auto& [name, a] : by_name) {
    if (!a->failed_text.empty()) w.key(name).string(a->failed_text);
  }
  w.end_object();
  w.key("FailedAndUnresolvableNodes").null();
  w.key("Error").string("");
  w.key("Allocations").begin_object();
  for (const auto& [name, a] : by_name) {
    if (a->fit_class != fit::FitClass::kFits) continue;
    w.key(name).begin_object();
    for (const auto& [k, v] : a->annotations) w.key(k).string(v);
    w.end_object();
  }
  w.end_object();
  w.key("Diagnostics").begin_object();
  for (const auto& [name, a] : by_name) {
    w.key(name).begin_object();
    w.key("Class").string(fit::to_string(a->fit_class));
    w.key("Reason").string(a->reason);
    w.key("DeviceSource").string(fit::to_string(a->source));
    w.key("Profile").string(a->profile);
    w.key("Notes").begin_array();
    for (const auto& n : a->notes) w.string(n);
    w.end_array();
    w.end_object();
  }
  w.end_object();
  w.end_object();
  return w.take();
}

SimulationResult invalid(std::string message) {
  SimulationResult r;
  r.invalid_request = true;
  r.body = encode_filter_error(std::string(kInvalidRequest) + message);
  return r;
}

}  // namespace

Status validate_device_resources(const model::Pod& pod, const device::DeviceRegistry& registry,
                                 std::string_view where) {
  // This runs on every request and nearly every pod passes: each quantity the pod carries is
  // looked at once, and the checks below, in the order that decides which error is reported,
  // run only when a managed resource's quantity is out of range.
  auto out_of_range = [](const model::Quantity& q) {
    return q.sign() < 0 || q.value() > std::numeric_limits<int32_t>::max();
  };
  auto managed = [&](const std::string& name) {
    for (const auto& backend : registry.backends()) {
      const device::ResourceNames& n = backend->resource_names();
      if (name == n.count || name == n.memory || name == n.memory_percentage || name == n.cores)
        return true;
    }
    return false;
  };
  bool failing = false;
  for (const auto* containers : {&pod.spec.init_containers, &pod.spec.containers}) {
    for (const model::Container& c : *containers) {
      for (const auto* list : {&c.resources.limits, &c.resources.requests}) {
        for (const auto& [name, q] : *list) failing = failing || (out_of_range(q) && managed(name));
      }
    }
  }
  if (!failing) return ok_status();

  auto check_containers = [&](const std::vector<model::Container>& containers,
                              std::string_view field) -> Status {
    auto check = [&](size_t i, const model::ResourceList& list, const std::string& name,
                     std::string_view part) -> Status {
      return check_quantity(list, name,
                            std::string(where) + ".spec." + std::string(field) + "[" +
                                std::to_string(i) + "].resources." + std::string(part));
    };
    for (size_t i = 0; i < containers.size(); ++i) {
      for (const auto& backend : registry.backends()) {
        const device::ResourceNames& n = backend->resource_names();
        for (const std::string* name : {&n.count, &n.memory, &n.memory_percentage, &n.cores}) {
          if (Status s = check(i, containers[i].resources.limits, *name, "limits"); !s) return s;
          if (Status s = check(i, containers[i].resources.requests, *name, "requests"); !s)
            return s;
        }
      }
    }
    return ok_status();
  };
  if (Status s = check_containers(pod.spec.init_containers, "initContainers"); !s) return s;
  return check_containers(pod.spec.containers, "containers");
}

SimulationFilter::SimulationFilter(const device::DeviceRegistry& registry,
                                   const fit::InventoryProvider& inventory, fit::FitPolicy policy)
    : registry_(registry), inventory_(inventory), policy_(std::move(policy)) {}

Result<ExtenderArgs> SimulationFilter::decode(const std::string& body) const {
  if (body.capacity() - body.size() >= model::kJsonPadding) {
    return decode_extender_args_in_buffer(body, &decoded_);
  }
  return decode_extender_args(body, &decoded_);
}

SimulationResult SimulationFilter::filter(const std::string& body, NodeTexts node_texts) const {
  auto args = decode(body);
  if (!args) return invalid(args.error().message);
  // A copied body (ExtenderArgs::buffer) dies with `args`: its texts cannot be left out.
  if (args->buffer) node_texts = NodeTexts::kCopied;
  return filter(*args, /*require_no_node_names=*/true, node_texts);
}

SimulationResult SimulationFilter::filter(const ExtenderArgs& args,
                                          bool require_no_node_names) const {
  return filter(args, require_no_node_names, NodeTexts::kCopied);
}

SimulationResult SimulationFilter::filter(const ExtenderArgs& args, bool require_no_node_names,
                                          NodeTexts node_texts) const {
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
  if (Status s = validate_device_resources(pod, registry_, "Pod"); !s)
    return invalid(s.error().message);
  auto prepared = fit::prepare_pod(pod, registry_, policy_);
  if (!prepared) return invalid("Pod: " + prepared.error().message);

  SimulationResult result;
  std::vector<NodeAnswer> answers(args.nodes.size());
  if (!prepared->requests_devices()) {
    for (auto& a : answers) {
      a.fit_class = fit::FitClass::kNotInterested;
      a.reason = "pod requests no managed device";
    }
  } else {
    // Usage of the pods the caller already placed, decoded once per node.
    std::map<std::string_view, std::vector<fit::PodAllocation>> placed;
    for (const auto& [node, pods] : args.simulated_pods) {
      auto& list = placed[node];
      for (size_t i = 0; i < pods.size(); ++i) {
        auto allocation = fit::decode_pod_allocation(pods[i], registry_);
        if (!allocation) {
          return invalid("SimulatedPods[" + node + "][" + std::to_string(i) + "] (pod \"" +
                         pod_label(pods[i]) + "\"): " + allocation.error().message);
        }
        list.push_back(std::move(allocation).value());
      }
    }
    fit::NodeUsage usage;  // each node's in turn, in the same memory
    for (size_t i = 0; i < args.nodes.size(); ++i) {
      const model::Node& node = args.nodes[i].node();
      NodeAnswer& a = answers[i];
      const std::shared_ptr<const fit::InventoryResult> described =
          inventory_.inventory_for(*args.nodes[i].decoded);
      const fit::InventoryResult& inv = *described;
      a.source = inv.inventory.source;
      a.profile = inv.inventory.profile;
      a.notes = inv.inventory.notes;
      switch (inv.state) {
        case fit::InventoryResult::State::kNoDescription:
          a.fit_class = fit::FitClass::kNoDeviceDescription;
          a.failed_text = std::string(fit::kNodeUnregistered);
          a.reason = inv.message;
          continue;
        case fit::InventoryResult::State::kMalformed:
          a.fit_class = fit::FitClass::kMalformedDeviceDescription;
          a.failed_text = "malformed device registration: " + inv.message;
          a.reason = inv.message;
          continue;
        case fit::InventoryResult::State::kRejected:
          a.fit_class = fit::FitClass::kProfileRejected;
          a.failed_text = "device profile rejected: " + inv.message;
          a.reason = inv.message;
          continue;
        case fit::InventoryResult::State::kOk:
          break;
      }
      fit::reset_usage(usage, inv.inventory);
      if (auto it = placed.find(node.metadata.name); it != placed.end()) {
        for (const auto& allocation : it->second) fit::add_pod_usage(usage, allocation);
      }
      fit::NodeFit f = fit::fit_pod(*prepared, usage, inv.inventory, registry_, nullptr,
                                    fit::AllocationSite{node.metadata.name, std::nullopt});
      a.fit_class = f.fit_class;
      if (f.fits) {
        a.annotations = std::move(f.annotations);
      } else {
        a.failed_text = f.reason;
        a.reason = f.reason;
      }
    }
  }
  result.outcomes.reserve(answers.size());
  for (const auto& a : answers) {
    result.outcomes.push_back(NodeOutcome{a.fit_class, a.reason, a.profile, a.notes.size()});
  }
  result.body = encode_response(args, answers,
                                node_texts == NodeTexts::kLeftOut ? &result.insertions : nullptr);
  return result;
}

}  // namespace hamisim::server
