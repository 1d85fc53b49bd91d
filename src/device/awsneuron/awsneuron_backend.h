#pragma once
// AWS Neuron (reference: hami-other-vendors.md B.3): Inferentia/Trainium devices synthesised
// from the node's capacity and instance-type label. A container takes whole devices
// (aws.amazon.com/neuron) or NeuronCores (aws.amazon.com/neuroncore); a device's cores are a
// bit mask. Several devices must be contiguous (Inferentia) or an aligned block of 4, 8 or 16
// (Trainium); a single device is scanned like the standard Fit and gets a core mask.
//
// HAMi fixes "cores per device" process-wide from the first node it reads and keeps it for
// every node after; here each node's own value is used (capacity neuroncore / neuron), so an
// answer does not depend on which node was read first. Requests cannot see a node: NeuronCore
// requests are split with 2 cores per device (HAMi's value whenever the first node has two or
// more cores per device, which every Inferentia/Trainium type has), and a whole-device
// request takes each node's own core count in Fit.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "device/common/config_section.h"
#include "device/common/standard_backend.h"

namespace hamisim::device::awsneuron {

inline constexpr std::string_view kVendor = "AWSNeuron";
inline constexpr std::string_view kAllocatedAnnotation = "hami.io/aws-neuron-devices-allocated";
inline constexpr std::string_view kUseUuidAnnotation = "aws.amazon.com/use-neuron-uuid";
inline constexpr std::string_view kNouseUuidAnnotation = "aws.amazon.com/nouse-neuron-uuid";
inline constexpr std::string_view kInstanceTypeLabel = "node.kubernetes.io/instance-type";
// Environment-style pod annotations read by AWS's device plugin.
inline constexpr std::string_view kNeuronIdsAnnotation = "AWS_NEURON_IDS";
inline constexpr std::string_view kAllocTimeAnnotation = "NEURON_ALLOC_TIME";
inline constexpr std::string_view kAllocatedFlagAnnotation = "NEURON_ALLOCATED";
inline constexpr std::string_view kResourceTypeAnnotation = "NEURON_RESOURCE_TYPE";
inline constexpr std::string_view kPredicateNodeAnnotation = "aws.amazon.com/predicate-node";
// Device custominfo key holding the node's instance type.
inline constexpr std::string_view kNodeTypeKey = "AWSNodeType";
// Cores per device used to split NeuronCore requests (see the header comment).
inline constexpr int32_t kRequestCoresPerDevice = 2;
// Capacity-synthesised devices per node are bounded (a hostile capacity of 10^18 devices).
inline constexpr int64_t kMaxDevices = 1024;

// The `awsneuron:` section.
struct AwsNeuronConfig {
  std::string resource_count_name = "aws.amazon.com/neuron";
  std::string resource_core_name = "aws.amazon.com/neuroncore";
};

// Per container index (init first): the container asked for whole devices.
struct AwsPreparedPod : StandardPreparedPod {
  std::vector<bool> whole_device;
};

class AwsNeuronBackend final : public StandardBackend {
 public:
  explicit AwsNeuronBackend(AwsNeuronConfig config = {});

  // Whole devices: {n, AWSNeuron, 0, 0, 2}; NeuronCores c: {1, .., c} when c <= 2, else
  // {c/2, .., 2} (c must then be even). Invalid values: no request.
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  // capacity neuron devices "<node>-AWSNeuron-<i>" with Count = cores per device and
  // Devcore = the full core mask; custominfo {"AWSNodeType": <instance type>}.
  NodeDevices node_devices(const model::Node& node) const override;
  std::unique_ptr<PreparedPod> prepare(const model::Pod& pod) const override;
  FitOutcome fit(std::span<DeviceUsage* const> devices, const ContainerDeviceRequest& request,
                 const FitContext& context) const override;
  // Reads the pod (which containers asked for whole devices), the node (its name and cores
  // per device) and the time; keys that need what the context lacks are left out.
  void annotate_allocation(const PodSingleDevice& devices, const AnnotationContext& context,
                           std::map<std::string, std::string>& annotations) const override;

  // graphSelect: the positions (into `devices`) of `count` idle healthy devices forming a
  // window of the node type's topology; empty when there is none.
  static std::vector<size_t> select_window(std::span<DeviceUsage* const> devices, int64_t count);

 private:
  bool whole_device_request(const model::Container& container) const;

  AwsNeuronConfig config_;
};

// BackendFactory for the `awsneuron:` section.
Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults);

}  // namespace hamisim::device::awsneuron
