#pragma once
// MetaX whole GPUs (reference: hami-other-vendors.md B.10.a): devices synthesised from node
// capacity, the standard Fit with "all containers of a pod on one GPU", and a node score read
// from the device plugin's topology annotations.

#include <cstdint>
#include <string_view>

#include "device/common/standard_backend.h"
#include "device/metax/metax_backend.h"

namespace hamisim::device::metax {

inline constexpr std::string_view kLossAnnotation = "metax-tech.com/gpu.topology.losses";
inline constexpr std::string_view kScoreAnnotation = "metax-tech.com/gpu.topology.scores";
// More devices than any node has: a capacity beyond this is refused instead of allocating
// one DeviceInfo per unit of a hostile number.
inline constexpr int64_t kMaxCapacityDevices = 1024;

class MetaxGpuBackend final : public StandardBackend {
 public:
  explicit MetaxGpuBackend(MetaxConfig config = {});
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  // One DeviceInfo per unit of capacity. HAMi's ScoreNode reads the node's topology
  // annotations, which score_node() does not receive: they travel in each device's
  // custom_info as {"topology.losses":"<annotation>","topology.scores":"<annotation>"} (a key
  // only when the annotation exists).
  NodeDevices node_devices(const model::Node& node) const override;
  float score_node(std::span<const DeviceUsage> previous, const PodSingleDevice& chosen,
                   std::string_view node_policy,
                   const PreparedPod* prepared = nullptr) const override;

 protected:
  bool custom_rule_allows(const DeviceUsage& device, const FitContext& ctx) const override;

 private:
  MetaxConfig config_;
};

// HAMi parseMetaxAnnos: the annotation decoded as Go's map[int]int, value at `n`; bad JSON,
// any element of the wrong type or a missing key read as 0.
float topology_value(std::string_view annotation, int64_t n);

}  // namespace hamisim::device::metax
