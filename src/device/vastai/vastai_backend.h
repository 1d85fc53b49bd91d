#pragma once
// Vastai (reference: hami-other-vendors.md B.12): whole devices or, in "die mode", single dies
// of a card (AIC). JSON registration whose custominfo names the die strategy and the AIC,
// handshake, no memory or core accounting, and a node score that favours containers whose
// dies share one AIC.

#include "device/common/config_section.h"
#include "device/common/standard_backend.h"

namespace hamisim::device::vastai {

inline constexpr std::string_view kVendor = "Vastai";
inline constexpr std::string_view kRegisterAnnotation = "hami.io/node-va-register";
inline constexpr std::string_view kHandshakeAnnotation = "hami.io/node-handshake-va";

// The `vastai:` section.
struct VastaiConfig {
  std::string resource_count_name = "vastaitech.com/va";
};

class VastaiBackend final : public StandardBackend {
 public:
  explicit VastaiBackend(VastaiConfig config = {});
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  // The JSON registration with every device's cores forced to 100.
  NodeDevices node_devices(const model::Node& node) const override;
  FitOutcome fit(std::span<DeviceUsage* const> devices, const ContainerDeviceRequest& request,
                 const FitContext& context) const override;
  // Per container with devices: the largest share of its dies on one AIC; 0 for the whole
  // node when a chosen device is not a die with an AIC.
  float score_node(std::span<const DeviceUsage> previous, const PodSingleDevice& chosen,
                   std::string_view node_policy,
                   const PreparedPod* prepared = nullptr) const override;

 private:
  VastaiConfig config_;
};

// BackendFactory for the `vastai:` section.
Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults);

}  // namespace hamisim::device::vastai
