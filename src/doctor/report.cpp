// Runs the checks and probes and renders the report (table for people, JSON for tools).

#include <cstdio>

#include "doctor/doctor.h"
#include "doctor/format_ms.h"
#include "model/json_writer.h"

namespace hamisim::doctor {

size_t Report::count(Severity s) const {
  size_t n = 0;
  for (const auto& f : findings) n += f.severity == s ? 1 : 0;
  return n;
}

namespace {

void add_config(const extender::SchedulerConfig& config, ConfigRole role, const DoctorInput& input,
                Report& report) {
  ConfigSummary summary;
  summary.role = role;
  summary.file = config.source;
  for (size_t i = 0; i < config.extenders.size(); ++i) {
    summary.extenders.push_back(
        {i, config.extenders[i].url_prefix,
         is_hami_extender(config.extenders[i], input.options.hami_resources)});
  }
  report.configs.push_back(summary);
  auto findings = check_config(config, role, input.options);
  report.findings.insert(report.findings.end(), findings.begin(), findings.end());
  if (input.offline) return;
  for (const auto& e : summary.extenders) {
    if (!e.hami) continue;
    ProbeOutcome probe =
        probe_extender(config, e.index, role, input.probe_resources, input.options);
    report.probes.push_back(std::move(probe.result));
    report.findings.insert(report.findings.end(), probe.findings.begin(), probe.findings.end());
  }
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string plural(size_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

// A finding in the table: severity, field and check, then its message, why and fix indented.
void append_finding(std::string& out, const Finding& f) {
  char head[64];
  std::snprintf(head, sizeof head, "  %-9s", upper(to_string(f.severity)).c_str());
  out += head + (f.field.empty() ? std::string("-") : f.field) + "  [" + f.check + "]\n";
  out += "           " + f.message + "\n";
  if (!f.why.empty()) out += "           why: " + f.why + "\n";
  if (!f.fix.empty()) out += "           fix: " + f.fix + "\n";
}

}  // namespace

Report run_doctor(const DoctorInput& input) {
  Report report;
  report.offline = input.offline;
  if (input.ca) add_config(*input.ca, ConfigRole::kClusterAutoscaler, input, report);
  if (input.kube_scheduler) {
    add_config(*input.kube_scheduler, ConfigRole::kKubeScheduler, input, report);
  }
  for (const auto& np : input.network_policies) {
    report.network_policies.push_back(np.source);
    auto findings = check_network_policy(np.text, np.source, input.ca_pod_labels);
    report.findings.insert(report.findings.end(), findings.begin(), findings.end());
  }
  for (const auto& c : input.clusters) {
    report.clusters.push_back(c.source);
    auto findings = check_dra_cluster(c.source, c.nodes, c.dra);
    report.findings.insert(report.findings.end(), findings.begin(), findings.end());
  }
  return report;
}

int exit_code(const Report& report) {
  return report.ok() ? 0 : 1;
}

std::string render_table(const Report& report) {
  std::string out;
  for (const auto& config : report.configs) {
    out += std::string(to_string(config.role)) + " configuration " + config.file + "\n";
    if (config.extenders.empty()) out += "  (no extenders)\n";
    for (const auto& e : config.extenders) {
      out += "  extenders[" + std::to_string(e.index) + "] " + e.url_prefix +
             (e.hami ? "  (HAMi)" : "") + "\n";
    }
    bool any = false;
    for (const auto& f : report.findings) {
      if (f.role != config.role || f.file != config.file) continue;
      if (!any) out += "\n";
      any = true;
      append_finding(out, f);
    }
    if (!any) out += "\n  no findings\n";
    out += "\n";
  }
  for (const auto& file : report.network_policies) {
    out += "network policy " + file + "\n";
    for (const auto& f : report.findings) {
      if (f.file != file || f.check != "network-policy-ca-labels") continue;
      append_finding(out, f);
    }
    out += "\n";
  }
  for (const auto& file : report.clusters) {
    out += "cluster " + file + "\n";
    bool any = false;
    for (const auto& f : report.findings) {
      if (f.file != file || !f.check.starts_with("dra-")) continue;
      append_finding(out, f);
      any = true;
    }
    if (!any) out += "  no findings\n";
    out += "\n";
  }
  if (report.offline) {
    out += "probes: skipped (--offline)\n";
  } else if (report.probes.empty()) {
    out += "probes: none (no HAMi extender to call)\n";
  } else {
    out += "probes:\n";
    for (const auto& p : report.probes) {
      out += "  " + std::string(to_string(p.role)) + " extenders[" +
             std::to_string(p.extender_index) + "] POST " + p.url + "  tls=" + p.tls;
      if (p.reachable) out += "  " + format_ms(p.latency_ms);
      out += "  " + p.answer;
      if (!p.reason.empty()) out += ": " + p.reason;
      out += "\n";
    }
  }
  out += "\n" + plural(report.count(Severity::kError), "error") + ", " +
         plural(report.count(Severity::kWarning), "warning") + ", " +
         plural(report.count(Severity::kInfo), "info") + ": " + (report.ok() ? "OK" : "NOT OK") +
         "\n";
  return out;
}

std::string render_json(const Report& report) {
  model::JsonWriter w;
  w.begin_object();
  w.key("schemaVersion").number(1);
  w.key("ok").boolean(report.ok());
  w.key("offline").boolean(report.offline);
  w.key("summary").begin_object();
  w.key("errors").unsigned_number(report.count(Severity::kError));
  w.key("warnings").unsigned_number(report.count(Severity::kWarning));
  w.key("infos").unsigned_number(report.count(Severity::kInfo));
  w.end_object();
  w.key("configs").begin_array();
  for (const auto& c : report.configs) {
    w.begin_object();
    w.key("role").string(to_string(c.role));
    w.key("file").string(c.file);
    w.key("extenders").begin_array();
    for (const auto& e : c.extenders) {
      w.begin_object();
      w.key("index").unsigned_number(e.index);
      w.key("urlPrefix").string(e.url_prefix);
      w.key("hami").boolean(e.hami);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("findings").begin_array();
  for (const auto& f : report.findings) {
    w.begin_object();
    w.key("severity").string(to_string(f.severity));
    w.key("check").string(f.check);
    w.key("role").string(to_string(f.role));
    w.key("file").string(f.file);
    w.key("field").string(f.field);
    w.key("message").string(f.message);
    w.key("why").string(f.why);
    w.key("fix").string(f.fix);
    w.end_object();
  }
  w.end_array();
  w.key("probes").begin_array();
  for (const auto& p : report.probes) {
    w.begin_object();
    w.key("role").string(to_string(p.role));
    w.key("file").string(p.file);
    w.key("extender").unsigned_number(p.extender_index);
    w.key("url").string(p.url);
    w.key("tls").string(p.tls);
    w.key("reachable").boolean(p.reachable);
    w.key("ok").boolean(p.ok);
    w.key("latencyMs");
    if (p.reachable) {
      w.float64(static_cast<double>(static_cast<int64_t>(p.latency_ms * 1000)) / 1000);
    } else {
      w.null();
    }
    w.key("answer").string(p.answer);
    w.key("reason").string(p.reason);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.take();
}

}  // namespace hamisim::doctor
