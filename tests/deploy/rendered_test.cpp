// What people install: each kustomize overlay of deploy/overlays rendered by `kubectl kustomize`
// (skipped, with the reason, where kubectl is not installed), and the Helm values files of
// deploy/helm. The rendered objects must hang together (selectors, ports, probes, volumes,
// images, bindings, webhook), roll without downtime, and pass only flags the built `hamisim`
// knows; the values must mount what CA's scheduler configuration names and swap nothing in
// HAMi's chart but the extender image.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "../cli/run_process.h"
#include "extender/scheduler_config.h"
#include "http_test_client.h"
#include "test_certs.h"
#include "test_paths.h"

namespace hamisim {
namespace rendered_test {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;
using Labels = std::map<std::string, std::string>;

const fs::path kDeploy = fs::path(hamisim::testing::source_dir()) / "deploy";

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// kubectl on PATH (or $HAMISIM_KUBECTL), as an absolute path; empty when there is none.
std::string kubectl_path() {
  if (const char* env = std::getenv("HAMISIM_KUBECTL"); env && *env) return env;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / "kubectl";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

// Why kubectl cannot render the overlays here, or empty when it can: it must exist and bundle
// kustomize >= 3.7 (kind: Component). kubectl before 1.24 (Debian 12's kubernetes-client is
// 1.20, kustomize v2) reports no kustomizeVersion and cannot.
std::string kubectl_unusable() {
  static const std::string reason = []() -> std::string {
    const std::string kubectl = kubectl_path();
    if (kubectl.empty()) return "kubectl is not installed (nor HAMISIM_KUBECTL set)";
    const auto p = testing::run_process({kubectl, "version", "--client", "-o", "json"},
                                        std::chrono::seconds(30));
    std::smatch m;
    const std::regex version(R"("kustomizeVersion":\s*"v?(\d+)\.(\d+))");
    if (p.exit_code != 0 || !std::regex_search(p.out, m, version)) {
      return kubectl +
             " reports no kustomize version (kubectl < 1.24 bundles kustomize < 3.7, "
             "without components)";
    }
    const int major = std::stoi(m[1].str());
    const int minor = std::stoi(m[2].str());
    if (major < 3 || (major == 3 && minor < 7)) {
      return kubectl + " bundles kustomize " + m[1].str() + "." + m[2].str() +
             ", older than 3.7 (no components)";
    }
    return "";
  }();
  return reason;
}

std::vector<std::string> overlay_names() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kDeploy / "overlays")) {
    if (e.is_directory() && fs::exists(e.path() / "kustomization.yaml")) {
      out.push_back(e.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Doc {
  YAML::Node node;
  std::string kind, name, ns;
};

struct Rendered {
  std::string error;  // kubectl's complaint, when it failed
  std::vector<Doc> docs;

  std::vector<const Doc*> of_kind(const std::string& kind) const {
    std::vector<const Doc*> out;
    for (const auto& d : docs) {
      if (d.kind == kind) out.push_back(&d);
    }
    return out;
  }
  const Doc* get(const std::string& kind, const std::string& ns, const std::string& name) const {
    for (const auto& d : docs) {
      if (d.kind == kind && d.ns == ns && d.name == name) return &d;
    }
    return nullptr;
  }
};

// `kubectl kustomize deploy/overlays/<overlay>`, once per overlay.
const Rendered& render(const std::string& overlay) {
  static std::map<std::string, Rendered> cache;
  auto it = cache.find(overlay);
  if (it != cache.end()) return it->second;
  Rendered r;
  const auto p =
      testing::run_process({kubectl_path(), "kustomize", (kDeploy / "overlays" / overlay).string()},
                           std::chrono::seconds(60));
  if (p.exit_code != 0) {
    r.error = testing::describe(p);
  } else {
    try {
      for (const auto& n : YAML::LoadAll(p.out)) {
        if (n.IsNull()) continue;
        r.docs.push_back({n, n["kind"].as<std::string>(""),
                          n["metadata"]["name"].as<std::string>(""),
                          n["metadata"]["namespace"].as<std::string>("")});
      }
    } catch (const YAML::Exception& e) {
      r.error = std::string("the rendered YAML does not parse: ") + e.what();
    }
  }
  return cache.emplace(overlay, std::move(r)).first->second;
}

Labels labels_of(const YAML::Node& n) {
  Labels out;
  for (const auto& kv : n) out[kv.first.as<std::string>()] = kv.second.as<std::string>();
  return out;
}

// A LabelSelector (matchLabels and matchExpressions); an empty selector selects everything.
bool selects(const YAML::Node& selector, const Labels& labels) {
  for (const auto& kv : selector["matchLabels"]) {
    auto it = labels.find(kv.first.as<std::string>());
    if (it == labels.end() || it->second != kv.second.as<std::string>()) return false;
  }
  for (const auto& e : selector["matchExpressions"]) {
    std::set<std::string> values;
    for (const auto& v : e["values"]) values.insert(v.as<std::string>());
    auto it = labels.find(e["key"].as<std::string>());
    const bool has = it != labels.end();
    const std::string op = e["operator"].as<std::string>();
    if (op == "In" && !(has && values.count(it->second))) return false;
    if (op == "NotIn" && has && values.count(it->second)) return false;
    if (op == "Exists" && !has) return false;
    if (op == "DoesNotExist" && has) return false;
  }
  return true;
}

// A Service's selector is a plain map.
bool selects_map(const YAML::Node& selector, const Labels& labels) {
  if (!selector.IsMap() || selector.size() == 0) return false;
  for (const auto& kv : selector) {
    auto it = labels.find(kv.first.as<std::string>());
    if (it == labels.end() || it->second != kv.second.as<std::string>()) return false;
  }
  return true;
}

Labels pod_labels(const Doc& deployment) {
  return labels_of(deployment.node["spec"]["template"]["metadata"]["labels"]);
}

bool is_hamisim(const YAML::Node& container) {
  return container["image"].as<std::string>("").find("/hamisim:") != std::string::npos;
}

// Does a container port match a probe's or Service's port (a name or a number)?
bool has_port(const YAML::Node& container, const YAML::Node& port) {
  const std::string want = port.as<std::string>();
  for (const auto& p : container["ports"]) {
    if (p["name"].as<std::string>("") == want || p["containerPort"].as<std::string>() == want) {
      return true;
    }
  }
  return false;
}

// The option names and the allowed values (CLI11's "{a,b}") a `--help` text lists.
struct HelpFlags {
  std::set<std::string> names;
  std::map<std::string, std::set<std::string>> choices;
};

HelpFlags parse_help(const std::string& text) {
  HelpFlags out;
  std::stringstream lines(text);
  std::string line;
  const std::regex choice(R"(\{([^}]*)\})");
  // HAMi's flag names, which `hamisim scheduler --help` and `serve --help` list in one closing
  // sentence ("HAMi's scheduler flags are accepted too ...: --http_bind, ..., -v, ...").
  const std::regex listed(R"((?:^|[\s,:])(--?[A-Za-z][A-Za-z0-9_-]*))");
  while (std::getline(lines, line)) {
    if (line.find("flags are accepted too") != std::string::npos) {
      const std::string names = line.substr(line.find(':') + 1);
      for (auto it = std::sregex_iterator(names.begin(), names.end(), listed);
           it != std::sregex_iterator(); ++it) {
        out.names.insert((*it)[1].str());
      }
      continue;
    }
    size_t i = line.find_first_not_of(' ');
    if (i == std::string::npos || i == 0 || line[i] != '-') continue;
    // "  -v,--v INT", "  --listen TEXT=...", "      --http_bind string": leading dash words.
    std::vector<std::string> here;
    std::string word;
    std::stringstream words(line.substr(i));
    while (words >> word && word[0] == '-') {
      std::stringstream parts(word);
      std::string part;
      while (std::getline(parts, part, ',')) {
        if (part.empty()) continue;
        part = part.substr(0, part.find('='));
        here.push_back(part);
        out.names.insert(part);
      }
      if (word.back() != ',') break;
    }
    std::smatch m;
    if (!here.empty() && std::regex_search(line, m, choice)) {
      std::stringstream vals(m[1].str());
      std::string v;
      while (std::getline(vals, v, ',')) {
        for (const auto& n : here) out.choices[n].insert(v);
      }
    }
  }
  return out;
}

const HelpFlags& serve_help() {
  static const HelpFlags flags = [] {
    const auto p = testing::run_process({hamisim::testing::hamisim_bin(), "serve", "--help"});
    EXPECT_EQ(p.exit_code, 0) << testing::describe(p);
    return parse_help(p.out);
  }();
  return flags;
}

// The image the overlays deploy: the manifests' image name with the overlay's newTag.
std::string overlay_image(const std::string& overlay) {
  const YAML::Node k =
      YAML::LoadFile((kDeploy / "overlays" / overlay / "kustomization.yaml").string());
  for (const auto& i : k["images"]) {
    if (i["name"].as<std::string>() == "ghcr.io/hamisim/hamisim") {
      return i["newName"].as<std::string>("ghcr.io/hamisim/hamisim") + ":" +
             i["newTag"].as<std::string>();
    }
  }
  return "";
}

TEST(Overlays, ThereAreSimulationLiveAndAll) {
  EXPECT_THAT(overlay_names(), ::testing::IsSupersetOf({"all", "live", "simulation"}));
}

class Overlay : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (const std::string why = kubectl_unusable(); !why.empty()) {
      GTEST_SKIP() << why << ": `kubectl kustomize` cannot render deploy/overlays/" << GetParam();
    }
    r_ = &render(GetParam());
    ASSERT_TRUE(r_->error.empty())
        << "kubectl kustomize deploy/overlays/" << GetParam() << ": " << r_->error;
    ASSERT_FALSE(r_->docs.empty());
  }
  const Rendered& r() const { return *r_; }
  const Rendered* r_ = nullptr;
};

const std::set<std::string> kClusterScoped = {"Namespace",
                                              "ClusterRole",
                                              "ClusterRoleBinding",
                                              "ClusterIssuer",
                                              "MutatingWebhookConfiguration",
                                              "PriorityClass"};

TEST_P(Overlay, RendersNamedObjectsInNamespacesItCreatesOrTheSystemOnes) {
  std::set<std::string> namespaces = {"kube-system", "cert-manager"};
  for (const auto* n : r().of_kind("Namespace")) namespaces.insert(n->name);
  EXPECT_THAT(namespaces, Contains("hamisim"));
  for (const auto& d : r().docs) {
    SCOPED_TRACE(d.kind + " " + d.name);
    EXPECT_FALSE(d.node["apiVersion"].as<std::string>("").empty());
    EXPECT_FALSE(d.kind.empty());
    EXPECT_FALSE(d.name.empty());
    if (kClusterScoped.count(d.kind)) {
      EXPECT_TRUE(d.ns.empty());
    } else {
      EXPECT_THAT(namespaces, Contains(d.ns));
    }
  }
  EXPECT_FALSE(r().of_kind("Deployment").empty());
}

TEST_P(Overlay, DeploymentsSelectTheirPodsProbeTheirPortsAndRollWithoutDowntime) {
  for (const Doc* d : r().of_kind("Deployment")) {
    SCOPED_TRACE(d->name);
    const YAML::Node spec = d->node["spec"];
    EXPECT_TRUE(selects(spec["selector"], pod_labels(*d)));
    EXPECT_FALSE(spec["selector"]["matchLabels"].size() == 0) << "an empty selector";
    // A new pod is Ready before an old one goes: maxUnavailable 0, maxSurge >= 1.
    EXPECT_EQ(spec["strategy"]["type"].as<std::string>(""), "RollingUpdate");
    EXPECT_EQ(spec["strategy"]["rollingUpdate"]["maxUnavailable"].as<int>(-1), 0);
    EXPECT_GE(spec["strategy"]["rollingUpdate"]["maxSurge"].as<int>(0), 1);
    const YAML::Node pod = spec["template"]["spec"];
    EXPECT_TRUE(r().get("ServiceAccount", d->ns, pod["serviceAccountName"].as<std::string>("")))
        << pod["serviceAccountName"];
    for (const auto& c : pod["containers"]) {
      SCOPED_TRACE(c["name"].as<std::string>());
      for (const char* probe : {"startupProbe", "livenessProbe", "readinessProbe"}) {
        if (!c[probe]) continue;
        EXPECT_TRUE(has_port(c, c[probe]["httpGet"]["port"]))
            << probe << " port " << c[probe]["httpGet"]["port"] << " is no port of the container";
      }
      EXPECT_TRUE(c["readinessProbe"]) << "without a readiness probe a rollout cannot wait";
      if (is_hamisim(c)) {
        EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"].as<std::string>(""), "/readyz");
        EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"].as<std::string>(""), "/healthz");
      }
    }
  }
}

TEST_P(Overlay, ServicesBudgetsPoliciesAndMonitorsSelectRenderedPodsAndPorts) {
  const auto deployments = r().of_kind("Deployment");
  for (const Doc* s : r().of_kind("Service")) {
    SCOPED_TRACE("Service " + s->name);
    std::vector<const Doc*> selected;
    for (const Doc* d : deployments) {
      if (d->ns == s->ns && selects_map(s->node["spec"]["selector"], pod_labels(*d)))
        selected.push_back(d);
    }
    ASSERT_FALSE(selected.empty()) << "selects no pod";
    for (const auto& port : s->node["spec"]["ports"]) {
      const YAML::Node target = port["targetPort"] ? port["targetPort"] : port["port"];
      bool found = false;
      for (const Doc* d : selected) {
        for (const auto& c : d->node["spec"]["template"]["spec"]["containers"])
          found |= has_port(c, target);
      }
      EXPECT_TRUE(found) << "targetPort " << target << " is on no selected container";
    }
  }
  for (const char* kind : {"PodDisruptionBudget", "NetworkPolicy"}) {
    for (const Doc* p : r().of_kind(kind)) {
      SCOPED_TRACE(std::string(kind) + " " + p->name);
      const YAML::Node selector = std::string(kind) == "NetworkPolicy"
                                      ? p->node["spec"]["podSelector"]
                                      : p->node["spec"]["selector"];
      bool any = false;
      for (const Doc* d : deployments) any |= d->ns == p->ns && selects(selector, pod_labels(*d));
      EXPECT_TRUE(any) << "selects no pod";
    }
  }
  for (const Doc* m : r().of_kind("ServiceMonitor")) {
    SCOPED_TRACE("ServiceMonitor " + m->name);
    std::set<std::string> in;
    for (const auto& n : m->node["spec"]["namespaceSelector"]["matchNames"])
      in.insert(n.as<std::string>());
    if (in.empty()) in.insert(m->ns);
    int services = 0;
    for (const Doc* s : r().of_kind("Service")) {
      if (!in.count(s->ns) ||
          !selects(m->node["spec"]["selector"], labels_of(s->node["metadata"]["labels"])))
        continue;
      ++services;
      std::set<std::string> names;
      for (const auto& p : s->node["spec"]["ports"]) names.insert(p["name"].as<std::string>(""));
      for (const auto& e : m->node["spec"]["endpoints"])
        EXPECT_THAT(names, Contains(e["port"].as<std::string>())) << "Service " << s->name;
    }
    EXPECT_GE(services, 1) << "selects no Service";
  }
}

TEST_P(Overlay, VolumesNameRenderedConfigMapsAndIssuedSecrets) {
  for (const Doc* d : r().of_kind("Deployment")) {
    SCOPED_TRACE(d->name);
    const YAML::Node pod = d->node["spec"]["template"]["spec"];
    std::set<std::string> volumes;
    for (const auto& v : pod["volumes"]) {
      volumes.insert(v["name"].as<std::string>());
      if (v["configMap"]) {
        EXPECT_TRUE(r().get("ConfigMap", d->ns, v["configMap"]["name"].as<std::string>()))
            << "ConfigMap " << v["configMap"]["name"];
      }
      if (v["secret"]) {
        const std::string secret = v["secret"]["secretName"].as<std::string>();
        bool issued = r().get("Secret", d->ns, secret) != nullptr;
        for (const Doc* c : r().of_kind("Certificate")) {
          issued |= c->ns == d->ns && c->node["spec"]["secretName"].as<std::string>() == secret;
        }
        EXPECT_TRUE(issued) << "nothing in the overlay makes Secret " << secret;
      }
    }
    for (const auto& c : pod["containers"]) {
      for (const auto& m : c["volumeMounts"])
        EXPECT_THAT(volumes, Contains(m["name"].as<std::string>()));
    }
  }
  for (const Doc* c : r().of_kind("Certificate")) {
    const YAML::Node ref = c->node["spec"]["issuerRef"];
    EXPECT_TRUE(ref["kind"].as<std::string>("") == "ClusterIssuer"
                    ? r().get("ClusterIssuer", "", ref["name"].as<std::string>()) != nullptr
                    : r().get("Issuer", c->ns, ref["name"].as<std::string>()) != nullptr)
        << "Certificate " << c->name << ": issuer " << ref["name"];
  }
}

TEST_P(Overlay, ImagesAreTaggedAndHamisimIsTheOverlaysImage) {
  const std::string want = overlay_image(GetParam());
  ASSERT_FALSE(want.empty()) << "the overlay sets no image for ghcr.io/hamisim/hamisim";
  int hamisim = 0;
  for (const Doc* d : r().of_kind("Deployment")) {
    for (const auto& c : d->node["spec"]["template"]["spec"]["containers"]) {
      const std::string image = c["image"].as<std::string>();
      const std::string last = image.substr(image.rfind('/') + 1);
      EXPECT_NE(last.find(':'), std::string::npos) << image << " has no tag";
      EXPECT_EQ(last.find(":latest"), std::string::npos) << image;
      if (is_hamisim(c)) {
        ++hamisim;
        EXPECT_EQ(image, want);
      }
    }
  }
  EXPECT_GE(hamisim, 1);
}

TEST_P(Overlay, HamisimContainersPassOnlyFlagsTheBuiltServeKnows) {
  const HelpFlags& help = serve_help();
  ASSERT_THAT(help.names, Contains("--listen")) << "could not read `hamisim serve --help`";
  for (const Doc* d : r().of_kind("Deployment")) {
    for (const auto& c : d->node["spec"]["template"]["spec"]["containers"]) {
      if (!is_hamisim(c)) continue;
      SCOPED_TRACE(d->name);
      EXPECT_FALSE(c["command"]) << "the image's entry point is hamisim";
      ASSERT_EQ(c["args"][0].as<std::string>(""), "serve");
      for (size_t i = 1; i < c["args"].size(); ++i) {
        const std::string arg = c["args"][i].as<std::string>();
        ASSERT_EQ(arg.rfind("--", 0), 0u) << arg << ": write flags as --name=value";
        const size_t eq = arg.find('=');
        const std::string name = arg.substr(0, eq);
        EXPECT_THAT(help.names, Contains(name)) << name << " is not a flag of `hamisim serve`";
        auto choices = help.choices.find(name);
        if (choices != help.choices.end() && eq != std::string::npos) {
          EXPECT_THAT(choices->second, Contains(arg.substr(eq + 1))) << arg;
        }
      }
    }
  }
}

// The rendered arguments, run: each hamisim container's `serve` starts with exactly its args,
// its ConfigMaps written where they are mounted and certificates from a test CA where its
// Secrets are, on ephemeral loopback ports, with the bundled live snapshot in place of the
// API server (--in-cluster), then answers kubelet's probes and stops cleanly on SIGTERM.
TEST_P(Overlay, HamisimContainersStartWithTheirRenderedArguments) {
  for (const Doc* d : r().of_kind("Deployment")) {
    const YAML::Node pod = d->node["spec"]["template"]["spec"];
    for (const auto& c : pod["containers"]) {
      if (!is_hamisim(c)) continue;
      SCOPED_TRACE(d->name);
      const fs::path dir = fs::temp_directory_path() /
                           ("hamisim-deploy-" + std::to_string(::getpid()) + "-" + d->name);
      fs::remove_all(dir);
      fs::create_directories(dir);
      testing::TestCa ca("hamisim-deploy-test-ca", dir);
      std::vector<std::pair<std::string, fs::path>> mounts;  // mountPath -> local directory
      for (const auto& m : c["volumeMounts"]) {
        const std::string vol = m["name"].as<std::string>();
        const fs::path local = dir / ("volume-" + vol);
        fs::create_directories(local);
        mounts.emplace_back(m["mountPath"].as<std::string>(), local);
        for (const auto& v : pod["volumes"]) {
          if (v["name"].as<std::string>() != vol) continue;
          if (v["configMap"]) {
            const Doc* cm = r().get("ConfigMap", d->ns, v["configMap"]["name"].as<std::string>());
            ASSERT_TRUE(cm);
            for (const auto& kv : cm->node["data"]) {
              std::ofstream(local / kv.first.as<std::string>()) << kv.second.as<std::string>();
            }
          }
          if (v["secret"]) {
            // What the overlay's Certificate for this Secret names (cert-manager writes
            // tls.crt, tls.key and ca.crt), issued by a test CA.
            testing::CertSpec spec{"hamisim", {}, {}, testing::CertUsage::kServer};
            for (const Doc* cert : r().of_kind("Certificate")) {
              if (cert->ns != d->ns || cert->node["spec"]["secretName"].as<std::string>() !=
                                           v["secret"]["secretName"].as<std::string>()) {
                continue;
              }
              spec.common_name = cert->node["spec"]["commonName"].as<std::string>("hamisim");
              for (const auto& n : cert->node["spec"]["dnsNames"])
                spec.dns_names.push_back(n.as<std::string>());
              for (const auto& n : cert->node["spec"]["ipAddresses"])
                spec.ip_addresses.push_back(n.as<std::string>());
            }
            ca.issue_to(spec, (local / "tls.crt").string(), (local / "tls.key").string());
            fs::copy_file(ca.ca_cert(), local / "ca.crt");
          }
        }
      }
      // The cluster: the bundled live snapshot, plus the Lease --leader-elect observes, held by
      // this host (kube-scheduler's identity starts with the hostname it shares with the pod).
      const fs::path snapshot = dir / "cluster";
      fs::create_directories(snapshot);
      fs::copy_file(fs::path(hamisim::testing::source_dir()) / "examples/live/cluster.yaml",
                    snapshot / "cluster.yaml");
      std::map<std::string, std::string> arg_values;
      for (const auto& a : c["args"]) {
        const std::string arg = a.as<std::string>();
        const size_t eq = arg.find('=');
        arg_values[arg.substr(0, eq)] = eq == std::string::npos ? "" : arg.substr(eq + 1);
      }
      if (arg_values.count("--leader-elect")) {
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        std::ofstream(snapshot / "lease.yaml")
            << "apiVersion: v1\nkind: List\nitems:\n"
            << "  - apiVersion: coordination.k8s.io/v1\n    kind: Lease\n    metadata:\n"
            << "      name: " << arg_values["--leader-elect-resource-name"] << "\n"
            << "      namespace: " << arg_values["--leader-elect-resource-namespace"] << "\n"
            << "    spec:\n      holderIdentity: " << host << "_kube-scheduler\n"
            << "      leaseDurationSeconds: 3600\n";
      }
      std::vector<std::string> argv = {hamisim::testing::hamisim_bin()};
      for (const auto& a : c["args"]) {
        std::string arg = a.as<std::string>();
        const size_t eq = arg.find('=');
        const std::string name = arg.substr(0, eq);
        if (name == "--listen" || name == "--metrics-listen") {
          arg = name + "=127.0.0.1:0";
        } else if (name == "--in-cluster") {
          arg = "--cluster-snapshot=" + snapshot.string();
        } else if (eq != std::string::npos) {
          for (const auto& [mount, local] : mounts) {
            if (arg.compare(eq + 1, mount.size() + 1, mount + "/") == 0) {
              arg = name + "=" + local.string() + arg.substr(eq + 1 + mount.size());
            }
          }
        }
        argv.push_back(arg);
      }
      std::vector<std::string> env;
      for (const auto& e : c["env"]) {
        const std::string field = e["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>("");
        env.push_back(e["name"].as<std::string>() + "=" +
                      (field == "metadata.name"        ? d->name + "-0"
                       : field == "metadata.namespace" ? d->ns
                                                       : e["value"].as<std::string>("")));
      }
      testing::BackgroundProcess serve(argv, env);
      ASSERT_TRUE(serve.started());
      ASSERT_TRUE(serve.wait_for_log("hamisim serve: listening")) << serve.log();
      std::smatch m;
      const std::string log = serve.log();
      // The start-up line's metricsPort field, in the text (metricsPort=N) or JSON
      // ("metricsPort":N) log format.
      ASSERT_TRUE(std::regex_search(log, m, std::regex(R"(metricsPort"?[=:](\d+))"))) << log;
      testing::ClientOptions metrics;
      metrics.port = static_cast<uint16_t>(std::stoi(m[1]));
      // and its port field (the extender listener).
      ASSERT_TRUE(std::regex_search(log, m, std::regex(R"([ ,"]port"?[=:](\d+))"))) << log;
      auto healthz = testing::http_request(metrics, "GET", "/healthz");
      ASSERT_TRUE(healthz) << healthz.error().message;
      EXPECT_EQ(healthz->status, 200) << healthz->body;

      // kube-scheduler in the same pod, as its rendered configuration says: the extender's
      // urlPrefix host, TLS verified with the CA file it mounts, /filter over loopback.
      const YAML::Node ks = [&]() -> YAML::Node {
        for (const auto& k : pod["containers"]) {
          if (k["name"].as<std::string>() == "kube-scheduler") return k;
        }
        return YAML::Node();
      }();
      if (ks.IsMap()) {
        std::string config_file;
        for (const auto& a : ks["command"]) {
          const std::string arg = a.as<std::string>();
          if (arg.rfind("--config=", 0) == 0) config_file = arg.substr(9);
        }
        std::string config_text;
        for (const auto& mnt : ks["volumeMounts"]) {
          const std::string path = mnt["mountPath"].as<std::string>() + "/";
          if (config_file.rfind(path, 0) != 0) continue;
          for (const auto& v : pod["volumes"]) {
            if (v["name"].as<std::string>() != mnt["name"].as<std::string>() || !v["configMap"])
              continue;
            const Doc* cm = r().get("ConfigMap", d->ns, v["configMap"]["name"].as<std::string>());
            ASSERT_TRUE(cm);
            config_text = cm->node["data"][config_file.substr(path.size())].as<std::string>("");
          }
        }
        extender::LoadOptions lo;
        lo.require_single_profile = false;
        auto config = extender::parse_scheduler_config(config_text, config_file, lo);
        ASSERT_TRUE(config) << config.error().message;
        const auto& e = config->extenders.at(0);
        testing::ClientOptions scheduler;
        scheduler.port = static_cast<uint16_t>(std::stoi(m[1]));
        scheduler.tls = e.url_prefix.rfind("https://", 0) == 0;
        if (scheduler.tls) {
          ASSERT_TRUE(e.tls_config);
          // The CA file kube-scheduler mounts from the same Secret as the sidecar's certificate.
          for (const auto& [mount, local] : mounts) {
            if (e.tls_config->ca_file.rfind(mount + "/", 0) == 0)
              scheduler.ca_file = (local / e.tls_config->ca_file.substr(mount.size() + 1)).string();
          }
          ASSERT_FALSE(scheduler.ca_file.empty()) << e.tls_config->ca_file;
          const size_t host_start = e.url_prefix.find("://") + 3;
          scheduler.verify_name =
              e.url_prefix.substr(host_start, e.url_prefix.rfind(':') - host_start);
        }
        const std::string args =
            read(fs::path(hamisim::testing::source_dir()) / "examples/live/filter-1.json");
        auto filter = testing::http_request(scheduler, "POST", "/" + e.filter_verb, args,
                                            {{"Content-Type", "application/json"}});
        // Until the first registration pass as leader, /filter answers "not ready" (30 s).
        for (int i = 0; i < 600 && filter && filter->body.find("not ready") != std::string::npos;
             ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          filter = testing::http_request(scheduler, "POST", "/" + e.filter_verb, args,
                                         {{"Content-Type", "application/json"}});
        }
        ASSERT_TRUE(filter) << filter.error().message;
        EXPECT_EQ(filter->status, 200) << filter->body;
        EXPECT_THAT(filter->body, HasSubstr("\"NodeNames\":[\"gpu-node-1\"]")) << serve.log();
      }
      EXPECT_EQ(serve.stop(), 0) << serve.log();
      fs::remove_all(dir);
    }
  }
}

TEST_P(Overlay, WebhookAndBindingsPointAtRenderedObjects) {
  for (const Doc* w : r().of_kind("MutatingWebhookConfiguration")) {
    for (const auto& hook : w->node["webhooks"]) {
      const YAML::Node svc = hook["clientConfig"]["service"];
      const Doc* s =
          r().get("Service", svc["namespace"].as<std::string>(), svc["name"].as<std::string>());
      ASSERT_TRUE(s) << "webhook Service " << svc["name"];
      bool port = false;
      for (const auto& p : s->node["spec"]["ports"])
        port |= p["port"].as<int>() == svc["port"].as<int>(443);
      EXPECT_TRUE(port);
    }
    const std::string inject =
        w->node["metadata"]["annotations"]["cert-manager.io/inject-ca-from"].as<std::string>("");
    if (!inject.empty()) {
      const size_t slash = inject.find('/');
      EXPECT_TRUE(r().get("Certificate", inject.substr(0, slash), inject.substr(slash + 1)))
          << inject;
    }
  }
  const std::set<std::string> builtin = {"system:kube-scheduler", "system:volume-scheduler",
                                         "extension-apiserver-authentication-reader"};
  for (const char* kind : {"RoleBinding", "ClusterRoleBinding"}) {
    for (const Doc* b : r().of_kind(kind)) {
      const std::string role = b->node["roleRef"]["name"].as<std::string>();
      const bool exists = b->node["roleRef"]["kind"].as<std::string>() == "ClusterRole"
                              ? r().get("ClusterRole", "", role) != nullptr
                              : r().get("Role", b->ns, role) != nullptr;
      EXPECT_TRUE(exists || builtin.count(role)) << b->name << " -> " << role;
      for (const auto& s : b->node["subjects"]) {
        EXPECT_TRUE(r().get("ServiceAccount", s["namespace"].as<std::string>(""),
                            s["name"].as<std::string>()))
            << b->name << " -> " << s["name"];
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Deploy, Overlay, ::testing::ValuesIn(overlay_names()),
                         [](const auto& info) { return info.param; });

// ---- Helm values --------------------------------------------------------------------------

// HAMi's chart: only scheduler.extender.image changes, to the image the overlays deploy.
TEST(HelmValues, HamiValuesSwapOnlyTheExtenderImage) {
  const YAML::Node v = YAML::LoadFile((kDeploy / "helm/hami-values.yaml").string());
  ASSERT_TRUE(v.IsMap());
  ASSERT_EQ(v.size(), 1u) << "only `scheduler` may be set";
  ASSERT_EQ(v["scheduler"].size(), 1u) << "only `scheduler.extender` may be set";
  ASSERT_EQ(v["scheduler"]["extender"].size(), 1u) << "only `scheduler.extender.image`";
  const YAML::Node image = v["scheduler"]["extender"]["image"];
  std::set<std::string> keys;
  for (const auto& kv : image) keys.insert(kv.first.as<std::string>());
  EXPECT_EQ(keys, (std::set<std::string>{"registry", "repository", "tag"}));
  const std::string ref = image["registry"].as<std::string>() + "/" +
                          image["repository"].as<std::string>() + ":" +
                          image["tag"].as<std::string>();
  for (const auto& overlay : overlay_names()) EXPECT_EQ(ref, overlay_image(overlay)) << overlay;
}

// `hamisim scheduler --help`'s flag names, or why there are none: without the entry point,
// CLI11 prints the top-level help ("Usage: .../hamisim [OPTIONS] [SUBCOMMAND]"), whose usage
// line does not name `scheduler`.
std::optional<HelpFlags> scheduler_help(std::string* why) {
  const auto p = testing::run_process({hamisim::testing::hamisim_bin(), "scheduler", "--help"});
  const std::string text = p.out + p.err;
  const size_t usage = text.find("Usage:");
  const std::string usage_line =
      usage == std::string::npos ? "" : text.substr(usage, text.find('\n', usage) - usage);
  if (p.exit_code != 0 || usage_line.find("scheduler") == std::string::npos) {
    *why = "this build has no HAMi `scheduler` entry point (`hamisim scheduler --help` exits " +
           std::to_string(p.exit_code) + ", usage line: " + usage_line + ")";
    return std::nullopt;
  }
  return parse_help(text);
}

void expect_flags(const HelpFlags& help, std::initializer_list<const char*> args) {
  for (const char* arg : args) {
    const std::string s = arg;
    EXPECT_THAT(help.names, Contains(s.substr(0, s.find('='))))
        << arg << " (HAMi's chart passes it) is not a flag of `hamisim scheduler`";
  }
}

// The arguments HAMi's chart renders with its default values (reference hami-dropin.md §2.7:
// webhook on, leader election, extraArgs --debug -v=4) are flags of the image's `scheduler`.
TEST(HelmValues, HamiChartDefaultArgumentsAreFlagsOfTheSchedulerEntryPoint) {
  std::string why;
  const auto help = scheduler_help(&why);
  if (!help) GTEST_SKIP() << why;
  expect_flags(*help, {"--http_bind=0.0.0.0:443", "--cert_file=/tls/tls.crt",
                       "--key_file=/tls/tls.key", "--scheduler-name=hami-scheduler",
                       "--metrics-bind-address=:9395", "--node-scheduler-policy=binpack",
                       "--gpu-scheduler-policy=spread", "--force-overwrite-default-scheduler=true",
                       "--device-config-file=/device-config.yaml", "--leader-elect=true",
                       "--leader-elect-resource-name=hami-scheduler",
                       "--leader-elect-resource-namespace=kube-system", "--debug", "-v=4"});
}

// And the ones its other values add (§2.7 "Conditional arguments").
TEST(HelmValues, HamiChartConditionalArgumentsAreFlagsOfTheSchedulerEntryPoint) {
  std::string why;
  const auto help = scheduler_help(&why);
  if (!help) GTEST_SKIP() << why;
  expect_flags(*help, {"--http_bind=0.0.0.0:80", "--enable-ascend=true", "--enable-iluvatar=true",
                       "--node-label-selector=gpu=on", "--legacy-metrics=true"});
}

// CA's chart: the values mount the ConfigMap and the client Secret exactly where CA's
// scheduler configuration (deploy/cluster-autoscaler/scheduler-config.yaml) looks for them.
TEST(HelmValues, ClusterAutoscalerValuesMountWhatTheSchedulerConfigNames) {
  const YAML::Node v = YAML::LoadFile((kDeploy / "helm/cluster-autoscaler-values.yaml").string());
  const YAML::Node cm =
      YAML::LoadFile((kDeploy / "cluster-autoscaler/scheduler-config.yaml").string());
  auto config = extender::parse_scheduler_config(
      cm["data"]["scheduler-config.yaml"].as<std::string>(), "scheduler-config.yaml");
  ASSERT_TRUE(config) << config.error().message;
  ASSERT_EQ(config->extenders.size(), 1u);
  const auto& tls = config->extenders[0].tls_config;
  ASSERT_TRUE(tls);

  // --scheduler-config-file names the key of the mounted ConfigMap.
  const std::string file = v["extraArgs"]["scheduler-config-file"].as<std::string>("");
  ASSERT_FALSE(file.empty());
  std::map<std::string, std::string> mount_of;  // volume -> mountPath
  for (const auto& m : v["extraVolumeMounts"]) {
    mount_of[m["name"].as<std::string>()] = m["mountPath"].as<std::string>();
    EXPECT_TRUE(m["readOnly"].as<bool>(false));
  }
  bool config_mounted = false;
  for (const auto& vol : v["extraVolumes"]) {
    if (!vol["configMap"]) continue;
    const std::string name = vol["name"].as<std::string>();
    ASSERT_TRUE(mount_of.count(name)) << name << " is not mounted";
    config_mounted |=
        vol["configMap"]["name"].as<std::string>() == cm["metadata"]["name"].as<std::string>() &&
        file == mount_of[name] + "/scheduler-config.yaml";
  }
  EXPECT_TRUE(config_mounted) << file;
  EXPECT_EQ(cm["metadata"]["namespace"].as<std::string>(), "kube-system");

  // The client Secret (tls.crt, tls.key, ca.crt) is mounted where tlsConfig names its files,
  // and it is the Secret cert-manager and generate.sh make for CA.
  ASSERT_EQ(v["extraVolumeSecrets"].size(), 1u);
  const YAML::Node secret = v["extraVolumeSecrets"].begin()->second;
  const std::string dir = secret["mountPath"].as<std::string>();
  EXPECT_EQ(tls->cert_file, dir + "/tls.crt");
  EXPECT_EQ(tls->key_file, dir + "/tls.key");
  EXPECT_EQ(tls->ca_file, dir + "/ca.crt");
  bool issued = false;
  for (const auto& c :
       YAML::LoadAll(read(kDeploy / "tls/cert-manager/simulation/certificates.yaml"))) {
    issued |= c["metadata"]["namespace"].as<std::string>("") == "kube-system" &&
              c["spec"]["secretName"].as<std::string>("") == secret["name"].as<std::string>();
  }
  EXPECT_TRUE(issued) << secret["name"];
  EXPECT_THAT(read(kDeploy / "tls/secret/generate.sh"),
              HasSubstr("kube-system " + secret["name"].as<std::string>()));

  // The chart's pods (app.kubernetes.io/name: <cloudProvider>-cluster-autoscaler, unless
  // nameOverride) are what the simulation NetworkPolicy admits.
  const std::string provider = v["cloudProvider"].as<std::string>("aws");
  const std::string name = v["nameOverride"].as<std::string>("").empty()
                               ? provider + "-cluster-autoscaler"
                               : v["nameOverride"].as<std::string>();
  const YAML::Node np = YAML::LoadFile((kDeploy / "simulation/networkpolicy.yaml").string());
  bool admitted = false;
  for (const auto& peer : np["spec"]["ingress"][0]["from"]) {
    admitted |=
        selects(peer["podSelector"], {{"app.kubernetes.io/name", name},
                                      {"app.kubernetes.io/instance", "cluster-autoscaler"}}) &&
        selects(peer["namespaceSelector"], {{"kubernetes.io/metadata.name", "kube-system"}});
  }
  EXPECT_TRUE(admitted) << name;
}

}  // namespace rendered_test
}  // namespace hamisim
