#pragma once
// What the Kubernetes client tests share: a fixture running the fake API server over a store
// loaded with the test's objects and making clients of it, reading a file back, and waiting
// (bounded) for a condition.

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "fake_apiserver.h"
#include "kube/client.h"
#include "state/object_store.h"

namespace hamisim::kube::test_support {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

template <class F>
bool eventually(F&& f, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return f();
}

class FakeApiServerTest : public ::testing::Test {
 protected:
  // `objects`: a List of the objects the store starts with.
  explicit FakeApiServerTest(const char* objects) : objects_(objects) {}
  void SetUp() override { ASSERT_TRUE(store.load(objects_)); }
  void start(testing::FakeApiServerOptions options = {}) {
    server = std::make_unique<testing::FakeApiServer>(store, options);
    ASSERT_TRUE(server->start());
  }
  // A client of the server unless `config` names another.
  std::unique_ptr<KubeClient> client(KubeConfig config = {}, ClientOptions options = {}) {
    if (config.server.empty()) config.server = server->url();
    auto c = KubeClient::create(config, options);
    EXPECT_TRUE(c) << c.error().message;
    return c ? std::move(*c) : nullptr;
  }

  state::ObjectStore store;
  std::unique_ptr<testing::FakeApiServer> server;

 private:
  const char* objects_;
};

}  // namespace hamisim::kube::test_support
