#include "fit/device_compare.h"

#include <algorithm>
#include <functional>

namespace hamisim::fit {
namespace {

// "81920 x8" / "NVIDIA A100 x4, NVIDIA H100 x4": a multiset, sorted.
std::string describe(std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  std::string out;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j < values.size() && values[j] == values[i]) ++j;
    if (!out.empty()) out += ", ";
    out += (values[i].empty() ? "\"\"" : values[i]) + " x" + std::to_string(j - i);
    i = j;
  }
  return out.empty() ? "none" : out;
}

std::string mig_names(const device::DeviceInfo& d) {
  std::string out;
  for (const auto& p : d.mig_profiles) out += (out.empty() ? "" : "+") + p.name;
  return out.empty() ? "-" : out;
}

using Field = std::function<std::string(const device::DeviceInfo&)>;

// The fields that make a device what it is, in the order differences are reported.
const std::vector<std::pair<const char*, Field>>& fields() {
  static const std::vector<std::pair<const char*, Field>> kFields = {
      {"vendor", [](const device::DeviceInfo& d) { return d.device_vendor; }},
      {"type", [](const device::DeviceInfo& d) { return d.type; }},
      {"devmem", [](const device::DeviceInfo& d) { return std::to_string(d.devmem); }},
      {"devcore", [](const device::DeviceInfo& d) { return std::to_string(d.devcore); }},
      {"split", [](const device::DeviceInfo& d) { return std::to_string(d.count); }},
      {"mode", [](const device::DeviceInfo& d) { return d.mode; }},
      {"migProfiles", mig_names},
  };
  return kFields;
}

// One device as all its fields, for comparing devices whole.
std::string whole(const device::DeviceInfo& d) {
  std::string out;
  for (const auto& [name, get] : fields()) out += (out.empty() ? "" : "/") + get(d);
  return out;
}

std::vector<std::string> all(const std::vector<device::DeviceInfo>& devices, const Field& get) {
  std::vector<std::string> out;
  out.reserve(devices.size());
  for (const auto& d : devices) out.push_back(get(d));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::string> device_differences(const std::vector<device::DeviceInfo>& a,
                                            const std::vector<device::DeviceInfo>& b,
                                            std::string_view a_name, std::string_view b_name) {
  std::vector<std::string> out;
  auto report = [&](std::string_view field, std::string va, std::string vb) {
    out.push_back(std::string(field) + ": " + std::string(a_name) + " " + va + ", " +
                  std::string(b_name) + " " + vb);
  };
  if (a.size() != b.size()) {
    report("device count", std::to_string(a.size()), std::to_string(b.size()));
  }
  for (const auto& [name, get] : fields()) {
    std::vector<std::string> va = all(a, get), vb = all(b, get);
    if (va != vb) report(name, describe(std::move(va)), describe(std::move(vb)));
  }
  // Every field agrees as a multiset, yet the devices may combine them differently (an 80 GB
  // A100 and a 40 GB H100 against a 40 GB A100 and an 80 GB H100).
  if (out.empty()) {
    std::vector<std::string> wa = all(a, whole), wb = all(b, whole);
    if (wa != wb) report("devices", describe(std::move(wa)), describe(std::move(wb)));
  }
  return out;
}

}  // namespace hamisim::fit
