#pragma once
// Device and node scoring and the GPU ordering policies (reference: hami-device-model.md §5,
// hami-scheduler-core.md §5.7, §6).

#include <span>
#include <string_view>
#include <vector>

#include "device/types.h"
#include "model/result.h"

namespace hamisim::fit {

struct ScoringWeights {
  int32_t slot = 1;
  int32_t core = 1;
  int32_t memory = 1;
};

// hami.io/device-scoring-weights: "slot=<int>,core=<int>,memory=<int>", exactly those three
// keys once each, integers >= 0, not all zero.
Result<ScoringWeights> parse_scoring_weights(std::string_view text);

// Device score in float32 exactly as Go computes it. The request is counted for devices of
// the request's vendor (HAMi fix #2870; v2.10 compared against the model type and never
// counted it).
float device_score(const device::DeviceUsage& d, const device::ContainerRequests& requests,
                   const ScoringWeights& weights);
// The same in two steps, for a caller scoring many devices: what the requests add to device
// `d`, which is the same for every device of d's vendor unless `per_device` (a memory
// percentage, taken of each device's memory), and the score of a device given that.
struct DeviceDemand {
  int64_t request = 0;
  int64_t core = 0;
  int64_t mem = 0;
  bool per_device = false;
};
DeviceDemand device_demand(const device::DeviceUsage& d, const device::ContainerRequests& requests);
float demand_score(const device::DeviceUsage& d, const DeviceDemand& demand,
                   const ScoringWeights& weights);

// Node score over all devices, usage before the pod (float32).
float node_default_score(std::span<const device::DeviceUsage> devices);

// The device scores of one container (HAMi writes each into its DeviceUsage; here they are
// kept beside the usage so a fit never has to copy the node's usage): values[i] is the score
// of first[i].
struct DeviceScores {
  const device::DeviceUsage* first = nullptr;
  std::span<const float> values;
  float of(const device::DeviceUsage* d) const { return values[static_cast<size_t>(d - first)]; }
};

// Sorts by the GPU policy; Fit scans from the end, so the end is the most preferred device.
// Stable: ties keep their current order (registration order on a fresh node).
void sort_devices(std::vector<device::DeviceUsage*>& devices, const DeviceScores& scores,
                  std::string_view policy, bool numa_bind);

}  // namespace hamisim::fit
