// The HTTP client transport over real loopback connections: a scripted plain server for the
// wire details (headers, keep-alive, limits, deadlines, cancellation, streams), the fake API
// server for TLS (verification, server names, client certificates), and a loopback proxy.
#include "http/client_transport.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "fake_apiserver.h"
#include "scripted_server.h"
#include "state/object_store.h"
#include "test_certs.h"
#include "test_proxy.h"

namespace hamisim::http {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using testing::Reply;
using testing::response;
using testing::ScriptedServer;
using testing::SeenRequest;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Endpoint loopback(uint16_t port) {
  return Endpoint{"127.0.0.1", port, "127.0.0.1:" + std::to_string(port)};
}

Request get(std::string_view target) {
  Request r;
  r.method = "GET";
  r.target = target;
  return r;
}

Clock::time_point in(std::chrono::milliseconds d) {
  return Clock::now() + d;
}

ScriptedServer::Script always(int status, std::string body) {
  return [=](const SeenRequest&) { return Reply{response(status, body)}; };
}

// ---- requests over plain HTTP -------------------------------------------------------------

TEST(ClientTransport, SendsHostUserAgentHeadersAndBody) {
  ScriptedServer server(always(201, "created"));
  TransportOptions options;
  options.user_agent = "transport-test";
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, options);
  Request r;
  r.method = "POST";
  r.target = "/things?x=1";
  r.headers = {{"Accept", "application/json"}, {"Authorization", "Bearer t"}};
  r.content_type = "application/merge-patch+json";
  r.body = R"({"a":1})";
  RoundTrip trip = transport.round_trip(r, in(5s));
  ASSERT_TRUE(trip.ok()) << trip.failure.message;
  EXPECT_EQ(trip.response->status, 201);
  EXPECT_EQ(trip.response->body, "created");
  const auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_THAT(seen[0].head, HasSubstr("POST /things?x=1 HTTP/1.1\r\n"));
  EXPECT_THAT(seen[0].head, HasSubstr("Host: 127.0.0.1:" + std::to_string(server.port())));
  EXPECT_THAT(seen[0].head, HasSubstr("User-Agent: transport-test"));
  EXPECT_THAT(seen[0].head, HasSubstr("Accept: application/json"));
  EXPECT_THAT(seen[0].head, HasSubstr("Authorization: Bearer t"));
  EXPECT_THAT(seen[0].head, HasSubstr("Content-Type: application/merge-patch+json"));
  EXPECT_EQ(seen[0].body, R"({"a":1})");
}

TEST(ClientTransport, AGetWithoutContentTypeSendsNoBody) {
  ScriptedServer server(always(200, "ok"));
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, {});
  ASSERT_TRUE(transport.round_trip(get("/x"), in(5s)).ok());
  const auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_THAT(seen[0].head, ::testing::Not(HasSubstr("Content-")));
}

TEST(ClientTransport, AnyStatusIsAResponse) {
  ScriptedServer server(always(503, "busy"));
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, {});
  RoundTrip trip = transport.round_trip(get("/x"), in(5s));
  ASSERT_TRUE(trip.ok());
  EXPECT_EQ(trip.response->status, 503);
  EXPECT_EQ(trip.response->body, "busy");
}

TEST(ClientTransport, KeepAliveReusesOneConnection) {
  ScriptedServer server(always(200, "ok"));
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, {});
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(transport.round_trip(get("/x"), in(5s)).ok());
  EXPECT_EQ(server.connections(), 1);
  EXPECT_EQ(transport.stats().connections_opened, 1u);
  EXPECT_EQ(transport.stats().exchanges, 3u);
}

TEST(ClientTransport, AConnectionTheServerClosesIsNotReused) {
  ScriptedServer server([](const SeenRequest&) {
    return Reply{response(200, "ok", "Connection: close\r\n"), {}, true};
  });
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, {});
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(transport.round_trip(get("/x"), in(5s)).ok());
  EXPECT_EQ(server.connections(), 2);
}

TEST(ClientTransport, AnIdleConnectionClosedByTheServerIsReplacedOnce) {
  // The server answers keep-alive, then closes the connection without a word.
  ScriptedServer server([](const SeenRequest&) { return Reply{response(200, "ok"), {}, true}; });
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, {});
  ASSERT_TRUE(transport.round_trip(get("/x"), in(5s)).ok());
  std::this_thread::sleep_for(50ms);  // the close reaches the client
  RoundTrip second = transport.round_trip(get("/x"), in(5s));
  ASSERT_TRUE(second.ok()) << second.failure.message;
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(ClientTransport, ThePoolKeepsAtMostMaxIdleConnections) {
  ScriptedServer server([](const SeenRequest&) { return Reply{response(200, "ok"), 100ms}; });
  TransportOptions options;
  options.max_idle_connections = 1;
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, options);
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&] { EXPECT_TRUE(transport.round_trip(get("/x"), in(5s)).ok()); });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(transport.stats().connections_opened, 3u);
  ASSERT_TRUE(transport.round_trip(get("/x"), in(5s)).ok());
  ASSERT_TRUE(transport.round_trip(get("/x"), in(5s)).ok());
  EXPECT_EQ(transport.stats().connections_opened, 3u);  // the one kept serves both
}

TEST(ClientTransport, ABodyBeyondTheLimitIsABodyLimitFailure) {
  ScriptedServer server(always(200, std::string(2000, 'x')));
  TransportOptions options;
  options.max_response_bytes = 1000;
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, options);
  RoundTrip trip = transport.round_trip(get("/x"), in(5s));
  ASSERT_FALSE(trip.ok());
  EXPECT_EQ(trip.failure.why, Failure::Why::kBodyLimit);
  EXPECT_EQ(trip.failure.stage, Failure::Stage::kRead);
  EXPECT_EQ(trip.failure.message, "read: body limit exceeded");
}

TEST(ClientTransport, HeadersBeyondTheLimitAreAnError) {
  ScriptedServer server([](const SeenRequest&) {
    return Reply{response(200, "ok", "X-Big: " + std::string(200, 'b') + "\r\n")};
  });
  TransportOptions options;
  options.max_header_bytes = 64;
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, options);
  RoundTrip trip = transport.round_trip(get("/x"), in(5s));
  ASSERT_FALSE(trip.ok());
  EXPECT_EQ(trip.failure.why, Failure::Why::kError);
  EXPECT_EQ(trip.failure.message, "read: header limit exceeded");
}

TEST(ClientTransport, ASilentServerRunsIntoTheDeadline) {
  ScriptedServer server([](const SeenRequest&) { return Reply{{}, 10s}; });
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, {});
  const auto start = Clock::now();
  RoundTrip trip = transport.round_trip(get("/x"), in(200ms));
  ASSERT_FALSE(trip.ok());
  EXPECT_EQ(trip.failure.why, Failure::Why::kTimeout);
  EXPECT_EQ(trip.failure.stage, Failure::Stage::kRead);
  EXPECT_LT(Clock::now() - start, 3s);
}

TEST(ClientTransport, APassedDeadlineFailsBeforeDialling) {
  ScriptedServer server(always(200, "ok"));
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, {});
  RoundTrip trip = transport.round_trip(get("/x"), Clock::now() - 1ms);
  ASSERT_FALSE(trip.ok());
  EXPECT_EQ(trip.failure.why, Failure::Why::kTimeout);
  EXPECT_EQ(trip.failure.stage, Failure::Stage::kConnect);
  EXPECT_EQ(server.connections(), 0);
}

TEST(ClientTransport, CancellingAbandonsTheExchange) {
  ScriptedServer server([](const SeenRequest&) { return Reply{{}, 10s}; });
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, {});
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(100ms);
    cancel = true;
  });
  const auto start = Clock::now();
  RoundTrip trip = transport.round_trip(get("/x"), in(20s), &cancel);
  canceller.join();
  ASSERT_FALSE(trip.ok());
  EXPECT_EQ(trip.failure.why, Failure::Why::kCancelled);
  EXPECT_LT(Clock::now() - start, 5s);
}

TEST(ClientTransport, ARefusedConnectionNamesThePeer) {
  uint16_t port;
  {
    ScriptedServer gone(always(200, "ok"));
    port = gone.port();
  }
  ClientTransport transport(loopback(port), std::nullopt, std::nullopt, {});
  RoundTrip trip = transport.round_trip(get("/x"), in(5s));
  ASSERT_FALSE(trip.ok());
  EXPECT_EQ(trip.failure.stage, Failure::Stage::kConnect);
  EXPECT_EQ(trip.failure.why, Failure::Why::kError);
  EXPECT_THAT(trip.failure.message, HasSubstr("dial tcp 127.0.0.1:" + std::to_string(port) + ": "));
  EXPECT_EQ(transport.stats().connections_opened, 1u);
}

TEST(ClientTransport, AnUnknownHostFailsTheLookup) {
  ClientTransport transport(Endpoint{"name.invalid", 80, "name.invalid"}, std::nullopt,
                            std::nullopt, {});
  RoundTrip trip = transport.round_trip(get("/x"), in(10s));
  ASSERT_FALSE(trip.ok());
  EXPECT_THAT(trip.failure.message, HasSubstr("dial tcp: lookup name.invalid: "));
}

// ---- streams ------------------------------------------------------------------------------

TEST(ResponseStream, ReadsAChunkedBodyPieceByPieceToItsEnd) {
  ScriptedServer server([](const SeenRequest&) {
    return Reply{
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        "6\r\nline1\n\r\n6\r\nline2\n\r\n0\r\n\r\n"};
  });
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, {});
  auto opened = transport.open_stream(get("/watch"), in(5s));
  ASSERT_TRUE(opened.stream) << opened.failure.message;
  EXPECT_EQ(opened.stream->status(), 200);
  std::string body;
  std::vector<char> buf(4);
  while (!opened.stream->done()) {
    auto read = opened.stream->read_some(buf, in(5s), nullptr);
    ASSERT_TRUE(read.result == ResponseStream::Read::Result::kData) << read.message;
    body.append(buf.data(), read.bytes);
  }
  EXPECT_EQ(body, "line1\nline2\n");
  const auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_THAT(seen[0].head, HasSubstr("Connection: close"));
}

TEST(ResponseStream, ASilentStreamTimesOutAndAClosedOneEnds) {
  ScriptedServer server([](const SeenRequest& r) {
    const bool closes = r.head.find("/closes") != std::string::npos;
    return Reply{"HTTP/1.1 200 OK\r\n\r\nsome", {}, closes};
  });
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, {});
  std::vector<char> buf(64);
  auto silent = transport.open_stream(get("/silent"), in(5s));
  ASSERT_TRUE(silent.stream);
  auto first = silent.stream->read_some(buf, in(5s), nullptr);
  EXPECT_EQ(std::string(buf.data(), first.bytes), "some");
  auto timeout = silent.stream->read_some(buf, in(100ms), nullptr);
  EXPECT_EQ(timeout.result, ResponseStream::Read::Result::kTimeout);

  auto closes = transport.open_stream(get("/closes"), in(5s));
  ASSERT_TRUE(closes.stream);
  std::string body;
  // Without a Content-Length the body ends where the server closes the connection.
  while (!closes.stream->done()) {
    auto read = closes.stream->read_some(buf, in(5s), nullptr);
    ASSERT_EQ(read.result, ResponseStream::Read::Result::kData) << read.message;
    body.append(buf.data(), read.bytes);
  }
  EXPECT_EQ(body, "some");
}

TEST(ResponseStream, CancellingAReadReturnsCancelled) {
  ScriptedServer server([](const SeenRequest&) { return Reply{"HTTP/1.1 200 OK\r\n\r\n"}; });
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, {});
  auto opened = transport.open_stream(get("/watch"), in(5s));
  ASSERT_TRUE(opened.stream);
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(100ms);
    cancel = true;
  });
  std::vector<char> buf(64);
  auto read = opened.stream->read_some(buf, in(20s), &cancel);
  canceller.join();
  EXPECT_EQ(read.result, ResponseStream::Read::Result::kCancelled);
}

TEST(ResponseStream, AnErrorStatusIsAStreamToo) {
  ScriptedServer server(always(410, "gone"));
  ClientTransport transport(loopback(server.port()), std::nullopt, std::nullopt, {});
  auto opened = transport.open_stream(get("/watch"), in(5s));
  ASSERT_TRUE(opened.stream);
  EXPECT_EQ(opened.stream->status(), 410);
}

// ---- TLS ----------------------------------------------------------------------------------

constexpr const char* kNode = R"({"kind":"List","items":[
  {"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-1"}}]})";

class TlsTransportTest : public ::testing::Test {
 protected:
  void start(bool require_client_cert = false) {
    ASSERT_TRUE(store.load(kNode));
    hamisim::testing::FakeApiServerOptions o;
    o.tls = true;
    o.cert_file = pki.server.cert;
    o.key_file = pki.server.key;
    o.client_ca_file = pki.ca.ca_cert();
    o.require_client_cert = require_client_cert;
    server = std::make_unique<hamisim::testing::FakeApiServer>(store, o);
    ASSERT_TRUE(server->start());
  }
  TlsSettings trusting(const std::string& ca_file) {
    TlsSettings tls;
    EXPECT_TRUE(tls.trust_pem(read_file(ca_file)));
    return tls;
  }
  RoundTrip node(ClientTransport& t, const ConnectionCertificate* cert = nullptr) {
    return t.round_trip(get("/api/v1/nodes/gpu-1"), in(5s), nullptr, cert);
  }
  hamisim::testing::TestPki pki;
  state::ObjectStore store;
  std::unique_ptr<hamisim::testing::FakeApiServer> server;
};

TEST_F(TlsTransportTest, VerifiesTheServerAgainstTheTrustedCa) {
  start();
  ClientTransport good(loopback(server->port()), std::nullopt, trusting(pki.ca.ca_cert()), {});
  RoundTrip ok = node(good);
  ASSERT_TRUE(ok.ok()) << ok.failure.message;
  EXPECT_EQ(ok.response->status, 200);

  ClientTransport wrong_ca(loopback(server->port()), std::nullopt, trusting(pki.other_ca.ca_cert()),
                           {});
  RoundTrip bad = node(wrong_ca);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.failure.stage, Failure::Stage::kConnect);
  EXPECT_THAT(bad.failure.message,
              HasSubstr("TLS handshake with 127.0.0.1:" + std::to_string(server->port()) + ": "));
  EXPECT_THAT(bad.failure.message, HasSubstr("(certificate verification: "));
}

TEST_F(TlsTransportTest, TheServerNameOverridesTheNameVerified) {
  start();
  TlsSettings localhost = trusting(pki.ca.ca_cert());
  localhost.set_server_name("localhost");  // in the certificate
  ClientTransport named(loopback(server->port()), std::nullopt, std::move(localhost), {});
  EXPECT_TRUE(node(named).ok());

  TlsSettings other = trusting(pki.ca.ca_cert());
  other.set_server_name("elsewhere.example");  // not in it
  ClientTransport misnamed(loopback(server->port()), std::nullopt, std::move(other), {});
  RoundTrip bad = node(misnamed);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.failure.message, HasSubstr("certificate verification"));
}

TEST_F(TlsTransportTest, SkippingVerificationAcceptsAnyServer) {
  start();
  TlsSettings insecure;
  insecure.skip_verification();
  EXPECT_FALSE(insecure.verifies());
  ClientTransport transport(loopback(server->port()), std::nullopt, std::move(insecure), {});
  EXPECT_TRUE(node(transport).ok());
}

TEST_F(TlsTransportTest, ClientCertificateFromTheSettings) {
  start(/*require_client_cert=*/true);
  ClientTransport without(loopback(server->port()), std::nullopt, trusting(pki.ca.ca_cert()), {});
  EXPECT_FALSE(node(without).ok());

  TlsSettings with = trusting(pki.ca.ca_cert());
  ASSERT_TRUE(with.use_certificate_chain_file(pki.scheduler.cert));
  ASSERT_TRUE(with.use_private_key_file(pki.scheduler.key));
  EXPECT_TRUE(with.private_key_matches());
  ClientTransport transport(loopback(server->port()), std::nullopt, std::move(with), {});
  RoundTrip ok = node(transport);
  ASSERT_TRUE(ok.ok()) << ok.failure.message;
  EXPECT_EQ(ok.response->status, 200);
}

TEST_F(TlsTransportTest, ConnectionCertificatesArePooledByIdentity) {
  start(/*require_client_cert=*/true);
  ClientTransport transport(loopback(server->port()), std::nullopt, trusting(pki.ca.ca_cert()), {});
  const std::string cert = read_file(pki.scheduler.cert), key = read_file(pki.scheduler.key);
  auto first_identity = std::make_shared<int>(1);
  ConnectionCertificate first{first_identity, cert, key, "plugin"};
  ASSERT_TRUE(node(transport, &first).ok());
  ASSERT_TRUE(node(transport, &first).ok());
  EXPECT_EQ(transport.stats().connections_opened, 1u);
  ConnectionCertificate second{std::make_shared<int>(2), cert, key, "plugin"};
  ASSERT_TRUE(node(transport, &second).ok());
  EXPECT_EQ(transport.stats().connections_opened, 2u);

  ConnectionCertificate broken{std::make_shared<int>(3), "not a certificate", key, "exec plugin"};
  RoundTrip bad = node(transport, &broken);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.failure.message, HasSubstr("exec plugin: client certificate or key unusable: "));
}

TEST(TlsSettings, BadMaterialIsRefused) {
  hamisim::testing::TestPki pki;
  TlsSettings tls;
  EXPECT_FALSE(tls.trust_pem("not a certificate"));
  take_openssl_errors();
  EXPECT_FALSE(tls.trust_file("/nonexistent/ca.crt"));
  take_openssl_errors();
  ASSERT_TRUE(tls.use_certificate_chain_file(pki.scheduler.cert));
  // Another certificate's key: refused when loaded, or by the check.
  const bool loaded = tls.use_private_key_file(pki.autoscaler.key).ok();
  EXPECT_FALSE(loaded && tls.private_key_matches());
  take_openssl_errors();
  EXPECT_EQ(take_openssl_errors(), "");
}

// ---- proxies ------------------------------------------------------------------------------

TEST(ProxiedTransport, PlainHttpGoesInAbsoluteFormWithProxyAuthorization) {
  ScriptedServer server(always(200, "ok"));
  hamisim::testing::TestProxy proxy(server.port());
  ClientTransport transport(Endpoint{"api.invalid", 8080, "api.invalid:8080"},
                            Proxy{"127.0.0.1", proxy.port(), "Basic dTpw"}, std::nullopt, {});
  RoundTrip trip = transport.round_trip(get("/x"), in(5s));
  ASSERT_TRUE(trip.ok()) << trip.failure.message;
  ASSERT_EQ(proxy.heads().size(), 1u);
  EXPECT_THAT(proxy.heads()[0], HasSubstr("GET http://api.invalid:8080/x HTTP/1.1"));
  EXPECT_THAT(proxy.heads()[0], HasSubstr("Proxy-Authorization: Basic dTpw"));
}

TEST_F(TlsTransportTest, HttpsGoesThroughAConnectTunnel) {
  start();
  hamisim::testing::TestProxy proxy(server->port());
  TlsSettings tls = trusting(pki.ca.ca_cert());
  tls.set_server_name("localhost");
  ClientTransport transport(Endpoint{"kube.invalid", 6443, "kube.invalid:6443"},
                            Proxy{"127.0.0.1", proxy.port(), "Basic dTpw"}, std::move(tls), {});
  RoundTrip trip = node(transport);
  ASSERT_TRUE(trip.ok()) << trip.failure.message;
  ASSERT_EQ(proxy.heads().size(), 1u);
  EXPECT_THAT(proxy.heads()[0], HasSubstr("CONNECT kube.invalid:6443 HTTP/1.1"));
  EXPECT_THAT(proxy.heads()[0], HasSubstr("Proxy-Authorization: Basic dTpw"));
}

TEST(ProxiedTransport, AProxyRefusingTheTunnelIsAConnectFailure) {
  ScriptedServer not_a_proxy(always(403, "no"));
  TlsSettings tls;
  tls.skip_verification();
  ClientTransport transport(Endpoint{"kube.invalid", 6443, "kube.invalid:6443"},
                            Proxy{"127.0.0.1", not_a_proxy.port(), ""}, std::move(tls), {});
  RoundTrip trip = transport.round_trip(get("/x"), in(5s));
  ASSERT_FALSE(trip.ok());
  EXPECT_EQ(trip.failure.stage, Failure::Stage::kConnect);
  EXPECT_EQ(trip.failure.message, "proxy 127.0.0.1:" + std::to_string(not_a_proxy.port()) +
                                      ": CONNECT kube.invalid:6443: 403 Scripted");
}

TEST(Http, MethodsAndReasonPhrases) {
  EXPECT_TRUE(is_known_method("PATCH"));
  EXPECT_FALSE(is_known_method("FETCH"));
  EXPECT_EQ(reason_phrase(409), "Conflict");
  EXPECT_EQ(reason_phrase(299), "<unknown-status>");
}

}  // namespace
}  // namespace hamisim::http
