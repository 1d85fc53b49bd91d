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
      {"not yaml", "a: [", "", "kubeconfig F: line "},
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
      {"proxy", config_with(server + "    proxy-url: http://p\n", ""), "",
       "clusters[0].cluster.proxy-url: proxies are not supported"},
      {"unknown user",
       "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\nclusters:\n- "
       "name: c\n  cluster: {server: 'https://h'}\n",
       "", "kubeconfig F: user \"u\" not found"},
      {"exec", config_with(server, "    exec:\n      command: aws\n"), "",
       "kubeconfig F: users[0].user.exec: exec credential plugins are not supported"},
      {"auth provider", config_with(server, "    auth-provider:\n      name: gcp\n"), "",
       "users[0].user.auth-provider: auth-provider plugins are not supported"},
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
