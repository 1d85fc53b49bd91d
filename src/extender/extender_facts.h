#pragma once
// Facts `hamisim doctor` reports on (spec §8) about the extenders of a loaded
// KubeSchedulerConfiguration, as plain data: TLS verification, timeouts, and whether each one
// looks like HAMi and manages HAMi's resources as it should.

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "extender/scheduler_config.h"

namespace hamisim::extender {

enum class TlsVerification {
  kNone,             // plain http:// URL
  kVerified,         // https with caFile/caData
  kSystemRoots,      // https, no CA, verification on: the system trust store decides
  kSkippedInsecure,  // tlsConfig.insecure: true
  kSkippedNoCa,      // enableHTTPS without caFile/caData: kube-scheduler forces insecure
};
std::string_view to_string(TlsVerification v);

// The resource names HAMi's NVIDIA backend manages under its default configuration.
const std::vector<std::string>& default_hami_resource_names();

struct ExtenderFacts {
  size_t index = 0;
  std::string url_prefix;
  std::string scheme;  // "http" or "https" (empty when the URL cannot be parsed)
  bool https = false;
  TlsVerification tls_verification = TlsVerification::kNone;
  bool client_certificate = false;  // mTLS material configured
  bool filter = false;
  std::string filter_verb;
  bool node_cache_capable = false;
  bool ignorable = false;
  std::chrono::nanoseconds timeout{0};   // effective
  bool timeout_defaulted = false;        // httpTimeout absent or 0
  bool empty_managed_resources = false;  // interested in every pod
  // Looks like HAMi: manages at least one of the HAMi resource names given.
  bool looks_like_hami = false;
  std::vector<std::string> hami_resources_managed;
  std::vector<std::string> hami_resources_not_ignored;  // managed, ignoredByScheduler: false
  std::vector<std::string> hami_resources_missing;      // HAMi names this extender omits
};

// One entry per extender, in config order. `hami_resources` defaults to
// default_hami_resource_names() when empty.
std::vector<ExtenderFacts> describe_extenders(const SchedulerConfig& config,
                                              const std::vector<std::string>& hami_resources = {});

}  // namespace hamisim::extender
