// NVIDIA's admission mutation, step by step as HAMi's NvidiaGPUDevices.MutateAdmission
// (reference hami-device-model.md §2.2, hami-scheduler-core.md §10 step 4).

#include <string>

#include "webhook/mutation.h"
#include "webhook/pod_json.h"

namespace hamisim::webhook {
namespace {

constexpr std::string_view kTaskPriorityEnv = "CUDA_TASK_PRIORITY";
constexpr std::string_view kCorePolicyEnv = "GPU_CORE_UTILIZATION_POLICY";
constexpr std::string_view kVisibleDevicesEnv = "NVIDIA_VISIBLE_DEVICES";
constexpr int64_t kExclusiveCores = 100;

// Limits first, then requests: where the scheduler side reads a resource from too.
ResourceEntry limit_or_request(const boost::json::object& c, std::string_view name) {
  ResourceEntry e = resource(c, "limits", name);
  return e.present ? e : resource(c, "requests", name);
}

bool in_limits_or_requests(const boost::json::object& c, std::string_view name) {
  return has_resource(c, "limits", name) || has_resource(c, "requests", name);
}

// Go's Quantity.Value(): rounded up to an integer. A value that does not parse cannot reach
// here (the pod decoder refused it); 0 keeps the function total.
int64_t value_of(const ResourceEntry& e) {
  return e.quantity ? e.quantity->value() : 0;
}

// A whole-card request is exclusive: without an explicit cores share the container gets all of
// each GPU's SMs, not the defaultCores share (defaultExclusiveCoreIfNeeded).
void default_exclusive_cores(const device::nvidia::NvidiaConfig& config, boost::json::object& c) {
  if (config.resource_core_name.empty()) return;
  if (!in_limits_or_requests(c, config.resource_count_name)) return;
  if (in_limits_or_requests(c, config.resource_core_name)) return;
  const ResourceEntry pct = limit_or_request(c, config.resource_memory_percentage_name);
  bool exclusive = false;
  if (pct.present) {
    exclusive = value_of(pct) == 100;
  } else {
    exclusive = config.resource_memory_name.empty() ||
                !in_limits_or_requests(c, config.resource_memory_name);
  }
  if (exclusive) set_resource(c, "limits", config.resource_core_name, kExclusiveCores);
}

}  // namespace

Result<bool> mutate_nvidia_container(const device::nvidia::NvidiaConfig& config,
                                     ContainerAdmission target) {
  boost::json::object& c = target.container;

  const ResourceEntry pct = limit_or_request(c, config.resource_memory_percentage_name);
  if (pct.present) {
    const int64_t v = value_of(pct);
    if (v < 0 || v > 100) {
      return make_error("invalid " + config.resource_memory_percentage_name + " value " +
                        std::to_string(v) + " in container " + std::string(container_name(c)) +
                        ": must be an integer between 0 and 100");
    }
  }

  if (const ResourceEntry priority = resource(c, "limits", config.resource_priority_name);
      priority.present) {
    append_env(c, kTaskPriorityEnv, std::to_string(value_of(priority)));
  }

  if (!config.gpu_core_policy.empty() && config.gpu_core_policy != "default") {
    append_env(c, kCorePolicyEnv, config.gpu_core_policy);
  }

  bool found = has_resource(c, "limits", config.resource_count_name);
  if (!found && !config.resource_count_name.empty() && config.default_gpu_num > 0) {
    for (const std::string* name : {&config.resource_core_name, &config.resource_memory_name,
                                    &config.resource_memory_percentage_name}) {
      if (has_resource(c, "limits", *name)) {
        set_resource(c, "limits", config.resource_count_name, config.default_gpu_num);
        found = true;
        break;
      }
    }
  }

  default_exclusive_cores(config, c);

  if (found && !config.runtime_class_name.empty() && !find(target.pod_spec, "runtimeClassName")) {
    target.pod_spec["runtimeClassName"] = config.runtime_class_name;
  }

  if (!found && config.overwrite_env) append_env(c, kVisibleDevicesEnv, "none");
  return found;
}

}  // namespace hamisim::webhook
