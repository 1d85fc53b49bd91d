// The `enflame:` section and the two backends it configures.

#include "device/enflame/enflame_backends.h"

namespace hamisim::device::enflame {

Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults) {
  EnflameConfig c;
  // A file without the section leaves the names empty, as HAMi does; the DRS backend still
  // falls back to its built-in names.
  if (!chart_defaults) c = EnflameConfig{"", "", "", "", "", ""};
  for (Status s : {section.read("resourceNameGCU", c.resource_name_gcu),
                   section.read("resourceNameDRSGCU", c.resource_name_drs_gcu),
                   section.read("resourceNameGCUMemory", c.resource_name_gcu_memory),
                   section.read("resourceNameGCUCore", c.resource_name_gcu_core),
                   section.read("resourceNameVGCU", c.resource_name_vgcu),
                   section.read("resourceNameVGCUPercentage", c.resource_name_vgcu_percentage)}) {
    if (!s) return s.error();
  }
  // HAMi's order: GCU, then Enflame.
  return Backends{std::make_shared<GcuBackend>(c.resource_name_gcu),
                  std::make_shared<DrsBackend>(c)};
}

}  // namespace hamisim::device::enflame
