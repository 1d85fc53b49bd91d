#pragma once
// The set of configured vendor backends, iterated in ascending vendor-key order (the order
// HAMi uses for node locks, and a deterministic one for everything else).

#include <memory>
#include <string_view>
#include <vector>

#include "device/backend.h"

namespace hamisim::device {

class DeviceRegistry {
 public:
  void add(std::shared_ptr<const DeviceBackend> backend);
  const DeviceBackend* find(std::string_view vendor) const;
  const std::vector<std::shared_ptr<const DeviceBackend>>& backends() const { return backends_; }

  // HAMi Resourcereqs: one entry per container, init containers first; each entry holds the
  // vendors whose request has nums > 0.
  PodRequests requests_for(const model::Pod& pod) const;

 private:
  std::vector<std::shared_ptr<const DeviceBackend>> backends_;
};

// True when any container requests any managed device.
bool has_device_requests(const PodRequests& requests);

}  // namespace hamisim::device
