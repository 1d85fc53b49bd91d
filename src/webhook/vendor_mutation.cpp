// Admission mutations of the vendors other than NVIDIA that change pods (HAMi's per-vendor
// MutateAdmission; reference hami-other-vendors.md B.2 §3, B.8 §3). The decisions are made by
// the backends; this file only reads and edits the pod JSON.

#include "device/amd/amd_backend.h"
#include "device/ascend/ascend_backend.h"
#include "device/iluvatar/iluvatar_backend.h"
#include "device/kunlun/xpu_backend.h"
#include "device/metax/metax_sgpu.h"
#include "device/mthreads/mthreads_backend.h"
#include "webhook/mutation.h"
#include "webhook/pod_json.h"

namespace hamisim::webhook {
namespace {

bool has_env(const boost::json::object& c, std::string_view name) {
  const boost::json::value* env = find(c, "env");
  if (!env || !env->is_array()) return false;
  for (const boost::json::value& v : env->get_array()) {
    if (v.is_object() && find_string(v.get_object(), "name") == name) return true;
  }
  return false;
}

std::optional<model::Quantity> quantity_of(const ResourceEntry& e) {
  return e.present ? e.quantity : std::nullopt;
}

// The container as a backend's admission reads it: its name and the limits and requests of
// `names`.
model::Container resources_view(const boost::json::object& c,
                                std::initializer_list<const std::string*> names) {
  model::Container view;
  view.name = std::string(container_name(c));
  for (const std::string* name : names) {
    if (name->empty()) continue;
    if (const ResourceEntry e = resource(c, "limits", *name); e.present) {
      view.resources.limits.emplace(*name, e.quantity.value_or(model::Quantity::from_int(0)));
    }
    if (const ResourceEntry e = resource(c, "requests", *name); e.present) {
      view.resources.requests.emplace(*name, e.quantity.value_or(model::Quantity::from_int(0)));
    }
  }
  return view;
}

std::string_view pod_annotation(const boost::json::object& pod, std::string_view key) {
  const boost::json::object* metadata = find_object(pod, "metadata");
  const boost::json::object* annotations =
      metadata ? find_object(*metadata, "annotations") : nullptr;
  return annotations ? find_string(*annotations, key) : std::string_view();
}

}  // namespace

Result<bool> mutate_iluvatar_container(const device::iluvatar::IluvatarBackend& backend,
                                       ContainerAdmission target) {
  boost::json::object& c = target.container;
  const device::iluvatar::IluvatarAdmission a =
      backend.admission(resources_view(c, {&backend.config().resource_count_name}));
  if (!a.found) return false;
  if (a.cores_limit) set_resource(c, "limits", backend.config().resource_core_name, *a.cores_limit);
  if (a.container_name_env && !has_env(c, device::iluvatar::kContainerNameEnv)) {
    append_env(c, device::iluvatar::kContainerNameEnv, *a.container_name_env);
  }
  return true;
}

Result<bool> mutate_amd_container(const device::amd::AmdBackend& backend,
                                  ContainerAdmission target) {
  const device::amd::AmdConfig& config = backend.config();
  const device::amd::AmdAdmission a = backend.admission(resources_view(
      target.container,
      {&config.resource_count_name, &config.resource_memory_name, &config.resource_core_name}));
  if (!a.error.empty()) return make_error(a.error);
  return a.found;
}

Result<bool> mutate_mthreads_container(const device::mthreads::MthreadsBackend& backend,
                                       ContainerAdmission target) {
  const device::mthreads::MthreadsConfig& config = backend.config();
  auto a = device::mthreads::admit_container(
      config, resources_view(target.container,
                             {&config.resource_count_name, &config.resource_memory_name}));
  if (!a) return a.error();
  if (a->set_cores && !config.resource_core_name.empty())
    set_resource(target.container, "limits", config.resource_core_name, *a->set_cores);
  if (a->set_memory && !config.resource_memory_name.empty())
    set_resource(target.container, "limits", config.resource_memory_name, *a->set_memory);
  if (a->request_gpu_num) {
    ensure_object(ensure_object(target.pod, "metadata"),
                  "annotations")[device::mthreads::kRequestGpuNumAnnotation] = *a->request_gpu_num;
  }
  return a->found;
}

Result<bool> mutate_xpu_container(const device::kunlun::XpuBackend& backend,
                                  ContainerAdmission target) {
  const device::kunlun::KunlunConfig& config = backend.config();
  const device::kunlun::XpuAdmission a = device::kunlun::admit_xpu_container(
      config, resources_view(target.container,
                             {&config.resource_vcount_name, &config.resource_vmemory_name}));
  if (a.set_memory) {
    set_resource(target.container, "limits", config.resource_vmemory_name, *a.set_memory);
    set_resource(target.container, "requests", config.resource_vmemory_name, *a.set_memory);
  }
  return a.found;
}

Result<bool> mutate_metax_sgpu_container(const device::metax::MetaxSgpuBackend& backend,
                                         ContainerAdmission target) {
  const std::string& count_name = backend.resource_names().count;
  if (count_name.empty()) return false;
  const ResourceEntry count = resource(target.container, "limits", count_name);
  if (!count.present) return false;
  model::StringMap annotations;
  if (const boost::json::object* metadata = find_object(target.pod, "metadata")) {
    if (const boost::json::object* a = find_object(*metadata, "annotations")) {
      for (const auto& [k, v] : *a) {
        if (v.is_string()) annotations.emplace(std::string(k), std::string(v.get_string()));
      }
    }
  }
  auto best_effort = device::metax::sgpu_admission(
      annotations, count.quantity.value_or(model::Quantity::from_int(0)));
  if (!best_effort) return best_effort.error();
  if (*best_effort) {
    ensure_object(ensure_object(target.pod, "metadata"),
                  "annotations")[device::metax::kQosPolicyAnnotation] = device::metax::kBestEffort;
  }
  return true;
}

Result<bool> mutate_ascend_container(const device::ascend::AscendBackend& backend,
                                     ContainerAdmission target) {
  boost::json::object& c = target.container;
  const device::ascend::VnpuConfig& config = backend.config();
  device::ascend::AdmissionInput in;
  in.count_limit = quantity_of(resource(c, "limits", config.resource_name));
  in.count_in_requests = has_resource(c, "requests", config.resource_name);
  in.memory_limit = quantity_of(resource(c, "limits", config.resource_memory_name));
  ResourceEntry core = resource(c, "limits", config.resource_core_name);
  if (!core.present) core = resource(c, "requests", config.resource_core_name);
  in.core = quantity_of(core);
  in.hami_core = pod_annotation(target.pod, device::ascend::kVnpuModeAnnotation) ==
                 device::ascend::kSoftSplitMode;
  in.pod_has_runtime_class = find(target.pod_spec, "runtimeClassName") != nullptr;
  const device::ascend::AdmissionResult r = device::ascend::admit_container(config, in);
  if (!r.error.empty()) return make_error(r.error);
  if (r.clear_visible_devices) append_env(c, "ASCEND_VISIBLE_DEVICES", "");
  if (r.count) {
    set_resource(c, "limits", config.resource_name, *r.count);
    if (in.count_in_requests) set_resource(c, "requests", config.resource_name, *r.count);
  }
  if (r.memory) {
    set_resource(c, "limits", config.resource_memory_name, *r.memory);
    set_resource(c, "requests", config.resource_memory_name, *r.memory);
  }
  if (!r.runtime_class_name.empty()) target.pod_spec["runtimeClassName"] = r.runtime_class_name;
  return r.found;
}

}  // namespace hamisim::webhook
