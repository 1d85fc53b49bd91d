#pragma once
// AMD (reference: hami-other-vendors.md B.1): slots, MiB and compute units. JSON registration
// typed with the product name, health from the node's capacity, requests read from limits
// only, cores requested in percent and recorded as a number of CUs.

#include "device/common/config_section.h"
#include "device/common/standard_backend.h"

namespace hamisim::device::amd {

inline constexpr std::string_view kVendor = "AMD";
inline constexpr std::string_view kRegisterAnnotation = "hami.io/node-amd-register";

// The `amd:` section.
struct AmdConfig {
  std::string resource_count_name = "amd.com/gpu";
  std::string resource_memory_name = "amd.com/gpumem";
  std::string resource_core_name = "amd.com/gpucores";
};

// What HAMi's admission webhook decides for one container (MutateAdmission, B.1 §3).
struct AmdAdmission {
  bool found = false;  // the container uses AMD devices
  std::string error;   // non-empty: the pod is rejected with this message
};

class AmdBackend final : public StandardBackend {
 public:
  Admission admission() const override { return Admission::kAmd; }
  explicit AmdBackend(AmdConfig config = {});
  const AmdConfig& config() const { return config_; }
  // Reads limits only and rewrites nothing.
  AmdAdmission admission(const model::Container& container) const;
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  NodeDevices node_devices(const model::Node& node) const override;
  FitOutcome fit(std::span<DeviceUsage* const> devices, const ContainerDeviceRequest& request,
                 const FitContext& context) const override;
  // Capacity of the count resource; HAMi reports a backend without a count name healthy.
  HealthCheck health_check() const override;

 private:
  AmdConfig config_;
};

// BackendFactory for the `amd:` section.
Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults);

}  // namespace hamisim::device::amd
