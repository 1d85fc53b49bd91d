// The HTTP(S) server against real clients over loopback, on ephemeral ports.
// No test decides its verdict by a timing; timeouts only keep a broken build from hanging.

#include "server/http_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <simdjson.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "http_test_client.h"
#include "server/logging.h"
#include "server/metrics.h"
#include "test_certs.h"

namespace hamisim::server {
namespace {

using namespace std::chrono_literals;
using ::hamisim::testing::ClientOptions;
using ::hamisim::testing::ClientResponse;
using ::hamisim::testing::HttpTestClient;
using ::hamisim::testing::TestPki;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A handler that parks until released, to hold requests in flight.
class Gate {
 public:
  void enter_and_wait() {
    std::unique_lock lock(mu_);
    ++entered_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  bool wait_entered(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 60s, [&] { return entered_ >= n; });
  }
  void release() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int entered_ = 0;
  bool open_ = false;
};

ServerConfig test_config() {
  ServerConfig c;
  c.listen = "127.0.0.1:0";
  c.metrics_listen = "127.0.0.1:0";
  c.threads = 4;
  return c;
}

HttpResponse text(std::string body) {
  HttpResponse r;
  r.content_type = "text/plain";
  r.body = std::move(body);
  return r;
}

std::vector<Route> test_routes(std::atomic<int>* calls = nullptr) {
  auto counted = [calls](std::string body) {
    return [calls, body](const HttpRequest&) {
      if (calls) ++*calls;
      return text(body);
    };
  };
  return {
      {"GET", "/healthz", AuthGroup::kNone, counted("ok")},
      {"POST", "/filter", AuthGroup::kLive, counted("live")},
      {"POST", "/filter-simulation", AuthGroup::kSimulation, counted("simulation")},
      {"POST", "/webhook", AuthGroup::kWebhook, counted("webhook")},
      {"POST", "/echo", AuthGroup::kSimulation,
       [](const HttpRequest& req) {
         HttpResponse r = text(req.body);
         r.headers = {{"X-Identity", req.client_identity},
                      {"X-Remote", req.remote_address},
                      {"X-Seen-Request-Id", req.request_id},
                      {"X-Query", req.query},
                      {"X-Content-Type", req.content_type}};
         return r;
       }},
      // The request's body split in two, bracketed by bytes of the response's own body.
      {"POST", "/gather", AuthGroup::kSimulation,
       [](const HttpRequest& req) {
         HttpResponse r = text("[|]");
         const size_t half = req.body.size() / 2;
         r.pieces = {{false, 0, 1},
                     {true, 0, half},
                     {false, 1, 1},
                     {true, half, req.body.size() - half},
                     {false, 2, 1}};
         return r;
       }},
      {"POST", "/gather-out-of-range", AuthGroup::kSimulation,
       [](const HttpRequest& req) {
         HttpResponse r = text("ab");
         r.pieces = {{false, 0, 2}, {true, 1, req.body.size()}};
         return r;
       }},
      {"GET", "/multi", AuthGroup::kNone, counted("get")},
      {"PUT", "/multi", AuthGroup::kNone, counted("put")},
      {"POST", "/throw", AuthGroup::kSimulation,
       [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); }},
      {"POST", "/throw-int", AuthGroup::kSimulation,
       [](const HttpRequest&) -> HttpResponse { throw 42; }},
  };
}

std::unique_ptr<HttpServer> start_server(ServerConfig config, std::vector<Route> routes,
                                         MetricsRegistry* metrics = nullptr) {
  auto server = HttpServer::create(std::move(config), std::move(routes), metrics);
  if (!server) {
    ADD_FAILURE() << "create failed: " << server.error().message;
    return nullptr;
  }
  server.value()->start();
  return std::move(server.value());
}

ClientOptions plain_client(const HttpServer& s) {
  ClientOptions o;
  o.port = s.port();
  return o;
}

ClientOptions metrics_client(const HttpServer& s) {
  ClientOptions o;
  o.port = s.metrics_port();
  return o;
}

ClientResponse must(Result<ClientResponse> r) {
  if (!r) {
    ADD_FAILURE() << r.error().message;
    return {};
  }
  return std::move(r.value());
}

std::unique_ptr<HttpTestClient> must_connect(const ClientOptions& o) {
  auto c = HttpTestClient::connect(o);
  if (!c) {
    ADD_FAILURE() << "connect: " << c.error().message;
    return nullptr;
  }
  return std::move(c.value());
}

// --- routing -------------------------------------------------------------------------------

TEST(HttpServer, ServesARegisteredRoute) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto r = must(testing::http_request(plain_client(*server), "GET", "/healthz"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
  EXPECT_EQ(r.header("Content-Type"), "text/plain");
  server->shutdown(5s);
}

TEST(HttpServer, PassesQueryBodyAndContentTypeToTheHandler) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto r = must(testing::http_request(plain_client(*server), "POST", "/echo?a=1&b=2", "{\"x\":1}",
                                      {{"Content-Type", "application/json; charset=utf-8"}}));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"x\":1}");
  EXPECT_EQ(r.header("X-Query"), "a=1&b=2");
  EXPECT_EQ(r.header("X-Content-Type"), "application/json; charset=utf-8");
}

TEST(HttpServer, UnknownPathGets404) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto r = must(testing::http_request(plain_client(*server), "GET", "/nope"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.header("Content-Type"), "application/json");
  EXPECT_EQ(r.body, R"({"Error":"invalid request: no route for /nope"})");
}

TEST(HttpServer, WrongMethodGets405WithAllow) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto r = must(testing::http_request(plain_client(*server), "GET", "/filter"));
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.header("Allow"), "POST");
  r = must(testing::http_request(plain_client(*server), "DELETE", "/multi"));
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.header("Allow"), "GET, HEAD, PUT");
  EXPECT_THAT(r.body, HasSubstr("method DELETE not allowed on /multi"));
}

// HEAD on a GET route is answered as GET without the body: the same status and headers,
// Content-Length included (RFC 9110 §9.3.2). On both listeners.
TEST(HttpServer, HeadIsAnsweredAsGetWithoutABody) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  for (const ClientOptions& o : {plain_client(*server), metrics_client(*server)}) {
    auto client = must_connect(o);
    ASSERT_TRUE(client);
    auto head = must(client->request("HEAD", "/healthz"));
    EXPECT_EQ(head.status, 200);
    EXPECT_EQ(head.header("Content-Length"), "2");
    EXPECT_EQ(head.header("Content-Type"), "text/plain");
    EXPECT_FALSE(head.header("X-Request-Id").empty());
    EXPECT_TRUE(head.keep_alive);
    // Had a body been sent, it would be read as the start of this response.
    auto get = must(client->request("GET", "/healthz"));
    EXPECT_EQ(get.status, 200);
    EXPECT_EQ(get.body, "ok");
  }
  auto metrics = must_connect(metrics_client(*server));
  ASSERT_TRUE(metrics);
  auto scrape = must(metrics->request("HEAD", "/metrics"));
  EXPECT_EQ(scrape.status, 200);
  EXPECT_NE(scrape.header("Content-Length"), "0");

  // Byte for byte: the head and nothing after it.
  auto raw_client = must_connect(plain_client(*server));
  ASSERT_TRUE(raw_client);
  ASSERT_TRUE(
      raw_client->write_raw("HEAD /multi HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").ok());
  auto raw = raw_client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_THAT(*raw, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(*raw, ::testing::EndsWith("\r\nContent-Length: 3\r\n\r\n"));

  // HEAD where no GET is served: 405, and no body either.
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  auto refused = must(client->request("HEAD", "/filter"));
  EXPECT_EQ(refused.status, 405);
  EXPECT_EQ(refused.header("Allow"), "POST");
  EXPECT_EQ(must(client->request("GET", "/healthz")).body, "ok");
}

TEST(HttpServer, RejectsInvalidRoutes) {
  auto dup = test_routes();
  dup.push_back({"GET", "/healthz", AuthGroup::kNone, [](const HttpRequest&) { return text(""); }});
  auto r = HttpServer::create(test_config(), dup);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("registered twice"));
  auto no_handler = HttpServer::create(test_config(), {{"GET", "/x", AuthGroup::kNone, nullptr}});
  EXPECT_FALSE(no_handler.ok());
  auto bad_path = HttpServer::create(
      test_config(), {{"GET", "x", AuthGroup::kNone, [](const HttpRequest&) { return text(""); }}});
  EXPECT_FALSE(bad_path.ok());
}

TEST(HttpServer, HandlerExceptionBecomes500AndTheConnectionSurvives) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  auto r = must(client->request("POST", "/throw", "{}"));
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, R"({"Error":"internal: boom"})");
  r = must(client->request("POST", "/throw-int", "{}"));
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, R"({"Error":"internal: unknown exception"})");
  r = must(client->request("GET", "/healthz"));
  EXPECT_EQ(r.status, 200);
}

TEST(HttpServer, KeepAliveServesTwoRequestsOnOneConnection) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  auto a = must(client->request("POST", "/echo", "one"));
  auto b = must(client->request("POST", "/echo", "two"));
  EXPECT_EQ(a.body, "one");
  EXPECT_EQ(b.body, "two");
  EXPECT_TRUE(a.keep_alive);
  EXPECT_FALSE(a.header("X-Remote").empty());
  EXPECT_EQ(a.header("X-Remote"), b.header("X-Remote"));  // same client port: same connection
}

TEST(HttpServer, PipelinedRequestsAreAnsweredInOrder) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  ASSERT_TRUE(client
                  ->write_raw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nA"
                              "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
                              "Connection: close\r\n\r\nB")
                  .ok());
  auto raw = client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  auto first = raw->find("\r\n\r\nA");
  auto second = raw->find("\r\n\r\nB");
  EXPECT_NE(first, std::string::npos);
  EXPECT_NE(second, std::string::npos);
  EXPECT_LT(first, second);
}

TEST(HttpServer, RequestIdIsEchoedOrGenerated) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto r = must(testing::http_request(plain_client(*server), "POST", "/echo", "x",
                                      {{"X-Request-Id", "abc-123"}}));
  EXPECT_EQ(r.header("X-Request-Id"), "abc-123");
  EXPECT_EQ(r.header("X-Seen-Request-Id"), "abc-123");
  auto g1 = must(testing::http_request(plain_client(*server), "POST", "/echo", "x"));
  auto g2 = must(testing::http_request(plain_client(*server), "GET", "/nope"));
  EXPECT_FALSE(g1.header("X-Request-Id").empty());
  EXPECT_EQ(g1.header("X-Request-Id"), g1.header("X-Seen-Request-Id"));
  EXPECT_NE(g1.header("X-Request-Id"), g2.header("X-Request-Id"));
}

TEST(HttpServer, LogsOneDebugLinePerRequest) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  auto logger = std::make_shared<spdlog::logger>("test", sink);
  logger->set_level(spdlog::level::debug);
  auto config = test_config();
  config.logger = logger;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  must(testing::http_request(plain_client(*server), "POST", "/echo", "x",
                             {{"X-Request-Id", "req-42"}}));
  server->shutdown(5s);
  std::string logs = out.str();
  EXPECT_THAT(logs, HasSubstr(R"(http request id="req-42" method="POST" path="/echo" status=200)"));
}

// A request path is whatever bytes the client sent; the JSON request log stays valid JSON.
TEST(HttpServer, JsonRequestLogsStayValidWithNonUtf8Paths) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  auto logger = std::make_shared<spdlog::logger>("test", sink);
  logger->set_formatter(make_json_formatter());
  logger->set_level(spdlog::level::debug);
  auto config = test_config();
  config.logger = logger;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  ASSERT_TRUE(client
                  ->write_raw("GET /caf\xc3\xa9/\xff\xc3?q=\x80 HTTP/1.1\r\nHost: x\r\n"
                              "X-Request-Id: utf8\r\nConnection: close\r\n\r\n")
                  .ok());
  auto r = must(client->read_response());
  EXPECT_EQ(r.status, 404);
  client->close();
  server->shutdown(5s);
  std::istringstream lines(out.str());
  std::string line;
  int request_lines = 0;
  simdjson::dom::parser parser;
  while (std::getline(lines, line)) {
    simdjson::dom::element doc;
    ASSERT_EQ(parser.parse(line).get(doc), simdjson::SUCCESS) << line;
    std::string_view msg, id, path;
    ASSERT_EQ(doc["msg"].get(msg), simdjson::SUCCESS) << line;
    if (msg != "http request" || doc["id"].get(id) != simdjson::SUCCESS || id != "utf8") continue;
    ++request_lines;
    // Each field is its own key (issue #25), the path made valid UTF-8.
    ASSERT_EQ(doc["path"].get(path), simdjson::SUCCESS) << line;
    EXPECT_EQ(std::string(path), "/caf\xc3\xa9/\uFFFD\uFFFD");
    EXPECT_EQ(int64_t(doc["status"]), 404) << line;
    EXPECT_EQ(std::string_view(doc["outcome"]), "client_error") << line;
  }
  EXPECT_EQ(request_lines, 1) << out.str();
}

// --- limits --------------------------------------------------------------------------------

TEST(HttpServer, BodyOverTheLimitGets413) {
  std::atomic<int> calls{0};
  auto config = test_config();
  config.max_body_bytes = 1024;
  auto server = start_server(config, test_routes(&calls));
  ASSERT_TRUE(server);
  auto at_limit =
      must(testing::http_request(plain_client(*server), "POST", "/echo", std::string(1024, 'a')));
  EXPECT_EQ(at_limit.status, 200);
  auto over =
      must(testing::http_request(plain_client(*server), "POST", "/filter", std::string(1025, 'a')));
  EXPECT_EQ(over.status, 413);
  EXPECT_EQ(over.body, R"({"Error":"invalid request: body exceeds 1024 bytes"})");
  EXPECT_EQ(calls.load(), 0);
}

TEST(HttpServer, DeclaredOversizedBodyGets413WithoutBeingRead) {
  auto config = test_config();
  config.max_body_bytes = 1024;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  // Announces 5 MB, sends only the headers: the answer must come without the body.
  ASSERT_TRUE(
      client->write_raw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n").ok());
  auto raw = client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  // Byte for byte what the server answers to a body it will not read: then it closes.
  const std::string body = R"({"Error":"invalid request: body exceeds 1024 bytes"})";
  EXPECT_THAT(*raw, StartsWith("HTTP/1.1 413 Payload Too Large\r\nContent-Type: "
                               "application/json\r\nX-Request-Id: "));
  EXPECT_THAT(*raw, ::testing::EndsWith("\r\nConnection: close\r\nContent-Length: " +
                                        std::to_string(body.size()) + "\r\n\r\n" + body));
}

TEST(HttpServer, ChunkedBodyOverTheLimitGets413) {
  auto config = test_config();
  config.max_body_bytes = 1024;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  std::string chunk(2000, 'z');
  ASSERT_TRUE(client
                  ->write_raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "7d0\r\n" +
                              chunk + "\r\n")
                  .ok());
  auto raw = client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_THAT(*raw, StartsWith("HTTP/1.1 413"));
}

TEST(HttpServer, OversizedHeaderGets431) {
  auto config = test_config();
  config.max_header_bytes = 1024;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  auto r = testing::http_request(plain_client(*server), "GET", "/healthz", "",
                                 {{"X-Big", std::string(4096, 'h')}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 431);
}

TEST(HttpServer, MalformedRequestGets400) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->write_raw("GARBAGE\x01 / HTTP/1.1\r\n\r\n").ok());
  auto raw = client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_THAT(*raw, StartsWith("HTTP/1.1 400"));
  EXPECT_THAT(*raw, HasSubstr("invalid request: malformed HTTP"));
}

TEST(HttpServer, Expect100ContinueIsHonoured) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  ASSERT_TRUE(client
                  ->write_raw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                              "Expect: 100-continue\r\nConnection: close\r\n\r\n")
                  .ok());
  ASSERT_TRUE(client->write_raw("hello").ok());
  auto raw = client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_THAT(*raw, StartsWith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK"));
  EXPECT_THAT(*raw, HasSubstr("\r\n\r\nhello"));
}

// --- request bodies --------------------------------------------------------------------------

// Bytes that differ from one position (and one seed) to the next, so that a shifted, repeated
// or dropped piece of a body shows.
std::string pattern(size_t n, int seed = 0) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = char('a' + (i * 7 + i / 26 + size_t(seed)) % 26);
  return s;
}

// A POST with a Content-Length body; `extra` holds more header lines ("Name: value\r\n").
std::string raw_post(std::string_view path, std::string_view body, std::string_view extra = {}) {
  std::string s = "POST ";
  s += path;
  s += " HTTP/1.1\r\nHost: x\r\n";
  s += extra;
  s += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  s += body;
  return s;
}

TEST(HttpServer, BodySplitAcrossManyWritesIsReadWhole) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  const std::string body = pattern(200000);
  const std::string raw = raw_post("/echo", body);
  // Pieces of 1 byte up to a few KB: the header arrives in several reads, the body's first
  // bytes with the header's end, and the rest in many reads. The pauses only make separate
  // reads likely; the verdict does not depend on them.
  size_t pos = 0, step = 1;
  int writes = 0;
  while (pos < raw.size()) {
    size_t n = std::min(raw.size() - pos, step);
    ASSERT_TRUE(client->write_raw(std::string_view(raw).substr(pos, n)).ok());
    pos += n;
    step = (step * 5 + 3) % 7919 + 1;
    if (++writes % 8 == 0) std::this_thread::sleep_for(1ms);
  }
  EXPECT_GT(writes, 50);
  auto r = must(client->read_response());
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body.size(), body.size());
  EXPECT_TRUE(r.body == body);
  auto again = must(client->request("POST", "/echo", "next"));  // the connection still serves
  EXPECT_EQ(again.body, "next");
}

TEST(HttpServer, PipelinedRequestsWithBodiesAreAnsweredInOrder) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  // Bodies shorter and longer than one read, a request without a body, a chunked one and an
  // empty Content-Length body, all in one write: each body read must stop at its own end.
  const std::vector<size_t> sizes = {1, 30000, 0, 5, 16384, 17000, 2};
  std::string raw;
  std::vector<std::string> expected;
  for (size_t i = 0; i < sizes.size(); ++i) {
    expected.push_back(pattern(sizes[i], int(i)));
    raw += raw_post("/echo", expected.back(), "X-Request-Id: p" + std::to_string(i) + "\r\n");
    if (i == 2) {
      raw += "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: h\r\n\r\n";
      raw +=
          "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nX-Request-Id: c\r\n\r\n"
          "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
    }
  }
  ASSERT_TRUE(client->write_raw(raw).ok());
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto r = must(client->read_response());
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.header("X-Request-Id"), "p" + std::to_string(i));
    EXPECT_EQ(r.body.size(), expected[i].size()) << "request " << i;
    EXPECT_TRUE(r.body == expected[i]) << "request " << i;
    if (i == 2) {
      auto h = must(client->read_response());
      EXPECT_EQ(h.header("X-Request-Id"), "h");
      EXPECT_EQ(h.body, "ok");
      auto c = must(client->read_response());
      EXPECT_EQ(c.header("X-Request-Id"), "c");
      EXPECT_EQ(c.body, "abcde");
    }
  }
  auto last = must(client->request("GET", "/healthz"));
  EXPECT_EQ(last.body, "ok");
}

TEST(HttpServer, MixedBodySizesOnOneKeepAliveConnection) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  // Small after large and large after small, around the read size (16 KiB) and the body
  // capacity a connection keeps (1 MiB), up to near the 4 MiB limit.
  const std::vector<size_t> sizes = {5,     200000,  1, 3 << 20,       10, 16383,  16384,
                                     16385, 1 << 20, 7, (4 << 20) - 1, 0,  600000, 3};
  std::string remote;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string body = pattern(sizes[i], int(i));
    auto r = must(client->request("POST", "/echo", body));
    EXPECT_EQ(r.status, 200) << "request " << i;
    EXPECT_EQ(r.body.size(), body.size()) << "request " << i;
    EXPECT_TRUE(r.body == body) << "request " << i;
    if (i == 0) remote = std::string(r.header("X-Remote"));
    EXPECT_EQ(r.header("X-Remote"), remote);  // one connection throughout
  }
  // A chunked body between Content-Length ones.
  ASSERT_TRUE(client
                  ->write_raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "4\r\nwxyz\r\n0\r\n\r\n")
                  .ok());
  EXPECT_EQ(must(client->read_response()).body, "wxyz");
  EXPECT_EQ(must(client->request("POST", "/echo", "tail")).body, "tail");
}

std::string gathered(const std::string& body) {
  return "[" + body.substr(0, body.size() / 2) + "|" + body.substr(body.size() / 2) + "]";
}

// A response gathered from pieces of its own body and of the request's, request after request
// on one connection (whose body storage is reused meanwhile), and pipelined.
TEST(HttpServer, GatheredResponseIsSentFromPieces) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  const std::vector<size_t> sizes = {0, 1, 5, 70000, 1 << 20, 3, 600000, 16384};
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string body = pattern(sizes[i], int(i));
    auto r = must(client->request("POST", "/gather", body));
    EXPECT_EQ(r.status, 200) << i;
    EXPECT_EQ(r.body.size(), body.size() + 3) << i;
    EXPECT_TRUE(r.body == gathered(body)) << i;
    EXPECT_TRUE(must(client->request("POST", "/echo", body)).body == body) << i;
  }
  const std::string a = pattern(300000, 1), b = pattern(7, 2);
  ASSERT_TRUE(client->write_raw(raw_post("/gather", a) + raw_post("/gather", b)).ok());
  EXPECT_TRUE(must(client->read_response()).body == gathered(a));
  EXPECT_TRUE(must(client->read_response()).body == gathered(b));
}

TEST(HttpServer, APieceOutOfRangeIsA500AndTheConnectionSurvives) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  auto r = must(client->request("POST", "/gather-out-of-range", "xyz"));
  EXPECT_EQ(r.status, 500);
  EXPECT_THAT(r.body, HasSubstr("response piece out of range"));
  EXPECT_TRUE(must(client->request("POST", "/gather", "xyz")).body == gathered("xyz"));
}

TEST(HttpServer, LargeBodyAfterExpect100Continue) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  const std::string body = pattern(300000);
  ASSERT_TRUE(client
                  ->write_raw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\nExpect: 100-continue\r\n\r\n")
                  .ok());
  auto cont = must(client->read_response());
  EXPECT_EQ(cont.status, 100);
  ASSERT_TRUE(client->write_raw(body).ok());
  auto r = must(client->read_response());
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.body == body);
}

TEST(HttpServer, ContentLengthAtTheLimitIsReadAndOneMoreIsRefusedUnread) {
  std::atomic<int> calls{0};
  auto config = test_config();
  config.max_body_bytes = 100000;
  auto server = start_server(config, test_routes(&calls));
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  const std::string body = pattern(100000);
  auto ok = must(client->request("POST", "/echo", body));
  EXPECT_EQ(ok.status, 200);
  EXPECT_TRUE(ok.body == body);
  // Over the limit by one byte, announced with a first piece of the body: answered at once.
  ASSERT_TRUE(client
                  ->write_raw("POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100001\r\n\r\n" +
                              body.substr(0, 5000))
                  .ok());
  auto raw = client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_THAT(*raw, StartsWith("HTTP/1.1 413"));
  EXPECT_THAT(*raw, HasSubstr(R"({"Error":"invalid request: body exceeds 100000 bytes"})"));
  EXPECT_EQ(calls.load(), 0);
}

TEST(HttpServer, InvalidContentLengthGets400) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  for (std::string value : {"12x", "-1", "99999999999999999999999"}) {
    auto client = must_connect(plain_client(*server));
    ASSERT_TRUE(client);
    ASSERT_TRUE(
        client
            ->write_raw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + value + "\r\n\r\nab")
            .ok());
    auto raw = client->read_until_close();
    ASSERT_TRUE(raw.ok()) << raw.error().message;
    EXPECT_THAT(*raw, StartsWith("HTTP/1.1 400")) << value;
    EXPECT_THAT(*raw, HasSubstr("invalid request: malformed HTTP")) << value;
  }
}

TEST(HttpServer, ConnectionClosedMidBodyNeverReachesTheHandler) {
  std::atomic<int> calls{0};
  MetricsRegistry metrics;
  auto server = start_server(test_config(), test_routes(&calls), &metrics);
  ASSERT_TRUE(server);
  // The end of input arrives with the header's read (small), and while the rest of a body is
  // read past the parser (large): no answer, no handler call, the connection is closed.
  for (size_t sent : {size_t(10), size_t(50000)}) {
    auto client = must_connect(plain_client(*server));
    ASSERT_TRUE(client);
    ASSERT_TRUE(
        client
            ->write_raw("POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" +
                        pattern(sent))
            .ok());
    client->shutdown_send();
    auto raw = client->read_until_close();
    ASSERT_TRUE(raw.ok()) << raw.error().message;
    EXPECT_EQ(*raw, "") << sent;
  }
  // Abrupt closes while the body is being read.
  for (size_t sent : {size_t(10), size_t(50000)}) {
    auto client = must_connect(plain_client(*server));
    ASSERT_TRUE(client);
    ASSERT_TRUE(
        client
            ->write_raw("POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" +
                        pattern(sent))
            .ok());
    client->close();
  }
  EXPECT_EQ(must(testing::http_request(plain_client(*server), "POST", "/echo", "alive")).body,
            "alive");
  EXPECT_EQ(calls.load(), 0);
  EXPECT_THAT(metrics.render(), ::testing::Not(HasSubstr("route=\"/filter\"")));
}

TEST(HttpServer, BodyStalledAfterTheFirstReadIsDisconnectedAfterTheBodyTimeout) {
  auto config = test_config();
  config.body_timeout = 300ms;
  std::atomic<int> calls{0};
  auto server = start_server(config, test_routes(&calls));
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  ASSERT_TRUE(client
                  ->write_raw("POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" +
                              pattern(40000))
                  .ok());
  auto raw = client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_EQ(*raw, "");
  EXPECT_EQ(calls.load(), 0);
}

// --- response bytes --------------------------------------------------------------------------

TEST(HttpServer, ResponseHeadIsWrittenByteForByte) {
  auto routes = test_routes();
  routes.push_back({"POST", "/headers", AuthGroup::kSimulation, [](const HttpRequest&) {
                      HttpResponse r = text("body");
                      r.status = 201;
                      // A name set again replaces the earlier field (Content-Type too); values
                      // are trimmed; Content-Length and Connection are the server's.
                      r.headers = {{"X-A", "1"},
                                   {"x-b", " two\t"},
                                   {"X-A", "3"},
                                   {"content-type", "text/x"},
                                   {"Content-Length", "999"},
                                   {"Connection", "close"}};
                      return r;
                    }});
  routes.push_back({"POST", "/bad-status", AuthGroup::kSimulation, [](const HttpRequest&) {
                      HttpResponse r = text("x");
                      r.status = 1000;
                      return r;
                    }});
  auto server = start_server(test_config(), routes);
  ASSERT_TRUE(server);
  const std::string fields =
      "x-b: two\r\nX-A: 3\r\ncontent-type: text/x\r\nX-Request-Id: fixed\r\n";
  struct Case {
    std::string request_line_and_connection, expected_head;
  };
  const std::vector<Case> cases = {
      {"HTTP/1.1\r\n", "HTTP/1.1 201 Created\r\n" + fields + "Content-Length: 4\r\n\r\n"},
      {"HTTP/1.0\r\nConnection: keep-alive\r\n",
       "HTTP/1.0 201 Created\r\n" + fields + "Connection: keep-alive\r\nContent-Length: 4\r\n\r\n"},
      {"HTTP/1.1\r\nConnection: close\r\n",
       "HTTP/1.1 201 Created\r\n" + fields + "Connection: close\r\nContent-Length: 4\r\n\r\n"},
      {"HTTP/1.0\r\n", "HTTP/1.0 201 Created\r\n" + fields + "Content-Length: 4\r\n\r\n"},
  };
  for (const Case& c : cases) {
    auto client = must_connect(plain_client(*server));
    ASSERT_TRUE(client);
    ASSERT_TRUE(client
                    ->write_raw("POST /headers " + c.request_line_and_connection +
                                "Host: x\r\nX-Request-Id: fixed\r\nContent-Length: 2\r\n\r\nhi")
                    .ok());
    client->shutdown_send();
    auto raw = client->read_until_close();
    ASSERT_TRUE(raw.ok()) << raw.error().message;
    EXPECT_EQ(*raw, c.expected_head + "body");
  }

  const std::string not_found = R"({"Error":"invalid request: no route for /nope"})";
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  ASSERT_TRUE(client
                  ->write_raw("GET /nope HTTP/1.1\r\nHost: x\r\nX-Request-Id: r1\r\n\r\n"
                              "POST /bad-status HTTP/1.1\r\nHost: x\r\nX-Request-Id: r2\r\n"
                              "Content-Length: 0\r\n\r\n")
                  .ok());
  client->shutdown_send();
  auto raw = client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  const std::string internal = R"({"Error":"internal: invalid status-code"})";
  EXPECT_EQ(*raw,
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
            "X-Request-Id: r1\r\nContent-Length: " +
                std::to_string(not_found.size()) + "\r\n\r\n" + not_found +
                "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                "Content-Length: " +
                std::to_string(internal.size()) + "\r\n\r\n" + internal);
}

TEST(HttpServer, BodyOnA204IsA500AndTheConnectionSurvives) {
  auto routes = test_routes();
  routes.push_back({"POST", "/no-content", AuthGroup::kSimulation, [](const HttpRequest&) {
                      HttpResponse r = text("not allowed here");
                      r.status = 204;
                      return r;
                    }});
  routes.push_back({"POST", "/empty", AuthGroup::kSimulation, [](const HttpRequest&) {
                      HttpResponse r = text("");
                      r.status = 204;
                      return r;
                    }});
  auto server = start_server(test_config(), routes);
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  auto r = must(client->request("POST", "/no-content", "{}"));
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, R"({"Error":"internal: invalid response body"})");
  auto empty = must(client->request("POST", "/empty", "{}"));
  EXPECT_EQ(empty.status, 204);
  EXPECT_EQ(empty.header("Content-Length"), "0");
}

TEST(HttpServer, InflightLimitPerGroupGets429) {
  Gate gate;
  auto config = test_config();
  config.max_inflight_simulation = 2;
  config.threads = 4;
  auto routes = test_routes();
  routes.push_back({"POST", "/slow", AuthGroup::kSimulation, [&](const HttpRequest&) {
                      gate.enter_and_wait();
                      return text("slow");
                    }});
  auto server = start_server(config, routes);
  ASSERT_TRUE(server);

  std::vector<std::thread> blocked;
  std::vector<ClientResponse> blocked_results(2);
  for (int i = 0; i < 2; ++i) {
    blocked.emplace_back([&, i] {
      auto o = plain_client(*server);
      o.timeout = 120s;
      blocked_results[i] = must(testing::http_request(o, "POST", "/slow", "x"));
    });
  }
  ASSERT_TRUE(gate.wait_entered(2));

  auto limited = must(testing::http_request(plain_client(*server), "POST", "/echo", "x"));
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(limited.header("Retry-After"), "1");
  EXPECT_THAT(limited.body, HasSubstr("overloaded: more than 2 simulation requests in flight"));
  // Other groups have their own budget; kNone routes have none.
  EXPECT_EQ(must(testing::http_request(plain_client(*server), "POST", "/filter", "x")).status, 200);
  EXPECT_EQ(must(testing::http_request(plain_client(*server), "GET", "/healthz")).status, 200);
  auto metrics = must(testing::http_request(metrics_client(*server), "GET", "/metrics"));
  EXPECT_THAT(metrics.body, HasSubstr("hamisim_http_inflight_requests{group=\"simulation\"} 2\n"));

  gate.release();
  for (auto& t : blocked) t.join();
  for (const auto& r : blocked_results) EXPECT_EQ(r.status, 200);
  EXPECT_EQ(must(testing::http_request(plain_client(*server), "POST", "/echo", "x")).status, 200);
}

// --- timeouts (slowloris) ------------------------------------------------------------------

TEST(HttpServer, HalfAHeaderIsDisconnectedAfterTheHeaderTimeout) {
  auto config = test_config();
  config.header_timeout = 300ms;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->write_raw("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ").ok());
  auto raw = client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;  // closed by the server
  EXPECT_EQ(*raw, "");
}

TEST(HttpServer, SilentNewConnectionIsDisconnectedAfterTheHeaderTimeout) {
  auto config = test_config();
  config.header_timeout = 300ms;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  auto raw = client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;
}

TEST(HttpServer, StalledBodyIsDisconnectedAfterTheBodyTimeout) {
  auto config = test_config();
  config.body_timeout = 300ms;
  std::atomic<int> calls{0};
  auto server = start_server(config, test_routes(&calls));
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  ASSERT_TRUE(
      client->write_raw("POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{").ok());
  auto raw = client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_EQ(*raw, "");
  EXPECT_EQ(calls.load(), 0);
}

TEST(HttpServer, IdleKeepAliveConnectionIsClosedAfterTheIdleTimeout) {
  auto config = test_config();
  config.idle_timeout = 300ms;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  EXPECT_EQ(must(client->request("GET", "/healthz")).status, 200);
  auto raw = client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_EQ(*raw, "");
}

// --- configuration validation ------------------------------------------------------------

TEST(HttpServerConfig, PlainHttpOnNonLoopbackIsRefusedWithoutTls) {
  auto config = test_config();
  config.listen = "0.0.0.0:0";
  auto refused = HttpServer::create(config, test_routes());
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("refusing plain HTTP on non-loopback address"));

  config.insecure_http = true;
  auto insecure = HttpServer::create(config, test_routes());
  EXPECT_TRUE(insecure.ok()) << insecure.error().message;

  TestPki pki;
  config.insecure_http = false;
  config.tls_cert = pki.server.cert;
  config.tls_key = pki.server.key;
  auto tls = HttpServer::create(config, test_routes());
  EXPECT_TRUE(tls.ok()) << tls.error().message;
}

TEST(HttpServerConfig, LoopbackAllowsPlainHttp) {
  for (const char* listen : {"127.0.0.1:0", "localhost:0", "[::1]:0"}) {
    auto config = test_config();
    config.listen = listen;
    auto r = HttpServer::create(config, test_routes());
    // ::1 may be unavailable in a container; only the TLS rule is under test.
    if (!r.ok()) {
      EXPECT_THAT(r.error().message, ::testing::Not(HasSubstr("refusing"))) << listen;
    }
  }
}

TEST(HttpServerConfig, RejectsInconsistentSecuritySettings) {
  TestPki pki;
  auto config = test_config();
  config.allow_live_clients = {"kube-scheduler"};
  auto r = HttpServer::create(config, test_routes());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("--allow-live-clients needs --client-ca"));

  config = test_config();
  config.client_ca = pki.ca.ca_cert();
  EXPECT_FALSE(HttpServer::create(config, test_routes()).ok());  // client CA without TLS

  config = test_config();
  config.tls_cert = pki.server.cert;  // key missing
  EXPECT_FALSE(HttpServer::create(config, test_routes()).ok());

  config = test_config();
  config.tls_cert = pki.server.cert;
  config.tls_key = pki.scheduler.key;  // does not match
  r = HttpServer::create(config, test_routes());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("private key"));

  config = test_config();
  config.listen = "not-an-ip:80";
  EXPECT_FALSE(HttpServer::create(config, test_routes()).ok());
  config.listen = "127.0.0.1:http";
  EXPECT_FALSE(HttpServer::create(config, test_routes()).ok());
}

TEST(HttpServerConfig, PortInUseIsAnError) {
  auto first = start_server(test_config(), test_routes());
  ASSERT_TRUE(first);
  auto config = test_config();
  config.listen = "127.0.0.1:" + std::to_string(first->port());
  auto second = HttpServer::create(config, test_routes());
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.error().message, HasSubstr("bind"));
}

// --- TLS and mTLS --------------------------------------------------------------------------

class HttpServerTls : public ::testing::Test {
 protected:
  ServerConfig tls_config() {
    auto c = test_config();
    c.tls_cert = pki_.server.cert;
    c.tls_key = pki_.server.key;
    return c;
  }
  ServerConfig mtls_config() {
    auto c = tls_config();
    c.client_ca = pki_.ca.ca_cert();
    c.allow_live_clients = {"kube-scheduler"};
    c.allow_simulation_clients = {"cluster-autoscaler.kube-system.svc"};  // a DNS SAN
    return c;
  }
  ClientOptions client(const HttpServer& s, const testing::CertFiles* cert = nullptr) {
    ClientOptions o;
    o.port = s.port();
    o.tls = true;
    o.ca_file = pki_.ca.ca_cert();
    if (cert) {
      o.cert_file = cert->cert;
      o.key_file = cert->key;
    }
    return o;
  }
  TestPki pki_;
};

TEST_F(HttpServerTls, HandshakeSucceedsAndServes) {
  auto server = start_server(tls_config(), test_routes());
  ASSERT_TRUE(server);
  auto c = must_connect(client(*server));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->server_common_name(), "hamisim");
  auto r = must(c->request("POST", "/echo", "over tls"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "over tls");
  EXPECT_EQ(r.header("X-Identity"), "");                       // no client certificate asked for
  EXPECT_EQ(must(c->request("GET", "/healthz")).status, 200);  // keep-alive over TLS
}

TEST_F(HttpServerTls, BodiesOfEverySizeSplitAndPipelinedOverTls) {
  auto server = start_server(tls_config(), test_routes());
  ASSERT_TRUE(server);
  auto c = must_connect(client(*server));
  ASSERT_TRUE(c);
  for (size_t n : {size_t(3), size_t(70000), size_t(1) << 20, size_t(16384), size_t(0)}) {
    std::string body = pattern(n, int(n % 26));
    auto r = must(c->request("POST", "/echo", body));
    EXPECT_EQ(r.status, 200) << n;
    EXPECT_EQ(r.body.size(), n);
    EXPECT_TRUE(r.body == body) << n;
  }
  // One request in many TLS records.
  const std::string body = pattern(50000, 3);
  const std::string raw = raw_post("/echo", body);
  for (size_t pos = 0, step = 7; pos < raw.size(); pos += step, step = step * 3 % 9001 + 1) {
    ASSERT_TRUE(c->write_raw(std::string_view(raw).substr(pos, step)).ok());
  }
  auto split = must(c->read_response());
  EXPECT_TRUE(split.body == body);
  // Two requests in one record.
  ASSERT_TRUE(c->write_raw(raw_post("/echo", pattern(20000, 1), "X-Request-Id: t1\r\n") +
                           raw_post("/echo", "z", "X-Request-Id: t2\r\n"))
                  .ok());
  auto first = must(c->read_response());
  auto second = must(c->read_response());
  EXPECT_EQ(first.header("X-Request-Id"), "t1");
  EXPECT_TRUE(first.body == pattern(20000, 1));
  EXPECT_EQ(second.header("X-Request-Id"), "t2");
  EXPECT_EQ(second.body, "z");
}

TEST_F(HttpServerTls, GatheredResponseIsSentFromPiecesOverTls) {
  auto server = start_server(tls_config(), test_routes());
  ASSERT_TRUE(server);
  auto c = must_connect(client(*server));
  ASSERT_TRUE(c);
  for (size_t n : {size_t(0), size_t(1), size_t(70000), size_t(1) << 20, size_t(16384)}) {
    const std::string body = pattern(n, int(n % 26));
    auto r = must(c->request("POST", "/gather", body));
    EXPECT_EQ(r.status, 200) << n;
    EXPECT_TRUE(r.body == gathered(body)) << n;
  }
}

TEST_F(HttpServerTls, Tls12ClientWithCertificateIsServed) {
  auto server = start_server(mtls_config(), test_routes());
  ASSERT_TRUE(server);
  auto o = client(*server, &pki_.scheduler);
  o.max_tls_version = TLS1_2_VERSION;
  auto r = testing::http_request(o, "POST", "/filter", "{}");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpServerTls, PlainHttpClientCannotTalkToTheTlsListener) {
  std::atomic<int> calls{0};
  auto server = start_server(tls_config(), test_routes(&calls));
  ASSERT_TRUE(server);
  auto r = testing::http_request(plain_client(*server), "GET", "/healthz");
  EXPECT_FALSE(r.ok() && r->status == 200);
  EXPECT_EQ(calls.load(), 0);
}

TEST_F(HttpServerTls, LiveVerbsAnswerLoopbackPeersOrCertifiedClientsOnly) {
  const std::string ip = testing::non_loopback_ipv4();
  if (ip.empty()) GTEST_SKIP() << "this machine has no non-loopback IPv4 address to call from";
  // HAMi's chart layout: one TLS listener on the wildcard for the webhook and the verbs.
  auto config = tls_config();
  config.listen = "0.0.0.0:0";
  config.live_routes_loopback_or_certificate = true;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  auto from_network = client(*server);
  from_network.host = ip;
  from_network.verify_name = "127.0.0.1";  // the test certificate names loopback only
  auto remote = must_connect(from_network);
  ASSERT_TRUE(remote);
  for (const char* verb : {"/filter"}) {
    auto r = must(remote->request("POST", verb, "{}"));
    EXPECT_EQ(r.status, 403) << verb;
    EXPECT_THAT(r.body, HasSubstr("answers only loopback peers")) << r.body;
    EXPECT_THAT(r.body, HasSubstr(ip + ":")) << r.body;
  }
  // What the API server and kubelet reach stays reachable.
  EXPECT_EQ(must(remote->request("POST", "/webhook", "{}")).status, 200);
  EXPECT_EQ(must(remote->request("GET", "/healthz")).status, 200);
  EXPECT_EQ(must(remote->request("POST", "/filter-simulation", "{}")).status, 200);

  // kube-scheduler in the same pod calls over loopback, IPv4 or (dual-stack) IPv6.
  auto local = must(testing::http_request(client(*server), "POST", "/filter", "{}"));
  EXPECT_EQ(local.status, 200);
  EXPECT_EQ(local.body, "live");
  auto v6 = client(*server);
  v6.host = "::1";
  v6.verify_name = "::1";
  auto over_v6 = testing::http_request(v6, "POST", "/filter", "{}");
  if (over_v6.ok()) {
    EXPECT_EQ(over_v6->status, 200);
  } else {
    std::printf("note: ::1 unreachable here (%s); the dual-stack part is not checked\n",
                over_v6.error().message.c_str());
  }

  // Without the rule the same peer is served: the rule is what refused it.
  config.live_routes_loopback_or_certificate = false;
  auto open = start_server(config, test_routes());
  ASSERT_TRUE(open);
  from_network.port = open->port();
  EXPECT_EQ(must(testing::http_request(from_network, "POST", "/filter", "{}")).status, 200);
}

TEST_F(HttpServerTls, LiveVerbsAnswerACertifiedClientFromTheNetwork) {
  const std::string ip = testing::non_loopback_ipv4();
  if (ip.empty()) GTEST_SKIP() << "this machine has no non-loopback IPv4 address to call from";
  auto config = mtls_config();
  config.listen = "0.0.0.0:0";
  config.live_routes_loopback_or_certificate = true;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  auto o = client(*server, &pki_.scheduler);
  o.host = ip;
  o.verify_name = "127.0.0.1";
  auto r = must(testing::http_request(o, "POST", "/filter", "{}"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "live");
}

TEST_F(HttpServerTls, MtlsAllowListAdmitsTheRightClientPerGroup) {
  auto server = start_server(mtls_config(), test_routes());
  ASSERT_TRUE(server);

  auto sched = must_connect(client(*server, &pki_.scheduler));
  ASSERT_TRUE(sched);
  auto r = must(sched->request("POST", "/filter", "{}"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "live");
  r = must(sched->request("POST", "/filter-simulation", "{}"));
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(
      r.body,
      R"({"Error":"forbidden: client kube-scheduler is not allowed to call simulation routes"})");
  EXPECT_EQ(must(sched->request("GET", "/healthz")).status, 200);         // kNone: no allow list
  EXPECT_EQ(must(sched->request("POST", "/webhook", "{}")).status, 200);  // empty list: any client

  auto ca = must_connect(client(*server, &pki_.autoscaler));
  ASSERT_TRUE(ca);
  r = must(ca->request("POST", "/echo", "sim"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("X-Identity"),
            "cluster-autoscaler.kube-system.svc");  // the entry that matched
  r = must(ca->request("POST", "/filter", "{}"));
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(
      r.body,
      R"({"Error":"forbidden: client cluster-autoscaler is not allowed to call live routes"})");
}

TEST_F(HttpServerTls, MissingClientCertificateNeverReachesAHandler) {
  std::atomic<int> calls{0};
  auto server = start_server(mtls_config(), test_routes(&calls));
  ASSERT_TRUE(server);
  // With TLS 1.3 the client may finish its handshake before the server rejects it, so the
  // failure may show on the request instead.
  auto r = testing::http_request(client(*server), "GET", "/healthz");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(calls.load(), 0);
  // The server may still be finishing the failed handshake when the client gives up: poll
  // the counter (bounded) instead of reading it once.
  std::string body;
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       std::chrono::steady_clock::now() < deadline;) {
    body = must(testing::http_request(metrics_client(*server), "GET", "/metrics")).body;
    if (body.find("hamisim_tls_handshake_failures_total 0") == std::string::npos) break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_THAT(body, ::testing::ContainsRegex("hamisim_tls_handshake_failures_total [1-9]"));
}

TEST_F(HttpServerTls, UntrustedClientCertificateNeverReachesAHandler) {
  std::atomic<int> calls{0};
  auto server = start_server(mtls_config(), test_routes(&calls));
  ASSERT_TRUE(server);
  auto r = testing::http_request(client(*server, &pki_.untrusted), "GET", "/healthz");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(calls.load(), 0);
}

TEST_F(HttpServerTls, CertificateFilesAreReloadedForNewConnections) {
  std::string cert = (pki_.ca.dir() / "live.crt").string();
  std::string key = (pki_.ca.dir() / "live.key").string();
  pki_.ca.issue_to({"hamisim-a", {"localhost"}, {"127.0.0.1"}, testing::CertUsage::kServer}, cert,
                   key);
  auto config = tls_config();
  config.tls_cert = cert;
  config.tls_key = key;
  config.tls_reload_interval = 50ms;
  MetricsRegistry metrics;
  auto server = start_server(config, test_routes(), &metrics);
  ASSERT_TRUE(server);

  auto old_conn = must_connect(client(*server));
  ASSERT_TRUE(old_conn);
  EXPECT_EQ(old_conn->server_common_name(), "hamisim-a");

  pki_.ca.issue_to({"hamisim-b", {"localhost"}, {"127.0.0.1"}, testing::CertUsage::kServer}, cert,
                   key);
  std::string seen;
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       seen != "hamisim-b" && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(20ms);
    auto c = must_connect(client(*server));
    if (!c) break;
    seen = c->server_common_name();
  }
  EXPECT_EQ(seen, "hamisim-b");
  EXPECT_EQ(must(old_conn->request("GET", "/healthz")).status, 200);  // existing one unaffected

  // A broken replacement is reported and the last good certificate stays in use.
  auto& failed =
      metrics.counter("hamisim_tls_certificate_reloads_total", "", {"result"}).labels({"error"});
  testing::write_file_atomically(cert, "-----BEGIN CERTIFICATE-----\ngarbage\n");
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       failed.value() == 0 && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(20ms);
    must_connect(client(*server));
  }
  EXPECT_EQ(failed.value(), 1u);
  auto after = must_connect(client(*server));
  ASSERT_TRUE(after);
  EXPECT_EQ(after->server_common_name(), "hamisim-b");
  EXPECT_EQ(must(after->request("GET", "/healthz")).status, 200);
}

// Issue #44: a certificate on a hung mount (here a FIFO no one writes: reading it blocks)
// stalled new TLS connections, /healthz and SIGTERM. The reloader reads the files on a thread
// of its own: connections keep the last good certificate, and shutdown does not wait for it.
TEST_F(HttpServerTls, ACertificateFileThatBlocksNeverStallsConnectionsOrShutdown) {
  std::string cert = (pki_.ca.dir() / "hung.crt").string();
  std::string key = (pki_.ca.dir() / "hung.key").string();
  pki_.ca.issue_to({"hamisim-a", {"localhost"}, {"127.0.0.1"}, testing::CertUsage::kServer}, cert,
                   key);
  auto config = tls_config();
  config.tls_cert = cert;
  config.tls_key = key;
  config.tls_reload_interval = 20ms;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  // The certificate becomes a FIFO: the reloader's next read of it blocks until a writer comes.
  std::filesystem::remove(cert);
  ASSERT_EQ(::mkfifo(cert.c_str(), 0600), 0);
  // Wait until the reloader is stuck: a thread of this process blocked opening a file.
  auto blocked_in_open = [] {
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
      std::ifstream in(task.path() / "syscall");
      long number = -1;
      if (in >> number && number == SYS_openat) return true;
    }
    return false;
  };
  for (int i = 0; i < 3000 && !blocked_in_open(); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(blocked_in_open());
  for (int i = 0; i < 5; ++i) {
    auto c = must_connect(client(*server));
    ASSERT_TRUE(c);
    EXPECT_EQ(c->server_common_name(), "hamisim-a");
    EXPECT_EQ(must(c->request("GET", "/healthz")).status, 200);
  }
  EXPECT_EQ(must(testing::http_request(metrics_client(*server), "GET", "/healthz")).status, 200);
  server->shutdown(5s);
  server.reset();
  // Let the stuck reader go: it sees the end of the FIFO, fails, and finds the server gone.
  const int fd = ::open(cert.c_str(), O_WRONLY | O_NONBLOCK);
  EXPECT_GE(fd, 0) << "the reloader was not reading the FIFO";
  if (fd >= 0) ::close(fd);
}

TEST_F(HttpServerTls, ManyConcurrentMtlsClientsAllSucceed) {
  auto server = start_server(mtls_config(), test_routes());
  ASSERT_TRUE(server);
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto c = HttpTestClient::connect(client(*server, t % 2 ? &pki_.scheduler : &pki_.autoscaler));
      if (!c) return;
      for (int i = 0; i < 20; ++i) {
        auto r = c.value()->request("POST", t % 2 ? "/filter" : "/filter-simulation", "{}");
        if (r && r->status == 200) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 8 * 20);
}

// --- concurrency, shutdown, metrics ---------------------------------------------------------

TEST(HttpServer, ManyConcurrentClientsAllSucceed) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<HttpTestClient> keep;
      for (int i = 0; i < 50; ++i) {
        std::string body = std::to_string(t) + "/" + std::to_string(i);
        Result<ClientResponse> r = make_error("unset");
        if (t % 2) {  // half reuse one connection, half connect per request
          if (!keep) {
            auto c = HttpTestClient::connect(plain_client(*server));
            if (!c) continue;
            keep = std::move(c.value());
          }
          r = keep->request("POST", "/echo", body);
        } else {
          r = testing::http_request(plain_client(*server), "POST", "/echo", body);
        }
        if (r && r->status == 200 && r->body == body) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 16 * 50);
}

TEST(HttpServer, GracefulShutdownFinishesInFlightAndClosesIdle) {
  Gate gate;
  auto routes = test_routes();
  routes.push_back({"POST", "/slow", AuthGroup::kSimulation, [&](const HttpRequest&) {
                      gate.enter_and_wait();
                      return text("finished");
                    }});
  auto config = test_config();
  config.idle_timeout = 600s;
  auto server = start_server(config, routes);
  ASSERT_TRUE(server);
  uint16_t port = server->port();

  auto idle = must_connect(plain_client(*server));
  ASSERT_TRUE(idle);
  EXPECT_EQ(must(idle->request("GET", "/healthz")).status, 200);

  ClientResponse in_flight;
  std::thread slow([&] {
    auto o = plain_client(*server);
    o.timeout = 120s;
    in_flight = must(testing::http_request(o, "POST", "/slow", "x"));
  });
  ASSERT_TRUE(gate.wait_entered(1));

  server->request_shutdown(120s);
  // The idle keep-alive connection is closed at once, while the request is still running.
  auto closed = idle->read_until_close();
  EXPECT_TRUE(closed.ok()) << closed.error().message;

  gate.release();
  slow.join();
  EXPECT_EQ(in_flight.status, 200);
  EXPECT_EQ(in_flight.body, "finished");
  EXPECT_FALSE(in_flight.keep_alive);  // Connection: close
  server->wait();

  ClientOptions o;
  o.port = port;
  o.timeout = 5s;
  EXPECT_FALSE(testing::http_request(o, "GET", "/healthz").ok());  // no longer listening
}

TEST(HttpServer, ShutdownGraceBoundsAStuckRequest) {
  Gate gate;
  auto routes = test_routes();
  routes.push_back({"POST", "/slow", AuthGroup::kSimulation, [&](const HttpRequest&) {
                      gate.enter_and_wait();
                      return text("late");
                    }});
  auto server = start_server(test_config(), routes);
  ASSERT_TRUE(server);
  auto stuck = must_connect(plain_client(*server));
  ASSERT_TRUE(stuck);
  // Half a request: the connection is reading, not idle, so shutdown waits for it.
  ASSERT_TRUE(stuck->write_raw("POST /filter HTTP/1.1\r\nHost: x\r\n").ok());
  server->shutdown(100ms);  // returns once the grace period closed it
  auto closed = stuck->read_until_close();
  EXPECT_TRUE(closed.ok());
  gate.release();
}

TEST(HttpServer, SigtermTriggersGracefulShutdown) {
  auto server = HttpServer::create(test_config(), test_routes());
  ASSERT_TRUE(server.ok());
  server.value()->shutdown_on_signals(5s);
  server.value()->start();
  EXPECT_EQ(must(testing::http_request(plain_client(*server.value()), "GET", "/healthz")).status,
            200);
  ::kill(::getpid(), SIGTERM);
  server.value()->wait();  // returns only because the signal shut the server down
}

// SIGHUP and SIGUSR1 would end the process by default, without the orderly shutdown.
TEST(HttpServer, HangupAndUserSignalsAreIgnored) {
  auto server = HttpServer::create(test_config(), test_routes());
  ASSERT_TRUE(server.ok());
  server.value()->shutdown_on_signals(5s);
  server.value()->start();
  ::kill(::getpid(), SIGHUP);
  ::kill(::getpid(), SIGUSR1);
  EXPECT_EQ(must(testing::http_request(plain_client(*server.value()), "GET", "/healthz")).status,
            200);
  ::kill(::getpid(), SIGTERM);
  server.value()->wait();
}

TEST(HttpServer, MetricsListenerExposesRequestCountersAndDurations) {
  MetricsRegistry metrics;
  metrics.counter("hamisim_fit_outcomes_total", "Fit outcomes.", {"class", "reason"})
      .labels({"fit", "none"})
      .inc();
  auto server = start_server(test_config(), test_routes(), &metrics);
  ASSERT_TRUE(server);
  ASSERT_NE(server->metrics_port(), 0);
  for (int i = 0; i < 3; ++i) must(testing::http_request(plain_client(*server), "GET", "/healthz"));
  must(testing::http_request(plain_client(*server), "GET", "/nope/with/a/long/path"));
  must(testing::http_request(plain_client(*server), "POST", "/throw", "{}"));

  // The extender listener does not serve /metrics; the metrics listener serves it and the
  // open GET probes (kubelet has no client certificate for the main listener), nothing else.
  EXPECT_EQ(must(testing::http_request(plain_client(*server), "GET", "/metrics")).status, 404);
  ClientOptions m;
  m.port = server->metrics_port();
  EXPECT_EQ(must(testing::http_request(m, "POST", "/filter", "{}")).status, 404);
  EXPECT_EQ(must(testing::http_request(m, "POST", "/webhook", "{}")).status, 404);
  auto r = must(testing::http_request(m, "GET", "/metrics"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(r.body, HasSubstr("# TYPE hamisim_http_requests_total counter\n"));
  EXPECT_THAT(r.body, HasSubstr("hamisim_http_requests_total{route=\"/healthz\",code=\"200\","
                                "outcome=\"ok\"} 3\n"));
  EXPECT_THAT(r.body, HasSubstr("hamisim_http_requests_total{route=\"other\",code=\"404\","
                                "outcome=\"client_error\"} "));
  EXPECT_THAT(r.body, HasSubstr("hamisim_http_requests_total{route=\"/throw\",code=\"500\","
                                "outcome=\"server_error\"} 1\n"));
  EXPECT_THAT(r.body, HasSubstr("# TYPE hamisim_http_request_duration_seconds histogram\n"));
  EXPECT_THAT(r.body, HasSubstr("hamisim_http_request_duration_seconds_count{route=\"/healthz\","
                                "outcome=\"ok\"} 3\n"));
  EXPECT_THAT(r.body, HasSubstr("hamisim_http_request_duration_seconds_bucket{route=\"/throw\","
                                "outcome=\"server_error\",le=\"+Inf\"} 1\n"));
  EXPECT_THAT(r.body, HasSubstr("hamisim_http_inflight_requests{group=\"live\"} 0\n"));
  EXPECT_THAT(r.body, HasSubstr("hamisim_fit_outcomes_total{class=\"fit\",reason=\"none\"} 1\n"));
  EXPECT_THAT(r.body, ::testing::Not(HasSubstr("/nope")));  // raw paths never become labels

  auto probe = must(testing::http_request(m, "GET", "/healthz"));
  EXPECT_EQ(probe.status, 200);
  EXPECT_EQ(probe.body, "ok");
}

TEST(HttpServer, RouteCanSetItsOwnOutcome) {
  auto routes = test_routes();
  routes.push_back({"POST", "/soft-error", AuthGroup::kSimulation, [](const HttpRequest&) {
                      HttpResponse r = HttpResponse::error(200, "invalid request: no pod");
                      r.outcome = "invalid_request";
                      return r;
                    }});
  auto server = start_server(test_config(), routes);
  ASSERT_TRUE(server);
  auto r = must(testing::http_request(plain_client(*server), "POST", "/soft-error", "{}"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"Error":"invalid request: no pod"})");
  auto text = server->metrics().render();
  EXPECT_THAT(text, HasSubstr("hamisim_http_request_duration_seconds_count{route=\"/soft-error\","
                              "outcome=\"invalid_request\"} 1\n"));
}

// An extender answers its errors with HTTP 200 and an Error field: the request counter must
// tell them apart from successes, not only the duration histogram.
TEST(HttpServer, RequestCounterTellsAnErrorAnsweredWith200FromASuccess) {
  auto routes = test_routes();
  routes.push_back({"POST", "/soft-error", AuthGroup::kSimulation, [](const HttpRequest&) {
                      HttpResponse r = HttpResponse::error(200, "not ready: no source");
                      r.outcome = "error";
                      return r;
                    }});
  auto server = start_server(test_config(), routes);
  ASSERT_TRUE(server);
  must(testing::http_request(plain_client(*server), "POST", "/soft-error", "{}"));
  must(testing::http_request(plain_client(*server), "GET", "/healthz"));
  auto text = server->metrics().render();
  EXPECT_THAT(text, HasSubstr("hamisim_http_requests_total{route=\"/soft-error\",code=\"200\","
                              "outcome=\"error\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("hamisim_http_requests_total{route=\"/healthz\",code=\"200\","
                              "outcome=\"ok\"} 1\n"));
}

// --- isolation and limits (adversarial probe) ------------------------------------------------

// Polls `metrics` until it shows `line`; false after a minute.
bool eventually_shows(const HttpServer& server, const std::string& line) {
  for (int i = 0; i < 6000; ++i) {
    auto m = testing::http_request(metrics_client(server), "GET", "/metrics");
    if (m && m->body.find(line) != std::string::npos) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// A heavy route computes on its own thread: with one request thread busy nowhere, probes,
// metrics and live verbs answer while plans run, and queued plans count against the limits.
TEST(HttpServer, HeavyRoutesLeaveProbesAndLiveVerbsAnswering) {
  Gate gate;
  auto config = test_config();
  config.threads = 1;  // one request thread: a plan computed on it would block every route
  config.heavy_threads = 1;
  config.max_inflight_heavy = 2;
  auto routes = test_routes();
  routes.push_back({"POST", "/plan", AuthGroup::kSimulation,
                    [&](const HttpRequest&) {
                      gate.enter_and_wait();
                      return text("planned");
                    },
                    /*heavy=*/true});
  auto server = start_server(config, routes);
  ASSERT_TRUE(server);

  std::vector<ClientResponse> planned(2);
  std::vector<std::thread> plans;
  plans.emplace_back([&] {
    auto o = plain_client(*server);
    o.timeout = 120s;
    planned[0] = must(testing::http_request(o, "POST", "/plan", "x"));
  });
  ASSERT_TRUE(gate.wait_entered(1));
  // The second waits for the compute thread; it counts from the moment it was read.
  plans.emplace_back([&] {
    auto o = plain_client(*server);
    o.timeout = 120s;
    planned[1] = must(testing::http_request(o, "POST", "/plan", "x"));
  });
  EXPECT_TRUE(
      eventually_shows(*server, "hamisim_http_inflight_requests{group=\"simulation\"} 2\n"));

  EXPECT_EQ(must(testing::http_request(plain_client(*server), "GET", "/healthz")).status, 200);
  EXPECT_EQ(must(testing::http_request(metrics_client(*server), "GET", "/healthz")).status, 200);
  EXPECT_EQ(must(testing::http_request(plain_client(*server), "POST", "/filter", "x")).status, 200);
  EXPECT_EQ(must(testing::http_request(plain_client(*server), "POST", "/echo", "y")).body, "y");
  auto third = must(testing::http_request(plain_client(*server), "POST", "/plan", "x"));
  EXPECT_EQ(third.status, 429);
  EXPECT_THAT(third.body, HasSubstr("overloaded: more than 2 heavy (plan) requests in flight"));

  gate.release();
  for (auto& t : plans) t.join();
  for (const auto& r : planned) EXPECT_EQ(r.body, "planned");
  EXPECT_TRUE(
      eventually_shows(*server, "hamisim_http_inflight_requests{group=\"simulation\"} 0\n"));
}

// A heavy handler still computing when the grace period ends is told to stop, and its client
// sees the connection closed: never a 200 with a cut body. Shutdown does not wait for it.
TEST(HttpServer, ShutdownGraceAbandonsAComputingHeavyRequest) {
  std::atomic<bool> entered{false};
  auto routes = test_routes();
  routes.push_back({"POST", "/plan", AuthGroup::kSimulation,
                    [&](const HttpRequest& req) {
                      entered = true;
                      while (!req.is_abandoned()) std::this_thread::sleep_for(1ms);
                      return text(std::string(1 << 20, 'x'));
                    },
                    /*heavy=*/true});
  auto server = start_server(test_config(), routes);
  ASSERT_TRUE(server);
  Result<ClientResponse> answer = make_error("not answered");
  std::thread plan([&] {
    auto o = plain_client(*server);
    o.timeout = 120s;
    answer = testing::http_request(o, "POST", "/plan", "x");
  });
  for (int i = 0; i < 6000 && !entered; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(entered);
  server->shutdown(100ms);  // returns: the handler saw it was abandoned
  plan.join();
  EXPECT_FALSE(answer.ok()) << "status " << answer->status;
}

// Each listener has its own connection budget: idle keep-alive clients that fill the main
// listener do not lock out probes and scrapes on the metrics listener.
// Each listener has its own cap. At the cap, the connection that has waited longest for a
// request (idle keep-alive, or connected and silent) is closed to make room for the new one;
// connections busy with a request never are, and when all are busy the new one is dropped.
TEST(HttpServer, ConnectionLimitsArePerListenerAndCloseTheLongestWaitingFirst) {
  auto config = test_config();
  config.max_connections = 2;
  config.max_metrics_connections = 1;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  std::vector<std::unique_ptr<HttpTestClient>> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(must_connect(plain_client(*server)));
    ASSERT_TRUE(held.back());
    EXPECT_EQ(must(held.back()->request("GET", "/healthz")).status, 200);
    std::this_thread::sleep_for(20ms);  // held[0] has waited longer
  }
  // Over the main budget: the longest idle connection makes room.
  EXPECT_EQ(must(testing::http_request(plain_client(*server), "GET", "/healthz")).status, 200);
  auto closed = held[0]->read_until_close();
  ASSERT_TRUE(closed.ok()) << closed.error().message;
  EXPECT_EQ(*closed, "");
  EXPECT_EQ(must(held[1]->request("GET", "/healthz")).status, 200);

  // The metrics listener's budget is its own: one connection busy reading a request there.
  auto busy = must_connect(metrics_client(*server));
  ASSERT_TRUE(busy);
  ASSERT_TRUE(busy->write_raw("GET /healthz HTTP/1.1\r\nHost: x\r\n").ok());
  std::this_thread::sleep_for(50ms);  // the server has read it
  ClientOptions quick_metrics = metrics_client(*server);
  quick_metrics.timeout = 10s;
  EXPECT_FALSE(testing::http_request(quick_metrics, "GET", "/healthz").ok());  // all busy
  ASSERT_TRUE(busy->write_raw("\r\n").ok());
  auto finished = must(busy->read_response());
  EXPECT_EQ(finished.status, 200);
  // Now idle, it makes room for the next one.
  EXPECT_EQ(must(testing::http_request(metrics_client(*server), "GET", "/metrics")).status, 200);
  EXPECT_TRUE(busy->read_until_close().ok());
}

// A server with a simulation budget of 1000 body bytes, 600 of them held by a /hold request
// until the end of the test: where the admission tests start.
struct HeldBudget {
  Gate gate;
  std::unique_ptr<HttpServer> server;
  std::thread held;
  ~HeldBudget() {
    gate.release();
    if (held.joinable()) held.join();
  }
};

void hold_simulation_budget(ServerConfig config, HeldBudget& h) {
  config.max_inflight_simulation_bytes = 1000;
  auto routes = test_routes();
  routes.push_back({"POST", "/hold", AuthGroup::kSimulation, [&h](const HttpRequest&) {
                      h.gate.enter_and_wait();
                      return text("held");
                    }});
  h.server = start_server(config, routes);
  ASSERT_TRUE(h.server);
  h.held = std::thread([&h] {
    EXPECT_EQ(
        must(testing::http_request(plain_client(*h.server), "POST", "/hold", std::string(600, 'h')))
            .status,
        200);
  });
  ASSERT_TRUE(h.gate.wait_entered(1));
}

// Issue #44: simulation requests are admitted by the body bytes they bring. Past the budget, a
// request announcing its length is refused at once, before its body is read; a chunked one
// once read. Other groups do not count, and one request alone always fits.
TEST(HttpServer, SimulationRequestsAreAdmittedByTheirBodyBytes) {
  HeldBudget h;
  ASSERT_NO_FATAL_FAILURE(hold_simulation_budget(test_config(), h));
  HttpServer* server = h.server.get();

  // 600 + 600 > 1000: the header alone is answered, the body never sent.
  auto early = must_connect(plain_client(*server));
  ASSERT_TRUE(early);
  ASSERT_TRUE(
      early->write_raw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 600\r\n\r\n").ok());
  auto refused = must(early->read_response());
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(refused.header("Retry-After"), "1");
  EXPECT_THAT(refused.body,
              HasSubstr("overloaded: more than 1000 bytes of simulation request bodies in flight"));
  // A chunked body of the same size: refused once read.
  auto chunked = must_connect(plain_client(*server));
  ASSERT_TRUE(chunked);
  ASSERT_TRUE(chunked
                  ->write_raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "258\r\n" +
                              std::string(600, 'c') + "\r\n0\r\n\r\n")
                  .ok());
  EXPECT_EQ(must(chunked->read_response()).status, 429);
  // What fits is served; the live group is not counted.
  EXPECT_EQ(
      must(testing::http_request(plain_client(*server), "POST", "/echo", std::string(300, 'e')))
          .status,
      200);
  EXPECT_EQ(
      must(testing::http_request(plain_client(*server), "POST", "/filter", std::string(5000, 'f')))
          .status,
      200);
  h.gate.release();
  h.held.join();
  // Alone, a body larger than the budget is admitted.
  EXPECT_EQ(
      must(testing::http_request(plain_client(*server), "POST", "/echo", std::string(1500, 'e')))
          .status,
      200);
}

// Issue #44: a refused simulation body was read to its end before the connection closed;
// under a flood of 2.5 MB bodies that reading took more of the request threads than the
// simulations did, and kept the clients sending. At most kMaxDrainBytes of it are read now;
// then the server stops reading and closes shortly after, as Go's net/http server does.
TEST(HttpServer, ARefusedBodyIsNotReadToItsEnd) {
  auto config = test_config();
  config.max_body_bytes = size_t(256) << 20;
  HeldBudget h;
  ASSERT_NO_FATAL_FAILURE(hold_simulation_budget(config, h));
  HttpServer* server = h.server.get();

  constexpr size_t kBody = size_t(128) << 20;
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  ASSERT_TRUE(client
                  ->write_raw(fmt::format(
                      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n", kBody))
                  .ok());
  // The answer comes before the body, as a client that reads while it sends (Go's) sees it.
  EXPECT_EQ(must(client->read_response()).status, 429);
  const std::string chunk(size_t(1) << 20, 'b');
  size_t sent = 0;
  const auto start = std::chrono::steady_clock::now();
  while (sent < kBody && client->write_raw(chunk).ok()) sent += chunk.size();
  // What the kernel buffers on both sides took, and no more: far from the whole body.
  EXPECT_LT(sent, kBody / 4) << "the server read the refused body";
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

// Issue #44: simulation requests compute on threads of their own, at a lower priority than
// the request threads, so that a saturated simulation path leaves the live verbs answering.
TEST(HttpServer, SimulationComputesApartFromTheLiveVerbsAtALowerPriority) {
  Gate gate;
  auto config = test_config();
  config.threads = 1;  // one request thread: a simulation computed on it would block /filter
  config.simulation_threads = 1;
  config.compute_nice = 7;
  auto routes = test_routes();
  routes.push_back({"POST", "/simulate", AuthGroup::kSimulation, [&gate](const HttpRequest&) {
                      gate.enter_and_wait();
                      return text("simulated");
                    }});
  auto server = start_server(config, routes);
  ASSERT_TRUE(server);
  std::thread simulating([&] {
    EXPECT_EQ(must(testing::http_request(plain_client(*server), "POST", "/simulate")).body,
              "simulated");
  });
  ASSERT_TRUE(gate.wait_entered(1));
  EXPECT_EQ(must(testing::http_request(plain_client(*server), "POST", "/filter", "x")).status, 200);

  // The compute threads are named and niced (field 19 of /proc/<pid>/task/<tid>/stat).
  std::map<std::string, int> nice_by_name;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm"), stat(task.path() / "stat");
    std::string name, line;
    std::getline(comm, name);
    std::getline(stat, line);
    std::istringstream fields(line.substr(line.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 19 && fields >> field; ++i) {
    }
    nice_by_name[name] = std::stoi(field);
  }
  EXPECT_EQ(nice_by_name["hamisim-sim"], 7);
  EXPECT_EQ(nice_by_name["hamisim-plan"], 7);
  gate.release();
  simulating.join();
}

// Issue #44: 64 keep-alive connections held open on the metrics listener made every new
// kubelet probe fail (0/20). At the cap the probes now take the place of the longest waiting.
TEST(HttpServer, ProbesAnswerWhenTheMetricsListenerIsFullOfIdleConnections) {
  auto config = test_config();
  ASSERT_EQ(config.max_metrics_connections, 64);
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  std::vector<std::unique_ptr<HttpTestClient>> idle;
  for (int i = 0; i < config.max_metrics_connections; ++i) {
    idle.push_back(must_connect(metrics_client(*server)));
    ASSERT_TRUE(idle.back());
    // Half keep-alive between requests, half connected and silent.
    if (i % 2 == 0) {
      EXPECT_EQ(must(idle.back()->request("GET", "/healthz")).status, 200);
    }
  }
  // Each probe keeps its connection, so each one needs a place of its own.
  std::vector<std::unique_ptr<HttpTestClient>> probes;
  int answered = 0;
  for (int i = 0; i < 20; ++i) {
    probes.push_back(must_connect(metrics_client(*server)));
    ASSERT_TRUE(probes.back());
    auto r = probes.back()->request("GET", "/healthz");
    if (r && r->status == 200) ++answered;
  }
  EXPECT_EQ(answered, 20);
  // The 20 longest waiting connections were closed for them, and only those.
  int closed = 0;
  for (auto& c : idle) {
    if (auto r = c->request("GET", "/healthz"); !r || r->status != 200) ++closed;
  }
  EXPECT_EQ(closed, 20);
  for (auto& p : probes) EXPECT_EQ(must(p->request("GET", "/healthz")).status, 200);
}

// The metrics listener runs on a thread of its own: with every request thread of the main
// listener taken by handlers, kubelet's probes and the scrape still answer.
TEST(HttpServer, ProbesAnswerWhileEveryRequestThreadIsBusy) {
  Gate gate;
  auto config = test_config();
  config.threads = 1;
  auto routes = test_routes();
  // A live route: it runs on the request thread (a simulation one would compute apart).
  routes.push_back({"POST", "/block", AuthGroup::kLive, [&gate](const HttpRequest&) {
                      gate.enter_and_wait();
                      return text("done");
                    }});
  auto server = start_server(config, routes);
  ASSERT_TRUE(server);
  std::thread blocked([&] {
    EXPECT_EQ(must(testing::http_request(plain_client(*server), "POST", "/block")).status, 200);
  });
  ASSERT_TRUE(gate.wait_entered(1));
  ClientOptions probe = metrics_client(*server);
  probe.timeout = 5s;
  auto health = testing::http_request(probe, "GET", "/healthz");
  auto scrape = testing::http_request(probe, "GET", "/metrics");
  gate.release();
  blocked.join();
  ASSERT_TRUE(health.ok()) << health.error().message;
  EXPECT_EQ(health->status, 200);
  ASSERT_TRUE(scrape.ok()) << scrape.error().message;
  EXPECT_EQ(scrape->status, 200);
}

// A client reconnecting in a loop to a full listener wrote a warning per attempt (126,700
// lines in 5 s); it is one line per interval now, which counts the rest.
TEST(HttpServer, ConnectionLimitWarningsAreRateLimited) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  auto logger = std::make_shared<spdlog::logger>("test", sink);
  auto config = test_config();
  config.logger = logger;
  config.max_metrics_connections = 1;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  auto busy = must_connect(metrics_client(*server));
  ASSERT_TRUE(busy);
  ASSERT_TRUE(busy->write_raw("GET /healthz HTTP/1.1\r\nHost: x\r\n").ok());
  std::this_thread::sleep_for(50ms);
  for (int i = 0; i < 50; ++i) {
    EXPECT_FALSE(testing::http_request(metrics_client(*server), "GET", "/healthz").ok());
  }
  ASSERT_TRUE(busy->write_raw("\r\n").ok());
  EXPECT_EQ(must(busy->read_response()).status, 200);
  server->shutdown(5s);
  const std::string logs = out.str();
  size_t lines = 0;
  for (size_t at = logs.find("connection limit 1 of the metrics listener reached");
       at != std::string::npos; at = logs.find("connection limit", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << logs;
}

// RFC 9112 §6.3: a transfer coding that does not end in chunked cannot frame a request; the
// answer is 400 and the connection closes, so nothing smuggled after it is answered.
TEST(HttpServer, TransferEncodingNotEndingInChunkedIsRejected) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  ASSERT_TRUE(client
                  ->write_raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n"
                              "Content-Length: 37\r\n\r\n"
                              "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                  .ok());
  auto r = must(client->read_response());
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body, HasSubstr("invalid request:"));
  auto rest = client->read_until_close();
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_EQ(rest->find("HTTP/1.1 200"), std::string::npos) << *rest;
}

TEST(HttpServer, Http11RequestWithoutHostIsRejected) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->write_raw("GET /healthz HTTP/1.1\r\n\r\n").ok());
  auto r = must(client->read_response());
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body, HasSubstr("invalid request: an HTTP/1.1 request needs a Host header"));
}

TEST(HttpServer, TwoHostHeadersAreRejected) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  for (const char* request : {"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
                              "GET /healthz HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n",
                              "GET /healthz HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n"}) {
    SCOPED_TRACE(request);
    auto client = must_connect(plain_client(*server));
    ASSERT_TRUE(client);
    ASSERT_TRUE(client->write_raw(request).ok());
    auto r = must(client->read_response());
    EXPECT_EQ(r.status, 400);
    EXPECT_THAT(r.body, HasSubstr("invalid request: more than one Host header"));
  }
  // One Host is fine.
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->write_raw("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n").ok());
  EXPECT_EQ(must(client->read_response()).status, 200);
}

// Answers given before a request is whole (413, 431, 400 for bad framing) carry the request's
// own X-Request-Id like every other answer, whether the parser had stored the field or not.
TEST(HttpServer, EarlyErrorAnswersEchoTheRequestId) {
  auto config = test_config();
  config.max_body_bytes = 1024;
  config.max_header_bytes = 1024;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  const std::string id = "X-Request-Id: early-1\r\n";
  struct Case {
    std::string request;
    std::string status;
  };
  const std::vector<Case> cases = {
      // Content-Length over the limit: refused at the end of the header.
      {"POST /echo HTTP/1.1\r\nHost: x\r\n" + id + "Content-Length: 5000000\r\n\r\n", "413"},
      {"POST /echo HTTP/1.1\r\nContent-Length: 5000000\r\nHost: x\r\n" + id + "\r\n", "413"},
      {"POST /echo HTTP/1.1\r\nHost: x\r\n" + id + "Transfer-Encoding: chunked\r\n\r\n7d0\r\n" +
           std::string(2000, 'z') + "\r\n",
       "413"},
      // A header over the limit: the parser stores no field at all.
      {"GET /healthz HTTP/1.1\r\nHost: x\r\n" + id + "X-Big: " + std::string(4096, 'h') +
           "\r\n\r\n",
       "431"},
      {"POST /echo HTTP/1.1\r\nHost: x\r\n" + id + "Transfer-Encoding: gzip\r\n\r\n", "400"},
      {"GET /healthz HTTP/1.1\r\n" + id + "\r\n", "400"},
      // A malformed field after the id, and one before it.
      {"GET /healthz HTTP/1.1\r\nHost: x\r\n" + id + "Bad Field\r\n\r\n", "400"},
      {"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Field\r\n" + id + "\r\n", "400"},
      {"POST /echo HTTP/1.1\r\nHost: x\r\n" + id + "Transfer-Encoding: chunked\r\n\r\n5\nhello",
       "400"},
  };
  for (const Case& c : cases) {
    auto client = must_connect(plain_client(*server));
    ASSERT_TRUE(client);
    ASSERT_TRUE(client->write_raw(c.request).ok());
    auto raw = client->read_until_close();
    ASSERT_TRUE(raw.ok()) << raw.error().message;
    EXPECT_THAT(*raw, StartsWith("HTTP/1.1 " + c.status)) << c.request.substr(0, 100);
    EXPECT_THAT(*raw, HasSubstr("\r\nX-Request-Id: early-1\r\n")) << c.request.substr(0, 100);
  }
}

// RFC 9112 §7.1: chunk lines end with CRLF. One ending in a bare LF would never end for the
// parser, which would wait out the body timeout (60 s here; the client gives up after 10):
// it is answered 400 at once and the connection closed. Trailers too.
TEST(HttpServer, ChunkLineEndingInABareLfIsRejectedAtOnce) {
  auto config = test_config();
  config.body_timeout = 60s;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  const std::string head = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const std::string& body :
       {std::string("5\nhello"), std::string("5;ext=1\nhel"), std::string("3\r\nabc\r\n2\nde\r\n"),
        std::string("3\r\nabc\r\n0\n"), std::string("3\r\nabc\r\n0\r\nX-Trailer: 1\n\n")}) {
    auto client = must_connect(plain_client(*server));
    ASSERT_TRUE(client);
    ASSERT_TRUE(client->write_raw(head + body).ok());
    auto raw = client->read_until_close();
    ASSERT_TRUE(raw.ok()) << raw.error().message;
    EXPECT_THAT(*raw, StartsWith("HTTP/1.1 400"));
    EXPECT_THAT(*raw, HasSubstr("invalid request: malformed HTTP"));
  }
}

// A chunk line that never ends is bounded like a header instead of filling memory until the
// body timeout.
TEST(HttpServer, EndlessChunkLineIsRejected) {
  auto config = test_config();
  config.body_timeout = 60s;
  config.max_header_bytes = 1024;
  auto server = start_server(config, test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  ASSERT_TRUE(client
                  ->write_raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "5;ext=" +
                              std::string(4096, 'a'))
                  .ok());
  auto raw = client->read_until_close();
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_THAT(*raw, StartsWith("HTTP/1.1 400"));
  EXPECT_THAT(*raw, HasSubstr("chunk line too long"));
}

// A chunked body (extensions, trailers) that arrives a few bytes at a time is read whole.
TEST(HttpServer, ChunkedBodySplitAcrossManyWritesIsReadWhole) {
  auto server = start_server(test_config(), test_routes());
  ASSERT_TRUE(server);
  auto client = must_connect(plain_client(*server));
  ASSERT_TRUE(client);
  std::string raw = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::string expected;
  for (size_t size : {1, 7, 300, 20000, 2}) {
    const std::string chunk = pattern(size, int(size));
    expected += chunk;
    raw += fmt::format("{:x};name=value\r\n", size) + chunk + "\r\n";
  }
  raw += "0\r\nX-Trailer: t\r\n\r\n";
  size_t pos = 0, step = 1;
  int writes = 0;
  while (pos < raw.size()) {
    size_t n = std::min(raw.size() - pos, step);
    ASSERT_TRUE(client->write_raw(std::string_view(raw).substr(pos, n)).ok());
    pos += n;
    step = (step * 5 + 3) % 1009 + 1;
    if (++writes % 8 == 0) std::this_thread::sleep_for(1ms);
  }
  auto r = must(client->read_response());
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.body == expected) << r.body.size() << " bytes";
  EXPECT_EQ(must(client->request("POST", "/echo", "next")).body, "next");
}

}  // namespace
}  // namespace hamisim::server
