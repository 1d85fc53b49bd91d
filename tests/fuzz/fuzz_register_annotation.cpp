// libFuzzer target: node annotation decoders (hami-device-model.md §1.1, §1.2, §1.4, §1.6).
// Whatever decodes must re-encode to something that decodes to the same value.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "device/codec.h"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "round trip broken: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hamisim::device;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  if (auto devices = decode_register_json(input); devices.ok()) {
    const std::string json = encode_register_json(devices.value());
    auto again = decode_register_json(json);
    check(again.ok(), "register: re-encoded value does not decode");
    // custominfo is kept as received for the backends that read it, never re-encoded.
    auto expected = devices.value();
    for (auto& d : expected) d.custom_info.clear();
    check(again.value() == expected, "register: value changed");
    check(encode_register_json(again.value()) == json, "register: encoding not stable");
  }

  if (auto scores = decode_pair_scores(input); scores.ok()) {
    const std::string json = encode_pair_scores(scores.value());
    auto again = decode_pair_scores(json);
    check(again.ok(), "score: re-encoded value does not decode");
    check(again.value() == scores.value(), "score: value changed");
  }

  if (auto legacy = decode_legacy_devices(input); legacy.ok() && !legacy.value().empty()) {
    const std::string value = encode_legacy_devices(legacy.value());
    auto again = decode_legacy_devices(value);
    check(again.ok(), "legacy: re-encoded value does not decode");
    check(again.value() == legacy.value(), "legacy: value changed");
  }

  for (const std::string& id : parse_cordon(input)) {
    check(!id.empty(), "cordon: empty id");
  }
  return 0;
}
