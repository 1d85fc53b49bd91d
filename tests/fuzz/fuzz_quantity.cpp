// Quantity::parse on arbitrary text: never crashes, and whatever it accepts round-trips through
// to_string and keeps its integer views consistent.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "model/quantity.h"

using hamisim::model::Quantity;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto q = Quantity::parse(text);
  if (!q) {
    if (q.error().message.empty()) std::abort();
    return 0;
  }
  auto again = Quantity::parse(q->to_string());
  if (!again || *again != *q) std::abort();
  if (auto i = q->as_int64(); i && Quantity::from_int(*i) != *q) std::abort();
  const int64_t milli = q->milli_value();
  if (q->sign() > 0 && (milli <= 0 || Quantity::from_milli(milli) < *q)) std::abort();
  if (q->sign() < 0 && (milli >= 0 || Quantity::from_milli(milli) > *q)) std::abort();
  Quantity sum = *q;
  sum += *q;
  sum -= *q;
  if (sum != *q) std::abort();
  (void)q->value();
  return 0;
}
