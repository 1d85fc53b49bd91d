#pragma once
// The DRA form of a device profile (`dra:`): the ResourceSlices a fresh node of the group
// publishes, so that a node group with zero nodes can be planned for pods with claims
// (docs/dra.md, "Cold-zero groups"). Private to the profile parser (it speaks yaml-cpp).

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "device/types.h"
#include "dra/objects.h"
#include "model/result.h"
#include "model/yaml_fields.h"

namespace hamisim::profile {

// `dra:` of profile `profile`: `hamiDriver: true` renders the profile's NVIDIA `devices:`
// (`devices` is null when it has none) as HAMi's k8s-dra-driver publishes them;
// `resourceSlices:` lists ResourceSlices as a node of the group publishes them, read by the
// strict DRA decoder. Node-local slices only: `spec.nodeName` is required and each node's
// name replaces it. The slices' node name is the profile's name until a node is made.
struct DraForm {
  std::vector<dra::ResourceSlice> slices;
  // `hamiDriver: true`: the profile's devices are HAMi's DRA driver's, so they are not also a
  // device-plugin registration (HAMi's two modes must not share a node).
  bool hami_driver = false;
};
Result<DraForm> read_dra_slices(const YAML::Node& n, const model::yaml::Where& where,
                                const std::string& profile,
                                const std::vector<device::DeviceInfo>* devices);

// One slice in HAMi k8s-dra-driver's shape (reference dra.md §4.1) for the healthy GPUs of
// `devices`, on node `node`, pool named after the node: `hami-gpu-<index>`, attributes type,
// uuid, minor and productName (the registered type without HAMi's "NVIDIA-" prefix), capacity
// `cores` (devcore, default all, 0..devcore step 1) and `memory` (devmem MiB in bytes, default
// all, 1Mi..all step 1Mi), shareable. Attributes the profile does not know (driver versions,
// PCIe) are left out.
dra::ResourceSlice hami_driver_slice(const std::string& node,
                                     const std::vector<device::DeviceInfo>& devices);

}  // namespace hamisim::profile
