// Fuzzes the whole /filter-simulation request path: ExtenderArgs decoding, node inventories,
// SimulatedPods decoding and the fit engine. Any input must produce a response body, never a
// crash, a hang or a sanitizer report.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fit/device_config.h"
#include "model/decode.h"
#include "server/simulation_filter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const hamisim::device::DeviceRegistry registry = hamisim::fit::build_registry({});
  static const hamisim::fit::RegisteredInventoryProvider inventory(registry);
  static const hamisim::server::SimulationFilter filter(registry, inventory, {});
  // As HttpServer hands bodies over: with spare capacity for the parser's padding, so that the
  // body is decoded where it is (and its objects looked up in the filter's caches).
  std::string body;
  body.reserve(size + hamisim::model::kJsonPadding);
  body.assign(reinterpret_cast<const char*>(data), size);
  const auto result = filter.filter(body);
  if (result.body.empty() || result.body.front() != '{') __builtin_trap();
  return 0;
}
