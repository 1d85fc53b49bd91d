#include "cli/doctor_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/cluster_input.h"
#include "cli/hami_flags.h"
#include "cli/input_error.h"
#include "cli/structured_output.h"
#include "device/catalog/device_config.h"
#include "doctor/doctor.h"
#include "extender/scheduler_config.h"
#include "go/duration.h"
#include "model/input.h"

namespace hamisim::cli {

void add_doctor_options(CLI::App& app, DoctorOptions& o) {
  app.add_option("--scheduler-config", o.scheduler_config_path,
                 "KubeSchedulerConfiguration Cluster Autoscaler loads (--scheduler-config-file)");
  app.add_option("--kube-scheduler-config", o.kube_scheduler_config_path,
                 "KubeSchedulerConfiguration of the kube-scheduler running the live extender");
  add_device_flags(app, o.device,
                   "HAMi device-config.yaml (the resource names the extender must manage)");
  app.add_option("--max-nodegroup-binpacking-duration", o.max_nodegroup_binpacking_duration,
                 "Cluster Autoscaler's value of this flag: the budget httpTimeout must fit in")
      ->capture_default_str();
  app.add_option("--network-policy", o.network_policy_path,
                 "NetworkPolicy in front of the simulation service: check it admits Cluster "
                 "Autoscaler's pods as the CA Helm chart labels them");
  app.add_option("--ca-cloud-provider", o.ca_cloud_provider,
                 "The CA chart's cloudProvider: its pods are labelled "
                 "app.kubernetes.io/name: <this>-cluster-autoscaler")
      ->capture_default_str();
  app.add_option("--ca-pod-labels", o.ca_pod_labels,
                 "Labels Cluster Autoscaler's pods carry, k=v,k2=v2, checked instead of the "
                 "chart's (a nameOverride, CA's example manifests: app=cluster-autoscaler)");
  app.add_option("--cluster", o.cluster_paths,
                 "Nodes and DRA objects as Kubernetes Lists (kubectl get "
                 "nodes,resourceslices,deviceclasses -o json): check HAMi's DRA mode");
  app.add_flag("--offline", o.offline, "Check the files only; do not call the extenders");
  app.add_option("--output,-o", o.output, "table, json or yaml")->capture_default_str();
  app.add_flag("--strict", o.strict,
               "Unknown fields in --cluster's Kubernetes objects are errors, not warnings");
}

int run_doctor(const DoctorOptions& o) {
  if (o.output != "table" && o.output != "json" && o.output != "yaml") {
    return input_error("doctor", "--output must be table, json or yaml, not \"" + o.output + "\"");
  }
  if (o.scheduler_config_path.empty() && o.kube_scheduler_config_path.empty() &&
      o.cluster_paths.empty()) {
    return input_error("doctor",
                       "give --scheduler-config (Cluster Autoscaler's), --kube-scheduler-config "
                       "(kube-scheduler's, e.g. HAMi's), --cluster, or several");
  }
  std::vector<model::FlagInput> inputs{{"--scheduler-config", o.scheduler_config_path},
                                       {"--kube-scheduler-config", o.kube_scheduler_config_path},
                                       {"--network-policy", o.network_policy_path},
                                       {"--device-config-file", o.device.config_path}};
  for (const auto& path : o.cluster_paths) inputs.push_back({"--cluster", path});
  if (auto once = model::check_stdin_once(inputs); !once) {
    return input_error("doctor", once.error().message);
  }
  doctor::DoctorInput input;
  auto budget = go::parse_duration(o.max_nodegroup_binpacking_duration);
  if (!budget) {
    return input_error("doctor",
                       "--max-nodegroup-binpacking-duration: " +
                           go::invalid_duration_text(o.max_nodegroup_binpacking_duration));
  }
  if (budget->count() <= 0) {
    return input_error("doctor", "--max-nodegroup-binpacking-duration: must be positive");
  }
  input.options.ca_binpacking_budget = *budget;

  auto device_config = load_device_flags(o.device);
  if (!device_config) return input_error("doctor", device_config.error().message);
  const device::DeviceRegistry registry = device::build_registry(*device_config);
  input.options.hami_resources = doctor::hami_resource_names(registry);
  input.options.vendors = doctor::vendor_resources(registry);
  // The probe pod asks for NVIDIA devices on a template registering NVIDIA GPUs.
  if (const device::DeviceBackend* nvidia = registry.find(device::kNvidiaVendor)) {
    input.probe_resources = nvidia->resource_names();
  }

  std::optional<extender::SchedulerConfig> ca;
  if (!o.scheduler_config_path.empty()) {
    auto loaded = extender::load_scheduler_config(o.scheduler_config_path);
    if (!loaded) return input_error("doctor", loaded.error().message);
    ca = std::move(loaded).value();
    input.ca = &*ca;
  }
  std::optional<extender::SchedulerConfig> kube_scheduler;
  if (!o.kube_scheduler_config_path.empty()) {
    extender::LoadOptions options;
    options.require_single_profile = false;
    options.flag = "--kube-scheduler-config";
    auto loaded = extender::load_scheduler_config(o.kube_scheduler_config_path, options);
    if (!loaded) return input_error("doctor", loaded.error().message);
    kube_scheduler = std::move(loaded).value();
    input.kube_scheduler = &*kube_scheduler;
  }
  if (!o.network_policy_path.empty()) {
    static const model::DocumentSpec kSpec{
        "--network-policy", {"NetworkPolicy"}, "a NetworkPolicy", {}};
    auto doc = model::read_document(o.network_policy_path, kSpec);
    if (!doc) return input_error("doctor", doc.error().message);
    input.network_policies.push_back({doc->source, std::move(doc->text)});
  }
  for (const auto& path : o.cluster_paths) {
    auto loaded = load_nodes_and_dra(path, "doctor", o.strict);
    if (!loaded) return input_error("doctor", loaded.error().message);
    input.clusters.push_back(
        {model::display_name(path), std::move(loaded->objects.nodes), std::move(loaded->dra)});
  }
  input.ca_pod_labels.cloud_provider = o.ca_cloud_provider;
  if (!o.ca_pod_labels.empty()) {
    auto labels = parse_string_to_string(o.ca_pod_labels);
    if (!labels) return input_error("doctor", "--ca-pod-labels: " + labels.error().message);
    input.ca_pod_labels.labels = std::move(labels).value();
  }
  input.offline = o.offline;

  const doctor::Report report = doctor::run_doctor(input);
  if (o.output != "table") {
    if (int code = write_structured("doctor", doctor::render_json(report), o.output); code != 0) {
      return code;
    }
  } else {
    const std::string out = doctor::render_table(report);
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return doctor::exit_code(report);
}

}  // namespace hamisim::cli
