#pragma once
// Hygon DCU (reference: hami-other-vendors.md B.7): the standard Fit with model filters,
// the legacy colon registration and the handshake.

#include "device/common/config_section.h"
#include "device/common/standard_backend.h"

namespace hamisim::device::hygon {

inline constexpr std::string_view kVendor = "DCU";
inline constexpr std::string_view kRegisterAnnotation = "hami.io/node-dcu-register";
inline constexpr std::string_view kHandshakeAnnotation = "hami.io/node-handshake-dcu";

// The `hygon:` section.
struct HygonConfig {
  std::string resource_count_name = "hygon.com/dcunum";
  std::string resource_memory_name = "hygon.com/dcumem";
  std::string resource_core_name = "hygon.com/dcucores";
  int32_t memory_factor = 1;
};

class HygonBackend final : public StandardBackend {
 public:
  explicit HygonBackend(HygonConfig config = {});
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  NodeDevices node_devices(const model::Node& node) const override;

 private:
  HygonConfig config_;
};

// BackendFactory for the `hygon:` section.
Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults);

}  // namespace hamisim::device::hygon
