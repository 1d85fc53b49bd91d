// The offline checks of `hamisim doctor`: each looks at one field of one extender (or of a
// profile) and explains, for the scheduler that reads the file, what goes wrong and how to fix it.

#include <algorithm>

#include "device/registry.h"
#include "doctor/doctor.h"
#include "extender/extender_url.h"
#include "go/duration.h"
#include "model/text.h"

namespace hamisim::doctor {

using extender::ExtenderConfig;
using extender::SchedulerConfig;
using extender::TlsVerification;

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "info";
  }
  return "?";
}

std::string_view to_string(ConfigRole r) {
  return r == ConfigRole::kClusterAutoscaler ? "cluster-autoscaler" : "kube-scheduler";
}

std::vector<VendorResources> vendor_resources(const device::DeviceRegistry& registry) {
  std::vector<VendorResources> out;
  for (const auto& backend : registry.backends()) {
    VendorResources v{std::string(backend->vendor()), backend->managed_resources()};
    if (!v.names.empty()) out.push_back(std::move(v));
  }
  return out;
}

std::vector<std::string> hami_resource_names(const device::DeviceRegistry& registry) {
  std::vector<std::string> names;
  for (const VendorResources& v : vendor_resources(registry)) {
    for (const std::string& n : v.names) {
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
  }
  return names;
}

bool is_hami_extender(const ExtenderConfig& extender,
                      const std::vector<std::string>& hami_resources) {
  for (const auto& r : extender.managed_resources) {
    if (std::find(hami_resources.begin(), hami_resources.end(), r.name) != hami_resources.end()) {
      return true;
    }
  }
  return false;
}

namespace {

using model::join;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_loopback_host(std::string_view host) {
  return host == "localhost" || host == "::1" || host.substr(0, 4) == "127.";
}

std::string duration(std::chrono::nanoseconds d) {
  return go::format_duration(d);
}

class Checker {
 public:
  Checker(const SchedulerConfig& config, ConfigRole role, const CheckOptions& options,
          std::vector<Finding>& out)
      : config_(config), role_(role), o_(options), out_(out) {}

  void run() {
    std::vector<size_t> hami;
    for (size_t i = 0; i < config_.extenders.size(); ++i) {
      if (is_hami_extender(config_.extenders[i], o_.hami_resources)) hami.push_back(i);
    }
    check_hami_present(hami);
    for (size_t i = 0; i < config_.extenders.size(); ++i) {
      const ExtenderConfig& e = config_.extenders[i];
      if (std::find(hami.begin(), hami.end(), i) == hami.end()) {
        check_other_extender(i, e);
        continue;
      }
      check_filter_verb(i, e);
      check_node_cache_capable(i, e);
      check_managed_resources(i, e);
      check_ignorable(i, e);
      check_tls(i, e);
      check_timeout(i, e);
      check_other_verbs(i, e);
      check_simulated_pods(i, e);
    }
    check_node_resources_fit();
  }

 private:
  bool ca() const { return role_ == ConfigRole::kClusterAutoscaler; }
  static std::string at(size_t i) { return "extenders[" + std::to_string(i) + "]"; }

  void add(Severity s, std::string check, std::string field, std::string message, std::string why,
           std::string fix = {}) {
    out_.push_back(Finding{s, std::move(check), role_, config_.source, std::move(field),
                           std::move(message), std::move(why), std::move(fix)});
  }

  std::string managed_snippet() const {
    std::string s = "managedResources: [";
    for (size_t i = 0; i < o_.hami_resources.size(); ++i) {
      if (i) s += ", ";
      s += "{name: " + o_.hami_resources[i] + ", ignoredByScheduler: true}";
    }
    return s + "]";
  }

  void check_hami_present(const std::vector<size_t>& hami) {
    if (hami.empty()) {
      const std::string what = config_.extenders.empty()
                                   ? "there is no extender at all"
                                   : "none of the " + std::to_string(config_.extenders.size()) +
                                         " extender(s) manages a HAMi resource (" +
                                         join(o_.hami_resources) + ")";
      add(Severity::kError, "hami-extender", "extenders", what,
          ca() ? "Cluster Autoscaler then decides GPU scale-ups with NodeResourcesFit alone: it "
                 "cannot see device memory or core shares, so it grows the wrong node group, too "
                 "little, or none at all."
               : "kube-scheduler never asks HAMi: pods asking device memory or cores stay Pending "
                 "(Insufficient nvidia.com/gpumem) or land on GPUs that cannot hold them.",
          std::string("add an extender: urlPrefix: ") +
              (ca() ? "https://hamisim-simulation.hamisim.svc:8443, filterVerb: filter-simulation, "
                      "nodeCacheCapable: false"
                    : "https://127.0.0.1:8443, filterVerb: filter, bindVerb: bind, "
                      "nodeCacheCapable: true") +
              ", ignorable: false, " + managed_snippet());
      return;
    }
    if (hami.size() > 1) {
      std::vector<std::string> which;
      for (size_t i : hami) which.push_back(at(i));
      add(Severity::kWarning, "hami-extender", "extenders",
          "HAMi resources are split across " + join(which),
          "A pod is sent to every extender that manages one of its resources; two device "
          "extenders answering for the same devices can disagree, and a pod asking only some of "
          "the resources is judged by only one of them.",
          "manage every HAMi resource in one extender");
    }
  }

  void check_other_extender(size_t i, const ExtenderConfig& e) {
    if (e.is_filter() && e.managed_resources.empty()) {
      add(Severity::kInfo, "other-extender", at(i) + ".managedResources",
          "extender " + e.url_prefix + " manages no resource, so it is called for every pod",
          ca() ? "Cluster Autoscaler sends it every pod it simulates, GPU or not; its failures "
                 "fail scale-up evaluations unless it is ignorable."
               : "kube-scheduler sends it every pod.");
    }
  }

  void check_filter_verb(size_t i, const ExtenderConfig& e) {
    const std::string field = at(i) + ".filterVerb";
    const std::string_view want = ca() ? kSimulationFilterPath : kLiveFilterPath;
    if (!e.is_filter()) {
      add(Severity::kError, "filter-verb", field, "filterVerb is empty: the extender never filters",
          "Without filterVerb the scheduler never sends a pod to the extender for filtering, so "
          "device fit is not checked at all.",
          "filterVerb: " + std::string(want.substr(1)));
      return;
    }
    const std::string url = extender::join_extender_url(e.url_prefix, e.filter_verb);
    auto parsed = extender::parse_extender_url(url);
    const std::string path = parsed ? parsed->target.substr(0, parsed->target.find('?')) : "";
    if (path == want) return;
    if (ends_with(path, want)) {
      add(Severity::kWarning, "filter-verb", field,
          "the filter call goes to " + path + ", not " + std::string(want),
          "hamisim serves " + std::string(want) +
              " at the root: this works only if a proxy in between strips the prefix.",
          "point urlPrefix at the service itself and use filterVerb: " +
              std::string(want.substr(1)));
      return;
    }
    if (ca() && (path == kLiveFilterPath || ends_with(path, kLiveFilterPath))) {
      add(Severity::kWarning, "filter-verb", field,
          "filterVerb reaches the live route " + path + ", not " + std::string(want),
          "A /filter request carrying Nodes is simulated only for compatibility with HAMi: "
          "`hamisim serve --legacy-nodes-filter=reject` refuses it, and it runs in the live auth "
          "group (CA's certificate must be in --allow-live-clients and shares the live in-flight "
          "limit with kube-scheduler).",
          "filterVerb: filter-simulation");
      return;
    }
    if (!ca() && (path == kSimulationFilterPath || ends_with(path, kSimulationFilterPath))) {
      add(Severity::kError, "filter-verb", field,
          "kube-scheduler's filter call goes to the simulation route " + path,
          "The simulation path never reads live state: it ignores the devices running pods "
          "already hold and writes no allocation, so pods would be placed on full GPUs (and it "
          "refuses the NodeNames requests kube-scheduler sends with nodeCacheCapable: true).",
          "filterVerb: filter");
      return;
    }
    add(Severity::kError, "filter-verb", field,
        "the filter call goes to " + (path.empty() ? url : path) + ", which is not a route of " +
            "hamisim (want " + std::string(want) + ")",
        ca() ? "Every call gets 404, so Cluster Autoscaler's evaluation of every GPU pod fails "
               "and no GPU node group is scaled up."
             : "Every call gets 404, so every scheduling attempt of a GPU pod fails.",
        "filterVerb: " + std::string(want.substr(1)));
  }

  void check_node_cache_capable(size_t i, const ExtenderConfig& e) {
    const std::string field = at(i) + ".nodeCacheCapable";
    if (ca() && e.node_cache_capable) {
      add(Severity::kError, "node-cache-capable", field, "nodeCacheCapable is true",
          "With nodeCacheCapable: true Cluster Autoscaler sends node names only. Template nodes "
          "(template-node-for-<group>-...) exist nowhere but in CA's memory, so the extender "
          "cannot see their devices: /filter-simulation refuses the request and HAMi answers "
          "`node unregistered`. No GPU node group is ever scaled up, from zero least of all.",
          "nodeCacheCapable: false");
    } else if (!ca() && !e.node_cache_capable) {
      add(Severity::kError, "node-cache-capable", field, "nodeCacheCapable is false",
          "kube-scheduler then sends whole Node objects on every call and hamisim answers a "
          "Nodes request from the simulation path, which ignores the devices running pods "
          "already hold: pods would be placed on full GPUs (or refused with "
          "--legacy-nodes-filter=reject). Bodies grow with every node too.",
          "nodeCacheCapable: true");
    }
  }

  void check_managed_resources(size_t i, const ExtenderConfig& e) {
    auto listed = [&](const std::string& name) {
      return std::any_of(e.managed_resources.begin(), e.managed_resources.end(),
                         [&](const auto& r) { return r.name == name; });
    };
    std::vector<std::string> missing;
    std::vector<std::string> unmanaged_vendors;
    if (o_.vendors.empty()) {
      for (const std::string& name : o_.hami_resources) {
        if (!listed(name)) missing.push_back(name);
      }
    }
    for (const VendorResources& v : o_.vendors) {
      std::vector<std::string> absent;
      for (const std::string& name : v.names) {
        if (!listed(name)) absent.push_back(name);
      }
      if (absent.size() == v.names.size() && v.vendor != device::kNvidiaVendor) {
        unmanaged_vendors.push_back(v.vendor);
        continue;
      }
      missing.insert(missing.end(), absent.begin(), absent.end());
    }
    if (!unmanaged_vendors.empty()) {
      add(Severity::kInfo, "vendors-not-managed", at(i) + ".managedResources",
          "no resource listed for: " + join(unmanaged_vendors),
          "Pods asking only for these vendors' devices are never shown to this extender. "
          "That is right when the cluster has none of them; otherwise list their resources "
          "as HAMi's chart does.");
    }
    if (!missing.empty()) {
      add(
          Severity::kError, "managed-resources", at(i) + ".managedResources",
          "HAMi resource(s) not listed: " + join(missing),
          "The scheduler sends a pod to the extender only when it asks a listed resource, and "
          "checks every resource that is not ignored against node allocatable. A pod asking "
          "only " +
              missing.front() +
              " is never shown to the extender, and no node ever advertises it, so the pod "
              "fails with `Insufficient " +
              missing.front() + "` " +
              (ca() ? "and Cluster Autoscaler never scales up for it." : "and stays Pending."),
          "add to managedResources: " + [&] {
            std::string s;
            for (const auto& m : missing) {
              if (!s.empty()) s += ", ";
              s += "{name: " + m + ", ignoredByScheduler: true}";
            }
            return s;
          }());
    }
    for (size_t j = 0; j < e.managed_resources.size(); ++j) {
      const auto& r = e.managed_resources[j];
      if (r.ignored_by_scheduler) continue;
      if (std::find(o_.hami_resources.begin(), o_.hami_resources.end(), r.name) ==
          o_.hami_resources.end()) {
        continue;
      }
      add(Severity::kError, "ignored-by-scheduler",
          at(i) + ".managedResources[" + std::to_string(j) + "].ignoredByScheduler",
          r.name + " is managed but not ignoredByScheduler",
          std::string("NodeResourcesFit then compares the request with the node's allocatable "
                      "before the extender is asked. HAMi's device plugin advertises at most a "
                      "share count for ") +
              (ca() ? "real nodes and a cold template advertises nothing, so templates fail "
                      "with `Insufficient " +
                          r.name + "` and Cluster Autoscaler never scales up for the pod."
                    : "nodes and nothing for memory or cores, so pods fail with `Insufficient " +
                          r.name + "` or are judged by the wrong numbers."),
          "ignoredByScheduler: true");
    }
  }

  void check_ignorable(size_t i, const ExtenderConfig& e) {
    if (!e.ignorable) return;
    add(Severity::kError, "ignorable", at(i) + ".ignorable", "ignorable is true",
        ca() ? "When an ignorable extender fails (timeout, TLS, 5xx), Cluster Autoscaler keeps "
               "every candidate as if it fit: it scales up node groups whose devices cannot hold "
               "the pod, and nothing says so."
             : "When an ignorable extender fails, kube-scheduler places the pod without any "
               "device check: it lands on GPUs that cannot hold it and fails when it starts.",
        "ignorable: false");
  }

  void check_tls(size_t i, const ExtenderConfig& e) {
    auto facts = extender::describe_extenders(config_, o_.hami_resources);
    const auto& f = facts[i];
    auto parsed = extender::parse_extender_url(e.url_prefix);
    const std::string host = parsed ? parsed->host : "";
    const std::string p = at(i);
    const std::string mtls_flag = ca() ? "--allow-simulation-clients" : "--allow-live-clients";
    if (!f.https) {
      if (e.enable_https) {
        add(Severity::kWarning, "tls", p + ".enableHTTPS",
            "enableHTTPS is true but urlPrefix is " + e.url_prefix,
            "The scheme comes from urlPrefix alone: traffic is plain HTTP despite enableHTTPS.",
            "use an https:// urlPrefix");
      } else if (is_loopback_host(host)) {
        add(Severity::kInfo, "tls", p + ".urlPrefix", "plain HTTP to loopback (" + host + ")",
            "Traffic stays inside the pod (the sidecar layout); nothing else can reach it.");
      } else {
        add(Severity::kWarning, "tls", p + ".urlPrefix", "plain HTTP to " + host,
            "Pod specs and Node objects travel unencrypted, and anything that can reach the port "
            "can call the extender.",
            "serve TLS (hamisim serve --tls-cert/--tls-key), use an https:// urlPrefix and set "
            "tlsConfig.caFile");
      }
      return;
    }
    const bool unverified = f.tls_verification == TlsVerification::kSkippedInsecure ||
                            f.tls_verification == TlsVerification::kSkippedNoCa;
    if (unverified && is_loopback_host(host)) {
      // HAMi's chart: https://127.0.0.1:443 with insecure: true, from kube-scheduler to the
      // extender in the same pod. Nothing can intercept loopback, so this is plain HTTP to
      // loopback with encryption on top, and reported the same way.
      add(Severity::kInfo, "tls", p + ".urlPrefix", "unverified TLS to loopback (" + host + ")",
          "Traffic stays inside the pod (the sidecar layout, as HAMi's chart deploys it); no "
          "one can intercept it, so the unverified certificate does not matter.");
      return;
    }
    switch (f.tls_verification) {
      case TlsVerification::kSkippedInsecure:
        add(Severity::kWarning, "tls-insecure", p + ".tlsConfig.insecure",
            "insecure: true: the server certificate is not verified",
            "Anything that can intercept the connection can impersonate the extender and decide "
            "device fit (and, for kube-scheduler, bindings).",
            "remove insecure and set tlsConfig.caFile (or caData) to the CA that issued the "
            "server certificate");
        break;
      case TlsVerification::kSkippedNoCa:
        add(Severity::kWarning, "tls-verification", p + ".tlsConfig",
            "enableHTTPS without caFile or caData: the server certificate is not verified",
            "kube-scheduler's extender client (which CA reuses) forces insecure when "
            "enableHTTPS has no CA: the connection is encrypted but the server is not "
            "authenticated.",
            "set tlsConfig.caFile (or caData) to the CA that issued the server certificate");
        break;
      case TlsVerification::kSystemRoots:
        add(Severity::kWarning, "tls-verification", p + ".tlsConfig.caFile",
            "https without caFile or caData: the certificate is checked against the system "
            "trust store of the scheduler's image",
            "A certificate from a private CA (cert-manager, a Secret) fails that check, so every "
            "call fails with a TLS error.",
            "set tlsConfig.caFile (or caData) to the CA that issued the server certificate");
        break;
      default:
        break;
    }
    if (!f.client_certificate) {
      add(Severity::kInfo, "mtls", p + ".tlsConfig.certFile", "no client certificate",
          ca() ? "Without one hamisim cannot tell this autoscaler from any other caller, so it "
                 "cannot keep other callers off the simulation routes."
               : "Without one hamisim answers /filter and /bind only to loopback callers: this "
                 "scheduler must run in hamisim's pod (as HAMi's chart and deploy/live do).",
          "serve with --client-ca and " + mtls_flag + ", and set tlsConfig.certFile/keyFile");
    }
  }

  void check_timeout(size_t i, const ExtenderConfig& e) {
    const std::string field = at(i) + ".httpTimeout";
    const auto t = e.effective_timeout();
    if (e.http_timeout.count() == 0) {
      add(Severity::kInfo, "http-timeout", field, "httpTimeout is not set: the default 5s applies",
          "The timeout covers connect, TLS handshake, request and answer of one call.");
    }
    if (t < o_.min_timeout) {
      add(Severity::kWarning, "http-timeout", field,
          "httpTimeout " + duration(t) + " is shorter than " + duration(o_.min_timeout),
          std::string("It covers connect, TLS handshake, request and answer. A call that runs "
                      "out is an extender error: ") +
              (ca() ? "the evaluation of the pod fails and the node group is not scaled up."
                    : "the scheduling attempt fails and the pod goes to backoff."),
          "httpTimeout: 5s");
    } else if (ca() && t > o_.ca_binpacking_budget) {
      add(Severity::kWarning, "http-timeout", field,
          "httpTimeout " + duration(t) + " is longer than Cluster Autoscaler's binpacking budget " +
              duration(o_.ca_binpacking_budget) + " (--max-nodegroup-binpacking-duration)",
          "Every extender call of a node group's estimate runs inside that budget: one hung call "
          "uses it all up, and CA's whole loop waits for it.",
          "httpTimeout: 5s (at most " + duration(o_.ca_binpacking_budget) + ")");
    } else if (!ca() && t > o_.max_live_timeout) {
      add(Severity::kWarning, "http-timeout", field,
          "httpTimeout " + duration(t) + " is longer than " + duration(o_.max_live_timeout),
          "kube-scheduler schedules one pod at a time: a hung call stalls every pending pod for "
          "that long.",
          "httpTimeout: 5s");
    }
  }

  // Issue #33: what the CA build must do cannot be read from its configuration, so it is
  // said for every CA extender that filters.
  void check_simulated_pods(size_t i, const ExtenderConfig& e) {
    if (!ca() || !e.is_filter()) return;
    add(Severity::kInfo, "simulated-pods", at(i),
        "the Cluster Autoscaler build must send SimulatedPods and keep Allocations "
        "(docs/ca-side.md); this file cannot show whether it does",
        "The simulation route keeps no state: the pods already on a node are the ones the caller "
        "sends. A CA build that calls the extender with kube-scheduler's standard client (the "
        "feat/extender-managed-resources branch as it is) sends none, so every node looks empty "
        "to it: it asks for too few nodes when device memory or cores bound the packing, and for "
        "none when the pods would go to GPUs already in use (on the bundled example: no node "
        "instead of one). `hamisim plan --compare-unpatched-ca` shows how far off it is on a "
        "snapshot; `hamisim serve` counts such a caller in hamisim_simulated_pods_missing_total.");
  }

  void check_other_verbs(size_t i, const ExtenderConfig& e) {
    const std::string p = at(i);
    if (ca()) {
      if (!e.bind_verb.empty()) {
        add(Severity::kWarning, "bind-verb", p + ".bindVerb",
            "bindVerb \"" + e.bind_verb + "\" is set, but Cluster Autoscaler never binds",
            "It is a sign that kube-scheduler's live configuration was copied; the other live "
            "settings (nodeCacheCapable: true, filterVerb: filter) usually come with it.",
            "remove bindVerb from the Cluster Autoscaler configuration");
      }
      if (!e.prioritize_verb.empty() || !e.preempt_verb.empty()) {
        add(Severity::kInfo, "unused-verb", p,
            "prioritizeVerb/preemptVerb are set; Cluster Autoscaler only ever calls filterVerb",
            "They have no effect here.");
      }
      return;
    }
    if (e.bind_verb.empty()) {
      add(Severity::kError, "bind-verb", p + ".bindVerb",
          "bindVerb is empty: kube-scheduler binds HAMi pods itself",
          "HAMi's bind takes the node lock and sets hami.io/bind-phase before it creates the "
          "Binding; without it two pods can be given the same device share and the device "
          "plugin cannot match the allocation.",
          "bindVerb: bind");
    } else {
      const std::string url = extender::join_extender_url(e.url_prefix, e.bind_verb);
      auto parsed = extender::parse_extender_url(url);
      if (!parsed || parsed->target != kLiveBindPath) {
        add(Severity::kError, "bind-verb", p + ".bindVerb",
            "the bind call goes to " + (parsed ? parsed->target : url) + ", not /bind",
            "Every bind gets 404: pods are never bound.", "bindVerb: bind");
      }
    }
    if (!e.prioritize_verb.empty()) {
      add(Severity::kWarning, "unused-verb", p + ".prioritizeVerb",
          "prioritizeVerb \"" + e.prioritize_verb + "\" is set; hamisim has no prioritize route",
          "Every scheduling cycle pays a round trip that ends in 404 (kube-scheduler ignores "
          "prioritize errors); HAMi scores nodes through the filter call.",
          "remove prioritizeVerb and weight");
    }
    if (!e.preempt_verb.empty()) {
      add(Severity::kWarning, "unused-verb", p + ".preemptVerb",
          "preemptVerb \"" + e.preempt_verb + "\" is set; hamisim has no preempt route",
          "Preemption that consults this extender fails with 404.", "remove preemptVerb");
    }
  }

  void check_node_resources_fit() {
    std::vector<std::string> ignored;
    for (const auto& e : config_.extenders) {
      for (const auto& r : e.managed_resources) {
        if (r.ignored_by_scheduler) ignored.push_back(r.name);
      }
    }
    if (ignored.empty()) return;
    for (size_t i = 0; i < config_.profiles.size(); ++i) {
      const auto& profile = config_.profiles[i];
      const std::string p = "profiles[" + std::to_string(i) + "]";
      if (!profile.node_resources_fit) {
        add(Severity::kError, "node-resources-fit", p + ".plugins",
            "NodeResourcesFit is disabled, but extenders ask to have resources ignored by it",
            std::string(ca() ? "Cluster Autoscaler" : "kube-scheduler") +
                " refuses to start: `can't find NodeResourcesFitArgs in plugin config`.",
            "enable NodeResourcesFit (remove it from plugins.multiPoint.disabled)");
        continue;
      }
      std::vector<std::string> dropped;
      for (const auto& r : profile.node_resources_fit->ignored_resources) {
        if (std::find(ignored.begin(), ignored.end(), r) == ignored.end()) dropped.push_back(r);
      }
      if (dropped.empty()) continue;
      const auto& names = profile.plugin_config_names;
      const size_t k = static_cast<size_t>(
          std::find(names.begin(), names.end(), "NodeResourcesFit") - names.begin());
      add(Severity::kWarning, "node-resources-fit",
          p + ".pluginConfig[" + std::to_string(k) + "].args.ignoredResources",
          "ignoredResources " + join(dropped) +
              " are dropped: the extenders' ignoredByScheduler names replace the list",
          "The scheduler overwrites NodeResourcesFit's ignoredResources with the names "
          "extenders mark ignoredByScheduler; it does not merge them, so these resources are "
          "checked against node allocatable after all.",
          "list them as managedResources with ignoredByScheduler: true on their extender, or "
          "use ignoredResourceGroups (which is kept)");
    }
  }

  const SchedulerConfig& config_;
  ConfigRole role_;
  const CheckOptions& o_;
  std::vector<Finding>& out_;
};

}  // namespace

std::vector<Finding> check_config(const SchedulerConfig& config, ConfigRole role,
                                  const CheckOptions& options) {
  std::vector<Finding> out;
  Checker(config, role, options, out).run();
  return out;
}

}  // namespace hamisim::doctor
