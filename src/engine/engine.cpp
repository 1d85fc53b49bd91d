#include "engine/engine.h"

#include <limits>

namespace hamisim::engine {
namespace {

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

std::shared_ptr<const profile::DeviceProfiles> or_empty(
    std::shared_ptr<const profile::DeviceProfiles> profiles) {
  return profiles ? std::move(profiles) : std::make_shared<const profile::DeviceProfiles>();
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

Engine::Engine(const device::DeviceRegistry& registry,
               std::shared_ptr<const profile::DeviceProfiles> profiles, fit::FitPolicy policy)
    : registry_(registry),
      profiles_(or_empty(std::move(profiles))),
      policy_(std::move(policy)),
      describer_(registry_, profiles_) {}

Result<fit::PreparedPod> Engine::prepare(const model::Pod& pod, std::string_view where) const {
  if (Status s = validate_device_resources(pod, registry_, where); !s) return s.error();
  auto prepared = fit::prepare_pod(pod, registry_, policy_);
  if (!prepared) return make_error(std::string(where) + ": " + prepared.error().message);
  return prepared;
}

std::shared_ptr<const fit::DescriptionResult> Engine::describe(const fit::KeyedNode& node) const {
  return describer_.describe(node);
}

std::shared_ptr<const fit::DescriptionResult> Engine::describe(const model::Node& node) const {
  return describer_.describe(node);
}

Result<fit::PodAllocation> Engine::allocation(const model::Pod& pod,
                                              const model::StringMap* added) const {
  return fit::decode_pod_allocation(pod, registry_, added);
}

Verdict Engine::decide(const fit::PreparedPod& pod, const model::Node& node,
                       std::shared_ptr<const fit::DescriptionResult> described_ptr,
                       const fit::NodeUsage& usage) const {
  Verdict v;
  if (!pod.requests_devices()) {
    v.fit_class = fit::FitClass::kNotInterested;
    v.reason = kNotInterestedReason;
    return v;
  }
  v.described = std::move(described_ptr);
  const fit::DescriptionResult& described = *v.described;
  switch (described.state) {
    case fit::DescriptionResult::State::kNoDescription:
      v.fit_class = fit::FitClass::kNoDeviceDescription;
      v.failed_text = fit::kNodeUnregistered;
      v.reason = described.message;
      return v;
    case fit::DescriptionResult::State::kMalformed:
      v.fit_class = fit::FitClass::kMalformedDeviceDescription;
      v.failed_text = "malformed device registration: " + described.message;
      v.reason = described.message;
      return v;
    case fit::DescriptionResult::State::kRejected:
      v.fit_class = fit::FitClass::kProfileRejected;
      v.failed_text = "device profile rejected: " + described.message;
      v.reason = described.message;
      return v;
    case fit::DescriptionResult::State::kOk:
      break;
  }
  // The node's name goes to the vendors whose annotations carry it; no time, so answers stay
  // stable (AllocationSite).
  v.fit = fit::fit_pod(pod, usage, described.description, registry_, nullptr,
                       fit::AllocationSite{node.metadata.name, std::nullopt});
  v.fit_class = v.fit.fit_class;
  if (!v.fit.fits) {
    v.failed_text = v.fit.reason.empty() ? "rejected" : v.fit.reason;
    v.reason = v.failed_text;
  }
  return v;
}

Verdict Engine::fit(const fit::PreparedPod& pod, const fit::KeyedNode& node,
                    std::span<const fit::PodAllocation> placed, fit::NodeUsage& scratch) const {
  if (!pod.requests_devices()) return decide(pod, node.node, nullptr, scratch);
  std::shared_ptr<const fit::DescriptionResult> described = describe(node);
  if (described->state == fit::DescriptionResult::State::kOk) {
    fit::reset_usage(scratch, described->description);
    for (const fit::PodAllocation& a : placed) fit::add_pod_usage(scratch, a);
  }
  return decide(pod, node.node, std::move(described), scratch);
}

void Engine::set_observations(std::shared_ptr<const profile::ProfileObservations> observations) {
  describer_.set_observations(std::move(observations));
}

}  // namespace hamisim::engine
