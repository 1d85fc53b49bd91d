// Every manifest in deploy/: well-formed YAML, the fields Kubernetes requires, and names that
// agree across files (selectors, ServiceAccounts, ConfigMaps, Secrets, mounts, ports, flags).
// The scheduler configurations shipped there must pass `hamisim doctor --offline`.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "device/catalog/device_config.h"
#include "doctor/doctor.h"
#include "extender/extender_url.h"
#include "extender/scheduler_config.h"
#include "model/decode.h"
#include "profile/device_profiles.h"
#include "test_paths.h"

namespace hamisim {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;

const fs::path kDeploy = fs::path(hamisim::testing::source_dir()) / "deploy";
const char* kPatchFile = "cluster-autoscaler-patch.yaml";

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Object {
  std::string file;
  YAML::Node node;
  std::string kind, name, ns;
};

// The Kubernetes objects under deploy/: every .yaml file but kustomize's own files, the JSON
// patch for a CA Deployment of one's own, and the Helm values files (deploy/helm/).
std::vector<fs::path> manifest_files() {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(kDeploy)) {
    const auto rel = fs::relative(e.path(), kDeploy);
    if (e.is_regular_file() && e.path().extension() == ".yaml" &&
        e.path().filename() != kPatchFile && e.path().filename() != "kustomization.yaml" &&
        *rel.begin() != "helm") {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

const std::set<std::string> kClusterScoped = {"Namespace",
                                              "ClusterRole",
                                              "ClusterRoleBinding",
                                              "ClusterIssuer",
                                              "MutatingWebhookConfiguration",
                                              "PriorityClass"};

class Manifests : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    objects_ = new std::vector<Object>();
    for (const auto& path : manifest_files()) {
      const std::string rel = fs::relative(path, kDeploy).string();
      std::vector<YAML::Node> docs;
      try {
        docs = YAML::LoadAll(read(path));
      } catch (const YAML::Exception& e) {
        ADD_FAILURE() << rel << ": " << e.what();
        continue;
      }
      for (const auto& d : docs) {
        if (d.IsNull()) continue;
        Object o;
        o.file = rel;
        o.node = d;
        if (d.IsMap()) {
          o.kind = d["kind"].as<std::string>("");
          o.name = d["metadata"]["name"].as<std::string>("");
          o.ns = d["metadata"]["namespace"].as<std::string>("");
        }
        objects_->push_back(o);
      }
    }
  }
  static void TearDownTestSuite() { delete objects_; }

  static const std::vector<Object>& all() { return *objects_; }
  static const Object* get(const std::string& kind, const std::string& ns,
                           const std::string& name) {
    for (const auto& o : all()) {
      if (o.kind == kind && o.ns == ns && o.name == name) return &o;
    }
    return nullptr;
  }
  static std::vector<const Object*> of_kind(const std::string& kind) {
    std::vector<const Object*> out;
    for (const auto& o : all()) {
      if (o.kind == kind) out.push_back(&o);
    }
    return out;
  }
  static const Object& must(const std::string& kind, const std::string& ns,
                            const std::string& name) {
    const Object* o = get(kind, ns, name);
    if (!o) throw std::runtime_error(kind + " " + ns + "/" + name + " is not in deploy/");
    return *o;
  }

  static std::vector<Object>* objects_;
};
std::vector<Object>* Manifests::objects_ = nullptr;

bool labels_match(const YAML::Node& selector, const YAML::Node& labels) {
  if (!selector.IsMap() || selector.size() == 0) return false;
  for (const auto& kv : selector) {
    if (!labels[kv.first.as<std::string>()] ||
        labels[kv.first.as<std::string>()].as<std::string>() != kv.second.as<std::string>()) {
      return false;
    }
  }
  return true;
}

// A LabelSelector (matchLabels and matchExpressions) against a set of labels.
bool selects(const YAML::Node& selector, const std::map<std::string, std::string>& labels) {
  for (const auto& kv : selector["matchLabels"]) {
    auto it = labels.find(kv.first.as<std::string>());
    if (it == labels.end() || it->second != kv.second.as<std::string>()) return false;
  }
  for (const auto& e : selector["matchExpressions"]) {
    const std::string key = e["key"].as<std::string>();
    const std::string op = e["operator"].as<std::string>();
    std::set<std::string> values;
    for (const auto& v : e["values"]) values.insert(v.as<std::string>());
    auto it = labels.find(key);
    const bool has = it != labels.end();
    if (op == "In" && !(has && values.count(it->second))) return false;
    if (op == "NotIn" && has && values.count(it->second)) return false;
    if (op == "Exists" && !has) return false;
    if (op == "DoesNotExist" && has) return false;
  }
  return true;
}

// "--flag=value" arguments of a container.
std::map<std::string, std::string> flags(const YAML::Node& container) {
  std::map<std::string, std::string> out;
  for (const char* key : {"args", "command"}) {
    for (const auto& a : container[key]) {
      const std::string s = a.as<std::string>();
      if (s.rfind("--", 0) != 0) continue;
      const size_t eq = s.find('=');
      out[s.substr(0, eq)] = eq == std::string::npos ? "" : s.substr(eq + 1);
    }
  }
  return out;
}

// The mount path of the volume that holds `file`, and that volume's name.
std::pair<std::string, std::string> volume_for(const YAML::Node& container,
                                               const std::string& file) {
  for (const auto& m : container["volumeMounts"]) {
    const std::string path = m["mountPath"].as<std::string>();
    if (file.rfind(path + "/", 0) == 0) return {path, m["name"].as<std::string>()};
  }
  return {};
}

YAML::Node volume(const YAML::Node& pod_spec, const std::string& name) {
  for (const auto& v : pod_spec["volumes"]) {
    if (v["name"].as<std::string>() == name) return v;
  }
  return YAML::Node();
}

YAML::Node container(const YAML::Node& pod_spec, const std::string& name) {
  for (const auto& c : pod_spec["containers"]) {
    if (c["name"].as<std::string>() == name) return c;
  }
  return YAML::Node();
}

TEST_F(Manifests, EveryFileIsWellFormedWithTheRequiredFields) {
  ASSERT_GE(all().size(), 20u);
  std::set<std::string> namespaces = {"kube-system", "cert-manager"};  // not ours to create
  for (const auto* n : of_kind("Namespace")) namespaces.insert(n->name);
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const auto& o : all()) {
    SCOPED_TRACE(o.file + ": " + o.kind + " " + o.name);
    ASSERT_TRUE(o.node.IsMap());
    EXPECT_FALSE(o.node["apiVersion"].as<std::string>("").empty());
    EXPECT_FALSE(o.kind.empty());
    EXPECT_FALSE(o.name.empty());
    if (kClusterScoped.count(o.kind)) {
      EXPECT_TRUE(o.ns.empty()) << "cluster-scoped objects have no namespace";
    } else {
      EXPECT_THAT(namespaces, Contains(o.ns)) << "namespace missing or not created";
    }
    EXPECT_TRUE(seen.insert({o.kind, o.ns, o.name}).second) << "defined twice";
    if (o.kind != "Namespace" && o.kind.find("Issuer") == std::string::npos &&
        o.kind != "Certificate") {
      EXPECT_EQ(o.node["metadata"]["labels"]["app.kubernetes.io/name"].as<std::string>(""),
                "hamisim");
    }
  }
}

TEST_F(Manifests, DeploymentsReferenceWhatExists) {
  const auto deployments = of_kind("Deployment");
  ASSERT_EQ(deployments.size(), 2u);
  for (const Object* d : deployments) {
    SCOPED_TRACE(d->file);
    const YAML::Node spec = d->node["spec"];
    const YAML::Node pod = spec["template"]["spec"];
    EXPECT_TRUE(
        labels_match(spec["selector"]["matchLabels"], spec["template"]["metadata"]["labels"]));
    EXPECT_TRUE(get("ServiceAccount", d->ns, pod["serviceAccountName"].as<std::string>("")))
        << "ServiceAccount " << pod["serviceAccountName"];
    EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>(false));
    std::set<std::string> volumes;
    for (const auto& v : pod["volumes"]) {
      volumes.insert(v["name"].as<std::string>());
      if (v["configMap"]) {
        EXPECT_TRUE(get("ConfigMap", d->ns, v["configMap"]["name"].as<std::string>()))
            << "ConfigMap " << v["configMap"]["name"];
      }
      if (v["secret"]) {
        const std::string secret = v["secret"]["secretName"].as<std::string>();
        bool issued = false;
        for (const auto* c : of_kind("Certificate")) {
          issued |= c->ns == d->ns && c->node["spec"]["secretName"].as<std::string>() == secret;
        }
        EXPECT_TRUE(issued) << "no cert-manager Certificate makes Secret " << secret;
        EXPECT_THAT(read(kDeploy / "tls/secret/generate.sh"), HasSubstr(d->ns + " " + secret))
            << "the plain-Secret variant does not make " << secret;
      }
    }
    for (const auto& c : pod["containers"]) {
      SCOPED_TRACE(c["name"].as<std::string>());
      const YAML::Node sc = c["securityContext"];
      EXPECT_TRUE(sc["readOnlyRootFilesystem"].as<bool>(false));
      EXPECT_FALSE(sc["allowPrivilegeEscalation"].as<bool>(true));
      EXPECT_EQ(sc["capabilities"]["drop"][0].as<std::string>(""), "ALL");
      EXPECT_TRUE(c["resources"]["requests"]["cpu"]);
      EXPECT_TRUE(c["resources"]["requests"]["memory"]);
      EXPECT_TRUE(c["resources"]["limits"]["memory"]);
      std::set<std::string> ports;
      for (const auto& p : c["ports"]) ports.insert(p["name"].as<std::string>());
      for (const char* probe : {"livenessProbe", "readinessProbe"}) {
        ASSERT_TRUE(c[probe]) << probe;
        EXPECT_THAT(ports, Contains(c[probe]["httpGet"]["port"].as<std::string>())) << probe;
      }
      for (const auto& m : c["volumeMounts"]) {
        EXPECT_THAT(volumes, Contains(m["name"].as<std::string>()));
        EXPECT_TRUE(m["readOnly"].as<bool>(false));
      }
    }
  }
}

TEST_F(Manifests, HamisimContainersProbeHealthAndReadinessAndUseRealServeFlags) {
  const std::string serve_source =
      read(fs::path(hamisim::testing::source_dir()) / "src/cli/serve_command.cpp") +
      read(fs::path(hamisim::testing::source_dir()) / "src/cli/device_flags.cpp");
  for (const Object* d : of_kind("Deployment")) {
    SCOPED_TRACE(d->file);
    const YAML::Node pod = d->node["spec"]["template"]["spec"];
    const YAML::Node c = container(pod, "hamisim");
    ASSERT_TRUE(c);
    EXPECT_EQ(c["args"][0].as<std::string>(), "serve");
    EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
    EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/readyz");
    const auto f = flags(c);
    for (const auto& [flag, value] : f) {
      EXPECT_THAT(serve_source, HasSubstr("\"" + flag + "\"")) << flag << " is not a serve flag";
      if (flag == "--tls-cert" || flag == "--tls-key" || flag == "--client-ca" ||
          flag == "--device-config-file" || flag == "--device-profiles") {
        auto [mount, vol] = volume_for(c, value);
        ASSERT_FALSE(mount.empty()) << flag << " " << value << " is on no mounted volume";
        const YAML::Node v = volume(pod, vol);
        const std::string key = value.substr(mount.size() + 1);
        if (v["configMap"]) {
          const Object& cm = must("ConfigMap", d->ns, v["configMap"]["name"].as<std::string>());
          EXPECT_TRUE(cm.node["data"][key]) << key << " not in ConfigMap " << cm.name;
        } else {
          EXPECT_THAT((std::set<std::string>{"tls.crt", "tls.key", "ca.crt"}), Contains(key));
        }
      }
    }
    // The metrics listener answers kubelet's probes: it must listen beyond loopback.
    EXPECT_EQ(f.at("--metrics-listen").rfind("0.0.0.0:", 0), 0u);
  }
}

TEST_F(Manifests, SharedConfigMapHoldsAValidDeviceConfigAndProfiles) {
  const Object& cm = must("ConfigMap", "hamisim", "hamisim-config");
  auto config =
      device::parse_device_config(cm.node["data"]["device-config.yaml"].as<std::string>());
  ASSERT_TRUE(config) << config.error().message;
  const auto registry = device::build_registry(*config);
  auto profiles = profile::parse_device_profiles(
      cm.node["data"]["device-profiles.yaml"].as<std::string>(), "device-profiles.yaml", registry);
  ASSERT_TRUE(profiles) << profiles.error().message;
}

TEST_F(Manifests, SimulationServiceNetworkPolicyAndBudgetSelectTheSimulationPods) {
  const Object& d = must("Deployment", "hamisim", "hamisim-simulation");
  const YAML::Node pod_labels = d.node["spec"]["template"]["metadata"]["labels"];
  const YAML::Node c = container(d.node["spec"]["template"]["spec"], "hamisim");
  std::map<std::string, int> ports;
  for (const auto& p : c["ports"])
    ports[p["name"].as<std::string>()] = p["containerPort"].as<int>();

  const Object& svc = must("Service", "hamisim", "hamisim-simulation");
  EXPECT_TRUE(labels_match(svc.node["spec"]["selector"], pod_labels));
  for (const auto& p : svc.node["spec"]["ports"]) {
    EXPECT_TRUE(ports.count(p["targetPort"].as<std::string>())) << p["targetPort"];
  }
  // --listen's port is the container port named https.
  const std::string listen = flags(c).at("--listen");
  EXPECT_EQ(listen.substr(listen.rfind(':') + 1), std::to_string(ports.at("https")));

  const Object& np = must("NetworkPolicy", "hamisim", "hamisim-simulation");
  EXPECT_TRUE(labels_match(np.node["spec"]["podSelector"]["matchLabels"], pod_labels));
  EXPECT_EQ(np.node["spec"]["policyTypes"][0].as<std::string>(), "Ingress");
  // The extender port is admitted only from Cluster Autoscaler's pods in kube-system, with the
  // labels CA's Helm chart gives them (app.kubernetes.io/name: <cloudProvider>-cluster-autoscaler,
  // default aws) and the older app: cluster-autoscaler of CA's example manifests.
  const auto admitted = [&](const std::map<std::string, std::string>& pod, const std::string& ns) {
    for (const auto& rule : np.node["spec"]["ingress"]) {
      bool port = false;
      for (const auto& p : rule["ports"]) port |= p["port"].as<int>() == ports.at("https");
      if (!port) continue;
      for (const auto& peer : rule["from"]) {
        EXPECT_TRUE(peer["namespaceSelector"] && peer["podSelector"])
            << "a peer without both selectors admits too much";
        if (selects(peer["namespaceSelector"], {{"kubernetes.io/metadata.name", ns}}) &&
            selects(peer["podSelector"], pod)) {
          return true;
        }
      }
    }
    return false;
  };
  for (const char* provider :
       {"aws", "gce", "azure", "clusterapi", "magnum", "alicloud", "oci", "hetzner", "exoscale",
        "kwok", "civo", "rancher", "coreweave", "huaweicloud", "vultr"}) {
    EXPECT_TRUE(admitted({{"app.kubernetes.io/name", std::string(provider) + "-cluster-autoscaler"},
                          {"app.kubernetes.io/instance", "cluster-autoscaler"}},
                         "kube-system"))
        << provider;
  }
  EXPECT_TRUE(admitted({{"app.kubernetes.io/name", "cluster-autoscaler"}}, "kube-system"));
  EXPECT_TRUE(admitted({{"app", "cluster-autoscaler"}}, "kube-system"));
  EXPECT_FALSE(admitted({{"app.kubernetes.io/name", "aws-cluster-autoscaler"}}, "default"));
  EXPECT_FALSE(admitted({{"app.kubernetes.io/name", "hamisim"}}, "kube-system"));
  EXPECT_FALSE(admitted({}, "kube-system"));

  const Object& pdb = must("PodDisruptionBudget", "hamisim", "hamisim-simulation");
  EXPECT_TRUE(labels_match(pdb.node["spec"]["selector"]["matchLabels"], pod_labels));
  EXPECT_GE(d.node["spec"]["replicas"].as<int>(), 2) << "a PDB of 1 needs 2 replicas to drain";

  // The simulation service needs no API access.
  const Object& sa = must("ServiceAccount", "hamisim", "hamisim-simulation");
  EXPECT_FALSE(sa.node["automountServiceAccountToken"].as<bool>(true));
  for (const auto* b : of_kind("RoleBinding")) {
    for (const auto& s : b->node["subjects"]) EXPECT_NE(s["name"].as<std::string>(), sa.name);
  }
  for (const auto* b : of_kind("ClusterRoleBinding")) {
    for (const auto& s : b->node["subjects"]) EXPECT_NE(s["name"].as<std::string>(), sa.name);
  }
}

TEST_F(Manifests, BindingsReferenceExistingRolesAndServiceAccounts) {
  const std::set<std::string> builtin = {"system:kube-scheduler", "system:volume-scheduler",
                                         "extension-apiserver-authentication-reader"};
  for (const char* kind : {"RoleBinding", "ClusterRoleBinding"}) {
    for (const Object* b : of_kind(kind)) {
      SCOPED_TRACE(b->file + ": " + b->name);
      const std::string role = b->node["roleRef"]["name"].as<std::string>();
      const std::string role_kind = b->node["roleRef"]["kind"].as<std::string>();
      const bool exists = role_kind == "ClusterRole" ? get("ClusterRole", "", role) != nullptr
                                                     : get("Role", b->ns, role) != nullptr;
      EXPECT_TRUE(exists || builtin.count(role)) << role_kind << " " << role;
      for (const auto& s : b->node["subjects"]) {
        EXPECT_EQ(s["kind"].as<std::string>(), "ServiceAccount");
        EXPECT_TRUE(
            get("ServiceAccount", s["namespace"].as<std::string>(""), s["name"].as<std::string>()));
      }
    }
  }
}

TEST_F(Manifests, LiveRbacGrantsWhatTheLivePathUses) {
  const Object& role = must("ClusterRole", "", "hamisim-live");
  std::set<std::string> granted;  // "group/resource:verb"
  for (const auto& rule : role.node["rules"]) {
    for (const auto& g : rule["apiGroups"]) {
      for (const auto& r : rule["resources"]) {
        for (const auto& v : rule["verbs"]) {
          granted.insert(g.as<std::string>() + "/" + r.as<std::string>() + ":" +
                         v.as<std::string>());
        }
      }
    }
  }
  for (const char* want :
       {"/nodes:get", "/nodes:list", "/nodes:watch", "/nodes:patch", "/pods:get", "/pods:list",
        "/pods:watch", "/pods:patch", "/bindings:create", "/pods/binding:create", "/events:create",
        "events.k8s.io/events:create", "coordination.k8s.io/leases:get",
        "coordination.k8s.io/leases:list", "coordination.k8s.io/leases:watch",
        "/resourcequotas:list", "/resourcequotas:watch", "resource.k8s.io/resourceslices:list"}) {
    EXPECT_THAT(granted, Contains(want));
  }
  for (const auto& g : granted) {
    EXPECT_EQ(g.find(":delete"), std::string::npos) << g;
    EXPECT_EQ(g.find("secrets"), std::string::npos) << g;
  }
}

TEST_F(Manifests, CertificatesComeFromTheHamisimCa) {
  for (const Object* c : of_kind("Certificate")) {
    SCOPED_TRACE(c->name);
    const YAML::Node ref = c->node["spec"]["issuerRef"];
    const std::string kind = ref["kind"].as<std::string>("Issuer");
    EXPECT_TRUE(kind == "ClusterIssuer" ? get("ClusterIssuer", "", ref["name"].as<std::string>())
                                        : get("Issuer", c->ns, ref["name"].as<std::string>()));
  }
  const Object& ca_issuer = must("ClusterIssuer", "", "hamisim-ca");
  const Object& root = must("Certificate", "cert-manager", "hamisim-root-ca");
  EXPECT_TRUE(root.node["spec"]["isCA"].as<bool>(false));
  EXPECT_EQ(ca_issuer.node["spec"]["ca"]["secretName"].as<std::string>(),
            root.node["spec"]["secretName"].as<std::string>());
}

// The CA side: the ConfigMap CA mounts, the patch that mounts it, and the identities and names
// that must agree with the simulation service.
TEST_F(Manifests, CaSchedulerConfigPassesDoctorOfflineAndMatchesTheService) {
  const Object& cm = must("ConfigMap", "kube-system", "hamisim-ca-scheduler-config");
  const std::string text = cm.node["data"]["scheduler-config.yaml"].as<std::string>();
  auto config = extender::parse_scheduler_config(text, "scheduler-config.yaml");
  ASSERT_TRUE(config) << config.error().message;

  // `hamisim doctor --offline` on it: exit 0.
  doctor::DoctorInput input;
  input.ca = &*config;
  input.offline = true;
  const auto registry = device::build_registry({});
  input.options.hami_resources = doctor::hami_resource_names(registry);
  input.options.vendors = doctor::vendor_resources(registry);
  const doctor::Report report = doctor::run_doctor(input);
  EXPECT_EQ(doctor::exit_code(report), 0) << doctor::render_table(report);
  // The shipped configuration manages NVIDIA's resources; doctor only notes the other vendors
  // and what the CA build must do (SimulatedPods, issue #33).
  for (const auto& f : report.findings) {
    EXPECT_EQ(f.severity, doctor::Severity::kInfo) << doctor::render_table(report);
    EXPECT_TRUE(f.check == "vendors-not-managed" || f.check == "simulated-pods")
        << doctor::render_table(report);
  }

  // urlPrefix names the Service and its port; the server certificate names that host.
  ASSERT_EQ(config->extenders.size(), 1u);
  const auto& e = config->extenders[0];
  auto url = extender::parse_extender_url(e.url_prefix);
  ASSERT_TRUE(url);
  const Object& svc = must("Service", "hamisim", "hamisim-simulation");
  EXPECT_EQ(url->host, svc.name + "." + svc.ns + ".svc");
  EXPECT_EQ(url->port, svc.node["spec"]["ports"][0]["port"].as<int>());
  const Object& server_cert = must("Certificate", "hamisim", "hamisim-simulation-tls");
  std::vector<std::string> dns;
  for (const auto& n : server_cert.node["spec"]["dnsNames"]) dns.push_back(n.as<std::string>());
  EXPECT_THAT(dns, Contains(url->host));
  EXPECT_THAT(read(kDeploy / "tls/secret/generate.sh"), HasSubstr("DNS:" + url->host));

  // CA's client identity is what the service admits.
  const Object& client_cert = must("Certificate", "kube-system", "hamisim-ca-client-tls");
  const Object& sim = must("Deployment", "hamisim", "hamisim-simulation");
  const auto f = flags(container(sim.node["spec"]["template"]["spec"], "hamisim"));
  EXPECT_EQ(f.at("--allow-simulation-clients"),
            client_cert.node["spec"]["commonName"].as<std::string>());
  EXPECT_THAT(read(kDeploy / "tls/secret/generate.sh"),
              HasSubstr("issue ca-client " + f.at("--allow-simulation-clients")));

  // The patch mounts this ConfigMap and the client Secret where the config expects them.
  const YAML::Node patch = YAML::LoadFile((kDeploy / "cluster-autoscaler" / kPatchFile).string());
  ASSERT_TRUE(patch.IsSequence());
  std::string config_flag;
  std::map<std::string, std::string> mounts;        // volume -> mountPath
  std::map<std::string, YAML::Node> patch_volumes;  // volume -> source
  for (const auto& op : patch) {
    EXPECT_EQ(op["op"].as<std::string>(), "add");
    const std::string path = op["path"].as<std::string>();
    if (path == "/spec/template/spec/containers/0/args/-")
      config_flag = op["value"].as<std::string>();
    if (path == "/spec/template/spec/volumes/-") {
      patch_volumes[op["value"]["name"].as<std::string>()] = op["value"];
    }
    if (path == "/spec/template/spec/containers/0/volumeMounts/-") {
      mounts[op["value"]["name"].as<std::string>()] = op["value"]["mountPath"].as<std::string>();
    }
  }
  const std::string prefix = "--scheduler-config-file=";
  ASSERT_EQ(config_flag.rfind(prefix, 0), 0u);
  const std::string config_path = config_flag.substr(prefix.size());
  bool config_mounted = false, tls_mounted = false;
  for (const auto& [name, mount] : mounts) {
    ASSERT_TRUE(patch_volumes.count(name)) << name;
    const YAML::Node v = patch_volumes[name];
    if (v["configMap"] && config_path == mount + "/scheduler-config.yaml") {
      config_mounted = v["configMap"]["name"].as<std::string>() == cm.name;
    }
    if (v["secret"] && e.tls_config && e.tls_config->ca_file == mount + "/ca.crt" &&
        e.tls_config->cert_file == mount + "/tls.crt" &&
        e.tls_config->key_file == mount + "/tls.key") {
      tls_mounted = v["secret"]["secretName"].as<std::string>() ==
                    client_cert.node["spec"]["secretName"].as<std::string>();
    }
  }
  EXPECT_TRUE(config_mounted);
  EXPECT_TRUE(tls_mounted);
}

// HAMi's webhook, served by the live sidecar: HAMi's registration (name, failure and
// reinvocation policies, versions, pods CREATE), a Service that selects the live pods and
// reaches the sidecar's listener, and a CA bundle cert-manager injects from the certificate
// that names that Service.
TEST_F(Manifests, MutatingWebhookReachesTheLiveSidecarLikeHamis) {
  const auto configs = of_kind("MutatingWebhookConfiguration");
  ASSERT_EQ(configs.size(), 1u);
  const Object& mwc = *configs[0];
  EXPECT_EQ(mwc.file, "live/mutating-webhook.yaml");
  ASSERT_EQ(mwc.node["apiVersion"].as<std::string>(), "admissionregistration.k8s.io/v1");
  ASSERT_EQ(mwc.node["webhooks"].size(), 1u);
  const YAML::Node w = mwc.node["webhooks"][0];
  EXPECT_EQ(w["name"].as<std::string>(""), "vgpu.hami.io");
  EXPECT_EQ(w["failurePolicy"].as<std::string>(""), "Ignore");
  EXPECT_EQ(w["reinvocationPolicy"].as<std::string>(""), "Never");
  EXPECT_EQ(w["sideEffects"].as<std::string>(""), "None");
  std::vector<std::string> versions;
  for (const auto& v : w["admissionReviewVersions"]) versions.push_back(v.as<std::string>());
  EXPECT_EQ(versions, (std::vector<std::string>{"v1", "v1beta1"}));
  ASSERT_EQ(w["rules"].size(), 1u);
  const YAML::Node rule = w["rules"][0];
  const auto list = [](const YAML::Node& n) {
    std::vector<std::string> out;
    for (const auto& v : n) out.push_back(v.as<std::string>());
    return out;
  };
  EXPECT_EQ(list(rule["operations"]), std::vector<std::string>{"CREATE"});
  EXPECT_EQ(list(rule["apiGroups"]), std::vector<std::string>{""});
  EXPECT_EQ(list(rule["apiVersions"]), std::vector<std::string>{"v1"});
  EXPECT_EQ(list(rule["resources"]), std::vector<std::string>{"pods"});
  const int timeout = w["timeoutSeconds"].as<int>(10);
  EXPECT_GE(timeout, 1);
  EXPECT_LE(timeout, 30);  // the API server's limit

  // Neither the control plane nor hamisim's own namespace is mutated.
  const Object& live = must("Deployment", "hamisim", "hamisim-scheduler");
  std::set<std::string> excluded;
  for (const auto& e : w["namespaceSelector"]["matchExpressions"]) {
    if (e["key"].as<std::string>() == "kubernetes.io/metadata.name" &&
        e["operator"].as<std::string>() == "NotIn") {
      for (const auto& v : e["values"]) excluded.insert(v.as<std::string>());
    }
  }
  EXPECT_THAT(excluded, Contains("kube-system"));
  EXPECT_THAT(excluded, Contains(live.ns));

  // clientConfig names a Service of deploy/ on one of its ports, at the /webhook route.
  const YAML::Node svc_ref = w["clientConfig"]["service"];
  ASSERT_TRUE(svc_ref);
  EXPECT_FALSE(w["clientConfig"]["url"]) << "the API server must go through the Service";
  EXPECT_EQ(svc_ref["path"].as<std::string>(""), "/webhook");
  const Object& svc =
      must("Service", svc_ref["namespace"].as<std::string>(), svc_ref["name"].as<std::string>());
  const int port = svc_ref["port"].as<int>(443);
  YAML::Node target;
  for (const auto& p : svc.node["spec"]["ports"]) {
    if (p["port"].as<int>() == port) target = p["targetPort"];
  }
  ASSERT_TRUE(target) << "Service " << svc.name << " has no port " << port;

  // The Service selects the live pods and lands on the sidecar's listener.
  const YAML::Node pod = live.node["spec"]["template"]["spec"];
  EXPECT_TRUE(labels_match(svc.node["spec"]["selector"],
                           live.node["spec"]["template"]["metadata"]["labels"]));
  EXPECT_FALSE(labels_match(svc.node["spec"]["selector"],
                            must("Deployment", "hamisim", "hamisim-simulation")
                                .node["spec"]["template"]["metadata"]["labels"]));
  const YAML::Node sidecar = container(pod, "hamisim");
  const std::string listen = flags(sidecar).at("--listen");
  const std::string listen_port = listen.substr(listen.rfind(':') + 1);
  std::string target_port = target.as<std::string>();
  for (const auto& p : sidecar["ports"]) {
    if (p["name"].as<std::string>("") == target_port)
      target_port = p["containerPort"].as<std::string>();
  }
  EXPECT_EQ(target_port, listen_port) << "targetPort is not the sidecar's --listen port";

  // cert-manager injects the CA of the certificate that names the Service.
  const std::string inject =
      mwc.node["metadata"]["annotations"]["cert-manager.io/inject-ca-from"].as<std::string>("");
  const size_t slash = inject.find('/');
  ASSERT_NE(slash, std::string::npos) << "cert-manager.io/inject-ca-from: " << inject;
  const Object& cert = must("Certificate", inject.substr(0, slash), inject.substr(slash + 1));
  EXPECT_EQ(cert.ns, svc.ns);
  std::vector<std::string> dns;
  for (const auto& n : cert.node["spec"]["dnsNames"]) dns.push_back(n.as<std::string>());
  // The API server calls <service>.<namespace>.svc.
  EXPECT_THAT(dns, Contains(svc.name + "." + svc.ns + ".svc"));
  EXPECT_EQ(cert.node["spec"]["issuerRef"]["name"].as<std::string>(""), "hamisim-ca");
  std::set<std::string> usages;
  for (const auto& u : cert.node["spec"]["usages"]) usages.insert(u.as<std::string>());
  EXPECT_THAT(usages, Contains("server auth"));
  EXPECT_FALSE(w["clientConfig"]["caBundle"]) << "cert-manager injects it";
}

TEST_F(Manifests, LiveSchedulerConfigPassesDoctorOfflineAndMatchesTheSidecar) {
  const Object& cm = must("ConfigMap", "hamisim", "hamisim-scheduler-config");
  const std::string text = cm.node["data"]["scheduler-config.yaml"].as<std::string>();
  extender::LoadOptions lo;
  lo.require_single_profile = false;
  auto config = extender::parse_scheduler_config(text, "scheduler-config.yaml", lo);
  ASSERT_TRUE(config) << config.error().message;
  const auto registry = device::build_registry({});
  doctor::CheckOptions options;
  options.hami_resources = doctor::hami_resource_names(registry);
  options.vendors = doctor::vendor_resources(registry);
  auto findings = doctor::check_config(*config, doctor::ConfigRole::kKubeScheduler, options);
  for (const auto& f : findings) {
    EXPECT_EQ(f.severity, doctor::Severity::kInfo)
        << f.check << " " << f.field << ": " << f.message;
  }

  const Object& d = must("Deployment", "hamisim", "hamisim-scheduler");
  const YAML::Node pod = d.node["spec"]["template"]["spec"];
  // Issue #47: system-*-critical outside kube-system is refused where those classes are
  // quota-limited; the overlay brings a class of its own, below the system ones.
  const std::string priority = pod["priorityClassName"].as<std::string>("");
  EXPECT_FALSE(priority.starts_with("system-")) << priority;
  const Object& pc = must("PriorityClass", "", priority);
  EXPECT_LT(pc.node["value"].as<int64_t>(), 2000000000) << "the system classes' range";
  EXPECT_FALSE(pc.node["globalDefault"].as<bool>(true));
  const YAML::Node ks = container(pod, "kube-scheduler");
  const auto ks_flags = flags(ks);
  auto [mount, vol] = volume_for(ks, ks_flags.at("--config"));
  ASSERT_FALSE(mount.empty());
  EXPECT_EQ(volume(pod, vol)["configMap"]["name"].as<std::string>(), cm.name);
  EXPECT_EQ(ks_flags.at("--config"), mount + "/scheduler-config.yaml");

  // kube-scheduler reaches the sidecar's --listen port over loopback (the only peer the
  // listener answers /filter and /bind for), over TLS verified with the mounted CA.
  const auto sidecar = flags(container(pod, "hamisim"));
  const auto& extender = config->extenders.at(0);
  auto url = extender::parse_extender_url(extender.url_prefix);
  ASSERT_TRUE(url);
  EXPECT_EQ(url->host, "127.0.0.1");
  const std::string listen = sidecar.at("--listen");
  EXPECT_EQ(listen.substr(listen.rfind(':') + 1), std::to_string(url->port));
  EXPECT_THAT((std::set<std::string>{"127.0.0.1", "0.0.0.0"}),
              Contains(listen.substr(0, listen.rfind(':'))));
  if (sidecar.count("--tls-cert")) {
    EXPECT_EQ(extender.url_prefix.rfind("https://", 0), 0u);
    ASSERT_TRUE(extender.tls_config);
    auto [ca_mount, ca_vol] = volume_for(ks, extender.tls_config->ca_file);
    ASSERT_FALSE(ca_mount.empty()) << extender.tls_config->ca_file << " is on no mounted volume";
    auto [cert_mount, cert_vol] = volume_for(container(pod, "hamisim"), sidecar.at("--tls-cert"));
    EXPECT_EQ(volume(pod, ca_vol)["secret"]["secretName"].as<std::string>(""),
              volume(pod, cert_vol)["secret"]["secretName"].as<std::string>("-"))
        << "kube-scheduler must trust the CA of the sidecar's certificate";
  }

  // Rolls without downtime: a new pod turns Ready (as a follower) before the old one goes.
  EXPECT_EQ(d.node["spec"]["strategy"]["type"].as<std::string>(""), "RollingUpdate");
  EXPECT_EQ(d.node["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"].as<int>(-1), 0);
  EXPECT_GE(d.node["spec"]["strategy"]["rollingUpdate"]["maxSurge"].as<int>(0), 1);
}

}  // namespace
}  // namespace hamisim
