#include "extender/extender_facts.h"

#include <algorithm>

#include "extender/extender_url.h"

namespace hamisim::extender {

std::string_view to_string(TlsVerification v) {
  switch (v) {
    case TlsVerification::kNone:
      return "none";
    case TlsVerification::kVerified:
      return "verified";
    case TlsVerification::kSystemRoots:
      return "system-roots";
    case TlsVerification::kSkippedInsecure:
      return "skipped-insecure";
    case TlsVerification::kSkippedNoCa:
      return "skipped-no-ca";
  }
  return "?";
}

const std::vector<std::string>& default_hami_resource_names() {
  static const std::vector<std::string> kNames = {
      "nvidia.com/gpu", "nvidia.com/gpumem", "nvidia.com/gpucores", "nvidia.com/gpumem-percentage",
      "nvidia.com/priority"};
  return kNames;
}

std::vector<ExtenderFacts> describe_extenders(const SchedulerConfig& config,
                                              const std::vector<std::string>& hami_resources) {
  const std::vector<std::string>& hami =
      hami_resources.empty() ? default_hami_resource_names() : hami_resources;
  std::vector<ExtenderFacts> out;
  for (size_t i = 0; i < config.extenders.size(); ++i) {
    const ExtenderConfig& e = config.extenders[i];
    ExtenderFacts f;
    f.index = i;
    f.url_prefix = e.url_prefix;
    if (auto url = parse_extender_url(e.url_prefix)) f.scheme = url->scheme;
    f.https = f.scheme == "https";
    const bool has_ca =
        e.tls_config && (!e.tls_config->ca_file.empty() || !e.tls_config->ca_data.empty());
    if (!f.https) {
      f.tls_verification = TlsVerification::kNone;
    } else if (e.tls_config && e.tls_config->insecure) {
      f.tls_verification = TlsVerification::kSkippedInsecure;
    } else if (has_ca) {
      f.tls_verification = TlsVerification::kVerified;
    } else if (e.enable_https) {
      f.tls_verification = TlsVerification::kSkippedNoCa;
    } else {
      f.tls_verification = TlsVerification::kSystemRoots;
    }
    f.client_certificate =
        e.tls_config && (!e.tls_config->cert_file.empty() || !e.tls_config->cert_data.empty());
    f.filter = e.is_filter();
    f.filter_verb = e.filter_verb;
    f.node_cache_capable = e.node_cache_capable;
    f.ignorable = e.ignorable;
    f.timeout = e.effective_timeout();
    f.timeout_defaulted = e.http_timeout.count() == 0;
    f.empty_managed_resources = e.managed_resources.empty();
    for (const std::string& name : hami) {
      auto it = std::find_if(e.managed_resources.begin(), e.managed_resources.end(),
                             [&](const ManagedResource& r) { return r.name == name; });
      if (it == e.managed_resources.end()) {
        f.hami_resources_missing.push_back(name);
        continue;
      }
      f.hami_resources_managed.push_back(name);
      if (!it->ignored_by_scheduler) f.hami_resources_not_ignored.push_back(name);
    }
    f.looks_like_hami = !f.hami_resources_managed.empty();
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace hamisim::extender
