#include "cli/profile_command.h"

#include <cstdio>
#include <optional>

#include "cli/cluster_input.h"
#include "cli/input_error.h"
#include "cli/resource_slice_list.h"
#include "cli/structured_output.h"
#include "device/catalog/device_config.h"
#include "kube/client.h"
#include "kube/kube_config.h"
#include "model/decode.h"
#include "model/input.h"
#include "model/json_writer.h"
#include "profile/device_profiles.h"
#include "profile/reconcile.h"

namespace hamisim::cli {
namespace {

// Every Node of the cluster the kubeconfig (or the pod's service account) points to, and its
// ResourceSlices (`slices` null when the API server serves none: no DRA there).
Result<std::vector<model::Node>> list_cluster_nodes(
    const ProfileCheckOptions& o, std::optional<std::vector<dra::ResourceSlice>>& slices) {
  const std::string flag = o.in_cluster            ? "--in-cluster"
                           : !o.kubeconfig.empty() ? "--kubeconfig"
                                                   : "kubeconfig";
  const auto rules = kube::LoadingRules::from_process(o.kubeconfig, o.kube_context);
  auto config =
      o.in_cluster ? kube::load_in_cluster_config(rules) : kube::load_client_config(rules);
  if (!config) return make_error(flag + ": " + config.error().message);
  for (const auto& warning : config->warnings) {
    std::fprintf(stderr, "hamisim profile check: warning: %s\n", warning.c_str());
  }
  auto client = kube::KubeClient::create(*config);
  if (!client) return make_error(flag + ": " + client.error().message);
  auto pages = (*client)->list("/api/v1/nodes", "the node list");
  if (!pages) return make_error(pages.error().message);
  std::vector<model::Node> nodes;
  for (const std::string& page : pages->pages) {
    auto listed = kube::for_each_list_item(page, [&](std::string_view item) -> Status {
      auto node =
          model::decode_node_json_in_buffer(item, "items[" + std::to_string(nodes.size()) + "]");
      if (!node) return make_error("the node list: " + node.error().message);
      nodes.push_back(std::move(node).value());
      return Ok{};
    });
    if (!listed) return make_error(listed.error().message);
  }
  auto slice_pages = list_resource_slice_pages(**client);
  if (!slice_pages) {
    std::fprintf(stderr, "hamisim profile check: warning: ResourceSlices not compared: %s\n",
                 slice_pages.error().message.c_str());
    return nodes;
  }
  auto listed = decode_resource_slice_list(*slice_pages);
  if (!listed) return make_error(listed.error().message);
  slices = std::move(listed).value();
  return nodes;
}

}  // namespace

int run_profile_check(const ProfileCheckOptions& o) {
  if (o.output != "table" && o.output != "json" && o.output != "yaml") {
    return input_error("profile check",
                       "--output must be table, json or yaml, not \"" + o.output + "\"");
  }
  std::vector<model::FlagInput> inputs{{"--device-profiles", o.device_profiles_path},
                                       {"--device-config-file", o.device.config_path}};
  for (const auto& path : o.cluster_paths) inputs.push_back({"--cluster", path});
  if (auto once = model::check_stdin_once(inputs); !once)
    return input_error("profile check", once.error().message);
  auto config = load_device_flags(o.device);
  if (!config) return input_error("profile check", config.error().message);
  const device::DeviceRegistry registry = device::build_registry(*config);
  auto profiles = profile::load_device_profiles(o.device_profiles_path, registry);
  if (!profiles) return input_error("profile check", profiles.error().message);
  const int sources =
      int(!o.cluster_paths.empty()) + int(!o.kubeconfig.empty()) + int(o.in_cluster);
  // None: the cluster kubectl would talk to ($KUBECONFIG, ~/.kube/config, in-cluster).
  if (sources > 1)
    return input_error("profile check",
                       "give at most one of --cluster, --kubeconfig, --in-cluster");
  model::ObjectSet cluster;
  dra::Objects dra_objects;  // the nodes' ResourceSlices, for profiles with a DRA form
  for (const auto& path : o.cluster_paths) {
    auto loaded = load_nodes_and_dra(path, "profile check", o.strict);
    if (!loaded) return input_error("profile check", loaded.error().message);
    cluster.append(std::move(loaded->objects));
    for (auto& s : loaded->dra.slices) dra_objects.slices.push_back(std::move(s));
  }
  std::optional<std::vector<dra::ResourceSlice>> listed_slices;
  if (o.cluster_paths.empty()) {
    auto nodes = list_cluster_nodes(o, listed_slices);
    if (!nodes) return input_error("profile check", nodes.error().message);
    cluster.nodes = std::move(nodes).value();
  }
  const std::vector<dra::ResourceSlice>* slices = &dra_objects.slices;
  if (listed_slices) slices = &*listed_slices;
  if (o.cluster_paths.empty() && !listed_slices) slices = nullptr;
  const profile::ReconcileReport report =
      profile::reconcile(*profiles, cluster.nodes, registry, slices);

  if (o.output != "table") {
    model::JsonWriter w;
    w.begin_object();
    w.key("mismatch").boolean(report.any_mismatch());
    w.key("nodes").begin_array();
    for (const auto& c : report.checks) {
      w.begin_object().key("node").string(c.node).key("profile").string(c.profile);
      w.key("matches").boolean(c.mismatches.empty() && c.error.empty());
      w.key("mismatches").begin_array();
      for (const auto& m : c.mismatches) w.string(m);
      w.end_array();
      w.key("dra").begin_array();
      for (const auto& d : c.dra) {
        w.begin_object().key("driver").string(d.driver).key("missing").number(d.missing);
        w.key("extra").number(d.extra).key("mismatch").number(d.mismatch);
        w.key("inFlux").boolean(d.in_flux).end_object();
      }
      w.end_array();
      w.key("error").string(c.error).end_object();
    }
    w.end_array().end_object();
    if (int code = write_structured("profile check", w.str(), o.output); code != 0) return code;
  } else {
    if (report.checks.empty()) {
      std::printf("no real node is described by a profile (%zu node(s) read, %zu profile(s))\n",
                  cluster.nodes.size(), profiles->profiles.size());
    }
    for (const auto& c : report.checks) {
      const bool ok = c.mismatches.empty() && c.error.empty();
      std::printf("%-40s %-28s %s\n", c.node.c_str(), c.profile.empty() ? "-" : c.profile.c_str(),
                  ok ? "matches" : "MISMATCH");
      if (!c.error.empty()) std::printf("    %s\n", c.error.c_str());
      for (const auto& m : c.mismatches) std::printf("    %s\n", m.c_str());
    }
  }
  return report.any_mismatch() ? 1 : 0;
}

}  // namespace hamisim::cli
