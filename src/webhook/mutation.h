#pragma once
// Vendor admission mutations (HAMi's per-device MutateAdmission). Each vendor that changes pods
// at admission has one function here; the dispatch is keyed on the backend's admission() kind,
// so a vendor added later declares its kind and adds a case. Backends without one leave pods
// alone but still mark a pod that asks for their devices as HAMi's (scheduler name, privileged
// check).

#include <boost/json/object.hpp>

#include "device/backend.h"
#include "device/nvidia/nvidia_backend.h"
#include "model/result.h"

// The backends with their own mutation; webhook/mutation.cpp casts to them once admission()
// named their kind.
namespace hamisim::device::amd {
class AmdBackend;
}
namespace hamisim::device::ascend {
class AscendBackend;
}
namespace hamisim::device::iluvatar {
class IluvatarBackend;
}
namespace hamisim::device::kunlun {
class XpuBackend;
}
namespace hamisim::device::metax {
class MetaxSgpuBackend;
}
namespace hamisim::device::mthreads {
class MthreadsBackend;
}

namespace hamisim::webhook {

// The container being admitted and the spec of its pod (runtimeClassName is pod-wide), both
// edited in place. true when the container uses the vendor's devices (HAMi's `found`); an error
// rejects the pod with status 500, as HAMi does.
struct ContainerAdmission {
  boost::json::object& container;
  boost::json::object& pod_spec;
  boost::json::object& pod;  // the whole pod (annotations are read and written here)
};
using ContainerMutator = Result<bool> (*)(const device::DeviceBackend& backend,
                                          ContainerAdmission target);

// The vendor's mutation; vendors without one only report whether the container's limits name
// their count resource.
ContainerMutator mutator_for(const device::DeviceBackend& backend);

// NVIDIA's MutateAdmission (reference hami-device-model.md §2.2).
Result<bool> mutate_nvidia_container(const device::nvidia::NvidiaConfig& config,
                                     ContainerAdmission target);

// Iluvatar: whole-card cores for multi-card containers, SOL_CONTINER_NAME (sic).
Result<bool> mutate_iluvatar_container(const device::iluvatar::IluvatarBackend& backend,
                                       ContainerAdmission target);
// AMD: marks containers asking any AMD resource; a cores value outside 1..100 rejects the pod.
Result<bool> mutate_amd_container(const device::amd::AmdBackend& backend,
                                  ContainerAdmission target);
// Moore Threads: whole-GPU cores and memory for multi-GPU containers, the legal memory sizes,
// mthreads.com/request-gpu-num on the pod.
Result<bool> mutate_mthreads_container(const device::mthreads::MthreadsBackend& backend,
                                       ContainerAdmission target);
// Kunlunxin vXPU: the memory limit and request rounded to the slice size.
Result<bool> mutate_xpu_container(const device::kunlun::XpuBackend& backend,
                                  ContainerAdmission target);
// MetaX sGPU: app class and QoS policy checks; pods without a policy get best-effort.
Result<bool> mutate_metax_sgpu_container(const device::metax::MetaxSgpuBackend& backend,
                                         ContainerAdmission target);
// Ascend: the count, memory (rounded to a template or a whole card) and runtime class the
// backend decides; its errors reject the pod.
Result<bool> mutate_ascend_container(const device::ascend::AscendBackend& backend,
                                     ContainerAdmission target);

}  // namespace hamisim::webhook
