#pragma once
// Kunlunxin shared vXPU (reference: hami-other-vendors.md B.9.b): a JSON registration with a
// handshake, slices of 1/4, 1/2 or a whole card (24576 / 49152 / 98304 MiB), a card shared
// only by slices of one size, placed by the same topology selector as whole cards.

#include <optional>

#include "device/kunlun/kunlun_backend.h"

namespace hamisim::device::kunlun {

inline constexpr std::string_view kXpuVendor = "XPU";
inline constexpr std::string_view kXpuRegisterAnnotation = "hami.io/node-register-xpu";
inline constexpr std::string_view kXpuHandshakeAnnotation = "hami.io/node-handshake-xpu";
inline constexpr std::string_view kXpuToAllocateAnnotation = "hami.io/xpu-devices-to-allocate";
inline constexpr std::string_view kXpuAllocatedAnnotation = "hami.io/xpu-devices-allocated";

// HAMi trimMemory: the slice a memory request (MiB) takes.
int64_t trim_memory(int64_t mib);

class XpuBackend final : public TopologyBackend {
 public:
  Admission admission() const override { return Admission::kKunlunVxpu; }
  explicit XpuBackend(KunlunConfig config = {});
  // Any integer count (Go's int32 conversion); an integer memory is rounded up to a slice
  // (an explicit 0 included) with cores = 25 / 50 / 100; no memory = a whole card.
  ContainerDeviceRequest request_for(const model::Container& container) const override;
  // hami.io/node-register-xpu (JSON DeviceInfo array).
  NodeDevices node_devices(const model::Node& node) const override;
  // Devices allowed by the UUID filters that hold nothing or only slices of the requested
  // size, chosen by the topology selector; no Count check.
  FitOutcome fit(std::span<DeviceUsage* const> devices, const ContainerDeviceRequest& request,
                 const FitContext& context) const override;

  const KunlunConfig& config() const { return config_; }

 private:
  KunlunConfig config_;
};

// What HAMi's MutateAdmission does to one container: `found` when the vXPU count is in the
// limits; the memory limit, when present, is rewritten in limits and requests to its slice.
struct XpuAdmission {
  bool found = false;
  std::optional<int64_t> set_memory;
};
XpuAdmission admit_xpu_container(const KunlunConfig& config, const model::Container& container);

}  // namespace hamisim::device::kunlun
