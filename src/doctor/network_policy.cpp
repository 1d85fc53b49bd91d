// The NetworkPolicy check: Cluster Autoscaler must be let through to the simulation service,
// and the labels its pods really carry are the CA Helm chart's, not the ones people guess.

#include <boost/json.hpp>
#include <map>

#include "doctor/doctor.h"
#include "model/decode.h"

namespace hamisim::doctor {
namespace {

namespace json = boost::json;

constexpr std::string_view kInstanceKey = "app.kubernetes.io/instance";

// A set of labels a CA pod carries; `any_instance`: the chart's release name is unknown, so
// app.kubernetes.io/instance matches whatever a selector asks of it.
struct CaLabels {
  std::map<std::string, std::string> labels;
  bool any_instance = false;
  std::string describe() const {
    std::string out;
    for (const auto& [k, v] : labels) out += (out.empty() ? "" : ", ") + k + ": " + v;
    return out;
  }
};

std::string string_of(const json::value& v) {
  return v.is_string() ? std::string(v.get_string()) : std::string();
}

bool matches(const json::object& selector, const CaLabels& ca) {
  if (const auto* ml = selector.if_contains("matchLabels"); ml != nullptr && ml->is_object()) {
    for (const auto& kv : ml->get_object()) {
      if (ca.any_instance && kv.key() == kInstanceKey) continue;
      auto it = ca.labels.find(std::string(kv.key()));
      if (it == ca.labels.end() || it->second != string_of(kv.value())) return false;
    }
  }
  if (const auto* me = selector.if_contains("matchExpressions"); me != nullptr && me->is_array()) {
    for (const auto& e : me->get_array()) {
      if (!e.is_object()) return false;
      const json::object& o = e.get_object();
      const std::string key = o.contains("key") ? string_of(o.at("key")) : "";
      const std::string op = o.contains("operator") ? string_of(o.at("operator")) : "";
      const bool unknown = ca.any_instance && key == kInstanceKey;
      auto it = ca.labels.find(key);
      const bool has = unknown || it != ca.labels.end();
      bool in = unknown;
      if (!unknown && has) {
        if (const auto* values = o.if_contains("values"); values != nullptr && values->is_array()) {
          for (const auto& v : values->get_array()) in = in || string_of(v) == it->second;
        }
      }
      if (op == "In" && !in) return false;
      if (op == "NotIn" && has && in && !unknown) return false;
      if (op == "Exists" && !has) return false;
      if (op == "DoesNotExist" && has) return false;
    }
  }
  return true;
}

std::string selector_text(const json::object& selector) {
  return json::serialize(selector);
}

// The label CA's example manifests set and the Helm chart never does: a policy admitting it
// looks right and still blocks the chart's pods.
const CaLabels& manifest_labels() {
  static const CaLabels labels{{{"app", "cluster-autoscaler"}}, false};
  return labels;
}

}  // namespace

std::string ca_chart_name(std::string_view cloud_provider) {
  // printf "%s-%s" .Values.cloudProvider .Chart.Name | trunc 63 | trimSuffix "-"
  std::string name = std::string(cloud_provider) + "-cluster-autoscaler";
  if (name.size() > 63) name.resize(63);
  if (!name.empty() && name.back() == '-') name.pop_back();
  return name;
}

std::vector<Finding> check_network_policy(std::string_view text, const std::string& source,
                                          const CaPodLabels& ca) {
  std::vector<Finding> out;
  auto add = [&](Severity s, std::string field, std::string message, std::string why = {},
                 std::string fix = {}) {
    out.push_back(Finding{s, "network-policy-ca-labels", ConfigRole::kClusterAutoscaler, source,
                          std::move(field), std::move(message), std::move(why), std::move(fix)});
  };
  auto converted = model::yaml_to_json(text);
  boost::system::error_code ec;
  json::value doc = converted ? json::parse(*converted, ec) : json::value();
  if (!converted || ec || !doc.is_object()) {
    add(Severity::kError, "", "not a NetworkPolicy object");
    return out;
  }
  const bool chart = ca.labels.empty();
  const CaLabels wanted =
      chart ? CaLabels{{{"app.kubernetes.io/name", ca_chart_name(ca.cloud_provider)}}, true}
            : CaLabels{ca.labels, false};
  const std::string whose = chart ? "the CA Helm chart's pods for cloudProvider " +
                                        ca.cloud_provider + " (" + wanted.describe() + ")"
                                  : "Cluster Autoscaler's pods (" + wanted.describe() + ")";
  std::vector<std::string> seen;
  std::string manifest_only;  // a peer admitting app: cluster-autoscaler alone
  const json::value* ingress = nullptr;
  if (const auto* spec = doc.get_object().if_contains("spec"); spec && spec->is_object()) {
    ingress = spec->get_object().if_contains("ingress");
  }
  if (ingress != nullptr && ingress->is_array()) {
    const json::array& rules = ingress->get_array();
    for (size_t i = 0; i < rules.size(); ++i) {
      if (!rules[i].is_object()) continue;
      const auto* from = rules[i].get_object().if_contains("from");
      if (from == nullptr || !from->is_array()) continue;
      const json::array& peers = from->get_array();
      for (size_t j = 0; j < peers.size(); ++j) {
        if (!peers[j].is_object()) continue;
        const auto* sel = peers[j].get_object().if_contains("podSelector");
        if (sel == nullptr || !sel->is_object()) continue;
        const std::string field =
            "spec.ingress[" + std::to_string(i) + "].from[" + std::to_string(j) + "].podSelector";
        if (matches(sel->get_object(), wanted)) {
          add(Severity::kInfo, field, "admits " + whose);
          return out;
        }
        if (chart && manifest_only.empty() && matches(sel->get_object(), manifest_labels())) {
          manifest_only = field;
        }
        seen.push_back(field + " " + selector_text(sel->get_object()));
      }
    }
  }
  if (seen.empty()) {
    add(Severity::kInfo, "spec.ingress", "no ingress rule selects pods by label; nothing to check");
    return out;
  }
  std::string message = "no ingress rule admits " + whose;
  if (!manifest_only.empty()) {
    message += "; " + manifest_only +
               " admits app: cluster-autoscaler, which CA's example manifests set and the Helm "
               "chart never does";
  }
  message += "; selectors found: ";
  for (size_t k = 0; k < seen.size(); ++k) message += (k ? "; " : "") + seen[k];
  add(Severity::kError, seen.front().substr(0, seen.front().find(' ')), std::move(message),
      "Cluster Autoscaler's calls to the extender are dropped: with ignorable: false every "
      "scale-up evaluation of a device pod fails, with ignorable: true devices are not checked.",
      chart ? "admit app.kubernetes.io/name: " + wanted.labels.begin()->second +
                  " (--ca-cloud-provider is the chart's cloudProvider; with a nameOverride or "
                  "CA's example manifests, give the pods' labels with --ca-pod-labels)"
            : "admit the labels given with --ca-pod-labels");
  return out;
}

}  // namespace hamisim::doctor
