// The API client's exec credential plugins (real shell scripts), proxies (a small CONNECT
// proxy on loopback), paged LISTs and its observer, against the fake API server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "fake_apiserver.h"
#include "kube/client.h"
#include "kube/exec_credential.h"
#include "kube_test_support.h"
#include "model/json_writer.h"
#include "state/object_store.h"
#include "test_certs.h"
#include "test_proxy.h"

namespace hamisim::kube {
namespace kube_client_auth_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using state::ApiCode;
using testing::FakeApiServer;
using testing::FakeApiServerOptions;
using ::testing::HasSubstr;
using testing::TestProxy;

using test_support::read_file;

class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("hamisim-kube-auth-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& content,
                    bool executable = false) const {
    const fs::path p = path_ / name;
    {
      std::ofstream out(p, std::ios::binary | std::ios::trunc);
      out << content;
    }
    if (executable) {
      fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
    }
    return p.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& dir() const { return path_; }

 private:
  fs::path path_;
};

constexpr const char* kObjects = R"({"kind":"List","items":[
  {"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-1"}},
  {"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-2"}},
  {"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-3"}},
  {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"default"},
   "spec":{"containers":[{"name":"c"}]}}
]})";

constexpr const char* kV1 = "client.authentication.k8s.io/v1";

// A credential plugin: counts its runs, reports its environment, says something on stderr and
// answers with the token in DIR/token (and DIR/expiry when present).
constexpr const char* kTokenPlugin = R"SH(#!/bin/sh
n=$(cat "$PLUGIN_DIR/runs" 2>/dev/null || echo 0)
echo $((n + 1)) > "$PLUGIN_DIR/runs"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$PLUGIN_DIR/exec-info"
printf '%s' "$PLUGIN_GREETING" > "$PLUGIN_DIR/greeting"
echo "fetching a token for $1" >&2
expiry=""
if [ -f "$PLUGIN_DIR/expiry" ]; then expiry=",\"expirationTimestamp\":\"$(cat "$PLUGIN_DIR/expiry")\""; fi
printf '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"token":"%s"%s}}' "$(cat "$PLUGIN_DIR/token")" "$expiry"
)SH";

class ExecPluginTest : public test_support::FakeApiServerTest {
 protected:
  ExecPluginTest() : FakeApiServerTest(kObjects) {}
  ExecConfig plugin(const std::string& script, const std::string& api_version = kV1) {
    ExecConfig e;
    e.command = dir.write("plugin.sh", script, true);
    e.args = {"prod"};
    e.env = {{"PLUGIN_DIR", dir.dir().string()}, {"PLUGIN_GREETING", "hello"}};
    e.api_version = api_version;
    e.interactive_mode = "Never";
    e.user = "eks-admin";
    e.exec_info_json = R"({"kind":"ExecCredential","apiVersion":")" + api_version +
                       R"(","spec":{"interactive":false}})";
    return e;
  }
  // A client whose warnings go to `log`.
  std::unique_ptr<KubeClient> client(KubeConfig config, ClientOptions options = {}) {
    options.log_warning = [this](std::string_view line) {
      std::lock_guard lock(log_mu);
      log.emplace_back(line);
    };
    return FakeApiServerTest::client(std::move(config), std::move(options));
  }
  int runs() const { return std::stoi("0" + read_file(dir.path("runs"))); }
  std::vector<std::string> logged() {
    std::lock_guard lock(log_mu);
    return log;
  }

  TempDir dir;
  std::mutex log_mu;
  std::vector<std::string> log;
};

TEST_F(ExecPluginTest, TokenIsCachedUntilExpirationAndRefetchedOn401) {
  FakeApiServerOptions o;
  o.bearer_token = "token-1";
  start(o);
  dir.write("token", "token-1");
  dir.write("expiry", "2999-01-01T00:00:00Z");
  KubeConfig config;
  config.exec = plugin(kTokenPlugin);
  auto c = client(config);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(c->get("/api/v1/nodes/gpu-1")) << i;
  EXPECT_EQ(runs(), 1);  // cached: the expiry is far away
  EXPECT_EQ(read_file(dir.path("greeting")), "hello");
  EXPECT_EQ(read_file(dir.path("exec-info")),
            R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1",)"
            R"("spec":{"interactive":false}})");
  EXPECT_THAT(logged(), ::testing::Contains(HasSubstr("fetching a token for prod")));

  // The server stops accepting the token: the 401 runs the plugin again and the request is
  // sent once more with the new token.
  server->set_bearer_token("token-2");
  dir.write("token", "token-2");
  auto after_rotation = c->get("/api/v1/nodes/gpu-1");
  ASSERT_TRUE(after_rotation) << after_rotation.error().message;
  EXPECT_EQ(runs(), 2);
  EXPECT_EQ(c->stats().exec_plugin_runs, 2u);

  // A token that stays wrong is a 401 after one re-run, not a loop.
  server->set_bearer_token("token-3");
  auto refused = c->get("/api/v1/nodes/gpu-1");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.code(), ApiCode::kForbidden);
  EXPECT_THAT(refused.error().message, HasSubstr("401"));
  EXPECT_EQ(runs(), 3);
}

TEST_F(ExecPluginTest, ExpiredCredentialIsFetchedForEveryRequest) {
  FakeApiServerOptions o;
  o.bearer_token = "t";
  start(o);
  dir.write("token", "t");
  dir.write("expiry", "2001-02-03T04:05:06.5+01:00");
  KubeConfig config;
  config.exec = plugin(kTokenPlugin);
  auto c = client(config);
  ASSERT_TRUE(c->get("/api/v1/nodes/gpu-1"));
  ASSERT_TRUE(c->get("/api/v1/nodes/gpu-2"));
  EXPECT_EQ(runs(), 2);
}

TEST_F(ExecPluginTest, WatchesAuthenticateWithThePlugin) {
  FakeApiServerOptions o;
  o.bearer_token = "w";
  start(o);
  dir.write("token", "w");
  KubeConfig config;
  config.exec = plugin(kTokenPlugin);
  auto c = client(config);
  WatchRequest req;
  req.path = "/api/v1/nodes";
  int added = 0;
  auto status = c->watch(req, [&](const WatchEventView& e) {
    added += e.type == "ADDED";
    return added < 3;
  });
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(added, 3);
}

TEST_F(ExecPluginTest, ClientCertificateFromThePlugin) {
  testing::TestPki pki;
  FakeApiServerOptions o;
  o.tls = true;
  o.cert_file = pki.server.cert;
  o.key_file = pki.server.key;
  o.client_ca_file = pki.ca.ca_cert();
  o.require_client_cert = true;
  start(o);
  model::JsonWriter w;
  w.begin_object();
  w.key("apiVersion").string("client.authentication.k8s.io/v1beta1");
  w.key("kind").string("ExecCredential");
  w.key("status").begin_object();
  w.key("clientCertificateData").string(read_file(pki.scheduler.cert));
  w.key("clientKeyData").string(read_file(pki.scheduler.key));
  w.end_object();
  w.end_object();
  dir.write("credential.json", w.take());
  KubeConfig config;
  config.ca_pem = read_file(pki.ca.ca_cert());
  config.exec = plugin("#!/bin/sh\ncat \"$PLUGIN_DIR/credential.json\"\n",
                       "client.authentication.k8s.io/v1beta1");
  auto c = client(config);
  for (int i = 0; i < 2; ++i) {
    auto r = c->get("/api/v1/nodes/gpu-1");
    ASSERT_TRUE(r) << r.error().message;
  }
  EXPECT_EQ(c->stats().exec_plugin_runs, 1u);
  EXPECT_EQ(c->stats().connections_opened, 1u);
}

TEST_F(ExecPluginTest, FailuresNameTheUserAndThePlugin) {
  start();
  struct Case {
    std::string name, script, expected;
  };
  const std::vector<Case> cases = {
      {"exit code", "#!/bin/sh\necho denied >&2\nexit 3\n",
       "exec: executable " + dir.path("plugin.sh") +
           " failed with exit code 3 (user \"eks-admin\")"},
      {"garbage", "#!/bin/sh\necho not json\n", "exec plugin output: "},
      {"other version",
       "#!/bin/sh\necho "
       "'{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/"
       "v1beta1\",\"status\":{\"token\":\"x\"}}'\n",
       "exec plugin is configured to use API version client.authentication.k8s.io/v1, plugin "
       "returned version client.authentication.k8s.io/v1beta1"},
      {"no status",
       "#!/bin/sh\necho "
       "'{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\"}'\n",
       "exec plugin didn't return a status field"},
      {"nothing in status",
       "#!/bin/sh\necho "
       "'{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/"
       "v1\",\"status\":{}}'\n",
       "exec plugin didn't return a token or cert/key pair"},
      {"endless output", "#!/bin/sh\nexec yes\n", "output larger than 1048576 bytes; killed"},
  };
  for (const Case& k : cases) {
    KubeConfig config;
    config.exec = plugin(k.script);
    auto r = client(config)->get("/api/v1/nodes/gpu-1", "node gpu-1");
    ASSERT_FALSE(r) << k.name;
    EXPECT_EQ(r.code(), ApiCode::kUnavailable) << k.name;
    EXPECT_THAT(r.error().message, HasSubstr("GET node gpu-1: ")) << k.name;
    EXPECT_THAT(r.error().message, HasSubstr(k.expected)) << k.name;
  }
  EXPECT_THAT(logged(), ::testing::Contains(HasSubstr("denied")));

  KubeConfig missing;
  missing.exec = plugin("");
  missing.exec->command = "hamisim-no-such-credential-plugin";
  missing.exec->install_hint = "install it with: brew install hamisim-auth";
  auto r = client(missing)->get("/api/v1/nodes/gpu-1");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message,
              HasSubstr("exec: executable hamisim-no-such-credential-plugin not found (user "
                        "\"eks-admin\"); install it with: brew install hamisim-auth"));

  KubeConfig slow;
  slow.exec = plugin("#!/bin/sh\nexec sleep 30\n");
  ClientOptions options;
  options.exec_timeout = 200ms;
  auto timed_out = client(slow, options)->get("/api/v1/nodes/gpu-1");
  ASSERT_FALSE(timed_out);
  EXPECT_THAT(timed_out.error().message, HasSubstr("no result within 200ms; killed"));
}

TEST(ExecCredential, Rfc3339) {
  auto t = parse_rfc3339("2026-12-05T03:04:05Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(t->time_since_epoch()).count(),
            1796439845);
  auto offset = parse_rfc3339("2026-12-05T04:04:05.25+01:00");
  ASSERT_TRUE(offset);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(*offset - *t).count(), 250);
  EXPECT_FALSE(parse_rfc3339("2026-12-05 03:04:05Z"));
  EXPECT_FALSE(parse_rfc3339("2026-12-05T03:04:05"));
  EXPECT_FALSE(parse_rfc3339(""));
  auto far = parse_rfc3339("2999-01-01T00:00:00Z");  // beyond what nanoseconds hold: saturates
  ASSERT_TRUE(far);
  EXPECT_EQ(*far, std::chrono::system_clock::time_point::max());
}

// ---- proxies ----------------------------------------------------------------------------

class ProxyTest : public ExecPluginTest {
 protected:
  testing::TestPki pki;
  void start_tls() {
    FakeApiServerOptions o;
    o.tls = true;
    o.cert_file = pki.server.cert;
    o.key_file = pki.server.key;
    start(o);
  }
};

TEST_F(ProxyTest, HttpsServerThroughTheClustersProxyUrl) {
  start_tls();
  TestProxy proxy(server->port());
  KubeConfig config;
  // A name nobody resolves: only the proxy can reach it.
  config.server = "https://kube.invalid:6443";
  config.tls_server_name = "localhost";  // the server certificate's name
  config.ca_pem = read_file(pki.ca.ca_cert());
  config.proxy_url = "http://scheduler:s3cret@127.0.0.1:" + std::to_string(proxy.port());
  config.proxy_source = "proxy-url of cluster \"k\"";
  auto c = client(config);
  auto r = c->get("/api/v1/nodes/gpu-1");
  ASSERT_TRUE(r) << r.error().message;
  WatchRequest req;
  req.path = "/api/v1/nodes";
  int added = 0;
  auto status = c->watch(req, [&](const WatchEventView& e) { return ++added < 3; });
  ASSERT_TRUE(status.ok()) << status.error().message;
  const auto heads = proxy.heads();
  ASSERT_EQ(heads.size(), 2u);  // one tunnel per connection: the request's, the watch's
  EXPECT_THAT(heads[0], HasSubstr("CONNECT kube.invalid:6443 HTTP/1.1\r\n"));
  EXPECT_THAT(heads[0],
              HasSubstr("Proxy-Authorization: Basic " + encode_base64("scheduler:s3cret")));
}

TEST_F(ProxyTest, HttpsProxyFromTheEnvironment) {
  start_tls();
  TestProxy proxy(server->port());
  LoadingRules rules;
  rules.home = dir.path("home");
  rules.explicit_path = dir.write(
      "kubeconfig",
      "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\nclusters:\n- name: k\n"
      "  cluster:\n    server: https://kube.invalid:6443\n    tls-server-name: localhost\n"
      "    certificate-authority-data: " +
          encode_base64(read_file(pki.ca.ca_cert())) + "\n");
  rules.proxy.https_proxy = "127.0.0.1:" + std::to_string(proxy.port());  // no scheme: http
  rules.proxy.no_proxy = "example.com";
  auto config = load_client_config(rules);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->proxy_source, "HTTPS_PROXY");
  auto r = client(*config)->get("/api/v1/nodes/gpu-2");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(proxy.heads().size(), 1u);
  EXPECT_THAT(proxy.heads()[0], HasSubstr("CONNECT kube.invalid:6443 HTTP/1.1"));
}

TEST_F(ProxyTest, HttpServerThroughAProxyUsesAbsoluteForm) {
  start();
  TestProxy proxy(server->port());
  KubeConfig config;
  config.server = "http://kube.invalid:8080";
  config.proxy_url = "http://127.0.0.1:" + std::to_string(proxy.port());
  auto r = client(config)->get("/api/v1/nodes/gpu-1");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(proxy.heads().size(), 1u);
  EXPECT_THAT(proxy.heads()[0],
              HasSubstr("GET http://kube.invalid:8080/api/v1/nodes/gpu-1 HTTP/1.1\r\n"));
}

TEST_F(ProxyTest, ProxyRefusingTheTunnelIsAnError) {
  start_tls();
  KubeConfig config;
  config.server = "https://kube.invalid:6443";
  config.ca_pem = read_file(pki.ca.ca_cert());
  config.proxy_url = server->url();  // not a proxy: answers CONNECT with an error
  config.proxy_url.replace(0, 5, "http");
  FakeApiServerOptions plain;
  state::ObjectStore other;
  FakeApiServer not_a_proxy(other, plain);
  ASSERT_TRUE(not_a_proxy.start());
  config.proxy_url = not_a_proxy.url();
  auto r = client(config)->get("/api/v1/nodes/gpu-1");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), ApiCode::kUnavailable);
  EXPECT_THAT(r.error().message, HasSubstr(": CONNECT kube.invalid:6443: 404"));
}

// ---- paging -----------------------------------------------------------------------------

std::vector<std::string> item_names(const ListPages& pages) {
  std::vector<std::string> names;
  for (const auto& page : pages.pages) {
    auto rv = for_each_list_item(page, [&](std::string_view item) -> Status {
      const size_t at = item.find("\"name\":\"");
      names.emplace_back(item.substr(at + 8, item.find('"', at + 8) - at - 8));
      return ok_status();
    });
    EXPECT_TRUE(rv);
  }
  return names;
}

TEST_F(ExecPluginTest, ListPagesWithLimitAndContinue) {
  start();
  ClientOptions options;
  options.list_page_size = 2;
  auto c = client(KubeConfig{}, options);
  auto pages = c->list("/api/v1/nodes", "nodes");
  ASSERT_TRUE(pages) << pages.error().message;
  EXPECT_EQ(pages->pages.size(), 2u);
  EXPECT_FALSE(pages->fell_back);
  EXPECT_EQ(item_names(*pages), (std::vector<std::string>{"gpu-1", "gpu-2", "gpu-3"}));
  EXPECT_EQ(pages->resource_version, std::to_string(store.resource_version()));
  auto first = list_meta(pages->pages[0]);
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->continue_token.empty());
  EXPECT_EQ(first->remaining_item_count, 1);
  const auto log = server->request_log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0], "LIST /api/v1/nodes?limit=2");
  EXPECT_THAT(log[1], HasSubstr("LIST /api/v1/nodes?limit=2&continue="));
  // A query of the caller's is kept.
  auto one = c->list("/api/v1/nodes?fieldSelector=metadata.name%3Dgpu-3");
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(item_names(*one), (std::vector<std::string>{"gpu-3"}));
}

TEST_F(ExecPluginTest, ListFallsBackToAWholeListWhenTheContinueTokenExpired) {
  start();
  // Between the pages, an object changes and the history is compacted: the continue token's
  // version is gone (410 Expired), as after an etcd compaction.
  server->set_list_hook([this](const std::string& target) {
    if (target.find("continue=") == std::string::npos) return;
    ASSERT_TRUE(
        store.merge_patch(state::Kind::kNode, "", "gpu-1", R"({"metadata":{"labels":{"x":"y"}}})"));
    store.compact();
  });
  ClientOptions options;
  options.list_page_size = 1;
  auto c = client(KubeConfig{}, options);
  auto pages = c->list("/api/v1/nodes", "nodes");
  ASSERT_TRUE(pages) << pages.error().message;
  EXPECT_TRUE(pages->fell_back);
  ASSERT_EQ(pages->pages.size(), 1u);
  EXPECT_EQ(item_names(*pages), (std::vector<std::string>{"gpu-1", "gpu-2", "gpu-3"}));
  EXPECT_EQ(pages->resource_version, std::to_string(store.resource_version()));
  EXPECT_EQ(c->stats().list_fallbacks, 1u);
  const auto log = server->request_log();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[2], "LIST /api/v1/nodes");  // whole: no limit, no continue
  // The expired token itself is a 410 Expired, as the real server answers it.
  auto expired = c->get("/api/v1/nodes?limit=1&" + log[1].substr(log[1].find("continue=")));
  ASSERT_FALSE(expired);
  EXPECT_EQ(expired.code(), ApiCode::kGone);
  EXPECT_THAT(expired.error().message, HasSubstr("The provided continue parameter is too old"));
}

// ---- observer ---------------------------------------------------------------------------

struct RecordingObserver : ClientObserver {
  std::mutex mu;
  std::vector<std::string> requests;
  int waits = 0;
  std::vector<std::string> exec_runs;
  void request_done(std::string_view verb, std::string_view resource, std::string_view code,
                    double seconds) override {
    std::lock_guard lock(mu);
    EXPECT_GE(seconds, 0.0);
    requests.push_back(std::string(verb) + " " + std::string(resource) + " " + std::string(code));
  }
  void rate_limiter_waited(std::string_view, double) override {
    std::lock_guard lock(mu);
    ++waits;
  }
  void exec_plugin_ran(std::string_view status) override {
    std::lock_guard lock(mu);
    exec_runs.emplace_back(status);
  }
};

TEST_F(ExecPluginTest, ObserverSeesVerbResourceAndCode) {
  start();
  auto observer = std::make_shared<RecordingObserver>();
  ClientOptions options;
  options.observer = observer;
  dir.write("token", "t");
  KubeConfig config;
  config.exec = plugin(kTokenPlugin);
  auto c = client(config, options);
  ASSERT_TRUE(c->get("/api/v1/nodes/gpu-1"));
  ASSERT_TRUE(c->list("/api/v1/nodes"));
  EXPECT_FALSE(c->get("/api/v1/namespaces/default/pods/nope"));
  ASSERT_TRUE(c->post("/api/v1/namespaces/default/pods/p1/binding",
                      R"({"metadata":{"name":"p1"},"target":{"name":"gpu-1"}})"));
  WatchRequest req;
  req.path = "/api/v1/pods";
  ASSERT_TRUE(c->watch(req, [](const WatchEventView&) { return false; }).ok());
  std::lock_guard lock(observer->mu);
  EXPECT_EQ(observer->requests,
            (std::vector<std::string>{"GET nodes 200", "LIST nodes 200", "GET pods 404",
                                      "POST pods/binding 201", "WATCH pods 200"}));
  EXPECT_EQ(observer->waits, 4);  // every request but the watch passes the rate limiter
  EXPECT_EQ(observer->exec_runs, (std::vector<std::string>{"success"}));
}

TEST(RequestKind, VerbAndResourceOfAPath) {
  auto k = [](std::string_view verb, std::string_view path) {
    RequestKind r = request_kind(verb, path);
    return r.verb + " " + r.resource;
  };
  EXPECT_EQ(k("GET", "/api/v1/nodes?limit=500"), "LIST nodes");
  EXPECT_EQ(k("GET", "/api/v1/nodes/gpu-1"), "GET nodes");
  EXPECT_EQ(k("GET", "/api/v1/namespaces/kube-system/pods"), "LIST pods");
  EXPECT_EQ(k("PATCH", "/api/v1/namespaces/a/pods/p"), "PATCH pods");
  EXPECT_EQ(k("POST", "/api/v1/namespaces/a/pods/p/binding"), "POST pods/binding");
  EXPECT_EQ(k("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"), "LIST leases");
  EXPECT_EQ(k("GET", "/api/v1/namespaces"), "LIST namespaces");
  EXPECT_EQ(k("GET", "/api/v1/namespaces/default"), "GET namespaces");
  EXPECT_EQ(k("GET", "/version"), "GET unknown");
}

}  // namespace kube_client_auth_test
}  // namespace hamisim::kube
