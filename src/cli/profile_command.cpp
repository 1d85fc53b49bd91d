#include "cli/profile_command.h"

#include <cstdio>

#include "fit/device_config.h"
#include "model/decode.h"
#include "model/json_writer.h"
#include "profile/device_profiles.h"
#include "profile/reconcile.h"

namespace hamisim::cli {
namespace {

int input_error(const std::string& message) {
  std::fprintf(stderr, "hamisim profile check: %s\n", message.c_str());
  return 2;
}

}  // namespace

int run_profile_check(const ProfileCheckOptions& o) {
  if (o.output != "table" && o.output != "json") {
    return input_error("--output must be table or json, not \"" + o.output + "\"");
  }
  fit::DeviceConfig config;
  if (!o.device_config_path.empty()) {
    auto loaded = fit::load_device_config(o.device_config_path);
    if (!loaded) return input_error(loaded.error().message);
    config = std::move(loaded).value();
  }
  const device::DeviceRegistry registry = fit::build_registry(config);
  auto profiles = profile::load_device_profiles(o.device_profiles_path, registry);
  if (!profiles) return input_error(profiles.error().message);
  model::ObjectSet cluster;
  for (const auto& path : o.cluster_paths) {
    auto objects = model::load_objects(path);
    if (!objects) return input_error(objects.error().message);
    cluster.append(std::move(objects).value());
  }
  const profile::ReconcileReport report = profile::reconcile(*profiles, cluster.nodes, registry);

  if (o.output == "json") {
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
      w.key("error").string(c.error).end_object();
    }
    w.end_array().end_object();
    std::printf("%s\n", w.str().c_str());
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
