// The API client against the fake API server over real loopback HTTP and HTTPS.
#include "kube/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "fake_apiserver.h"
#include "kube_test_support.h"
#include "state/object_store.h"
#include "test_certs.h"

namespace hamisim::kube {
namespace {

using namespace std::chrono_literals;
using state::ApiCode;
using testing::FakeApiServer;
using testing::FakeApiServerOptions;
using ::testing::HasSubstr;

using test_support::eventually;
using test_support::read_file;

constexpr const char* kObjects = R"({"kind":"List","items":[
  {"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-1","annotations":{"a":"1"}}},
  {"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-2"}},
  {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"default"},
   "spec":{"containers":[{"name":"c"}]}}
]})";

class ClientTest : public test_support::FakeApiServerTest {
 protected:
  ClientTest() : FakeApiServerTest(kObjects) {}
};

TEST_F(ClientTest, GetAndNotFound) {
  start();
  auto c = client();
  auto node = c->get("/api/v1/nodes/gpu-1", "node gpu-1");
  ASSERT_TRUE(node) << node.error().message;
  EXPECT_THAT(*node, HasSubstr("\"gpu-1\""));
  auto missing = c->get("/api/v1/nodes/nope", "node nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.code(), ApiCode::kNotFound);
  EXPECT_THAT(missing.error().message, HasSubstr("GET node nope: 404 Not Found: "));
  EXPECT_THAT(missing.error().message, HasSubstr("not found"));
}

TEST_F(ClientTest, ListItemsAndResourceVersion) {
  start();
  auto c = client();
  auto body = c->get("/api/v1/nodes");
  ASSERT_TRUE(body) << body.error().message;
  std::vector<std::string> items;
  auto rv = for_each_list_item(*body, [&](std::string_view item) {
    items.emplace_back(item);
    return ok_status();
  });
  ASSERT_TRUE(rv) << rv.error().message;
  EXPECT_EQ(*rv, std::to_string(store.resource_version()));
  ASSERT_EQ(items.size(), 2u);
  EXPECT_THAT(items[0], HasSubstr("gpu-1"));
  // Garbage is an error, not a crash.
  EXPECT_FALSE(
      for_each_list_item("{\"items\":[1,2]}", [](std::string_view) { return ok_status(); }));
  EXPECT_FALSE(for_each_list_item("not json", [](std::string_view) { return ok_status(); }));
}

TEST_F(ClientTest, MergePatchWithPreconditionAndBinding) {
  start();
  auto c = client();
  auto node = store.get(state::Kind::kNode, "", "gpu-1");
  ASSERT_TRUE(node);
  const std::string rv = std::to_string(node->resource_version);
  auto patched = c->merge_patch(
      "/api/v1/nodes/gpu-1",
      R"({"metadata":{"annotations":{"hami.io/mutex.lock":"x"},"resourceVersion":")" + rv + "\"}}",
      "node gpu-1");
  ASSERT_TRUE(patched) << patched.error().message;
  EXPECT_THAT(*patched, HasSubstr("hami.io/mutex.lock"));
  auto stale = c->merge_patch(
      "/api/v1/nodes/gpu-1",
      R"({"metadata":{"annotations":{"b":"2"},"resourceVersion":")" + rv + "\"}}", "node gpu-1");
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.code(), ApiCode::kConflict);
  EXPECT_THAT(stale.error().message, HasSubstr("PATCH node gpu-1: 409 Conflict: "));

  const std::string binding =
      R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1"},"target":{"kind":"Node","name":"gpu-1"}})";
  auto bound = c->post("/api/v1/namespaces/default/pods/p1/binding", binding);
  ASSERT_TRUE(bound) << bound.error().message;
  auto again = c->post("/api/v1/namespaces/default/pods/p1/binding", binding, "binding p1");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.code(), ApiCode::kConflict);
  EXPECT_THAT(again.error().message, HasSubstr("POST binding p1: 409 Conflict: "));
  auto gone = c->post("/api/v1/namespaces/default/pods/zz/binding", binding);
  EXPECT_EQ(gone.code(), ApiCode::kNotFound);
}

TEST_F(ClientTest, StatusCodesMapToApiCodes) {
  start();
  auto c = client();
  const std::vector<std::pair<int, ApiCode>> cases = {
      {400, ApiCode::kInvalid},     {401, ApiCode::kForbidden},   {403, ApiCode::kForbidden},
      {404, ApiCode::kNotFound},    {409, ApiCode::kConflict},    {410, ApiCode::kGone},
      {422, ApiCode::kInvalid},     {429, ApiCode::kUnavailable}, {500, ApiCode::kUnavailable},
      {503, ApiCode::kUnavailable}, {504, ApiCode::kUnavailable}, {418, ApiCode::kOther},
  };
  for (const auto& [status, code] : cases) {
    server->fail_next("GET", "/api/v1/nodes/gpu-1", 1, status);
    auto r = c->get("/api/v1/nodes/gpu-1", "node gpu-1");
    ASSERT_FALSE(r) << status;
    EXPECT_EQ(r.code(), code) << status;
    EXPECT_THAT(r.error().message, HasSubstr("GET node gpu-1: " + std::to_string(status)));
    EXPECT_THAT(r.error().message, HasSubstr("injected failure"));
  }
  EXPECT_TRUE(c->get("/api/v1/nodes/gpu-1"));
}

TEST_F(ClientTest, KeepAliveReusesOneConnection) {
  start();
  auto c = client();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(c->get("/api/v1/nodes/gpu-1"));
  EXPECT_EQ(c->stats().connections_opened, 1u);
  EXPECT_EQ(c->stats().requests, 20u);
  EXPECT_EQ(server->request_count("GET", "/api/v1/nodes/gpu-1"), 20);
}

TEST_F(ClientTest, ConcurrentRequestsUseThePool) {
  start();
  auto c = client();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) ok += c->get("/api/v1/nodes/gpu-2").ok();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 100);
  EXPECT_LE(c->stats().connections_opened, 4u);
}

TEST_F(ClientTest, ConnectionRefusedIsUnavailable) {
  start();
  const std::string url = server->url();
  server->stop();
  KubeConfig config;
  config.server = url;
  auto c = client(config);
  auto r = c->get("/api/v1/nodes");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), ApiCode::kUnavailable);
  EXPECT_THAT(r.error().message, HasSubstr("GET /api/v1/nodes: dial tcp 127.0.0.1:"));
}

TEST_F(ClientTest, TimeoutIsUnavailable) {
  start();
  server->set_delay(1s);
  ClientOptions options;
  options.request_timeout = 100ms;
  auto c = client({}, options);
  auto r = c->get("/api/v1/nodes/gpu-1");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), ApiCode::kUnavailable);
  EXPECT_THAT(r.error().message, HasSubstr("timeout"));
}

TEST_F(ClientTest, RateLimiterRefusesAWaitBeyondTheTimeout) {
  start();
  ClientOptions options;
  options.qps = 0.01;  // one token per 100 s
  options.burst = 1;
  options.request_timeout = 5s;
  auto c = client({}, options);
  ASSERT_TRUE(c->get("/api/v1/nodes/gpu-1"));
  auto r = c->get("/api/v1/nodes/gpu-1");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), ApiCode::kUnavailable);
  EXPECT_THAT(r.error().message, HasSubstr("rate limiter"));
  EXPECT_EQ(server->request_count("GET", "/api/v1/nodes/gpu-1"), 1);
  // Events have a budget of their own, as kube-scheduler's event client does.
  Request event;
  event.verb = "POST";
  event.path = "/api/v1/namespaces/default/events";
  event.body = R"({"metadata":{"name":"e1","namespace":"default"},"reason":"Scheduled"})";
  event.event = true;
  auto sent = c->call(event);
  EXPECT_TRUE(sent) << sent.error().message;
  event.body = R"({"metadata":{"name":"e2","namespace":"default"},"reason":"Scheduled"})";
  auto refused = c->call(event);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message, HasSubstr("rate limiter"));
  // Watches are not rate limited.
  std::atomic<bool> cancel{false};
  WatchRequest w;
  w.path = "/api/v1/nodes";
  w.resource_version = std::to_string(store.resource_version());
  w.timeout_seconds = 1;
  auto st = c->watch(
      w, [](const WatchEventView&) { return true; }, &cancel);
  EXPECT_TRUE(st) << st.error().message;
}

TEST_F(ClientTest, BearerTokenAndTokenFileRotation) {
  FakeApiServerOptions options;
  options.bearer_token = "t1";
  start(options);
  KubeConfig none;
  none.server = server->url();
  auto anonymous = client(none);
  auto denied = anonymous->get("/api/v1/nodes");
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.code(), ApiCode::kForbidden);
  EXPECT_THAT(denied.error().message, HasSubstr("401 Unauthorized"));

  const std::string token_file =
      std::filesystem::temp_directory_path() / ("hamisim-token-" + std::to_string(::getpid()));
  testing::write_file_atomically(token_file, "t1\n");
  KubeConfig with_file;
  with_file.server = server->url();
  with_file.token = "ignored-static";
  with_file.token_file = token_file;
  ClientOptions copts;
  copts.token_refresh = 0ms;  // re-read on every request
  auto c = client(with_file, copts);
  ASSERT_TRUE(c->get("/api/v1/nodes")) << "first token";
  server->set_bearer_token("t2");
  EXPECT_EQ(c->get("/api/v1/nodes").code(), ApiCode::kForbidden);
  testing::write_file_atomically(token_file, "t2");
  EXPECT_TRUE(c->get("/api/v1/nodes")) << "rotated token";
  std::filesystem::remove(token_file);
  EXPECT_TRUE(c->get("/api/v1/nodes")) << "an unreadable file keeps the last token";
}

TEST_F(ClientTest, BasicAuthHeader) {
  start();
  KubeConfig config;
  config.server = server->url();
  config.username = "u";
  config.password = "p";
  auto c = client(config);
  EXPECT_TRUE(c->get("/api/v1/nodes"));
}

class TlsClientTest : public ClientTest {
 protected:
  testing::TestPki pki;
  FakeApiServerOptions tls_options(bool require_cert) {
    FakeApiServerOptions o;
    o.tls = true;
    o.cert_file = pki.server.cert;
    o.key_file = pki.server.key;
    o.client_ca_file = pki.ca.ca_cert();
    o.require_client_cert = require_cert;
    return o;
  }
  KubeConfig tls_config() {
    KubeConfig c;
    c.server = server->url();
    c.ca_pem = read_file(pki.ca.ca_cert());
    c.client_cert_pem = read_file(pki.scheduler.cert);
    c.client_key_pem = read_file(pki.scheduler.key);
    return c;
  }
};

TEST_F(TlsClientTest, MutualTlsVerifiesBothSides) {
  start(tls_options(true));
  auto c = client(tls_config());
  auto r = c->get("/api/v1/nodes/gpu-1");
  ASSERT_TRUE(r) << r.error().message;

  KubeConfig no_cert = tls_config();
  no_cert.client_cert_pem.clear();
  no_cert.client_key_pem.clear();
  auto rejected = client(no_cert)->get("/api/v1/nodes/gpu-1");
  ASSERT_FALSE(rejected);
  EXPECT_EQ(rejected.code(), ApiCode::kUnavailable);

  KubeConfig untrusted = tls_config();
  untrusted.client_cert_pem = read_file(pki.untrusted.cert);
  untrusted.client_key_pem = read_file(pki.untrusted.key);
  EXPECT_FALSE(client(untrusted)->get("/api/v1/nodes/gpu-1"));
}

TEST_F(TlsClientTest, ServerVerification) {
  start(tls_options(false));
  KubeConfig wrong_ca = tls_config();
  wrong_ca.ca_pem = read_file(pki.other_ca.ca_cert());
  auto r = client(wrong_ca)->get("/api/v1/nodes/gpu-1");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), ApiCode::kUnavailable);
  EXPECT_THAT(r.error().message, HasSubstr("certificate verification"));

  KubeConfig wrong_name = tls_config();
  wrong_name.tls_server_name = "not-the-server";
  EXPECT_FALSE(client(wrong_name)->get("/api/v1/nodes/gpu-1"));
  KubeConfig right_name = tls_config();
  right_name.tls_server_name = "localhost";
  EXPECT_TRUE(client(right_name)->get("/api/v1/nodes/gpu-1"));

  KubeConfig insecure;
  insecure.server = server->url();
  insecure.insecure_skip_tls_verify = true;
  EXPECT_TRUE(client(insecure)->get("/api/v1/nodes/gpu-1"));
}

TEST_F(TlsClientTest, ClientCertificateAuthenticatesWithoutToken) {
  FakeApiServerOptions o = tls_options(false);
  o.bearer_token = "secret";
  start(o);
  EXPECT_TRUE(client(tls_config())->get("/api/v1/nodes"));
  KubeConfig token_only = tls_config();
  token_only.client_cert_pem.clear();
  token_only.client_key_pem.clear();
  EXPECT_EQ(client(token_only)->get("/api/v1/nodes").code(), ApiCode::kForbidden);
  token_only.token = "secret";
  EXPECT_TRUE(client(token_only)->get("/api/v1/nodes"));
}

TEST(KubeClientCreate, BadTlsMaterialIsAnError) {
  KubeConfig c;
  c.server = "https://127.0.0.1:1";
  c.ca_pem = "not a certificate";
  auto r = KubeClient::create(c);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("certificate authority"));
  KubeConfig k;
  k.server = "https://127.0.0.1:1";
  k.client_cert_pem = "x";
  k.client_key_pem = "y";
  EXPECT_FALSE(KubeClient::create(k));
  KubeConfig s;
  s.server = "gopher://x";
  EXPECT_FALSE(KubeClient::create(s));
}

// ---- watch ------------------------------------------------------------------------------

struct Collected {
  std::mutex mu;
  std::vector<std::pair<std::string, std::string>> events;  // type, object
  void add(const WatchEventView& e) {
    std::lock_guard lock(mu);
    events.emplace_back(e.type, e.object);
  }
  size_t count(std::string_view type) {
    std::lock_guard lock(mu);
    return std::count_if(events.begin(), events.end(),
                         [&](const auto& e) { return e.first == type; });
  }
};

TEST_F(ClientTest, WatchStreamsChangesAndBookmarks) {
  FakeApiServerOptions o;
  o.bookmark_interval = 20ms;
  start(o);
  auto c = client();
  Collected got;
  std::atomic<bool> cancel{false};
  WatchRequest w;
  w.path = "/api/v1/nodes";
  w.resource_version = std::to_string(store.resource_version());
  w.timeout_seconds = 60;
  auto done = std::async(std::launch::async, [&] {
    return c->watch(
        w,
        [&](const WatchEventView& e) {
          got.add(e);
          return true;
        },
        &cancel);
  });
  ASSERT_TRUE(eventually([&] { return server->open_watches() == 1; }));
  ASSERT_TRUE(store.create(state::Kind::kNode, R"({"metadata":{"name":"gpu-3"}})"));
  ASSERT_TRUE(
      store.merge_patch(state::Kind::kNode, "", "gpu-1", R"({"metadata":{"labels":{"x":"y"}}})"));
  ASSERT_TRUE(store.remove(state::Kind::kNode, "", "gpu-2"));
  ASSERT_TRUE(eventually([&] { return got.count("DELETED") == 1 && got.count("BOOKMARK") > 0; }));
  EXPECT_EQ(got.count("ADDED"), 1u);
  EXPECT_EQ(got.count("MODIFIED"), 1u);
  cancel = true;
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready);
  auto st = done.get();
  ASSERT_FALSE(st);
  EXPECT_THAT(st.error().message, HasSubstr("cancelled"));
  EXPECT_EQ(c->stats().watches, 1u);
  EXPECT_GE(c->stats().watch_events, 4u);
}

TEST_F(ClientTest, WatchFromAnExpiredVersionIsGone) {
  start();
  auto c = client();
  const std::string old = std::to_string(store.resource_version());
  ASSERT_TRUE(store.create(state::Kind::kNode, R"({"metadata":{"name":"gpu-9"}})"));
  store.compact();
  WatchRequest w;
  w.path = "/api/v1/nodes";
  w.resource_version = old;
  w.timeout_seconds = 10;
  auto st = c->watch(w, [](const WatchEventView&) { return true; });
  ASSERT_FALSE(st);
  EXPECT_EQ(st.code(), ApiCode::kGone);
  EXPECT_THAT(st.error().message, HasSubstr("410 Expired"));
  EXPECT_THAT(st.error().message, HasSubstr("too old resource version"));
}

TEST_F(ClientTest, WatchEndsNormallyAtTimeoutAndErrsWhenDropped) {
  start();
  auto c = client();
  WatchRequest w;
  w.path = "/api/v1/nodes";
  w.resource_version = std::to_string(store.resource_version());
  w.timeout_seconds = 1;
  EXPECT_TRUE(c->watch(w, [](const WatchEventView&) { return true; }));

  // The first watch's server side may still be winding down under load: wait for it to be
  // gone and for the second to be open, so the drop below hits the second one.
  ASSERT_TRUE(eventually([&] { return server->open_watches() == 0; }));
  const int started = server->watches_started();
  w.timeout_seconds = 60;
  auto done = std::async(std::launch::async,
                         [&] { return c->watch(w, [](const WatchEventView&) { return true; }); });
  ASSERT_TRUE(eventually(
      [&] { return server->watches_started() == started + 1 && server->open_watches() == 1; }));
  server->drop_watches();
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready);
  auto st = done.get();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.code(), ApiCode::kUnavailable);
}

TEST_F(ClientTest, WatchStartingAtZeroListsFirstAndFieldSelectorFilters) {
  start();
  auto c = client();
  Collected got;
  WatchRequest w;
  w.path = "/api/v1/nodes";
  w.resource_version = "0";
  w.timeout_seconds = 1;
  w.field_selector = "metadata.name=gpu-2";
  ASSERT_TRUE(c->watch(w, [&](const WatchEventView& e) {
    got.add(e);
    return true;
  }));
  ASSERT_EQ(got.count("ADDED"), 1u);
  EXPECT_THAT(got.events[0].second, HasSubstr("gpu-2"));
  EXPECT_THAT(server->request_log().back(), HasSubstr("fieldSelector=metadata.name%3Dgpu-2"));
}

TEST_F(ClientTest, OversizedWatchEventIsAnError) {
  start();
  ClientOptions o;
  o.max_watch_event_bytes = 4096;
  auto c = client({}, o);
  WatchRequest w;
  w.path = "/api/v1/nodes";
  w.resource_version = std::to_string(store.resource_version());
  w.timeout_seconds = 30;
  ASSERT_TRUE(store.merge_patch(
      state::Kind::kNode, "", "gpu-1",
      R"({"metadata":{"annotations":{"big":")" + std::string(10000, 'x') + "\"}}}"));
  auto st = c->watch(w, [](const WatchEventView&) { return true; });
  ASSERT_FALSE(st);
  EXPECT_THAT(st.error().message, HasSubstr("watch event larger than 4096 bytes"));
}

TEST_F(ClientTest, WatchHttpErrorIsMapped) {
  start();
  auto c = client();
  server->fail_next("WATCH", "/api/v1/nodes", 1, 403);
  WatchRequest w;
  w.path = "/api/v1/nodes";
  w.resource_version = "1";
  auto st = c->watch(w, [](const WatchEventView&) { return true; });
  ASSERT_FALSE(st);
  EXPECT_EQ(st.code(), ApiCode::kForbidden);
  EXPECT_THAT(st.error().message, HasSubstr("WATCH /api/v1/nodes: 403 Forbidden: injected"));
}

}  // namespace
}  // namespace hamisim::kube
