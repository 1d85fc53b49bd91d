#include "planner/framework/resources.h"

#include <limits>
#include <string>

#include "planner/framework/labels.h"

namespace hamisim::planner::framework {
namespace {

int64_t sat_add(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return out;
}

int64_t sat_sub(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_sub_overflow(a, b, &out)) {
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

void add_list(model::ResourceList& into, const model::ResourceList& list) {
  for (const auto& [name, q] : list) into[name] += q;
}

void max_list(model::ResourceList& into, const model::ResourceList& list) {
  for (const auto& [name, q] : list) {
    auto it = into.find(name);
    if (it == into.end()) {
      into.emplace(name, q);
    } else if (q > it->second) {
      it->second = q;
    }
  }
}

bool is_sidecar(const model::Container& c) {
  return c.restart_policy && *c.restart_policy == "Always";
}

}  // namespace

bool is_native_resource(std::string_view name) {
  return name.find('/') == std::string_view::npos ||
         name.find("kubernetes.io/") != std::string_view::npos;
}

bool is_extended_resource_name(std::string_view name) {
  if (is_native_resource(name) || starts_with(name, "requests.")) return false;
  std::string for_quota = "requests.";
  for_quota.append(name);
  return is_qualified_name(for_quota);
}

bool is_hugepage_resource_name(std::string_view name) {
  return starts_with(name, "hugepages-");
}

bool is_scalar_resource_name(std::string_view name) {
  return is_extended_resource_name(name) || is_hugepage_resource_name(name) ||
         name.find("kubernetes.io/") != std::string_view::npos ||
         starts_with(name, "attachable-volumes-");
}

int64_t Resource::scalar_value(std::string_view name) const {
  auto it = scalar.find(name);
  return it == scalar.end() ? 0 : it->second;
}

void Resource::add(const model::ResourceList& list) {
  for (const auto& [name, q] : list) {
    if (name == kResourceCpu) {
      milli_cpu = sat_add(milli_cpu, q.milli_value());
    } else if (name == kResourceMemory) {
      memory = sat_add(memory, q.value());
    } else if (name == kResourceEphemeralStorage) {
      ephemeral_storage = sat_add(ephemeral_storage, q.value());
    } else if (name == kResourcePods) {
      allowed_pod_number = sat_add(allowed_pod_number, q.value());
    } else if (is_scalar_resource_name(name)) {
      auto& v = scalar[name];
      v = sat_add(v, q.value());
    }
  }
}

void Resource::add(const Resource& other) {
  milli_cpu = sat_add(milli_cpu, other.milli_cpu);
  memory = sat_add(memory, other.memory);
  ephemeral_storage = sat_add(ephemeral_storage, other.ephemeral_storage);
  for (const auto& [name, v] : other.scalar) {
    auto& mine = scalar[name];
    mine = sat_add(mine, v);
  }
}

void Resource::subtract(const Resource& other) {
  milli_cpu = sat_sub(milli_cpu, other.milli_cpu);
  memory = sat_sub(memory, other.memory);
  ephemeral_storage = sat_sub(ephemeral_storage, other.ephemeral_storage);
  for (const auto& [name, v] : other.scalar) {
    auto& mine = scalar[name];
    mine = sat_sub(mine, v);
  }
}

void Resource::set_max(const model::ResourceList& list) {
  for (const auto& [name, q] : list) {
    if (name == kResourceCpu) {
      milli_cpu = std::max(milli_cpu, q.milli_value());
    } else if (name == kResourceMemory) {
      memory = std::max(memory, q.value());
    } else if (name == kResourceEphemeralStorage) {
      ephemeral_storage = std::max(ephemeral_storage, q.value());
    } else if (name == kResourcePods) {
      allowed_pod_number = std::max(allowed_pod_number, q.value());
    } else if (is_scalar_resource_name(name)) {
      auto [it, inserted] = scalar.emplace(name, q.value());
      if (!inserted) it->second = std::max(it->second, q.value());
    }
  }
}

model::ResourceList pod_requests(const model::Pod& pod) {
  model::ResourceList reqs;
  for (const auto& c : pod.spec.containers) add_list(reqs, c.resources.requests);

  // Init containers run one at a time, next to the sidecars started before them; sidecars
  // keep running with the app containers, so they also add to the app-container sum.
  model::ResourceList sidecars;
  model::ResourceList init_max;
  for (const auto& c : pod.spec.init_containers) {
    if (is_sidecar(c)) {
      add_list(reqs, c.resources.requests);
      add_list(sidecars, c.resources.requests);
      max_list(init_max, sidecars);
    } else {
      model::ResourceList during = c.resources.requests;
      add_list(during, sidecars);
      max_list(init_max, during);
    }
  }
  max_list(reqs, init_max);
  add_list(reqs, pod.spec.overhead);
  return reqs;
}

Resource pod_resource(const model::Pod& pod) {
  Resource r;
  r.add(pod_requests(pod));
  r.allowed_pod_number = 0;  // a pod's own "pods" entry is meaningless for bookkeeping
  return r;
}

Resource pod_fit_request(const model::Pod& pod) {
  Resource r;
  r.set_max(pod_requests(pod));
  return r;
}

Resource node_allocatable(const model::Node& node) {
  Resource r;
  r.add(node.status.allocatable);
  return r;
}

}  // namespace hamisim::planner::framework
