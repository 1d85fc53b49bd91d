#pragma once
// Biren (reference: hami-other-vendors.md B.4): whole devices shared only through the
// registration's `count` slots. JSON registration, handshake, no memory or core accounting.

#include "device/common/config_section.h"
#include "device/common/standard_backend.h"

namespace hamisim::device::biren {

inline constexpr std::string_view kVendor = "Biren";
inline constexpr std::string_view kRegisterAnnotation = "hami.io/node-biren-register";
inline constexpr std::string_view kHandshakeAnnotation = "hami.io/node-handshake-biren";

// The `biren:` section.
struct BirenConfig {
  std::string resource_count_name = "birentech.com/gpu";
};

class BirenBackend final : public StandardBackend {
 public:
  explicit BirenBackend(BirenConfig config = {});
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  // The JSON registration with every device's cores forced to 100.
  NodeDevices node_devices(const model::Node& node) const override;
  // Health, type, UUID, slots and mutex only: no memory or core checks, 0/0 recorded.
  FitOutcome fit(std::span<DeviceUsage* const> devices, const ContainerDeviceRequest& request,
                 const FitContext& context) const override;

 private:
  BirenConfig config_;
};

// BackendFactory for the `biren:` section.
Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults);

}  // namespace hamisim::device::biren
