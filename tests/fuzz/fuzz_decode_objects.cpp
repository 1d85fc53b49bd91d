// decode_objects on arbitrary bytes: JSON (first non-space byte '{' or '[') or YAML. Never
// crashes, never hangs; errors carry a message. Every Pod and Node decoded survives encoding:
// it decodes again, and encodes to the same bytes. Every DRA object kept decodes alone to
// itself. The unknown-field walk (model/unknown_fields.h) of the same bytes never crashes, says
// why when it fails, and names only lines the input has.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "model/decode.h"
#include "model/encode.h"
#include "model/unknown_fields.h"

namespace {

// Encoding is injective on what it writes, so equal bytes mean the decoded copy matches on
// every field the encoder writes. Whether it writes every field is the unit tests' job
// (tests/model/encode_test.cpp compares field by field).
template <class T, class Decode, class Encode>
void check_round_trip(const T& object, Decode decode, Encode encode) {
  const std::string json = encode(object);
  auto back = decode(json);
  if (!back || encode(*back) != json) std::abort();
}

void check_round_trip(const hamisim::model::Pod& pod) {
  check_round_trip(pod, hamisim::model::decode_pod_json, hamisim::model::encode_pod_json);
}

void check_round_trip(const hamisim::model::Node& node) {
  check_round_trip(node, hamisim::model::decode_node_json, hamisim::model::encode_node_json);
}

}  // namespace

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
    for (const auto& pod : set->pods) check_round_trip(pod);
    for (const auto& node : set->nodes) check_round_trip(node);
  }
  // With DRA objects kept: each one's JSON, read alone, is kept again as the same text.
  auto with_dra = hamisim::model::decode_objects(text, {.dra = true});
  if (!with_dra) {
    if (with_dra.error().message.empty()) std::abort();
  } else {
    for (const auto& object : with_dra->dra_objects) {
      auto again = hamisim::model::decode_objects_json(object.json, {.dra = true});
      if (!again || again->dra_objects.size() != 1 || again->dra_objects[0].json != object.json ||
          again->dra_objects[0].kind != object.kind ||
          again->dra_objects[0].api_version != object.api_version) {
        std::abort();
      }
    }
  }
  auto found = hamisim::model::find_unknown_fields(text);
  if (!found) {
    if (found.error().message.empty()) std::abort();
  } else {
    // YAML also breaks lines at \r (and yaml-cpp at some Unicode breaks): a generous bound.
    const size_t lines = 1 + text.size();
    // (An empty path is an empty key at the top of an object, which JSON and YAML write in
    // several ways: it is reported as such.)
    for (const auto& f : *found) {
      if (f.line > lines) std::abort();
    }
  }
  auto pod = hamisim::model::decode_pod(text);
  if (!pod && pod.error().message.empty()) std::abort();
  if (pod) check_round_trip(*pod);
  return 0;
}
