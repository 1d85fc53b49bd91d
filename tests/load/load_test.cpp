// /filter-simulation at saturation over keep-alive loopback connections, with 10 % malformed or
// oversized bodies mixed in: every valid request gets the exact answer a quiet server gives,
// every invalid one its error class, nothing crashes, and resident memory stays flat after
// warm-up (growth under 5 %). Runs HAMISIM_LOAD_SECONDS (default 60) seconds.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "device/catalog/device_config.h"
#include "http_test_client.h"
#include "model/decode.h"
#include "server/extender_service.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "test_paths.h"

namespace hamisim {
namespace {

using testing::ClientOptions;
using testing::HttpTestClient;

constexpr size_t kMaxBody = 64 << 10;

// ASan's quarantine and TSan's shadow memory grow with traffic by design: resident memory is
// only meaningful in a plain build (the sanitizer suites check correctness and leaks).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

std::string example(const std::string& name) {
  auto text =
      model::read_file(std::string(hamisim::testing::examples_dir()) + "/simulation/" + name);
  EXPECT_TRUE(text) << text.error().message;
  return text.value_or("");
}

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

int load_seconds() {
  const char* v = std::getenv("HAMISIM_LOAD_SECONDS");
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : 60;
}

struct Kind {
  std::string body;
  int status;
  std::string expect;  // exact body, or a prefix when `prefix`
  bool prefix;
};

TEST(Load, SimulationAtSaturationWithBadBodiesMixedIn) {
  const device::DeviceRegistry registry = device::build_registry({});
  const engine::Engine engine(registry, nullptr);
  server::MetricsRegistry metrics;
  server::ExtenderService service(engine, metrics, {});
  server::ServerConfig config;
  config.listen = "127.0.0.1:0";
  config.metrics_listen = "";
  config.max_body_bytes = kMaxBody;
  config.max_inflight_simulation = 0;  // saturation, not rejection, is under test
  auto server = server::HttpServer::create(config, service.routes(), &metrics);
  ASSERT_TRUE(server) << server.error().message;
  (*server)->start();
  ClientOptions client;
  client.port = (*server)->port();

  // The answers of a quiet server are the reference.
  std::vector<Kind> valid;
  for (const char* name : {"fits.json", "too-big.json", "unregistered.json"}) {
    const std::string body = example(name);
    auto quiet = testing::http_request(client, "POST", "/filter-simulation", body);
    ASSERT_TRUE(quiet);
    ASSERT_EQ(quiet->status, 200);
    valid.push_back({body, 200, quiet->body, false});
  }
  const std::vector<Kind> invalid = {
      {valid[0].body.substr(0, valid[0].body.size() / 2), 200,
       R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":"invalid request: )",
       true},
      {"\x01\x02 not json", 200,
       R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":"invalid request: )",
       true},
      {std::string(kMaxBody + 1024, ' '), 413, "", true},
  };

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> ok_valid{0}, ok_invalid{0}, wrong{0};
  std::vector<std::string> first_wrong(4);
  auto worker = [&](int id) {
    std::unique_ptr<HttpTestClient> conn;
    uint64_t i = static_cast<uint64_t>(id);
    while (!stop) {
      if (!conn) {
        auto c = HttpTestClient::connect(client);
        if (!c) {
          ++wrong;
          if (first_wrong[id].empty()) first_wrong[id] = "connect: " + c.error().message;
          continue;
        }
        conn = std::move(c).value();
      }
      ++i;
      const bool bad = i % 10 == 0;
      const Kind& k = bad ? invalid[(i / 10) % invalid.size()] : valid[i % valid.size()];
      auto r = conn->request("POST", "/filter-simulation", k.body,
                             {{"Content-Type", "application/json"}});
      const bool right = r && r->status == k.status &&
                         (k.prefix ? r->body.rfind(k.expect, 0) == 0 : r->body == k.expect);
      if (right) {
        ++(bad ? ok_invalid : ok_valid);
      } else {
        ++wrong;
        if (first_wrong[id].empty()) {
          first_wrong[id] =
              r ? std::to_string(r->status) + " " + r->body.substr(0, 300) : r.error().message;
        }
      }
      // A 413 closes the connection (the rest of the body is never read).
      if (!r || !r->keep_alive) conn.reset();
    }
  };

  const int seconds = load_seconds();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(worker, t);
  std::this_thread::sleep_for(std::chrono::milliseconds(seconds * 1000 / 5));  // warm-up
  const long rss_warm = rss_kib();
  const uint64_t warm_requests = ok_valid + ok_invalid;
  std::this_thread::sleep_for(std::chrono::milliseconds(seconds * 1000 * 4 / 5));
  const long rss_end = rss_kib();
  stop = true;
  for (auto& t : threads) t.join();
  (*server)->shutdown(std::chrono::seconds(5));

  for (const auto& w : first_wrong) EXPECT_TRUE(w.empty()) << w;
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_GT(ok_valid.load(), 0u);
  EXPECT_GT(ok_invalid.load(), 0u);
  const double growth = double(rss_end - rss_warm) / double(rss_warm);
  std::printf(
      "load: %d s, %llu valid + %llu invalid answered (%.0f/s after warm-up), RSS %ld -> %ld KiB "
      "(%+.2f%%)\n",
      seconds, static_cast<unsigned long long>(ok_valid.load()),
      static_cast<unsigned long long>(ok_invalid.load()),
      double(ok_valid + ok_invalid - warm_requests) / (seconds * 0.8), rss_warm, rss_end,
      growth * 100);
  if (!kSanitized) {
    EXPECT_LT(growth, 0.05) << "RSS grew from " << rss_warm << " to " << rss_end << " KiB";
  }
}

}  // namespace
}  // namespace hamisim
