#include "planner/modes/hami_dra_webhook.h"

#include <fmt/format.h>
#include <openssl/sha.h>

#include <array>
#include <limits>

#include "dra/hami_driver.h"

namespace hamisim::planner::modes {
namespace {

// The annotations the webhook turns into selectors, and the attribute each one tests.
struct SelectorAnnotation {
  std::string_view key;
  std::string_view attribute;
  bool negate;
};
constexpr std::array<SelectorAnnotation, 4> kSelectorAnnotations{{
    {"nvidia.com/use-gpuuuid", "uuid", false},
    {"nvidia.com/nouse-gpuuuid", "uuid", true},
    {"nvidia.com/use-gputype", "productName", false},
    {"nvidia.com/nouse-gputype", "productName", true},
}};

// A CEL string literal of `s`.
std::string cel_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The annotation's comma list, items trimmed, empty ones dropped.
std::vector<std::string_view> comma_list(std::string_view value) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string_view::npos) return out;
    value.remove_prefix(comma + 1);
  }
}

Result<std::vector<std::string>> request_selectors(const model::Pod& pod) {
  const std::string domain = cel_string(dra::kHamiDriver);
  std::vector<std::string> out{
      fmt::format("device.attributes[{}].type == {}", domain, cel_string(dra::kHamiDeviceType))};
  for (const SelectorAnnotation& a : kSelectorAnnotations) {
    const auto it = pod.metadata.annotations.find(a.key);
    if (it == pod.metadata.annotations.end()) continue;
    const std::vector<std::string_view> items = comma_list(it->second);
    if (items.empty()) {
      return make_error(
          fmt::format("annotation {}: no value the webhook can use (\"{}\")", a.key, it->second));
    }
    std::string list;
    for (std::string_view item : items) list += (list.empty() ? "" : ", ") + cel_string(item);
    const std::string test =
        fmt::format("device.attributes[{}].{} in [{}]", domain, a.attribute, list);
    out.push_back(a.negate ? "!(" + test + ")" : test);
  }
  return out;
}

bool erase_resource(model::ResourceRequirements& r, const std::string& name) {
  const bool had = r.limits.erase(name) + r.requests.erase(name) > 0;
  return had;
}

}  // namespace

std::string claim_name(std::string_view namespace_, std::string_view pod,
                       std::string_view container) {
  std::string name = fmt::format("{}-{}-{}-nvidia", namespace_, pod, container);
  if (name.size() <= 63) return name;
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(name.data()), name.size(), digest.data());
  std::string kept = name.substr(0, 54);
  while (!kept.empty() && kept.back() == '-') kept.pop_back();
  return fmt::format("{}-{:02x}{:02x}{:02x}{:02x}", kept, digest[0], digest[1], digest[2],
                     digest[3]);
}

Result<WebhookConversion> convert_pod(const model::Pod& pod, const device::ResourceNames& names) {
  WebhookConversion out;
  out.pod = pod;
  model::PodSpec& spec = out.pod.spec;
  // Init containers are not converted: what they ask stays an extended resource.
  for (const model::Container& c : spec.init_containers) {
    for (const std::string* name : {&names.count, &names.memory, &names.cores}) {
      if (c.resources.limits.contains(*name) || c.resources.requests.contains(*name)) {
        out.unconverted.push_back(fmt::format(
            "init container {}: {} is not converted (the webhook converts regular containers only)",
            c.name, *name));
      }
    }
  }
  std::optional<std::vector<std::string>> selectors;
  for (size_t i = 0; i < spec.containers.size(); ++i) {
    model::Container& c = spec.containers[i];
    model::ResourceRequirements& r = c.resources;
    if (!names.memory_percentage.empty() && r.limits.contains(names.memory_percentage)) {
      out.unconverted.push_back(
          fmt::format("container {}: {} is not converted", c.name, names.memory_percentage));
    }
    const auto count = r.limits.find(names.count);
    if (count == r.limits.end()) {
      // The webhook triggers on the count limit alone.
      for (const std::string* name : {&names.count, &names.memory, &names.cores}) {
        if (r.limits.contains(*name) || r.requests.contains(*name)) {
          out.unconverted.push_back(fmt::format(
              "container {}: {} is not converted (the webhook converts containers whose limits "
              "name {})",
              c.name, *name, names.count));
        }
      }
      continue;
    }
    if (!selectors) {
      auto made = request_selectors(pod);
      if (!made) return made.error();
      selectors = std::move(made).value();
    }
    dra::ExactDeviceRequest req;
    req.device_class_name = dra::kHamiDeviceClass;
    req.count = count->second.value();
    req.selectors = *selectors;
    if (auto m = r.limits.find(names.memory); m != r.limits.end()) {
      const int64_t mib = m->second.value();
      if (mib > (std::numeric_limits<int64_t>::max() >> 20)) {
        return make_error(fmt::format("container {}: {} {} is too large to convert to bytes",
                                      c.name, names.memory, m->second.to_string()));
      }
      req.capacity_requests["memory"] = model::Quantity::from_int(mib << 20);
    }
    if (auto k = r.limits.find(names.cores); k != r.limits.end()) {
      req.capacity_requests["cores"] = k->second;
    }
    for (const std::string* name : {&names.count, &names.memory, &names.cores}) {
      erase_resource(r, *name);
    }

    dra::ResourceClaim& claim = out.claims.emplace_back();
    claim.metadata.namespace_ = pod.metadata.namespace_;
    claim.metadata.name = claim_name(pod.metadata.namespace_, pod.metadata.name, c.name);
    claim.spec.requests.push_back(
        {.name = std::string(dra::kHamiRequest), .exactly = req, .first_available = {}});
    out.containers.push_back(i);
    r.claims.push_back({.name = claim.metadata.name, .request = {}});
    spec.resource_claims.push_back({.name = claim.metadata.name,
                                    .resource_claim_name = claim.metadata.name,
                                    .resource_claim_template_name = {}});
  }
  if (!out.claims.empty()) out.pod.metadata.labels["hami.io/dra"] = "true";
  return out;
}

}  // namespace hamisim::planner::modes
