#pragma once
// Iluvatar (reference: hami-other-vendors.md B.8): one backend per entry of the `iluvatars:`
// list, keyed by the entry's commonWord (MR-V100, BI-V150, ...). The standard Fit, the legacy
// colon registration and the handshake; only instantiated with --enable-iluvatar.

#include <optional>
#include <string>
#include <vector>

#include "device/common/config_section.h"
#include "device/common/standard_backend.h"

namespace hamisim::device::iluvatar {

// The vMem resource counts units of 256 MiB (requests and quota).
inline constexpr int32_t kMemoryUnitMiB = 256;
// The container-name variable the admission webhook adds, misspelt as in HAMi (the Iluvatar
// runtime reads this spelling).
inline constexpr std::string_view kContainerNameEnv = "SOL_CONTINER_NAME";

// One entry of `iluvatars:`.
struct IluvatarConfig {
  std::string common_word;  // vendor key, request Type and annotation infix
  std::string chip_name;    // read from the file; HAMi does not use it
  std::string resource_count_name;
  std::string resource_memory_name;
  std::string resource_core_name;
};

// HAMi's chart entries: MR-V100, MR-V50, BI-V150, BI-V100.
std::vector<IluvatarConfig> chart_configs();

// What the admission webhook does to one container (HAMi's MutateAdmission).
struct IluvatarAdmission {
  bool found = false;  // the count resource is in the container's limits
  // Set limits[<core resource>] to this (100 × count, when count Value() > 1).
  std::optional<int64_t> cores_limit;
  // Append env kContainerNameEnv with this value unless the container already has a variable
  // of that name (model::Container carries no env, so the webhook checks). Unset for a
  // container without a name.
  std::optional<std::string> container_name_env;
};

class IluvatarBackend final : public StandardBackend {
 public:
  Admission admission() const override { return Admission::kIluvatar; }
  explicit IluvatarBackend(IluvatarConfig config);
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  NodeDevices node_devices(const model::Node& node) const override;

  IluvatarAdmission admission(const model::Container& container) const;

  const IluvatarConfig& config() const { return config_; }
  // hami.io/node-<commonWord>-register
  const std::string& register_annotation() const { return register_annotation_; }

 private:
  IluvatarConfig config_;
  std::string register_annotation_;
};

// BackendFactory for the `iluvatars:` list (gate VendorGate::kIluvatar). Entries without a
// commonWord are skipped: an empty vendor key would match every device type.
Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults);

}  // namespace hamisim::device::iluvatar
