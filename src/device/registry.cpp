#include "device/registry.h"

#include <algorithm>

namespace hamisim::device {

void DeviceRegistry::add(std::shared_ptr<const DeviceBackend> backend) {
  // HAMi keeps backends in a map by vendor key: a second one with the same key replaces it.
  for (auto& b : backends_) {
    if (b->vendor() == backend->vendor()) {
      b = std::move(backend);
      return;
    }
  }
  auto pos = std::lower_bound(backends_.begin(), backends_.end(), backend->vendor(),
                              [](const auto& b, std::string_view v) { return b->vendor() < v; });
  backends_.insert(pos, std::move(backend));
}

const DeviceBackend* DeviceRegistry::find(std::string_view vendor) const {
  for (const auto& b : backends_) {
    if (b->vendor() == vendor) return b.get();
  }
  return nullptr;
}

PodRequests DeviceRegistry::requests_for(const model::Pod& pod) const {
  PodRequests out;
  out.reserve(pod.spec.init_containers.size() + pod.spec.containers.size());
  auto add = [&](const model::Container& c) {
    ContainerRequests reqs;
    for (const auto& b : backends_) {
      ContainerDeviceRequest r = b->request_for(c);
      if (r.nums > 0) reqs.emplace(std::string(b->vendor()), std::move(r));
    }
    out.push_back(std::move(reqs));
  };
  for (const auto& c : pod.spec.init_containers) add(c);
  for (const auto& c : pod.spec.containers) add(c);
  return out;
}

bool has_device_requests(const PodRequests& requests) {
  return std::any_of(requests.begin(), requests.end(), [](const auto& r) { return !r.empty(); });
}

}  // namespace hamisim::device
