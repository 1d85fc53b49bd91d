#pragma once
// MetaX (reference: hami-other-vendors.md B.10): one `metax:` device-config section builds two
// backends, whole GPUs (`Metax-GPU`, metax_gpu.h) and shared sGPUs (`Metax-SGPU`,
// metax_sgpu.h), in HAMi's instantiation order.

#include <string>
#include <string_view>

#include "device/common/config_section.h"

namespace hamisim::device::metax {

inline constexpr std::string_view kGpuVendor = "Metax-GPU";
inline constexpr std::string_view kSgpuVendor = "Metax-SGPU";

// The `metax:` section (MetaxConfig); the defaults are the chart's values.
struct MetaxConfig {
  std::string resource_count_name = "metax-tech.com/gpu";
  std::string resource_vcount_name = "metax-tech.com/sgpu";
  std::string resource_vmemory_name = "metax-tech.com/vmemory";
  std::string resource_vcore_name = "metax-tech.com/vcore";
  bool sgpu_topology_aware = false;
};

// BackendFactory for the `metax:` section: {Metax-GPU, Metax-SGPU}.
Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults);

}  // namespace hamisim::device::metax
