#include "webhook/mutation.h"

#include "device/types.h"

namespace hamisim::webhook {
namespace {

Result<bool> mutate_nvidia(const device::DeviceBackend& backend, ContainerAdmission target) {
  // The vendor key alone does not prove the type: a test double may claim "NVIDIA".
  const auto* nvidia = dynamic_cast<const device::nvidia::NvidiaBackend*>(&backend);
  if (!nvidia) return false;
  return mutate_nvidia_container(nvidia->config(), target);
}

}  // namespace

ContainerMutator mutator_for(const device::DeviceBackend& backend) {
  if (backend.vendor() == device::kNvidiaVendor) return &mutate_nvidia;
  return nullptr;
}

}  // namespace hamisim::webhook
