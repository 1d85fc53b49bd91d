#include "cli/fit_command.h"

#include <fmt/format.h>

#include <cstdio>
#include <map>

#include "cli/input_error.h"
#include "cli/structured_output.h"
#include "device/allocation.h"
#include "device/catalog/device_config.h"
#include "device/codec.h"
#include "engine/engine.h"
#include "model/decode.h"
#include "model/input.h"
#include "model/json_writer.h"

namespace hamisim::cli {
namespace {

struct ContainerRef {
  std::string name;
  bool init = false;
};

std::vector<ContainerRef> containers_of(const model::Pod& pod) {
  std::vector<ContainerRef> out;
  for (const auto& c : pod.spec.init_containers) out.push_back({c.name, true});
  for (const auto& c : pod.spec.containers) out.push_back({c.name, false});
  return out;
}

std::string pod_label(const model::Pod& pod) {
  const std::string& ns =
      pod.metadata.namespace_.empty() ? std::string("default") : pod.metadata.namespace_;
  return ns + "/" + pod.metadata.name;
}

const device::DeviceUsage* find_device(const fit::NodeUsage& usage, std::string_view uuid) {
  for (const auto& d : usage.devices) {
    if (d.id == uuid) return &d;
  }
  return nullptr;
}

std::string describe_request(const device::ContainerDeviceRequest& r) {
  std::string mem = r.memreq > 0 ? fmt::format("{} MiB", r.memreq)
                    : r.mem_percentagereq != device::kNoMemPercentage
                        ? fmt::format("{}% of memory", r.mem_percentagereq)
                        : std::string("0 MiB");
  return fmt::format("{} {} GPU(s), each {} and {}% cores", r.nums, r.type, mem, r.coresreq);
}

void print_usage_table(const fit::NodeUsage& usage, const fit::DeviceDescription& description) {
  std::printf("  devices on the node before this pod:\n");
  for (const auto& d : usage.devices) {
    std::string flags;
    if (!d.health) flags += " UNHEALTHY";
    if (description.cordoned.count(d.id)) flags += " CORDONED";
    std::printf("    %-40s %-28s numa %lld  slots %lld/%d  memory %lld/%d MiB  cores %lld/%d%s\n",
                d.id.c_str(), d.type.c_str(), static_cast<long long>(d.numa),
                static_cast<long long>(d.used), d.count, static_cast<long long>(d.usedmem),
                d.totalmem, static_cast<long long>(d.usedcores), d.totalcore, flags.c_str());
  }
}

// The node's description as the engine gave it; only valid when the verdict has one.
const fit::DeviceDescription& description_of(const engine::Verdict& v) {
  return v.described->description;
}

bool described_ok(const engine::Verdict& v) {
  return v.described && v.described->state == fit::DescriptionResult::State::kOk;
}

int print_table(const model::Pod& pod, const model::Node& node, const fit::PreparedPod& prepared,
                const engine::Verdict& verdict, const fit::NodeUsage& usage_ref) {
  const fit::NodeUsage* usage = &usage_ref;
  const fit::NodeFit* result = &verdict.fit;
  const auto containers = containers_of(pod);
  const std::string head = fmt::format("Pod {} -> node {}", pod_label(pod), node.metadata.name);
  if (!prepared.requests_devices()) {
    std::printf("%s: FITS (the pod requests no managed device; the extender passes every node)\n",
                head.c_str());
    return 0;
  }
  if (!described_ok(verdict)) {
    std::printf("%s: DOES NOT FIT (%s)\n", head.c_str(),
                std::string(fit::to_string(verdict.fit_class)).c_str());
    std::printf("  HAMi reason: %s\n", verdict.failed_text.c_str());
    std::printf("  why: %s\n", verdict.reason.c_str());
    return 0;
  }
  const fit::DeviceDescription& description = description_of(verdict);
  if (description.source != fit::DeviceSource::kAnnotation) {
    std::printf("%s: devices described by %s%s\n", head.c_str(),
                std::string(fit::to_string(description.source)).c_str(),
                description.profile.empty() ? "" : (" \"" + description.profile + "\"").c_str());
  }
  for (const std::string& note : description.notes) std::printf("  note: %s\n", note.c_str());
  if (result->fits) {
    std::printf("%s: FITS  (node score %.2f, node policy %s, GPU policy %s)\n", head.c_str(),
                result->node_score, prepared.node_policy.c_str(), prepared.gpu_policy.c_str());
    print_usage_table(*usage, description);
    for (const auto& [vendor, list] : result->devices) {
      for (size_t i = 0; i < list.size() && i < containers.size(); ++i) {
        if (list[i].empty()) continue;
        std::printf("  container %zu \"%s\"%s gets:\n", i, containers[i].name.c_str(),
                    containers[i].init ? " (init)" : "");
        for (const auto& d : list[i]) {
          const device::DeviceUsage* du = find_device(*usage, d.uuid);
          std::printf("    %s (%s): %d MiB of %d MiB, %d%% cores%s\n", d.uuid.c_str(),
                      du ? du->type.c_str() : vendor.c_str(), d.usedmem, du ? du->totalmem : 0,
                      d.usedcores,
                      d.mig_profile ? fmt::format(", MIG {}", *d.mig_profile).c_str() : "");
        }
      }
    }
    std::printf("  annotations the live path would write:\n");
    for (const auto& [k, v] : result->annotations)
      std::printf("    %s: %s\n", k.c_str(), v.c_str());
    return 0;
  }
  std::printf("%s: DOES NOT FIT (%s)\n", head.c_str(),
              std::string(fit::to_string(result->fit_class)).c_str());
  std::printf("  HAMi reason: %s\n", result->reason.c_str());
  print_usage_table(*usage, description);
  if (result->failed_container >= 0 &&
      static_cast<size_t>(result->failed_container) < containers.size()) {
    const size_t ci = static_cast<size_t>(result->failed_container);
    std::printf("  container %zu \"%s\"%s asks", ci, containers[ci].name.c_str(),
                containers[ci].init ? " (init)" : "");
    for (const auto& [vendor, r] : prepared.requests[ci])
      std::printf(" %s", describe_request(r).c_str());
    std::printf(":\n");
    for (const auto& v : result->verdicts) {
      const device::DeviceUsage* du = find_device(*usage, v.uuid);
      std::printf("    %s (%s): %s%s%s\n", v.uuid.c_str(), du ? du->type.c_str() : "?",
                  v.reason.c_str(), v.detail.empty() ? "" : ": ", v.detail.c_str());
    }
    const auto reasons = device::parse_reasons(result->reason);
    if (auto it = reasons.find("AllocatedCardsInsufficientRequest"); it != reasons.end()) {
      std::printf("    only %d GPU(s) could take the container; it needs all of them on one node\n",
                  it->second);
    }
  }
  return 0;
}

int print_json(const model::Pod& pod, const model::Node& node, const engine::Verdict& verdict,
               const fit::NodeUsage& usage_ref, std::string_view output) {
  const fit::NodeUsage* usage = described_ok(verdict) ? &usage_ref : nullptr;
  const fit::NodeFit* result = described_ok(verdict) ? &verdict.fit : nullptr;
  model::JsonWriter w;
  w.begin_object();
  w.key("pod").string(pod_label(pod));
  w.key("node").string(node.metadata.name);
  w.key("fits").boolean(verdict.passes());
  w.key("class").string(fit::to_string(verdict.fit_class));
  w.key("reason").string(verdict.failed_text);
  // Where the node's devices came from, as /filter-simulation's Diagnostics says.
  static const fit::DeviceDescription kNone;
  const fit::DeviceDescription& description =
      verdict.described ? verdict.described->description : kNone;
  w.key("deviceSource").string(fit::to_string(description.source));
  w.key("profile").string(description.profile);
  w.key("notes").begin_array();
  for (const auto& n : description.notes) w.string(n);
  w.end_array();
  w.key("allocations").begin_array();
  if (result && result->fits) {
    const auto containers = containers_of(pod);
    for (const auto& [vendor, list] : result->devices) {
      for (size_t i = 0; i < list.size(); ++i) {
        for (const auto& d : list[i]) {
          w.begin_object();
          w.key("container").number(static_cast<int64_t>(i));
          w.key("containerName").string(i < containers.size() ? containers[i].name : "");
          w.key("vendor").string(vendor);
          w.key("uuid").string(d.uuid);
          w.key("usedmem").number(d.usedmem);
          w.key("usedcores").number(d.usedcores);
          if (d.mig_profile) w.key("migProfile").string(*d.mig_profile);
          w.end_object();
        }
      }
    }
  }
  w.end_array();
  w.key("verdicts").begin_array();
  if (result && !result->fits) {
    for (const auto& v : result->verdicts) {
      w.begin_object().key("uuid").string(v.uuid).key("reason").string(v.reason);
      w.key("detail").string(v.detail).end_object();
    }
  }
  w.end_array();
  w.key("annotations").begin_object();
  if (result && result->fits) {
    for (const auto& [k, v] : result->annotations) w.key(k).string(v);
  }
  w.end_object();
  w.key("devices").begin_array();
  if (usage) {
    for (const auto& d : usage->devices) {
      w.begin_object();
      w.key("uuid").string(d.id).key("type").string(d.type).key("numa").number(d.numa);
      w.key("health").boolean(d.health).key("used").number(d.used).key("count").number(d.count);
      w.key("usedmem").number(d.usedmem).key("totalmem").number(d.totalmem);
      w.key("usedcores").number(d.usedcores).key("totalcore").number(d.totalcore);
      w.end_object();
    }
  }
  w.end_array();
  w.end_object();
  return write_structured("fit", w.str(), output);
}

}  // namespace

int run_fit(const FitOptions& options) {
  if (options.output != "table" && options.output != "json" && options.output != "yaml") {
    return input_error("fit",
                       "--output must be table, json or yaml, not \"" + options.output + "\"");
  }
  if (auto once = model::check_stdin_once({{"--pod", options.pod_path},
                                           {"--node", options.node_path},
                                           {"--pods-on-node", options.pods_on_node_path},
                                           {"--device-profiles", options.device_profiles_path},
                                           {"--device-config-file", options.device.config_path}});
      !once) {
    return input_error("fit", once.error().message);
  }
  auto config = load_device_flags(options.device);
  if (!config) return input_error("fit", config.error().message);
  const device::DeviceRegistry registry = device::build_registry(*config);

  const model::UnknownFields unknown =
      options.strict ? model::UnknownFields::kError : model::UnknownFields::kWarn;
  const model::DocumentSpec pod_spec{"--pod", {"Pod"}, "a Pod", {}, unknown};
  const model::DocumentSpec node_spec{"--node", {"Node"}, "a Node", {}, unknown};
  auto warn = [](const std::vector<std::string>& warnings) {
    for (const auto& w : warnings) std::fprintf(stderr, "hamisim fit: warning: %s\n", w.c_str());
  };
  auto pod_doc = model::read_document(options.pod_path, pod_spec);
  if (!pod_doc) return input_error("fit", pod_doc.error().message);
  warn(pod_doc->warnings);
  auto pod = model::decode_pod(pod_doc->text);
  if (!pod) return input_error("fit", pod_doc->source + ": " + pod.error().message);
  auto node_doc = model::read_document(options.node_path, node_spec);
  if (!node_doc) return input_error("fit", node_doc.error().message);
  warn(node_doc->warnings);
  auto node = model::decode_node(node_doc->text);
  if (!node) return input_error("fit", node_doc->source + ": " + node.error().message);

  std::shared_ptr<const profile::DeviceProfiles> profiles;
  if (!options.device_profiles_path.empty()) {
    auto loaded = profile::load_device_profiles(options.device_profiles_path, registry);
    if (!loaded) return input_error("fit", loaded.error().message);
    profiles = std::make_shared<const profile::DeviceProfiles>(std::move(loaded).value());
  }
  // The same engine /filter-simulation answers with: a template node is described as there.
  const engine::Engine engine(registry, profiles,
                              fit::FitPolicy{options.gpu_policy, options.node_policy});
  auto prepared = engine.prepare(*pod, pod_doc->source);
  if (!prepared) return input_error("fit", prepared.error().message);
  prepared->explain = true;

  std::vector<fit::PodAllocation> placed;
  if (!options.pods_on_node_path.empty()) {
    const model::ObjectKinds kinds{
        "--pods-on-node", {.nodes = false, .pods = true, .quotas = false}, {}, {}, unknown};
    std::vector<std::string> warnings;
    auto others = model::load_checked_objects(options.pods_on_node_path, kinds, warnings);
    if (!others) return input_error("fit", others.error().message);
    warn(warnings);
    for (const model::Pod& other : others->pods) {
      auto allocation = engine.allocation(other);
      if (!allocation) {
        return input_error("fit", options.pods_on_node_path + ": pod " + pod_label(other) + ": " +
                                      allocation.error().message);
      }
      placed.push_back(std::move(allocation).value());
    }
  }
  const fit::KeyedNode keyed(std::move(node).value());
  fit::NodeUsage usage;
  const engine::Verdict verdict = engine.fit(*prepared, keyed, placed, usage);
  return options.output == "table" ? print_table(*pod, keyed.node, *prepared, verdict, usage)
                                   : print_json(*pod, keyed.node, verdict, usage, options.output);
}

}  // namespace hamisim::cli
