#pragma once
// Tests only: every node described by its own registration, cached by its inputs. The product
// describes nodes through engine::Engine alone; tests of the cache and of vendors' decoders use
// this to look at registrations without templates or profiles.

#include "fit/description.h"

namespace hamisim::fit {

class RegisteredDescriber {
 public:
  explicit RegisteredDescriber(const device::DeviceRegistry& registry) : registry_(registry) {}
  std::shared_ptr<const DescriptionResult> describe(const model::Node& node) const {
    return cache_.get(DescriptionCache::Key(node), "registered",
                      [&] { return read_registered_description(node, registry_); });
  }

 private:
  const device::DeviceRegistry& registry_;
  mutable DescriptionCache cache_;
};

}  // namespace hamisim::fit
