#include "kube/kube_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace hamisim::kube {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("hamisim-kubeconfig-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& content) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

constexpr const char* kCaPem = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";

std::string config_with(const std::string& cluster, const std::string& user,
                        const std::string& extra = "") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: main\n"
         "contexts:\n- name: main\n  context:\n    cluster: c1\n    user: u1\n    namespace: "
         "team\n" +
         extra + "clusters:\n- name: c1\n  cluster:\n" + cluster + "users:\n- name: u1\n  user:\n" +
         user;
}

TEST(KubeConfig, TokenAndCaDataFromCurrentContext) {
  const std::string yaml =
      config_with("    server: https://10.0.0.1:6443\n    certificate-authority-data: " +
                      encode_base64(kCaPem) + "\n    tls-server-name: kubernetes\n",
                  "    token: abc\n");
  auto c = parse_kubeconfig(yaml, "/tmp/x/config");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->server, "https://10.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, kCaPem);
  EXPECT_EQ(c->tls_server_name, "kubernetes");
  EXPECT_EQ(c->token, "abc");
  EXPECT_EQ(c->namespace_, "team");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->description, "kubeconfig /tmp/x/config (context main)");
}

TEST(KubeConfig, ExplicitContextWins) {
  const std::string yaml =
      "current-context: a\ncontexts:\n- name: a\n  context: {cluster: ca}\n"
      "- name: b\n  context: {cluster: cb}\nclusters:\n"
      "- name: ca\n  cluster: {server: 'https://a:1'}\n"
      "- name: cb\n  cluster: {server: 'http://b:2', insecure-skip-tls-verify: true}\n";
  auto a = parse_kubeconfig(yaml, "f");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->server, "https://a:1");
  EXPECT_EQ(a->namespace_, "default");
  auto b = parse_kubeconfig(yaml, "f", "b");
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->server, "http://b:2");
  EXPECT_TRUE(b->insecure_skip_tls_verify);
  EXPECT_TRUE(b->token.empty());  // no user: anonymous
}

// client-go reads booleans as go-yaml v2 does (YAML 1.1), `y` and `n` included; the table is
// the one the scheduler configuration's reader uses (model::yaml11_bool), which used to differ.
TEST(KubeConfig, BooleansAreYaml11sAsClientGoReadsThem) {
  for (const auto& [text, want] : std::vector<std::pair<std::string, bool>>{{"y", true},
                                                                            {"Y", true},
                                                                            {"yes", true},
                                                                            {"On", true},
                                                                            {"TRUE", true},
                                                                            {"n", false},
                                                                            {"N", false},
                                                                            {"no", false},
                                                                            {"OFF", false},
                                                                            {"False", false}}) {
    const std::string yaml =
        "current-context: a\ncontexts:\n- name: a\n  context: {cluster: ca}\nclusters:\n"
        "- name: ca\n  cluster: {server: 'https://a:1', insecure-skip-tls-verify: " +
        text + "}\n";
    auto c = parse_kubeconfig(yaml, "f");
    ASSERT_TRUE(c) << text << ": " << c.error().message;
    EXPECT_EQ(c->insecure_skip_tls_verify, want) << text;
  }
}

TEST(KubeConfig, FilesAreRelativeToTheKubeconfig) {
  TempDir dir;
  dir.write("ca.crt", kCaPem);
  dir.write("client.crt", "CERT");
  dir.write("client.key", "KEY");
  dir.write("token", "tok-1\n");
  const std::string path = dir.write(
      "config", config_with("    server: https://h\n    certificate-authority: ca.crt\n",
                            "    client-certificate: client.crt\n    client-key: " +
                                (dir.path() / "client.key").string() + "\n    tokenFile: token\n"));
  auto c = load_kubeconfig(path);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->ca_pem, kCaPem);
  EXPECT_EQ(c->client_cert_pem, "CERT");
  EXPECT_EQ(c->client_key_pem, "KEY");
  EXPECT_EQ(c->token_file, (dir.path() / "token").string());
}

TEST(KubeConfig, ClientCertificateData) {
  auto c =
      parse_kubeconfig(config_with("    server: https://h\n",
                                   "    client-certificate-data: " + encode_base64("CERT") +
                                       "\n    client-key-data: " + encode_base64("KEY") + "\n"),
                       "f");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->client_cert_pem, "CERT");
  EXPECT_EQ(c->client_key_pem, "KEY");
}

TEST(KubeConfig, BasicAuth) {
  auto c = parse_kubeconfig(
      config_with("    server: https://h\n", "    username: admin\n    password: secret\n"), "f");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->username, "admin");
  EXPECT_EQ(c->password, "secret");
}

struct ErrorCase {
  const char* name;
  std::string yaml;
  std::string context;
  std::string expected;
};

TEST(KubeConfig, ErrorsNameTheFileAndTheField) {
  const std::string server = "    server: https://h\n";
  const std::vector<ErrorCase> cases = {
      {"not yaml", "a: [", "", "kubeconfig F: yaml: line 1, column 1: "},
      {"not a map", "- 1\n", "", "kubeconfig F: expected a Config map, got a list"},
      {"no context", "clusters: []\n", "", "current-context is not set and no context was given"},
      {"unknown context", config_with(server, "    token: t\n"), "nope",
       "kubeconfig F: context \"nope\" not found"},
      {"contexts not a list", "current-context: a\ncontexts: {a: 1}\n", "",
       "kubeconfig F: contexts: expected a list, got a map"},
      {"context without cluster", "current-context: a\ncontexts:\n- name: a\n  context: {}\n", "",
       "kubeconfig F: contexts[0].context.cluster: is required"},
      {"unknown cluster",
       "current-context: a\ncontexts:\n- name: a\n  context: {cluster: x}\nclusters: []\n", "",
       "kubeconfig F: cluster \"x\" not found"},
      {"no server", config_with("    insecure-skip-tls-verify: true\n", "    token: t\n"), "",
       "kubeconfig F: clusters[0].cluster.server: is required"},
      {"bad server", config_with("    server: ftp://h\n", "    token: t\n"), "",
       "clusters[0].cluster.server: \"ftp://h\" is not an http:// or https:// URL"},
      {"bad port", config_with("    server: https://h:99999\n", "    token: t\n"), "",
       "clusters[0].cluster.server: \"https://h:99999\": bad port"},
      {"server not a string", config_with("    server: [a]\n", "    token: t\n"), "",
       "clusters[0].cluster.server: expected a string, got a list"},
      {"bad insecure", config_with(server + "    insecure-skip-tls-verify: maybe\n", ""), "",
       "clusters[0].cluster.insecure-skip-tls-verify: expected true or false, got \"maybe\""},
      {"bad ca data", config_with(server + "    certificate-authority-data: '***'\n", ""), "",
       "kubeconfig F: clusters[0].cluster.certificate-authority-data: not valid base64"},
      {"missing ca file",
       config_with(server + "    certificate-authority: /nonexistent/ca.crt\n", ""), "",
       "clusters[0].cluster.certificate-authority: cannot read /nonexistent/ca.crt"},
      {"insecure with ca",
       config_with(server + "    insecure-skip-tls-verify: true\n    certificate-authority-data: " +
                       encode_base64("x") + "\n",
                   ""),
       "", "specifying a root certificates file with the insecure flag is not allowed"},
      {"socks proxy", config_with(server + "    proxy-url: socks5://p:1080\n", ""), "",
       "clusters[0].cluster.proxy-url: \"socks5://p:1080\": only http:// proxies are supported"},
      {"unknown user",
       "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\nclusters:\n- "
       "name: c\n  cluster: {server: 'https://h'}\n",
       "", "kubeconfig F: user \"u\" not found"},
      {"exec without apiVersion", config_with(server, "    exec:\n      command: aws\n"), "",
       "kubeconfig F: users[0].user.exec.apiVersion: apiVersion must be specified for user "
       "\"u1\" to use exec authentication plugin"},
      {"exec v1alpha1",
       config_with(server,
                   "    exec:\n      command: aws\n      apiVersion: "
                   "client.authentication.k8s.io/v1alpha1\n"),
       "", "users[0].user.exec.apiVersion: exec plugin: invalid apiVersion"},
      {"exec v1 without interactiveMode",
       config_with(
           server,
           "    exec:\n      command: aws\n      apiVersion: client.authentication.k8s.io/v1\n"),
       "",
       "users[0].user.exec.interactiveMode: interactiveMode must be specified for user \"u1\" to "
       "use exec authentication plugin"},
      {"exec always interactive",
       config_with(
           server,
           "    exec:\n      command: aws\n      apiVersion: client.authentication.k8s.io/v1\n"
           "      interactiveMode: Always\n"),
       "",
       "users[0].user.exec.interactiveMode: exec plugin of user \"u1\" requires interactive mode"},
      {"exec without command",
       config_with(server, "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"),
       "", "users[0].user.exec.command: command must be specified for user \"u1\""},
      {"exec env without name",
       config_with(
           server,
           "    exec:\n      command: aws\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
           "      env:\n      - value: x\n"),
       "", "users[0].user.exec.env[0].name: env variable name must be specified for user \"u1\""},
      {"exec and auth provider",
       config_with(
           server,
           "    exec:\n      command: aws\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
           "    auth-provider:\n      name: oidc\n"),
       "", "authProvider cannot be provided in combination with an exec plugin for user \"u1\""},
      {"gcp auth provider", config_with(server, "    auth-provider:\n      name: gcp\n"), "",
       "users[0].user.auth-provider.name: the gcp auth plugin has been removed (Kubernetes 1.26); "
       "use the \"gke-gcloud-auth-plugin\""},
      {"azure auth provider", config_with(server, "    auth-provider:\n      name: azure\n"), "",
       "the azure auth plugin has been removed (Kubernetes 1.26); use the \"kubelogin\""},
      {"unknown auth provider", config_with(server, "    auth-provider:\n      name: openstack\n"),
       "", "users[0].user.auth-provider.name: no auth provider found for name \"openstack\""},
      {"oidc without id-token",
       config_with(server,
                   "    auth-provider:\n      name: oidc\n      config:\n        "
                   "refresh-token: r\n"),
       "", "users[0].user.auth-provider.config.id-token: auth-provider oidc: no id-token"},
      {"impersonation", config_with(server, "    as: admin\n"), "",
       "users[0].user.as: impersonation is not supported"},
      {"bad key data",
       config_with(server, "    client-certificate-data: " + encode_base64("C") +
                               "\n    client-key-data: '@@@@'\n"),
       "", "kubeconfig F: users[0].user.client-key-data: not valid base64"},
      {"bad cert data", config_with(server, "    client-certificate-data: abc\n"), "",
       "users[0].user.client-certificate-data: not valid base64"},
      {"missing cert file", config_with(server, "    client-certificate: /nonexistent/c\n"), "",
       "users[0].user.client-certificate: cannot read /nonexistent/c"},
      {"missing key file",
       config_with(server, "    client-certificate-data: " + encode_base64("C") +
                               "\n    client-key: /nonexistent/k\n"),
       "", "users[0].user.client-key: cannot read /nonexistent/k"},
      {"cert without key",
       config_with(server, "    client-certificate-data: " + encode_base64("C") + "\n"), "",
       "users[0].user: client-certificate needs a client-key"},
      {"key without cert", config_with(server, "    client-key-data: " + encode_base64("K") + "\n"),
       "", "users[0].user: client-key needs a client-certificate"},
      {"missing token file", config_with(server, "    tokenFile: /nonexistent/token\n"), "",
       "users[0].user.tokenFile: cannot read /nonexistent/token"},
      {"token not a string", config_with(server, "    token: {a: b}\n"), "",
       "users[0].user.token: expected a string, got a map"},
      {"token and basic", config_with(server, "    token: t\n    username: u\n"), "",
       "users[0].user: username/password and a token are mutually exclusive"},
      {"user entry not a map",
       "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\nclusters:\n- "
       "name: c\n  cluster: {server: 'https://h'}\nusers:\n- 3\n",
       "", "kubeconfig F: users[0]: expected a map, got \"3\""},
  };
  for (const ErrorCase& c : cases) {
    auto r = parse_kubeconfig(c.yaml, "F", c.context);
    ASSERT_FALSE(r) << c.name;
    EXPECT_THAT(r.error().message, HasSubstr(c.expected)) << c.name;
    EXPECT_TRUE(r.error().message.starts_with("kubeconfig F: ")) << c.name;
  }
}

TEST(KubeConfig, LoadNamesTheFileAsGiven) {
  auto missing = load_kubeconfig("/nonexistent/kubeconfig");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message,
              HasSubstr("kubeconfig /nonexistent/kubeconfig: cannot read"));
  TempDir dir;
  const std::string path =
      dir.write("config", config_with("    server: https://h\n", "    client-key-data: '!!'\n"));
  auto bad = load_kubeconfig(path);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "kubeconfig " + path + ": users[0].user.client-key-data: not valid base64");
}

TEST(KubeConfig, ServerUrls) {
  auto a = parse_server_url("https://[::1]:6443/prefix/");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_TRUE(a->tls);
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 6443);
  EXPECT_EQ(a->host_header, "[::1]:6443");
  EXPECT_EQ(a->prefix, "/prefix");
  auto b = parse_server_url("http://example.com");
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->tls);
  EXPECT_EQ(b->port, 80);
  EXPECT_EQ(b->host_header, "example.com");
  EXPECT_FALSE(parse_server_url("https://"));
  EXPECT_FALSE(parse_server_url("https://h:0"));
  EXPECT_FALSE(parse_server_url("https://h:x"));
  EXPECT_FALSE(parse_server_url("https://[::1"));
  EXPECT_FALSE(parse_server_url("https://u@h"));
  EXPECT_FALSE(parse_server_url("https://h/?q"));
}

TEST(KubeConfig, Base64RoundTripAndRejects) {
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    std::string out;
    ASSERT_TRUE(decode_base64(encode_base64(s), out));
    EXPECT_EQ(out, s);
  }
  std::string out;
  EXPECT_TRUE(decode_base64("YWJj\nZA==\r\n", out));
  EXPECT_EQ(out, "abcd");
  EXPECT_FALSE(decode_base64("YWJ", out));
  EXPECT_FALSE(decode_base64("Y=Jj", out));
  EXPECT_FALSE(decode_base64("YW=j", out));
  EXPECT_FALSE(decode_base64("YWJj====", out));
  EXPECT_FALSE(decode_base64("YW-j", out));
}

TEST(InClusterConfig, ReadsTheServiceAccount) {
  TempDir dir;
  InClusterEnv env;
  env.host = "10.96.0.1";
  env.port = "443";
  env.token_file = dir.write("token", "sa-token\n");
  env.ca_file = dir.write("ca.crt", kCaPem);
  env.namespace_file = dir.write("namespace", "hami-system\n");
  auto c = in_cluster_config(env);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->token_file, env.token_file);
  EXPECT_TRUE(c->token.empty());  // read (and re-read) by the client
  EXPECT_EQ(c->ca_pem, kCaPem);
  EXPECT_EQ(c->namespace_, "hami-system");
  EXPECT_TRUE(c->warnings.empty());
}

TEST(InClusterConfig, Ipv6HostAndMissingOptionalFiles) {
  TempDir dir;
  InClusterEnv env;
  env.host = "fd00::1";
  env.port = "6443";
  env.token_file = dir.write("token", "t");
  env.ca_file = (dir.path() / "missing-ca").string();
  env.namespace_file = (dir.path() / "missing-ns").string();
  auto c = in_cluster_config(env);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->server, "https://[fd00::1]:6443");
  EXPECT_EQ(c->namespace_, "default");
  ASSERT_EQ(c->warnings.size(), 1u);
  EXPECT_THAT(c->warnings[0], HasSubstr("system trust store"));
}

TEST(InClusterConfig, Errors) {
  InClusterEnv env;
  auto none = in_cluster_config(env);
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message,
              HasSubstr("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT"));
  env.host = "10.0.0.1";
  env.port = "443";
  env.token_file = "/nonexistent/token";
  auto no_token = in_cluster_config(env);
  ASSERT_FALSE(no_token);
  EXPECT_THAT(no_token.error().message,
              HasSubstr("in-cluster config: token: cannot read /nonexistent/token"));
  env.port = "http";
  auto bad_port = in_cluster_config(env);
  ASSERT_FALSE(bad_port);
  EXPECT_THAT(bad_port.error().message, HasSubstr("bad port"));
}

}  // namespace
}  // namespace hamisim::kube

namespace hamisim::kube {
namespace {

std::string kubeconfig_file(const std::string& context, const std::string& cluster,
                            const std::string& server, const std::string& user,
                            const std::string& token, const std::string& current) {
  return "apiVersion: v1\nkind: Config\n" +
         (current.empty() ? std::string() : "current-context: " + current + "\n") +
         "contexts:\n- name: " + context + "\n  context: {cluster: " + cluster + ", user: " + user +
         "}\nclusters:\n- name: " + cluster + "\n  cluster: {server: '" + server +
         "'}\nusers:\n- name: " + user + "\n  user: {token: " + token + "}\n";
}

// Rules that see nothing of the test process's environment.
LoadingRules isolated_rules(const TempDir& dir) {
  LoadingRules rules;
  rules.home = (dir.path() / "home").string();
  rules.in_cluster = InClusterEnv{};
  rules.in_cluster.token_file = (dir.path() / "no-token").string();
  return rules;
}

TEST(LoadClientConfig, KubeconfigVariableIsAPathListMergedFirstFileWins) {
  TempDir dir;
  // a.yaml: no current-context; its cluster "shared" and user "u" win over b.yaml's.
  const std::string a =
      dir.write("a.yaml", kubeconfig_file("ctx-a", "shared", "https://a:1", "u", "token-a", ""));
  const std::string b = dir.write(
      "b.yaml", kubeconfig_file("ctx-b", "shared", "https://b:2", "u", "token-b", "ctx-b"));
  LoadingRules rules = isolated_rules(dir);
  rules.kubeconfig_env = a + ":" + (dir.path() / "missing.yaml").string() + ":" + b;
  auto c = load_client_config(rules);
  ASSERT_TRUE(c) << c.error().message;
  // current-context from b (the first non-empty), its cluster and user from a (first wins).
  EXPECT_EQ(c->server, "https://a:1");
  EXPECT_EQ(c->token, "token-a");
  EXPECT_EQ(c->description, "kubeconfig " + a + ":" + b + " (from $KUBECONFIG) (context ctx-b)");
  ASSERT_EQ(c->warnings.size(), 1u);
  EXPECT_THAT(c->warnings[0], HasSubstr("skipped missing file(s) "));
  // A context only the second file has.
  rules.context = "ctx-a";
  auto other = load_client_config(rules);
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_EQ(other->server, "https://a:1");
}

TEST(LoadClientConfig, HomeKubeConfigWhenTheVariableIsUnset) {
  TempDir dir;
  LoadingRules rules = isolated_rules(dir);
  fs::create_directories(dir.path() / "home" / ".kube");
  dir.write("home/.kube/config", kubeconfig_file("c", "k", "https://home:6443", "u", "t", "c"));
  auto c = load_client_config(rules);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->server, "https://home:6443");
  EXPECT_THAT(c->description, HasSubstr("home/.kube/config (context c)"));
  // $KUBECONFIG, when set, replaces ~/.kube/config (even if all its files are missing).
  rules.kubeconfig_env = (dir.path() / "missing").string();
  auto none = load_client_config(rules);
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().message, HasSubstr("no Kubernetes configuration: no kubeconfig file "
                                              "(tried $KUBECONFIG="));
}

TEST(LoadClientConfig, ExplicitPathWinsAndMustExist) {
  TempDir dir;
  LoadingRules rules = isolated_rules(dir);
  rules.kubeconfig_env =
      dir.write("env.yaml", kubeconfig_file("c", "k", "https://env:1", "u", "t", "c"));
  rules.explicit_path =
      dir.write("explicit.yaml", kubeconfig_file("c", "k", "https://explicit:1", "u", "t", "c"));
  auto c = load_client_config(rules);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->server, "https://explicit:1");
  rules.explicit_path = (dir.path() / "nope.yaml").string();
  auto missing = load_client_config(rules);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("nope.yaml: cannot read"));
}

TEST(LoadClientConfig, InClusterWhenNoKubeconfigIsUsable) {
  TempDir dir;
  LoadingRules rules = isolated_rules(dir);
  rules.in_cluster.host = "10.96.0.1";
  rules.in_cluster.port = "443";
  rules.in_cluster.token_file = dir.write("token", "sa");
  rules.in_cluster.ca_file = dir.write("ca.crt", kCaPem);
  auto c = load_client_config(rules);  // no ~/.kube/config
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_THAT(c->description, HasSubstr("in-cluster"));
  // A kubeconfig without a current-context counts as empty too, as in clientcmd.
  rules.kubeconfig_env =
      dir.write("empty-ctx.yaml", kubeconfig_file("c", "k", "https://x:1", "u", "t", ""));
  auto empty = load_client_config(rules);
  ASSERT_TRUE(empty) << empty.error().message;
  EXPECT_THAT(empty->description, HasSubstr("in-cluster"));
  // A broken kubeconfig is an error, not a reason to fall back.
  rules.kubeconfig_env = dir.write("broken.yaml", "clusters: 3\n");
  auto broken = load_client_config(rules);
  ASSERT_FALSE(broken);
  EXPECT_THAT(broken.error().message, HasSubstr("clusters: expected a list"));
}

TEST(LoadHamiClientConfig, FallsBackToInClusterWhenTheKubeconfigFails) {
  TempDir dir;
  LoadingRules rules = isolated_rules(dir);
  rules.in_cluster.host = "10.96.0.1";
  rules.in_cluster.port = "443";
  rules.in_cluster.token_file = dir.write("token", "sa");
  rules.kubeconfig_env = dir.write("broken.yaml", "clusters: 3\n");
  auto c = load_hami_client_config(rules);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_THAT(c->description, HasSubstr("in-cluster"));
  ASSERT_FALSE(c->warnings.empty());
  EXPECT_THAT(c->warnings[0], HasSubstr("BuildConfigFromFlags failed for file "));
  EXPECT_THAT(c->warnings[0], HasSubstr("Using in-cluster config."));
  rules.kubeconfig_env =
      dir.write("good.yaml", kubeconfig_file("c", "k", "https://good:1", "u", "t", "c"));
  auto good = load_hami_client_config(rules);
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_EQ(good->server, "https://good:1");
  rules.in_cluster.host.clear();
  rules.kubeconfig_env = (dir.path() / "missing").string();
  auto neither = load_hami_client_config(rules);
  ASSERT_FALSE(neither);
  EXPECT_THAT(neither.error().message, HasSubstr("the in-cluster fallback failed"));
}

TEST(KubeConfig, ExecPluginIsReadWithItsClusterInfo) {
  const std::string yaml = config_with(
      "    server: https://10.0.0.1:6443\n    tls-server-name: api\n    "
      "certificate-authority-data: " +
          encode_base64(kCaPem) + "\n",
      "    exec:\n      command: ./bin/get-token\n      args: [--cluster, prod]\n"
      "      apiVersion: client.authentication.k8s.io/v1beta1\n"
      "      env:\n      - {name: AWS_PROFILE, value: prod}\n"
      "      installHint: install get-token\n      provideClusterInfo: true\n");
  auto c = parse_kubeconfig(yaml, "/etc/kube/config");
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_TRUE(c->exec.has_value());
  const ExecConfig& e = *c->exec;
  EXPECT_EQ(e.command, "./bin/get-token");
  EXPECT_EQ(e.base_dir, "/etc/kube");
  EXPECT_EQ(e.args, (std::vector<std::string>{"--cluster", "prod"}));
  ASSERT_EQ(e.env.size(), 1u);
  EXPECT_EQ(e.env[0].first, "AWS_PROFILE");
  EXPECT_EQ(e.interactive_mode, "IfAvailable");  // v1beta1's default
  EXPECT_EQ(e.user, "u1");
  EXPECT_EQ(e.install_hint, "install get-token");
  EXPECT_EQ(e.exec_info_json,
            R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1",)"
            R"("spec":{"cluster":{"server":"https://10.0.0.1:6443","tls-server-name":"api",)"
            R"("certificate-authority-data":")" +
                encode_base64(kCaPem) + R"("},"interactive":false}})");
}

TEST(KubeConfig, OidcIdTokenIsTheBearerToken) {
  auto c = parse_kubeconfig(
      config_with("    server: https://h\n",
                  "    auth-provider:\n      name: oidc\n      config:\n        id-token: "
                  "eyJhbGciOi.x.y\n        idp-issuer-url: https://issuer\n"),
      "F");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->token, "eyJhbGciOi.x.y");
}

TEST(LoadClientConfig, ProxyFromTheClusterOrTheEnvironment) {
  TempDir dir;
  LoadingRules rules = isolated_rules(dir);
  rules.proxy.https_proxy = "proxy.corp:3128";
  rules.proxy.no_proxy = ".internal,10.0.0.0/8";
  auto load = [&](const std::string& server, const std::string& extra = "") {
    rules.explicit_path =
        dir.write("config",
                  "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
                  "clusters:\n- name: k\n  cluster:\n    server: '" +
                      server + "'\n" + extra);
    return load_client_config(rules);
  };
  auto via_env = load("https://api.example.com:6443");
  ASSERT_TRUE(via_env) << via_env.error().message;
  EXPECT_EQ(via_env->proxy_url, "http://proxy.corp:3128");
  EXPECT_EQ(via_env->proxy_source, "HTTPS_PROXY");
  auto excluded = load("https://api.internal:6443");
  ASSERT_TRUE(excluded);
  EXPECT_TRUE(excluded->proxy_url.empty());
  auto cidr = load("https://10.1.2.3:6443");
  ASSERT_TRUE(cidr);
  EXPECT_TRUE(cidr->proxy_url.empty());
  auto loopback = load("https://127.0.0.1:6443");
  ASSERT_TRUE(loopback);
  EXPECT_TRUE(loopback->proxy_url.empty());
  auto http = load("http://api.example.com");  // HTTP_PROXY is unset
  ASSERT_TRUE(http);
  EXPECT_TRUE(http->proxy_url.empty());
  auto own = load("https://10.1.2.3:6443", "    proxy-url: http://user:pw@jump:8080\n");
  ASSERT_TRUE(own) << own.error().message;
  EXPECT_EQ(own->proxy_url, "http://user:pw@jump:8080");  // the cluster's wins over NO_PROXY
  EXPECT_EQ(own->proxy_source, "proxy-url of cluster \"k\"");
  auto parsed = parse_proxy_url(own->proxy_url);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->host, "jump");
  EXPECT_EQ(parsed->port, 8080);
  EXPECT_EQ(parsed->authorization, "Basic " + encode_base64("user:pw"));
}

TEST(ProxyApplies, FollowsGoNoProxyRules) {
  EXPECT_TRUE(proxy_applies("", "api.example.com", 443));
  EXPECT_FALSE(proxy_applies("", "localhost", 443));
  EXPECT_FALSE(proxy_applies("", "::1", 443));
  EXPECT_FALSE(proxy_applies("*", "api.example.com", 443));
  EXPECT_FALSE(proxy_applies("example.com", "example.com", 443));
  EXPECT_FALSE(proxy_applies("example.com", "api.example.com", 443));
  EXPECT_TRUE(proxy_applies(".example.com", "example.com", 443));
  EXPECT_FALSE(proxy_applies(".example.com", "api.example.com", 443));
  EXPECT_FALSE(proxy_applies("*.example.com", "api.example.com", 443));
  EXPECT_TRUE(proxy_applies("example.com:80", "example.com", 443));
  EXPECT_FALSE(proxy_applies("example.com:443", "example.com", 443));
  EXPECT_FALSE(proxy_applies(" 10.0.0.1 ", "10.0.0.1", 6443));
  EXPECT_FALSE(proxy_applies("fd00::/8", "fd00::1", 6443));
  EXPECT_TRUE(proxy_applies("fd00::/8", "fe80::1", 6443));
  EXPECT_FALSE(proxy_applies("[fd00::1]:6443", "fd00::1", 6443));
  EXPECT_TRUE(proxy_applies("notexample.com", "example.com", 443));
}

}  // namespace
}  // namespace hamisim::kube
