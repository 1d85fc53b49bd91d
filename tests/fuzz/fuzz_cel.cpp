// Selector::compile on arbitrary text, then matches() against small fixed devices: never
// crashes or hangs, every refusal and every run-time error has a message, and compile errors
// name the expression.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cel/selector.h"
#include "model/quantity.h"

namespace {

using hamisim::cel::Attribute;
using hamisim::cel::Device;
using hamisim::model::Quantity;

// One domain "gpu.example.com" with an attribute of each type and two capacities.
class FixedDevice : public Device {
 public:
  explicit FixedDevice(bool multi) : multi_(multi) {
    version_ = hamisim::cel::Semver{535, 104, 5, "rc.1", ""};
    memory_ = Quantity::parse("4Gi").value();
    cores_ = Quantity::parse("100").value();
  }
  std::string_view driver() const override { return "gpu.example.com"; }
  bool allow_multiple_allocations() const override { return multi_; }
  const Attribute* attribute(std::string_view domain, std::string_view id) const override {
    if (domain != "gpu.example.com") return nullptr;
    if (id == "model") return &model_;
    if (id == "index") return &index_;
    if (id == "healthy") return &healthy_;
    if (id == "driverVersion") return &version_;
    return nullptr;
  }
  const Quantity* capacity(std::string_view domain, std::string_view id) const override {
    if (domain != "gpu.example.com") return nullptr;
    if (id == "memory") return &memory_;
    if (id == "cores") return &cores_;
    return nullptr;
  }
  Names attribute_names() const override {
    return {{"gpu.example.com", "model"},
            {"gpu.example.com", "index"},
            {"gpu.example.com", "healthy"},
            {"gpu.example.com", "driverVersion"}};
  }
  Names capacity_names() const override {
    return {{"gpu.example.com", "memory"}, {"gpu.example.com", "cores"}};
  }

 private:
  bool multi_;
  Attribute model_ = std::string("LATEST-GPU-MODEL");
  Attribute index_ = int64_t{3};
  Attribute healthy_ = true;
  Attribute version_;
  Quantity memory_;
  Quantity cores_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const FixedDevice plain(false);
  static const FixedDevice multi(true);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto s = hamisim::cel::Selector::compile(text);
  if (!s) {
    if (s.error().message.rfind("CEL expression \"", 0) != 0) std::abort();
    return 0;
  }
  if (s->expression() != text) std::abort();
  for (const Device* d : {static_cast<const Device*>(&plain), static_cast<const Device*>(&multi)}) {
    auto r = s->matches(*d);
    if (!r && r.error().message.empty()) std::abort();
    // Evaluation is deterministic.
    auto again = s->matches(*d);
    if (r.ok() != again.ok() || (r.ok() && *r != *again)) std::abort();
  }
  return 0;
}
