#include "cli/fit_command.h"

#include <fmt/format.h>

#include <cstdio>
#include <map>

#include "device/allocation.h"
#include "device/codec.h"
#include "fit/device_config.h"
#include "fit/inventory.h"
#include "fit/node_fit.h"
#include "model/decode.h"
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

void print_usage_table(const fit::NodeUsage& usage, const fit::NodeInventory& inventory) {
  std::printf("  devices on the node before this pod:\n");
  for (const auto& d : usage.devices) {
    std::string flags;
    if (!d.health) flags += " UNHEALTHY";
    if (inventory.cordoned.count(d.id)) flags += " CORDONED";
    std::printf("    %-40s %-28s numa %lld  slots %lld/%d  memory %lld/%d MiB  cores %lld/%d%s\n",
                d.id.c_str(), d.type.c_str(), static_cast<long long>(d.numa),
                static_cast<long long>(d.used), d.count, static_cast<long long>(d.usedmem),
                d.totalmem, static_cast<long long>(d.usedcores), d.totalcore, flags.c_str());
  }
}

int print_table(const model::Pod& pod, const model::Node& node, const fit::PreparedPod& prepared,
                const fit::InventoryResult& inv, const fit::NodeUsage* usage,
                const fit::NodeFit* result) {
  const auto containers = containers_of(pod);
  const std::string head = fmt::format("Pod {} -> node {}", pod_label(pod), node.metadata.name);
  if (!prepared.requests_devices()) {
    std::printf("%s: FITS (the pod requests no managed device; the extender passes every node)\n",
                head.c_str());
    return 0;
  }
  if (inv.state != fit::InventoryResult::State::kOk) {
    const bool malformed = inv.state == fit::InventoryResult::State::kMalformed;
    std::printf("%s: DOES NOT FIT (%s)\n", head.c_str(),
                malformed ? "MalformedDeviceDescription" : "NoDeviceDescription");
    std::printf("  HAMi reason: %s\n",
                malformed ? "malformed device registration" : "node unregistered");
    std::printf("  why: %s\n", inv.message.c_str());
    return 0;
  }
  if (result->fits) {
    std::printf("%s: FITS  (node score %.2f, node policy %s, GPU policy %s)\n", head.c_str(),
                result->node_score, prepared.node_policy.c_str(), prepared.gpu_policy.c_str());
    print_usage_table(*usage, inv.inventory);
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
  print_usage_table(*usage, inv.inventory);
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

int print_json(const model::Pod& pod, const model::Node& node, const fit::PreparedPod& prepared,
               const fit::InventoryResult& inv, const fit::NodeUsage* usage,
               const fit::NodeFit* result) {
  model::JsonWriter w;
  w.begin_object();
  w.key("pod").string(pod_label(pod));
  w.key("node").string(node.metadata.name);
  fit::FitClass cls = fit::FitClass::kNotInterested;
  std::string reason;
  if (prepared.requests_devices()) {
    if (inv.state == fit::InventoryResult::State::kOk) {
      cls = result->fit_class;
      reason = result->reason;
    } else {
      const bool malformed = inv.state == fit::InventoryResult::State::kMalformed;
      cls = malformed ? fit::FitClass::kMalformedDeviceDescription
                      : fit::FitClass::kNoDeviceDescription;
      reason = malformed ? "malformed device registration: " + inv.message
                         : std::string(fit::kNodeUnregistered);
    }
  }
  w.key("fits").boolean(cls == fit::FitClass::kFits || cls == fit::FitClass::kNotInterested);
  w.key("class").string(fit::to_string(cls));
  w.key("reason").string(reason);
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
  std::printf("%s\n", w.str().c_str());
  return 0;
}

int input_error(const std::string& message) {
  std::fprintf(stderr, "hamisim fit: %s\n", message.c_str());
  return 2;
}

}  // namespace

int run_fit(const FitOptions& options) {
  if (options.output != "table" && options.output != "json") {
    return input_error("--output must be table or json, not \"" + options.output + "\"");
  }
  auto config = load_device_flags(options.device);
  if (!config) return input_error(config.error().message);
  const device::DeviceRegistry registry = fit::build_registry(*config);

  auto pod_text = model::read_file(options.pod_path);
  if (!pod_text) return input_error(pod_text.error().message);
  auto pod = model::decode_pod(*pod_text);
  if (!pod) return input_error(options.pod_path + ": " + pod.error().message);
  auto node_text = model::read_file(options.node_path);
  if (!node_text) return input_error(node_text.error().message);
  auto node = model::decode_node(*node_text);
  if (!node) return input_error(options.node_path + ": " + node.error().message);

  fit::FitPolicy policy{options.gpu_policy, options.node_policy};
  auto prepared = fit::prepare_pod(*pod, registry, policy);
  if (!prepared) return input_error(options.pod_path + ": " + prepared.error().message);
  prepared->explain = true;

  const fit::InventoryResult inv = fit::read_registered_inventory(*node, registry);
  if (inv.state != fit::InventoryResult::State::kOk || !prepared->requests_devices()) {
    return options.output == "json" ? print_json(*pod, *node, *prepared, inv, nullptr, nullptr)
                                    : print_table(*pod, *node, *prepared, inv, nullptr, nullptr);
  }
  fit::NodeUsage usage = fit::fresh_usage(inv.inventory);
  if (!options.pods_on_node_path.empty()) {
    auto others = model::load_objects(options.pods_on_node_path);
    if (!others) return input_error(others.error().message);
    for (const model::Pod& other : others->pods) {
      auto allocation = fit::decode_pod_allocation(other, registry);
      if (!allocation) {
        return input_error(options.pods_on_node_path + ": pod " + pod_label(other) + ": " +
                           allocation.error().message);
      }
      fit::add_pod_usage(usage, *allocation);
    }
  }
  const fit::NodeFit result = fit::fit_pod(*prepared, usage, inv.inventory, registry, nullptr,
                                           fit::AllocationSite{node->metadata.name, std::nullopt});
  return options.output == "json" ? print_json(*pod, *node, *prepared, inv, &usage, &result)
                                  : print_table(*pod, *node, *prepared, inv, &usage, &result);
}

}  // namespace hamisim::cli
