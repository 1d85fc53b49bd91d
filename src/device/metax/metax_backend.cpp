#include "device/metax/metax_backend.h"

#include <memory>

#include "device/metax/metax_gpu.h"
#include "device/metax/metax_sgpu.h"

namespace hamisim::device::metax {

Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults) {
  MetaxConfig c;
  // A file without the section leaves every name empty, as HAMi does.
  if (!chart_defaults) c = MetaxConfig{"", "", "", "", false};
  for (Status s : {section.read("resourceCountName", c.resource_count_name),
                   section.read("resourceVCountName", c.resource_vcount_name),
                   section.read("resourceVMemoryName", c.resource_vmemory_name),
                   section.read("resourceVCoreName", c.resource_vcore_name),
                   section.read("sgpuTopologyAware", c.sgpu_topology_aware)}) {
    if (!s) return s.error();
  }
  // HAMi's order: the whole-GPU backend, then the sGPU one.
  return Backends{std::make_shared<MetaxGpuBackend>(c), std::make_shared<MetaxSgpuBackend>(c)};
}

}  // namespace hamisim::device::metax
