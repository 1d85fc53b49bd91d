// hamisim as HAMi's `scheduler` inside HAMi's Helm chart (reference hami-dropin.md §2.7, §9):
// the real binary, started through a `scheduler` link with exactly the arguments and
// environment the chart renders by default (ports and file paths substituted), against the
// fake API server; then the routes, TLS, who may call what, leadership, readiness and the role
// labels. And a rolling update: two replicas, the Lease handed over.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "fake_apiserver.h"
#include "http_test_client.h"
#include "model/base64.h"
#include "run_process.h"
#include "state/object_store.h"
#include "test_certs.h"
#include "test_paths.h"

namespace hamisim {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using testing::BackgroundProcess;
using testing::ClientOptions;
using ::testing::HasSubstr;

std::string this_hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

const char* kK80 =
    R"([{"id":"GPU-0","count":10,"devmem":11441,"devcore":100,"type":"NVIDIA-Tesla K80","mode":"hami-core","health":true}])";

std::string node_json(const std::string& name) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{}","annotations":{{"hami.io/node-nvidia-register":{}}}}},)"
      R"("status":{{"allocatable":{{"cpu":"8","memory":"32Gi","pods":"110","nvidia.com/gpu":"10"}}}}}})",
      name, json::serialize(json::value(kK80)));
}

std::string gpu_pod_json(const std::string& name) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}","namespace":"default","uid":"uid-{}"}},)"
      R"("spec":{{"schedulerName":"hami-scheduler","containers":[{{"name":"main","image":"cuda",)"
      R"("resources":{{"limits":{{"nvidia.com/gpu":"1","nvidia.com/gpumem":"1000"}}}}}}]}},)"
      R"("status":{{"phase":"Pending"}}}})",
      name, name);
}

std::string scheduler_pod_json(const std::string& name, const std::string& role) {
  std::string labels = R"("app.kubernetes.io/component":"hami-scheduler")";
  if (!role.empty()) labels += fmt::format(R"(,"hami.io/scheduler-role":"{}")", role);
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}","namespace":"hami","labels":{{{}}}}},)"
      R"("spec":{{"containers":[{{"name":"vgpu-scheduler-extender","image":"hamisim"}}]}},)"
      R"("status":{{"phase":"Running"}}}})",
      name, labels);
}

std::string lease_json(const std::string& holder) {
  return fmt::format(
      R"({{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{{"name":"hami-scheduler","namespace":"hami"}},)"
      R"("spec":{{"holderIdentity":"{}","leaseDurationSeconds":3600}}}})",
      holder);
}

// A v1beta1 AdmissionReview (the chart's admissionReviewVersions) for a GPU pod.
std::string admission_review() {
  return R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"r-1","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"default","operation":"CREATE","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w","namespace":"default"},"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem":"1000"}}}]}}}})";
}

std::string filter_args(const std::string& pod) {
  return fmt::format(R"({{"Pod":{},"NodeNames":["gpu-1"]}})", gpu_pod_json(pod));
}

// The fake cluster, the chart's files (TLS pair, device config) and a `scheduler` link.
class HamiChart : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("hamisim-chart-{}-{}", ::getpid(), ++runs_);
    fs::create_directories(dir_);
    fs::create_symlink(hamisim::testing::hamisim_bin(), dir_ / "scheduler");
    fs::copy_file(pki_.server.cert, dir_ / "tls.crt");
    fs::copy_file(pki_.server.key, dir_ / "tls.key");
    // HAMi's chart default device config, NVIDIA part (values.yaml's devices.nvidia).
    std::ofstream(dir_ / "device-config.yaml")
        << "nvidia:\n  resourceCountName: nvidia.com/gpu\n  resourceMemoryName: nvidia.com/gpumem\n"
           "  resourceMemoryPercentageName: nvidia.com/gpumem-percentage\n"
           "  resourceCoreName: nvidia.com/gpucores\n  resourcePriorityName: nvidia.com/priority\n"
           "  overwriteEnv: false\n  defaultMemory: 0\n  defaultCores: 0\n  defaultGPUNum: 1\n"
           "  deviceSplitCount: 10\n  deviceMemoryScaling: 1\n  deviceCoreScaling: 1\n";
  }
  void TearDown() override {
    api_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void start_api(const std::vector<std::string>& objects) {
    std::string list = R"({"apiVersion":"v1","kind":"List","items":[)";
    for (size_t i = 0; i < objects.size(); ++i) list += (i ? "," : "") + objects[i];
    ASSERT_TRUE(store_.load(list + "]}"));
    api_ = std::make_unique<testing::FakeApiServer>(store_);
    ASSERT_TRUE(api_->start());
    std::ofstream(dir_ / "kubeconfig")
        << "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: "
        << api_->url()
        << "\nusers:\n- name: sa\n  user: {}\ncontexts:\n- name: fake\n  context: {cluster: "
           "fake, user: sa}\ncurrent-context: fake\n";
  }

  // deployment.yaml's command with values.yaml's defaults (hami-dropin.md §2.7); the ports
  // are ephemeral and the paths this test's. HAMi v2.10's chart.
  std::vector<std::string> chart_command(bool webhook = true) const {
    std::vector<std::string> c = {(dir_ / "scheduler").string()};
    c.push_back("--http_bind=0.0.0.0:0");  // :443 with the webhook, :80 without
    if (webhook) {
      c.push_back("--cert_file=" + (dir_ / "tls.crt").string());
      c.push_back("--key_file=" + (dir_ / "tls.key").string());
    }
    for (std::string a : {"--scheduler-name=hami-scheduler", "--metrics-bind-address=:0",
                          "--node-scheduler-policy=binpack", "--gpu-scheduler-policy=spread",
                          "--force-overwrite-default-scheduler=true"}) {
      c.push_back(a);
    }
    c.push_back("--device-config-file=" + (dir_ / "device-config.yaml").string());
    for (std::string a : {"--leader-elect=true", "--leader-elect-resource-name=hami-scheduler",
                          "--leader-elect-resource-namespace=hami", "--debug", "-v=4"}) {
      c.push_back(a);
    }
    return with_own_extender_port(c);
  }
  // HAMi's chart after v2.10: the same list plus the device plugin's ServiceAccount, which its
  // scheduler requires for /refit (cmd/scheduler/main.go, HAMi PR #2882: the release namespace
  // and the device plugin's ServiceAccount). Its kube-scheduler calls /filter and /bind on
  // `--extender-bind`'s default, 127.0.0.1:9444, which the chart does not pass.
  std::vector<std::string> newest_chart_command() const {
    std::vector<std::string> c = chart_command();
    c.insert(c.end() - 3, {"--device-plugin-namespace=hami",
                           "--device-plugin-service-account=hami-device-plugin"});
    return c;
  }
  // `scheduler` listens on 127.0.0.1:9444 for the extender verbs unless told otherwise, as
  // HAMi after v2.10: tests running side by side (ctest -j, other checkouts) cannot share a
  // fixed port, so every command here ends with an extraArgs entry (the chart passes them
  // verbatim, after its own flags) moving it to an ephemeral one.
  static std::vector<std::string> with_own_extender_port(std::vector<std::string> c) {
    c.push_back("--extender-bind=127.0.0.1:0");
    return c;
  }
  // deployment.yaml's env, and what kubelet adds for the service account's client config
  // (here the kubeconfig of the fake API server).
  std::vector<std::string> chart_env(const std::string& pod) const {
    return {"POD_NAME=" + pod, "POD_NAMESPACE=hami", "HAMI_NODELOCK_EXPIRE=5m",
            "NODE_SELECTOR_GPU=on", "KUBECONFIG=" + (dir_ / "kubeconfig").string()};
  }

  // The ports from the start-up line, in klog's format (`scheduler`'s default).
  static std::pair<uint16_t, uint16_t> ports(const BackgroundProcess& p) {
    std::smatch m;
    const std::string log = p.log();
    static const std::regex line(
        R"(serve_command\.cpp:\d+\] "scheduler: listening" listen="\S+" port=(\d+) )"
        R"(metrics="\S+" metricsPort=(\d+))");
    if (!std::regex_search(log, m, line)) return {0, 0};
    return {static_cast<uint16_t>(std::stoi(m[1])), static_cast<uint16_t>(std::stoi(m[2]))};
  }
  static uint16_t extender_port(const BackgroundProcess& p) {
    std::smatch m;
    const std::string log = p.log();
    static const std::regex line(R"(extender="127\.0\.0\.1:0" extenderPort=(\d+))");
    if (!std::regex_search(log, m, line)) return 0;
    return static_cast<uint16_t>(std::stoi(m[1]));
  }

  ClientOptions tls_client(uint16_t port, const std::string& host = "127.0.0.1") const {
    ClientOptions o;
    o.host = host;
    o.port = port;
    o.tls = true;
    o.ca_file = pki_.ca.ca_cert();
    o.verify_name = "127.0.0.1";
    return o;
  }

  std::string role_label(const std::string& pod) const {
    auto o = store_.get(state::Kind::kPod, "hami", pod);
    if (!o) return "(missing)";
    const json::value v = json::parse(o->json);
    const auto* labels = v.at("metadata").as_object().if_contains("labels");
    if (labels == nullptr) return "(none)";
    const auto* role = labels->as_object().if_contains("hami.io/scheduler-role");
    return role == nullptr ? "(none)" : std::string(role->as_string());
  }

  static bool eventually(const std::function<bool()>& condition) {
    for (int i = 0; i < 1500; ++i) {
      if (condition()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return condition();
  }

  static inline int runs_ = 0;
  testing::TestPki pki_;
  fs::path dir_;
  state::ObjectStore store_;
  std::unique_ptr<testing::FakeApiServer> api_;
};

TEST_F(HamiChart, TheDefaultCommandServesWebhookVerbsAndProbesAsHamiDoes) {
  const std::string host = this_hostname();
  start_api({node_json("gpu-1"), gpu_pod_json("p1"), scheduler_pod_json("hami-scheduler-0", ""),
             scheduler_pod_json("hami-scheduler-old", "leader"), lease_json(host + "_4b1c")});
  BackgroundProcess scheduler(chart_command(), chart_env("hami-scheduler-0"));
  ASSERT_TRUE(scheduler.started());
  ASSERT_TRUE(scheduler.wait_for_log("scheduler: listening")) << scheduler.log();
  const auto [port, metrics_port] = ports(scheduler);
  ASSERT_NE(port, 0) << scheduler.log();

  // Probes, over TLS on the main listener (the chart's readiness probe is HTTPS /readyz).
  auto healthz = testing::http_request(tls_client(port), "GET", "/healthz");
  ASSERT_TRUE(healthz.ok()) << healthz.error().message;
  EXPECT_EQ(healthz->status, 200);
  ASSERT_TRUE(eventually([&] {
    auto r = testing::http_request(tls_client(port), "GET", "/readyz");
    return r.ok() && r->status == 200 && r->body.find(R"("filtering":true)") != std::string::npos;
  })) << scheduler.log();
  auto readyz = testing::http_request(tls_client(port), "GET", "/readyz");
  EXPECT_THAT(readyz->body, HasSubstr(R"("leader":true)"));

  // kube-scheduler in the pod: https://127.0.0.1:443/filter and /bind, verification off.
  auto filter = testing::http_request(tls_client(port), "POST", "/filter", filter_args("p1"));
  ASSERT_TRUE(filter.ok());
  EXPECT_EQ(filter->status, 200);
  EXPECT_THAT(filter->body, HasSubstr(R"("NodeNames":["gpu-1"])")) << filter->body;
  auto bind = testing::http_request(
      tls_client(port), "POST", "/bind",
      R"({"PodName":"p1","PodNamespace":"default","PodUID":"uid-p1","Node":"gpu-1"})");
  ASSERT_TRUE(bind.ok());
  EXPECT_EQ(bind->status, 200);
  EXPECT_EQ(bind->body, R"({"Error":""})") << bind->body;

  // The API server calls /webhook through the Service, from the network, over TLS.
  const std::string ip = testing::non_loopback_ipv4();
  if (ip.empty()) {
    std::printf("note: no non-loopback IPv4 address; network-peer checks skipped\n");
  } else {
    auto webhook =
        testing::http_request(tls_client(port, ip), "POST", "/webhook", admission_review(),
                              {{"Content-Type", "application/json"}});
    ASSERT_TRUE(webhook.ok()) << webhook.error().message;
    EXPECT_EQ(webhook->status, 200);
    EXPECT_THAT(webhook->body, HasSubstr(R"("apiVersion":"admission.k8s.io/v1beta1")"));
    EXPECT_THAT(webhook->body, HasSubstr(R"("allowed":true)"));
    EXPECT_THAT(webhook->body, HasSubstr(R"("patch":)"));
    // The Service's NodePort must not open the verbs.
    auto remote_bind = testing::http_request(tls_client(port, ip), "POST", "/bind",
                                             R"({"PodName":"p1","PodNamespace":"default"})");
    ASSERT_TRUE(remote_bind.ok());
    EXPECT_EQ(remote_bind->status, 403);
  }

  // The leader labels itself for the chart's Service selector, and the old leader follower.
  EXPECT_TRUE(eventually([&] { return role_label("hami-scheduler-0") == "leader"; }));
  EXPECT_TRUE(eventually([&] { return role_label("hami-scheduler-old") == "follower"; }));

  // Metrics: plain HTTP on --metrics-bind-address.
  ClientOptions m;
  m.port = metrics_port;
  auto metrics = testing::http_request(m, "GET", "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(metrics->status, 200);
  EXPECT_THAT(metrics->body, HasSubstr("hamisim_live_ready 1"));
  // HAMi's families, as HAMi's ServiceMonitor and dashboard read them (hami-dropin.md §6, §8).
  EXPECT_THAT(metrics->body, HasSubstr("hami_build_info{"));
  EXPECT_THAT(metrics->body, ::testing::ContainsRegex(
                                 R"(hami_gpu_memory_limit_bytes\{[^}]*device_uuid="GPU-0"[^}]*)"
                                 R"(node="gpu-1"[^}]*zone="vGPU"\} )"));
  EXPECT_THAT(metrics->body, HasSubstr("hami_gpu_shared_count{"));
  EXPECT_THAT(metrics->body, ::testing::Not(HasSubstr("GPUDeviceMemoryLimit")));  // not legacy

  EXPECT_EQ(scheduler.stop(), 0) << scheduler.log();
  const std::string log = scheduler.log();
  EXPECT_THAT(log, HasSubstr("HAMI_NODELOCK_EXPIRE is set"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("error")));
  // klog's lines, as HAMi's, named as HAMi's command; --debug noted once.
  EXPECT_THAT(log, ::testing::ContainsRegex(
                       R"(I[0-9]{4} [0-9:.]{15} +[0-9]+ serve_command\.cpp:[0-9]+\] )"
                       R"("Flag accepted without effect" flag="--debug" value="true")"));
  EXPECT_THAT(log, HasSubstr("] scheduler: stopped"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("hamisim serve")));
}

// Issue #47: HAMi's newest chart renders --device-plugin-namespace and
// --device-plugin-service-account, and its kube-scheduler calls the extender on
// --extender-bind; a user's extraArgs override a flag the chart fixes (pflag: the last value
// wins). The same binary serves it: the probes on --http_bind, the verbs where kube-scheduler
// calls them, the webhook with the overriding scheduler name.
TEST_F(HamiChart, TheNewestChartsCommandWithAnExtraArgsOverrideServes) {
  // gpu-2 registers no devices: the filter's V4 line for it shows which -v won.
  start_api({node_json("gpu-1"), R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-2"}})",
             gpu_pod_json("p1"), lease_json(this_hostname() + "_x")});
  auto command = newest_chart_command();
  command.push_back("--scheduler-name=gpu-scheduler");  // extraArgs over the chart's
  command.push_back("-v=2");                            // and over values.yaml's -v=4
  BackgroundProcess scheduler(command, chart_env("hami-scheduler-0"));
  ASSERT_TRUE(scheduler.wait_for_log("scheduler: listening")) << scheduler.log();
  const uint16_t port = ports(scheduler).first;
  const uint16_t verbs = extender_port(scheduler);
  ASSERT_NE(port, 0) << scheduler.log();
  ASSERT_NE(verbs, 0) << scheduler.log();
  ASSERT_NE(verbs, port);

  ASSERT_TRUE(eventually([&] {
    auto r = testing::http_request(tls_client(port), "GET", "/readyz");
    return r.ok() && r->status == 200 && r->body.find(R"("filtering":true)") != std::string::npos;
  })) << scheduler.log();
  auto filter = testing::http_request(
      tls_client(verbs), "POST", "/filter",
      fmt::format(R"({{"Pod":{},"NodeNames":["gpu-1","gpu-2"]}})", gpu_pod_json("p1")));
  ASSERT_TRUE(filter.ok()) << filter.error().message;
  EXPECT_EQ(filter->status, 200);
  EXPECT_THAT(filter->body, HasSubstr(R"("NodeNames":["gpu-1"])")) << filter->body;
  auto bind = testing::http_request(
      tls_client(verbs), "POST", "/bind",
      R"({"PodName":"p1","PodNamespace":"default","PodUID":"uid-p1","Node":"gpu-1"})");
  ASSERT_TRUE(bind.ok());
  EXPECT_EQ(bind->body, R"({"Error":""})") << bind->body;
  auto webhook = testing::http_request(tls_client(port), "POST", "/webhook", admission_review(),
                                       {{"Content-Type", "application/json"}});
  ASSERT_TRUE(webhook.ok()) << webhook.error().message;
  EXPECT_EQ(webhook->status, 200);
  // The patch is base64 JSON; the override's name is in it, the chart's is not.
  const json::value review = json::parse(webhook->body);
  std::string patch;
  ASSERT_TRUE(
      model::decode_base64(std::string(review.at("response").at("patch").as_string()), patch));
  EXPECT_THAT(patch, HasSubstr("gpu-scheduler")) << patch;
  EXPECT_THAT(patch, ::testing::Not(HasSubstr("hami-scheduler"))) << patch;

  EXPECT_EQ(scheduler.stop(), 0) << scheduler.log();
  const std::string log = scheduler.log();
  for (const char* flag : {"--device-plugin-namespace", "--device-plugin-service-account"}) {
    EXPECT_THAT(log, HasSubstr(fmt::format(R"("Flag accepted without effect" flag="{}")", flag)));
  }
  // -v=2 won over -v=4: the V4 line for gpu-2 is off, the filter's own line is there.
  EXPECT_THAT(log, HasSubstr(R"("Scheduling pod to node" pod="p1")"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("NodeUnfitPod")));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("error")));
}

TEST_F(HamiChart, WithTheWebhookDisabledItServesPlainHttpOnTheWildcard) {
  start_api({node_json("gpu-1"), gpu_pod_json("p1"), lease_json(this_hostname() + "_x")});
  auto command = chart_command(/*webhook=*/false);
  command.push_back("--legacy-metrics=true");  // the chart's legacyMetrics: true
  BackgroundProcess scheduler(command, chart_env("hami-scheduler-0"));
  ASSERT_TRUE(scheduler.wait_for_log("scheduler: listening")) << scheduler.log();
  const uint16_t port = ports(scheduler).first;
  ClientOptions plain;
  plain.port = port;
  ASSERT_TRUE(eventually([&] {
    auto r = testing::http_request(plain, "GET", "/readyz");
    return r.ok() && r->body.find(R"("filtering":true)") != std::string::npos;
  })) << scheduler.log();
  auto filter = testing::http_request(plain, "POST", "/filter", filter_args("p1"));
  ASSERT_TRUE(filter.ok());
  EXPECT_THAT(filter->body, HasSubstr(R"("NodeNames":["gpu-1"])"));
  const std::string ip = testing::non_loopback_ipv4();
  if (!ip.empty()) {
    plain.host = ip;
    auto remote = testing::http_request(plain, "POST", "/filter", filter_args("p1"));
    ASSERT_TRUE(remote.ok());
    EXPECT_EQ(remote->status, 403);
  }
  ClientOptions m;
  m.port = ports(scheduler).second;
  auto metrics = testing::http_request(m, "GET", "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_THAT(metrics->body, HasSubstr("hami_gpu_memory_limit_bytes{"));
  EXPECT_THAT(metrics->body, HasSubstr("GPUDeviceMemoryLimit{"));  // and HAMi's legacy name
  EXPECT_EQ(scheduler.stop(), 0) << scheduler.log();
}

// RollingUpdate with maxSurge 1 and maxUnavailable 0: the new pod must turn Ready while the
// old one still holds the Lease, or `kubectl rollout` never ends.
TEST_F(HamiChart, ARollingUpdateMakesTheNewPodReadyBeforeTheOldOneStops) {
  start_api({node_json("gpu-1"), gpu_pod_json("p1"), scheduler_pod_json("hami-scheduler-a", ""),
             scheduler_pod_json("hami-scheduler-b", ""), lease_json("hami-scheduler-a_1")});
  auto command = [&](const std::string& pod) {
    auto c = chart_command();
    c.push_back("--leader-elect-identity=" + pod);  // two pods, one machine: two hostnames
    return c;
  };
  BackgroundProcess old_pod(command("hami-scheduler-a"), chart_env("hami-scheduler-a"));
  ASSERT_TRUE(old_pod.wait_for_log("scheduler: listening")) << old_pod.log();
  const uint16_t old_port = ports(old_pod).first;
  ASSERT_TRUE(eventually([&] {
    auto r = testing::http_request(tls_client(old_port), "GET", "/readyz");
    return r.ok() && r->body.find(R"("filtering":true)") != std::string::npos;
  })) << old_pod.log();

  BackgroundProcess new_pod(command("hami-scheduler-b"), chart_env("hami-scheduler-b"));
  ASSERT_TRUE(new_pod.wait_for_log("scheduler: listening")) << new_pod.log();
  const uint16_t new_port = ports(new_pod).first;
  // Ready as a follower while the old pod leads.
  ASSERT_TRUE(eventually([&] {
    auto r = testing::http_request(tls_client(new_port), "GET", "/readyz");
    return r.ok() && r->status == 200;
  })) << new_pod.log();
  auto follower = testing::http_request(tls_client(new_port), "GET", "/readyz");
  EXPECT_THAT(follower->body, HasSubstr(R"("leader":false)"));
  EXPECT_TRUE(old_pod.running());
  EXPECT_TRUE(eventually([&] { return role_label("hami-scheduler-b") == "follower"; }));
  // The follower does not filter.
  auto refused = testing::http_request(tls_client(new_port), "POST", "/filter", filter_args("p1"));
  ASSERT_TRUE(refused.ok());
  EXPECT_THAT(refused->body, HasSubstr("not the leader"));

  // The Deployment deletes the old pod; its kube-scheduler's Lease passes to the new pod's.
  EXPECT_EQ(old_pod.stop(), 0) << old_pod.log();
  ASSERT_TRUE(store_.merge_patch(state::Kind::kLease, "hami", "hami-scheduler",
                                 R"({"spec":{"holderIdentity":"hami-scheduler-b_2"}})"));
  ASSERT_TRUE(eventually([&] {
    auto r = testing::http_request(tls_client(new_port), "GET", "/readyz");
    return r.ok() && r->body.find(R"("filtering":true)") != std::string::npos;
  })) << new_pod.log();
  EXPECT_TRUE(eventually([&] { return role_label("hami-scheduler-b") == "leader"; }));
  EXPECT_TRUE(eventually([&] { return role_label("hami-scheduler-a") == "follower"; }));
  auto filter = testing::http_request(tls_client(new_port), "POST", "/filter", filter_args("p1"));
  ASSERT_TRUE(filter.ok());
  EXPECT_THAT(filter->body, HasSubstr(R"("NodeNames":["gpu-1"])")) << filter->body;
  EXPECT_EQ(new_pod.stop(), 0) << new_pod.log();
}

}  // namespace
}  // namespace hamisim
