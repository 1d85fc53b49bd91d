#include "webhook/mutation.h"

#include "device/amd/amd_backend.h"
#include "device/ascend/ascend_backend.h"
#include "device/iluvatar/iluvatar_backend.h"
#include "device/kunlun/xpu_backend.h"
#include "device/metax/metax_sgpu.h"
#include "device/mthreads/mthreads_backend.h"
#include "device/types.h"

namespace hamisim::webhook {
namespace {

Result<bool> mutate_nvidia(const device::DeviceBackend& backend, ContainerAdmission target) {
  // The vendor key alone does not prove the type: a test double may claim "NVIDIA".
  const auto* nvidia = dynamic_cast<const device::nvidia::NvidiaBackend*>(&backend);
  if (!nvidia) return false;
  return mutate_nvidia_container(nvidia->config(), target);
}

// Most vendors change nothing at admission; their `found` is "the count resource is in the
// container's limits" (reference: hami-other-vendors.md, each vendor's Requests section).
Result<bool> count_in_limits(const device::DeviceBackend& backend, ContainerAdmission target) {
  const std::string& count = backend.resource_names().count;
  if (count.empty()) return false;
  const boost::json::value* resources = target.container.if_contains("resources");
  if (!resources || !resources->is_object()) return false;
  const boost::json::value* limits = resources->get_object().if_contains("limits");
  return limits && limits->is_object() && limits->get_object().contains(count);
}

}  // namespace

Result<bool> mutate_iluvatar(const device::DeviceBackend& backend, ContainerAdmission target) {
  return mutate_iluvatar_container(static_cast<const device::iluvatar::IluvatarBackend&>(backend),
                                   target);
}

Result<bool> mutate_mthreads(const device::DeviceBackend& backend, ContainerAdmission target) {
  return mutate_mthreads_container(static_cast<const device::mthreads::MthreadsBackend&>(backend),
                                   target);
}

Result<bool> mutate_xpu(const device::DeviceBackend& backend, ContainerAdmission target) {
  return mutate_xpu_container(static_cast<const device::kunlun::XpuBackend&>(backend), target);
}

Result<bool> mutate_metax_sgpu(const device::DeviceBackend& backend, ContainerAdmission target) {
  return mutate_metax_sgpu_container(static_cast<const device::metax::MetaxSgpuBackend&>(backend),
                                     target);
}

Result<bool> mutate_amd(const device::DeviceBackend& backend, ContainerAdmission target) {
  return mutate_amd_container(static_cast<const device::amd::AmdBackend&>(backend), target);
}

Result<bool> mutate_ascend(const device::DeviceBackend& backend, ContainerAdmission target) {
  return mutate_ascend_container(static_cast<const device::ascend::AscendBackend&>(backend),
                                 target);
}

ContainerMutator mutator_for(const device::DeviceBackend& backend) {
  if (backend.vendor() == device::kNvidiaVendor) return &mutate_nvidia;
  // Dispatch on the type: Ascend and Iluvatar vendor keys are configured chip names.
  if (dynamic_cast<const device::iluvatar::IluvatarBackend*>(&backend)) return &mutate_iluvatar;
  if (dynamic_cast<const device::ascend::AscendBackend*>(&backend)) return &mutate_ascend;
  if (dynamic_cast<const device::amd::AmdBackend*>(&backend)) return &mutate_amd;
  if (dynamic_cast<const device::mthreads::MthreadsBackend*>(&backend)) return &mutate_mthreads;
  if (dynamic_cast<const device::kunlun::XpuBackend*>(&backend)) return &mutate_xpu;
  if (dynamic_cast<const device::metax::MetaxSgpuBackend*>(&backend)) return &mutate_metax_sgpu;
  return &count_in_limits;
}

}  // namespace hamisim::webhook
