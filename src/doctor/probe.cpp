// The live probe of `hamisim doctor`: one filter call to each HAMi extender with the client
// Cluster Autoscaler's simulation uses (kube-scheduler's HTTPExtender semantics, TLS included),
// a probe pod asking one GPU slice, and a probe template node registering one NVIDIA device.

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "device/codec.h"
#include "doctor/doctor.h"
#include "doctor/format_ms.h"
#include "extender/extender_url.h"
#include "extender/http_extender.h"
#include "go/duration.h"
#include "model/json_writer.h"

namespace hamisim::doctor {

using extender::ExtenderConfig;
using extender::SchedulerConfig;

namespace {

constexpr std::string_view kProbeNodeName = "hamisim-doctor-probe";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

struct Classified {
  std::string check;
  Severity severity = Severity::kError;
  bool reachable = false;
  std::string message, why, fix;
};

// kube-scheduler's error texts (extender/http_extender.h) tell where the call failed.
Classified classify(const std::string& error, const ExtenderConfig& e, ConfigRole role,
                    const std::string& url) {
  const bool ca = role == ConfigRole::kClusterAutoscaler;
  const std::string consequence =
      ca ? "Cluster Autoscaler's calls fail the same way: every evaluation of a GPU pod fails "
           "and no GPU node group is scaled up."
         : "kube-scheduler's calls fail the same way: every scheduling attempt of a GPU pod "
           "fails.";
  Classified c;
  if (starts_with(error, "failed ") && contains(error, ", code ")) {
    c.reachable = true;
    const std::string code = error.substr(error.rfind(", code ") + 7);
    c.check = "probe-http-status";
    c.message = "HTTP " + code + " from " + url;
    c.why = consequence;
    if (code == "404") {
      c.why +=
          " 404: the path is not a route of this server (wrong filterVerb or urlPrefix, or "
          "not hamisim).";
      c.fix = ca ? "filterVerb: filter-simulation, urlPrefix pointing at the hamisim service"
                 : "filterVerb: filter, urlPrefix pointing at the hamisim sidecar";
    } else if (code == "403") {
      c.why += " 403: the server refuses this client certificate for the route's auth group.";
      c.fix = std::string("add the certificate's CN or DNS name to hamisim serve ") +
              (ca ? "--allow-simulation-clients" : "--allow-live-clients");
    } else if (code == "413") {
      c.fix = "raise hamisim serve --max-body-bytes";
    } else if (code == "429") {
      c.why += " 429: the server's in-flight limit for the route is reached.";
      c.fix = std::string("raise hamisim serve ") +
              (ca ? "--max-inflight-simulation" : "--max-inflight-live") + " or run more replicas";
    } else {
      c.fix = "look at the extender's logs";
    }
  } else if (contains(error, "Client.Timeout exceeded") || contains(error, "i/o timeout")) {
    c.check = "probe-timeout";
    c.message =
        "no answer within httpTimeout " + go::format_duration(e.effective_timeout()) + ": " + error;
    c.why = consequence;
    c.fix =
        "check that the extender is up and not overloaded; the network path (NetworkPolicy) "
        "must let the scheduler's pods through";
  } else if (contains(error, "alert certificate required") ||
             contains(error, "alert bad certificate") || contains(error, "alert unknown ca") ||
             contains(error, "alert certificate unknown")) {
    // TLS 1.3 reports a refused client certificate after the handshake, on the first read.
    c.check = "probe-tls";
    c.message = "the server refused the client certificate: " + error;
    c.why = consequence;
    c.fix =
        "tlsConfig.certFile/keyFile must hold a certificate issued by the CA hamisim serve "
        "trusts (--client-ca)";
  } else if (contains(error, "TLS handshake")) {
    c.check = "probe-tls";
    if (contains(error, "certificate verification") || contains(error, "certificate verify")) {
      c.message = "the server certificate failed verification: " + error;
      c.fix =
          "tlsConfig.caFile/caData must hold the CA that issued the server certificate, and "
          "the certificate must name the urlPrefix host (or tlsConfig.serverName) in its "
          "subject alternative names";
    } else {
      c.message = "TLS handshake failed: " + error;
      c.fix =
          "check that the server speaks TLS on that port; when it runs with --client-ca, "
          "tlsConfig.certFile/keyFile must hold a certificate that CA issued";
    }
    c.why = consequence;
  } else if (starts_with(error, "Post \"")) {
    c.check = "probe-reachability";
    c.message = "cannot reach the extender: " + error;
    c.why = consequence;
    c.fix =
        "check the Service name and port, that hamisim serve runs and is ready, and that "
        "NetworkPolicy admits the scheduler's pods; run doctor where the scheduler runs "
        "(same namespace and network view)";
  } else if (starts_with(error, "failed to decode") || starts_with(error, "extender \"")) {
    c.reachable = true;
    c.check = "probe-response";
    c.message = "the answer is not a valid ExtenderFilterResult: " + error;
    c.why = consequence;
    c.fix = "point urlPrefix at hamisim (or HAMi), not at something else";
  } else {
    // The extender answered 200 with `Error` set.
    c.reachable = true;
    c.check = "probe-answer";
    c.message = "the extender answered with an error: " + error;
    if (!ca) {
      // The probe node is unknown to a live extender; not-ready (cache sync, leadership) is
      // normal for a standby replica.
      c.severity = Severity::kWarning;
      c.why =
          "The live path answered the probe with an error; for a replica that is not the "
          "leader or has not synced its caches yet this is expected, otherwise kube-scheduler "
          "gets the same error.";
      c.fix = "check /readyz of the extender and its logs";
    } else {
      c.why = consequence;
      c.fix = starts_with(error, "not ready:")
                  ? "check /readyz and the logs of hamisim serve (device config, profiles)"
                  : "look at the extender's logs";
    }
  }
  return c;
}

}  // namespace

std::string probe_node_json(std::string_view name, std::string_view gpu_resource) {
  device::DeviceInfo gpu;
  gpu.id = "GPU-HAMISIM-DOCTOR-0";
  gpu.count = 10;
  gpu.devmem = 16384;
  gpu.devcore = 100;
  gpu.type = "NVIDIA-Tesla T4";
  gpu.mode = "hami-core";
  gpu.health = true;
  model::JsonWriter w;
  w.begin_object();
  w.key("metadata").begin_object();
  w.key("name").string(name);
  w.key("creationTimestamp").null();
  w.key("labels").begin_object();
  w.key("kubernetes.io/hostname").string(name);
  w.key("cluster-autoscaler.kubernetes.io/template-node").string("true");
  w.end_object();
  w.key("annotations").begin_object();
  w.key(device::kNvidiaRegisterAnnotation).string(device::encode_register_json({gpu}));
  w.end_object();
  w.end_object();
  w.key("spec").begin_object().end_object();
  w.key("status").begin_object();
  for (const char* part : {"capacity", "allocatable"}) {
    w.key(part).begin_object();
    w.key("cpu").string("8").key("memory").string("32Gi").key("pods").string("110");
    w.key(gpu_resource).string("10");
    w.end_object();
  }
  w.end_object();
  w.end_object();
  return w.take();
}

std::string probe_pod_json(const device::ResourceNames& names) {
  model::JsonWriter w;
  w.begin_object();
  w.key("metadata").begin_object();
  w.key("name").string("hamisim-doctor-probe");
  w.key("namespace").string("default");
  w.key("uid").string("hamisim-doctor-probe");
  w.key("creationTimestamp").null();
  w.end_object();
  w.key("spec").begin_object();
  w.key("containers").begin_array().begin_object();
  w.key("name").string("probe");
  w.key("resources").begin_object();
  w.key("limits").begin_object();
  w.key(names.count.empty() ? "nvidia.com/gpu" : names.count).string("1");
  if (!names.memory.empty()) w.key(names.memory).string("100");
  w.end_object();
  w.end_object();
  w.end_object().end_array();
  w.end_object();
  w.key("status").begin_object().end_object();
  w.end_object();
  return w.take();
}

ProbeOutcome probe_extender(const SchedulerConfig& config, size_t index, ConfigRole role,
                            const device::ResourceNames& names, const CheckOptions& options) {
  ProbeOutcome out;
  ProbeResult& r = out.result;
  const ExtenderConfig& e = config.extenders.at(index);
  const std::string at = "extenders[" + std::to_string(index) + "]";
  r.role = role;
  r.file = config.source;
  r.extender_index = index;
  r.url = extender::join_extender_url(e.url_prefix, e.filter_verb);
  auto facts = extender::describe_extenders(config, options.hami_resources);
  r.tls = std::string(extender::to_string(facts.at(index).tls_verification));

  auto finding = [&](Severity s, std::string check, std::string field, std::string message,
                     std::string why, std::string fix) {
    out.findings.push_back(Finding{s, std::move(check), role, config.source, std::move(field),
                                   std::move(message), std::move(why), std::move(fix)});
  };

  if (!e.is_filter()) {
    r.answer = "skipped";
    r.reason = "no filterVerb";
    return out;  // check_config reports it
  }
  auto client = extender::HttpExtender::create(e);
  if (!client) {
    r.answer = "skipped";
    r.reason = client.error().message;
    finding(Severity::kError, "probe-client", at + ".tlsConfig",
            "cannot set up a client for " + e.url_prefix + ": " + client.error().message,
            "The scheduler fails the same way when it builds its extenders, and refuses to start.",
            "file paths in tlsConfig are read where doctor runs: run it where the scheduler's "
            "files are (its pod), or give caData/certData/keyData");
    return out;
  }

  const std::string pod = probe_pod_json(names);
  const std::string node =
      probe_node_json(kProbeNodeName, names.count.empty() ? "nvidia.com/gpu" : names.count);
  extender::ExtenderArgs request;
  request.pod_json = pod;
  request.nodes.push_back({kProbeNodeName, node});

  const auto start = std::chrono::steady_clock::now();
  auto answer = (*client)->filter(request);
  r.latency_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  const std::string tls_text =
      r.tls == "none" ? "plain HTTP" : "TLS (server certificate " + r.tls + ")";
  if (!answer) {
    Classified c = classify(answer.error().message, e, role, r.url);
    r.reachable = c.reachable;
    r.answer = "error";
    r.reason = answer.error().message;
    finding(c.severity, c.check, at + ".urlPrefix", std::move(c.message), std::move(c.why),
            std::move(c.fix));
    return out;
  }
  r.reachable = true;
  const auto& result = *answer;
  const bool passed =
      std::find(result.passed.begin(), result.passed.end(), kProbeNodeName) != result.passed.end();
  std::string reason;
  if (auto it = result.failed_and_unresolvable_nodes.find(kProbeNodeName);
      it != result.failed_and_unresolvable_nodes.end()) {
    reason = it->second;
  } else if (auto f = result.failed_nodes.find(kProbeNodeName); f != result.failed_nodes.end()) {
    reason = f->second;
  }
  const bool live = role == ConfigRole::kKubeScheduler && e.node_cache_capable;
  if (live) {
    // A live extender judges nodes from its own cache, where the probe node does not exist:
    // any well-formed answer proves the route, TLS and the handshake work.
    r.ok = true;
    r.answer = "answered";
    r.reason = passed ? "the probe node passed" : reason.empty() ? "filtered out" : reason;
  } else if (passed) {
    r.ok = true;
    r.answer = "passed";
  } else {
    r.answer = "rejected";
    r.reason = reason.empty() ? "the extender returned no node" : reason;
    finding(Severity::kError, "probe-answer", at,
            "the extender rejected the probe (1 " + names.count + ", 100 MiB " + names.memory +
                " on a template with one 16 GiB NVIDIA GPU): " + r.reason,
            "A pod asking a small GPU slice should fit a template node that registers a free "
            "GPU. If it does not, Cluster Autoscaler will not scale up for real pods either. "
            "`node unregistered` means the extender does not read "
            "hami.io/node-nvidia-register from the node it is given.",
            "check that urlPrefix points at hamisim serve (or a HAMi with the simulation path) "
            "and that its --device-config-file uses the same resource names as this doctor run");
  }
  if (r.ok) {
    finding(Severity::kInfo, "probe", at,
            "answered in " + format_ms(r.latency_ms) + " over " + tls_text + ": " +
                (r.answer == "passed" ? "the probe node passed" : r.reason),
            "The scheduler can reach the extender, and the extender answers the filter call.", "");
  }
  const double timeout_ms =
      std::chrono::duration<double, std::milli>(e.effective_timeout()).count();
  if (r.reachable && r.latency_ms > timeout_ms / 2) {
    finding(Severity::kWarning, "probe-latency", at + ".httpTimeout",
            "one probe call took " + format_ms(r.latency_ms) + ", more than half of httpTimeout " +
                go::format_duration(e.effective_timeout()),
            "A real call carries more nodes and a busier server; it is likely to time out.",
            "find out why the extender is slow (its /metrics), or raise httpTimeout within the "
            "scheduler's budget");
  }
  return out;
}

}  // namespace hamisim::doctor
