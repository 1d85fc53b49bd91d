#pragma once
// Vendor admission mutations (HAMi's per-device MutateAdmission). Each vendor that changes pods
// at admission has one function here; the dispatch is keyed on the backend's vendor() so that a
// vendor added later only adds a case. Backends without one leave pods alone.

#include <boost/json/object.hpp>

#include "device/backend.h"
#include "device/nvidia/nvidia_backend.h"
#include "model/result.h"

namespace hamisim::webhook {

// The container being admitted and the spec of its pod (runtimeClassName is pod-wide), both
// edited in place. true when the container uses the vendor's devices (HAMi's `found`); an error
// rejects the pod with status 500, as HAMi does.
struct ContainerAdmission {
  boost::json::object& container;
  boost::json::object& pod_spec;
};
using ContainerMutator = Result<bool> (*)(const device::DeviceBackend& backend,
                                          ContainerAdmission target);

// nullptr for a backend whose vendor has no admission behaviour (or is unknown).
ContainerMutator mutator_for(const device::DeviceBackend& backend);

// NVIDIA's MutateAdmission (reference hami-device-model.md §2.2).
Result<bool> mutate_nvidia_container(const device::nvidia::NvidiaConfig& config,
                                     ContainerAdmission target);

}  // namespace hamisim::webhook
