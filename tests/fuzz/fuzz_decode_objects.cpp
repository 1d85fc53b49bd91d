// decode_objects on arbitrary bytes: JSON (first non-space byte '{' or '[') or YAML. Never
// crashes, never hangs; errors carry a message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "model/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto set = hamisim::model::decode_objects(text);
  if (!set) {
    if (set.error().message.empty()) std::abort();
  } else if (set->node_json.size() != set->nodes.size()) {
    std::abort();
  } else {
    // The raw JSON kept for each node decodes on its own.
    for (const auto& json : set->node_json) {
      if (!hamisim::model::decode_node_json(json)) std::abort();
    }
  }
  auto pod = hamisim::model::decode_pod(text);
  if (!pod && pod.error().message.empty()) std::abort();
  return 0;
}
