// libFuzzer target: ExtenderBindingArgs decoding (the /bind body). Anything decodes or is
// refused with a message; nothing crashes.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "extender/extender_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto args = hamisim::extender::decode_binding_args(body);
  if (!args && args.error().message.empty()) std::abort();  // errors must say what was wrong
  return 0;
}
