// Fuzzes the whole /filter-simulation request path: ExtenderArgs decoding, node descriptions,
// SimulatedPods decoding and the fit engine. Any input must produce a response body, never a
// crash, a hang or a sanitizer report. What objects the decoder keeps must never change an
// answer: decoding with caches that hold objects of earlier inputs (and of this one, a moment
// ago: then bodies of kept objects are read the fast way) must give exactly what decoding with
// empty caches gives, errors included.

#include <cstddef>
#include <cstdint>
#include <string>

#include "device/catalog/device_config.h"
#include "extender/decoded_cache.h"
#include "model/decode.h"
#include "model/encode.h"
#include "server/simulation_filter.h"

namespace {

using hamisim::Result;
using hamisim::extender::ExtenderArgs;

// Everything callers read from a decoded body, as one text.
std::string describe(const Result<ExtenderArgs>& args) {
  if (!args.ok()) return "error: " + args.error().message;
  std::string out = args->pod ? hamisim::model::encode_pod_json(*args->pod) : "no pod";
  out += args->nodes_present ? "\nnodes:" : "\nno nodes:";
  for (const auto& n : args->nodes) {
    out += "\n" + hamisim::model::encode_node_json(n.node()) + "\nraw=" + std::string(n.json);
  }
  out += args->node_names_present ? "\nnames:" : "\nno names:";
  for (const auto& name : args->node_names) out += " " + name;
  for (const auto& [node, pods] : args->simulated_pods) {
    out += "\nplaced on " + node + ":";
    for (const auto& pod : pods) out += " " + hamisim::model::encode_pod_json(pod);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const hamisim::device::DeviceRegistry registry = hamisim::device::build_registry({});
  static const hamisim::engine::Engine engine(registry, nullptr);
  static const hamisim::server::SimulationFilter filter(engine);
  static hamisim::extender::DecodedObjects cache;
  // As HttpServer hands bodies over: with spare capacity for the parser's padding, so that the
  // body is decoded where it is (and its objects looked up in the filter's caches).
  std::string body;
  body.reserve(size + hamisim::model::kJsonPadding);
  body.assign(reinterpret_cast<const char*>(data), size);

  hamisim::extender::DecodedObjects empty;
  const std::string expected =
      describe(hamisim::extender::decode_extender_args_in_buffer(body, &empty));
  for (int i = 0; i < 2; ++i) {
    if (describe(hamisim::extender::decode_extender_args_in_buffer(body, &cache)) != expected)
      __builtin_trap();
  }

  const auto result = filter.filter(body);
  if (result.body.empty() || result.body.front() != '{') __builtin_trap();
  return 0;
}
