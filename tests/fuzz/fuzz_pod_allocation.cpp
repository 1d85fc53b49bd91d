// libFuzzer target: pod allocation decoders (hami-device-model.md §4.5).
// Whatever decodes must re-encode to something that decodes to the same value (the pod
// string gains exactly one trailing empty container per round trip, as in HAMi).

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

  if (auto pod = decode_pod_devices(input); pod.ok()) {
    const std::string value = encode_pod_devices(pod.value());
    auto again = decode_pod_devices(value);
    check(again.ok(), "pod: re-encoded value does not decode");
    PodSingleDevice expected = pod.value();
    expected.emplace_back();
    check(again.value() == expected, "pod: value changed");
  }

  if (auto container = decode_container_devices(input); container.ok()) {
    auto again = decode_container_devices(encode_container_devices(container.value()));
    check(again.ok(), "container: re-encoded value does not decode");
    check(again.value() == container.value(), "container: value changed");
  }

  if (auto allocations = decode_mig_allocations(input); allocations.ok()) {
    const std::string json = encode_mig_allocations(allocations.value());
    auto again = decode_mig_allocations(json);
    check(again.ok(), "mig: re-encoded value does not decode");
    check(again.value() == allocations.value(), "mig: value changed");
    check(encode_mig_allocations(again.value()) == json, "mig: encoding not stable");
  }
  return 0;
}
