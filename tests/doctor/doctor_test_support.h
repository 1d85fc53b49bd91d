#pragma once
// Shared helpers of the doctor tests: configurations from text and finding lookups.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "device/catalog/device_config.h"
#include "doctor/doctor.h"
#include "extender/extender_facts.h"
#include "extender/scheduler_config.h"

namespace hamisim::doctor::testing {

inline CheckOptions default_options() {
  CheckOptions o;
  const auto registry = device::build_registry({});
  o.hami_resources = hami_resource_names(registry);
  o.vendors = vendor_resources(registry);
  return o;
}

inline extender::SchedulerConfig parse(const std::string& yaml, bool single_profile = true) {
  extender::LoadOptions lo;
  lo.require_single_profile = single_profile;
  auto c = extender::parse_scheduler_config(yaml, "test.yaml", lo);
  if (!c) {
    ADD_FAILURE() << c.error().message;
    return {};
  }
  return std::move(c).value();
}

// Every HAMi resource, ignoredByScheduler: true, as YAML lines under managedResources.
inline std::string all_managed(const std::string& indent = "    ") {
  // NVIDIA first (tests name its entries by position), then every other vendor.
  std::string s = indent + "managedResources:\n";
  const auto vendors = default_options().vendors;
  for (bool nvidia : {true, false}) {
    for (const auto& v : vendors) {
      if ((v.vendor == "NVIDIA") != nvidia) continue;
      for (const auto& n : v.names)
        s += indent + "  - {name: " + n + ", ignoredByScheduler: true}\n";
    }
  }
  return s;
}

// A copy of the first finding of this check (copies stay valid when the vector is a temporary).
inline std::optional<Finding> find(const std::vector<Finding>& findings, const std::string& check) {
  for (const auto& f : findings) {
    if (f.check == check) return f;
  }
  return std::nullopt;
}

inline std::vector<const Finding*> bad(const std::vector<Finding>& findings) {
  std::vector<const Finding*> out;
  for (const auto& f : findings) {
    if (f.severity != Severity::kInfo) out.push_back(&f);
  }
  return out;
}

inline std::string describe(const std::vector<Finding>& findings) {
  std::string s;
  for (const auto& f : findings) {
    s += std::string(to_string(f.severity)) + " " + f.check + " " + f.field + ": " + f.message +
         "\n";
  }
  return s;
}

}  // namespace hamisim::doctor::testing
