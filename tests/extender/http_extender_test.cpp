// The CA-side HTTP extender client: kube-scheduler HTTPExtender semantics over real HTTP(S) on
// loopback (reference §1, §2.1-§2.3).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "extender/extender_url.h"
#include "extender/http_extender.h"
#include "fake_extender.h"
#include "model/decode.h"
#include "test_certs.h"

namespace hamisim::extender {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::RecordedRequest;
using testing::ScriptedExtender;
using namespace std::chrono_literals;

const std::string kPod = R"({"metadata":{"name":"p","namespace":"default"},"spec":{}})";
const std::string kNodeA = R"({"metadata":{"name":"a"},"status":{}})";
const std::string kNodeB = R"({"metadata":{"name":"b"}})";

struct Candidates {
  std::vector<std::string> json;
  std::vector<CandidateNode> nodes;
  Candidates(std::initializer_list<std::pair<std::string, std::string>> list) {
    json.reserve(list.size());
    for (const auto& [name, j] : list) json.push_back(j);
    size_t i = 0;
    names.reserve(list.size());
    for (const auto& [name, j] : list) {
      names.push_back(name);
      nodes.push_back({names.back(), json[i++]});
    }
  }
  std::vector<std::string> names;
  ExtenderArgs request(const SimulatedPods* sim = nullptr) const {
    ExtenderArgs r;
    r.pod_json = kPod;
    r.nodes = nodes;
    r.simulated_pods_json = sim;
    return r;
  }
};

ExtenderConfig config_for(const std::string& url, const std::string& verb = "filter") {
  ExtenderConfig c;
  c.url_prefix = url;
  c.filter_verb = verb;
  return c;
}

std::unique_ptr<HttpExtender> make(const ExtenderConfig& c) {
  auto e = HttpExtender::create(c);
  if (!e) ADD_FAILURE() << e.error().message;
  return e ? std::move(*e) : nullptr;
}

server::HttpResponse json(std::string body, int status = 200) {
  return server::HttpResponse::json(status, std::move(body));
}

// ---- URL join ---------------------------------------------------------------------------

TEST(ExtenderUrl, JoinsAsKubeSchedulerDoes) {
  EXPECT_EQ(join_extender_url("http://127.0.0.1:80", "filter"), "http://127.0.0.1:80/filter");
  EXPECT_EQ(join_extender_url("http://127.0.0.1:80/", "filter"), "http://127.0.0.1:80/filter");
  EXPECT_EQ(join_extender_url("http://h//", "filter"), "http://h/filter");
  EXPECT_EQ(join_extender_url("https://h/api/v1/", "scheduler/predicates"),
            "https://h/api/v1/scheduler/predicates");
  EXPECT_EQ(join_extender_url("http://h", ""), "http://h/");
}

TEST(ExtenderUrl, ParsesWhatTheClientNeeds) {
  auto u = parse_extender_url("http://127.0.0.1:8080/a/filter");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->scheme, "http");
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->target, "/a/filter");
  EXPECT_EQ(u->host_header, "127.0.0.1:8080");

  u = parse_extender_url("HTTPS://hami.kube-system.svc/filter?x=1");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->scheme, "https");
  EXPECT_EQ(u->port, 443);
  EXPECT_FALSE(u->explicit_port);
  EXPECT_EQ(u->target, "/filter?x=1");

  u = parse_extender_url("http://[::1]:9/");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 9);
  EXPECT_EQ(u->host_header, "[::1]:9");

  for (const char* bad : {"h:80", "ftp://h", "http://", "http://u@h/", "http://h:0/",
                          "http://h:99999", "http://h:x/", "http://[::1/", "http://h/#f"}) {
    EXPECT_FALSE(parse_extender_url(bad)) << bad;
  }
}

// ---- wire format --------------------------------------------------------------------------

TEST(EncodeFilterArgs, NodesModeSendsTheNodeListAndNullNodeNames) {
  Candidates c{{"a", kNodeA}, {"b", kNodeB}};
  EXPECT_EQ(encode_extender_args(c.request(), false),
            "{\"Pod\":" + kPod + ",\"Nodes\":{\"metadata\":{},\"items\":[" + kNodeA + "," + kNodeB +
                "]},\"NodeNames\":null}");
}

TEST(EncodeFilterArgs, NodeCacheCapableSendsNamesOnly) {
  Candidates c{{"a", kNodeA}, {"b", kNodeB}};
  EXPECT_EQ(encode_extender_args(c.request(), true),
            "{\"Pod\":" + kPod + ",\"Nodes\":null,\"NodeNames\":[\"a\",\"b\"]}");
}

TEST(EncodeFilterArgs, SimulatedPodsExtensionIsSentSortedWhenGiven) {
  Candidates c{{"a", kNodeA}};
  SimulatedPods sim;
  sim["z"] = {"{\"metadata\":{\"name\":\"p2\"}}"};
  sim["a"] = {"{\"metadata\":{\"name\":\"p1\"}}", "{}"};
  EXPECT_THAT(encode_extender_args(c.request(&sim), false),
              HasSubstr(",\"NodeNames\":null,\"SimulatedPods\":{\"a\":[{\"metadata\":{\"name\":"
                        "\"p1\"}},{}],\"z\":[{\"metadata\":{\"name\":\"p2\"}}]}}"));
  SimulatedPods empty;
  EXPECT_THAT(encode_extender_args(c.request(&empty), false), Not(HasSubstr("SimulatedPods")));
}

// ---- result rules (§2.3) ----------------------------------------------------------------

TEST(DecodeFilterResult, KeysMatchCaseInsensitivelyAndUnknownKeysAreIgnored) {
  Candidates c{{"a", kNodeA}, {"b", kNodeB}};
  auto r = decode_filter_result(
      R"({"nodes":{"METADATA":{},"Items":[{"Metadata":{"NAME":"b"}}]},"failednodes":{"a":"x"},
          "FAILEDANDUNRESOLVABLENODES":{"c":"y"},"error":"","Surprise":[1,2,{}]})",
      c.request(), false, "http://e");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_THAT(r->passed, ElementsAre("b"));
  EXPECT_THAT(r->passed_json, ElementsAre(R"({"Metadata":{"NAME":"b"}})"));
  EXPECT_EQ(r->failed_nodes.at("a"), "x");
  EXPECT_EQ(r->failed_and_unresolvable_nodes.at("c"), "y");
}

TEST(DecodeFilterResult, NodeNamesMustBeASubsetOfTheInputWhenNodeCacheCapable) {
  Candidates c{{"a", kNodeA}, {"b", kNodeB}};
  auto ok = decode_filter_result(R"({"Nodes":null,"NodeNames":["b","b"]})", c.request(), true,
                                 "http://e");
  ASSERT_TRUE(ok);
  EXPECT_THAT(ok->passed, ElementsAre("b"));
  EXPECT_THAT(ok->passed_json, IsEmpty());
  auto bad = decode_filter_result(R"({"NodeNames":["a","ghost"]})", c.request(), true, "http://e");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "extender \"http://e\" claims a filtered node \"ghost\" which is not found in the "
            "input node list");
}

TEST(DecodeFilterResult, NodesModeReadsNodesAndIgnoresNodeNames) {
  Candidates c{{"a", kNodeA}, {"b", kNodeB}};
  // HAMi answers a pod without device requests with {NodeNames: args.NodeNames}: null here.
  auto r = decode_filter_result(R"({"Nodes":null,"NodeNames":["a"]})", c.request(), false, "e");
  ASSERT_TRUE(r);
  EXPECT_THAT(r->passed, IsEmpty());
  // nodeCacheCapable with NodeNames null falls back to Nodes.
  auto fallback = decode_filter_result(R"({"Nodes":{"items":[{"metadata":{"name":"a"}}]}})",
                                       c.request(), true, "e");
  ASSERT_TRUE(fallback);
  EXPECT_THAT(fallback->passed, ElementsAre("a"));
}

TEST(DecodeFilterResult, NeitherListMeansEveryNodeIsFilteredOut) {
  Candidates c{{"a", kNodeA}};
  for (const char* body :
       {"{}", "null", R"({"Nodes":null,"NodeNames":null})", R"({"Nodes":{"metadata":{}}})"}) {
    auto r = decode_filter_result(body, c.request(), false, "e");
    ASSERT_TRUE(r) << body << ": " << r.error().message;
    EXPECT_THAT(r->passed, IsEmpty()) << body;
  }
}

TEST(DecodeFilterResult, ErrorFieldIsTheError) {
  Candidates c{{"a", kNodeA}};
  auto r = decode_filter_result(
      R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":"calcScore failed"})",
      c.request(), false, "e");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "calcScore failed");
}

TEST(DecodeFilterResult, ExtensionsAreKept) {
  Candidates c{{"a", kNodeA}};
  auto r = decode_filter_result(
      R"({"Nodes":{"metadata":{},"items":[{"metadata":{"name":"a"}}]},"Error":"",
          "Allocations":{"a":{"hami.io/vgpu-devices-allocated":"GPU-0,NVIDIA,300,40:;"}},
          "Diagnostics":{"a":{"Class":"Fits","Reason":"","DeviceSource":"annotation","Profile":"","More":1}}})",
      c.request(), false, "e");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->allocations.at("a").at("hami.io/vgpu-devices-allocated"), "GPU-0,NVIDIA,300,40:;");
  EXPECT_EQ(r->diagnostics.at("a").fit_class, "Fits");
  EXPECT_EQ(r->diagnostics.at("a").device_source, "annotation");
}

TEST(DecodeFilterResult, MalformedBodiesAreErrors) {
  Candidates c{{"a", kNodeA}};
  for (const char* body : {"garbage", "", "[1]", R"({"Nodes":"a"})", R"({"NodeNames":[1]})",
                           R"({"FailedNodes":{"a":1}})", R"({"Error":5})",
                           R"({"Nodes":{"items":[5]}})", R"({"Allocations":[]})", "{\"Nodes\":"}) {
    EXPECT_FALSE(decode_filter_result(body, c.request(), false, "e")) << body;
  }
}

// ---- interest (§2.2) ------------------------------------------------------------------------

model::Pod pod(const std::string& json) {
  auto p = model::decode_pod_json(json);
  EXPECT_TRUE(p) << p.error().message;
  return p ? *p : model::Pod{};
}

TEST(IsInterested, FollowsKubeScheduler) {
  const std::set<std::string, std::less<>> managed = {"nvidia.com/gpumem"};
  EXPECT_TRUE(is_interested(pod(R"({"spec":{"containers":[{"name":"c"}]}})"), {}));
  EXPECT_FALSE(is_interested(pod(R"({"spec":{"containers":[{"name":"c"}]}})"), managed));
  EXPECT_TRUE(is_interested(
      pod(R"({"spec":{"containers":[{"resources":{"requests":{"nvidia.com/gpumem":"1"}}}]}})"),
      managed));
  EXPECT_TRUE(is_interested(
      pod(R"({"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpumem":"0"}}}]}})"),
      managed));
  EXPECT_TRUE(is_interested(
      pod(R"({"spec":{"containers":[{"resources":{}}],"initContainers":[{"resources":{"limits":{"nvidia.com/gpumem":"2"}}}]}})"),
      managed));
  EXPECT_FALSE(is_interested(
      pod(R"({"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1","cpu":"1"}}}],"overhead":{"nvidia.com/gpumem":"1"}}})"),
      managed));
}

// ---- over HTTP ------------------------------------------------------------------------------

TEST(HttpExtender, PostsArgsToUrlPrefixPlusVerb) {
  ScriptedExtender fake({{"/api/scheduler/predicates", [](const server::HttpRequest&) {
                            return json(testing::nodes_result({"b"}, R"({"a":"no"})"));
                          }}});
  auto ext = make(config_for(fake.url() + "/api/", "scheduler/predicates"));
  ASSERT_TRUE(ext);
  EXPECT_EQ(ext->filter_url(), fake.url() + "/api/scheduler/predicates");
  Candidates c{{"a", kNodeA}, {"b", kNodeB}};
  auto r = ext->filter(c.request());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->called);
  EXPECT_THAT(r->passed, ElementsAre("b"));
  EXPECT_EQ(r->failed_nodes.at("a"), "no");
  auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/api/scheduler/predicates");
  EXPECT_EQ(requests[0].content_type, "application/json");
  EXPECT_EQ(requests[0].host, "127.0.0.1:" + std::to_string(fake.port()));
  EXPECT_EQ(requests[0].body, encode_extender_args(c.request(), false));
}

TEST(HttpExtender, WithoutFilterVerbNothingIsSent) {
  ScriptedExtender fake({});
  auto ext = make(config_for(fake.url(), ""));
  Candidates c{{"a", kNodeA}, {"b", kNodeB}};
  auto r = ext->filter(c.request());
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->called);
  EXPECT_THAT(r->passed, ElementsAre("a", "b"));
  EXPECT_EQ(fake.calls(), 0);
}

TEST(HttpExtender, Non200IsAnErrorWithTheCode) {
  ScriptedExtender fake(
      {{"/filter", [](const server::HttpRequest&) { return json("{\"Error\":\"\"}", 503); }}});
  auto ext = make(config_for(fake.url()));
  Candidates c{{"a", kNodeA}};
  auto r = ext->filter(c.request());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "failed filter with extender at URL " + fake.url() + "/filter, code 503");
}

TEST(HttpExtender, UnknownPathIsA404Error) {
  ScriptedExtender fake({});
  auto ext = make(config_for(fake.url(), "nope"));
  Candidates c{{"a", kNodeA}};
  auto r = ext->filter(c.request());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr(", code 404"));
}

TEST(HttpExtender, GarbageJsonIsADecodeError) {
  ScriptedExtender fake(
      {{"/filter", [](const server::HttpRequest&) { return json("<html>oops</html>"); }}});
  auto ext = make(config_for(fake.url()));
  Candidates c{{"a", kNodeA}};
  auto r = ext->filter(c.request());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("failed to decode filter response from extender at "
                                           "URL " +
                                           fake.url() + "/filter"));
}

TEST(HttpExtender, TimeoutCoversTheWholeExchange) {
  ScriptedExtender fake({{"/filter", [](const server::HttpRequest&) {
                            std::this_thread::sleep_for(1s);
                            return json(testing::nodes_result({"a"}));
                          }}});
  auto cfg = config_for(fake.url());
  cfg.http_timeout = 200ms;
  auto ext = make(cfg);
  Candidates c{{"a", kNodeA}};
  auto r = ext->filter(c.request());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "Post \"" + fake.url() + "/filter\": timeout after 200ms (Client.Timeout exceeded)");
}

TEST(HttpExtender, ConnectionRefusedIsATransportError) {
  uint16_t port = 0;
  {
    ScriptedExtender gone({});
    port = gone.port();
  }
  auto ext = make(config_for("http://127.0.0.1:" + std::to_string(port)));
  Candidates c{{"a", kNodeA}};
  auto r = ext->filter(c.request());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message,
              HasSubstr("Post \"http://127.0.0.1:" + std::to_string(port) + "/filter\": dial tcp"));
}

TEST(HttpExtender, KeepsTheConnectionAlive) {
  ScriptedExtender fake(
      {{"/filter", [](const server::HttpRequest&) { return json(testing::nodes_result({"a"})); }}});
  auto ext = make(config_for(fake.url()));
  Candidates c{{"a", kNodeA}};
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(ext->filter(c.request()));
  EXPECT_EQ(ext->stats().connections_opened, 1u);
  EXPECT_EQ(ext->stats().requests, 5u);
}

TEST(HttpExtender, ReplacesAKeptAliveConnectionTheServerClosed) {
  server::ServerConfig config;
  config.idle_timeout = 50ms;
  ScriptedExtender fake(
      {{"/filter", [](const server::HttpRequest&) { return json(testing::nodes_result({"a"})); }}},
      config);
  auto ext = make(config_for(fake.url()));
  Candidates c{{"a", kNodeA}};
  ASSERT_TRUE(ext->filter(c.request()));
  std::this_thread::sleep_for(300ms);  // the server drops the idle connection
  auto r = ext->filter(c.request());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_THAT(r->passed, ElementsAre("a"));
  EXPECT_EQ(fake.calls(), 2);
}

TEST(HttpExtender, ConcurrentCallsAreSafe) {
  ScriptedExtender fake(
      {{"/filter", [](const server::HttpRequest&) { return json(testing::nodes_result({"a"})); }}});
  auto ext = make(config_for(fake.url()));
  Candidates c{{"a", kNodeA}};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        auto r = ext->filter(c.request());
        if (!r || r->passed.size() != 1) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(fake.calls(), 40);
}

// ---- TLS (§2.1) ---------------------------------------------------------------------------

class HttpExtenderTls : public ::testing::Test {
 protected:
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  server::ServerConfig server_config(bool mtls = false) const {
    server::ServerConfig config;
    config.tls_cert = pki_.server.cert;
    config.tls_key = pki_.server.key;
    if (mtls) config.client_ca = pki_.ca.ca_cert();
    return config;
  }
  std::unique_ptr<ScriptedExtender> serve(bool mtls = false) const {
    return std::make_unique<ScriptedExtender>(
        std::vector<std::pair<std::string, ScriptedExtender::Script>>{
            {"/filter",
             [](const server::HttpRequest&) { return json(testing::nodes_result({"a"})); }}},
        server_config(mtls));
  }
  Result<FilterResult> call(const ExtenderConfig& cfg) const {
    auto ext = HttpExtender::create(cfg);
    if (!ext) return ext.error();
    Candidates c{{"a", kNodeA}};
    return (*ext)->filter(c.request());
  }
  hamisim::testing::TestPki pki_;
};

TEST_F(HttpExtenderTls, CaFileVerifiesTheServer) {
  auto fake = serve();
  auto cfg = config_for(fake->url("https"));
  cfg.tls_config.emplace();
  cfg.tls_config->ca_file = pki_.ca.ca_cert();
  auto ext = make(cfg);
  EXPECT_FALSE(ext->tls_verification_skipped());
  auto r = call(cfg);
  EXPECT_TRUE(r) << r.error().message;
}

TEST_F(HttpExtenderTls, CaDataWinsOverCaFile) {
  auto fake = serve();
  auto cfg = config_for(fake->url("https"));
  cfg.tls_config.emplace();
  cfg.tls_config->ca_data = read(pki_.ca.ca_cert());
  cfg.tls_config->ca_file = "/nonexistent/ca.crt";
  auto r = call(cfg);
  EXPECT_TRUE(r) << r.error().message;
}

TEST_F(HttpExtenderTls, WrongCaFailsTheHandshake) {
  auto fake = serve();
  hamisim::testing::TestCa stranger("stranger-ca");
  auto cfg = config_for(fake->url("https"));
  cfg.tls_config.emplace();
  cfg.tls_config->ca_file = stranger.ca_cert();
  auto r = call(cfg);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("TLS handshake"));
}

TEST_F(HttpExtenderTls, EnableHttpsWithoutCaSkipsVerification) {
  auto fake = serve();
  auto cfg = config_for(fake->url("https"));
  cfg.enable_https = true;
  auto ext = make(cfg);
  EXPECT_TRUE(ext->tls_verification_skipped());
  EXPECT_THAT(ext->warnings(), ElementsAre(HasSubstr("not verified")));
  auto r = call(cfg);
  EXPECT_TRUE(r) << r.error().message;
}

TEST_F(HttpExtenderTls, InsecureSkipsVerification) {
  auto fake = serve();
  auto cfg = config_for(fake->url("https"));
  cfg.tls_config.emplace();
  cfg.tls_config->insecure = true;
  cfg.tls_config->server_name = "not-the-server";
  EXPECT_TRUE(make(cfg)->tls_verification_skipped());
  auto r = call(cfg);
  EXPECT_TRUE(r) << r.error().message;
}

TEST_F(HttpExtenderTls, HttpsWithoutCaOrEnableHttpsUsesSystemRoots) {
  auto fake = serve();
  auto cfg = config_for(fake->url("https"));  // the test CA is in no system store
  EXPECT_FALSE(make(cfg)->tls_verification_skipped());
  auto r = call(cfg);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("TLS handshake"));
}

TEST_F(HttpExtenderTls, InsecureWithCaIsRefused) {
  auto cfg = config_for("https://127.0.0.1:1");
  cfg.tls_config.emplace();
  cfg.tls_config->insecure = true;
  cfg.tls_config->ca_file = pki_.ca.ca_cert();
  auto ext = HttpExtender::create(cfg);
  ASSERT_FALSE(ext);
  EXPECT_THAT(ext.error().message, HasSubstr("insecure flag is not allowed"));
}

TEST_F(HttpExtenderTls, ServerNameOverridesTheVerifiedName) {
  auto fake = serve();
  auto cfg = config_for(fake->url("https"));  // https://127.0.0.1:port
  cfg.tls_config.emplace();
  cfg.tls_config->ca_file = pki_.ca.ca_cert();
  cfg.tls_config->server_name = "localhost";  // a DNS SAN of the server certificate
  auto ok = call(cfg);
  EXPECT_TRUE(ok) << ok.error().message;
  cfg.tls_config->server_name = "hami.example.com";  // not in the certificate
  auto bad = call(cfg);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("TLS handshake"));
}

TEST_F(HttpExtenderTls, ClientCertificateFilesForMutualTls) {
  auto fake = serve(/*mtls=*/true);
  auto cfg = config_for(fake->url("https"));
  cfg.tls_config.emplace();
  cfg.tls_config->ca_file = pki_.ca.ca_cert();
  auto anonymous = call(cfg);
  EXPECT_FALSE(anonymous);
  cfg.tls_config->cert_file = pki_.autoscaler.cert;
  cfg.tls_config->key_file = pki_.autoscaler.key;
  auto r = call(cfg);
  EXPECT_TRUE(r) << r.error().message;
  cfg.tls_config->cert_file = pki_.untrusted.cert;
  cfg.tls_config->key_file = pki_.untrusted.key;
  EXPECT_FALSE(call(cfg));
}

TEST_F(HttpExtenderTls, ClientCertificateDataForMutualTls) {
  auto fake = serve(/*mtls=*/true);
  auto cfg = config_for(fake->url("https"));
  cfg.tls_config.emplace();
  cfg.tls_config->ca_data = read(pki_.ca.ca_cert());
  cfg.tls_config->cert_data = read(pki_.autoscaler.cert);
  cfg.tls_config->key_data = read(pki_.autoscaler.key);
  auto r = call(cfg);
  EXPECT_TRUE(r) << r.error().message;
}

TEST_F(HttpExtenderTls, BadTlsMaterialFailsCreation) {
  auto cfg = config_for("https://127.0.0.1:1");
  cfg.tls_config.emplace();
  cfg.tls_config->ca_file = "/nonexistent/ca.crt";
  EXPECT_FALSE(HttpExtender::create(cfg));
  cfg.tls_config->ca_file.clear();
  cfg.tls_config->cert_file = pki_.autoscaler.cert;
  EXPECT_FALSE(HttpExtender::create(cfg));        // no key
  cfg.tls_config->key_file = pki_.scheduler.key;  // another certificate's key
  auto mismatch = HttpExtender::create(cfg);
  ASSERT_FALSE(mismatch);
  EXPECT_THAT(mismatch.error().message, HasSubstr("tlsConfig.keyFile"));
}

}  // namespace
}  // namespace hamisim::extender
