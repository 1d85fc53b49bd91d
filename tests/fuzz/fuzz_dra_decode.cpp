// The strict resource.k8s.io decoder (src/dra/decode.h) on arbitrary bytes. Never crashes,
// never hangs; a refusal has a message and keeps nothing, a success appends exactly one object.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "dra/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  hamisim::dra::Objects objects;
  const auto decoded = hamisim::dra::decode_object(json, "items[0]", objects);
  const size_t count = objects.slices.size() + objects.classes.size() + objects.claims.size() +
                       objects.claim_templates.size();
  if (decoded ? count != 1 : (count != 0 || decoded.error().message.empty())) std::abort();
  return 0;
}
