// The live probe of `hamisim doctor` against a real `hamisim serve` (HttpServer + the extender
// routes) on loopback, over plain HTTP and mTLS, and against servers that fail in each way a
// deployment can: refused connections, untrusted certificates, refused client identities,
// wrong routes, error answers, rejections and timeouts.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "doctor_test_support.h"
#include "fit/description.h"
#include "server/extender_service.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "test_certs.h"

namespace hamisim::doctor {
namespace {

using ::testing::HasSubstr;
using namespace testing;
using namespace std::chrono_literals;
using extender::ExtenderConfig;
using extender::ExtenderTlsConfig;
using extender::SchedulerConfig;

// The real extender routes, as `hamisim serve` runs them.
class Service {
 public:
  explicit Service(server::ServerConfig config = {})
      : registry_(device::build_registry({})),
        engine_(registry_, nullptr),
        service_(engine_, metrics_, {}) {
    start(std::move(config), service_.routes());
  }
  // A server with hand-written routes instead.
  Service(server::ServerConfig config, std::vector<server::Route> routes)
      : registry_(device::build_registry({})),
        engine_(registry_, nullptr),
        service_(engine_, metrics_, {}) {
    start(std::move(config), std::move(routes));
  }
  ~Service() { stop(); }
  void stop() {
    if (server_) server_->shutdown(5s);
    server_.reset();
  }
  uint16_t port() const { return port_; }

 private:
  void start(server::ServerConfig config, std::vector<server::Route> routes) {
    config.listen = "127.0.0.1:0";
    config.metrics_listen = "";
    auto server = server::HttpServer::create(std::move(config), std::move(routes), &metrics_);
    if (!server) throw std::runtime_error(server.error().message);
    server_ = std::move(server).value();
    port_ = server_->port();
    server_->start();
  }
  device::DeviceRegistry registry_;
  engine::Engine engine_;
  server::MetricsRegistry metrics_;
  server::ExtenderService service_;
  std::unique_ptr<server::HttpServer> server_;
  uint16_t port_ = 0;
};

SchedulerConfig one_extender(const std::string& url, const std::string& verb = "filter-simulation",
                             bool node_cache_capable = false) {
  SchedulerConfig c;
  c.source = "probe.yaml";
  c.profiles.emplace_back();
  c.profiles.back().node_resources_fit.emplace();  // v1 defaulting
  ExtenderConfig e;
  e.url_prefix = url;
  e.filter_verb = verb;
  e.node_cache_capable = node_cache_capable;
  e.http_timeout = 5s;
  for (const auto& n : default_options().hami_resources) e.managed_resources.push_back({n, true});
  c.extenders.push_back(e);
  return c;
}

device::ResourceNames nvidia_names() {
  return device::build_registry({}).find("NVIDIA")->resource_names();
}

ProbeOutcome probe(const SchedulerConfig& c, ConfigRole role = ConfigRole::kClusterAutoscaler) {
  return probe_extender(c, 0, role, nvidia_names(), default_options());
}

std::string http_url(uint16_t port) {
  return "http://127.0.0.1:" + std::to_string(port);
}
std::string https_url(uint16_t port) {
  return "https://127.0.0.1:" + std::to_string(port);
}

server::Route fixed(std::string path, int status, std::string body,
                    std::chrono::milliseconds delay = 0ms) {
  return server::Route{"POST", std::move(path), server::AuthGroup::kSimulation,
                       [=](const server::HttpRequest&) {
                         if (delay.count() > 0) std::this_thread::sleep_for(delay);
                         return server::HttpResponse::json(status, body);
                       }};
}

TEST(DoctorProbe, PodAndNodeAreWhatTheProbeSays) {
  const std::string pod = probe_pod_json(nvidia_names());
  EXPECT_THAT(pod, HasSubstr(R"("limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem":"100"})"));
  const std::string node = probe_node_json("n", "nvidia.com/gpu");
  EXPECT_THAT(node,
              HasSubstr(R"("hami.io/node-nvidia-register":"[{\"id\":\"GPU-HAMISIM-DOCTOR-0\")"));
  EXPECT_THAT(node, HasSubstr(R"("nvidia.com/gpu":"10")"));
}

TEST(DoctorProbe, RealExtenderOverPlainHttpPassesTheProbe) {
  Service svc;
  auto out = probe(one_extender(http_url(svc.port())));
  EXPECT_TRUE(out.result.ok) << describe(out.findings);
  EXPECT_TRUE(out.result.reachable);
  EXPECT_EQ(out.result.answer, "passed");
  EXPECT_EQ(out.result.tls, "none");
  EXPECT_EQ(out.result.url, http_url(svc.port()) + "/filter-simulation");
  EXPECT_TRUE(bad(out.findings).empty()) << describe(out.findings);
  auto f = find(out.findings, "probe");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_THAT(f->message, HasSubstr("the probe node passed"));
}

TEST(DoctorProbe, RealExtenderOverMutualTlsPassesTheProbe) {
  hamisim::testing::TestPki pki;
  server::ServerConfig sc;
  sc.tls_cert = pki.server.cert;
  sc.tls_key = pki.server.key;
  sc.client_ca = pki.ca.ca_cert();
  sc.allow_simulation_clients = {"cluster-autoscaler"};
  Service svc(sc);
  SchedulerConfig c = one_extender(https_url(svc.port()));
  c.extenders[0].enable_https = true;
  c.extenders[0].tls_config = ExtenderTlsConfig{};
  c.extenders[0].tls_config->ca_file = pki.ca.ca_cert();
  c.extenders[0].tls_config->cert_file = pki.autoscaler.cert;
  c.extenders[0].tls_config->key_file = pki.autoscaler.key;
  auto out = probe(c);
  EXPECT_TRUE(out.result.ok) << describe(out.findings) << out.result.reason;
  EXPECT_EQ(out.result.tls, "verified");
  EXPECT_TRUE(bad(out.findings).empty()) << describe(out.findings);
  EXPECT_THAT(find(out.findings, "probe")->message, HasSubstr("server certificate verified"));
}

class DoctorProbeTls : public ::testing::Test {
 protected:
  DoctorProbeTls() {
    server::ServerConfig sc;
    sc.tls_cert = pki_.server.cert;
    sc.tls_key = pki_.server.key;
    sc.client_ca = pki_.ca.ca_cert();
    sc.allow_simulation_clients = {"cluster-autoscaler"};
    svc_ = std::make_unique<Service>(sc);
  }
  SchedulerConfig config(const std::string& ca, const hamisim::testing::CertFiles* client) {
    SchedulerConfig c = one_extender(https_url(svc_->port()));
    c.extenders[0].tls_config = ExtenderTlsConfig{};
    c.extenders[0].tls_config->ca_file = ca;
    if (client) {
      c.extenders[0].tls_config->cert_file = client->cert;
      c.extenders[0].tls_config->key_file = client->key;
    }
    return c;
  }
  hamisim::testing::TestPki pki_;
  std::unique_ptr<Service> svc_;
};

TEST_F(DoctorProbeTls, UntrustedServerCertificateIsAnError) {
  auto out = probe(config(pki_.other_ca.ca_cert(), &pki_.autoscaler));
  EXPECT_FALSE(out.result.ok);
  EXPECT_EQ(out.result.answer, "error");
  auto f = find(out.findings, "probe-tls");
  ASSERT_TRUE(f) << describe(out.findings);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_THAT(f->message, HasSubstr("failed verification"));
  EXPECT_THAT(f->fix, HasSubstr("caFile"));
}

TEST_F(DoctorProbeTls, MissingClientCertificateFailsTheHandshake) {
  auto out = probe(config(pki_.ca.ca_cert(), nullptr));
  auto f = find(out.findings, "probe-tls");
  ASSERT_TRUE(f) << describe(out.findings);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_THAT(f->fix, HasSubstr("certFile"));
}

TEST_F(DoctorProbeTls, ClientIdentityOfTheWrongGroupGets403) {
  auto out = probe(config(pki_.ca.ca_cert(), &pki_.scheduler));
  EXPECT_TRUE(out.result.reachable);
  auto f = find(out.findings, "probe-http-status");
  ASSERT_TRUE(f) << describe(out.findings);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_THAT(f->message, HasSubstr("HTTP 403"));
  EXPECT_THAT(f->fix, HasSubstr("--allow-simulation-clients"));
}

TEST(DoctorProbe, ConnectionRefusedIsAnError) {
  uint16_t port = 0;
  {
    Service svc;  // bind an ephemeral port, then free it
    port = svc.port();
  }
  auto out = probe(one_extender(http_url(port)));
  EXPECT_FALSE(out.result.reachable);
  EXPECT_FALSE(out.result.ok);
  auto f = find(out.findings, "probe-reachability");
  ASSERT_TRUE(f) << describe(out.findings);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_EQ(f->field, "extenders[0].urlPrefix");
  EXPECT_THAT(f->message, HasSubstr("cannot reach"));
  EXPECT_THAT(f->fix, HasSubstr("NetworkPolicy"));
}

TEST(DoctorProbe, UnknownRouteIs404) {
  Service svc;
  auto out = probe(one_extender(http_url(svc.port()), "filter-simulations"));
  auto f = find(out.findings, "probe-http-status");
  ASSERT_TRUE(f) << describe(out.findings);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_THAT(f->message, HasSubstr("HTTP 404"));
  EXPECT_THAT(f->fix, HasSubstr("filterVerb: filter-simulation"));
}

TEST(DoctorProbe, ServerErrorStatusIsAnError) {
  Service svc({}, {fixed("/filter-simulation", 500, R"({"Error":"internal: boom"})")});
  auto out = probe(one_extender(http_url(svc.port())));
  auto f = find(out.findings, "probe-http-status");
  ASSERT_TRUE(f) << describe(out.findings);
  EXPECT_THAT(f->message, HasSubstr("HTTP 500"));
}

TEST(DoctorProbe, ErrorInTheAnswerIsAnError) {
  Service svc({}, {fixed("/filter-simulation", 200,
                         R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,)"
                         R"("FailedAndUnresolvableNodes":null,"Error":"not ready: loading"})")});
  auto out = probe(one_extender(http_url(svc.port())));
  EXPECT_TRUE(out.result.reachable);
  auto f = find(out.findings, "probe-answer");
  ASSERT_TRUE(f) << describe(out.findings);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_THAT(f->message, HasSubstr("not ready: loading"));
  EXPECT_THAT(f->fix, HasSubstr("/readyz"));
}

TEST(DoctorProbe, RejectedProbeNodeIsAnErrorWithTheReason) {
  Service svc({}, {fixed("/filter-simulation", 200,
                         R"({"Nodes":{"metadata":{},"items":[]},"NodeNames":null,)"
                         R"("FailedNodes":{"hamisim-doctor-probe":"node unregistered"},)"
                         R"("FailedAndUnresolvableNodes":null,"Error":""})")});
  auto out = probe(one_extender(http_url(svc.port())));
  EXPECT_EQ(out.result.answer, "rejected");
  EXPECT_EQ(out.result.reason, "node unregistered");
  auto f = find(out.findings, "probe-answer");
  ASSERT_TRUE(f) << describe(out.findings);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_THAT(f->message, HasSubstr("node unregistered"));
}

TEST(DoctorProbe, GarbageAnswerIsAnError) {
  Service svc({}, {fixed("/filter-simulation", 200, "<html>hello</html>")});
  auto out = probe(one_extender(http_url(svc.port())));
  auto f = find(out.findings, "probe-response");
  ASSERT_TRUE(f) << describe(out.findings);
  EXPECT_EQ(f->severity, Severity::kError);
}

TEST(DoctorProbe, NoAnswerWithinHttpTimeoutIsAnError) {
  Service svc({}, {fixed("/filter-simulation", 200, "{}", 1500ms)});
  SchedulerConfig c = one_extender(http_url(svc.port()));
  c.extenders[0].http_timeout = 200ms;
  auto out = probe(c);
  auto f = find(out.findings, "probe-timeout");
  ASSERT_TRUE(f) << describe(out.findings);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_THAT(f->message, HasSubstr("200ms"));
}

TEST(DoctorProbe, ClientThatCannotBeBuiltIsAnError) {
  SchedulerConfig c = one_extender("https://127.0.0.1:1");
  c.extenders[0].tls_config = ExtenderTlsConfig{};
  c.extenders[0].tls_config->ca_file = "/nonexistent/ca.crt";
  auto out = probe(c);
  EXPECT_EQ(out.result.answer, "skipped");
  auto f = find(out.findings, "probe-client");
  ASSERT_TRUE(f) << describe(out.findings);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_THAT(f->message, HasSubstr("/nonexistent/ca.crt"));
}

// kube-scheduler's extender sends node names; a live extender does not know the probe node, so
// any well-formed answer proves the route. Without a cluster source it answers `not ready:`,
// which is a warning (a standby replica), never an error.
TEST(DoctorProbe, LiveExtenderIsProbedWithNodeNames) {
  Service svc;
  auto out = probe(one_extender(http_url(svc.port()), "filter", true), ConfigRole::kKubeScheduler);
  EXPECT_TRUE(out.result.reachable) << out.result.reason;
  EXPECT_EQ(out.result.url, http_url(svc.port()) + "/filter");
  for (const auto& f : out.findings) EXPECT_NE(f.severity, Severity::kError) << f.message;
}

TEST(DoctorRun, OfflineRunsNoProbe) {
  SchedulerConfig c = one_extender("http://127.0.0.1:1");
  DoctorInput input;
  input.ca = &c;
  input.offline = true;
  input.options = default_options();
  input.probe_resources = nvidia_names();
  Report r = run_doctor(input);
  EXPECT_TRUE(r.probes.empty());
  EXPECT_TRUE(r.ok()) << describe(r.findings);
  EXPECT_EQ(exit_code(r), 0);
}

TEST(DoctorRun, OnlineProbesEveryHamiExtenderOfBothConfigs) {
  Service svc;
  SchedulerConfig ca = one_extender(http_url(svc.port()));
  SchedulerConfig live = one_extender(http_url(svc.port()), "filter", true);
  live.extenders[0].bind_verb = "bind";
  live.source = "live.yaml";
  DoctorInput input;
  input.ca = &ca;
  input.kube_scheduler = &live;
  input.options = default_options();
  input.probe_resources = nvidia_names();
  Report r = run_doctor(input);
  ASSERT_EQ(r.probes.size(), 2u);
  EXPECT_EQ(r.probes[0].role, ConfigRole::kClusterAutoscaler);
  EXPECT_TRUE(r.probes[0].ok);
  EXPECT_EQ(r.probes[1].role, ConfigRole::kKubeScheduler);
  EXPECT_EQ(r.configs.size(), 2u);
}

TEST(DoctorRun, FailedProbeMakesTheRunFail) {
  uint16_t port = 0;
  {
    Service svc;
    port = svc.port();
  }
  SchedulerConfig ca = one_extender(http_url(port));
  DoctorInput input;
  input.ca = &ca;
  input.options = default_options();
  input.probe_resources = nvidia_names();
  Report r = run_doctor(input);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(exit_code(r), 1);
}

}  // namespace
}  // namespace hamisim::doctor
