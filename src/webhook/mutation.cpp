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

// The backend declared its admission kind, so the cast is to its own class.
template <class Backend, Result<bool> (*Mutate)(const Backend&, ContainerAdmission)>
Result<bool> as(const device::DeviceBackend& backend, ContainerAdmission target) {
  return Mutate(static_cast<const Backend&>(backend), target);
}

Result<bool> mutate_nvidia(const device::DeviceBackend& backend, ContainerAdmission target) {
  return mutate_nvidia_container(
      static_cast<const device::nvidia::NvidiaBackend&>(backend).config(), target);
}

}  // namespace

ContainerMutator mutator_for(const device::DeviceBackend& backend) {
  using A = device::DeviceBackend::Admission;
  switch (backend.admission()) {
    case A::kCountInLimits:
      return &count_in_limits;
    case A::kNvidia:
      return &mutate_nvidia;
    case A::kIluvatar:
      return &as<device::iluvatar::IluvatarBackend, &mutate_iluvatar_container>;
    case A::kAscend:
      return &as<device::ascend::AscendBackend, &mutate_ascend_container>;
    case A::kAmd:
      return &as<device::amd::AmdBackend, &mutate_amd_container>;
    case A::kMthreads:
      return &as<device::mthreads::MthreadsBackend, &mutate_mthreads_container>;
    case A::kKunlunVxpu:
      return &as<device::kunlun::XpuBackend, &mutate_xpu_container>;
    case A::kMetaxSgpu:
      return &as<device::metax::MetaxSgpuBackend, &mutate_metax_sgpu_container>;
  }
  return &count_in_limits;
}

}  // namespace hamisim::webhook
